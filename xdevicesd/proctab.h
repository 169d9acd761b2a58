/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevicesd's table of processes by uid, kept from the kernel's process
 * events (the proc connector, cn_proc), so that the sweep at a VT switch
 * reads the departing user's processes only, not every process on the
 * machine (doc/DESIGN.md §3.5.3). Subscribed first, then seeded with one
 * /proc scan; a lost event (ENOBUFS) reseeds it. Not thread-safe: the
 * daemon's main thread alone uses it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sweep.h"
#include "util.h"

struct xdev_proctab;

struct xdev_proctab_stats {
        size_t procs;        /* user processes in the table (kernel threads not counted) */
        bool fsuid_events;   /* setfsuid() sends an event on this kernel */
        bool filtered;       /* only the events used come (the filter of Linux 6.6) */
        uint64_t events;     /* events read */
        uint64_t unused;     /* of them, of a kind the table does not use */
        unsigned reseeds;    /* full /proc scans after a lost event */
        unsigned overflow;   /* ENOBUFS seen */
        uint64_t fork_reads; /* forks whose child was read, not copied from its parent */
};

/* Subscribes to the process events, checks that they arrive (a fork of a
 * child that exits at once must be seen: in a pid or user namespace other
 * than the initial ones the kernel sends nothing), then seeds the table.
 * RCVBUF: the socket's receive buffer in bytes, 0 for the default (4 MiB).
 * Returns 0, or -errno (-EPERM without CAP_NET_ADMIN, -EOPNOTSUPP when no
 * event came: the caller falls back to the full /proc sweep). */
int xdev_proctab_open(struct xdev_proctab **ret, size_t rcvbuf, const struct xdev_log *log);
void xdev_proctab_free(struct xdev_proctab *t);

/* The socket to poll for POLLIN; then call xdev_proctab_drain(). */
int xdev_proctab_fd(const struct xdev_proctab *t);

/* Reads every pending event (never blocks). A lost event reseeds the
 * table from /proc. Returns the number of events read or -errno. */
int xdev_proctab_drain(struct xdev_proctab *t);

/* After a drain: the pids (thread-group leaders) one of whose real,
 * effective, saved or fs uids was UID when last read, plus, on a kernel
 * whose setfsuid() sends no event, every process that may take any fsuid
 * (CAP_SETUID permitted). Kernel threads are never listed. *RET is
 * malloc'd (free it). Returns 0 or -errno. */
int xdev_proctab_pids(struct xdev_proctab *t, uid_t uid, pid_t **ret, size_t *n);

void xdev_proctab_stats(const struct xdev_proctab *t, struct xdev_proctab_stats *ret);

/* The sweep's process source (sweep.h) backed by table T. */
void xdev_proctab_source(struct xdev_proctab *t, struct xdev_procsrc *ret);
