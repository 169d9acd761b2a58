/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The steps a login, a logout, gc and a follow step share inside their
 * transaction: dead sessions reaped, the grants planned and made (a
 * node passes from the old holder to the next in one write) and then the
 * one sweep of what was taken. */
#include "config.h"

#include <stdbool.h>
#include <syslog.h>

#include "handover.h"
#include "ledger.h"
#include "linger.h"
#include "rundir.h"
#include "tty.h"

void xdev_handover_rundir_release(struct xdev_ctx *ctx, const struct xdev_state *state, uid_t uid) {
        if (!xdev_state_uid_has_session(state, uid))
                (void) xdev_rundir_remove(XDEV_RUNDIR_BASE, uid, &ctx->log);
}

int xdev_handover_reap(struct xdev_ctx *ctx, struct xdev_txn *t) {
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
                xdev_handover_rundir_release(ctx, &t->state, uid);
                n++;
        }
        return n;
}

void xdev_handover_sweep_lost(struct xdev_ctx *ctx, struct xdev_txn *t) {
        if (t->swept_once)
                return;
        t->swept_once = true;
        /* over the scan budget: read after the lock, by the daemon's pass
         * or at the end of the transaction (xdev_others_txn_end) */
        t->linger.defer = &t->defer;
        (void) xdev_linger_after(&t->linger, &t->state, &ctx->config, &ctx->log, &t->swept, &t->bin,
                                 &t->waits);
        xdev_txn_phase_end(t, XDEV_PHASE_SWEEP);
}

int xdev_handover_settle(struct xdev_ctx *ctx, struct xdev_txn *t, bool all) {
        /* from one holder to another (a VT switch): the nodes the ledger
         * carries pass in the one commit below, the enumeration after */
        bool between = xdev_txn_passes_between(t);
        int r;

        xdev_ledger_plan(ctx, t);
        if (xdev_txn_holder_changed(t)) {
                xdev_log(&ctx->log, LOG_INFO, "shared devices pass to uid %u",
                         (unsigned) t->state.holder);
                if (!between)
                        (void) xdev_ledger_enumerate(ctx, t);
                /* called with the state lock held; must not take it or block */
                if (t->self && t->self->before_grant)
                        t->self->before_grant(t->self->data);
                t->handed_over = true;
        } else if (t->loaded_has_holder && !t->state.has_holder)
                xdev_log(&ctx->log, LOG_INFO, "shared devices taken from uid %u; nobody holds them",
                         (unsigned) t->loaded_holder);
        r = xdev_txn_commit(ctx, t, all);
        xdev_txn_phase_end(t, XDEV_PHASE_GRANT);
        if (r >= 0) /* the old holder's entries are off: her fds revoked */
                xdev_handover_sweep_lost(ctx, t);
        if (r >= 0 && between && t->defer_enumerate)
                t->enumerate_pending = true;
        else if (r >= 0 && between) {
                (void) xdev_ledger_enumerate(ctx, t);
                if (xdev_txn_any_dirty(t)) {
                        int more = xdev_txn_commit(ctx, t, false);
                        if (more > 0)
                                r += more;
                }
        }
        return r;
}
