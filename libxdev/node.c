/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one way to touch a device node.
 *
 * Rules this file keeps:
 *  1. Never follow a symlink: every path component is opened O_NOFOLLOW.
 *  2. Check before acting, and act on the fd that was checked: type, major,
 *     link count and identity are verified on the O_PATH fd, and changes go
 *     through that fd (fchownat AT_EMPTY_PATH, /proc/self/fd/N for ACL and
 *     mode), never through the path again.
 *  3. Restoration only touches the node whose fs, inode and rdev match the
 *     record; anything else at that path is left alone.
 *  4. A failed grant puts the node back to its recorded original.
 *  5. A grant marks its node (trusted xattr, through the same fd) before
 *     the change, and only a restore that succeeded unmarks it (at a
 *     handover the mark stays for the next grant to rewrite), so a node
 *     that may carry a grant always carries its original too. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <acl/libacl.h>

#include "node.h"
#include "tty.h"
#include "vt.h"

void xdev_dircache_done(struct xdev_dircache *c) {
        if (!c)
                return;
        if (c->fd >= 0)
                (void) close(c->fd);
        c->fd = -1;
        c->path[0] = '\0';
}

/* Opens the directory DIR (LEN bytes, absolute, ending in '/') one
 * component at a time, none of them followed if it is a symlink. */
static int open_dir(const char *dir, size_t len) {
        char buf[256];
        int fd;

        memcpy(buf, dir, len);
        buf[len] = '\0';
        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (char *save = NULL, *comp = strtok_r(buf + 1, "/", &save); comp;
             comp = strtok_r(NULL, "/", &save)) {
                int nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
                int r = -errno;
                (void) close(fd);
                if (nfd < 0)
                        return r == -ELOOP || r == -ENOTDIR ? -ENOTTY : r;
                fd = nfd;
        }
        return fd;
}

int xdev_node_open(struct xdev_dircache *cache, const char *path, enum xdev_class class,
                   int *ret_fd, struct stat *ret_st) {
        const char *base;
        struct stat st;
        size_t dlen;
        int dfd, fd, r;

        XDEV_ASSERT(path && ret_fd && ret_st && (unsigned) class < _XDEV_CLASS_MAX);
        if (!xdev_path_is_valid(path) || strlen(path) >= sizeof cache->path)
                return -EINVAL;
        base = strrchr(path, '/') + 1;
        if (!*base)
                return -EINVAL;
        dlen = (size_t) (base - path);
        if (cache && cache->fd >= 0 && strlen(cache->path) == dlen &&
            memcmp(cache->path, path, dlen) == 0)
                dfd = cache->fd;
        else {
                dfd = open_dir(path, dlen);
                if (dfd < 0)
                        return dfd;
                if (cache) {
                        xdev_dircache_done(cache);
                        cache->fd = dfd;
                        memcpy(cache->path, path, dlen);
                        cache->path[dlen] = '\0';
                }
        }
        fd = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        r = -errno;
        if (!cache)
                (void) close(dfd);
        if (fd < 0)
                return r == -ELOOP || r == -ENOTDIR ? -ENOTTY : r;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto fail;
        }
        r = -ENOTTY;
        if (!S_ISCHR(st.st_mode))
                goto fail;
        if (major(st.st_rdev) != xdev_class_major(class))
                goto fail;
        if (class == XDEV_CLASS_VT && !xdev_vt_from_devnum(st.st_rdev, NULL))
                goto fail;
        if (class == XDEV_CLASS_CONSOLE && minor(st.st_rdev) != 0)
                goto fail;
        *ret_fd = fd;
        *ret_st = st;
        return 0;
fail:
        (void) close(fd);
        return r;
}

static void fd_path(int fd, char buf[static 32]) {
        (void) snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

int xdev_node_snapshot(int fd, const struct stat *st, struct xdev_node *n) {
        char p[32], *text = NULL;
        acl_t acl;

        XDEV_ASSERT(fd >= 0 && st && n && n->path && (unsigned) n->class < _XDEV_CLASS_MAX);
        fd_path(fd, p);
        acl = acl_get_file(p, ACL_TYPE_ACCESS);
        if (!acl) {
                if (errno != ENOTSUP && errno != EOPNOTSUPP)
                        return -errno;
        } else {
                char *t = acl_to_any_text(acl, NULL, ',', TEXT_ABBREVIATE | TEXT_NUMERIC_IDS);
                (void) acl_free(acl);
                if (!t)
                        return -ENOMEM;
                text = strdup(t);
                (void) acl_free(t);
                if (!text)
                        return -ENOMEM;
                if (strlen(text) > XDEV_ACL_TEXT_MAX) {
                        free(text);
                        return -E2BIG;
                }
        }
        n->fsdev = st->st_dev;
        n->ino = st->st_ino;
        n->rdev = st->st_rdev;
        n->uid = st->st_uid;
        n->gid = st->st_gid;
        n->mode = st->st_mode & (S_IFMT | 07777);
        free(n->acl);
        n->acl = text;
        return 0;
}

/* Adds PERM for UID to ACL, keeping any permission an entry already had. */
static int acl_add_user(acl_t *acl, uid_t uid, enum xdev_access perm) {
        acl_entry_t e;
        acl_permset_t ps;
        int id;

        for (id = ACL_FIRST_ENTRY; acl_get_entry(*acl, id, &e) == 1; id = ACL_NEXT_ENTRY) {
                acl_tag_t tag;
                uid_t *q;
                if (acl_get_tag_type(e, &tag) < 0)
                        return -errno;
                if (tag != ACL_USER)
                        continue;
                q = acl_get_qualifier(e);
                if (!q)
                        return -errno;
                bool match = *q == uid;
                (void) acl_free(q);
                if (match)
                        goto found;
        }
        if (acl_create_entry(acl, &e) < 0 || acl_set_tag_type(e, ACL_USER) < 0 ||
            acl_set_qualifier(e, &uid) < 0)
                return -errno;
        if (acl_get_permset(e, &ps) < 0 || acl_clear_perms(ps) < 0)
                return -errno;
found:
        if (acl_get_permset(e, &ps) < 0)
                return -errno;
        if ((perm & 4) && acl_add_perm(ps, ACL_READ) < 0)
                return -errno;
        if ((perm & 2) && acl_add_perm(ps, ACL_WRITE) < 0)
                return -errno;
        if (acl_calc_mask(acl) < 0)
                return -errno;
        return 0;
}

/* In chown mode the new owner gets PERM through the owner entry. */
static int acl_set_owner_perm(acl_t acl, enum xdev_access perm) {
        acl_entry_t e;
        acl_permset_t ps;

        for (int id = ACL_FIRST_ENTRY; acl_get_entry(acl, id, &e) == 1; id = ACL_NEXT_ENTRY) {
                acl_tag_t tag;
                if (acl_get_tag_type(e, &tag) < 0)
                        return -errno;
                if (tag != ACL_USER_OBJ)
                        continue;
                if (acl_get_permset(e, &ps) < 0 || acl_delete_perm(ps, ACL_READ) < 0 ||
                    acl_delete_perm(ps, ACL_WRITE) < 0)
                        return -errno;
                if ((perm & 4) && acl_add_perm(ps, ACL_READ) < 0)
                        return -errno;
                if ((perm & 2) && acl_add_perm(ps, ACL_WRITE) < 0)
                        return -errno;
                return 0;
        }
        return -EINVAL;
}

/* The ACL and mode node N should have now; *ret_acl is NULL on a fs
 * without ACLs. */
static int target_of(const struct xdev_node *n, acl_t *ret_acl, mode_t *ret_mode, uid_t *ret_uid) {
        acl_t acl = NULL;
        mode_t mode = n->mode & 07777;
        int r;

        *ret_uid = (n->granted && n->gmode == XDEV_GRANT_CHOWN) ? n->grantee : n->uid;
        if (n->acl) {
                acl = acl_from_text(n->acl);
                if (!acl)
                        return -EBADMSG;
                if (n->granted && n->gmode == XDEV_GRANT_ACL)
                        r = acl_add_user(&acl, n->grantee, n->perm);
                else if (n->granted)
                        r = acl_set_owner_perm(acl, n->perm);
                else
                        r = 0;
                if (r < 0)
                        goto fail;
                mode_t perms;
                if (acl_equiv_mode(acl, &perms) < 0) {
                        r = -EINVAL;
                        goto fail;
                }
                mode = (mode & ~0777u) | (perms & 0777);
        } else if (n->granted && n->gmode == XDEV_GRANT_CHOWN)
                mode = (mode & ~0700u) | ((mode_t) n->perm << 6);
        else if (n->granted)
                return -EOPNOTSUPP; /* an ACL grant on a fs without ACLs */
        *ret_acl = acl;
        *ret_mode = mode;
        return 0;
fail:
        (void) acl_free(acl);
        return r;
}

/* Opens the recorded node and checks it is still the same one: fs, inode and
 * rdev, whatever its link count (a hard link made meanwhile must not make
 * us forget a node we changed). */
static int open_recorded(struct xdev_dircache *cache, const struct xdev_node *n, int *ret_fd,
                         struct stat *ret_st) {
        int r = xdev_node_open(cache, n->path, n->class, ret_fd, ret_st);
        if (r == -ENOTTY)
                return -ESTALE;
        if (r < 0)
                return r;
        if (ret_st->st_dev != n->fsdev || ret_st->st_ino != n->ino || ret_st->st_rdev != n->rdev) {
                (void) close(*ret_fd);
                return -ESTALE;
        }
        return 0;
}

static int acl_write(struct xdev_dircache *cache, const char *p, acl_t acl) {
        int r = xdev_fault_point("acl-set");

        if (r < 0)
                return r;
        if (cache)
                cache->io.acl_writes++;
        return acl_set_file(p, ACL_TYPE_ACCESS, acl) < 0 ? -errno : 0;
}

static acl_t acl_read(struct xdev_dircache *cache, const char *p) {
        if (cache)
                cache->io.acl_reads++;
        return acl_get_file(p, ACL_TYPE_ACCESS);
}

/* Brings the node behind FD (ST) to owner UID:GID, ACL (none: NULL) and
 * MODE. Unless KNOWN_TO_CHANGE, the ACL is read first and written only if
 * it differs; either way the ACL written is ACL itself, so the read spares
 * a write and decides nothing. Writing the ACL sets the permission bits,
 * so the mode is looked at again only for what an ACL does not carry. */
static int apply_target(struct xdev_dircache *cache, int fd, const struct stat *st, uid_t uid,
                        gid_t gid, acl_t acl, mode_t mode, bool known_to_change) {
        char p[32];
        struct stat now;
        int r;

        fd_path(fd, p);
        if ((st->st_uid != uid || st->st_gid != gid) &&
            fchownat(fd, "", uid, gid, AT_EMPTY_PATH) < 0)
                return -errno;
        if (acl) {
                int same = -1;
                if (!known_to_change) {
                        acl_t cur = acl_read(cache, p);
                        same = cur ? acl_cmp(cur, acl) : -1;
                        if (cur)
                                (void) acl_free(cur);
                }
                if (same != 0) {
                        r = acl_write(cache, p, acl);
                        if (r < 0)
                                return r;
                        if ((st->st_mode & 07000) == (mode & 07000))
                                return 0; /* the ACL set the rest */
                }
        }
        if (fstat(fd, &now) < 0)
                return -errno;
        if ((now.st_mode & 07777) != mode && chmod(p, mode) < 0)
                return -errno;
        return 0;
}

/* The mask entry of ACL, or NULL-like (returns false) when it has none. */
static bool acl_find_mask(acl_t acl, acl_entry_t *ret) {
        acl_entry_t e;

        for (int id = ACL_FIRST_ENTRY; acl_get_entry(acl, id, &e) == 1; id = ACL_NEXT_ENTRY) {
                acl_tag_t tag;
                if (acl_get_tag_type(e, &tag) == 0 && tag == ACL_MASK) {
                        *ret = e;
                        return true;
                }
        }
        return false;
}

/* CUR has every entry of WANT and differs at most in its mask: the grant
 * is there. The mask is the group bits of the mode, which the owner may
 * have set since (login(1) gives its VT mode 0620): it stays as it is. */
static bool acl_differs_only_in_mask(acl_t cur, acl_t want) {
        acl_t copy = acl_dup(want);
        acl_entry_t cm, wm;
        acl_permset_t ps;
        bool same = false;

        if (!copy)
                return false;
        if (acl_find_mask(cur, &cm) && acl_find_mask(copy, &wm) && acl_get_permset(cm, &ps) == 0 &&
            acl_set_permset(wm, ps) == 0)
                same = acl_cmp(cur, copy) == 0;
        (void) acl_free(copy);
        return same;
}

/* An ACL grant changes the ACL alone: owner, group and the base entries stay
 * what they are now (login may have chowned its VT since we recorded it);
 * the named entries become the recorded ones plus the grantee's. */
static int grant_acl_only(struct xdev_dircache *cache, int fd, const struct xdev_node *n) {
        acl_t cur = NULL, orig = NULL, want = NULL;
        acl_entry_t e, ne;
        char p[32];
        int r;

        fd_path(fd, p);
        cur = acl_read(cache, p);
        orig = acl_from_text(n->acl);
        want = acl_init(8);
        if (!cur || !orig || !want) {
                r = !orig ? -EBADMSG : -errno;
                goto out;
        }
        for (int id = ACL_FIRST_ENTRY; acl_get_entry(cur, id, &e) == 1; id = ACL_NEXT_ENTRY) {
                acl_tag_t tag;
                if (acl_get_tag_type(e, &tag) < 0)
                        goto fail;
                if (tag != ACL_USER_OBJ && tag != ACL_GROUP_OBJ && tag != ACL_OTHER)
                        continue;
                if (acl_create_entry(&want, &ne) < 0 || acl_copy_entry(ne, e) < 0)
                        goto fail;
        }
        for (int id = ACL_FIRST_ENTRY; acl_get_entry(orig, id, &e) == 1; id = ACL_NEXT_ENTRY) {
                acl_tag_t tag;
                if (acl_get_tag_type(e, &tag) < 0)
                        goto fail;
                if (tag != ACL_USER && tag != ACL_GROUP)
                        continue;
                if (acl_create_entry(&want, &ne) < 0 || acl_copy_entry(ne, e) < 0)
                        goto fail;
        }
        r = acl_add_user(&want, n->grantee, n->perm);
        if (r < 0)
                goto out;
        r = 0;
        if (acl_cmp(cur, want) != 0 && !acl_differs_only_in_mask(cur, want))
                r = acl_write(cache, p, want);
        goto out;
fail:
        r = -errno;
out:
        (void) acl_free(cur);
        (void) acl_free(orig);
        (void) acl_free(want);
        return r;
}

/* Marks the node behind FD as granted by N (doc/DESIGN.md §3.6). Fails
 * quietly on a file system without trusted attributes: the grant stays
 * possible there, unmarked. */
static void mark_set(struct xdev_dircache *cache, int fd, const struct xdev_node *n) {
        char p[32], buf[XDEV_MARK_MAX];
        int len = xdev_mark_format(n, buf, sizeof buf);

        fd_path(fd, p);
        if (len > 0 && xdev_fault_point("mark-set") == 0) {
                if (cache)
                        cache->io.mark_writes++;
                (void) setxattr(p, XDEV_MARK_XATTR, buf, (size_t) len, 0);
        }
}

static void mark_clear(struct xdev_dircache *cache, int fd) {
        char p[32];

        fd_path(fd, p);
        if (cache)
                cache->io.mark_writes++;
        (void) removexattr(p, XDEV_MARK_XATTR);
}

int xdev_node_mark_read(int fd, const struct stat *st, struct xdev_mark *ret) {
        char p[32], buf[XDEV_MARK_MAX];
        ssize_t len;

        fd_path(fd, p);
        len = getxattr(p, XDEV_MARK_XATTR, buf, sizeof buf);
        if (len < 0)
                return errno == ENODATA || errno == ENOTSUP || errno == EOPNOTSUPP ? -ENODATA
                        : errno == ERANGE                                          ? -EBADMSG
                                                                                   : -errno;
        if (xdev_mark_parse(buf, (size_t) len, ret) < 0 || ret->rdev != st->st_rdev)
                return -EBADMSG;
        return 0;
}

/* An ACL grant of a shared node, written from the ledger alone: its
 * recorded ACL (base entries included) plus the grantee, in one write
 * that also drops a former grantee's entry. Nothing but the daemon and the
 * udev helper, both under the state lock, changes a shared node's owner or
 * mode after it is recorded (a node made anew is another inode), unlike a
 * VT, which login(1) chowns (grant_acl_only()); one they chowned to a
 * former grantee (chown mode, before a reload) takes the general way. */
static int grant_acl_from_ledger(struct xdev_dircache *cache, int fd, const struct xdev_node *n) {
        acl_t want = acl_from_text(n->acl);
        char p[32];
        int r;

        if (!want)
                return -EBADMSG;
        fd_path(fd, p);
        r = acl_add_user(&want, n->grantee, n->perm);
        if (r == 0)
                r = acl_write(cache, p, want);
        (void) acl_free(want);
        return r;
}

int xdev_node_converge(struct xdev_dircache *cache, const struct xdev_node *n, unsigned flags) {
        bool changes = flags & XDEV_CONVERGE_CHANGES;
        struct stat st;
        acl_t acl = NULL;
        mode_t mode;
        uid_t uid;
        int fd, r;

        r = open_recorded(cache, n, &fd, &st);
        if (r < 0)
                return r;
        xdev_fault_point("node-converge");
        if (n->granted && st.st_nlink == 1)
                mark_set(cache, fd, n);
        if (n->granted && st.st_nlink != 1)
                r = -EMLINK; /* a grant would reach the other name too */
        else if (n->granted && n->gmode == XDEV_GRANT_ACL && n->acl &&
                 (n->class == XDEV_CLASS_VT || !changes))
                r = grant_acl_only(cache, fd, n);
        else if (n->granted && n->gmode == XDEV_GRANT_ACL && n->acl && st.st_uid == n->uid &&
                 st.st_gid == n->gid && (st.st_mode & 07000) == (n->mode & 07000))
                r = grant_acl_from_ledger(cache, fd, n);
        else {
                r = target_of(n, &acl, &mode, &uid);
                if (r < 0)
                        goto out;
                r = apply_target(cache, fd, &st, uid, n->gid, acl, mode, changes);
        }
        if (r < 0 && n->granted) {
                /* Better safe than sorry: a half-granted node goes back. */
                struct xdev_node orig = *n;
                acl_t oacl = NULL;
                mode_t omode;
                uid_t ouid;
                orig.granted = false;
                if (target_of(&orig, &oacl, &omode, &ouid) == 0 && fstat(fd, &st) == 0 &&
                    apply_target(cache, fd, &st, ouid, orig.gid, oacl, omode, true) == 0)
                        mark_clear(cache, fd);
                (void) acl_free(oacl);
        } else if (r == 0 && !n->granted)
                mark_clear(cache, fd);
out:
        (void) acl_free(acl);
        (void) close(fd);
        return r;
}
