/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding a running logind: its seat file, then its process in /proc. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logind.h"
#include "procfs.h"
#include "util.h"

/* The comm of each logind's daemon: systemd-logind, and elogind, which
 * runs as "elogind" or, started by some init scripts, "elogind-daemon". */
static const char *const logind_names[] = { "systemd-logind", "elogind", "elogind-daemon" };

static bool comm_is_logind(const char *comm) {
        for (size_t i = 0; i < XDEV_ELEMENTSOF(logind_names); i++)
                if (strcmp(comm, logind_names[i]) == 0)
                        return true;
        return false;
}

/* Whether PID below PROCFD is a live root process with a logind's name;
 * its comm into NAME. */
static bool pid_is_logind(int procfd, pid_t pid, char name[16]) {
        char path[32], comm[16];
        struct xdev_proc_status st;
        struct xdev_proc_stat pst;
        int n;

        (void) snprintf(path, sizeof path, "%d/comm", (int) pid);
        n = xdev_read_small(procfd, path, comm, sizeof comm);
        if (n <= 0)
                return false;
        comm[strcspn(comm, "\n")] = '\0';
        if (!comm_is_logind(comm))
                return false;
        if (xdev_proc_status_read(procfd, pid, &st) < 0 || st.uid[0] != 0 || st.uid[1] != 0)
                return false;
        if (xdev_proc_stat(pid, &pst) < 0 || pst.state == 'Z' || pst.state == 'X')
                return false;
        /* a comm is at most 15 bytes, and it is one of logind_names */
        memcpy(name, comm, strlen(comm) + 1);
        return true;
}

int xdev_logind_find(struct xdev_logind *ret) {
        struct xdev_logind found = { 0 };
        struct stat st;
        uint64_t pid;
        int procfd, r = 0;
        DIR *d;

        if (lstat(XDEV_LOGIND_SEAT0, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (procfd < 0)
                return -errno;
        r = xdev_numdir_open(procfd, ".", &d);
        if (r < 0)
                goto out;
        while (xdev_numdir_next(d, &pid, NULL))
                if (pid_is_logind(procfd, (pid_t) pid, found.name)) {
                        found.pid = (pid_t) pid;
                        r = 1;
                        break;
                }
        (void) closedir(d);
        if (r == 1 && ret)
                *ret = found;
out:
        (void) close(procfd);
        return r;
}
