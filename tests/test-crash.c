/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Crash consistency: the session opener, the closer, the helper and gc are
 * SIGKILLed at each fault point between deciding, granting and committing;
 * after each, gc or the next login leaves every node exactly as recorded and
 * no session without a live leader. Uses the fault-point module and helper. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <security/pam_appl.h>

#include "harness.h"
#include "runner.h"

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static int helper_run(const char *fault, const char *a1, const char *a2, char **ret_out) {
        const char *argv[] = { h_fault_helper, "--conf=" H_CONF, a1, a2, NULL };
        char env_fault[128];
        const char *env[] = { "PATH=/usr/bin:/bin", env_fault, NULL };

        snprintf(env_fault, sizeof env_fault, "XDEV_FAULT=%s", fault ? fault : "");
        return h_run_helper(argv, env, ret_out);
}

/* No session in the state whose leader is gone, and the state is readable. */
static void assert_no_dead_sessions(const char *when) {
        char *out = NULL;
        int r = helper_run(NULL, "status", "--json", &out);
        ck_assert_msg(r == 0, "%s: status exited %d: %s", when, r, out);
        ck_assert_msg(strstr(out, "\"alive\":false") == NULL,
                      "%s: a session without a live leader: %s", when, out);
        free(out);
}

/* A login whose open_session runs with XDEV_FAULT=FAULT (NULL: none); the
 * harness child may die at the fault, then open_ret is -1. */
static struct h_session *fault_open(const char *user, int vt, const char *fault) {
        struct h_opts o = { .fault = fault };
        return h_session_open(user, vt, &o);
}

static bool killed(int status) {
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

static void fresh(void) {
        h_fresh(NULL, NULL);
}

/* Points reached while alice's open_session grants: each kill must be
 * reached, and gc afterwards must put every node back. */
static const char *const open_faults[] = {
        "state-save:kill",   /* plan made, nothing saved */
        "state-write:kill",  /* temp file written, not renamed */
        "state-rename:kill", /* temp file complete, not renamed */
        "open-before-commit:kill",
        "node-converge:kill@1", /* ledger saved, no node changed */
        "node-converge:kill@2", /* the VT granted */
        "node-converge:kill@5", /* half the shared nodes granted */
        "node-converge:kill@8", /* the last node */
        "acl-set:kill@3",
        "open-after-commit:kill", /* everything granted, then the leader dies */
};

START_TEST(test_kill_during_open_then_gc_restores) {
        const char *fault = open_faults[_i];
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = fault_open("xdalice", h_vt, fault);
        int status = h_session_close_status(a, NULL);
        ck_assert_msg(killed(status), "%s: the opener was not killed (status %#x)", fault, status);
        int r = helper_run(NULL, "gc", NULL, NULL);
        ck_assert_msg(r == 0, "%s: gc exited %d", fault, r);
        h_snap_assert_equal(&before, fault);
        assert_no_dead_sessions(fault);
        h_snap_free(&before);
}
END_TEST

START_TEST(test_kill_during_open_then_next_login_restores) {
        const char *fault = open_faults[_i];
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = fault_open("xdalice", h_vt, fault);
        ck_assert_msg(killed(h_session_close_status(a, NULL)), "%s: the opener was not killed",
                      fault);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_BOB), "rw");
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "");
        ck_assert_str_eq(h_acl_of(h_vt_path(0), H_UID_ALICE), "");
        assert_no_dead_sessions(fault);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        h_snap_assert_equal(&before, fault);
        h_snap_free(&before);
}
END_TEST

/* A second login dies half way while the first holds: the first keeps
 * exactly its grants, the second's VT goes back. */
START_TEST(test_kill_during_second_login_keeps_first) {
        const char *fault = open_faults[_i];
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        struct h_session *b = fault_open("xdbob", h_vt + 1, fault);
        int status = h_session_close_status(b, NULL);
        /* bob gets only his VT, so late points may not be reached */
        ck_assert_msg(killed(status) || WIFEXITED(status), "%s: status %#x", fault, status);
        ck_assert_int_eq(helper_run(NULL, "gc", NULL, NULL), 0);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        ck_assert_str_eq(h_acl_of(h_vt_path(0), H_UID_ALICE), "rw");
        ck_assert_str_eq(h_acl_of(h_vt_path(1), H_UID_BOB), "");
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_BOB), "");
        assert_no_dead_sessions(fault);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, fault);
        h_snap_free(&before);
}
END_TEST

static const char *const close_faults[] = {
        "close-before-commit:kill", "state-save:kill@1",    "state-rename:kill@1",
        "node-converge:kill@1",     "node-converge:kill@4", "acl-set:kill@2",
        "state-save:kill@2", /* every node restored, ledger not yet pruned */
};

START_TEST(test_kill_during_close_then_gc_restores) {
        const char *fault = close_faults[_i];
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = fault_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        int status = h_session_close_status(a, fault);
        ck_assert_msg(killed(status), "%s: the closer was not killed (status %#x)", fault, status);
        ck_assert_int_eq(helper_run(NULL, "gc", NULL, NULL), 0);
        h_snap_assert_equal(&before, fault);
        assert_no_dead_sessions(fault);
        h_snap_free(&before);
}
END_TEST

/* The closer killed after it saved the restore but before it changed every
 * node: the next login (bob's, a plain transaction, no gc) puts alice's VT
 * and her shared grants back, and forgets them. */
START_TEST(test_kill_during_close_then_next_login_restores) {
        const char *fault = close_faults[_i];
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = fault_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        int status = h_session_close_status(a, fault);
        ck_assert_msg(killed(status), "%s: the closer was not killed (status %#x)", fault, status);
        struct h_session *b = fault_open("xdbob", h_vt + 1, NULL);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        ck_assert_msg(strcmp(h_acl_of(h_vt_path(0), H_UID_ALICE), "") == 0,
                      "%s: alice's VT still has her grant after bob's login", fault);
        ck_assert_msg(strcmp(h_acl_of("/dev/input/event0", H_UID_ALICE), "") == 0,
                      "%s: event0 still has alice's grant after bob's login", fault);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        h_snap_assert_equal(&before, fault);
        char state[1 << 14] = "";
        FILE *f = fopen("/run/xdevices/state", "re");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(state, 1, sizeof state - 1, f);
        state[n] = '\0';
        (void) fclose(f);
        ck_assert_msg(strstr(state, h_vt_path(0)) == NULL,
                      "%s: alice's VT is still in the ledger:\n%s", fault, state);
        h_snap_free(&before);
}
END_TEST

/* The helper killed while applying a hotplugged node, and gc killed while
 * reaping: the next gc finishes the job. */
START_TEST(test_kill_during_apply_and_gc) {
        struct h_snap before;
        h_snap_take(&before);
        char *orig = h_node_describe("/dev/input/event0");
        struct h_session *a = fault_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        /* event0 taken back as if just plugged in: udev's apply dies */
        ck_assert_int_eq(unlink("/dev/input/event0"), 0);
        ck_assert_int_eq(mknod("/dev/input/event0", S_IFCHR | 0660, makedev(13, 64)), 0);
        ck_assert_int_eq(chown("/dev/input/event0", 0, 0), 0);
        char *plugged = h_node_describe("/dev/input/event0");
        {
                const char *argv[] = { h_fault_helper, "--conf=" H_CONF, "apply",
                                       "/dev/input/event0", NULL };
                const char *env[] = { "DEVNAME=/dev/input/event0",
                                      "MAJOR=13",
                                      "MINOR=64",
                                      "XDEVICES_CLASS=input",
                                      "XDEV_FAULT=node-converge:kill",
                                      NULL };
                ck_assert_int_eq(h_run_helper(argv, env, NULL), 128 + SIGKILL);
        }
        /* the leader dies too, and the first gc dies half way */
        ck_assert_int_eq(kill(a->pid, SIGKILL), 0);
        ck_assert_msg(killed(h_session_close_status(a, NULL)), "the leader was not killed");
        ck_assert_int_eq(helper_run("node-converge:kill@3", "gc", NULL, NULL), 128 + SIGKILL);
        ck_assert_int_eq(helper_run(NULL, "gc", NULL, NULL), 0);
        char *now = h_node_describe("/dev/input/event0");
        ck_assert_str_eq(now, plugged);
        free(now);
        /* everything else as at the start */
        for (size_t i = 0; i < before.n; i++) {
                if (strcmp(before.path[i], "/dev/input/event0") == 0)
                        continue;
                now = h_node_describe(before.path[i]);
                ck_assert_msg(strcmp(before.desc[i], now) == 0, "%s: was \"%s\", is \"%s\"",
                              before.path[i], before.desc[i], now);
                free(now);
        }
        assert_no_dead_sessions("apply and gc");
        free(orig);
        free(plugged);
        h_snap_free(&before);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("crash");
        TCase *tc = h_tcase(s, "kill", 120, fresh, NULL);
        tcase_add_loop_test(tc, test_kill_during_open_then_gc_restores, 0,
                            (int) ELEMENTSOF(open_faults));
        tcase_add_loop_test(tc, test_kill_during_open_then_next_login_restores, 0,
                            (int) ELEMENTSOF(open_faults));
        tcase_add_loop_test(tc, test_kill_during_second_login_keeps_first, 0,
                            (int) ELEMENTSOF(open_faults));
        tcase_add_loop_test(tc, test_kill_during_close_then_gc_restores, 0,
                            (int) ELEMENTSOF(close_faults));
        tcase_add_loop_test(tc, test_kill_during_close_then_next_login_restores, 0,
                            ELEMENTSOF(close_faults));
        tcase_add_test(tc, test_kill_during_apply_and_gc);
        return s;
}

H_SUITE(suite, H_ROOT_ONLY)
H_MAIN(H_HARNESS_FAULT)
