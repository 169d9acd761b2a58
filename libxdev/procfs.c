/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading /proc: a process's stat and status, and directories of numbered entries
 * (procfs.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
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
        unsigned long long caps, vol, invol;
        const char *p, *q;
        char state;

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
        p = field(text, "\nState:");
        if (p && sscanf(p, " %c", &state) == 1 &&
            ((state >= 'A' && state <= 'Z') || (state >= 'a' && state <= 'z')))
                st.state = state;
        /* a line of its own: "nonvoluntary_ctxt_switches" ends the same */
        p = field(text, "\nvoluntary_ctxt_switches:");
        q = field(text, "\nnonvoluntary_ctxt_switches:");
        if (p && q && sscanf(p, "%llu", &vol) == 1 && sscanf(q, "%llu", &invol) == 1 &&
            vol <= UINT64_MAX - invol) {
                st.has_switches = true;
                st.switches = vol + invol;
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

int xdev_proc_syscall_parse(const char *text, long *ret_nr) {
        char *end;
        long nr;

        if (strncmp(text, "running", 7) == 0 && (text[7] == '\n' || text[7] == '\0'))
                return -EBUSY;
        if (text[0] < '0' || text[0] > '9')
                return -EIO; /* "-1 ...": blocked, not in a system call */
        errno = 0;
        nr = strtol(text, &end, 10);
        if (errno != 0 || end == text || (*end != ' ' && *end != '\n' && *end != '\0'))
                return -EIO;
        *ret_nr = nr;
        return 0;
}

int xdev_proc_syscall_read(int procfd, pid_t pid, long *ret_nr) {
        char path[32], buf[256];

        (void) snprintf(path, sizeof path, "%d/syscall", (int) pid);
        if (xdev_read_small(procfd, path, buf, sizeof buf) <= 0)
                return -ESRCH;
        return xdev_proc_syscall_parse(buf, ret_nr);
}

bool xdev_syscall_waits_for_events(long nr) {
        static const long waits[] = {
#ifdef __NR_poll
                __NR_poll,
#endif
#ifdef __NR_select
                __NR_select,
#endif
#ifdef __NR_epoll_wait
                __NR_epoll_wait,
#endif
#ifdef __NR_epoll_pwait2
                __NR_epoll_pwait2,
#endif
                __NR_ppoll,        __NR_pselect6, __NR_epoll_pwait,
        };

        for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++)
                if (waits[i] == nr)
                        return true;
        return false;
}

int xdev_proc_creds_parse(const char *text, struct xdev_creds *ret) {
        struct xdev_creds c = { .complete = true };
        unsigned long v[4];
        const char *p, *end;

        p = field(text, "\nUid:");
        if (!p || sscanf(p, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
                return -EIO;
        c.fsuid = (uid_t) v[3];
        p = field(text, "\nGid:");
        if (!p || sscanf(p, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
                return -EIO;
        c.fsgid = (gid_t) v[3];
        p = field(text, "\nGroups:");
        if (!p)
                return -EIO;
        end = strchr(p, '\n');
        if (!end) /* the line was cut: its last number may be too */
                return -EIO;
        while (p < end) {
                char *next;
                unsigned long g;

                if (*p == ' ' || *p == '\t') {
                        p++;
                        continue;
                }
                if (*p < '0' || *p > '9')
                        return -EIO;
                errno = 0;
                g = strtoul(p, &next, 10);
                if (errno != 0 || next > end || g > UINT32_MAX)
                        return -EIO;
                p = next;
                if (c.n_groups == XDEV_CREDS_GROUPS_MAX)
                        c.complete = false;
                else
                        c.groups[c.n_groups++] = (gid_t) g;
        }
        *ret = c;
        return 0;
}

int xdev_proc_creds_read(int procfd, pid_t pid, struct xdev_creds *ret) {
        char path[32], buf[4096];
        ssize_t n;

        (void) snprintf(path, sizeof path, "%d/status", (int) pid);
        n = xdev_read_small(procfd, path, buf, sizeof buf);
        if (n <= 0)
                return -ESRCH;
        return xdev_proc_creds_parse(buf, ret);
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

int xdev_fddir_open(int dirfd, const char *path, struct xdev_fddir *d) {
        d->len = d->pos = 0;
        d->fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return d->fd < 0 ? -errno : 0;
}

bool xdev_fddir_next(struct xdev_fddir *d, size_t want, uint64_t *ret_num, const char **ret_name) {
        for (;;) {
                const struct dirent64 *de;
                if (d->pos >= d->len) {
                        /* an entry of /proc/PID/fd takes 24-32 bytes */
                        size_t cap = want < XDEV_FDDIR_BUF / 32 ? want * 32 : XDEV_FDDIR_BUF;
                        ssize_t n = getdents64(d->fd, d->buf, cap < 512 ? 512 : cap);
                        if (n <= 0)
                                return false;
                        d->len = (size_t) n;
                        d->pos = 0;
                }
                de = (const struct dirent64 *) ((const char *) d->buf + d->pos);
                if (de->d_reclen == 0 || d->pos + de->d_reclen > d->len)
                        return false;
                d->pos += de->d_reclen;
                if (xdev_parse_uint(de->d_name, INT32_MAX, ret_num) == 0) {
                        if (ret_name)
                                *ret_name = de->d_name;
                        return true;
                }
        }
}

void xdev_fddir_close(struct xdev_fddir *d) {
        if (d->fd >= 0)
                (void) close(d->fd);
        d->fd = -1;
}

int xdev_proc_stat(pid_t pid, struct xdev_proc_stat *ret) {
        char path[64], buf[1024];
        int n;

        if (pid <= 0)
                return -EINVAL;
        (void) snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        n = xdev_read_small(AT_FDCWD, path, buf, sizeof buf);
        if (n <= 0)
                return n < 0 ? n : -EIO;

        /* comm may hold spaces and ')': the fields start after the last ')'. */
        char *p = strrchr(buf, ')');
        if (!p || p[1] != ' ' || p[2] == '\0')
                return -EIO;
        p += 2;

        /* p is at field 3 (state); session is field 6, tty_nr field 7,
         * flags field 9, starttime field 22. */
        unsigned long long session = 0, tty_nr = 0, flags = 0, start = 0;
        char state = *p;
        int field = 3;
        for (char *tok = p; tok && *tok; field++) {
                char *end = strchr(tok, ' ');
                if (field == 6)
                        session = strtoull(tok, NULL, 10);
                if (field == 7)
                        tty_nr = strtoull(tok, NULL, 10);
                if (field == 9)
                        flags = strtoull(tok, NULL, 10);
                if (field == 22) {
                        start = strtoull(tok, NULL, 10);
                        break;
                }
                tok = end ? end + 1 : NULL;
        }
        if (field != 22)
                return -EIO;
        /* The kernel encodes tty_nr as new_encode_dev(). */
        unsigned maj = (unsigned) ((tty_nr >> 8) & 0xfff);
        unsigned min = (unsigned) ((tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00));
        *ret = (struct xdev_proc_stat) {
                .state = state,
                .session = (pid_t) session,
                .tty_nr = makedev(maj, min),
                .start = start,
                .flags = (unsigned) flags,
        };
        return 0;
}

bool xdev_pid_is_alive(pid_t pid, uint64_t starttime) {
        struct xdev_proc_stat st;

        if (xdev_proc_stat(pid, &st) < 0)
                return false;
        return st.start == starttime;
}
