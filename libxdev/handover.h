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
 * grant in it (as noted when it was opened), once those grants are off
 * and before anybody else gets one. A transaction takes every grant it
 * takes away before this sweep (a handover's in its take-off), so later
 * calls do nothing. */
void xdev_handover_sweep_lost(struct xdev_ctx *ctx, struct xdev_txn *t);

/* The order of a handover, which never lets two users have a shared node
 * at once: the state already names the next holder; when a different user
 * held the devices, they are first taken off (saved and converged) and
 * that user's open fds revoked, and only then is the next holder planned.
 * The ledger keeps the entries taken off, so that the next holder gets the
 * same nodes without a new enumeration. Returns 1 when a holder was
 * released, 0 when there was none to release, or -errno from saving
 * (nothing changed then). */
int xdev_handover_release(struct xdev_ctx *ctx, struct xdev_txn *t);

/* After the decision, down the layers once: the old holder's grants off
 * (plan, node, state) when the holder changed, the one sweep of what was
 * taken away (policy, sweep), then every node planned, a new holder's
 * devices added and converged (plan, node, state). At a handover from one
 * holder to the next (a VT switch), the next gets the nodes the ledger
 * carried over first, and the enumeration that finds any it lacked comes
 * after: the switch does not wait for it (with T->defer_enumerate, it is
 * left to the caller, who runs xdev_follow_enumerate() when idle). Calls
 * T->self's before_grant before a new holder's grants. Returns commit's
 * result. */
int xdev_handover_settle(struct xdev_ctx *ctx, struct xdev_txn *t, bool all);
