/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading /proc: a process's status, and directories of numbered entries
 * (procfs.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "util.h"

static const char *field(const char *text, const char *name) {
        const char *p = strstr(text, name);
        return p ? p + strlen(name) : NULL;
}

int xdev_proc_status_parse(const char *text, struct xdev_proc_status *ret) {
        struct xdev_proc_status st = { 0 };
        unsigned long u[4], ppid;
        unsigned long long caps;
        const char *p;

        /* the first line, Name, is escaped by the kernel: no "\nUid:" in it */
        p = field(text, "\nUid:");
        if (!p || sscanf(p, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) != 4)
                return -EIO;
        for (int i = 0; i < 4; i++)
                st.uid[i] = (uid_t) u[i];
        p = field(text, "\nPPid:");
        if (p && sscanf(p, "%lu", &ppid) == 1) {
                st.has_ppid = true;
                st.ppid = (pid_t) ppid;
        }
        p = field(text, "\nCapPrm:");
        if (p && sscanf(p, "%llx", &caps) == 1) {
                st.has_cap_prm = true;
                st.cap_prm = caps;
        }
        *ret = st;
        return 0;
}

int xdev_proc_status_read(int procfd, pid_t pid, struct xdev_proc_status *ret) {
        char path[32], buf[4096];

        (void) snprintf(path, sizeof path, "%d/status", (int) pid);
        if (xdev_read_small(procfd, path, buf, sizeof buf) <= 0)
                return -ESRCH;
        return xdev_proc_status_parse(buf, ret);
}

int xdev_numdir_open(int dirfd, const char *path, DIR **ret) {
        int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0)
                return -errno;
        *ret = fdopendir(fd);
        if (!*ret) {
                (void) close(fd);
                return -ENOMEM;
        }
        return 0;
}

bool xdev_numdir_next(DIR *d, uint64_t *ret_num, const char **ret_name) {
        struct dirent *de;

        while ((de = readdir(d)))
                if (xdev_parse_uint(de->d_name, INT32_MAX, ret_num) == 0) {
                        if (ret_name)
                                *ret_name = de->d_name;
                        return true;
                }
        return false;
}
