/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The transaction every operation of the core runs in: the state lock
 * taken and the state loaded (what a lost state left granted found by its
 * marks and put back), the plan saved and the nodes converged, the lock let
 * go and the sweeps in their grace period finished after it. Keeps rules 1
 * to 3 of core.c. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "devices.h"
#include "tty.h"
#include "txn.h"
#include "vt.h"

void xdev_txn_phase_end(struct xdev_txn *t, enum xdev_follow_phase phase) {
        /* called with the state lock held; must not take it or block */
        if (t->self && t->self->phase_end)
                t->self->phase_end(t->self->data, phase);
}

bool xdev_txn_any_dirty(const struct xdev_txn *t) {
        for (size_t i = 0; i < t->state.n_nodes; i++)
                if (t->state.nodes[i].dirty)
                        return true;
        return false;
}

bool xdev_txn_holder_changed(const struct xdev_txn *t) {
        return t->state.has_holder &&
                (!t->loaded_has_holder || t->loaded_holder != t->state.holder);
}

bool xdev_txn_passes_between(const struct xdev_txn *t) {
        return t->loaded_has_holder && xdev_txn_holder_changed(t);
}

/* A node at PATH not in the ledger that carries the mark of a grant
 * (doc/DESIGN.md §3.6): a state that was lost granted it. It goes into the
 * ledger as not granted, with the original its mark holds, to be put back. */
static void recover_node(struct xdev_ctx *ctx, struct xdev_txn *t, const char *path,
                         enum xdev_class class) {
        struct xdev_mark m;
        struct stat st;
        int fd, r;

        if (xdev_state_find_node(&t->state, path) >= 0)
                return;
        if (xdev_node_open(&t->dirs, path, class, &fd, &st) < 0)
                return;
        r = xdev_node_mark_read(fd, &st, &m);
        (void) close(fd);
        if (r == -EBADMSG)
                xdev_log(&ctx->log, LOG_WARNING, "\"%s\" carries a malformed mark, ignoring", path);
        if (r < 0)
                return;
        struct xdev_node n = {
                .path = (char *) path,
                .class = class,
                .fsdev = st.st_dev,
                .ino = st.st_ino,
                .rdev = st.st_rdev,
                .uid = m.uid,
                .gid = m.gid,
                .mode = m.mode,
                .acl = m.has_acl ? m.acl : NULL,
                .grantee = m.grantee,
                .dirty = true,
                .lost = true,
        };
        if (xdev_state_add_node(&t->state, &n) < 0)
                return;
        t->lost++;
        xdev_log(
                &ctx->log, LOG_WARNING,
                "\"%s\" is still granted to uid %u by the lost state; its original is %u:%u %04o %s",
                path, (unsigned) m.grantee, (unsigned) m.uid, (unsigned) m.gid,
                (unsigned) (m.mode & 07777), m.has_acl ? m.acl : "(no ACL)");
}

/* There is no state file: the first transaction since boot, or the state
 * was lost (rm -rf /run/xdevices) while nodes were granted. The nodes that
 * may be granted, the shared devices and every VT, are looked at for the
 * marks grants leave. */
static void recover_marks(struct xdev_ctx *ctx, struct xdev_txn *t) {
        struct xdev_device_list list = { 0 };
        char path[XDEV_VT_PATH_MAX];

        if (xdev_devices_enumerate(&ctx->config, &list, &ctx->log) == 0)
                for (size_t i = 0; i < list.n; i++)
                        recover_node(ctx, t, list.items[i].path, list.items[i].class);
        xdev_device_list_free(&list);
        for (unsigned vt = 1; vt <= XDEV_VT_MAX; vt++) {
                xdev_vt_path(path, vt);
                recover_node(ctx, t, path, XDEV_CLASS_VT);
        }
}

int xdev_txn_open(struct xdev_ctx *ctx, struct xdev_txn *t) {
        unsigned line = 0;
        int r;

        *t = (struct xdev_txn) { .store = { -1, -1 }, .dirs = XDEV_DIRCACHE_INIT };
        r = xdev_store_open(&t->store, ctx->statedir);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot use state directory \"%s\": %s%s",
                         ctx->statedir, strerror(-r),
                         r == -EPERM ? " (it must be a root-owned 0700 directory)" : "");
                return r;
        }
        r = xdev_store_load(&t->store, &t->state, &line);
        if (r < 0) {
                if (r == -EBADMSG)
                        xdev_log(
                                &ctx->log, LOG_ERR,
                                "state file \"%s/state\" is damaged at line %u; refusing to grant (\"xdevices reset --force\" clears it)",
                                ctx->statedir, line);
                else
                        xdev_log(&ctx->log, LOG_ERR, "cannot read state file \"%s/state\": %s%s",
                                 ctx->statedir, strerror(-r),
                                 r == -EPERM ? " (not a root-owned private regular file)" : "");
                xdev_store_close(&t->store);
                return r;
        }
        /* An entry saved as not granted is a restore that may not have
         * happened (a crash between the save and the change, or a restore
         * that failed): put it back again, then forget it. */
        for (size_t i = 0; i < t->state.n_nodes; i++)
                if (!t->state.nodes[i].granted)
                        t->state.nodes[i].dirty = true;
        if (r == 1)
                recover_marks(ctx, t);
        t->active_vt = xdev_vt_active();
        t->loaded_has_holder = t->state.has_holder;
        t->loaded_holder = t->state.holder;
        (void) xdev_linger_note(&t->linger, &t->state, ctx->procs);
        return 0;
}

static bool is_drm_primary(const struct xdev_node *n) {
        const char *base = strrchr(n->path, '/');
        return n->class == XDEV_CLASS_DRM && base && strncmp(base + 1, "card", 4) == 0;
}

int xdev_txn_commit(struct xdev_ctx *ctx, struct xdev_txn *t, bool all) {
        int failed = 0, r;
        bool pruned = false;

        r = xdev_store_save(&t->store, &t->state);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot save state in \"%s\": %s; nothing changed",
                         ctx->statedir, strerror(-r));
                return r;
        }
        /* The DRM primary nodes first: a display server coming back to its
         * VT opens (or takes master on) the card before its input. */
        for (size_t k = 0; k < 2 * t->state.n_nodes; k++) {
                size_t i = k % t->state.n_nodes;
                struct xdev_node *n = &t->state.nodes[i];
                if ((k < t->state.n_nodes) != is_drm_primary(n))
                        continue;
                if (!n->dirty && !all)
                        continue;
                r = xdev_node_converge(&t->dirs, n, n->dirty ? XDEV_CONVERGE_CHANGES : 0);
                n->dirty = false;
                if (r == 0) {
                        xdev_debug(&ctx->log, "\"%s\": %s", n->path,
                                   n->granted ? "granted" : "restored");
                        if (!n->granted)
                                n->dirty = true; /* mark for pruning */
                        continue;
                }
                if (r == -ENOENT || r == -ESTALE) {
                        xdev_log(&ctx->log, LOG_NOTICE,
                                 "\"%s\" %s since it was recorded; forgetting it", n->path,
                                 r == -ENOENT ? "is gone" : "was replaced by another node");
                        n->granted = false;
                        n->dirty = true;
                        continue;
                }
                if (n->granted) {
                        xdev_log(&ctx->log, LOG_ERR, "cannot grant \"%s\": %s", n->path,
                                 strerror(-r));
                        failed++;
                } else
                        xdev_log(&ctx->log, LOG_ERR, "cannot restore \"%s\": %s; will retry",
                                 n->path, strerror(-r));
        }
        for (size_t i = t->state.n_nodes; i-- > 0;)
                if (t->state.nodes[i].dirty && !t->state.nodes[i].granted) {
                        xdev_state_remove_node(&t->state, i);
                        pruned = true;
                }
        if (pruned) {
                r = xdev_store_save(&t->store, &t->state);
                if (r < 0)
                        xdev_log(&ctx->log, LOG_WARNING,
                                 "cannot save state after restoring: %s, ignoring", strerror(-r));
        }
        return failed;
}

/* What the grantees of a lost state still hold open of the N shared nodes
 * TARGETS (GRANTEE[i] had TARGETS[i]) is cut off as at a VT switch: their
 * sessions are unknown, so nothing is terminated for holding a DRM node,
 * but input is revoked and DRM master dropped (unless lingering = warn). */
static void cut_off_lost(struct xdev_ctx *ctx, struct xdev_txn *t,
                         struct xdev_sweep_target *targets, uid_t *grantee, size_t n) {
        struct xdev_sweep_counts c = { 0 };

        while (n > 0) {
                uid_t uid = grantee[0];
                size_t m = 0;
                /* this uid's targets first, the others after */
                for (size_t i = 0; i < n; i++)
                        if (grantee[i] == uid) {
                                struct xdev_sweep_target tt = targets[i];
                                targets[i] = targets[m];
                                grantee[i] = grantee[m];
                                targets[m] = tt;
                                grantee[m++] = uid;
                        }
                struct xdev_sweep_opts opts = {
                        .has_only = true,
                        .only_uid = uid,
                        .in_session = true,
                        .bin = &t->bin,
                };
                xdev_linger_opts_from_config(&opts, &ctx->config);
                /* cut off, as at a VT switch, whatever the policy but warn */
                if (opts.policy != XDEV_LINGER_WARN)
                        opts.policy = XDEV_LINGER_REVOKE;
                (void) xdev_sweep_run(targets, m, &opts, &ctx->log, &c);
                memmove(targets, targets + m, (n - m) * sizeof *targets);
                memmove(grantee, grantee + m, (n - m) * sizeof *grantee);
                n -= m;
        }
        if (c.holders > 0 || c.deferred > 0)
                xdev_sweep_counts_log(&ctx->log, LOG_WARNING,
                                      "processes still holding what the lost state granted", &c);
}

int xdev_txn_begin(struct xdev_ctx *ctx, struct xdev_txn *t) {
        struct xdev_sweep_target *targets = NULL;
        uid_t *grantee = NULL;
        size_t n = 0;
        int r = xdev_txn_open(ctx, t);

        if (r < 0 || t->lost == 0)
                return r;
        xdev_log(
                &ctx->log, LOG_ERR,
                "the state \"%s/state\" was lost while %u node(s) were granted: the sessions and sweeps it recorded are forgotten (their users must log in again), and each node is put back to the original its mark holds",
                ctx->statedir, t->lost);
        /* the shared nodes taken back, and from whom, for the cut-off below */
        targets = calloc(t->lost, sizeof *targets);
        grantee = calloc(t->lost, sizeof *grantee);
        for (size_t i = 0; targets && grantee && i < t->state.n_nodes; i++) {
                const struct xdev_node *nd = &t->state.nodes[i];
                if (!nd->lost || nd->class == XDEV_CLASS_VT || n >= t->lost)
                        continue;
                targets[n].rdev = nd->rdev;
                targets[n].class = nd->class;
                (void) snprintf(targets[n].path, sizeof targets[n].path, "%s", nd->path);
                grantee[n++] = nd->grantee;
        }
        if (xdev_txn_commit(ctx, t, false) == 0) {
                xdev_log(&ctx->log, LOG_WARNING,
                         "%u node(s) granted by the lost state were put back to their originals",
                         t->lost);
                cut_off_lost(ctx, t, targets, grantee, n);
        }
        free(targets);
        free(grantee);
        return 0;
}

struct xdev_sweep_wait *xdev_txn_close(struct xdev_ctx *ctx, struct xdev_txn *t) {
        struct xdev_sweep_wait *waits = t->waits;

        if (waits && xdev_linger_record(ctx, &t->store, &t->state, waits) < 0) {
                xdev_sweep_wait_finish(waits, NULL); /* under the lock, as before */
                waits = NULL;
        }
        t->waits = NULL;
        xdev_dircache_done(&t->dirs);
        xdev_linger_set_free(&t->linger);
        xdev_state_free(&t->state);
        xdev_store_close(&t->store);
        xdev_fd_bin_empty(&t->bin);
        return waits;
}

void xdev_txn_end(struct xdev_ctx *ctx, struct xdev_txn *t) {
        xdev_linger_finish(ctx, xdev_txn_close(ctx, t));
}

void xdev_linger_finish(struct xdev_ctx *ctx, struct xdev_sweep_wait *waits) {
        struct xdev_sweep_counts c = { 0 };
        uid_t uids[XDEV_LINGER_RECS_MAX];
        struct xdev_linger_rec me;
        size_t n = 0;
        struct xdev_txn t;
        bool changed = false;

        if (!waits)
                return;
        for (struct xdev_sweep_wait *w = waits; w && n < XDEV_LINGER_RECS_MAX; w = w->next)
                if (w->record)
                        uids[n++] = w->uid;
        xdev_sweep_wait_finish(waits, &c);
        if (c.terminated > 0)
                xdev_log(&ctx->log, LOG_NOTICE,
                         "lingering holders: %u terminated by the end of the grace period",
                         c.terminated);
        if (n == 0) /* a switch's: nothing recorded */
                return;
        if (xdev_linger_rec_self(0, 0, &me) < 0 || xdev_txn_begin(ctx, &t) < 0)
                return; /* the record stays: the next transaction finds its sweeper gone */
        for (size_t i = 0; i < n; i++) {
                ssize_t k = xdev_state_find_sweep(&t.state, uids[i]);
                /* not one another front-end took over meanwhile */
                if (k >= 0 && t.state.sweeps[k].pid == me.pid &&
                    t.state.sweeps[k].start == me.start) {
                        xdev_state_remove_sweep(&t.state, (size_t) k);
                        changed = true;
                }
        }
        if (changed && xdev_store_save(&t.store, &t.state) < 0)
                xdev_log(&ctx->log, LOG_WARNING,
                         "cannot save state after a sweep; the next transaction ends it");
        xdev_txn_end(ctx, &t);
}
