/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operations behind pam_xdevices.so and xdevices(8).
 *
 * Rules this file keeps:
 *  1. Everything happens under the state lock: load, decide, save, act.
 *  2. The ledger is saved before the first change to a node, so a crash at
 *     any point leaves a state from which gc restores every node.
 *  3. Nodes are changed to what the saved state says (converge), which is
 *     idempotent: redoing an interrupted operation is always safe.
 *  4. Deny by default: a login that cannot be granted completely is rolled
 *     back; a node whose restore failed stays in the ledger for the next gc. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "devices.h"
#include "drmdev.h"
#include "ledger.h"
#include "linger.h"
#include "procfs.h"
#include "rundir.h"
#include "node.h"
#include "tty.h"
#include "vt.h"
/* UID's runtime directory goes with its last session (under the lock, so
 * that a login of UID cannot come between the decision and the removal). */
static void rundir_release(struct xdev_ctx *ctx, const struct xdev_state *state, uid_t uid) {
        if (!xdev_state_uid_has_session(state, uid))
                (void) xdev_rundir_remove(XDEV_RUNDIR_BASE, uid, &ctx->log);
}

static int reap(struct xdev_ctx *ctx, struct xdev_txn *t) {
        int n = 0;

        for (size_t i = t->state.n_sessions; i-- > 0;) {
                const struct xdev_session *s = &t->state.sessions[i];
                if (xdev_leader_is_live(s->pid, s->start, s->vt))
                        continue;
                xdev_log(
                        &ctx->log, LOG_NOTICE,
                        "reaping session of \"%s\" on tty%u: leader %d is gone, a zombie or no longer on tty%u",
                        s->user, s->vt, (int) s->pid, s->vt);
                uid_t uid = s->uid;
                xdev_state_remove_session(&t->state, i);
                rundir_release(ctx, &t->state, uid);
                n++;
        }
        return n;
}

/* What a transaction that decides does first: reaps the sessions whose
 * leader is gone, then takes over the sweeps whose sweeper is. Returns the
 * number of sessions reaped. */
static int reap_and_adopt(struct xdev_ctx *ctx, struct xdev_txn *t) {
        int reaped = reap(ctx, t);

        (void) xdev_linger_adopt(ctx, &t->state, &t->bin, &t->waits);
        return reaped;
}
/* The one sweep of a transaction: the processes of each uid that lost a
 * grant in it (as noted when it was opened), once those grants are off
 * and before anybody else gets one. A transaction takes every grant it
 * takes away before this sweep (a handover's in its take-off), so later
 * calls do nothing. */
static void sweep_lost(struct xdev_ctx *ctx, struct xdev_txn *t) {
        if (t->swept_once)
                return;
        t->swept_once = true;
        if (t->self) /* the daemon reads them after the lock */
                t->linger.defer = &t->defer;
        (void) xdev_linger_after(&t->linger, &t->state, &ctx->config, &ctx->log, &t->swept, &t->bin,
                                 &t->waits);
        xdev_txn_phase_end(t, XDEV_PHASE_SWEEP);
}

/* The order of a handover, which never lets two users have a shared node
 * at once: the state already names the next holder; when a different user
 * held the devices, they are first taken off (saved and converged) and
 * that user's open fds revoked, and only then is the next holder planned.
 * The ledger keeps the entries taken off, so that the next holder gets the
 * same nodes without a new enumeration. Returns 1 when a holder was
 * released, 0 when there was none to release, or -errno from saving
 * (nothing changed then). */
static int release_old_holder(struct xdev_ctx *ctx, struct xdev_txn *t) {
        bool next_has = t->state.has_holder;
        uid_t next = t->state.holder;
        int r;

        if (!t->loaded_has_holder || !next_has || next == t->loaded_holder)
                return 0; /* no holder before, or none after: one pass keeps the order */
        t->state.has_holder = false;
        xdev_ledger_plan(ctx, t);
        r = xdev_txn_commit(ctx, t, false, true);
        xdev_txn_phase_end(t, XDEV_PHASE_RELEASE);
        if (r >= 0) {
                sweep_lost(ctx, t);
                t->loaded_has_holder = false;
        }
        t->state.has_holder = next_has;
        t->state.holder = next;
        return r < 0 ? r : 1;
}

static bool any_dirty(const struct xdev_txn *t) {
        for (size_t i = 0; i < t->state.n_nodes; i++)
                if (t->state.nodes[i].dirty)
                        return true;
        return false;
}

static bool holder_changed(const struct xdev_txn *t) {
        return t->state.has_holder &&
                (!t->loaded_has_holder || t->loaded_holder != t->state.holder);
}

/* After the decision, down the layers once: the old holder's grants off
 * (plan, node, state) when the holder changed, the one sweep of what was
 * taken away (policy, sweep), then every node planned, a new holder's
 * devices added and converged (plan, node, state). At a handover from one holder to the next (a VT
 * switch), the next gets the nodes the ledger carried over first, and the
 * enumeration that finds any it lacked comes after: the switch does not
 * wait for it (with T->defer_enumerate, it is left to the caller, who runs
 * xdev_follow_enumerate() when idle). Returns commit's result. */
static int settle(struct xdev_ctx *ctx, struct xdev_txn *t, bool all) {
        int r, released;

        released = release_old_holder(ctx, t);
        if (released < 0)
                return released;
        xdev_ledger_plan(ctx, t);
        if (holder_changed(t)) {
                xdev_log(&ctx->log, LOG_INFO, "shared devices pass to uid %u",
                         (unsigned) t->state.holder);
                if (!released)
                        (void) xdev_ledger_enumerate(ctx, t);
                if (t->self && t->self->before_grant)
                        t->self->before_grant(t->self->data);
                t->handed_over = true;
        } else if (t->loaded_has_holder && !t->state.has_holder)
                xdev_log(&ctx->log, LOG_INFO, "shared devices taken from uid %u; nobody holds them",
                         (unsigned) t->loaded_holder);
        r = xdev_txn_commit(ctx, t, all, false);
        xdev_txn_phase_end(t, XDEV_PHASE_GRANT);
        if (r >= 0) /* grants removed first, then lingering fds revoked */
                sweep_lost(ctx, t);
        if (r >= 0 && released && t->defer_enumerate)
                t->enumerate_pending = true;
        else if (r >= 0 && released) {
                (void) xdev_ledger_enumerate(ctx, t);
                if (any_dirty(t)) {
                        int more = xdev_txn_commit(ctx, t, false, false);
                        if (more > 0)
                                r += more;
                }
        }
        return r;
}

/* The holder once LOGIN is recorded: with the follow rule, LOGIN holds when
 * its VT is in front; without, the first console login holds. */
static void elect_with_login(struct xdev_state *state, int active_vt,
                             const struct xdev_login *login) {
        xdev_state_elect(state, active_vt);
        if (state->follow ? (int) login->vt == active_vt : !state->has_holder) {
                state->has_holder = true;
                state->holder = login->uid;
        }
}

static int record_login(struct xdev_txn *t, const struct xdev_login *login) {
        struct xdev_session s = {
                .uid = login->uid,
                .vt = login->vt,
                .pid = login->pid,
                .start = login->start,
                .since = (int64_t) time(NULL),
        };

        strcpy(s.user, login->user); /* lengths checked by the caller */
        strcpy(s.service, login->service);
        return xdev_state_add_session(&t->state, &s);
}

/* A login whose grants failed (each node already put back): forget the
 * session and converge what is left. */
static void undo_login(struct xdev_ctx *ctx, struct xdev_txn *t, const struct xdev_login *login) {
        ssize_t idx = xdev_state_find_session(&t->state, login->pid, login->start);

        if (idx >= 0)
                xdev_state_remove_session(&t->state, (size_t) idx);
        xdev_state_elect(&t->state, t->active_vt);
        xdev_ledger_plan(ctx, t);
        (void) xdev_txn_commit(ctx, t, false, false);
}

static void login_result(const struct xdev_txn *t, const struct xdev_login *login) {
        struct xdev_login_result *res = login->result;

        if (!res)
                return;
        *res = (struct xdev_login_result) { .follow = t->state.follow };
        for (size_t i = 0; i < t->state.n_nodes; i++) {
                const struct xdev_node *n = &t->state.nodes[i];
                if (!n->granted || n->grantee != login->uid ||
                    (unsigned) n->class >= _XDEV_CLASS_MAX ||
                    (n->class == XDEV_CLASS_VT && n->rdev != xdev_vt_devnum(login->vt)))
                        continue;
                res->granted[n->class]++;
        }
}

/* Opens the login's transaction. The user's processes are being ended
 * after her last logout: her new session would be ended with them. It
 * waits (§3.5.7). */
static int txn_begin_login(struct xdev_ctx *ctx, struct xdev_txn *t,
                           const struct xdev_login *login) {
        for (bool said = false;; said = true) {
                ssize_t k;
                int r = xdev_txn_begin(ctx, t);
                if (r < 0)
                        return r;
                k = xdev_state_find_sweep(&t->state, login->uid);
                if (k < 0 || !xdev_linger_rec_is_running(&t->state.sweeps[k]))
                        return 0;
                if (!said)
                        xdev_log(
                                &ctx->log, LOG_INFO,
                                "the processes of \"%s\" are being ended after a logout (by pid %d); the new session waits",
                                login->user, (int) t->state.sweeps[k].pid);
                xdev_txn_end(ctx, t);
                (void) usleep(50 * 1000);
        }
}

/* Records the login and plans its grants: its VT, and the shared devices
 * when it holds them. Nothing is saved or changed yet: on failure dropping
 * the plan is the undo (a release of the old holder before stands). */
static int plan_login(struct xdev_ctx *ctx, struct xdev_txn *t, const struct xdev_login *login) {
        int r = record_login(t, login);

        if (r < 0)
                return r;
        xdev_ledger_plan(ctx, t);
        if (ctx->config.access[XDEV_CLASS_VT] != XDEV_ACCESS_OFF) {
                char path[XDEV_VT_PATH_MAX];
                xdev_vt_path(path, login->vt);
                r = xdev_ledger_want(ctx, t, path, XDEV_CLASS_VT, xdev_vt_devnum(login->vt),
                                     login->uid, ctx->config.access[XDEV_CLASS_VT]);
        }
        if (r >= 0 && t->state.has_holder && t->state.holder == login->uid)
                r = xdev_ledger_enumerate(ctx, t);
        if (r < 0)
                xdev_log(&ctx->log, LOG_ERR, "cannot prepare grants (%s); granting nothing",
                         strerror(-r));
        return r < 0 ? r : 0;
}

/* Saves and applies the login's plan, undoing this session's grants when a
 * node could not be granted, then sweeps for what the old holder lost.
 * Returns 1 when the login holds the shared devices, 0 or -errno. */
static int commit_login(struct xdev_ctx *ctx, struct xdev_txn *t, const struct xdev_login *login) {
        int failed;

        if (holder_changed(t))
                xdev_log(&ctx->log, LOG_INFO, "shared devices pass to uid %u",
                         (unsigned) t->state.holder);
        xdev_fault_point("open-before-commit");
        failed = xdev_txn_commit(ctx, t, false, false);
        if (failed < 0)
                return failed;
        if (failed > 0) {
                xdev_log(&ctx->log, LOG_ERR,
                         "%d node(s) could not be granted; undoing this session's grants", failed);
                undo_login(ctx, t, login);
                return -EIO;
        }
        xdev_fault_point("open-after-commit");
        sweep_lost(ctx, t);
        login_result(t, login);
        return t->state.has_holder && t->state.holder == login->uid;
}

int xdev_session_open(struct xdev_ctx *ctx, const struct xdev_login *login) {
        struct xdev_txn t;
        int r;

        XDEV_ASSERT(ctx && login && login->pid > 0);
        if (!xdev_name_is_valid(login->user, XDEV_NAME_MAX) ||
            !xdev_name_is_valid(login->service, XDEV_NAME_MAX) || login->vt < 1 ||
            login->vt > XDEV_VT_MAX)
                return -EINVAL;
        if (!ctx->config_ok)
                return -EINVAL;
        r = txn_begin_login(ctx, &t, login);
        if (r < 0)
                return r;
        (void) reap_and_adopt(ctx, &t);
        if (xdev_state_find_session(&t.state, login->pid, login->start) >= 0) {
                r = t.state.has_holder && t.state.holder == login->uid;
                login_result(&t, login);
                goto out;
        }
        elect_with_login(&t.state, t.active_vt, login);
        r = release_old_holder(ctx, &t);
        if (r >= 0)
                r = plan_login(ctx, &t, login);
        if (r >= 0)
                r = commit_login(ctx, &t, login);
out:
        xdev_txn_end(ctx, &t);
        return r;
}

/* The session on VT has ended: a display server or a wrapper killed before
 * it could restore the VT may have left it in graphics mode with the
 * keyboard off, which the next login there could not use (logind resets a
 * VT at the end of its session as well). Not while another recorded
 * session is on that VT. */
static void vt_reset(struct xdev_ctx *ctx, const struct xdev_txn *t, unsigned vt) {
        unsigned what = 0;
        int fd, r;

        for (size_t i = 0; i < t->state.n_sessions; i++)
                if (t->state.sessions[i].vt == vt)
                        return;
        fd = xdev_vt_open(vt, O_NONBLOCK);
        r = fd < 0 ? fd : xdev_vt_reset(fd, &what);
        if (fd >= 0)
                (void) close(fd);
        if (what) {
                static const char *const names[] = { "graphics mode", "keyboard off or raw",
                                                     "switches held by a process" };
                char list[128] = "";
                for (unsigned i = 0; i < 3; i++)
                        if (what & (1u << i)) {
                                if (list[0])
                                        strcat(list, ", ");
                                strcat(list, names[i]);
                        }
                xdev_log(&ctx->log, LOG_NOTICE,
                         "tty%u was left in a state the next login cannot use (%s); reset", vt,
                         list);
        }
        if (r < 0)
                xdev_log(&ctx->log, LOG_WARNING, "cannot reset the modes of tty%u: %s", vt,
                         strerror(-r));
}

int xdev_session_close(struct xdev_ctx *ctx, pid_t pid, uint64_t start) {
        struct xdev_txn t;
        ssize_t idx;
        unsigned vt = 0;
        bool lost = false;
        int r, reaped;

        XDEV_ASSERT(ctx && pid > 0);
        r = xdev_txn_begin(ctx, &t);
        if (r < 0)
                return r;
        /* util-linux login closes after its child left the VT: by then its
         * own session may be reaped here, which is its close as well */
        reaped = reap_and_adopt(ctx, &t);
        idx = xdev_state_find_session(&t.state, pid, start);
        if (idx < 0 && reaped == 0) {
                r = -ENOENT;
                goto out;
        }
        if (idx >= 0) {
                uid_t uid = t.state.sessions[idx].uid;
                vt = t.state.sessions[idx].vt;
                xdev_state_remove_session(&t.state, (size_t) idx);
                rundir_release(ctx, &t.state, uid);
        }
        xdev_state_elect(&t.state, t.active_vt);
        if (!ctx->config_ok && holder_changed(&t))
                t.state.has_holder = false;
        xdev_fault_point("close-before-commit");
        r = settle(ctx, &t, false);
        r = r < 0 ? r : idx < 0 ? -ENOENT : 0;
        /* the holder lost the shared devices (to nobody, or to another) */
        lost = r == 0 && t.loaded_has_holder &&
                (!t.state.has_holder || t.state.holder != t.loaded_holder);
        if (vt > 0)
                vt_reset(ctx, &t, vt);
out:
        xdev_txn_end(ctx, &t);
        /* The user's own processes were swept by uid; one that left her
         * uid, or was passed her file, is found by the pass after the lock
         * (doc/DESIGN.md §3.5.10). Only when the devices changed hands: a
         * logout that takes nothing shared away leaves nothing to find. */
        if (lost) {
                struct xdev_sweep_counts c;
                int q = xdev_sweep_others(ctx, NULL, &c);
                if (q < 0)
                        xdev_log(&ctx->log, LOG_ERR,
                                 "cannot look for holders outside every session: %s", strerror(-q));
        }
        return r;
}

int xdev_device_apply(struct xdev_ctx *ctx, const char *path, enum xdev_class class, dev_t devnum) {
        struct xdev_txn t;
        int r, reaped;

        XDEV_ASSERT(ctx && path && (unsigned) class < _XDEV_CLASS_MAX);
        if (class == XDEV_CLASS_VT || !xdev_path_is_valid(path))
                return -EINVAL;
        /* A broken config grants nothing new and decides nothing: the holder
         * and its grants stay as they are until the config is fixed. */
        if (!ctx->config_ok)
                return -EINVAL;
        r = xdev_txn_begin(ctx, &t);
        if (r < 0)
                return r;
        reaped = reap_and_adopt(ctx, &t);
        xdev_state_elect(&t.state, t.active_vt);
        if (reaped > 0 || holder_changed(&t) || t.loaded_has_holder != t.state.has_holder) {
                r = release_old_holder(ctx, &t);
                if (r < 0)
                        goto out;
                xdev_ledger_plan(ctx, &t);
                if (holder_changed(&t))
                        (void) xdev_ledger_enumerate(ctx, &t);
        }
        if (t.state.has_holder && ctx->config.access[class] != XDEV_ACCESS_OFF) {
                r = xdev_ledger_want(ctx, &t, path, class, devnum, t.state.holder,
                                     ctx->config.access[class]);
                if (r < 0 && r != -ENOENT) {
                        /* xdev_ledger_want logged why; the reaping above still gets committed.
                         * A node that is not what udev said is refused input
                         * (-EINVAL); ENOMEM, E2BIG, EIO... stay what they are. */
                        (void) xdev_txn_commit(ctx, &t, false, false);
                        if (r == -ENOTTY || r == -ESTALE || r == -EOPNOTSUPP)
                                r = -EINVAL;
                        goto out;
                }
        } else
                xdev_debug(&ctx->log, "\"%s\": no session holds the shared devices, nothing to do",
                           path);
        r = xdev_txn_commit(ctx, &t, false, false);
        if (r >= 0)
                sweep_lost(ctx, &t);
        if (r == 0)
                r = t.state.has_holder && xdev_state_find_node(&t.state, path) >= 0 ? 1 : 0;
        else if (r > 0)
                r = -EIO;
out:
        xdev_txn_end(ctx, &t);
        return r;
}

int xdev_device_forget(struct xdev_ctx *ctx, const char *path) {
        struct xdev_txn t;
        ssize_t idx;
        int r;

        XDEV_ASSERT(ctx && path);
        if (!xdev_path_is_valid(path))
                return -EINVAL;
        r = xdev_txn_begin(ctx, &t);
        if (r < 0)
                return r;
        idx = xdev_state_find_node(&t.state, path);
        if (idx < 0) {
                r = 0;
                goto out;
        }
        /* The node may still be there (a "remove" for a name udev reuses):
         * restore it if it is the recorded one, else forget it. */
        t.state.nodes[idx].granted = false;
        t.state.nodes[idx].dirty = true;
        r = xdev_txn_commit(ctx, &t, false, false);
        r = r < 0 ? r : 1;
out:
        xdev_txn_end(ctx, &t);
        return r;
}

int xdev_gc(struct xdev_ctx *ctx, unsigned *ret_lost) {
        struct xdev_txn t;
        int r, reaped;

        XDEV_ASSERT(ctx && ret_lost);
        *ret_lost = 0;
        r = xdev_txn_begin(ctx, &t);
        if (r < 0)
                return r;
        *ret_lost = t.lost;
        reaped = reap_and_adopt(ctx, &t);
        xdev_state_elect(&t.state, t.active_vt);
        if (!ctx->config_ok && holder_changed(&t))
                t.state.has_holder = false;
        r = settle(ctx, &t, true);
        r = r < 0 ? r : reaped;
        xdev_txn_end(ctx, &t);
        return r;
}

/* A follow step's caller's last look before the lock is let go. */
static void before_unlock(const struct xdev_follow_self *self) {
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
        }
        r = xdev_txn_begin(ctx, &t);
        if (r < 0)
                return r;
        t.self = self;
        reaped = reap(ctx, &t);
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
        if (!ctx->config_ok && holder_changed(&t))
                t.state.has_holder = false;
        changed = changed || holder_changed(&t) || t.loaded_has_holder != t.state.has_holder;
        r = 0;
        xdev_txn_phase_end(&t, XDEV_PHASE_LOAD);
        if (changed) {
                t.defer_enumerate = self != NULL;
                r = settle(ctx, &t, false);
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
                xdev_txn_end(ctx, &t);
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
        if (any_dirty(&t)) {
                r = xdev_txn_commit(ctx, &t, false, false);
                if (r == 0)
                        r = t.state.n_nodes > before ? (int) (t.state.n_nodes - before) : 0;
                else if (r > 0)
                        r = -EIO;
        }
out:
        before_unlock(self);
        xdev_txn_end(ctx, &t);
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

/* What a reset takes, logged as gc logs what it reaps: each session it
 * forgets (saying whether its leader still runs) and each node it takes
 * back. The sweep after it logs what it found still holding them. */
static void reset_log_plan(struct xdev_ctx *ctx, const struct xdev_state *state) {
        for (size_t i = 0; i < state->n_sessions; i++) {
                const struct xdev_session *s = &state->sessions[i];
                bool live = xdev_leader_is_live(s->pid, s->start, s->vt);
                xdev_log(&ctx->log, LOG_NOTICE,
                         "reset: forgetting the session of \"%s\" on tty%u (leader %d %s)", s->user,
                         s->vt, (int) s->pid,
                         live ? "still logged in: it keeps its login, not its devices" : "gone");
        }
        for (size_t i = 0; i < state->n_nodes; i++) {
                const struct xdev_node *n = &state->nodes[i];
                if (n->granted)
                        xdev_log(&ctx->log, LOG_NOTICE,
                                 "reset: taking \"%s\" (%s) back from uid %u", n->path,
                                 xdev_class_to_string(n->class), (unsigned) n->grantee);
        }
}

int xdev_reset(struct xdev_ctx *ctx, bool force, bool cut_off, unsigned *ret_lost) {
        struct xdev_config policy = ctx->config; /* a shallow copy, never freed */
        struct xdev_txn t;
        size_t n_sessions;
        int r;

        *ret_lost = 0;
        r = xdev_txn_begin(ctx, &t);
        if (r == -EBADMSG && force) {
                struct xdev_store store;
                r = xdev_store_open(&store, ctx->statedir);
                if (r < 0)
                        return r;
                r = unlinkat(store.dirfd, "state", 0) < 0 ? -errno : 0;
                xdev_store_close(&store);
                if (r < 0)
                        return r;
                xdev_log(
                        &ctx->log, LOG_WARNING,
                        "removed the damaged state file; the nodes whose marks say they are granted are put back");
                /* with no state file, the marks are the ledger */
                r = xdev_txn_begin(ctx, &t);
        }
        if (r < 0)
                return r;
        *ret_lost = t.lost;
        reset_log_plan(ctx, &t.state);
        n_sessions = t.state.n_sessions;
        t.state.n_sessions = 0;
        t.state.has_holder = false;
        xdev_ledger_plan(ctx, &t);
        r = xdev_txn_commit(ctx, &t, true, false);
        if (r >= 0 && cut_off) {
                /* As at a VT switch: every grantee counts as still logged
                 * in (the records stay in memory for the sweep alone), so
                 * input is revoked and DRM master dropped, and a display
                 * server is not terminated for holding its DRM node. */
                policy.lingering = XDEV_LINGER_REVOKE;
                t.state.n_sessions = n_sessions;
        }
        if (r >= 0)
                (void) xdev_linger_after(&t.linger, &t.state, &policy, &ctx->log, NULL, &t.bin,
                                         NULL);
        t.state.n_sessions = 0;
        if (r == 0 && t.state.n_nodes > 0)
                r = -EIO;
        xdev_txn_end(ctx, &t);
        return r < 0 ? r : 0;
}

/* Lingering holders of every shared node: everyone but root and the holder. */
static int linger_locked(struct xdev_ctx *ctx, struct xdev_sweep_opts *opts,
                         struct xdev_sweep_counts *c) {
        struct xdev_store store = { -1, -1 };
        struct xdev_state state = { 0 };
        struct xdev_sweep_target *targets = NULL;
        size_t n = 0;
        unsigned line;
        int r;

        r = xdev_store_open(&store, ctx->statedir);
        if (r < 0)
                return r;
        r = xdev_store_load(&store, &state, &line);
        if (r < 0)
                goto out;
        opts->has_keep = state.has_holder;
        opts->keep_uid = state.holder;
        if (opts->has_only && opts->has_keep && opts->only_uid == opts->keep_uid) {
                xdev_log(&ctx->log, LOG_NOTICE,
                         "uid %u holds the shared devices now; nothing to revoke",
                         (unsigned) opts->only_uid);
                *c = (struct xdev_sweep_counts) { 0 };
                r = 0;
                goto out;
        }
        r = xdev_linger_shared_targets(&state, &ctx->config, &ctx->log, &targets, &n);
        if (r < 0)
                goto out;
        r = xdev_sweep_run(targets, n, opts, &ctx->log, c);
out:
        free(targets);
        xdev_state_free(&state);
        xdev_store_close(&store);
        return r;
}

int xdev_revoke(struct xdev_ctx *ctx, bool all, uid_t uid) {
        struct xdev_sweep_opts opts = {
                .has_only = !all,
                .only_uid = uid,
        };
        struct xdev_sweep_counts c = { 0 };
        int r;

        xdev_linger_opts_from_config(&opts, &ctx->config);
        r = linger_locked(ctx, &opts, &c);
        if (r < 0)
                return r;
        xdev_log(
                &ctx->log, LOG_NOTICE,
                "lingering holders: %u found, %u fd(s) revoked, %u DRM master(s) dropped, %u terminated, %u left",
                c.holders, c.revoked, c.demoted, c.terminated, c.left);
        return (int) c.holders;
}

/* The candidates of the pass after the lock's second half: the pids its
 * first half found, whatever uid is asked for. */
struct pid_list {
        pid_t *pids;
        size_t n;
};

static int pid_list_of(void *data, uid_t uid, pid_t **ret, size_t *n) {
        const struct pid_list *l = data;
        (void) uid;
        *ret = malloc((l->n ? l->n : 1) * sizeof **ret);
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, l->pids, l->n * sizeof **ret);
        *n = l->n;
        return 0;
}

/* The recorded shared nodes and the uid to spare (the holder's) of the
 * state, read under the lock, then the sweep OPTS asks for: after the lock is let go when
 * LOOK_ONLY (it reads and reports), else before (it acts, against the
 * state of that moment). A sweep of one uid (HAS_ONLY) that holds the
 * devices again by then does nothing. */
static int others_sweep(struct xdev_ctx *ctx, struct xdev_sweep_opts *opts, bool look_only,
                        struct xdev_sweep_counts *c) {
        struct xdev_store store = { -1, -1 };
        struct xdev_state state = { 0 };
        struct xdev_sweep_target *targets = NULL;
        uid_t *spare = NULL;
        size_t n = 0, ns = 0;
        unsigned line;
        int r;

        *c = (struct xdev_sweep_counts) { 0 };
        r = xdev_store_open(&store, ctx->statedir);
        if (r < 0)
                return r;
        r = xdev_store_load(&store, &state, &line);
        if (r < 0)
                goto out;
        spare = calloc(1, sizeof *spare);
        if (!spare) {
                r = -ENOMEM;
                goto out;
        }
        /* the holder alone: a user in the background keeps nothing that
         * is not cut off already or his by right */
        if (state.has_holder)
                spare[ns++] = state.holder;
        if (opts->has_only && state.has_holder && state.holder == opts->only_uid)
                goto out;
        opts->has_keep = state.has_holder;
        opts->keep_uid = state.holder;
        opts->spare = spare;
        opts->n_spare = ns;
        if (look_only) /* the lock only to read the state */
                xdev_store_close(&store);
        /* the recorded nodes and the enumerable ones: after the last
         * logout nothing is recorded, and the file is still hers */
        r = xdev_linger_shared_targets(&state, &ctx->config, &ctx->log, &targets, &n);
        if (r < 0)
                goto out;
        r = xdev_sweep_run(targets, n, opts, &ctx->log, c);
out:
        free(spare);
        free(targets);
        xdev_state_free(&state);
        xdev_store_close(&store);
        return r;
}

/* One half of the pass after the lock: LOOK (report-only, the candidates
 * in LOOK->procs or every process) read without the lock, then what it
 * found read again and acted on under the lock, as at a VT switch. */
static int others_look_then_act(struct xdev_ctx *ctx, const struct xdev_sweep_opts *how,
                                struct xdev_sweep_counts *ret) {
        struct xdev_sweep_report rep = { 0 };
        struct xdev_sweep_opts look = *how;
        struct xdev_sweep_counts c;
        struct pid_list cand = { 0 };
        int r;

        look.report_only = true;
        look.report = &rep;
        look.scan_budget = XDEV_SWEEP_SCAN_BUDGET_MAX;
        r = others_sweep(ctx, &look, true, &c);
        ret->examined += c.examined;
        if (r < 0 || rep.n == 0) {
                xdev_sweep_report_free(&rep);
                return r < 0 ? r : 0;
        }
        cand.pids = malloc(rep.n * sizeof *cand.pids);
        if (!cand.pids) {
                xdev_sweep_report_free(&rep);
                return -ENOMEM;
        }
        for (size_t i = 0; i < rep.n; i++) {
                bool seen = false;
                for (size_t k = 0; k < cand.n && !seen; k++)
                        seen = cand.pids[k] == rep.items[i].pid;
                if (!seen)
                        cand.pids[cand.n++] = rep.items[i].pid;
        }
        xdev_sweep_report_free(&rep);
        struct xdev_procsrc src = { .pids_of = pid_list_of, .data = &cand };
        struct xdev_sweep_opts act = *how;
        act.scan_budget = XDEV_SWEEP_SCAN_BUDGET_MAX;
        act.report_only = false;
        act.report = NULL;
        /* "warn" only logs, here too */
        act.policy =
                ctx->config.lingering == XDEV_LINGER_WARN ? XDEV_LINGER_WARN : XDEV_LINGER_REVOKE;
        act.in_session = true;
        act.procs = &src;
        act.grace_ms = ctx->config.linger_grace_ms;
        r = others_sweep(ctx, &act, false, &c);
        c.examined = 0;
        xdev_sweep_counts_add(ret, &c);
        free(cand.pids);
        return r;
}

int xdev_sweep_others(struct xdev_ctx *ctx, const struct xdev_sweep_defer *defer,
                      struct xdev_sweep_counts *ret) {
        struct xdev_sweep_opts look = { .others = true };
        int r = 0;

        *ret = (struct xdev_sweep_counts) { 0 };
        if (defer && defer->n > 0) {
                /* a switch's processes over the scan budget, of a uid with
                 * a session: each read to the end, then cut off at once if
                 * it holds, the least read under the lock first, so that a
                 * big process does not keep a small one waiting */
                size_t order[XDEV_SWEEP_DEFER_MAX];
                for (size_t i = 0; i < defer->n; i++)
                        order[i] = i;
                for (size_t i = 1; i < defer->n; i++)
                        for (size_t k = i;
                             k > 0 && defer->cost[order[k - 1]] > defer->cost[order[k]]; k--) {
                                size_t t = order[k];
                                order[k] = order[k - 1];
                                order[k - 1] = t;
                        }
                for (size_t i = 0; i < defer->n && r >= 0; i++) {
                        struct pid_list l = { (pid_t *) &defer->pids[order[i]], 1 };
                        struct xdev_procsrc src = { .pids_of = pid_list_of, .data = &l };
                        struct xdev_sweep_opts mine = { .has_only = true,
                                                        .only_uid = defer->uid,
                                                        .procs = &src };
                        r = others_look_then_act(ctx, &mine, ret);
                }
        }
        if (r >= 0)
                r = others_look_then_act(ctx, &look, ret);
        if (r >= 0 && ret->holders > 0)
                xdev_log(
                        &ctx->log, LOG_NOTICE,
                        "after the lock: %u holder(s) found, %u fd(s) revoked, %u DRM master(s) dropped, %u terminated",
                        ret->holders, ret->revoked, ret->demoted, ret->terminated);
        return r;
}

int xdev_status_get(struct xdev_ctx *ctx, struct xdev_status *ret) {
        struct xdev_sweep_opts opts = { .report_only = true };
        struct xdev_sweep_counts c = { 0 };
        struct xdev_txn t;
        int r;

        XDEV_ASSERT(ctx && ret);
        *ret = (struct xdev_status) { 0 };
        r = xdev_txn_open(ctx, &t); /* a lost state's grants are reported, not put back */
        if (r < 0)
                return r;
        ret->lost = t.lost;
        ret->active_vt = t.active_vt;
        ret->daemon_alive =
                t.state.follow && xdev_pid_is_alive(t.state.follow_pid, t.state.follow_start);
        ret->leader_alive = calloc(t.state.n_sessions + 1, sizeof *ret->leader_alive);
        if (!ret->leader_alive) {
                xdev_txn_end(ctx, &t);
                return -ENOMEM;
        }
        for (size_t i = 0; i < t.state.n_sessions; i++)
                ret->leader_alive[i] =
                        xdev_leader_is_live(t.state.sessions[i].pid, t.state.sessions[i].start,
                                            t.state.sessions[i].vt);
        ret->state = t.state; /* taken over: xdev_txn_end must not free it */
        t.state = (struct xdev_state) { 0 };
        xdev_txn_end(ctx, &t);
        /* After the state lock is released: the scan takes it again. */
        opts.report = &ret->lingering;
        r = linger_locked(ctx, &opts, &c);
        if (r < 0)
                xdev_status_free(ret);
        return r;
}

void xdev_status_free(struct xdev_status *st) {
        if (!st)
                return;
        xdev_state_free(&st->state);
        free(st->leader_alive);
        xdev_sweep_report_free(&st->lingering);
        *st = (struct xdev_status) { 0 };
}
