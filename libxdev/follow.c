/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's follow operations (xdevicesd): the step that makes the
 * shared devices follow the VT in front, the enumeration it leaves for
 * later, and the looks at the display server after a grant. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "drmdev.h"
#include "follow.h"
#include "handover.h"
#include "ledger.h"
#include "linger.h"
#include "others.h"
#include "procfs.h"
#include "tty.h"
#include "vt.h"

/* A follow step's caller's last look before the lock is let go. */
static void before_unlock(const struct xdev_follow_self *self) {
        /* called with the state lock held; must not take it or block */
        if (self && self->before_unlock)
                self->before_unlock(self->data);
}

/* The event nodes the holder has been granted, for the caller to announce
 * again to udev's listeners (xdevicesd; doc/DESIGN.md §3.5.1). */
static void list_holder_evdev(const struct xdev_txn *t, struct xdev_follow_result *ret) {
        ret->n_evdev = ret->n_drm = 0;
        if (!t->state.has_holder)
                return;
        for (size_t i = 0; i < t->state.n_nodes && ret->n_evdev < XDEV_FOLLOW_EVDEV_MAX; i++) {
                const struct xdev_node *n = &t->state.nodes[i];
                const char *base = strrchr(n->path, '/');
                if (n->class == XDEV_CLASS_INPUT && n->granted && n->grantee == t->state.holder &&
                    base && strncmp(base + 1, "event", 5) == 0)
                        ret->evdev[ret->n_evdev++] = n->rdev;
        }
        for (size_t i = 0; i < t->state.n_nodes && ret->n_drm < XDEV_FOLLOW_DRM_MAX; i++) {
                const struct xdev_node *n = &t->state.nodes[i];
                if (n->class == XDEV_CLASS_DRM && n->granted && n->grantee == t->state.holder &&
                    minor(n->rdev) < XDEV_DRM_MINOR_RENDER && xdev_drm_path_is_primary(n->path))
                        ret->drm[ret->n_drm++] = n->rdev;
        }
}

int xdev_follow_update(struct xdev_ctx *ctx, const struct xdev_follow_self *self,
                       struct xdev_follow_result *ret) {
        struct xdev_txn t;
        bool changed;
        int r, reaped;

        XDEV_ASSERT(ctx);
        if (ret) {
                ret->bin.n = 0;
                ret->waits = NULL;
                ret->defer.n = 0;
                ret->defer.has_departed = false;
                ret->defer.all = false;
        }
        r = xdev_txn_begin(ctx, &t);
        if (r < 0)
                return r;
        t.self = self;
        reaped = xdev_handover_reap(ctx, &t);
        changed = reaped > 0 || xdev_linger_adopt(ctx, &t.state, &t.bin, &t.waits) > 0;
        if (self &&
            (!t.state.follow || t.state.follow_pid != self->pid ||
             t.state.follow_start != self->start)) {
                t.state.follow = true;
                t.state.follow_pid = self->pid;
                t.state.follow_start = self->start;
                changed = true;
        } else if (!self && t.state.follow) {
                /* The daemon stops: the login-time rule resumes, and the
                 * holder in front keeps the devices. */
                t.state.follow = false;
                changed = true;
        }
        xdev_state_elect(&t.state, t.active_vt);
        if (!ctx->config_ok && xdev_txn_holder_changed(&t))
                t.state.has_holder = false;
        changed =
                changed || xdev_txn_holder_changed(&t) || t.loaded_has_holder != t.state.has_holder;
        r = 0;
        xdev_txn_phase_end(&t, XDEV_PHASE_LOAD);
        if (changed) {
                t.defer_enumerate = self != NULL;
                r = xdev_handover_settle(ctx, &t, false);
                if (r > 0)
                        r = -EIO;
        }
        before_unlock(self);
        if (ret) {
                *ret = (struct xdev_follow_result) {
                        .active_vt = t.active_vt,
                        .has_holder = t.state.has_holder,
                        .holder = t.state.holder,
                        .changed = changed,
                        .enumerate = t.enumerate_pending,
                        .examined = t.swept.examined,
                        .io = t.dirs.io,
                        .sweep_check_ms = xdev_linger_next_check(&t.state),
                };
                for (size_t i = 0; i < t.state.n_sessions && i < XDEV_SESSIONS_MAX; i++) {
                        ret->leaders[i].pid = t.state.sessions[i].pid;
                        ret->leaders[i].start = t.state.sessions[i].start;
                        ret->n_leaders++;
                }
                ret->handed_over = r >= 0 && t.handed_over;
                list_holder_evdev(&t, ret);
                /* the caller closes the copies of revoked fds, after the step */
                ret->bin = t.bin;
                t.bin.n = 0;
                /* ... reads its processes over the scan budget to the end */
                ret->defer = t.defer;
                /* ... and finishes the sweeps in their grace period */
                ret->waits = xdev_txn_close(ctx, &t);
        } else
                xdev_others_txn_end(ctx, &t);
        return r;
}

int xdev_follow_enumerate(struct xdev_ctx *ctx, const struct xdev_follow_self *self) {
        struct xdev_txn t;
        bool had;
        uid_t holder;
        size_t before;
        int r;

        r = xdev_txn_begin(ctx, &t);
        if (r < 0)
                return r;
        if (!t.state.follow || t.state.follow_pid != self->pid ||
            t.state.follow_start != self->start) {
                r = -ESRCH; /* not following (a reset, another daemon): nothing to add */
                goto out;
        }
        had = t.state.has_holder;
        holder = t.state.holder;
        for (size_t i = 0; i < t.state.n_sessions; i++)
                if (!xdev_leader_is_live(t.state.sessions[i].pid, t.state.sessions[i].start,
                                         t.state.sessions[i].vt)) {
                        r = -EAGAIN; /* a session ended: the update reaps it first */
                        goto out;
                }
        xdev_state_elect(&t.state, t.active_vt);
        if (t.state.has_holder != had || (had && t.state.holder != holder)) {
                r = -EAGAIN; /* the VT in front changed: the handover comes first */
                goto out;
        }
        r = 0;
        if (!had)
                goto out;
        before = t.state.n_nodes;
        xdev_ledger_plan(ctx, &t);
        (void) xdev_ledger_enumerate(ctx, &t);
        if (xdev_txn_any_dirty(&t)) {
                r = xdev_txn_commit(ctx, &t, false);
                if (r == 0)
                        r = t.state.n_nodes > before ? (int) (t.state.n_nodes - before) : 0;
                else if (r > 0)
                        r = -EIO;
        }
out:
        before_unlock(self);
        xdev_others_txn_end(ctx, &t);
        return r;
}

/* Whether the VT in front is still VT. */
static bool vt_still_active(int vt) {
        return xdev_vt_active() == vt;
}

/* Whether REPORT shows PID holding target T (an fd not revoked). */
static bool report_holds(const struct xdev_sweep_report *report, pid_t pid, size_t t) {
        for (size_t j = 0; j < report->n; j++)
                if (report->items[j].pid == pid && !report->items[j].revoked &&
                    strtoul(report->items[j].path, NULL, 10) == t)
                        return true;
        return false;
}

/* Whether PID is one of the display server's processes in REPORT: it
 * holds target VT (the VT in front) or a target past it (a DRM primary
 * node). *RET_DISPLAY: the latter. */
static bool report_is_server(const struct xdev_sweep_report *report, pid_t pid, size_t vt,
                             size_t n_targets, bool *ret_display) {
        bool server = false, display = false;

        for (size_t t = vt; t < n_targets; t++)
                if (report_holds(report, pid, t)) {
                        server = true;
                        display = display || t > vt;
                }
        if (ret_display)
                *ret_display = display;
        return server;
}

/* The display server's processes in REPORT (report_is_server()), each
 * once, with their state and context switches now, into *RET. */
static void servers_read(const struct xdev_sweep_report *report, size_t vt, size_t n_targets,
                         struct xdev_follow_servers *ret) {
        int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        *ret = (struct xdev_follow_servers) { .whole = procfd >= 0 };
        for (size_t j = 0; j < report->n && procfd >= 0; j++) {
                pid_t pid = report->items[j].pid;
                struct xdev_proc_status st;
                bool seen = false, display;

                if (!report_is_server(report, pid, vt, n_targets, &display))
                        continue;
                for (size_t k = 0; k < ret->n; k++)
                        seen = seen || ret->p[k].pid == pid;
                if (seen)
                        continue;
                if (ret->n == XDEV_FOLLOW_SERVERS_MAX ||
                    xdev_proc_status_read(procfd, pid, &st) < 0 || !st.has_switches) {
                        ret->whole = false;
                        continue;
                }
                long nr;
                ret->p[ret->n].pid = pid;
                ret->p[ret->n].state = st.state;
                ret->p[ret->n].switches = st.switches;
                ret->p[ret->n].display = display;
                ret->p[ret->n].waits = xdev_proc_syscall_read(procfd, pid, &nr) == 0 &&
                        xdev_syscall_waits_for_events(nr);
                ret->n++;
        }
        if (procfd >= 0)
                (void) close(procfd);
}

bool xdev_follow_settled(const struct xdev_follow_servers *before,
                         const struct xdev_follow_servers *now) {
        bool display = false;

        if (!before->whole || !now->whole)
                return false;
        for (size_t i = 0; i < now->n; i++) {
                if (!now->p[i].display)
                        continue;
                display = true;
                if (now->p[i].state != 'S' || !now->p[i].waits)
                        return false;
        }
        if (display)
                return true;
        if (before->n != now->n)
                return false;
        for (size_t i = 0; i < now->n; i++) {
                bool same = false;
                /* sleeping (S) or idle (I) only: R runs, D waits, T and t stop */
                if (now->p[i].state != 'S' && now->p[i].state != 'I')
                        return false;
                for (size_t k = 0; k < before->n && !same; k++)
                        same = before->p[k].pid == now->p[i].pid &&
                                now->p[i].switches >= before->p[k].switches &&
                                now->p[i].switches - before->p[k].switches <=
                                        XDEV_FOLLOW_IDLE_SWITCHES;
                if (!same)
                        return false;
        }
        return true;
}

int xdev_follow_unheld(struct xdev_ctx *ctx, const struct xdev_follow_result *res, dev_t *ret,
                       bool *ret_text, struct xdev_follow_servers *ret_servers) {
        /* the event nodes, the VT in front, the DRM primary nodes */
        struct xdev_sweep_target targets[XDEV_FOLLOW_EVDEV_MAX + 1 + XDEV_FOLLOW_DRM_MAX];
        struct xdev_sweep_report report = { 0 };
        struct xdev_sweep_opts opts = {
                .report_only = true,
                .report = &report,
                .has_only = true,
                .only_uid = res->holder,
                .fd_rings_only = true,
                .procs = ctx->procs,
                .scan_budget = ctx->config.linger_scan_budget,
        };
        struct xdev_sweep_counts c = { 0 };
        size_t n = 0, vt = res->n_evdev, n_targets = vt + 1 + res->n_drm;
        bool server = false;
        int r;

        *ret_text = false;
        if (ret_servers)
                *ret_servers = (struct xdev_follow_servers) { 0 };
        if (!res->has_holder || res->active_vt < 1 || !vt_still_active(res->active_vt))
                return -EAGAIN;
        r = xdev_vt_is_graphics((unsigned) res->active_vt);
        *ret_text = r == 0; /* nobody to announce to */
        if (r <= 0 || res->n_evdev == 0)
                return r;
        for (size_t i = 0; i < n_targets; i++) {
                if (i < vt)
                        targets[i] = (struct xdev_sweep_target) { .rdev = res->evdev[i],
                                                                  .class = XDEV_CLASS_INPUT };
                else if (i == vt)
                        targets[i] = (struct xdev_sweep_target) {
                                .rdev = xdev_vt_devnum((unsigned) res->active_vt),
                                .class = XDEV_CLASS_VT
                        };
                else
                        targets[i] = (struct xdev_sweep_target) { .rdev = res->drm[i - vt - 1],
                                                                  .class = XDEV_CLASS_DRM };
                /* the report names a node by its target's path */
                (void) snprintf(targets[i].path, sizeof targets[i].path, "%zu", i);
        }
        r = xdev_sweep_run(targets, n_targets, &opts, &ctx->log, &c);
        if (r < 0)
                goto out;
        /* The display server is the processes of the holder that hold the
         * VT (Xorg, xdevices-vt-run) or a DRM primary node (a server on a
         * seat); a node another process holds (a reader of the keyboard)
         * is not its. Without a process on the VT, no server of the holder
         * could have failed to open a node (a root one opens all). */
        for (size_t j = 0; j < report.n; j++)
                server = server || strtoul(report.items[j].path, NULL, 10) == vt;
        for (size_t i = 0; i < vt && server; i++) {
                bool held = false;
                for (size_t j = 0; j < report.n && !held; j++)
                        held = report_is_server(&report, report.items[j].pid, vt, n_targets,
                                                NULL) &&
                                report_holds(&report, report.items[j].pid, i);
                if (!held)
                        ret[n++] = res->evdev[i];
        }
        if (ret_servers)
                servers_read(&report, vt, n_targets, ret_servers);
        /* the look took time: a switch meanwhile makes it void */
        r = vt_still_active(res->active_vt) ? (int) n : -EAGAIN;
out:
        xdev_sweep_report_free(&report);
        return r;
}
