/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The watch on the shared input nodes (doc/DESIGN.md §3.5.11),
 * xdevicesd's: the kernel reports each read and write of them
 * that moved data, and the process that made it. A process that may not
 * touch the node (not root's, not a system account's, not the holder's,
 * no right of its own to it) is looked at as the pass after the lock looks
 * at a process, and what it holds is cut off. One that holds nothing
 * that look can see (a ring with neither fd nor mapping, a file it
 * received after the sweep) is killed when the access came after the
 * last change of holder, or else (or when it keeps an input fd revoked
 * since, through which a read may be reported late) at its next access
 * after the look: stamps the watch writes into its own queue tell which
 * came after. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "ctx.h"

struct xdev_watch;

/* What a watch did, since it was opened. */
struct xdev_watch_counts {
        unsigned events;  /* reads and writes reported */
        unsigned checked; /* of processes that may not touch the node */
        unsigned cut;     /* looks that cut something off */
        unsigned killed;  /* processes holding nothing /proc shows, killed at an
                           * access after a change of holder or after their look */
        unsigned lost;    /* queue overflows (events lost) */
};

/* Opens a watch on the input nodes: 0, or -errno (EPERM without
 * CAP_SYS_ADMIN; EINVAL on a kernel older than 5.15, which cannot name
 * the process by a pidfd). With CONSOLE, on /dev/tty0 too: a test's, on a
 * host with no evdev. A real watch leaves tty0 alone: an fd of it is
 * bound to the VT that was in front when it was opened, and one of the
 * holder's VT is the holder's (doc/DESIGN.md §1). */
int xdev_watch_open(struct xdev_watch **ret, bool console);
void xdev_watch_free(struct xdev_watch *w);

/* The fd to poll for POLLIN, then call xdev_watch_read. */
int xdev_watch_fd(const struct xdev_watch *w);

/* Watches the shared input nodes (and the console) CTX's configuration
 * lists now (enumerated anew, each opened as every node is, no link
 * followed); a node no longer listed is let go. Returns how many are
 * watched, or -errno. */
int xdev_watch_nodes(struct xdev_watch *w, struct xdev_ctx *ctx);

/* Who holds the devices, as the caller last saw it (HAS false: nobody):
 * the processes of that uid touch the nodes freely. A process the watch
 * would act on is checked against the state itself first. */
void xdev_watch_holder(struct xdev_watch *w, bool has, uid_t uid);

/* Reads events and acts on them: a bounded share (16 reads of the
 * queue), so the caller polls again and finds the rest. */
void xdev_watch_read(struct xdev_watch *w, struct xdev_ctx *ctx);

/* What W did so far. */
struct xdev_watch_counts xdev_watch_counts(const struct xdev_watch *w);
