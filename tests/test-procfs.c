/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sweeper's parsers without root: a process's status (procfs.h: the
 * four uids, the parent, the permitted capabilities) and an io_uring's
 * fdinfo (uring.h: the registered files it lists, read to the end in
 * bounded memory, the scan budget), and the walk of numbered entries. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
        "CapEff:\t0000000000000000\n";

START_TEST(test_status_fields) {
        struct xdev_proc_status st;

        ck_assert_int_eq(xdev_proc_status_parse(status_text, &st), 0);
        ck_assert_uint_eq(st.uid[0], 1000);
        ck_assert_uint_eq(st.uid[1], 0);
        ck_assert_uint_eq(st.uid[2], 0);
        ck_assert_uint_eq(st.uid[3], 1001);
        ck_assert(st.has_ppid && st.ppid == 790);
        ck_assert(st.has_cap_prm && st.cap_prm == 0xc0); /* CAP_SETGID, CAP_SETUID */
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
        r = xdev_uring_fdinfo_find(fd, names, 2, budget, cost, idx);
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
        ck_assert_int_eq(xdev_uring_fdinfo_find(p[1], names, 1, 8192, &cost, &idx), -EBADF);
        (void) close(p[0]);
        (void) close(p[1]);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("procfs");
        TCase *tc = tcase_create("parsers");
        tcase_add_test(tc, test_status_fields);
        tcase_add_test(tc, test_status_optional_lines);
        tcase_add_test(tc, test_status_malformed);
        tcase_add_test(tc, test_status_read_self);
        tcase_add_test(tc, test_numdir_walks_pids);
        tcase_add_test(tc, test_fdinfo_lists);
        tcase_add_test(tc, test_fdinfo_long);
        tcase_add_test(tc, test_fdinfo_unreadable);
        suite_add_tcase(s, tc);
        return s;
}

H_CHECK_MAIN(suite)
