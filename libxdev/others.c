/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pass after the lock (doc/DESIGN.md §3.5.10): the processes of users
 * other than the holder, read without the state lock, and those found
 * holding a shared node read again and cut off under it. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "linger.h"
#include "others.h"
#include "sweep.h"

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

/* One half of the pass after the lock: LOOK (report-only, the candidates
 * in LOOK->procs or every process) read without the lock, then what it
 * found read again and acted on under the lock, as at a VT switch; with
 * ENDED, as at a logout (the user has no session left), but with no grace
 * period. */
static int others_look_then_act(struct xdev_ctx *ctx, const struct xdev_sweep_opts *how, bool ended,
                                struct xdev_sweep_counts *ret) {
        struct xdev_sweep_report rep = { 0 };
        struct xdev_sweep_opts look = *how;
        struct xdev_sweep_counts c;
        struct pid_list cand = { 0 };
        int r;

        look.report_only = true;
        look.report = &rep;
        look.scan_budget = XDEV_SWEEP_SCAN_BUDGET_MAX;
        /* read and reported after the lock is let go; a sweep of one uid
         * (HAS_ONLY) that holds the devices again by then does nothing */
        r = xdev_linger_sweep_shared(ctx, &look, true, &c);
        ret->examined += c.examined;
        ret->stale += c.stale;
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
        if (ended) {
                /* a DRM primary node's fd goes with its process, master or
                 * not (it could take master back when none is held), and
                 * "kill" ends every holder */
                act.in_session = false;
                act.kill_now = true;
                if (ctx->config.lingering == XDEV_LINGER_KILL)
                        act.policy = XDEV_LINGER_KILL;
        }
        act.procs = &src;
        act.grace_ms = ctx->config.linger_grace_ms;
        /* acted on under the lock, against the state of that moment */
        r = xdev_linger_sweep_shared(ctx, &act, false, &c);
        c.examined = 0;
        c.stale = 0; /* the look's */
        xdev_sweep_counts_add(ret, &c);
        free(cand.pids);
        return r < 0 ? r : 0;
}

int xdev_sweep_others(struct xdev_ctx *ctx, const struct xdev_sweep_defer *defer,
                      struct xdev_sweep_counts *ret) {
        struct xdev_sweep_opts look = { .others = true };
        int r = 0;

        *ret = (struct xdev_sweep_counts) { 0 };
        /* the machine's system accounts, read once for both halves */
        look.system_uid_max =
                xdev_linger_system_uid_max(&ctx->config, &ctx->log, ctx->logindefs_memo);
        /* the maps of processes in user namespaces the departing user made
         * (a subordinate uid's): a ring of hers with no fd left */
        if (defer && defer->has_departed) {
                look.has_ns_owner = true;
                look.ns_owner = defer->departed;
        }
        if (defer && defer->n > 0 && !defer->all) {
                /* a switch's or a logout's processes over the scan budget:
                 * each read to the end, then cut off at once if it holds,
                 * the least read under the lock first, so that a big
                 * process does not keep a small one waiting */
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
                        r = others_look_then_act(ctx, &mine, defer->ended, ret);
                }
        }
        if (r >= 0 && defer && defer->all) {
                /* more than the list held: every process of the uid, each
                 * read to the end (a walk of /proc: this is after the
                 * lock), those of the list among them */
                struct xdev_sweep_opts mine = { .has_only = true, .only_uid = defer->uid };
                r = others_look_then_act(ctx, &mine, defer->ended, ret);
        }
        if (r >= 0)
                r = others_look_then_act(ctx, &look, false, ret);
        if (r >= 0 && ret->holders > 0)
                xdev_log(
                        &ctx->log, LOG_NOTICE,
                        "after the lock: %u holder(s) found, %u fd(s) revoked, %u DRM master(s) dropped, %u terminated",
                        ret->holders, ret->revoked, ret->demoted, ret->terminated);
        return r;
}

int xdev_others_cut_off(struct xdev_ctx *ctx, pid_t pid, struct xdev_sweep_counts *ret) {
        struct pid_list l = { &pid, 1 };
        struct xdev_procsrc src = { .pids_of = pid_list_of, .data = &l };
        /* it touched a node: a ring of its with no fd left is taken for
         * a hold, where a pass over everyone would spare it */
        struct xdev_sweep_opts look = { .others = true, .procs = &src, .all_maps = true };

        *ret = (struct xdev_sweep_counts) { 0 };
        look.system_uid_max =
                xdev_linger_system_uid_max(&ctx->config, &ctx->log, ctx->logindefs_memo);
        return others_look_then_act(ctx, &look, false, ret);
}

void xdev_others_txn_end(struct xdev_ctx *ctx, struct xdev_txn *t) {
        bool others = !t->self && (t->others_after || xdev_sweep_defer_any(&t->defer));
        struct xdev_sweep_counts c;
        int r;

        xdev_txn_end(ctx, t);
        if (!others)
                return;
        /* A process the sweep left over the scan budget is read to the end
         * now, and one that left the uid, or was passed the file, is found
         * (doc/DESIGN.md §3.5.10). After the grace periods: this pass would
         * SIGKILL a holder in its grace period at once. */
        r = xdev_sweep_others(ctx, &t->defer, &c);
        if (r < 0)
                xdev_log(&ctx->log, LOG_ERR, "cannot look for holders outside every session: %s",
                         strerror(-r));
}
