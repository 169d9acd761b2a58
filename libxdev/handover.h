/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The steps of the operations that a handover of the shared devices is
 * made of (handover.c), in the order doc/DESIGN.md §3.5.1 gives. Every
 * function here is called with the state lock held, inside a transaction. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "ctx.h"
#include "state.h"
#include "txn.h"

/* UID's runtime directory goes with its last session (under the lock, so
 * that a login of UID cannot come between the decision and the removal). */
void xdev_handover_rundir_release(struct xdev_ctx *ctx, const struct xdev_state *state, uid_t uid);

/* Removes from T's state each session whose leader is gone, a zombie or
 * no longer on its VT, logging each, and with a uid's last session its
 * runtime directory. Returns the number of sessions reaped. */
int xdev_handover_reap(struct xdev_ctx *ctx, struct xdev_txn *t);

/* The one sweep of a transaction: the processes of each uid that lost a
 * grant in it (as noted when it was opened), once its commit took those
 * grants off (and, at a handover, put the next holder's on in the same
 * write). A transaction commits every grant it takes away before this
 * sweep, so later calls do nothing. */
void xdev_handover_sweep_lost(struct xdev_ctx *ctx, struct xdev_txn *t);

/* After the decision, down the layers once: every node planned (a new
 * holder's devices added) and converged in one commit (plan, node,
 * state), then the one sweep of what was taken away (policy, sweep). At a
 * handover from one holder to the next (a VT switch) each node the ledger
 * carries passes in one write, the old holder's entry replaced by the
 * next's, so that two users never have it at once and the next does not
 * wait for the sweep; the enumeration that finds any node the ledger
 * lacked comes after: the switch does not wait for it (with
 * T->defer_enumerate, it is left to the caller, who runs
 * xdev_follow_enumerate() when idle). Calls T->self's before_grant before
 * a new holder's grants. Returns commit's result. */
int xdev_handover_settle(struct xdev_ctx *ctx, struct xdev_txn *t, bool all);
