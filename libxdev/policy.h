/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lingering policy between the state and the sweeper: the nodes a uid
 * lost in a transaction, the sweep of its processes for them, and the one
 * place the config becomes the sweeper's options. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "conf.h"
#include "state.h"
#include "sweep.h"
#include "util.h"

/* Sets the policy, grace period and scan budget of OPTS from CONFIG
 * (lingering, linger_grace, linger_scan_budget); leaves the rest alone. */
void xdev_linger_opts_from_config(struct xdev_linger_opts *opts, const struct xdev_config *config);

/* A set of shared nodes noted before a change, to sweep for those whose
 * grant went away (or to another uid) after it. */
struct xdev_linger_set {
        struct xdev_linger_target *items;
        uid_t *grantee;
        size_t n;
        const struct xdev_procsrc *procs; /* for the sweeps, or NULL */
        struct xdev_linger_defer *defer;  /* a switch's processes over the scan
                                           * budget, for the caller to read
                                           * after the lock; NULL: killed */
};

/* Notes every granted shared node of STATE; the sweeps of
 * xdev_linger_after() find their processes through PROCS (may be NULL). */
int xdev_linger_note(struct xdev_linger_set *set, const struct xdev_state *state,
                     const struct xdev_procsrc *procs);
/* Sweeps the noted nodes that STATE no longer grants to the same uid, with
 * the policy of CONFIG, acting only on processes of each uid that lost a
 * grant (never the holder of STATE). Frees SET. Adds to *RET, when not
 * NULL, the counts of every sweep made; leaves copies of revoked fds in
 * BIN when not NULL. With WAITS not NULL, grace periods are not waited for:
 * what is left of each sweep is added to the list *WAITS. */
int xdev_linger_after(struct xdev_linger_set *set, const struct xdev_state *state,
                      const struct xdev_config *config, const struct xdev_log *log,
                      struct xdev_linger_counts *ret, struct xdev_fd_bin *bin,
                      struct xdev_linger_wait **waits);
void xdev_linger_set_free(struct xdev_linger_set *set);
