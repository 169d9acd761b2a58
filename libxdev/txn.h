/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The transaction every operation of the core runs in (txn.c): lock, load,
 * commit, close. Every function here is called with the state lock held,
 * between xdev_txn_begin() and xdev_txn_close(). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "ctx.h"
#include "linger.h"
#include "node.h"
#include "state.h"
#include "sweep.h"

/* The phases of a follow step, each reported once, as it ends: LOAD, GRANT
 * (the one commit), SWEEP (doc/DESIGN.md §3.5.1). */
enum xdev_follow_phase {
        XDEV_PHASE_LOAD,  /* lock taken, state read, leaders checked, holder elected */
        XDEV_PHASE_GRANT, /* the grants planned, saved and converged: at a handover each
                           * node from the old holder to the new in one write */
        XDEV_PHASE_SWEEP, /* the old holder's processes searched for its fds, which were
                           * revoked */
};

/* The caller of the follow steps (xdevicesd, which makes the shared devices
 * follow the VT in front) identifies itself with PID and START. The calls
 * are optional (NULL: none), each given DATA: PHASE_END as each phase ends;
 * BEFORE_GRANT before the shared devices are granted to a new holder;
 * BEFORE_UNLOCK at the end, the state written and every other writer still
 * kept out. All three are called with the state lock held; must not take
 * it or block. Every other login, logout and hotplug waits for as long as
 * they run (the test knob --test-grant-delay sleeps there on purpose), and
 * a call back into the core would take the lock again. */
struct xdev_follow_self {
        pid_t pid;
        uint64_t start;
        void (*phase_end)(void *data, enum xdev_follow_phase phase);
        void (*before_grant)(void *data);
        void (*before_unlock)(void *data);
        void *data;
};

/* One transaction: the state loaded under its lock, and what the operation
 * running in it has done so far. */
struct xdev_txn {
        struct xdev_store store;
        struct xdev_state state;
        int active_vt;
        bool loaded_has_holder; /* the holder as loaded */
        uid_t loaded_holder;
        struct xdev_linger_set linger; /* shared grants as loaded, see linger_after */
        struct xdev_dircache dirs;
        bool defer_enumerate;                /* a handover leaves the enumeration to the caller */
        bool enumerate_pending;              /* ... and one was left */
        struct xdev_sweep_counts swept;      /* the sweeps of this transaction */
        const struct xdev_follow_self *self; /* a follow step's caller, or NULL */
        struct xdev_fd_bin bin;              /* closed at the end, once the lock is free */
        struct xdev_sweep_defer defer;       /* for the pass after the lock (the
                                              * processes over the scan budget,
                                              * the departed uid): a follow
                                              * step's for its caller, else run
                                              * by xdev_others_txn_end */
        bool others_after;                   /* xdev_others_txn_end runs the pass after
                                              * the lock (a logout took the devices) */
        struct xdev_sweep_wait *waits;       /* sweeps in their grace period: recorded in
                                          * the state, then finished after the lock */
        unsigned lost;    /* nodes granted by a state that was lost, found by their marks */
        bool handed_over; /* a new holder was granted */
        bool swept_once;  /* xdev_handover_sweep_lost() ran */
};

/* Opens a transaction: takes the lock and loads the state. With no state
 * file, the marks of a lost one are read into the ledger (T->lost), which
 * xdev_txn_begin() puts back and status only reports. */
int xdev_txn_open(struct xdev_ctx *ctx, struct xdev_txn *t);

/* Whether a node of T's ledger waits to be converged (dirty). */
bool xdev_txn_any_dirty(const struct xdev_txn *t);

/* Whether T's state names a holder other than the one loaded: the shared
 * devices pass to it. */
bool xdev_txn_holder_changed(const struct xdev_txn *t);

/* Whether they pass to it from another holder (a VT switch from one
 * session to another), not from nobody. */
bool xdev_txn_passes_between(const struct xdev_txn *t);

/* Tells a follow step's caller that PHASE ended. */
void xdev_txn_phase_end(struct xdev_txn *t, enum xdev_follow_phase phase);

/* Saves the plan, converges every dirty node (ALL: every node), then drops
 * restored entries. Returns the number of grants that failed (each already
 * put back), or -errno when the state could not be saved (nothing was
 * changed then). */
int xdev_txn_commit(struct xdev_ctx *ctx, struct xdev_txn *t, bool all);

/* Opens a transaction; what a lost state left granted is put back first,
 * before anything is decided, so that no grant of it is taken for an
 * original or stays out. */
int xdev_txn_begin(struct xdev_ctx *ctx, struct xdev_txn *t);

/* Closes the transaction and lets the lock go. Returns the sweeps left in
 * their grace period (recorded in the state), for the caller to finish
 * with xdev_linger_finish() once the lock is free, or NULL. */
struct xdev_sweep_wait *xdev_txn_close(struct xdev_ctx *ctx, struct xdev_txn *t);

/* Closes the transaction, then finishes its sweeps (see also
 * xdev_others_txn_end). */
void xdev_txn_end(struct xdev_ctx *ctx, struct xdev_txn *t);

/* Waits out the grace periods of WAITS (a logout's sweep, which the
 * transaction that started it recorded in the state), SIGKILLs the
 * processes still there, then removes the records. Takes no lock while it
 * waits. Frees WAITS. */
void xdev_linger_finish(struct xdev_ctx *ctx, struct xdev_sweep_wait *waits);
