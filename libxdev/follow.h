/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What xdevicesd calls to make the shared devices follow the VT in front
 * (follow.c): the step, the enumeration after a handover, and the looks
 * at the display server that decide an announcement (doc/DESIGN.md
 * §3.10). Results are 0/positive or -errno; messages go to ctx->log. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctx.h"
#include "node.h"
#include "state.h"
#include "sweep.h"
#include "txn.h"

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
 * VT in front and hands over in order (each node from the old holder to
 * the new in one write, then the old holder's fds revoked). Saves nothing
 * when nothing changed, so its own writes do not wake it again. Fills *RET when not NULL; the caller then closes the fds
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
