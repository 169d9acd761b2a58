/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading /proc, for the sweeper and xdevicesd's table of processes: a
 * process's status (its four uids, its parent, its permitted capabilities)
 * parsed from its text, and the walk over a directory of numbered entries
 * (/proc itself, PID/fd, PID/task). */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct xdev_proc_status {
        uid_t uid[4]; /* real, effective, saved, fs */
        bool has_ppid, has_cap_prm, has_switches;
        pid_t ppid;
        uint64_t cap_prm;  /* the permitted capabilities (CapPrm) */
        char state;        /* R, S, D, T, t, Z, ... ('\0' when not told) */
        uint64_t switches; /* context switches so far, voluntary or not */
};

/* Parses the text of /proc/PID/status: the Uid line is required, the PPid,
 * CapPrm and State lines and the two context switch counts are read when
 * present (HAS_SWITCHES only when both counts are). Returns 0, or -EIO when the Uid
 * line is missing or malformed (*RET then left alone). */
int xdev_proc_status_parse(const char *text, struct xdev_proc_status *ret);

/* Reads PID/status below PROCFD (an fd of /proc), no link followed, and
 * parses it. -ESRCH: gone or unreadable; -EIO: malformed. */
int xdev_proc_status_read(int procfd, pid_t pid, struct xdev_proc_status *ret);

/* Parses the text of /proc/PID/syscall: *RET_NR gets the number of the
 * system call the task is blocked in. Returns 0, -EBUSY when the task runs
 * ("running"), or -EIO when it is blocked outside a system call ("-1 ...")
 * or the text is malformed (*RET_NR then left alone). */
int xdev_proc_syscall_parse(const char *text, long *ret_nr);

/* Reads PID/syscall below PROCFD and parses it (root only: the kernel asks
 * for the right to ptrace). -ESRCH: gone or unreadable. */
int xdev_proc_syscall_read(int procfd, pid_t pid, long *ret_nr);

/* Whether system call NR waits for events on fds (the poll, select and
 * epoll families): where an event loop sleeps when it has nothing to do. */
bool xdev_syscall_waits_for_events(long nr);

/* What a process opens files with: its file system uid and gid and its
 * supplementary groups (at most XDEV_CREDS_GROUPS_MAX of them; COMPLETE is
 * false when it has more, or its Groups line was cut). */
#define XDEV_CREDS_GROUPS_MAX 64
struct xdev_creds {
        uid_t fsuid;
        gid_t fsgid;
        gid_t groups[XDEV_CREDS_GROUPS_MAX];
        size_t n_groups;
        bool complete;
};

/* Parses the Uid, Gid and Groups lines of a /proc/PID/status text: the
 * fourth field of Uid and Gid, every number of Groups up to its end of
 * line. Returns 0, or -EIO when one of the three lines is missing or
 * malformed (*RET then left alone). */
int xdev_proc_creds_parse(const char *text, struct xdev_creds *ret);

/* Reads PID/status below PROCFD and parses its credentials. -ESRCH: gone
 * or unreadable; -EIO: malformed. */
int xdev_proc_creds_read(int procfd, pid_t pid, struct xdev_creds *ret);

/* Opens the directory PATH below DIRFD (AT_FDCWD: PATH as it is) without
 * following a link, for xdev_numdir_next(); closedir() closes it. Returns
 * 0 or -errno. */
int xdev_numdir_open(int dirfd, const char *path, DIR **ret);

/* The next entry of D whose name is a decimal number up to INT32_MAX (a
 * pid, a tid, an fd): false at the end. *RET_NAME (may be NULL) gets the
 * name, valid until the next call. */
bool xdev_numdir_next(DIR *d, uint64_t *ret_num, const char **ret_name);

/* A numeric directory read in batches no larger than asked for: reading
 * /proc/PID/fd makes the kernel set up an entry for each fd it lists, so
 * readdir()'s 32 KiB batch cost milliseconds for a process with thousands
 * of fds of which a scan budget lets it read a few (XDEV_FDDIR_BUF). */
#define XDEV_FDDIR_BUF 8192
struct xdev_fddir {
        int fd;
        size_t len, pos;
        uint64_t buf[XDEV_FDDIR_BUF / sizeof(uint64_t)]; /* aligned for dirent64 */
};
/* Opens DIRFD/PATH (O_NOFOLLOW). Returns 0 or -errno. */
int xdev_fddir_open(int dirfd, const char *path, struct xdev_fddir *d);
/* The next numeric entry, reading at most about WANT entries from the
 * kernel when its batch is used up; false at the end or on error. */
bool xdev_fddir_next(struct xdev_fddir *d, size_t want, uint64_t *ret_num, const char **ret_name);
void xdev_fddir_close(struct xdev_fddir *d);

/* Fields of /proc/PID/stat that identify a process over time and tie it to
 * its terminal. */
struct xdev_proc_stat {
        char state;     /* R, S, D, Z (zombie), X (dead), ... */
        pid_t session;  /* the session id: the pid of its leader */
        dev_t tty_nr;   /* the controlling tty, 0 when none */
        uint64_t start; /* start time in clock ticks since boot */
        unsigned flags; /* the kernel's PF_* flags of the task */
};
/* Reads those fields of /proc/PID/stat into *RET. Returns 0, or -errno
 * (-EIO: a line it cannot parse). */
int xdev_proc_stat(pid_t pid, struct xdev_proc_stat *ret);

/* True when PID is alive and still the process that started at STARTTIME. */
bool xdev_pid_is_alive(pid_t pid, uint64_t starttime);
