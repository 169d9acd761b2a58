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
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "devices.h"
#include "handover.h"
#include "ledger.h"
#include "linger.h"
#include "procfs.h"
#include "node.h"
#include "others.h"
#include "tty.h"
#include "vt.h"

/* What a transaction that decides does first: reaps the sessions whose
 * leader is gone, then takes over the sweeps whose sweeper is. Returns the
 * number of sessions reaped. */
static int reap_and_adopt(struct xdev_ctx *ctx, struct xdev_txn *t) {
        int reaped = xdev_handover_reap(ctx, t);

        (void) xdev_linger_adopt(ctx, &t->state, &t->bin, &t->waits);
        return reaped;
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
        (void) xdev_txn_commit(ctx, t, false);
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
 * the plan is the undo. */
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

        if (xdev_txn_holder_changed(t))
                xdev_log(&ctx->log, LOG_INFO, "shared devices pass to uid %u",
                         (unsigned) t->state.holder);
        xdev_fault_point("open-before-commit");
        failed = xdev_txn_commit(ctx, t, false);
        if (failed < 0)
                return failed;
        if (failed > 0) {
                xdev_log(&ctx->log, LOG_ERR,
                         "%d node(s) could not be granted; undoing this session's grants", failed);
                undo_login(ctx, t, login);
                /* an old holder lost what it had all the same */
                xdev_handover_sweep_lost(ctx, t);
                return -EIO;
        }
        xdev_fault_point("open-after-commit");
        xdev_handover_sweep_lost(ctx, t);
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
        r = plan_login(ctx, &t, login);
        if (r >= 0)
                r = commit_login(ctx, &t, login);
out:
        xdev_others_txn_end(ctx, &t);
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
                xdev_handover_rundir_release(ctx, &t.state, uid);
        }
        xdev_state_elect(&t.state, t.active_vt);
        if (!ctx->config_ok && xdev_txn_holder_changed(&t))
                t.state.has_holder = false;
        xdev_fault_point("close-before-commit");
        r = xdev_handover_settle(ctx, &t, false);
        r = r < 0 ? r : idx < 0 ? -ENOENT : 0;
        /* the holder lost the shared devices (to nobody, or to another) */
        lost = r == 0 && t.loaded_has_holder &&
                (!t.state.has_holder || t.state.holder != t.loaded_holder);
        if (vt > 0)
                vt_reset(ctx, &t, vt);
        /* The user's own processes were swept by uid; one that left her
         * uid, or was passed her file, is found by the pass after the lock
         * (doc/DESIGN.md §3.5.10). Only when the devices changed hands: a
         * logout that takes nothing shared away leaves nothing to find. */
        t.others_after = lost;
out:
        xdev_others_txn_end(ctx, &t);
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
        if (reaped > 0 || xdev_txn_holder_changed(&t) ||
            t.loaded_has_holder != t.state.has_holder) {
                xdev_ledger_plan(ctx, &t);
                if (xdev_txn_holder_changed(&t))
                        (void) xdev_ledger_enumerate(ctx, &t);
        }
        if (t.state.has_holder && ctx->config.access[class] != XDEV_ACCESS_OFF) {
                r = xdev_ledger_want(ctx, &t, path, class, devnum, t.state.holder,
                                     ctx->config.access[class]);
                if (r < 0 && r != -ENOENT) {
                        /* xdev_ledger_want logged why; the reaping above still gets committed.
                         * A node that is not what udev said is refused input
                         * (-EINVAL); ENOMEM, E2BIG, EIO... stay what they are. */
                        (void) xdev_txn_commit(ctx, &t, false);
                        if (r == -ENOTTY || r == -ESTALE || r == -EOPNOTSUPP)
                                r = -EINVAL;
                        goto out;
                }
        } else
                xdev_debug(&ctx->log, "\"%s\": no session holds the shared devices, nothing to do",
                           path);
        r = xdev_txn_commit(ctx, &t, false);
        if (r >= 0)
                xdev_handover_sweep_lost(ctx, &t);
        if (r == 0)
                r = t.state.has_holder && xdev_state_find_node(&t.state, path) >= 0 ? 1 : 0;
        else if (r > 0)
                r = -EIO;
out:
        xdev_others_txn_end(ctx, &t);
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
        r = xdev_txn_commit(ctx, &t, false);
        r = r < 0 ? r : 1;
out:
        xdev_others_txn_end(ctx, &t);
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
        if (!ctx->config_ok && xdev_txn_holder_changed(&t))
                t.state.has_holder = false;
        r = xdev_handover_settle(ctx, &t, true);
        r = r < 0 ? r : reaped;
        xdev_others_txn_end(ctx, &t);
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
        r = xdev_txn_commit(ctx, &t, true);
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
        xdev_others_txn_end(ctx, &t);
        return r < 0 ? r : 0;
}

int xdev_revoke(struct xdev_ctx *ctx, bool all, uid_t uid) {
        struct xdev_sweep_opts opts = {
                .has_only = !all,
                .only_uid = uid,
        };
        struct xdev_sweep_counts c = { 0 };
        int r;

        xdev_linger_opts_from_config(&opts, &ctx->config);
        /* lingering holders of every shared node: everyone but root and
         * the holder, swept under the lock */
        r = xdev_linger_sweep_shared(ctx, &opts, false, &c);
        if (r < 0)
                return r;
        if (r > 0)
                xdev_log(&ctx->log, LOG_NOTICE,
                         "uid %u holds the shared devices now; nothing to revoke",
                         (unsigned) opts.only_uid);
        xdev_sweep_counts_log(&ctx->log, LOG_NOTICE, "lingering holders", &c);
        return (int) c.holders;
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
                xdev_others_txn_end(ctx, &t);
                return -ENOMEM;
        }
        for (size_t i = 0; i < t.state.n_sessions; i++)
                ret->leader_alive[i] =
                        xdev_leader_is_live(t.state.sessions[i].pid, t.state.sessions[i].start,
                                            t.state.sessions[i].vt);
        ret->state = t.state; /* taken over: xdev_txn_end must not free it */
        t.state = (struct xdev_state) { 0 };
        xdev_others_txn_end(ctx, &t);
        /* After the state lock is released: the scan takes it again. */
        opts.report = &ret->lingering;
        r = xdev_linger_sweep_shared(ctx, &opts, false, &c);
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
