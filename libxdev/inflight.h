/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Files in flight (doc/DESIGN.md §3.5.12): an open file sent over a unix
 * socket (SCM_RIGHTS) and not received yet is in no fd table, only in the
 * receiving socket's queue. A peek at the queue (recvmsg(MSG_PEEK), which
 * installs copies of the queued files and takes nothing) finds the shared
 * nodes among them, and cuts them off through the copies: a copy is the
 * same open file as the one the receiver will get. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The files a unix socket's queue holds, as its fdinfo counts them
 * ("scm_fds:", Linux 5.4 and later; a listening socket sums the
 * connections not accepted yet), from the fdinfo text open as FD. Returns
 * the count, 0 when the line is missing (not a unix socket, an older
 * kernel), or -errno. */
int xdev_inflight_count(int fd);
/* The same, from the fdinfo TEXT (ended by a NUL): the first line that
 * starts "scm_fds:". -EIO when its number is malformed or over 2^31. */
int xdev_inflight_count_parse(const char *text);

/* A node looked for in a queue, and how it is cut off: an input node's
 * file is revoked (EVIOCREVOKE), a DRM primary node's loses master; any
 * other (the console, a render node) cannot be. */
enum xdev_inflight_kind {
        XDEV_INFLIGHT_INPUT,
        XDEV_INFLIGHT_DRM_PRIMARY,
        XDEV_INFLIGHT_OTHER,
};

struct xdev_inflight_node {
        dev_t rdev; /* a character device's */
        enum xdev_inflight_kind kind;
};

/* A queued file of one of the nodes. */
enum xdev_inflight_state {
        XDEV_INFLIGHT_LIVE,    /* usable (a DRM file not master, at a cut) */
        XDEV_INFLIGHT_REVOKED, /* an input file revoked before */
        XDEV_INFLIGHT_CUT,     /* revoked, or its master dropped, by this peek */
        XDEV_INFLIGHT_FAILED,  /* the cut failed */
};

#define XDEV_INFLIGHT_FOUND_MAX 16
struct xdev_inflight {
        size_t n; /* FOUND's; past XDEV_INFLIGHT_FOUND_MAX, UNKNOWN */
        struct {
                size_t node; /* into the caller's NODES */
                enum xdev_inflight_state state;
        } found[XDEV_INFLIGHT_FOUND_MAX];
        /* Part of the queue was not read (WHY says what): a listening
         * socket's connections not accepted yet, a peek that did not come
         * back in time (the socket's I/O lock is held), a truncated list
         * of files, more messages or sockets in flight than one peek reads.
         * What is there is unknown, not empty. */
        bool unknown;
        bool listening; /* WHY: a listening socket's */
        const char *why;
        unsigned messages; /* messages peeked, in all the sockets read */
        unsigned sockets;  /* the socket and those in flight in it */
};

/* Peeks at the whole queue of the unix socket SOCK (a copy: the queue is
 * its owner's, and is left as it was, its peek offset put back), and at
 * the queues of the sockets in flight in it, for files of the N NODES;
 * with CUT, cuts each off. The peek runs in a process of its own that
 * shares no fd table with the caller's: closing a peeked file runs its
 * flush (a FUSE file's server may never answer), and the peek waits for
 * the socket's I/O lock, which its owner's receive holds for as long as
 * she makes her own copy wait. Past TIMEOUT_MS the peek is given up
 * (RET->unknown). Returns 0 (*RET filled), or -errno when no peek could
 * be made. */
int xdev_inflight_peek(int sock, const struct xdev_inflight_node *nodes, size_t n, bool cut,
                       unsigned timeout_ms, struct xdev_inflight *ret);
