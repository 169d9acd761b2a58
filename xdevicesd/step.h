/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What xdevicesd watches of its follow steps (xdev_follow_update): where a
 * step's time went, for its log line; the test knob that holds a new
 * holder's grant back; the inotify events of its own writes, read away
 * before the lock is let go so that they do not wake it. */
#pragma once

#include "follow.h"

struct xdev_step_watch {
        int state_watch_fd;                  /* inotify on the state directory, or -1 */
        unsigned delay_min_ms, delay_max_ms; /* --test-grant-delay; 0: none */
        const struct xdev_log *log;          /* for the test knob's line, or NULL */
        double mark;                         /* the end of the last phase timed (ms) */
        double load, grant, sweep;           /* ms, as txn.h's phases */
};

/* Points the calls of SELF at W. The core makes those calls with the state
 * lock held (libxdev/txn.h, struct xdev_follow_self). */
void xdev_step_watch_attach(struct xdev_step_watch *w, struct xdev_follow_self *self);

/* Before a step: every phase at 0, the clock started. */
void xdev_step_watch_start(struct xdev_step_watch *w);
