/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The virtual console: its identity, a safe open, the reset of its modes
 * (vt.h). Self-contained: xdevices-vt-run links this file alone. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "vt.h"

dev_t xdev_vt_devnum(unsigned vt) {
        return makedev(XDEV_VT_MAJOR, vt);
}

bool xdev_vt_from_devnum(dev_t devnum, unsigned *ret_vt) {
        unsigned n = minor(devnum);

        if (major(devnum) != XDEV_VT_MAJOR || n < 1 || n > XDEV_VT_MAX)
                return false;
        if (ret_vt)
                *ret_vt = n;
        return true;
}

void xdev_vt_path(char buf[static XDEV_VT_PATH_MAX], unsigned vt) {
        (void) snprintf(buf, XDEV_VT_PATH_MAX, "/dev/tty%u", vt);
}

int xdev_vt_parse(const char *name, unsigned *ret_vt) {
        unsigned n = 0;
        const char *p;

        if (!name)
                return -EINVAL;
        if (strncmp(name, "/dev/", 5) == 0)
                name += 5;
        if (strncmp(name, "tty", 3) != 0)
                return -EINVAL;
        p = name + 3;
        /* digits only, the first not 0, at most two of them */
        if (*p < '1' || *p > '9')
                return -EINVAL;
        for (; *p; p++) {
                if (*p < '0' || *p > '9' || n > XDEV_VT_MAX)
                        return -EINVAL;
                n = n * 10 + (unsigned) (*p - '0');
        }
        if (n < 1 || n > XDEV_VT_MAX)
                return -EINVAL;
        *ret_vt = n;
        return 0;
}

/* /dev as O_PATH, "/" and "dev" each without following a link. */
static int open_dev_dir(void) {
        int root, dev, r;

        root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        dev = openat(root, "dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        r = -errno;
        (void) close(root);
        if (dev < 0)
                return r == -ELOOP || r == -ENOTDIR ? -ENOTTY : r;
        return dev;
}

/* 0 when the O_PATH fd PFD is the character device of VT N, -ENOTTY when
 * it is something else, -errno. */
static int vt_check(int pfd, unsigned vt) {
        struct stat st;

        if (fstat(pfd, &st) < 0)
                return -errno;
        return S_ISCHR(st.st_mode) && st.st_rdev == xdev_vt_devnum(vt) ? 0 : -ENOTTY;
}

int xdev_vt_open(unsigned vt, int flags) {
        char name[XDEV_VT_PATH_MAX], self[32];
        int dir, pfd, r;

        if (vt < 1 || vt > XDEV_VT_MAX)
                return -EINVAL;
        dir = open_dev_dir();
        if (dir < 0)
                return dir;
        (void) snprintf(name, sizeof name, "tty%u", vt);
        pfd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        r = pfd < 0 ? -errno : vt_check(pfd, vt);
        (void) close(dir);
        if (r == 0) {
                (void) snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
                r = open(self, O_RDWR | O_NOCTTY | O_CLOEXEC | flags);
                r = r < 0 ? -errno : r;
        }
        if (pfd >= 0)
                (void) close(pfd);
        return r == -ELOOP || r == -ENOTDIR ? -ENOTTY : r;
}

int xdev_vt_is_graphics(unsigned vt) {
        int fd = xdev_vt_open(vt, O_NONBLOCK), mode, r;

        if (fd < 0)
                return fd;
        r = ioctl(fd, KDGETMODE, &mode) < 0 ? -errno : mode == KD_GRAPHICS;
        (void) close(fd);
        return r;
}

int xdev_vt_default_kbmode(void) {
        char c = '1';
        int fd = open("/sys/module/vt/parameters/default_utf8", O_RDONLY | O_CLOEXEC);

        if (fd >= 0) {
                if (read(fd, &c, 1) != 1)
                        c = '1';
                (void) close(fd);
        }
        return c == '0' ? K_XLATE : K_UNICODE;
}

/* Records the first error; the other changes are still tried. */
static void change(int fd, unsigned long req, unsigned long arg, unsigned flag, unsigned *what,
                   int *r) {
        if (ioctl(fd, req, arg) < 0) {
                if (*r == 0)
                        *r = -errno;
        } else
                *what |= flag;
}

int xdev_vt_reset(int fd, unsigned *ret_what) {
        struct vt_mode vtm, vtauto = { .mode = VT_AUTO };
        int mode, kb, r = 0;

        *ret_what = 0;
        if (ioctl(fd, KDGETMODE, &mode) < 0 || ioctl(fd, KDGKBMODE, &kb) < 0 ||
            ioctl(fd, VT_GETMODE, &vtm) < 0)
                return -errno;
        if (kb != K_XLATE && kb != K_UNICODE)
                change(fd, KDSKBMODE, (unsigned long) xdev_vt_default_kbmode(),
                       XDEV_VT_LEFT_KEYBOARD, ret_what, &r);
        if (mode != KD_TEXT)
                change(fd, KDSETMODE, KD_TEXT, XDEV_VT_LEFT_GRAPHICS, ret_what, &r);
        if (vtm.mode != VT_AUTO)
                change(fd, VT_SETMODE, (unsigned long) &vtauto, XDEV_VT_LEFT_PROCESS, ret_what, &r);
        return r;
}

int xdev_vt_active(void) {
        char buf[32];
        unsigned vt;
        ssize_t n;
        int fd = open("/sys/class/tty/tty0/active", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof buf - 1);
        if (n < 0)
                n = -errno;
        (void) close(fd);
        if (n <= 0)
                return n < 0 ? (int) n : -EIO;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return xdev_vt_parse(buf, &vt) < 0 ? -EIO : (int) vt;
}
