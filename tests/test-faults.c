/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fault injection: ENOSPC and EIO on state writes, EPERM/ENOTSUP from the
 * ACL calls (also a real file system without ACLs), nodes vanishing or
 * swapped mid-walk. Each time the session fails closed (nothing left
 * half-granted), syslog says what happened, and a later session works. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <security/pam_appl.h>

#include "harness.h"
#include "runner.h"

static void assert_logged(const char *log, const char *what, const char *when) {
        ck_assert_msg(strstr(log, what) != NULL, "%s: \"%s\" not logged; the log was:\n%s", when,
                      what, log);
}

static int helper_run(const char *a1, char **ret_out) {
        const char *argv[] = { h_fault_helper, "--conf=" H_CONF, a1, NULL };
        const char *env[] = { "PATH=/usr/bin:/bin", NULL };
        return h_run_helper(argv, env, ret_out);
}

/* A login on VT that is well and works, then logs out: the proof that a
 * fault left nothing behind that stops the next user. */
static void assert_later_session_works(const struct h_snap *before, const char *when) {
        struct h_session *s = h_session_open("xdcarol", h_vt + 2, NULL);
        ck_assert_msg(s->open_ret == PAM_SUCCESS, "%s: a later login returned %d", when,
                      s->open_ret);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_CAROL), "rw");
        ck_assert_int_eq(h_session_close(s), PAM_SUCCESS);
        h_snap_assert_equal(before, when);
}

static void fresh(void) {
        h_fresh(NULL, NULL); /* also a fresh /dev/log listener (h_log_take) */
        unsetenv("XDEV_FAULT");
}

/* ---- a login run step by step, defined below ---- */

/* ---- state writes ---- */

START_TEST(test_enospc_on_state_write_grants_nothing) {
        struct h_snap before;
        h_snap_take(&before);
        /* root dir + lock fill the file system: state.tmp gets ENOSPC */
        ck_assert_int_eq(mkdir("/run/xdevices", 0700), 0);
        ck_assert_int_eq(mount("xdfull", "/run/xdevices", "tmpfs", MS_NOSUID | MS_NODEV,
                               "mode=0700,nr_inodes=2"),
                         0);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SESSION_ERR);
        h_snap_assert_equal(&before, "ENOSPC at login");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *log = h_log_take();
        assert_logged(log, "No space left on device", "ENOSPC at login");
        assert_logged(log, "nothing changed", "ENOSPC at login");
        free(log);
        ck_assert_int_eq(umount("/run/xdevices"), 0);
        assert_later_session_works(&before, "after ENOSPC");
        h_snap_free(&before);
}
END_TEST

START_TEST(test_enospc_at_logout_keeps_ledger_until_gc) {
        struct h_snap before;
        h_snap_take(&before);
        /* room for lock + state, none for a second state.tmp */
        ck_assert_int_eq(mkdir("/run/xdevices", 0700), 0);
        ck_assert_int_eq(mount("xdfull", "/run/xdevices", "tmpfs", MS_NOSUID | MS_NODEV,
                               "mode=0700,nr_inodes=3"),
                         0);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        /* logout cannot save the plan: nothing is restored half way, and
         * the ledger still knows every node */
        ck_assert_int_eq(h_session_close(a), PAM_SESSION_ERR);
        char *log = h_log_take();
        assert_logged(log, "No space left on device", "ENOSPC at logout");
        free(log);
        ck_assert_int_eq(mount(NULL, "/run/xdevices", NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV,
                               "nr_inodes=64"),
                         0);
        ck_assert_int_eq(helper_run("gc", NULL), 0);
        h_snap_assert_equal(&before, "gc after ENOSPC at logout");
        assert_later_session_works(&before, "after ENOSPC at logout");
        ck_assert_int_eq(umount("/run/xdevices"), 0);
        h_snap_free(&before);
}
END_TEST

START_TEST(test_eio_on_state_write_grants_nothing) {
        struct h_snap before;
        h_snap_take(&before);
        setenv("XDEV_FAULT", "state-write:EIO", 1);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        unsetenv("XDEV_FAULT");
        ck_assert_int_eq(a->open_ret, PAM_SESSION_ERR);
        h_snap_assert_equal(&before, "EIO at login");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *log = h_log_take();
        assert_logged(log, "Input/output error", "EIO at login");
        free(log);
        assert_later_session_works(&before, "after EIO");
        h_snap_free(&before);
}
END_TEST

/* A read error is never taken for a short file: a config or ledger that
 * cannot be read whole grants nothing, and says why. */
START_TEST(test_eio_reading_config_or_state_grants_nothing) {
        static const struct {
                const char *fault, *logged;
        } cases[] = {
                { "conf-read:EIO", "xdevices.conf: cannot read: " },
                { "state-read:EIO", "cannot read state file" },
        };
        struct h_snap before;
        h_snap_take(&before);
        /* a ledger to read: bob's session, on another VT, stays open */
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        struct h_snap during;
        h_snap_take(&during);
        free(h_log_take());
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                setenv("XDEV_FAULT", cases[i].fault, 1);
                struct h_session *a = h_session_open("xdalice", h_vt, NULL);
                unsetenv("XDEV_FAULT");
                ck_assert_msg(a->open_ret == PAM_SESSION_ERR, "%s: open returned %d",
                              cases[i].fault, a->open_ret);
                h_snap_assert_equal(&during, cases[i].fault);
                ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
                h_snap_assert_equal(&during, cases[i].fault);
                char *log = h_log_take();
                assert_logged(log, cases[i].logged, cases[i].fault);
                assert_logged(log, "Input/output error", cases[i].fault);
                free(log);
        }
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after bob's logout");
        assert_later_session_works(&before, "after read errors");
        h_snap_free(&during);
        h_snap_free(&before);
}
END_TEST

START_TEST(test_eio_on_pruning_save_is_repaired) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        /* logout restores every node, then cannot drop them from the ledger */
        int status = h_session_close_status(a, "state-write:EIO@2");
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "logout status %#x", status);
        h_snap_assert_equal(&before, "EIO after restoring");
        char *log = h_log_take();
        assert_logged(log, "cannot save state after restoring", "EIO after restoring");
        free(log);
        ck_assert_int_eq(helper_run("gc", NULL), 0);
        assert_later_session_works(&before, "after EIO on pruning");
        h_snap_free(&before);
}
END_TEST

/* ---- ACL calls ---- */

static const char *const acl_faults[] = {
        "acl-set:EPERM@1",   "acl-set:EPERM@4", "acl-set:EPERM@8",
        "acl-set:ENOTSUP@3", "acl-set:EIO@6",
};

START_TEST(test_acl_error_undoes_the_whole_login) {
        const char *fault = acl_faults[_i];
        struct h_snap before;
        h_snap_take(&before);
        setenv("XDEV_FAULT", fault, 1);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        unsetenv("XDEV_FAULT");
        ck_assert_msg(a->open_ret == PAM_SESSION_ERR, "%s: open returned %d", fault, a->open_ret);
        h_snap_assert_equal(&before, fault);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *log = h_log_take();
        assert_logged(log, "cannot grant", fault);
        assert_logged(log, "undoing this session's grants", fault);
        free(log);
        assert_later_session_works(&before, fault);
        h_snap_free(&before);
}
END_TEST

/* The second user's VT grant fails while the first holds: the first keeps
 * everything, the second gets nothing. */
START_TEST(test_acl_error_for_second_login_keeps_first) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        setenv("XDEV_FAULT", "acl-set:EPERM@1", 1);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        unsetenv("XDEV_FAULT");
        ck_assert_int_eq(b->open_ret, PAM_SESSION_ERR);
        ck_assert_str_eq(h_acl_of(h_vt_path(1), H_UID_BOB), "");
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        ck_assert_str_eq(h_acl_of(h_vt_path(0), H_UID_ALICE), "rw");
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, "EPERM for a second login");
        h_snap_free(&before);
}
END_TEST

/* /dev/dri on ramfs, which has no ACLs at all: mode=acl refuses the whole
 * login with a clear message; mode=chown works there and restores. */
static void dri_on_ramfs(void) {
        ck_assert_int_eq(mount("xdramfs", "/dev/dri", "ramfs", MS_NOSUID | MS_NOEXEC, "mode=0755"),
                         0);
        ck_assert_int_eq(mknod("/dev/dri/card0", S_IFCHR | 0660, makedev(226, 0)), 0);
        ck_assert_int_eq(mknod("/dev/dri/renderD128", S_IFCHR | 0660, makedev(226, 128)), 0);
        ck_assert_int_eq(chown("/dev/dri/card0", 0, 44), 0);
        ck_assert_int_eq(chown("/dev/dri/renderD128", 0, 44), 0);
        ck_assert_int_eq(chmod("/dev/dri/card0", 0660), 0);
        ck_assert_int_eq(chmod("/dev/dri/renderD128", 0660), 0);
}

START_TEST(test_fs_without_acls_refuses_acl_mode) {
        dri_on_ramfs();
        ck_assert_ptr_null(h_acl_of("/dev/dri/card0", H_UID_ALICE)); /* really no ACLs */
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SESSION_ERR);
        h_snap_assert_equal(&before, "no ACLs, mode=acl");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *log = h_log_take();
        assert_logged(log, "file system without ACLs; use mode=chown", "no ACLs");
        free(log);
        /* chown mode on the same nodes works and restores */
        h_write_file(H_PAMDIR "/" H_SERVICE, "", 0644, 0);
        {
                char svc[1024];
                const char *module = getenv("XDEV_MODULE");
                snprintf(svc, sizeof svc, "session required %s conf=" H_CONF " mode=chown\n",
                         module);
                h_write_file(H_PAMDIR "/" H_SERVICE, svc, 0644, 0);
        }
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        struct stat st;
        ck_assert_int_eq(stat("/dev/dri/card0", &st), 0);
        ck_assert_uint_eq(st.st_uid, H_UID_ALICE);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, "no ACLs, mode=chown");
        ck_assert_int_eq(umount("/dev/dri"), 0);
        h_snap_free(&before);
}
END_TEST

/* ---- nodes vanishing or swapped while the grants are being applied ---- */

/* open_session in the harness child with XDEV_FAULT=FAULT, a ":stop" point:
 * returns with the child stopped there; open_continue continues it and
 * returns open_session's result. */
static struct h_session *open_stopped_at(const char *user, int vt, const char *fault) {
        struct h_opts o = { .fault = fault };
        struct h_session *s = h_session_start(user, vt, &o);
        int status;

        ck_assert_int_eq(waitpid(s->pid, &status, WUNTRACED), s->pid);
        ck_assert_msg(WIFSTOPPED(status), "the opener did not stop at %s (status %#x)", fault,
                      status);
        return s;
}

static int open_continue(struct h_session *s) {
        (void) kill(s->pid, SIGCONT);
        return h_session_opened(s);
}

START_TEST(test_nodes_vanish_and_swap_mid_walk) {
        struct h_snap before;
        h_snap_take(&before);
        char *shadow = h_node_describe("/etc/shadow");
        /* stopped while converging the first node, ledger already saved */
        struct h_session *a = open_stopped_at("xdalice", h_vt, "node-converge:stop@1");
        ck_assert_int_eq(unlink("/dev/input/event1"), 0);
        ck_assert_int_eq(unlink("/dev/input/mouse0"), 0);
        ck_assert_int_eq(symlink("/etc/shadow", "/dev/input/mouse0"), 0);
        ck_assert_int_eq(unlink("/dev/input/js0"), 0);
        ck_assert_int_eq(mknod("/dev/input/js0", S_IFCHR | 0600, makedev(13, 0)),
                         0); /* same rdev, new inode */
        char *js0 = h_node_describe("/dev/input/js0");
        int r = open_continue(a);
        ck_assert_int_eq(r, PAM_SUCCESS);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        ck_assert_str_eq(h_acl_of("/dev/input/event0", H_UID_ALICE), "rw");
        char *now = h_node_describe("/etc/shadow");
        ck_assert_str_eq(now, shadow);
        free(now);
        now = h_node_describe("/dev/input/js0");
        ck_assert_str_eq(now, js0);
        free(now);
        char *log = h_log_take();
        assert_logged(log, "\"/dev/input/event1\" is gone since it was recorded", "vanished node");
        assert_logged(log, "\"/dev/input/mouse0\" was replaced by another node", "symlinked node");
        free(log);
        int status = h_session_close_status(a, NULL);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "logout status %#x", status);
        now = h_node_describe("/etc/shadow");
        ck_assert_str_eq(now, shadow);
        free(now);
        now = h_node_describe("/dev/input/js0");
        ck_assert_str_eq(now, js0);
        free(now);
        for (size_t i = 0; i < before.n; i++) {
                if (strstr(before.path[i], "event1") || strstr(before.path[i], "mouse0") ||
                    strstr(before.path[i], "js0"))
                        continue;
                now = h_node_describe(before.path[i]);
                ck_assert_msg(strcmp(before.desc[i], now) == 0, "%s: was \"%s\", is \"%s\"",
                              before.path[i], before.desc[i], now);
                free(now);
        }
        char *out = NULL;
        ck_assert_int_eq(helper_run("status", &out), 0);
        ck_assert_msg(strstr(out, "nodes: 0"), "the ledger still holds nodes:\n%s", out);
        free(out);
        free(shadow);
        free(js0);
        h_snap_free(&before);
}
END_TEST

/* A node swapped for /etc/shadow after the module opened it (between check
 * and change): the change goes to the fd that was checked. */
START_TEST(test_node_swapped_after_open_is_never_followed) {
        char *shadow = h_node_describe("/etc/shadow");
        struct h_session *a = open_stopped_at("xdalice", h_vt, "node-converge:stop@3");
        /* whichever node it holds open now, swap them all */
        for (size_t i = 0; i < h_n_shared_nodes; i++) {
                ck_assert_int_eq(unlink(h_shared_nodes[i]), 0);
                ck_assert_int_eq(symlink("/etc/shadow", h_shared_nodes[i]), 0);
        }
        ck_assert_int_eq(open_continue(a), PAM_SUCCESS);
        char *now = h_node_describe("/etc/shadow");
        ck_assert_str_eq(now, shadow);
        free(now);
        ck_assert_str_eq(h_acl_of("/etc/shadow", H_UID_ALICE), "");
        int status = h_session_close_status(a, NULL);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "logout status %#x", status);
        now = h_node_describe("/etc/shadow");
        ck_assert_str_eq(now, shadow);
        free(now);
        free(shadow);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("faults");
        TCase *tc = h_tcase(s, "faults", 120, fresh, NULL);
        tcase_add_test(tc, test_enospc_on_state_write_grants_nothing);
        tcase_add_test(tc, test_enospc_at_logout_keeps_ledger_until_gc);
        tcase_add_test(tc, test_eio_on_state_write_grants_nothing);
        tcase_add_test(tc, test_eio_on_pruning_save_is_repaired);
        tcase_add_test(tc, test_eio_reading_config_or_state_grants_nothing);
        tcase_add_loop_test(tc, test_acl_error_undoes_the_whole_login, 0,
                            (int) (sizeof acl_faults / sizeof acl_faults[0]));
        tcase_add_test(tc, test_acl_error_for_second_login_keeps_first);
        tcase_add_test(tc, test_fs_without_acls_refuses_acl_mode);
        tcase_add_test(tc, test_nodes_vanish_and_swap_mid_walk);
        tcase_add_test(tc, test_node_swapped_after_open_is_never_followed);
        return s;
}

H_SUITE(suite, H_ROOT_ONLY)
H_MAIN(H_HARNESS_FAULT)
