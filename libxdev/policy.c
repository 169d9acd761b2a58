/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lingering policy: which shared nodes a uid lost in a transaction,
 * whose processes the sweeper (sweep.c) looks at for them, and with which
 * options, turned from the config in one place. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "policy.h"

void xdev_linger_opts_from_config(struct xdev_linger_opts *opts, const struct xdev_config *config) {
        opts->policy = config->lingering;
        opts->grace_ms = config->linger_grace_ms;
        opts->scan_budget = config->linger_scan_budget;
}

void xdev_linger_set_free(struct xdev_linger_set *set) {
        free(set->items);
        free(set->grantee);
        *set = (struct xdev_linger_set) { 0 };
}

static void target_set(struct xdev_linger_target *t, const struct xdev_node *n) {
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
        for (size_t i = 0; i < state->n_nodes && set->n < XDEV_LINGER_TARGETS_MAX; i++) {
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
                      struct xdev_linger_counts *ret, struct xdev_fd_bin *bin,
                      struct xdev_linger_wait **waits) {
        struct xdev_linger_counts total = { 0 };
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
                struct xdev_linger_opts opts = {
                        .has_keep = state->has_holder,
                        .keep_uid = state->holder,
                        .has_only = true,
                        .only_uid = uid,
                        .in_session = xdev_state_uid_has_session(state, uid),
                        .bin = bin,
                        .procs = set->procs,
                        .defer = set->defer,
                };
                struct xdev_linger_counts c;
                size_t m = 0, rest = 0;

                xdev_linger_opts_from_config(&opts, config);

                for (size_t i = 0; i < n; i++)
                        if (set->grantee[i] == uid) {
                                struct xdev_linger_target tmp = set->items[i];
                                set->items[i] = set->items[m];
                                set->grantee[i] = set->grantee[m];
                                set->items[m] = tmp;
                                set->grantee[m++] = uid;
                        }
                struct xdev_linger_wait *w = NULL;
                r = xdev_linger_sweep_start(set->items, m, &opts, log, &c, waits ? &w : NULL);
                xdev_linger_counts_add(&total, &c);
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
                xdev_linger_counts_add(ret, &total);
        if (r < 0) {
                xdev_log(log, LOG_ERR, "cannot look for processes still holding the devices: %s",
                         strerror(-r));
                return r;
        }
        if (total.holders > 0)
                xdev_log(
                        log, LOG_NOTICE,
                        "lingering holders: %u found, %u fd(s) revoked, %u DRM master(s) dropped, %u terminated, %u left",
                        total.holders, total.revoked, total.demoted, total.terminated, total.left);
        return (int) total.holders;
}
