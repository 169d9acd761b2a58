/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the front-ends call: open/close a session, apply/forget a hotplugged
 * node, reap, reset, report. Every call holds the state lock for its whole
 * duration, except the grace period of a logout's sweep, which it waits out
 * after letting the lock go (doc/DESIGN.md §3.5.7). Results are 0/positive or
 * -errno; messages go to ctx->log. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "conf.h"
#include "ctx.h"
#include "node.h"
#include "sweep.h"
#include "state.h"
#include "txn.h"
#include "util.h"

/* What a login got, for its log line: the nodes of each class the user
 * has once it is recorded (VT: this login's), and whether xdevicesd
 * decides the holder. */
struct xdev_login_result {
        unsigned granted[_XDEV_CLASS_MAX];
        bool follow;
};

struct xdev_login {
        const char *user;
        uid_t uid;
        const char *service;
        unsigned vt;
        pid_t pid;
        uint64_t start;
        struct xdev_login_result *result; /* filled on success when not NULL */
};

/* Records the session, grants its VT, and if it becomes (or is) the
 * holder, the shared devices. Returns 1 when the session holds the shared
 * devices, 0 when it got its VT only, -errno when nothing was granted
 * (everything this call changed is undone). */
int xdev_session_open(struct xdev_ctx *ctx, const struct xdev_login *login);

/* Removes the session led by PID/START, hands the shared devices over
 * (doc/DESIGN.md §3.4) and restores every node nobody
 * should have any more. -ENOENT when there is no such session. */
int xdev_session_close(struct xdev_ctx *ctx, pid_t pid, uint64_t start);

/* A node udev added or changed: if the shared devices are held, grants it to
 * the holder (1), else does nothing (0). DEVNUM must match the node. */
int xdev_device_apply(struct xdev_ctx *ctx, const char *path, enum xdev_class class, dev_t devnum);

/* A node udev removed: drops it from the ledger (1) or nothing (0). */
int xdev_device_forget(struct xdev_ctx *ctx, const char *path);

/* Every call first puts back what a lost state left granted (no state
 * file, nodes that carry the mark of a grant: doc/DESIGN.md §3.6), and
 * logs it. */

/* Reaps sessions whose leader is gone and repairs every ledger node.
 * Returns the number of sessions reaped; *RET_LOST gets the number of
 * nodes a lost state had left granted, now put back. */
int xdev_gc(struct xdev_ctx *ctx, unsigned *ret_lost);

/* Restores every node in the ledger and empties the state. With FORCE, an
 * unreadable state file is removed instead of refused, and the nodes whose
 * marks say they are granted are put back. The processes of the users who
 * lost grants are then swept as at a logout, with the configured policy;
 * with CUT_OFF, as at a VT switch whatever the policy (input revoked, DRM
 * master dropped, a display server left running): for package removal.
 * *RET_LOST as for xdev_gc(). */
int xdev_reset(struct xdev_ctx *ctx, bool force, bool cut_off, unsigned *ret_lost);

/* What xdevices status shows: the state as loaded, which session leaders
 * are live, the daemon, and the processes still holding shared nodes
 * without a grant (the "lingering" list). Data only: the front-end prints
 * it. xdev_status_free() releases it. */
struct xdev_status {
        struct xdev_state state;
        unsigned lost; /* nodes granted by a state that was lost: in state.nodes
                        * with .lost set, not yet put back */
        int active_vt;
        bool daemon_alive;
        bool *leader_alive; /* one per state.sessions[] */
        struct xdev_sweep_report lingering;
};

int xdev_status_get(struct xdev_ctx *ctx, struct xdev_status *ret);
void xdev_status_free(struct xdev_status *st);

/* xdevices revoke: applies the configured policy to the lingering holders
 * of uid UID, or of everyone but root and the holder with ALL. Returns the
 * number of holders found or -errno. */
int xdev_revoke(struct xdev_ctx *ctx, bool all, uid_t uid);
