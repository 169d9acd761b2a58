/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc sweeper: processes that still hold an fd to a shared node after
 * the grant was taken back, found and acted on as the options say. It knows
 * neither the state nor the config (linger.h turns them into options). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "conf.h"
#include "logindefs.h"
#include "util.h"

#define XDEV_SWEEP_TARGETS_MAX 1024
/* Processes terminated with a grace period in one sweep; any beyond are
 * killed at once, so a fork storm costs no fds and no time. */
#define XDEV_SWEEP_GRACEFUL_MAX 128
#define XDEV_SWEEP_GRACE_MAX_MS 30000
/* What one process may cost a sweep when the options give no budget
 * (linger_scan_budget in xdevices.conf): fd table entries read (its own and
 * those of threads with a table of their own), threads compared and io_uring
 * registered files listed. Past it the process is not read further but
 * treated as holding what cannot be revoked (doc/DESIGN.md §3.5.5). */
#define XDEV_SWEEP_SCAN_BUDGET 8192
/* The most linger_scan_budget may be, and the budget of the pass after the
 * lock, which reads every process to the end. */
#define XDEV_SWEEP_SCAN_BUDGET_MAX 1048576

/* A node whose grant was taken: found by rdev, checked by the class major. */
struct xdev_sweep_target {
        dev_t rdev;
        enum xdev_class class;
        char path[64]; /* for messages only */
};

/* A holder found by a report-only sweep, for xdevices status. */
struct xdev_sweep_entry {
        pid_t pid;
        char comm[17]; /* printable ASCII only */
        uid_t uid;
        char path[64];
        int fd; /* -1: held in the own fd table of THREAD */
        pid_t thread;
        bool revoked; /* an input fd already revoked */
        bool uring;   /* an io_uring registered file (FD is the ring) */
};

struct xdev_sweep_report {
        struct xdev_sweep_entry *items;
        size_t n;
};

void xdev_sweep_report_free(struct xdev_sweep_report *r);

/* Copies of revoked fds whose close is left until after the step. When the
 * holder exits at the revoke (its read fails), the copy is the last
 * reference, and the last close of an evdev file waits for an RCU grace
 * period (evdev_release), tens of ms on an idle machine: the next holder's
 * grant should not wait for that. A full bin closes at once. */
#define XDEV_FD_BIN_MAX 64
struct xdev_fd_bin {
        int fds[XDEV_FD_BIN_MAX];
        size_t n;
};
void xdev_fd_bin_add(struct xdev_fd_bin *bin, int fd);
void xdev_fd_bin_empty(struct xdev_fd_bin *bin);

/* Where a sweep of one uid finds the processes to read: PIDS_OF fills *RET
 * (malloc'd) with every process one of whose uids may be UID (xdevicesd's
 * table, proctab.h). Each is then read and treated exactly as the walk of
 * /proc would treat it. -errno from PIDS_OF: the sweep walks /proc. */
struct xdev_procsrc {
        int (*pids_of)(void *data, uid_t uid, pid_t **ret, size_t *n);
        void *data;
};

/* Processes of a sweep (a VT switch's, a logout's) that went over the scan
 * budget under the lock: what was seen of them is cut off, and instead of
 * being killed they are read to the end after the lock (xdev_sweep_others),
 * and cut off or killed only if they hold a node. Past XDEV_SWEEP_DEFER_MAX
 * the list says ALL instead: every process of UID is read after the lock.
 * Without a caller that reads them, they are killed. */
#define XDEV_SWEEP_DEFER_MAX 256
/* With such a caller, a sweep reads at most this many entries
 * (fd table entries, threads, io_uring files) under the lock in all; the
 * processes past it are left to the pass after the lock, so the lock is
 * held for a bounded time whatever the departing user's fd count. */
#define XDEV_SWEEP_LOCKED_BUDGET 2048
struct xdev_sweep_defer {
        /* a uid that lost the shared devices in the step (the first one):
         * the pass after the lock reads the maps of the processes in user
         * namespaces it made, as the sweep reads its own processes' */
        bool has_departed;
        uid_t departed;
        uid_t uid;  /* the sweep's ONLY_UID */
        bool ended; /* UID had no session left (a logout): a holder found is
                     * ended as at a logout, without a grace period */
        bool all;   /* more went over than the list holds: every process of
                     * UID is read to the end after the lock */
        size_t n;
        pid_t pids[XDEV_SWEEP_DEFER_MAX];
        unsigned cost[XDEV_SWEEP_DEFER_MAX]; /* entries read under the lock */
};

/* Whether D carries anything for the pass after the lock. */
static inline bool xdev_sweep_defer_any(const struct xdev_sweep_defer *d) {
        return d->n > 0 || d->all || d->has_departed;
}

struct xdev_sweep_opts {
        enum xdev_linger policy;
        unsigned grace_ms; /* SIGTERM .. SIGKILL */
        bool report_only;  /* list holders in REPORT, change nothing */
        struct xdev_sweep_report *report;
        bool has_keep; /* processes of KEEP_UID hold legitimately */
        uid_t keep_uid;
        bool has_only; /* act on processes one of whose real, effective,
                                 * saved or fs uids is ONLY_UID, and on no other */
        uid_t only_uid;
        bool in_session;                  /* ONLY_UID still has a session (a VT switch,
                                 * not a logout): revoke input, drop DRM master,
                                 * but leave the rest of its X server alone */
        struct xdev_fd_bin *bin;          /* NULL: each copy is closed at once */
        unsigned scan_budget;             /* per process; 0: XDEV_SWEEP_SCAN_BUDGET */
        uint64_t until_ms;                /* 0: the grace period starts now; else when
                                  * it ends (CLOCK_MONOTONIC ms), for a sweep
                                  * taken over from one who died */
        const struct xdev_procsrc *procs; /* with HAS_ONLY: the candidates of
                                           * ONLY_UID; with OTHERS: the
                                           * candidates (any uid); NULL:
                                           * every process */
        /* The pass after the lock (doc/DESIGN.md §3.5.10), without
         * HAS_ONLY: processes none of whose uids is in SPARE (the
         * holder's) and one of whose real, effective and saved uids is
         * above SYSTEM_UID_MAX (the machine's system accounts,
         * xdev_linger_system_uid_max) and not nobody, for the fds they
         * hold that are not cut off already (revoked, not DRM master) of
         * nodes they could not open with their own rights. */
        bool others;
        const uid_t *spare;
        size_t n_spare;
        uid_t system_uid_max;
        struct xdev_sweep_defer *defer; /* with HAS_ONLY; NULL: over the
                                          * budget is killed */
        /* A holder ended is sent SIGKILL at once, with no grace period (one
         * read to the end after a logout). */
        bool kill_now;
        /* With OTHERS: a process in a user namespace NS_OWNER made (or in
         * one under such a namespace), which left NS_OWNER's uid for a
         * subordinate one, has its maps read as NS_OWNER's own processes
         * have: a ring with no fd left makes it unreachable. */
        bool has_ns_owner;
        uid_t ns_owner;
        /* With OTHERS: every process's maps are read (the watch's look at
         * one process that touched a node it may not). */
        bool all_maps;
        /* With HAS_ONLY, each process's maps are read too, and one that maps
         * an io_uring no fd of it names (doc/DESIGN.md §3.5.4) is taken for
         * unreachable. FD_RINGS_ONLY: not read (a look at the holder's own
         * processes, which acts on nothing). */
        bool fd_rings_only;
};

struct xdev_sweep_counts {
        unsigned holders;    /* processes found holding a target */
        unsigned revoked;    /* input fds revoked (EVIOCREVOKE) */
        unsigned demoted;    /* DRM masters dropped */
        unsigned terminated; /* processes gone after SIGTERM/SIGKILL */
        unsigned left;       /* holders left running: cut off, or only logged
                              * (warn, render, tty0) */
        unsigned deferred;   /* processes over the scan budget, or unread,
                              * left to the pass after the lock to read */
        unsigned spent;      /* of those left, ones whose every hold was
                              * spent: O_PATH fds, input fds revoked before
                              * (the watch's look: no hold that could have
                              * moved data, doc/DESIGN.md §3.5.11) */
        unsigned stale;      /* processes with an input fd revoked before
                              * and no other hold: of those spent, and in
                              * a look without the lock after it (others),
                              * ones it passed over for that */
        unsigned failed;     /* actions that failed */
        unsigned examined;   /* processes looked at (whose uids were read) */
};

/* Finds every process (not root, not KEEP_UID; with HAS_ONLY, of ONLY_UID
 * alone) with an fd, or an io_uring registered file, whose target is a
 * character device of one of TARGETS (rdev and class major) and applies
 * OPTS->policy to it; with XDEV_LINGER_KILL_USER at a logout, every process
 * of ONLY_UID ends. Remove the grants first: a revoked process may reopen
 * a node it still has access to. Bounded by OPTS->grace_ms plus one second.
 * Returns 0 (counts in *RET) or -errno when /proc cannot be read. */
int xdev_sweep_run(const struct xdev_sweep_target *targets, size_t n,
                   const struct xdev_sweep_opts *opts, const struct xdev_log *log,
                   struct xdev_sweep_counts *ret);

/* The half of a sweep that waits: holders of ONLY_UID sent SIGTERM (and
 * already cut off), to SIGKILL when their grace period ends, and the
 * passes after for what they forked. It needs no lock: the next holder can
 * be granted meanwhile (doc/DESIGN.md §3.5.7). A list, one per uid. */
struct xdev_sweep;
struct xdev_sweep_wait {
        struct xdev_sweep_wait *next;
        uid_t uid;      /* whose processes */
        uint64_t until; /* CLOCK_MONOTONIC ms: the end of the grace period */
        bool record;    /* a logout's, recorded in the state; a switch's
                         * victims were sent SIGKILL already and no pass
                         * follows: nothing to take over */
        struct xdev_sweep *sweep;
};

/* xdev_sweep_run's first pass (at a VT switch, OPTS->in_session, all its
 * passes: they do not wait). With RET_WAIT not NULL and OPTS->has_only, the
 * wait for the victims to end is not waited: the rest of the sweep comes
 * back in *RET_WAIT (NULL when there is none), for xdev_sweep_wait_finish(). */
int xdev_sweep_start(const struct xdev_sweep_target *targets, size_t n,
                     const struct xdev_sweep_opts *opts, const struct xdev_log *log,
                     struct xdev_sweep_counts *ret, struct xdev_sweep_wait **ret_wait);
/* Waits out each grace period of the list W, SIGKILLs the holders still
 * there and runs the later passes; adds the counts to *RET (may be NULL)
 * and frees W. */
void xdev_sweep_wait_finish(struct xdev_sweep_wait *w, struct xdev_sweep_counts *ret);

/* Adds the counts C to TO. */
void xdev_sweep_counts_add(struct xdev_sweep_counts *to, const struct xdev_sweep_counts *c);

/* Logs C at PRIORITY as "WHAT: N found, ... M left", and how many
 * processes were left to the pass after the lock, when any. */
void xdev_sweep_counts_log(const struct xdev_log *log, int priority, const char *what,
                           const struct xdev_sweep_counts *c);

/* True when a sweep may pass over kernel threads without reading their
 * status: /proc is that of our pid namespace, pid 2 is kthreadd and its fd
 * table, which every kernel thread shares, is empty (not so in a pid
 * namespace of its own). */
bool xdev_sweep_kernel_table_usable(void);

/* Whether a process of the uids UID (real, effective, saved, fs) is
 * passed over by the pass after the lock and by xdevicesd's watch:
 * root's (real, effective and saved uid 0; a borrowed fsuid does not
 * count), a system account's (all three up to SYSTEM_UID_MAX, or
 * nobody), or one of the N_SPARE uids SPARE's (any of its four). */
bool xdev_sweep_uids_free(const uid_t uid[4], uid_t system_uid_max, const uid_t *spare,
                          size_t n_spare);
