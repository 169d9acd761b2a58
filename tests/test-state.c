/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state codec (round trip, and refusal of anything else) and the holder
 * election of doc/DESIGN.md §3.4. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "state.h"
#include "runner.h"

static const char good[] =
        "xdevices-state 1\n"
        "holder 1000\n"
        "session uid=1000 user=alice service=login vt=2 pid=123 start=456 since=1700000000\n"
        "session uid=1001 user=bob service=login vt=3 pid=124 start=457 since=1700000001\n"
        "node path=/dev/dri/card0 class=drm fsdev=0:5 ino=77 rdev=226:0 uid=0 gid=44 mode=20660 acl=u::rw-,g::rw-,o::--- grant=1000:rw:acl\n"
        "node path=/dev/tty2 class=vt fsdev=0:5 ino=78 rdev=4:2 uid=0 gid=5 mode=20620 acl=u::rw-,g::-w-,o::--- grant=1000:rw:acl\n"
        "node path=/dev/input/event0 class=input fsdev=0:5 ino=79 rdev=13:64 uid=0 gid=105 mode=20660 acl=- grant=1000:r:chown\n"
        "node path=/dev/input/event1 class=input fsdev=0:5 ino=80 rdev=13:65 uid=0 gid=105 mode=20660 acl=u::rw-,g::rw-,o::--- grant=-\n";

static char *format(const struct xdev_state *s) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_int_eq(xdev_state_format(s, f), 0);
        fclose(f);
        return buf;
}

START_TEST(test_round_trip) {
        struct xdev_state s = { 0 };
        ck_assert_int_eq(xdev_state_parse(&s, good, strlen(good), NULL), 0);
        ck_assert(s.has_holder);
        ck_assert_uint_eq(s.holder, 1000);
        ck_assert_uint_eq(s.n_sessions, 2);
        ck_assert_str_eq(s.sessions[1].user, "bob");
        ck_assert_uint_eq(s.n_nodes, 4);
        ck_assert_uint_eq(s.nodes[0].rdev, makedev(226, 0));
        ck_assert_uint_eq(s.nodes[0].mode, S_IFCHR | 0660);
        ck_assert_int_eq(s.nodes[2].gmode, XDEV_GRANT_CHOWN);
        ck_assert_ptr_null(s.nodes[2].acl);
        ck_assert(!s.nodes[3].granted);
        char *out = format(&s);
        ck_assert_str_eq(out, good);
        free(out);
        xdev_state_free(&s);
}
END_TEST

static void expect_refused(const char *text, const char *why) {
        struct xdev_state s = { 0 };
        struct xdev_session keep = {
                .uid = 7, .user = "keep", .service = "login", .vt = 5, .pid = 9, .start = 1
        };
        ck_assert_int_eq(xdev_state_add_session(&s, &keep), 0);
        ck_assert_msg(xdev_state_parse(&s, text, strlen(text), NULL) < 0, "accepted: %s", why);
        /* untouched on failure */
        ck_assert_uint_eq(s.n_sessions, 1);
        ck_assert_str_eq(s.sessions[0].user, "keep");
        xdev_state_free(&s);
}

START_TEST(test_refuses_everything_else) {
        char buf[2048];
        expect_refused("", "empty");
        expect_refused("xdevices-state 2\nholder -\n", "other version");
        expect_refused("xdevices-state 1\n", "no holder line");
        expect_refused("xdevices-state 1\nholder -", "no final newline");
        expect_refused("xdevices-state 1\nholder 5\n", "holder without session");
        expect_refused("xdevices-state 1\nholder -\nholder -\n", "two holder lines");
        expect_refused(
                "xdevices-state 1\nholder -\nsession uid=1 user=a service=login vt=0 pid=1 start=1 since=1\n",
                "vt 0");
        expect_refused(
                "xdevices-state 1\nholder -\nsession uid=1 user=a service=login vt=64 pid=1 start=1 since=1\n",
                "vt 64");
        expect_refused(
                "xdevices-state 1\nholder -\nsession uid=1 user=a b service=login vt=2 pid=1 start=1 since=1\n",
                "space in user");
        expect_refused(
                "xdevices-state 1\nholder -\nsession uid=1 user=a service=login vt=2 pid=1 start=1 since=1 extra=1\n",
                "extra field");
        expect_refused(
                "xdevices-state 1\nholder -\nsession uid=1 user=a service=login vt=2 pid=1 start=1 since=1\n"
                "session uid=1 user=a service=login vt=2 pid=1 start=1 since=1\n",
                "duplicate session");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/etc/shadow class=drm fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=20660 acl=- grant=-\n",
                "/etc/shadow");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/dev/../etc/shadow class=drm fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=20660 acl=- grant=-\n",
                "dotdot");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/dev/sda class=drm fsdev=0:5 ino=1 rdev=8:0 uid=0 gid=0 mode=60660 acl=- grant=-\n",
                "block device major");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/dev/dri/card0 class=input fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=20660 acl=- grant=-\n",
                "class/major mismatch");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/dev/dri/card0 class=drm fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=100660 acl=- grant=-\n",
                "regular file mode");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/dev/dri/card0 class=drm fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=20660 acl=u::rw-;rm grant=-\n",
                "acl charset");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/dev/dri/card0 class=drm fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=20660 acl=- grant=1:rw:acl\n",
                "acl grant without acl");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/dev/dri/card0 class=drm fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=20660 acl=- grant=1:rwx:chown\n",
                "bad perm");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/dev/dri/card0 class=drm fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=20660 acl=- grant=-\n"
                "node path=/dev/dri/card0 class=drm fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=20660 acl=- grant=-\n",
                "duplicate node");
        expect_refused(
                "xdevices-state 1\nholder -\nnode path=/dev/dri/card0 class=drm fsdev=0:5 ino=1 rdev=226:0 uid=0 gid=0 mode=20660 acl=- grant=-\n"
                "session uid=1 user=a service=login vt=2 pid=1 start=1 since=1\n",
                "session after node");
        expect_refused("xdevices-state 1\r\nholder -\r\n", "CRLF");
        expect_refused("garbage\n", "garbage");
        memset(buf, 'x', sizeof buf - 1);
        buf[sizeof buf - 1] = '\0';
        expect_refused(buf, "no newline at all");
}
END_TEST

START_TEST(test_elect) {
        struct xdev_state s = { 0 };
        struct xdev_session a = {
                .uid = 1000, .user = "a", .service = "login", .vt = 2, .pid = 1, .start = 1
        };
        struct xdev_session b = {
                .uid = 1001, .user = "b", .service = "login", .vt = 3, .pid = 2, .start = 1
        };
        ck_assert_int_eq(xdev_state_add_session(&s, &a), 0);
        ck_assert_int_eq(xdev_state_add_session(&s, &b), 0);
        s.has_holder = true;
        s.holder = 1000;
        xdev_state_elect(&s, 3);
        ck_assert(s.has_holder);
        ck_assert_uint_eq(s.holder, 1000); /* a live holder keeps them */
        xdev_state_remove_session(&s, 0);
        xdev_state_elect(&s, 3);
        ck_assert(s.has_holder);
        ck_assert_uint_eq(s.holder, 1001); /* passes to the active VT's session */
        xdev_state_remove_session(&s, 0);
        xdev_state_elect(&s, 3);
        ck_assert(!s.has_holder);
        ck_assert_int_eq(xdev_state_add_session(&s, &a), 0);
        xdev_state_elect(&s, 7);
        ck_assert(!s.has_holder); /* active VT has no session: nobody */
        xdev_state_elect(&s, -1);
        ck_assert(!s.has_holder);
        xdev_state_free(&s);
}
END_TEST

/* The daemon's mark: one line right after the holder, round-tripped;
 * anything else is refused. */
START_TEST(test_follow_mark) {
        static const char text[] =
                "xdevices-state 1\nholder -\nfollow pid=412 start=99887\n"
                "session uid=1000 user=alice service=login vt=2 pid=7 start=8 since=9\n";
        struct xdev_state s = { 0 };
        ck_assert_int_eq(xdev_state_parse(&s, text, strlen(text), NULL), 0);
        ck_assert(s.follow);
        ck_assert_int_eq(s.follow_pid, 412);
        ck_assert_uint_eq(s.follow_start, 99887);
        char *out = format(&s);
        ck_assert_str_eq(out, text);
        free(out);
        xdev_state_free(&s);
        expect_refused(
                "xdevices-state 1\nholder -\nsession uid=1 user=a service=login vt=2 pid=1 start=1 since=1\n"
                "follow pid=1 start=1\n",
                "follow after a session");
        expect_refused("xdevices-state 1\nholder -\nfollow pid=1 start=1\nfollow pid=1 start=1\n",
                       "two follow lines");
        expect_refused("xdevices-state 1\nholder -\nfollow pid=0 start=1\n", "pid 0");
        expect_refused("xdevices-state 1\nholder -\nfollow pid=1\n", "no start");
        expect_refused("xdevices-state 1\nholder -\nfollow pid=1 start=1 extra=2\n",
                       "trailing field");
        expect_refused("xdevices-state 1\nfollow pid=1 start=1\nholder -\n", "before the holder");
}
END_TEST

/* A logout's sweep in its grace period: after the holder and the follow
 * mark, before sessions, one per uid, round-tripped; anything else is
 * refused. */
START_TEST(test_sweep_records) {
        static const char text[] =
                "xdevices-state 1\nholder -\nfollow pid=412 start=99887\n"
                "sweep uid=61001 pid=77 start=123 until=456789\n"
                "sweep uid=61002 pid=78 start=124 until=1\n"
                "session uid=1000 user=alice service=login vt=2 pid=7 start=8 since=9\n";
        struct xdev_state s = { 0 };
        ck_assert_int_eq(xdev_state_parse(&s, text, strlen(text), NULL), 0);
        ck_assert_uint_eq(s.n_sweeps, 2);
        ck_assert_int_eq(xdev_state_find_sweep(&s, 61002), 1);
        ck_assert_int_eq(s.sweeps[0].pid, 77);
        ck_assert_uint_eq(s.sweeps[0].start, 123);
        ck_assert_uint_eq(s.sweeps[0].until, 456789);
        char *out = format(&s);
        ck_assert_str_eq(out, text);
        free(out);
        struct xdev_linger_rec moved = { .uid = 61001, .pid = 90, .start = 5, .until = 6 };
        ck_assert_int_eq(xdev_state_set_sweep(&s, &moved), 0);
        ck_assert_uint_eq(s.n_sweeps, 2);
        ck_assert_int_eq(s.sweeps[0].pid, 90);
        xdev_state_remove_sweep(&s, 0);
        ck_assert_uint_eq(s.n_sweeps, 1);
        ck_assert_uint_eq(s.sweeps[0].uid, 61002);
        for (uid_t u = 1; s.n_sweeps < XDEV_LINGER_RECS_MAX; u++) {
                struct xdev_linger_rec r = { .uid = u, .pid = 1 };
                ck_assert_int_eq(xdev_state_set_sweep(&s, &r), 0);
        }
        struct xdev_linger_rec one_more = { .uid = 99999, .pid = 1 };
        ck_assert_int_eq(xdev_state_set_sweep(&s, &one_more), -E2BIG);
        xdev_state_free(&s);
        expect_refused(
                "xdevices-state 1\nholder -\n"
                "session uid=1 user=a service=login vt=2 pid=1 start=1 since=1\n"
                "sweep uid=5 pid=1 start=1 until=1\n",
                "sweep after a session");
        expect_refused(
                "xdevices-state 1\nholder -\nsweep uid=5 pid=1 start=1 until=1\n"
                "sweep uid=5 pid=2 start=1 until=1\n",
                "two sweeps of one uid");
        expect_refused("xdevices-state 1\nholder -\nsweep uid=5 pid=0 start=1 until=1\n", "pid 0");
        expect_refused("xdevices-state 1\nholder -\nsweep uid=5 pid=1 start=1\n", "no until");
        expect_refused("xdevices-state 1\nholder -\nsweep uid=4294967295 pid=1 start=1 until=1\n",
                       "uid -1");
        expect_refused("xdevices-state 1\nholder -\nsweep uid=5 pid=1 start=1 until=1 x=1\n",
                       "trailing field");
        expect_refused("xdevices-state 1\nsweep uid=5 pid=1 start=1 until=1\nholder -\n",
                       "before the holder");
        expect_refused("xdevices-state 1\nholder -\nsweep uid=5 pid=1 start=01 until=1\n",
                       "a leading zero");
}
END_TEST

/* With the mark the VT in front decides alone: a holder in the background
 * loses the devices, and a VT without a session in front means nobody. */
START_TEST(test_elect_follow) {
        struct xdev_state s = { .follow = true };
        struct xdev_session a = {
                .uid = 1000, .user = "a", .service = "login", .vt = 2, .pid = 1, .start = 1
        };
        struct xdev_session b = {
                .uid = 1001, .user = "b", .service = "login", .vt = 3, .pid = 2, .start = 1
        };
        ck_assert_int_eq(xdev_state_add_session(&s, &a), 0);
        ck_assert_int_eq(xdev_state_add_session(&s, &b), 0);
        s.has_holder = true;
        s.holder = 1000;
        xdev_state_elect(&s, 3);
        ck_assert(s.has_holder);
        ck_assert_uint_eq(s.holder, 1001);
        xdev_state_elect(&s, 4);
        ck_assert(!s.has_holder);
        xdev_state_elect(&s, 2);
        ck_assert(s.has_holder);
        ck_assert_uint_eq(s.holder, 1000);
        xdev_state_free(&s);
}
END_TEST

START_TEST(test_limits) {
        struct xdev_state s = { 0 };
        struct xdev_session a = { .uid = 1, .user = "a", .service = "login", .vt = 2, .pid = 1 };
        for (unsigned i = 0; i < XDEV_SESSIONS_MAX; i++) {
                a.start = i;
                ck_assert_int_eq(xdev_state_add_session(&s, &a), 0);
        }
        ck_assert_int_eq(xdev_state_add_session(&s, &a), -E2BIG);
        xdev_state_free(&s);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("state");
        TCase *tc = h_tcase(s, "codec", 0, NULL, NULL);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_refuses_everything_else);
        tcase_add_test(tc, test_elect);
        tcase_add_test(tc, test_elect_follow);
        tcase_add_test(tc, test_follow_mark);
        tcase_add_test(tc, test_sweep_records);
        tcase_add_test(tc, test_limits);
        return s;
}

H_SUITE(suite, H_ANY_USER)
H_MAIN(NULL)
