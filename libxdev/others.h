/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pass over other users' processes after the lock (others.c), run by
 * xdevicesd in a thread of its own and by a logout that took the shared
 * devices away. */
#pragma once

#include "ctx.h"
#include "sweep.h"
#include "txn.h"

/* The pass after the lock (doc/DESIGN.md §3.5.10): DEFER's processes (a
 * switch's or a logout's over the scan budget; may be NULL), unless their
 * uid holds the devices again, and every process that is neither root's
 * nor a system account's and none of whose uids has a session (one that
 * left its uid through a user namespace, one an fd was passed to) are read
 * to the end without the state lock, the maps too of those in a user
 * namespace DEFER's departed uid made; those found holding a shared node
 * are read again and cut off under the lock, as at a VT switch (input
 * revoked, DRM master dropped, what cannot be cut off killed). Counts in
 * *RET. Returns 0 or -errno. */
int xdev_sweep_others(struct xdev_ctx *ctx, const struct xdev_sweep_defer *defer,
                      struct xdev_sweep_counts *ret);

/* PID alone, looked at as the pass after the lock looks at every process
 * (a process that read a shared node it may not touch: the watch,
 * watch.h): what it holds of the shared nodes and may not is cut off, as
 * at a VT switch, and its maps are read, so that a ring of it with no fd
 * left makes it unreachable (killed). Counts in *RET (holders 0: nothing
 * found, or PID is root's, a system account's or the holder's). Returns 0
 * or -errno. */
int xdev_others_cut_off(struct xdev_ctx *ctx, pid_t pid, struct xdev_sweep_counts *ret);

/* Ends T (xdev_txn_end), then, outside a follow step (whose caller does
 * it), runs the pass after the lock when a sweep of T left processes over
 * the scan budget or T->others_after asks for it. */
void xdev_others_txn_end(struct xdev_ctx *ctx, struct xdev_txn *t);
