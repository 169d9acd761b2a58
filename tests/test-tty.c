/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which logins count: the PAM_RHOST/PAM_RUSER rule, a leader's liveness, the
 * names and numbers the core accepts (the PAM_TTY spellings: test-vt). */
#include "config.h"

#include <check.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"
#include "tty.h"
#include "util.h"
#include "runner.h"

START_TEST(test_local_items) {
        ck_assert(xdev_login_items_are_local("alice", NULL, NULL));
        ck_assert(xdev_login_items_are_local("alice", "", ""));
        /* su to oneself sets PAM_RUSER to the caller: a session inside a
         * session, which never counts */
        ck_assert(!xdev_login_items_are_local("alice", "alice", NULL));
        ck_assert(!xdev_login_items_are_local("alice", "bob", NULL));
        ck_assert(!xdev_login_items_are_local("", NULL, NULL));
        ck_assert(!xdev_login_items_are_local("root", "alice", NULL));
        ck_assert(!xdev_login_items_are_local("alice", NULL, "localhost"));
        ck_assert(!xdev_login_items_are_local("alice", NULL, "::1"));
        ck_assert(!xdev_login_items_are_local(NULL, "alice", NULL));
}
END_TEST

START_TEST(test_paths_and_names) {
        ck_assert(xdev_path_is_valid("/dev/input/event0"));
        ck_assert(xdev_path_is_valid("/dev/dri/renderD128"));
        ck_assert(!xdev_path_is_valid("/dev/"));
        ck_assert(!xdev_path_is_valid("/dev/../etc/shadow"));
        ck_assert(!xdev_path_is_valid("/dev/./input"));
        ck_assert(!xdev_path_is_valid("/dev//input"));
        ck_assert(!xdev_path_is_valid("/dev/input/"));
        ck_assert(!xdev_path_is_valid("/etc/shadow"));
        ck_assert(!xdev_path_is_valid("/dev/input/event 0"));
        ck_assert(!xdev_path_is_valid("/dev/input/event0\n"));
        ck_assert(xdev_name_is_valid("alice", 32));
        ck_assert(xdev_name_is_valid("machine$", 32));
        ck_assert(!xdev_name_is_valid("-alice", 32));
        ck_assert(!xdev_name_is_valid("al ice", 32));
        ck_assert(!xdev_name_is_valid("al$ice", 32));
        ck_assert(!xdev_name_is_valid("", 32));
        ck_assert(!xdev_name_is_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 32));
}
END_TEST

START_TEST(test_parse_uint) {
        uint64_t v;
        ck_assert_int_eq(xdev_parse_uint("0", 10, &v), 0);
        ck_assert_uint_eq(v, 0);
        ck_assert_int_eq(xdev_parse_uint("42", 42, &v), 0);
        ck_assert_int_lt(xdev_parse_uint("43", 42, &v), 0);
        ck_assert_int_lt(xdev_parse_uint("042", 100, &v), 0);
        ck_assert_int_lt(xdev_parse_uint("-1", 100, &v), 0);
        ck_assert_int_lt(xdev_parse_uint("99999999999999999999999", UINT64_MAX, &v), 0);
}
END_TEST

START_TEST(test_own_stat) {
        struct xdev_proc_stat st;
        ck_assert_int_eq(xdev_proc_stat(getpid(), &st), 0);
        ck_assert_int_eq(st.state, 'R');
        ck_assert_int_eq(st.session, getsid(0));
        ck_assert(xdev_pid_is_alive(getpid(), st.start));
        ck_assert(!xdev_pid_is_alive(getpid(), st.start + 1));
}
END_TEST

/* A leader that exited but was not waited for is a zombie: it must not
 * count as a live session even though its pid and start time still match. */
START_TEST(test_zombie_is_not_live) {
        struct xdev_proc_stat st = { 0 };
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(0);
        for (int i = 0; i < 2000 && (xdev_proc_stat(pid, &st) < 0 || st.state != 'Z'); i++)
                (void) usleep(1000);
        ck_assert_msg(st.state == 'Z', "child %d never became a zombie (state %c)", (int) pid,
                      st.state);
        ck_assert(xdev_pid_is_alive(pid, st.start)); /* the pid alone says "alive" */
        ck_assert(
                !xdev_leader_is_live(pid, st.start, major(st.tty_nr) == 4 ? minor(st.tty_nr) : 1));
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        ck_assert(!xdev_leader_is_live(pid, st.start, 1));
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("tty");
        TCase *tc = h_tcase(s, "validation", 0, NULL, NULL);
        tcase_add_test(tc, test_local_items);
        tcase_add_test(tc, test_zombie_is_not_live);
        tcase_add_test(tc, test_paths_and_names);
        tcase_add_test(tc, test_parse_uint);
        tcase_add_test(tc, test_own_stat);
        return s;
}

H_SUITE(suite, H_ANY_USER)
H_MAIN(NULL)
