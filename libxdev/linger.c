/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lingering unit: which shared nodes a uid lost in a transaction,
 * whose processes the sweeper (sweep.c) looks at for them, and with which
 * options, turned from the config in one place; and the records, in the
 * state, of the sweeps in their grace period (record, next check, adopt). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "devices.h"
#include "linger.h"
#include "node.h"
#include "procfs.h"

void xdev_linger_opts_from_config(struct xdev_sweep_opts *opts, const struct xdev_config *config) {
        opts->policy = config->lingering;
        opts->grace_ms = config->linger_grace_ms;
        opts->scan_budget = config->linger_scan_budget;
}

uid_t xdev_linger_system_uid_max(const struct xdev_config *config, const struct xdev_log *log,
                                 struct xdev_logindefs_memo *memo) {
        uid_t max;

        if (config->system_uid_max >= 0)
                return (uid_t) config->system_uid_max;
        (void) xdev_logindefs_load(XDEV_LOGIN_DEFS, log, memo, &max);
        return max;
}

void xdev_linger_set_free(struct xdev_linger_set *set) {
        free(set->items);
        free(set->grantee);
        *set = (struct xdev_linger_set) { 0 };
}

static void target_set(struct xdev_sweep_target *t, const struct xdev_node *n) {
        t->rdev = n->rdev;
        t->class = n->class;
        (void) snprintf(t->path, sizeof t->path, "%s", n->path);
}

int xdev_linger_note(struct xdev_linger_set *set, const struct xdev_state *state,
                     const struct xdev_procsrc *procs) {
        *set = (struct xdev_linger_set) { .procs = procs };
        if (state->n_nodes == 0)
                return 0;
        set->items = calloc(state->n_nodes, sizeof *set->items);
        set->grantee = calloc(state->n_nodes, sizeof *set->grantee);
        if (!set->items || !set->grantee) {
                xdev_linger_set_free(set);
                return -ENOMEM;
        }
        for (size_t i = 0; i < state->n_nodes && set->n < XDEV_SWEEP_TARGETS_MAX; i++) {
                const struct xdev_node *n = &state->nodes[i];
                if (n->class == XDEV_CLASS_VT || !n->granted)
                        continue;
                target_set(&set->items[set->n], n);
                set->grantee[set->n++] = n->grantee;
        }
        return 0;
}

int xdev_linger_after(struct xdev_linger_set *set, const struct xdev_state *state,
                      const struct xdev_config *config, const struct xdev_log *log,
                      struct xdev_sweep_counts *ret, struct xdev_fd_bin *bin,
                      struct xdev_sweep_wait **waits) {
        struct xdev_sweep_counts total = { 0 };
        size_t n = 0;
        int r = 0;

        for (size_t i = 0; i < set->n; i++) {
                ssize_t idx = xdev_state_find_node(state, set->items[i].path);
                if (idx >= 0 && state->nodes[idx].granted &&
                    state->nodes[idx].grantee == set->grantee[i] &&
                    state->nodes[idx].rdev == set->items[i].rdev)
                        continue;
                set->items[n] = set->items[i];
                set->grantee[n++] = set->grantee[i];
        }
        /* One sweep per uid that lost a grant (nearly always one), over the
         * nodes it lost, acting on that uid's processes alone. */
        while (n > 0 && r >= 0) {
                uid_t uid = set->grantee[0];
                struct xdev_sweep_opts opts = {
                        .has_keep = state->has_holder,
                        .keep_uid = state->holder,
                        .has_only = true,
                        .only_uid = uid,
                        .in_session = xdev_state_uid_has_session(state, uid),
                        .bin = bin,
                        .procs = set->procs,
                        .defer = set->defer,
                };
                struct xdev_sweep_counts c;
                size_t m = 0, rest = 0;

                xdev_linger_opts_from_config(&opts, config);
                if (set->defer && !set->defer->has_departed) {
                        set->defer->has_departed = true;
                        set->defer->departed = uid;
                }

                for (size_t i = 0; i < n; i++)
                        if (set->grantee[i] == uid) {
                                struct xdev_sweep_target tmp = set->items[i];
                                set->items[i] = set->items[m];
                                set->grantee[i] = set->grantee[m];
                                set->items[m] = tmp;
                                set->grantee[m++] = uid;
                        }
                struct xdev_sweep_wait *w = NULL;
                r = xdev_sweep_start(set->items, m, &opts, log, &c, waits ? &w : NULL);
                xdev_sweep_counts_add(&total, &c);
                if (w) { /* its grace period is waited out after the lock */
                        w->next = *waits;
                        *waits = w;
                }
                for (size_t i = m; i < n; i++) {
                        set->items[rest] = set->items[i];
                        set->grantee[rest++] = set->grantee[i];
                }
                n = rest;
        }
        xdev_linger_set_free(set);
        if (ret)
                xdev_sweep_counts_add(ret, &total);
        if (r < 0) {
                xdev_log(log, LOG_ERR, "cannot look for processes still holding the devices: %s",
                         strerror(-r));
                return r;
        }
        if (total.holders > 0 || total.deferred > 0)
                xdev_sweep_counts_log(log, LOG_NOTICE, "lingering holders", &total);
        return (int) total.holders;
}

/* A sweep still running past this long after its grace period ended is
 * taken for stuck: its SIGKILL waits and later passes take 3 s at most. */
#define SWEEP_STUCK_MS 5000

int xdev_linger_rec_self(uid_t uid, uint64_t until, struct xdev_linger_rec *ret) {
        struct xdev_proc_stat st;
        int r = xdev_proc_stat(getpid(), &st);

        if (r < 0)
                return r;
        *ret = (struct xdev_linger_rec) {
                .uid = uid, .pid = getpid(), .start = st.start, .until = until
        };
        return 0;
}

int xdev_linger_record(struct xdev_ctx *ctx, struct xdev_store *store, struct xdev_state *state,
                       struct xdev_sweep_wait *waits) {
        bool any = false;
        int r = 0;

        for (struct xdev_sweep_wait *w = waits; w && r == 0; w = w->next) {
                struct xdev_linger_rec rec;
                if (!w->record)
                        continue;
                any = true;
                r = xdev_linger_rec_self(w->uid, w->until, &rec);
                if (r == 0)
                        r = xdev_state_set_sweep(state, &rec);
        }
        if (r == 0 && any)
                r = xdev_store_save(store, state);
        if (r < 0)
                xdev_log(&ctx->log, LOG_WARNING,
                         "cannot record the sweep in its grace period (%s); waiting for it here",
                         strerror(-r));
        return r;
}

bool xdev_linger_rec_is_running(const struct xdev_linger_rec *rec) {
        return xdev_pid_is_alive(rec->pid, rec->start) &&
                (uint64_t) xdev_now_ms() < rec->until + SWEEP_STUCK_MS;
}

uint64_t xdev_linger_next_check(const struct xdev_state *state) {
        uint64_t now = (uint64_t) xdev_now_ms(), next = 0;

        for (size_t i = 0; i < state->n_sweeps; i++) {
                uint64_t until = state->sweeps[i].until;
                uint64_t at = now < until ? until : until + SWEEP_STUCK_MS + 1;
                if (next == 0 || at < next)
                        next = at;
        }
        return next;
}

static int targets_add(struct xdev_sweep_target **v, size_t *n, dev_t rdev, enum xdev_class class,
                       const char *path) {
        struct xdev_sweep_target *nv;

        for (size_t i = 0; i < *n; i++)
                if ((*v)[i].rdev == rdev)
                        return 0;
        if (*n >= XDEV_SWEEP_TARGETS_MAX)
                return -E2BIG;
        nv = realloc(*v, (*n + 1) * sizeof **v);
        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[*n].rdev = rdev;
        nv[*n].class = class;
        (void) snprintf(nv[*n].path, sizeof nv[*n].path, "%s", path);
        (*n)++;
        return 0;
}

int xdev_linger_shared_targets(const struct xdev_state *state, const struct xdev_config *config,
                               const struct xdev_log *log, struct xdev_sweep_target **ret,
                               size_t *ret_n) {
        struct xdev_device_list list = { 0 };
        struct xdev_sweep_target *v = NULL;
        size_t n = 0;
        int r = 0;

        for (size_t i = 0; i < state->n_nodes && r == 0; i++)
                if (state->nodes[i].class != XDEV_CLASS_VT)
                        r = targets_add(&v, &n, state->nodes[i].rdev, state->nodes[i].class,
                                        state->nodes[i].path);
        if (r == 0 && xdev_devices_enumerate(config, &list, log) >= 0) {
                struct xdev_dircache dirs = XDEV_DIRCACHE_INIT;
                for (size_t i = 0; i < list.n && r == 0; i++) {
                        struct stat st;
                        int fd;
                        if (xdev_node_open(&dirs, list.items[i].path, list.items[i].class, &fd,
                                           &st) < 0)
                                continue;
                        (void) close(fd);
                        r = targets_add(&v, &n, st.st_rdev, list.items[i].class,
                                        list.items[i].path);
                }
                xdev_dircache_done(&dirs);
        }
        xdev_device_list_free(&list);
        if (r < 0 && r != -E2BIG) {
                free(v);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int xdev_linger_sweep_shared(struct xdev_ctx *ctx, const struct xdev_sweep_opts *how,
                             bool unlock_first, struct xdev_sweep_counts *ret) {
        struct xdev_store store = { -1, -1 };
        struct xdev_state state = { 0 };
        struct xdev_sweep_opts opts = *how;
        struct xdev_sweep_target *targets = NULL;
        uid_t spare[1];
        size_t n = 0;
        unsigned line;
        int r;

        *ret = (struct xdev_sweep_counts) { 0 };
        r = xdev_store_open(&store, ctx->statedir);
        if (r < 0)
                return r;
        r = xdev_store_load(&store, &state, &line);
        if (r < 0)
                goto out;
        r = 0;
        if (opts.has_only && state.has_holder && state.holder == opts.only_uid) {
                r = 1;
                goto out;
        }
        opts.has_keep = state.has_holder;
        opts.keep_uid = state.holder;
        /* the user in user namespaces of whose her maps were to be read
         * holds the devices again: her processes are hers to keep */
        if (opts.has_ns_owner && state.has_holder && state.holder == opts.ns_owner)
                opts.has_ns_owner = false;
        /* the holder alone: a user in the background keeps nothing that
         * is not cut off already or his by right */
        spare[0] = state.holder;
        opts.spare = spare;
        opts.n_spare = state.has_holder ? 1 : 0;
        if (unlock_first)
                xdev_store_close(&store);
        /* the recorded nodes and the enumerable ones: after the last
         * logout nothing is recorded, and the file is still hers */
        r = xdev_linger_shared_targets(&state, &ctx->config, &ctx->log, &targets, &n);
        if (r < 0)
                goto out;
        r = xdev_sweep_run(targets, n, &opts, &ctx->log, ret);
out:
        free(targets);
        xdev_state_free(&state);
        xdev_store_close(&store);
        return r;
}

int xdev_linger_adopt(struct xdev_ctx *ctx, struct xdev_state *state, struct xdev_fd_bin *bin,
                      struct xdev_sweep_wait **waits) {
        int adopted = 0;

        for (size_t i = state->n_sweeps; i-- > 0;) {
                struct xdev_linger_rec rec = state->sweeps[i];
                struct xdev_sweep_target *targets = NULL;
                struct xdev_sweep_wait *w = NULL;
                struct xdev_sweep_counts c;
                size_t n = 0;

                if (xdev_linger_rec_is_running(&rec))
                        continue;
                xdev_state_remove_sweep(state, i);
                adopted++;
                if (xdev_state_uid_has_session(state, rec.uid)) {
                        xdev_log(&ctx->log, LOG_NOTICE,
                                 "uid %u has a session again; the sweep left by pid %d is dropped",
                                 (unsigned) rec.uid, (int) rec.pid);
                        continue;
                }
                xdev_log(&ctx->log, LOG_NOTICE,
                         "pid %d did not finish the sweep of uid %u's processes; finishing it",
                         (int) rec.pid, (unsigned) rec.uid);
                if (xdev_linger_shared_targets(state, &ctx->config, &ctx->log, &targets, &n) < 0)
                        continue;
                struct xdev_sweep_opts opts = {
                        .has_keep = state->has_holder,
                        .keep_uid = state->holder,
                        .has_only = true,
                        .only_uid = rec.uid,
                        .bin = bin,
                        .until_ms = rec.until > 0 ? rec.until : 1,
                };
                xdev_linger_opts_from_config(&opts, &ctx->config);
                (void) xdev_sweep_start(targets, n, &opts, &ctx->log, &c, &w);
                free(targets);
                if (w) {
                        w->next = *waits;
                        *waits = w;
                }
        }
        return adopted;
}
