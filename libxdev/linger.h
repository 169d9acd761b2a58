/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lingering unit, between the state and the sweeper: the nodes a uid
 * lost in a transaction, the sweep of its processes for them, the one
 * place the config becomes the sweeper's options, and the records of the
 * sweeps in their grace period, which the state keeps. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "conf.h"
#include "ctx.h"
#include "logindefs.h"
#include "state.h"
#include "sweep.h"
#include "util.h"

/* Sets the policy, grace period and scan budget of OPTS from CONFIG
 * (lingering, linger_grace, linger_scan_budget); leaves the rest alone. */
void xdev_linger_opts_from_config(struct xdev_sweep_opts *opts, const struct xdev_config *config);

/* The highest uid of a system account, whose processes the pass after the
 * lock leaves alone: CONFIG's system_uid_max, or with "auto" the machine's
 * login.defs (xdev_logindefs_load of XDEV_LOGIN_DEFS: XDEV_SYSTEM_UID_MAX,
 * logged to LOG through MEMO, may be NULL, when it cannot be trusted or
 * read). */
uid_t xdev_linger_system_uid_max(const struct xdev_config *config, const struct xdev_log *log,
                                 struct xdev_logindefs_memo *memo);

/* A set of shared nodes noted before a change, to sweep for those whose
 * grant went away (or to another uid) after it. */
struct xdev_linger_set {
        struct xdev_sweep_target *items;
        uid_t *grantee;
        size_t n;
        const struct xdev_procsrc *procs; /* for the sweeps, or NULL */
        struct xdev_sweep_defer *defer;   /* a switch's processes over the scan
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
                      struct xdev_sweep_counts *ret, struct xdev_fd_bin *bin,
                      struct xdev_sweep_wait **waits);
void xdev_linger_set_free(struct xdev_linger_set *set);

/* The records of the sweeps in their grace period (state.h's
 * xdev_linger_rec), kept in the state so that a new session of their uid
 * waits and a sweeper that died is replaced. */

/* The record of a sweep of UID's processes by this process until UNTIL
 * (CLOCK_MONOTONIC ms), into *RET. Returns 0 or -errno (its /proc/self/stat
 * unreadable). */
int xdev_linger_rec_self(uid_t uid, uint64_t until, struct xdev_linger_rec *ret);

/* Writes into the state that this process sweeps each uid of WAITS
 * until their grace periods end, so that a new session of that uid waits
 * and a crash is finished by the next transaction. */
int xdev_linger_record(struct xdev_ctx *ctx, struct xdev_store *store, struct xdev_state *state,
                       struct xdev_sweep_wait *waits);

/* The sweeper of REC is still at it: alive, and not long past its end. */
bool xdev_linger_rec_is_running(const struct xdev_linger_rec *rec);

/* When a transaction must look at the sweeps of STATE again: at the end
 * of each grace period (its sweeper, if gone, is then replaced), and once
 * the sweeper may be taken for stuck. 0 when there are none. */
uint64_t xdev_linger_next_check(const struct xdev_state *state);

/* Every recorded or enumerable shared node, for a sweep that does not know
 * which nodes its uid had: revoke, status, a sweep taken over. */
int xdev_linger_shared_targets(const struct xdev_state *state, const struct xdev_config *config,
                               const struct xdev_log *log, struct xdev_sweep_target **ret,
                               size_t *ret_n);

/* Sweeps every recorded or enumerable shared node
 * (xdev_linger_shared_targets) as HOW asks, against the state of CTX read
 * under its lock: the processes of that state's holder are kept (HOW's
 * has_keep and keep_uid are set from it) and, in the pass after the lock
 * (HOW->others), spared (spare, n_spare). With UNLOCK_FIRST the lock is let
 * go once the state is read (a sweep that only reads and reports), else
 * held to the end. Returns what xdev_sweep_run() returns (counts in *RET,
 * zeroed first), 1 when HOW asks for one uid (has_only) that holds the
 * devices in that state (nothing swept), or -errno when the state cannot
 * be read. */
int xdev_linger_sweep_shared(struct xdev_ctx *ctx, const struct xdev_sweep_opts *how,
                             bool unlock_first, struct xdev_sweep_counts *ret);

/* Sweeps whose sweeper died (a login killed in its grace period) or is
 * stuck: this transaction takes them over, with the deadline they had. A
 * uid that has a session again is not swept. Returns the number of records
 * taken off (the caller saves). */
int xdev_linger_adopt(struct xdev_ctx *ctx, struct xdev_state *state, struct xdev_fd_bin *bin,
                      struct xdev_sweep_wait **waits);
