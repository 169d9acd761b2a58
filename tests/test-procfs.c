/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sweeper's parsers without root: a process's status (procfs.h: the
 * four uids, the parent, the permitted capabilities) and an io_uring's
 * fdinfo (uring.h: the registered files it lists, read to the end in
 * bounded memory, the scan budget), the walk of numbered entries, and
 * whether a process's credentials may open a node (access.h). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "inflight.h"
#include "procfs.h"
#include "uring.h"
#include "runner.h"

/* A status as the kernel prints it, trimmed. */
static const char status_text[] =
        "Name:\tXorg\n"
        "Umask:\t0022\n"
        "State:\tS (sleeping)\n"
        "Tgid:\t812\n"
        "Pid:\t812\n"
        "PPid:\t790\n"
        "Uid:\t1000\t0\t0\t1001\n"
        "Gid:\t1000\t1000\t1000\t1000\n"
        "CapInh:\t0000000000000000\n"
        "CapPrm:\t00000000000000c0\n"
        "CapEff:\t0000000000000000\n"
        "voluntary_ctxt_switches:\t1500\n"
        "nonvoluntary_ctxt_switches:\t27\n";

START_TEST(test_status_fields) {
        struct xdev_proc_status st;

        ck_assert_int_eq(xdev_proc_status_parse(status_text, &st), 0);
        ck_assert_uint_eq(st.uid[0], 1000);
        ck_assert_uint_eq(st.uid[1], 0);
        ck_assert_uint_eq(st.uid[2], 0);
        ck_assert_uint_eq(st.uid[3], 1001);
        ck_assert(st.has_ppid && st.ppid == 790);
        ck_assert(st.has_cap_prm && st.cap_prm == 0xc0); /* CAP_SETGID, CAP_SETUID */
        ck_assert_int_eq(st.state, 'S');
        ck_assert(st.has_switches && st.switches == 1527);
}
END_TEST

/* What the daemon's looks read of a display server: its state and its
 * context switches, the two counts or neither. */
START_TEST(test_status_state_and_switches) {
        struct xdev_proc_status st;

        ck_assert_int_eq(xdev_proc_status_parse("Name:\tx\nState:\tT (stopped)\nUid:\t5\t5\t5\t5\n"
                                                "nonvoluntary_ctxt_switches:\t3\n",
                                                &st),
                         0);
        ck_assert_int_eq(st.state, 'T');
        ck_assert_msg(!st.has_switches, "one count taken for both");
        ck_assert_int_eq(xdev_proc_status_parse("Name:\tx\nUid:\t5\t5\t5\t5\n"
                                                "voluntary_ctxt_switches:\t18446744073709551615\n"
                                                "nonvoluntary_ctxt_switches:\t1\n",
                                                &st),
                         0);
        ck_assert_int_eq(st.state, '\0');
        ck_assert_msg(!st.has_switches, "a sum that overflows taken");
        ck_assert_int_eq(xdev_proc_status_parse("Name:\tx\nState:\t\x01\nUid:\t5\t5\t5\t5\n", &st),
                         0);
        ck_assert_int_eq(st.state, '\0');
}
END_TEST

START_TEST(test_status_optional_lines) {
        struct xdev_proc_status st;

        ck_assert_int_eq(xdev_proc_status_parse("Name:\tx\nUid:\t5\t6\t7\t8\n", &st), 0);
        ck_assert_uint_eq(st.uid[0], 5);
        ck_assert_uint_eq(st.uid[3], 8);
        ck_assert(!st.has_ppid && !st.has_cap_prm);
}
END_TEST

START_TEST(test_status_malformed) {
        static const char *const bad[] = {
                "",
                "Name:\tx\n",
                "Name:\tx\nUid:\t1000\t1000\t1000\n",       /* three uids */
                "Name:\tx\nUid:\tabc\t1\t1\t1\n",           /* not a number */
                "Uid:\t1000\t1000\t1000\t1000\n",           /* not after a newline: not a line */
                "Name:\tx\nuid:\t1000\t1000\t1000\t1000\n", /* the name's case */
        };
        struct xdev_proc_status st = { .uid = { 42, 42, 42, 42 } };

        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                ck_assert_msg(xdev_proc_status_parse(bad[i], &st) == -EIO, "accepted \"%s\"",
                              bad[i]);
        /* a refused text leaves the output alone */
        ck_assert_uint_eq(st.uid[0], 42);
}
END_TEST

/* The credentials a process opens files with: the fs uid and gid, the
 * supplementary groups; more groups than kept make them incomplete. */
START_TEST(test_creds_fields) {
        static const char text[] =
                "Name:\tXorg\n"
                "Uid:\t1000\t1000\t1000\t1001\n"
                "Gid:\t100\t100\t100\t101\n"
                "FDSize:\t64\n"
                "Groups:\t24 25 29 104 \n"
                "NStgid:\t812\n";
        struct xdev_creds c;
        char many[1024] = "Uid:\t1 1 1 1\nGid:\t1 1 1 1\nGroups:\t";

        ck_assert_int_eq(xdev_proc_creds_parse(text, &c), 0);
        ck_assert_uint_eq(c.fsuid, 1001);
        ck_assert_uint_eq(c.fsgid, 101);
        ck_assert_uint_eq(c.n_groups, 4);
        ck_assert(c.complete && c.groups[0] == 24 && c.groups[3] == 104);
        ck_assert_int_eq(xdev_proc_creds_parse("\nUid:\t1 1 1 1\nGid:\t1 1 1 1\nGroups:\t\n", &c),
                         0);
        ck_assert(c.complete && c.n_groups == 0);
        for (int g = 0; g <= XDEV_CREDS_GROUPS_MAX; g++)
                (void) snprintf(many + strlen(many), sizeof many - strlen(many), "%d ", 1000 + g);
        (void) strcat(many, "\n");
        memmove(many + 1, many, strlen(many) + 1);
        many[0] = '\n';
        ck_assert_int_eq(xdev_proc_creds_parse(many, &c), 0);
        ck_assert(!c.complete && c.n_groups == XDEV_CREDS_GROUPS_MAX);

        static const char *const bad[] = {
                "\nUid:\t1 1 1 1\nGid:\t1 1 1 1\n",               /* no Groups */
                "\nUid:\t1 1 1 1\nGroups:\t5\n",                  /* no Gid */
                "\nUid:\t1 1 1 1\nGid:\t1 1 1 1\nGroups:\t5",     /* cut: 5 of 56? */
                "\nUid:\t1 1 1 1\nGid:\t1 1 1 1\nGroups:\t5 x\n", /* not a number */
                "\nUid:\t1 1 1 1\nGid:\t1 1 1 1\nGroups:\t99999999999\n",
        };
        struct xdev_creds keep = { .fsuid = 42 };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                ck_assert_msg(xdev_proc_creds_parse(bad[i], &keep) == -EIO, "accepted \"%s\"",
                              bad[i]);
        ck_assert_uint_eq(keep.fsuid, 42);
}
END_TEST

/* The kernel's decision, without capabilities: owner, named user, the
 * group class under the mask (any matching entry that grants), other. */
START_TEST(test_creds_may) {
        struct xdev_creds alice = { .fsuid = 1000, .fsgid = 1000, .complete = true };
        struct xdev_creds carol = {
                .fsuid = 1002, .fsgid = 1002, .groups = { 104 }, .n_groups = 1, .complete = true
        };
        struct xdev_creds root_grp = { .fsuid = 1003, .fsgid = 0, .complete = true };
        const unsigned r = XDEV_MAY_READ, rw = XDEV_MAY_READ | XDEV_MAY_WRITE;

        /* root:input 0660, no ACL: a member of input reads, alice not */
        ck_assert(xdev_creds_may(&carol, 0, 104, 0660, NULL, 0, rw));
        ck_assert(!xdev_creds_may(&alice, 0, 104, 0660, NULL, 0, r));
        ck_assert(xdev_creds_may(&root_grp, 0, 0, 0640, NULL, 0, r));
        ck_assert(!xdev_creds_may(&root_grp, 0, 0, 0640, NULL, 0, rw));
        /* 0666 (a render node): anyone */
        ck_assert(xdev_creds_may(&alice, 0, 44, 0666, NULL, 0, rw));
        /* the owner's bits, even when other has more */
        ck_assert(!xdev_creds_may(&alice, 1000, 44, 0066, NULL, 0, r));

        /* root:input 0660 with alice's grant: u:1000:rw, mask rw */
        struct xdev_acl_entry granted[] = {
                { ACL_USER_OBJ, 0, 6 }, { ACL_USER, 1000, 6 }, { ACL_GROUP_OBJ, 0, 6 },
                { ACL_MASK, 0, 6 },     { ACL_OTHER, 0, 0 },
        };
        ck_assert(xdev_creds_may(&alice, 0, 104, 0660, granted, 5, rw));
        ck_assert(xdev_creds_may(&carol, 0, 104, 0660, granted, 5, rw));
        struct xdev_creds dave = { .fsuid = 1004, .fsgid = 1004, .complete = true };
        ck_assert(!xdev_creds_may(&dave, 0, 104, 0660, granted, 5, r));
        /* the mask limits a named user and the group class, not other */
        granted[3].perm = 4;
        ck_assert(!xdev_creds_may(&alice, 0, 104, 0660, granted, 5, rw));
        ck_assert(xdev_creds_may(&alice, 0, 104, 0660, granted, 5, r));
        granted[4].perm = 6;
        ck_assert(xdev_creds_may(&dave, 0, 104, 0660, granted, 5, rw));
        /* a group that matches but grants too little denies, even though
         * other would grant */
        ck_assert(!xdev_creds_may(&carol, 0, 104, 0660, granted, 5, rw));
        /* a named group */
        struct xdev_acl_entry named[] = {
                { ACL_USER_OBJ, 0, 6 }, { ACL_GROUP_OBJ, 0, 0 }, { ACL_GROUP, 1004, 4 },
                { ACL_MASK, 0, 4 },     { ACL_OTHER, 0, 0 },
        };
        ck_assert(xdev_creds_may(&dave, 0, 0, 0640, named, 5, r));
        ck_assert(!xdev_creds_may(&dave, 0, 0, 0640, named, 5, rw));
        ck_assert(!xdev_creds_may(&alice, 0, 0, 0640, named, 5, r));
}
END_TEST

/* The process's own status, through /proc as the sweep reads it. */
START_TEST(test_status_read_self) {
        struct xdev_proc_status st;
        int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ck_assert_int_ge(procfd, 0);
        ck_assert_int_eq(xdev_proc_status_read(procfd, getpid(), &st), 0);
        ck_assert_uint_eq(st.uid[0], getuid());
        ck_assert_uint_eq(st.uid[1], geteuid());
        ck_assert(st.has_ppid && st.ppid == getppid());
        ck_assert(st.has_cap_prm);
        /* a pid that is not there */
        ck_assert_int_eq(xdev_proc_status_read(procfd, 0x7ffffff0, &st), -ESRCH);
        (void) close(procfd);
}
END_TEST

/* /proc/PID/syscall: the call a task is blocked in, or that it runs. */
START_TEST(test_syscall_parse) {
        long nr = -7;

        ck_assert_int_eq(xdev_proc_syscall_parse(
                                 "232 0x4 0x7ffc 0x1 0xffffffff 0x0 0x0 0x7ffc 0x7f1a\n", &nr),
                         0);
        ck_assert_int_eq(nr, 232);
        ck_assert_int_eq(xdev_proc_syscall_parse("running\n", &nr), -EBUSY);
        ck_assert_int_eq(xdev_proc_syscall_parse("running", &nr), -EBUSY);
        static const char *const bad[] = {
                "-1 0x7ffc 0x7f1a\n",          "",       "runningx", "12a 0x0",
                "99999999999999999999999 0x0", " 7 0x0", "x"
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                nr = -7;
                ck_assert_msg(xdev_proc_syscall_parse(bad[i], &nr) == -EIO && nr == -7,
                              "accepted \"%s\"", bad[i]);
        }
        ck_assert(xdev_syscall_waits_for_events(SYS_ppoll));
        ck_assert(xdev_syscall_waits_for_events(SYS_epoll_pwait));
#ifdef SYS_epoll_wait
        ck_assert(xdev_syscall_waits_for_events(SYS_epoll_wait));
#endif
        ck_assert(!xdev_syscall_waits_for_events(SYS_clock_nanosleep));
        ck_assert(!xdev_syscall_waits_for_events(SYS_read));
        ck_assert(!xdev_syscall_waits_for_events(-1));
}
END_TEST

/* A child blocked in ppoll is seen waiting for events, one in nanosleep
 * not (the daemon's looks tell an event loop from a wait with them). */
START_TEST(test_syscall_read_child) {
        int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        long nr;

        ck_assert_int_ge(procfd, 0);
        for (int sleeper = 0; sleeper < 2; sleeper++) {
                pid_t pid = fork();
                ck_assert_int_ge(pid, 0);
                if (pid == 0) {
                        for (;;)
                                if (sleeper)
                                        (void) nanosleep(&(struct timespec) { 60, 0 }, NULL);
                                else
                                        (void) ppoll(NULL, 0, NULL, NULL);
                }
                int r = -1;
                for (int ms = 0; ms < 5000; ms += 10) {
                        r = xdev_proc_syscall_read(procfd, pid, &nr);
                        if (r == 0 &&
                            (sleeper ? nr == SYS_clock_nanosleep || nr == SYS_nanosleep
                                     : nr == SYS_ppoll))
                                break;
                        (void) usleep(10000);
                }
                ck_assert_int_eq(r, 0);
                ck_assert_msg(xdev_syscall_waits_for_events(nr) == !sleeper,
                              "child %s seen in syscall %ld", sleeper ? "in nanosleep" : "in ppoll",
                              nr);
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
        }
        ck_assert_int_eq(xdev_proc_syscall_read(procfd, 0x7ffffff0, &nr), -ESRCH);
        (void) close(procfd);
}
END_TEST

/* /proc's numbered entries: pids only, this process among them. */
START_TEST(test_numdir_walks_pids) {
        bool self = false;
        const char *name;
        uint64_t num;
        DIR *d;

        ck_assert_int_eq(xdev_numdir_open(AT_FDCWD, "/proc", &d), 0);
        while (xdev_numdir_next(d, &num, &name)) {
                ck_assert_msg(strspn(name, "0123456789") == strlen(name), "entry \"%s\"", name);
                self = self || (pid_t) num == getpid();
        }
        (void) closedir(d);
        ck_assert_msg(self, "the walk did not see this process");
        ck_assert_int_eq(xdev_numdir_open(AT_FDCWD, "/proc/self/status", &d), -ENOTDIR);
}
END_TEST

/* An fd whose reading gives TEXT, as a ring's fdinfo would. */
static int fdinfo(const char *text) {
        int fd = memfd_create("fdinfo", MFD_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
        return fd;
}

static int find(const char *text, unsigned budget, unsigned *cost, size_t *idx) {
        static const char *const names[] = { "/dev/input/event3", "/dev/dri/card0" };
        int fd = fdinfo(text), r;

        *cost = 0;
        *idx = 99;
        r = xdev_uring_fdinfo_find(fd, names, 2, budget, cost, idx, NULL);
        (void) close(fd);
        return r;
}

START_TEST(test_fdinfo_lists) {
        unsigned cost;
        size_t idx;

        /* a newer kernel: escaped paths */
        ck_assert_int_eq(find("pos:\t0\nSqMask:\t0x3\nUserFiles:\t2\n    0: /dev/null\n    1: "
                              "/dev/dri/card0\nUserBufs:\t0\n",
                              8192, &cost, &idx),
                         1);
        ck_assert_uint_eq(idx, 1);
        ck_assert_uint_eq(cost, 1);
        /* an older kernel: bare names */
        ck_assert_int_eq(find("UserFiles:\t1\n    0: event3\n", 8192, &cost, &idx), 1);
        ck_assert_uint_eq(idx, 0);
        /* none of the names; a name that only ends like one; a file of
         * the node's name that is not the node (the user's own event3) */
        ck_assert_int_eq(find("UserFiles:\t3\n    0: /tmp/x\n    1: /tmp/myevent3\n    2: "
                              "/home/alice/event3\n",
                              8192, &cost, &idx),
                         0);
        ck_assert_uint_eq(idx, 99);
        /* a name before the list is not in it */
        ck_assert_int_eq(find("    0: /dev/dri/card0\nUserFiles:\t0\n", 8192, &cost, &idx), 0);
        /* a ring whose lock was busy lists nothing: unknown, not empty (a
         * newer kernel prints no io_uring section; an older one the count
         * of its files and none of them) */
        ck_assert_int_eq(find("pos:\t0\nflags:\t02\n", 8192, &cost, &idx), -EAGAIN);
        ck_assert_int_eq(find("SqMask:\t0x3\nUserFiles:\t2\nUserBufs:\t0\n", 8192, &cost, &idx),
                         -EAGAIN);
        ck_assert_int_eq(find("UserFiles:\t2\n    1: /dev/null\nUserBufs:\t0\n", 8192, &cost, &idx),
                         0);
        /* a last line without its newline is not whole: the one file
         * counted is not listed, unknown */
        ck_assert_int_eq(find("UserFiles:\t1\n    0: /dev/dri/card0", 8192, &cost, &idx), -EAGAIN);
        /* indexes past 99999 are not padded */
        ck_assert_int_eq(find("UserFiles:\t1\n100000: /dev/input/event3\n", 8192, &cost, &idx), 1);
}
END_TEST

/* Padding before the node, and a line longer than any buffer: read to the
 * end, each line kept as its head and tail. */
START_TEST(test_fdinfo_long) {
        size_t size = 4 << 20, off = 0, idx;
        char *text = malloc(size);
        unsigned cost;

        ck_assert_ptr_nonnull(text);
        off += (size_t) snprintf(text + off, size - off, "UserFiles:\t3001\n");
        for (unsigned i = 0; i < 3000; i++)
                off += (size_t) snprintf(text + off, size - off, "%5u: /dev/null\n", i);
        /* a directory name of 100000 bytes, then the node's name: not the
         * node; then the node */
        off += (size_t) snprintf(text + off, size - off, "3000: /");
        memset(text + off, 'd', 100000);
        off += 100000;
        off += (size_t) snprintf(text + off, size - off, "/card0\n3001: /dev/dri/card0\n");
        ck_assert_int_eq(find(text, 8192, &cost, &idx), 1);
        ck_assert_uint_eq(idx, 1);
        ck_assert_uint_eq(cost, 3001);
        /* the same list over a budget of 1000 lines */
        ck_assert_int_eq(find(text, 1000, &cost, &idx), -E2BIG);
        ck_assert_uint_eq(cost, 1001);
        free(text);
}
END_TEST

START_TEST(test_fdinfo_unreadable) {
        static const char *const names[] = { "card0" };
        unsigned cost = 0;
        size_t idx;
        int p[2];

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        ck_assert_int_eq(xdev_uring_fdinfo_find(p[1], names, 1, 8192, &cost, &idx, NULL), -EBADF);
        (void) close(p[0]);
        (void) close(p[1]);
}
END_TEST

/* The "ino:" line above the list names the ring that was read. */
START_TEST(test_fdinfo_names_its_ring) {
        static const char *const names[] = { "/dev/dri/card0" };
        unsigned cost = 0;
        uint64_t ino = 7;
        size_t idx;
        int fd =
                fdinfo("pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t16369571\n"
                       "UserFiles:\t1\n    0: /dev/null\n");

        ck_assert_int_eq(xdev_uring_fdinfo_find(fd, names, 1, 8192, &cost, &idx, &ino), 0);
        ck_assert_uint_eq(ino, 16369571);
        (void) close(fd);
        /* one of a list is a name, not the ring's inode */
        fd = fdinfo("UserFiles:\t0\nino:\t5\n");
        ck_assert_int_eq(xdev_uring_fdinfo_find(fd, names, 1, 8192, &cost, &idx, &ino), 0);
        ck_assert_uint_eq(ino, 0);
        (void) close(fd);
}
END_TEST

static int maps_read(const char *text, size_t max, size_t *lines, struct xdev_uring_mapped *m) {
        int fd = fdinfo(text), r;

        *lines = 0;
        r = xdev_uring_maps_read(fd, max, lines, m);
        (void) close(fd);
        return r;
}

#define RING_LINE(start, off, ino) \
        start "-" start "f rw-s " off " 00:10 " ino "                   anon_inode:[io_uring]\n"

/* A ring is a mapping the kernel names "anon_inode:[io_uring]", kept once
 * whatever part of it is mapped; a file whose path ends like that name, or
 * a name the kernel escaped, is none. */
START_TEST(test_maps_rings) {
        struct xdev_uring_mapped m = { 0 };
        size_t lines;

        ck_assert_int_eq(
                maps_read(
                        "55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1837 /usr/bin/cat\n"
                        "7f00aa000000-7f00aa021000 rw-p 00000000 00:00 0 \n" RING_LINE(
                                "7f8dcbfa0000", "10000000", "16080002")
                                RING_LINE("7f8dcbfa1000", "00000000", "16080002") RING_LINE(
                                        "7f8dcbfa3000", "00000000",
                                        "16080003") "7f8dcbfa5000-7f8dcbfa6000 rw-s 00000000 fd:01 99      "
                                                    "/home/a/x anon_inode:[io_uring]\n"
                                                    "7f8dcbfa6000-7f8dcbfa7000 rw-s 00000000 fd:01 98      "
                                                    "/home/a/x\\012anon_inode:[io_uring] (deleted)\n"
                                                    "7ffd1c3d9000-7ffd1c3fa000 rw-p 00000000 00:00 0 [stack]\n",
                        100, &lines, &m),
                0);
        ck_assert_uint_eq(lines, 8);
        ck_assert_uint_eq(m.n, 2);
        ck_assert(!m.overflow);
        ck_assert_uint_eq(m.ino[0], 16080002);
        ck_assert_uint_eq(m.ino[1], 16080003);
        ck_assert(m.dev[0] == makedev(0, 0x10));
        /* none; a last line without its newline is read */
        ck_assert_int_eq(maps_read("", 100, &lines, &m), 0);
        ck_assert_uint_eq(m.n, 0);
        ck_assert_int_eq(maps_read("7f8dcbfa1000-7f8dcbfa2000 rw-s 00000000 00:10 42 "
                                   "anon_inode:[io_uring]",
                                   100, &lines, &m),
                         0);
        ck_assert_uint_eq(m.n, 1);
        ck_assert_uint_eq(m.ino[0], 42);
}
END_TEST

/* Past the budget the reading stops; a ring's name after fields that do not
 * parse is an error; either leaves the result alone. More rings than are
 * kept are told. A line longer than any ring's is passed over whole. */
START_TEST(test_maps_bounds) {
        struct xdev_uring_mapped m = { .n = 99 };
        size_t size = 1 << 20, off = 0, lines;
        char *text = malloc(size);

        ck_assert_ptr_nonnull(text);
        ck_assert_int_eq(maps_read(RING_LINE("7f0000000000", "0", "1")
                                           RING_LINE("7f0000001000", "0", "2")
                                                   RING_LINE("7f0000002000", "0", "3"),
                                   2, &lines, &m),
                         -E2BIG);
        ck_assert_uint_eq(lines, 3);
        ck_assert_uint_eq(m.n, 99);
        ck_assert_int_eq(
                maps_read("7f0000000000-7f0000001000 rw-s 0 00:10 x anon_inode:[io_uring]\n", 100,
                          &lines, &m),
                -EIO);
        ck_assert_int_eq(
                maps_read("7f0000000000-7f0000001000 rw-s 0 00:10 7anon_inode:[io_uring]\n", 100,
                          &lines, &m),
                -EIO);
        ck_assert_uint_eq(m.n, 99);
        for (unsigned i = 0; i <= XDEV_URING_MAPPED_MAX; i++)
                off += (size_t) snprintf(text + off, size - off,
                                         "7f%010x-7f%010x rw-s 00000000 00:10 %u  "
                                         "anon_inode:[io_uring]\n",
                                         i << 12, (i + 1) << 12, 1000 + i);
        /* a file's path of 4000 bytes that ends like a ring's name */
        off += (size_t) snprintf(text + off, size - off,
                                 "7f0000000000-7f0000001000 r--p 0 fd:01 9 /");
        memset(text + off, 'd', 4000);
        off += 4000;
        (void) snprintf(text + off, size - off, " anon_inode:[io_uring]\n");
        ck_assert_int_eq(maps_read(text, 1000, &lines, &m), 0);
        ck_assert_uint_eq(lines, XDEV_URING_MAPPED_MAX + 2);
        ck_assert_uint_eq(m.n, XDEV_URING_MAPPED_MAX);
        ck_assert(m.overflow);
        free(text);
}
END_TEST

/* Files in flight (inflight.h): real sockets of this process, real
 * character devices (/dev/null, /dev/zero, /dev/full) as the nodes. */

static void send_files(int sock, const char *data, size_t len, const int *fds, size_t n) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } c;
        struct iovec iov = { (void *) data, len };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        ck_assert_uint_le(n, 4);
        if (n > 0) {
                struct cmsghdr *h;
                memset(c.buf, 0, sizeof c.buf);
                mh.msg_control = c.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                h = CMSG_FIRSTHDR(&mh);
                h->cmsg_level = SOL_SOCKET;
                h->cmsg_type = SCM_RIGHTS;
                h->cmsg_len = CMSG_LEN(sizeof(int) * n);
                memcpy(CMSG_DATA(h), fds, sizeof(int) * n);
        }
        ck_assert_int_eq(sendmsg(sock, &mh, MSG_NOSIGNAL), (ssize_t) len);
}

/* Receives one message into DATA (SIZE), its files into FDS (up to 4).
 * Returns the bytes read; *N the files. */
static ssize_t recv_files(int sock, char *data, size_t size, int *fds, size_t *n) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } c;
        struct iovec iov = { data, size };
        struct msghdr mh = { .msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = c.buf,
                             .msg_controllen = sizeof c.buf };
        ssize_t r = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

        *n = 0;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); r >= 0 && h; h = CMSG_NXTHDR(&mh, h))
                if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
                        size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        memcpy(fds + *n, CMSG_DATA(h), k * sizeof(int));
                        *n += k;
                }
        return r;
}

static int dev_open(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        return fd;
}

static dev_t rdev_of_fd(int fd) {
        struct stat st;
        ck_assert_int_eq(fstat(fd, &st), 0);
        return S_ISCHR(st.st_mode) ? st.st_rdev : 0;
}

static dev_t rdev_of(const char *path) {
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        return st.st_rdev;
}

static int queued(int sock) {
        char path[64];
        int fd, n;

        (void) snprintf(path, sizeof path, "/proc/self/fdinfo/%d", sock);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        n = xdev_inflight_count(fd);
        (void) close(fd);
        return n;
}

static int peek_off(int sock) {
        int off = 0;
        socklen_t l = sizeof off;
        ck_assert_int_eq(getsockopt(sock, SOL_SOCKET, SO_PEEK_OFF, &off, &l), 0);
        return off;
}

static bool found_has(const struct xdev_inflight *f, size_t node, enum xdev_inflight_state st) {
        for (size_t i = 0; i < f->n; i++)
                if (f->found[i].node == node && f->found[i].state == st)
                        return true;
        return false;
}

START_TEST(test_inflight_count_parses_fdinfo) {
        static const struct {
                const char *text;
                int want;
        } cases[] = {
                { "pos:\t0\nflags:\t02\nmnt_id:\t8\nino:\t123\nscm_fds: 7\n", 7 },
                { "pos:\t0\nflags:\t02\n", 0 },
                { "scm_fds:\t0\n", 0 },
                { "scm_fds: x\n", -EIO },
                { "scm_fds: 99999999999\n", -EIO },
                { "xscm_fds: 3\n", 0 },
                { "scm_fds: 12", 12 },
        };

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                int p[2];
                ck_assert_int_eq(pipe(p), 0);
                ck_assert_int_eq(write(p[1], cases[i].text, strlen(cases[i].text)),
                                 (ssize_t) strlen(cases[i].text));
                (void) close(p[1]);
                ck_assert_msg(xdev_inflight_count(p[0]) == cases[i].want, "case %zu", i);
                (void) close(p[0]);
        }
}
END_TEST

/* A stream socket's whole queue is walked, and the queue of a socket in
 * flight in it; the queue is left as it was for its owner to read. */
START_TEST(test_inflight_stream_walks_the_queue) {
        int sp[2], nested[2], fds[4], got[4];
        int zero = dev_open("/dev/zero"), null = dev_open("/dev/null"),
            full = dev_open("/dev/full");
        struct xdev_inflight_node nodes[] = { { rdev_of("/dev/null"), XDEV_INFLIGHT_OTHER },
                                              { rdev_of("/dev/full"), XDEV_INFLIGHT_OTHER },
                                              { rdev_of("/dev/random"), XDEV_INFLIGHT_OTHER } };
        struct xdev_inflight f;
        char data[16];
        size_t n;
        ssize_t r;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, nested), 0);
        send_files(nested[0], "n", 1, &full, 1);
        send_files(sp[0], "a", 1, &zero, 1);
        send_files(sp[0], "bb", 2, NULL, 0);
        fds[0] = null;
        fds[1] = nested[1];
        send_files(sp[0], "c", 1, fds, 2);
        (void) close(nested[1]); /* in flight only, now */
        ck_assert_int_eq(queued(sp[1]), 3);
        ck_assert_int_eq(queued(sp[0]), 0);

        ck_assert_int_eq(xdev_inflight_peek(sp[1], nodes, 3, false, 5000, &f), 0);
        ck_assert_msg(!f.unknown, "unknown: %s", f.why);
        ck_assert_uint_eq(f.n, 2);
        ck_assert(found_has(&f, 0, XDEV_INFLIGHT_LIVE)); /* /dev/null, in sp's queue */
        ck_assert(found_has(&f, 1, XDEV_INFLIGHT_LIVE)); /* /dev/full, in the nested one */
        ck_assert_uint_eq(f.sockets, 2);
        ck_assert_uint_ge(f.messages, 3);
        ck_assert_int_eq(peek_off(sp[1]), -1);

        /* the owner reads it all, as sent */
        r = recv_files(sp[1], data, 1, got, &n);
        ck_assert_int_eq(r, 1);
        ck_assert(data[0] == 'a' && n == 1 && rdev_of_fd(got[0]) == rdev_of("/dev/zero"));
        r = recv_files(sp[1], data, 2, got, &n); /* a stream: the bytes, not the sends */
        ck_assert_int_eq(r, 2);
        ck_assert(memcmp(data, "bb", 2) == 0 && n == 0);
        r = recv_files(sp[1], data, sizeof data, got, &n);
        ck_assert_int_eq(r, 1);
        ck_assert(data[0] == 'c' && n == 2 && rdev_of_fd(got[0]) == rdev_of("/dev/null"));
        r = recv_files(got[1], data, sizeof data, fds, &n);
        ck_assert_int_eq(r, 1);
        ck_assert(data[0] == 'n' && n == 1 && rdev_of_fd(fds[0]) == rdev_of("/dev/full"));
        ck_assert_int_eq(queued(sp[1]), 0);
}
END_TEST

/* Datagrams, empty ones among them, are each peeked once. */
START_TEST(test_inflight_datagrams) {
        int sp[2], null = dev_open("/dev/null"), zero = dev_open("/dev/zero"),
                   full = dev_open("/dev/full"), got[4];
        struct xdev_inflight_node nodes[] = { { rdev_of("/dev/null"), XDEV_INFLIGHT_OTHER },
                                              { rdev_of("/dev/full"), XDEV_INFLIGHT_OTHER } };
        struct xdev_inflight f;
        char data[16];
        size_t n;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
        send_files(sp[0], "", 0, &zero, 1);
        send_files(sp[0], "x", 1, NULL, 0);
        send_files(sp[0], "", 0, &null, 1);
        send_files(sp[0], "yy", 2, &full, 1);
        ck_assert_int_eq(xdev_inflight_peek(sp[1], nodes, 2, false, 5000, &f), 0);
        ck_assert_msg(!f.unknown, "unknown: %s", f.why);
        ck_assert_uint_eq(f.n, 2);
        ck_assert(found_has(&f, 0, XDEV_INFLIGHT_LIVE) && found_has(&f, 1, XDEV_INFLIGHT_LIVE));
        ck_assert_uint_eq(f.messages, 4);
        ck_assert_int_eq(peek_off(sp[1]), -1);
        ck_assert_int_eq(recv_files(sp[1], data, sizeof data, got, &n), 0);
        ck_assert(n == 1 && rdev_of_fd(got[0]) == rdev_of("/dev/zero"));
        ck_assert_int_eq(recv_files(sp[1], data, sizeof data, got, &n), 1);
        ck_assert(data[0] == 'x' && n == 0);
        ck_assert_int_eq(recv_files(sp[1], data, sizeof data, got, &n), 0);
        ck_assert(n == 1 && rdev_of_fd(got[0]) == rdev_of("/dev/null"));
        ck_assert_int_eq(recv_files(sp[1], data, sizeof data, got, &n), 2);
        ck_assert(n == 1 && rdev_of_fd(got[0]) == rdev_of("/dev/full"));
}
END_TEST

/* A connection not accepted yet cannot be peeked at: unknown, said. */
START_TEST(test_inflight_listening_is_unknown) {
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        struct xdev_inflight_node node = { rdev_of("/dev/null"), XDEV_INFLIGHT_OTHER };
        int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
            c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), null = dev_open("/dev/null");
        struct xdev_inflight f;

        (void) snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "xdev-inflight-%d", (int) getpid());
        ck_assert_int_eq(bind(l, (struct sockaddr *) &a, sizeof a), 0);
        ck_assert_int_eq(listen(l, 4), 0);
        ck_assert_int_eq(connect(c, (struct sockaddr *) &a, sizeof a), 0);
        send_files(c, "h", 1, &null, 1);
        ck_assert_int_ge(queued(l), 1);
        ck_assert_int_eq(xdev_inflight_peek(l, &node, 1, false, 5000, &f), 0);
        ck_assert(f.unknown && f.listening);
        ck_assert_uint_eq(f.n, 0);
        ck_assert_ptr_nonnull(strstr(f.why, "listening"));
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("procfs");
        TCase *tc = h_tcase(s, "parsers", 0, NULL, NULL);
        tcase_add_test(tc, test_status_fields);
        tcase_add_test(tc, test_status_optional_lines);
        tcase_add_test(tc, test_status_state_and_switches);
        tcase_add_test(tc, test_status_malformed);
        tcase_add_test(tc, test_status_read_self);
        tcase_add_test(tc, test_syscall_parse);
        tcase_add_test(tc, test_syscall_read_child);
        tcase_add_test(tc, test_creds_fields);
        tcase_add_test(tc, test_creds_may);
        tcase_add_test(tc, test_numdir_walks_pids);
        tcase_add_test(tc, test_fdinfo_lists);
        tcase_add_test(tc, test_fdinfo_long);
        tcase_add_test(tc, test_fdinfo_unreadable);
        tcase_add_test(tc, test_fdinfo_names_its_ring);
        tcase_add_test(tc, test_maps_rings);
        tcase_add_test(tc, test_maps_bounds);
        tc = h_tcase(s, "inflight", 0, NULL, NULL);
        tcase_add_test(tc, test_inflight_count_parses_fdinfo);
        tcase_add_test(tc, test_inflight_stream_walks_the_queue);
        tcase_add_test(tc, test_inflight_datagrams);
        tcase_add_test(tc, test_inflight_listening_is_unknown);
        return s;
}

H_SUITE(suite, H_ANY_USER)
H_MAIN(NULL)
