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

/* At most this many event nodes are listed in a follow result. */
#define XDEV_FOLLOW_EVDEV_MAX 128
#define XDEV_FOLLOW_DRM_MAX 16

struct xdev_follow_result {
        int active_vt;
        bool has_holder;
        uid_t holder;
        bool changed;                  /* the state was saved and nodes changed */
        bool handed_over;              /* this step granted the shared devices to a new holder */
        bool enumerate;                /* a handover: call xdev_follow_enumerate() when idle */
        unsigned examined;             /* processes the sweeps looked at */
        struct xdev_node_io io;        /* ACLs read and written, marks set or removed */
        struct xdev_fd_bin bin;        /* copies of revoked fds, for the caller to close */
        struct xdev_sweep_wait *waits; /* sweeps for the caller to finish */
        struct xdev_sweep_defer defer; /* processes over the scan budget: for
                                         * the caller to read after the lock,
                                         * with xdev_sweep_others() */
        uint64_t sweep_check_ms;       /* CLOCK_MONOTONIC ms at which to run the
                                         * step again, so that a sweep whose
                                         * sweeper is gone is taken over at its
                                         * deadline; 0: no sweep pending */
        size_t n_leaders;              /* the leaders of the live sessions, to watch */
        struct {
                pid_t pid;
                uint64_t start;
        } leaders[XDEV_SESSIONS_MAX];
        /* the evdev nodes (/dev/input/event*) the holder was granted, by
         * device number: the first XDEV_FOLLOW_EVDEV_MAX of them */
        size_t n_evdev;
        dev_t evdev[XDEV_FOLLOW_EVDEV_MAX];
        /* the DRM primary nodes (/dev/dri/card*) the holder was granted:
         * the first XDEV_FOLLOW_DRM_MAX of them */
        size_t n_drm;
        dev_t drm[XDEV_FOLLOW_DRM_MAX];
};

/* xdevicesd's step, run on every VT switch, session end and state change:
 * with SELF, marks the state as followed by that daemon; with NULL, clears
 * the mark (the daemon stops). Reaps dead sessions, elects the holder by the
 * VT in front and hands over in order (old grants off, its fds revoked, new
 * grants on). Saves nothing when nothing changed, so its own writes do not
 * wake it again. Fills *RET when not NULL; the caller then closes the fds
 * in RET->bin (xdev_fd_bin_empty), which may take an RCU grace period each,
 * and finishes RET->waits (xdev_linger_finish), which may take the grace
 * period of lingering = kill: both are handed back, never done here. With
 * RET NULL, the step closes and finishes them itself. Returns 0 or -errno. */
int xdev_follow_update(struct xdev_ctx *ctx, const struct xdev_follow_self *self,
                       struct xdev_follow_result *ret);

/* After a handover (RET->enumerate), when the daemon is idle: adds to the
 * ledger, for the holder, the shared devices it lacked (plugged in with no
 * udev helper run), and grants them. The handover itself does not wait for
 * the udev enumeration. Returns the number of nodes added, -EAGAIN when
 * the VT in front changed or a session ended since (run
 * xdev_follow_update() first; nothing was done), -ESRCH when SELF no longer
 * follows, or -errno. */
int xdev_follow_enumerate(struct xdev_ctx *ctx, const struct xdev_follow_self *self);

/* The processes a look took for the holder's display server (those of the
 * holder that hold the VT in front), each with its state and its context
 * switches so far, for xdev_follow_settled(). */
#define XDEV_FOLLOW_SERVERS_MAX 16
#define XDEV_FOLLOW_IDLE_SWITCHES 3
struct xdev_follow_servers {
        size_t n;
        bool whole; /* every such process is here and was read */
        struct {
                pid_t pid;
                char state;
                uint64_t switches;
                bool display; /* holds a DRM primary node */
                bool waits;   /* blocked in a poll, select or epoll wait */
        } p[XDEV_FOLLOW_SERVERS_MAX];
};

/* After a grant to RES's holder, once it stayed in front (xdevicesd): which
 * of RES's event nodes its display server did not open again, for the
 * daemon to announce (doc/DESIGN.md §3.10), into RET (room for
 * RES->n_evdev). The display server is the processes of the holder that
 * hold the VT in front open or one of RES's DRM primary nodes (a server
 * on a seat may hold no VT); none when no process holds the VT, and none
 * when the VT is in text mode (*RET_TEXT set). A node is open to the
 * server when one of those processes holds it (an fd already revoked is
 * not).
 * Read with a report-only sweep of the holder's processes (CTX->procs, else
 * every process), bounded as a sweep; takes no lock and changes nothing.
 * Returns their number, or -EAGAIN when the VT in front is no longer
 * RES->active_vt (before or after the look: the holder may have changed;
 * the next step decides), or -errno. RET_SERVERS (may be NULL) gets the
 * server's processes, read after the sweep. */
int xdev_follow_unheld(struct xdev_ctx *ctx, const struct xdev_follow_result *res, dev_t *ret,
                       bool *ret_text, struct xdev_follow_servers *ret_servers);

/* Whether the display server is done with its VT enter at look NOW
 * (BEFORE: the look before). Where some of the processes hold a DRM
 * primary node (Xorg), each of those sleeps in its event loop: blocked in
 * a poll, select or epoll wait. A patched Xorg waiting for its grant
 * sleeps in nanosleep, one slowed by load runs or waits to run, one
 * stopped is stopped: none is done; a stock Xorg whose opens failed
 * before the grant is back in its loop, serving clients or not. Where
 * none does (a compositor whose seat holds the VT): the same processes
 * as BEFORE, none running, waiting on a disk or stopped, and each at most
 * XDEV_FOLLOW_IDLE_SWITCHES context switches further. False when either
 * look saw more processes than it keeps, or one it could not read. */
bool xdev_follow_settled(const struct xdev_follow_servers *before,
                         const struct xdev_follow_servers *now);

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

/* The pass after the lock (doc/DESIGN.md §3.5.10): DEFER's processes (a
 * switch's over the scan budget; may be NULL), unless their uid holds the
 * devices again, and every process that is neither root's nor a system
 * account's and none of whose uids has a session (one that left its uid
 * through a user namespace, one an fd was passed to) are read to the end
 * without the state lock; those found holding a shared node are read again
 * and cut off under the lock, as at a VT switch (input revoked, DRM master
 * dropped, what cannot be cut off killed). Counts in *RET. Returns 0 or
 * -errno. */
int xdev_sweep_others(struct xdev_ctx *ctx, const struct xdev_sweep_defer *defer,
                      struct xdev_sweep_counts *ret);
