/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevicesd's watch over its follow steps: phase times, the grant delay of
 * --test-grant-delay, the drain of its own inotify events (step.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "step.h"

static void phase_end(void *data, enum xdev_follow_phase phase) {
        struct xdev_step_watch *w = data;
        double now = xdev_now_ms();
        double *sum[] = { [XDEV_PHASE_LOAD] = &w->load,
                          [XDEV_PHASE_GRANT] = &w->grant,
                          [XDEV_PHASE_SWEEP] = &w->sweep };

        if ((size_t) phase < sizeof sum / sizeof sum[0])
                *sum[phase] += now - w->mark;
        w->mark = now;
}

/* The test knob: a new holder's grant held back for a time in [min, max]
 * ms, drawn from the clock's microseconds, as a slow daemon would. Counted
 * in no phase. */
static void before_grant(void *data) {
        struct xdev_step_watch *w = data;
        unsigned ms = w->delay_min_ms;
        struct timespec ts;

        if (w->delay_max_ms > ms)
                ms += (unsigned) ((uint64_t) (xdev_now_ms() * 1000.0) % (w->delay_max_ms - ms + 1));
        if (ms == 0)
                return;
        if (w->log)
                xdev_debug(w->log, "holding the grant back for %u ms (--test-grant-delay)", ms);
        ts = (struct timespec) { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
        w->mark = xdev_now_ms();
}

/* Reads away the events queued on the inotify fd watching the state
 * directory (the daemon's own writes), while the lock still keeps every
 * other writer out. */
static void before_unlock(void *data) {
        struct xdev_step_watch *w = data;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

        if (w->state_watch_fd < 0)
                return;
        while (read(w->state_watch_fd, buf, sizeof buf) > 0)
                ;
}

void xdev_step_watch_attach(struct xdev_step_watch *w, struct xdev_follow_self *self) {
        self->phase_end = phase_end;
        self->before_grant = before_grant;
        self->before_unlock = before_unlock;
        self->data = w;
}

void xdev_step_watch_start(struct xdev_step_watch *w) {
        w->load = w->grant = w->sweep = 0;
        w->mark = xdev_now_ms();
}
