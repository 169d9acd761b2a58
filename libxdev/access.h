/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether a process could open a node with its own rights: the kernel's
 * check of owner, group, other and the POSIX access ACL, for credentials
 * read from /proc (doc/DESIGN.md §3.5.10). */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "procfs.h"

/* The bits asked for, as in a mode's triplets. */
enum {
        XDEV_MAY_READ = 4,
        XDEV_MAY_WRITE = 2,
};

/* One entry of an access ACL, its tag as libacl names it (ACL_USER_OBJ,
 * ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, ACL_OTHER), its qualifier
 * (for ACL_USER and ACL_GROUP) and its rwx bits. */
struct xdev_acl_entry {
        int tag;
        unsigned id;
        unsigned perm;
};

/* Whether C may open a file with WANT (XDEV_MAY_* bits) given the N
 * entries of its access ACL, or, with N 0, its MODE alone, as the kernel
 * decides it without capabilities: the owner's entry for its owner
 * (OWNER), else a named user's entry, else the group class (the owning
 * group, GROUP, and the named groups: any entry of a group of C's that
 * grants WANT, each limited by the mask), else other. A group C may be in
 * beyond what C lists (!C->complete) counts as no group. */
bool xdev_creds_may(const struct xdev_creds *c, uid_t owner, gid_t group, mode_t mode,
                    const struct xdev_acl_entry *acl, size_t n, unsigned want);

/* The same for the file FD is open on (a device node's fd, or an O_PATH
 * one: its ACL is then read through its /proc/self/fd link):
 * its owner, group and mode from ST (fstat of FD) and its access ACL read
 * through FD. False when the ACL cannot be read. */
bool xdev_creds_may_fd(const struct xdev_creds *c, int fd, const struct stat *st, unsigned want);
