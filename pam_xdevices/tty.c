/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which logins count: PAM_TTY spelling, the controlling tty, the active VT. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tty.h"
#include "util.h"

int xdev_tty_parse(const char *pam_tty) {
        uint64_t n;

        if (!pam_tty)
                return -EINVAL;
        if (strncmp(pam_tty, "/dev/", 5) == 0)
                pam_tty += 5;
        if (strncmp(pam_tty, "tty", 3) != 0)
                return -EINVAL;
        if (xdev_parse_uint(pam_tty + 3, XDEV_VT_MAX, &n) < 0 || n < 1)
                return -EINVAL;
        return (int) n;
}

int xdev_tty_is_controlling(unsigned vt) {
        dev_t tty_nr;
        int r;

        r = xdev_proc_stat(getpid(), NULL, &tty_nr);
        if (r < 0)
                return r;
        return tty_nr == makedev(4, vt);
}

int xdev_vt_active(void) {
        char buf[32];
        ssize_t n;
        int fd, vt;

        fd = open("/sys/class/tty/tty0/active", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof buf - 1);
        (void) close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        vt = xdev_tty_parse(buf);
        return vt < 0 ? -EIO : vt;
}

bool xdev_login_items_are_local(const char *user, const char *ruser, const char *rhost) {
        if (rhost && rhost[0] != '\0')
                return false;
        if (ruser && ruser[0] != '\0' && (!user || strcmp(ruser, user) != 0))
                return false;
        return true;
}
