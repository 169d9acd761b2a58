/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one way to touch a device node: open without following links, check,
 * then act on that fd only. */
#pragma once

#include <sys/stat.h>

#include "conf.h"
#include "state.h"

/* The directory the last node was opened in, kept open between the nodes
 * of one transaction so that /dev/input is walked once, not once per node.
 * Start with XDEV_DIRCACHE_INIT; xdev_dircache_done() closes it. Every
 * function below takes NULL for "no cache". */
struct xdev_node_io {
        unsigned acl_reads;   /* access ACLs read (acl_get_file) */
        unsigned acl_writes;  /* access ACLs written (acl_set_file) */
        unsigned mark_writes; /* marks set or removed */
};
struct xdev_dircache {
        int fd;
        char path[256];
        struct xdev_node_io io; /* what the functions below did through it */
};
#define XDEV_DIRCACHE_INIT \
        { .fd = -1 }
void xdev_dircache_done(struct xdev_dircache *c);

/* Opens PATH as O_PATH, walking each component with O_NOFOLLOW, and checks
 * that it is a character device with a single link and the major of CLASS
 * (VT minors 1..63, console 4:0). CACHE keeps the node's directory open
 * for the next call; NULL opens and closes it each time. Returns 0 with
 * *RET_FD and *RET_ST, -ENOENT,
 * -ENOTTY for a node that is not what CLASS says (a symlink, a regular file,
 * wrong major...), or another -errno. */
int xdev_node_open(struct xdev_dircache *cache, const char *path, enum xdev_class class,
                   int *ret_fd, struct stat *ret_st);

/* Records the identity and original owner/group/mode/ACL of the node behind
 * FD into N (which must have path and class set; N->acl gets a new string). */
int xdev_node_snapshot(int fd, const struct stat *st, struct xdev_node *n);

/* Brings the node N describes to what N says it should be now: the
 * original plus the grant when N->granted, else exactly the original.
 * Reopens N->path and acts only when fs, inode and rdev match the record.
 * A grant first leaves its mark on the node (the original and the
 * grantee); a restore that succeeds takes it off. A file system that
 * keeps no trusted attributes gets the grant unmarked.
 * Returns 0, -ENOENT (gone), -ESTALE (a different node is there now; left
 * alone), or -errno from the change (the node is then put back to its
 * original as far as possible). */
int xdev_node_converge(struct xdev_dircache *cache, const struct xdev_node *n, unsigned flags);

/* Flags of xdev_node_converge(). CHANGES: the ledger says the node changes
 * (a grant given or taken off), so what it should be is written from the
 * ledger without reading the node's ACL first; a VT's grant still reads
 * it (doc/DESIGN.md §3.6). At a handover that is one write: the old
 * grantee's entry is not in what is written. */
enum {
        XDEV_CONVERGE_CHANGES = 1 << 0,
};

/* Reads the mark a grant leaves on its node (XDEV_MARK_XATTR,
 * doc/DESIGN.md §3.6) through FD, as xdev_node_open() gave it with ST.
 * Returns 0 with *RET; -ENODATA when the node has none (or its file system
 * keeps no trusted attributes); -EBADMSG when the mark is malformed or was
 * made for another device than ST's; or another -errno. */
int xdev_node_mark_read(int fd, const struct stat *st, struct xdev_mark *ret);
