/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether credentials may open a node (access.h). */
#include "config.h"

#include <acl/libacl.h>
#include <errno.h>
#include <stdio.h>
#include <sys/acl.h>

#include "access.h"

static bool in_group(const struct xdev_creds *c, gid_t g) {
        if (c->fsgid == g)
                return true;
        for (size_t i = 0; i < c->n_groups; i++)
                if (c->groups[i] == g)
                        return true;
        return false;
}

bool xdev_creds_may(const struct xdev_creds *c, uid_t owner, gid_t group, mode_t mode,
                    const struct xdev_acl_entry *acl, size_t n, unsigned want) {
        struct xdev_acl_entry plain[3] = {
                { ACL_USER_OBJ, 0, (mode >> 6) & 7 },
                { ACL_GROUP_OBJ, 0, (mode >> 3) & 7 },
                { ACL_OTHER, 0, mode & 7 },
        };
        unsigned mask = 7, other = 0;
        bool group_matched = false;

        want &= XDEV_MAY_READ | XDEV_MAY_WRITE;
        if (n == 0) {
                acl = plain;
                n = 3;
        }
        for (size_t i = 0; i < n; i++) {
                if (acl[i].tag == ACL_MASK)
                        mask = acl[i].perm & 7;
                else if (acl[i].tag == ACL_OTHER)
                        other = acl[i].perm & 7;
        }
        if (c->fsuid == owner) {
                for (size_t i = 0; i < n; i++)
                        if (acl[i].tag == ACL_USER_OBJ)
                                return (acl[i].perm & want) == want;
                return false;
        }
        for (size_t i = 0; i < n; i++)
                if (acl[i].tag == ACL_USER && acl[i].id == c->fsuid)
                        return (acl[i].perm & mask & want) == want;
        for (size_t i = 0; i < n; i++) {
                bool match = (acl[i].tag == ACL_GROUP_OBJ && in_group(c, group)) ||
                        (acl[i].tag == ACL_GROUP && in_group(c, (gid_t) acl[i].id));
                if (!match)
                        continue;
                group_matched = true;
                if ((acl[i].perm & mask & want) == want)
                        return true;
        }
        if (group_matched)
                return false;
        return (other & want) == want;
}

/* The entries of ACL into OUT (at most MAX); the count, or -1. */
static int entries_of(acl_t acl, struct xdev_acl_entry *out, size_t max) {
        acl_entry_t e;
        size_t n = 0;

        for (int id = ACL_FIRST_ENTRY; acl_get_entry(acl, id, &e) == 1; id = ACL_NEXT_ENTRY) {
                acl_tag_t tag;
                acl_permset_t ps;

                if (n == max || acl_get_tag_type(e, &tag) < 0 || acl_get_permset(e, &ps) < 0)
                        return -1;
                out[n] = (struct xdev_acl_entry) { .tag = tag };
                if (tag == ACL_USER || tag == ACL_GROUP) {
                        void *q = acl_get_qualifier(e);
                        if (!q)
                                return -1;
                        out[n].id =
                                tag == ACL_USER ? (unsigned) *(uid_t *) q : (unsigned) *(gid_t *) q;
                        (void) acl_free(q);
                }
                out[n].perm = (acl_get_perm(ps, ACL_READ) == 1 ? 4u : 0u) |
                        (acl_get_perm(ps, ACL_WRITE) == 1 ? 2u : 0u) |
                        (acl_get_perm(ps, ACL_EXECUTE) == 1 ? 1u : 0u);
                n++;
        }
        return (int) n;
}

bool xdev_creds_may_fd(const struct xdev_creds *c, int fd, const struct stat *st, unsigned want) {
        struct xdev_acl_entry entries[64];
        acl_t acl = acl_get_fd(fd);
        char path[32];
        int n;

        if (!acl && errno == EBADF) {
                /* an O_PATH fd: its ACL read through its own /proc link,
                 * which is that very node */
                (void) snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
                acl = acl_get_file(path, ACL_TYPE_ACCESS);
        }

        if (!acl)
                return false;
        n = entries_of(acl, entries, sizeof entries / sizeof entries[0]);
        (void) acl_free(acl);
        if (n <= 0)
                return false;
        return xdev_creds_may(c, st->st_uid, st->st_gid, st->st_mode, entries, (size_t) n, want);
}
