/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The runtime directory of a user with a console session (rundir.h). Every
 * step acts on an fd opened without following links, or on the one path
 * BASE/UID, whose parent only root can write (checked first), so nobody
 * can swap it for a link meanwhile. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <syslog.h>
#include <unistd.h>

#include "rundir.h"

/* BASE, made if missing: a directory of root's that nobody else can write
 * (else a user could replace BASE/UID between two steps). Returns its fd. */
static int base_open(const char *base, const struct xdev_log *log) {
        struct stat st;
        bool made = true;
        int fd = -1;

        /* gone between the two (the last logout's base_remove): again */
        for (int tries = 0; tries < 3; tries++) {
                made = true;
                if (mkdir(base, 0755) < 0) {
                        if (errno != EEXIST) {
                                xdev_log(log, LOG_ERR, "cannot make \"%s\": %s", base,
                                         strerror(errno));
                                return -errno;
                        }
                        made = false;
                }
                fd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0 || errno != ENOENT)
                        break;
        }
        if (fd < 0) {
                int r = -errno;
                xdev_log(log, LOG_ERR, "cannot open \"%s\": %s", base, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)) {
                xdev_log(
                        log, LOG_ERR,
                        "\"%s\" is not root's alone (owner %u, mode %04o): no runtime directory made",
                        base, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
                (void) close(fd);
                return -EPERM;
        }
        /* made here: marked, so that the last removal takes it away again */
        if (made && fsetxattr(fd, XDEV_RUNDIR_MARK, "1", 1, 0) < 0)
                xdev_log(log, LOG_WARNING, "cannot mark \"%s\" as made here (%s): it will stay",
                         base, strerror(errno));
        return fd;
}

/* BASE opened (base_open) and NAME made in it, into *BASEFD. BASE may go
 * between its open and the mkdirat, with another user's last logout
 * (xdev_rundir_remove): it is made again. Returns 0, -EEXIST or -errno
 * (*BASEFD open for all but base_open's errors, which are logged). */
static int base_mkdir(const char *base, const char *name, const struct xdev_log *log, int *basefd) {
        for (int tries = 0;; tries++) {
                *basefd = base_open(base, log);
                if (*basefd < 0)
                        return *basefd;
                if (mkdirat(*basefd, name, 0700) == 0)
                        return 0;
                if (errno != ENOENT || tries == 2)
                        return -errno;
                (void) close(*basefd);
        }
}

static bool marked(int fd) {
        char v[4];
        return fgetxattr(fd, XDEV_RUNDIR_MARK, v, sizeof v) == 1 && v[0] == '1';
}

/* An existing BASE/NAME: UID's own directory, mode 0700, no link. */
static int existing(int basefd, const char *path, const char *name, uid_t uid,
                    const struct xdev_log *log) {
        struct stat st;
        int fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r;

        if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != uid || (st.st_mode & 077)) {
                xdev_log(
                        log, LOG_ERR,
                        "\"%s\" is there but is not uid %u's own directory of mode 0700; not using it",
                        path, (unsigned) uid);
                if (fd >= 0)
                        (void) close(fd);
                return -EPERM;
        }
        r = marked(fd) ? 0 : 1;
        (void) close(fd);
        return r;
}

int xdev_rundir_make(const char *base, uid_t uid, gid_t gid, const struct xdev_log *log, char *path,
                     size_t size) {
        char name[16], opts[96];
        int basefd, fd, r;

        (void) snprintf(name, sizeof name, "%u", (unsigned) uid);
        if ((size_t) snprintf(path, size, "%s/%s", base, name) >= size)
                return -ENAMETOOLONG;
        r = base_mkdir(base, name, log, &basefd);
        if (basefd < 0)
                return basefd;
        if (r < 0) {
                r = r == -EEXIST ? existing(basefd, path, name, uid, log) : r;
                if (r < 0 && r != -EPERM)
                        xdev_log(log, LOG_ERR, "cannot make \"%s\": %s", path, strerror(-r));
                (void) close(basefd);
                return r;
        }
        (void) snprintf(opts, sizeof opts, "mode=0700,uid=%u,gid=%u,size=10%%", (unsigned) uid,
                        (unsigned) gid);
        if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
                r = -errno;
                xdev_log(log, LOG_ERR, "cannot mount a tmpfs on \"%s\": %s", path, strerror(-r));
                (void) unlinkat(basefd, name, AT_REMOVEDIR);
                (void) close(basefd);
                return r;
        }
        fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fsetxattr(fd, XDEV_RUNDIR_MARK, "1", 1, 0) < 0) {
                r = -errno;
                xdev_log(log, LOG_ERR, "cannot mark \"%s\" as made here: %s", path, strerror(-r));
                if (fd >= 0)
                        (void) close(fd);
                (void) umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
                (void) unlinkat(basefd, name, AT_REMOVEDIR);
                (void) close(basefd);
                return r;
        }
        (void) close(fd);
        (void) close(basefd);
        xdev_log(log, LOG_INFO, "runtime directory \"%s\" made for uid %u", path, (unsigned) uid);
        return 0;
}

/* BASE, made by base_open, once its last runtime directory is gone: an
 * rmdir, which leaves it when anything is in it (another user's, or
 * another module's). Its parent is root's (/run), so the name is BASE. */
static void base_remove(const char *base) {
        const char *leaf = strrchr(base, '/');
        char parent[256];
        int fd;

        if (!leaf || leaf == base || (size_t) (leaf - base) >= sizeof parent)
                return;
        (void) snprintf(parent, sizeof parent, "%.*s", (int) (leaf - base), base);
        fd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return;
        (void) unlinkat(fd, leaf + 1, AT_REMOVEDIR);
        (void) close(fd);
}

int xdev_rundir_remove(const char *base, uid_t uid, const struct xdev_log *log) {
        char name[16], path[256];
        struct stat bst, st;
        int basefd, fd, r = 0;

        (void) snprintf(name, sizeof name, "%u", (unsigned) uid);
        if ((size_t) snprintf(path, sizeof path, "%s/%s", base, name) >= sizeof path)
                return -ENAMETOOLONG;
        basefd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (basefd < 0)
                return errno == ENOENT ? 1 : -errno;
        fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        /* ours: marked, and a mount point (another device than BASE), and
         * BASE writable by root alone so the path names what FD is */
        if (fd < 0 || fstat(basefd, &bst) < 0 || fstat(fd, &st) < 0 || bst.st_uid != 0 ||
            (bst.st_mode & 022) || st.st_dev == bst.st_dev || !marked(fd)) {
                if (fd >= 0)
                        (void) close(fd);
                (void) close(basefd);
                return 1;
        }
        (void) close(fd);
        if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 ||
            unlinkat(basefd, name, AT_REMOVEDIR) < 0) {
                r = -errno;
                xdev_log(log, LOG_ERR, "cannot remove the runtime directory \"%s\": %s", path,
                         strerror(-r));
        } else
                xdev_log(log, LOG_INFO, "runtime directory \"%s\" removed", path);
        if (r == 0 && marked(basefd))
                base_remove(base);
        (void) close(basefd);
        return r;
}
