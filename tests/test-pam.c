/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pam_xdevices.so through the real libpam, on mknod'd nodes and real VTs in a
 * private mount namespace: who gets what, and that logout restores exactly. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <security/pam_appl.h>

#include "conf-lines.h"
#include "harness.h"
#include "runner.h"

static void assert_shared(uid_t uid, const char *perm) {
        for (size_t i = 0; i < h_n_shared_nodes; i++) {
                const char *p = h_acl_of(h_shared_nodes[i], uid);
                ck_assert_msg(p && strcmp(p, perm) == 0, "%s: uid %u has \"%s\", expected \"%s\"",
                              h_shared_nodes[i], (unsigned) uid, p ? p : "(error)", perm);
        }
}

static void assert_vt(int vt, uid_t uid, const char *perm) {
        char path[32];
        snprintf(path, sizeof path, "/dev/tty%d", vt);
        const char *p = h_acl_of(path, uid);
        ck_assert_msg(p && strcmp(p, perm) == 0, "%s: uid %u has \"%s\", expected \"%s\"", path,
                      (unsigned) uid, p ? p : "(error)", perm);
}

static void fresh(void) {
        h_fresh(NULL, NULL);
}

START_TEST(test_login_grants_vt_and_shared_and_logout_restores) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        assert_vt(h_vt, H_UID_ALICE, "rw");
        assert_shared(H_UID_ALICE, "rw");
        /* tty0 is opt-in: untouched by default */
        char *tty0 = h_node_describe("/dev/tty0");
        ck_assert_str_eq(tty0, before.desc[h_n_shared_nodes]);
        free(tty0);
        char want[8];
        snprintf(want, sizeof want, "%d", h_vt);
        ck_assert_str_eq(a->xdg_vtnr, want);
        ck_assert_str_eq(a->xdg_seat, "seat0");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after logout");
}
END_TEST

START_TEST(test_second_user_gets_only_their_vt) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        assert_vt(h_vt + 1, H_UID_BOB, "rw");
        assert_vt(h_vt, H_UID_BOB, "");
        assert_shared(H_UID_BOB, "");
        assert_shared(H_UID_ALICE, "rw");
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        assert_vt(h_vt + 1, H_UID_BOB, "");
        assert_shared(H_UID_ALICE, "rw");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after both logouts");
}
END_TEST

START_TEST(test_same_user_twice_keeps_access_until_last_logout) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a1 = h_session_open("xdalice", h_vt, NULL);
        struct h_session *a2 = h_session_open("xdalice", h_vt + 1, NULL);
        assert_vt(h_vt + 1, H_UID_ALICE, "rw");
        ck_assert_int_eq(h_session_close(a1), PAM_SUCCESS);
        assert_shared(H_UID_ALICE, "rw");
        assert_vt(h_vt, H_UID_ALICE, "");
        ck_assert_int_eq(h_session_close(a2), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after the last logout");
}
END_TEST

START_TEST(test_holder_logout_hands_over_to_active_vt) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        struct h_session *c = h_session_open("xdcarol", h_vt + 2, NULL);
        h_set_active_vt(h_vt + 2);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        assert_shared(H_UID_ALICE, "");
        assert_shared(H_UID_BOB, "");
        assert_shared(H_UID_CAROL, "rw");
        ck_assert_int_eq(h_session_close(c), PAM_SUCCESS);
        /* active VT now has no session: nobody holds, bob keeps only his VT */
        assert_shared(H_UID_CAROL, "");
        assert_shared(H_UID_BOB, "");
        assert_vt(h_vt + 1, H_UID_BOB, "rw");
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after all logouts");
}
END_TEST

START_TEST(test_holder_logout_with_inactive_others_gives_to_nobody) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        h_set_active_vt(1);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        assert_shared(H_UID_BOB, "");
        /* the next login holds again */
        struct h_session *c = h_session_open("xdcarol", h_vt + 2, NULL);
        assert_shared(H_UID_CAROL, "rw");
        ck_assert_int_eq(h_session_close(c), PAM_SUCCESS);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after all logouts");
}
END_TEST

static void assert_ignored(const char *user, int vt, const struct h_opts *o, const char *what) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *s = h_session_open(user, vt, o);
        ck_assert_msg(s->open_ret == H_IGNORED, "%s: open_session returned %d, expected PAM_IGNORE",
                      what, s->open_ret);
        h_snap_assert_equal(&before, what);
        ck_assert_int_eq(h_session_close(s), PAM_SUCCESS);
        h_snap_assert_equal(&before, what);
}

START_TEST(test_su_inside_session_grants_nothing) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        /* su from alice's console to bob: PAM_RUSER is alice */
        assert_ignored("xdbob", h_vt + 1, &(struct h_opts) { .ruser = "xdalice" },
                       "su with PAM_RUSER");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

/* PAM items that never make a console login, one a test: each is refused
 * for its own reason, said in one line of the log, and the user is told
 * nothing. */
static const struct {
        const char *user, *tty, *rhost, *ruser, *reason;
} hostile_items[] = {
#define NOT_LOCAL ": not a console login (PAM_RHOST or PAM_RUSER set): nothing granted"
#define NOT_VT ": PAM_TTY is not a virtual console: nothing granted"
        { "xdalice", NULL, "localhost", NULL, "\"xdalice\"" NOT_LOCAL },
        { "xdalice", NULL, "::1", NULL, "\"xdalice\"" NOT_LOCAL },
        { "xdalice", NULL, "192.0.2.1", "xdbob", "\"xdalice\"" NOT_LOCAL },
        /* su and sudo, to another user and to oneself */
        { "xdbob", NULL, NULL, "xdalice", "\"xdbob\"" NOT_LOCAL },
        { "xdalice", NULL, NULL, "xdalice", "\"xdalice\"" NOT_LOCAL },
        { "root", NULL, NULL, "xdalice", "\"root\"" NOT_LOCAL },
        /* a name typed at a login prompt is not logged as it is */
        { "-x\nforged line", NULL, "localhost", NULL, "\"(not a portable name)\"" NOT_LOCAL },
        { "al ice", "pts/3", NULL, NULL, "\"(not a portable name)\"" NOT_VT },
        { "xdalice", "pts/3", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "/dev/pts/3", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", ":0", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", ":0.0", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "tty0", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "tty64", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "tty01", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "tty4294967297", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "ttyS0", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "ttyUSB0", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "console", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "/dev/console", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "/dev/tty", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "/dev/../dev/tty1", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "/dev//tty1", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "/dev/tty1/", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "tty1\n", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", " tty1", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "TTY1", NULL, NULL, "\"xdalice\"" NOT_VT },
        { "xdalice", "", NULL, NULL, "\"xdalice\"" NOT_VT },
#undef NOT_LOCAL
#undef NOT_VT
};

START_TEST(test_hostile_items_grant_nothing) {
        char what[200];

        snprintf(what, sizeof what,
                 "PAM_USER \"%s\" PAM_TTY \"%s\" PAM_RHOST \"%s\" PAM_RUSER \"%s\"",
                 hostile_items[_i].user, hostile_items[_i].tty ? hostile_items[_i].tty : "(ttyVT)",
                 hostile_items[_i].rhost ? hostile_items[_i].rhost : "",
                 hostile_items[_i].ruser ? hostile_items[_i].ruser : "");
        assert_ignored(hostile_items[_i].user, h_vt,
                       &(struct h_opts) { .tty = hostile_items[_i].tty,
                                          .rhost = hostile_items[_i].rhost,
                                          .ruser = hostile_items[_i].ruser },
                       what);
        char *log = h_log_take(), *conv = h_conv_take();
        ck_assert_msg(strstr(log, hostile_items[_i].reason), "%s: the log lacks \"%s\":\n%s", what,
                      hostile_items[_i].reason, log);
        ck_assert_msg(!strstr(log, "forged line"), "%s: the name was logged as it is:\n%s", what,
                      log);
        ck_assert_msg(conv[0] == '\0', "%s: the user was told: %s", what, conv);
        free(log), free(conv);
}
END_TEST

START_TEST(test_remote_and_forged_ttys_grant_nothing) {
        char other[32];
        snprintf(other, sizeof other, "tty%d", h_vt + 1);
        /* a real VT that is not this process's controlling tty */
        free(h_log_take());
        assert_ignored("xdalice", h_vt, &(struct h_opts) { .tty = other }, "PAM_TTY of another VT");
        char *log = h_log_take();
        ck_assert_msg(strstr(log, "not this process's controlling tty"), "log: %s", log);
        free(log);
        assert_ignored("xdalice", h_vt, &(struct h_opts) { .no_ctty = true }, "no controlling tty");
}
END_TEST

START_TEST(test_planted_xdg_variables_are_overridden) {
        const char *env[] = { "XDG_VTNR=1", "XDG_SEAT=seat9", NULL };
        struct h_session *a = h_session_open("xdalice", h_vt, &(struct h_opts) { .env = env });
        char want[8];
        snprintf(want, sizeof want, "%d", h_vt);
        ck_assert_str_eq(a->xdg_vtnr, want);
        ck_assert_str_eq(a->xdg_seat, "seat0");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

START_TEST(test_killed_leader_is_reaped_by_next_login) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        assert_shared(H_UID_ALICE, "rw");
        h_session_kill(a);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        assert_shared(H_UID_ALICE, "");
        assert_vt(h_vt, H_UID_ALICE, "");
        assert_shared(H_UID_BOB, "rw");
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after reaping and logout");
}
END_TEST

/* Whether PATH is UID's own tmpfs of mode 0700, mounted on a directory of
 * /run/user (another device than /run/user itself). */
static bool is_rundir_of(const char *path, uid_t uid) {
        struct stat st, base;
        return lstat(path, &st) == 0 && lstat("/run/user", &base) == 0 && S_ISDIR(st.st_mode) &&
                st.st_uid == uid && (st.st_mode & 07777) == 0700 && st.st_dev != base.st_dev;
}

/* XDG_RUNTIME_DIR where no logind makes one: /run/user/UID, a tmpfs of
 * hers, made at her first console login, the same for her second, there
 * until her last logout, then gone. */
START_TEST(test_runtime_dir_lives_from_first_login_to_last_logout) {
        char want[64];
        snprintf(want, sizeof want, "/run/user/%u", (unsigned) H_UID_ALICE);
        struct h_session *a1 = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a1->open_ret, PAM_SUCCESS);
        ck_assert_str_eq(a1->xdg_runtime_dir, want);
        ck_assert_msg(is_rundir_of(want, H_UID_ALICE), "%s is not alice's 0700 tmpfs", want);
        h_write_file("/run/user/61001/wayland-0.lock", "", 0600, H_UID_ALICE);
        struct h_session *a2 = h_session_open("xdalice", h_vt + 1, NULL);
        ck_assert_str_eq(a2->xdg_runtime_dir, want);
        ck_assert_int_eq(h_session_close(a1), PAM_SUCCESS);
        ck_assert_msg(access("/run/user/61001/wayland-0.lock", F_OK) == 0,
                      "the runtime directory went at the first of two logouts");
        ck_assert_int_eq(h_session_close(a2), PAM_SUCCESS);
        ck_assert_msg(access(want, F_OK) < 0 && errno == ENOENT,
                      "%s is still there after the last logout", want);
        ck_assert_msg(access("/run/user", F_OK) < 0 && errno == ENOENT,
                      "/run/user, made at the first login, is still there after the last logout");
}
END_TEST

/* A login killed with SIGKILL leaves its runtime directory to the
 * transaction that reaps it. */
START_TEST(test_runtime_dir_of_a_killed_login_goes_when_reaped) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_msg(is_rundir_of("/run/user/61001", H_UID_ALICE), "no runtime directory");
        h_session_kill(a);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_msg(access("/run/user/61001", F_OK) < 0,
                      "alice's runtime directory outlived the reaping of her session");
        ck_assert_msg(is_rundir_of("/run/user/61002", H_UID_BOB), "bob got no runtime directory");
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
}
END_TEST

/* What is not ours is left alone: a directory of hers already there (a
 * module earlier in the stack) is used and kept; a link, another user's
 * directory or one others can read is refused and untouched; a variable
 * already set is kept; runtime_dir = no makes none. */
START_TEST(test_runtime_dir_that_is_not_ours_is_left_alone) {
        ck_assert_int_eq(mkdir("/run/user", 0755), 0);
        ck_assert_int_eq(mkdir("/run/user/61001", 0700), 0);
        ck_assert_int_eq(chown("/run/user/61001", H_UID_ALICE, H_UID_ALICE), 0);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(a->xdg_runtime_dir, "/run/user/61001");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        ck_assert_msg(access("/run/user/61001", F_OK) == 0, "her own directory was removed");
        ck_assert_int_eq(rmdir("/run/user/61001"), 0);
        /* a /run/user made before stays, empty or not */
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_msg(is_rundir_of("/run/user/61001", H_UID_ALICE), "no runtime directory");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        ck_assert_msg(access("/run/user", F_OK) == 0, "the /run/user made before was removed");

        ck_assert_int_eq(symlink("/run/xdevtest", "/run/user/61001"), 0);
        free(h_log_take());
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_str_eq(a->xdg_runtime_dir, "-");
        char *log = h_log_take();
        ck_assert_msg(strstr(log, "not using it"), "the link was not refused: %s", log);
        free(log);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        struct stat st;
        ck_assert_msg(lstat("/run/user/61001", &st) == 0 && S_ISLNK(st.st_mode),
                      "the link was touched");
        ck_assert_int_eq(unlink("/run/user/61001"), 0);

        ck_assert_int_eq(mkdir("/run/user/61001", 0755), 0);
        ck_assert_int_eq(chown("/run/user/61001", H_UID_ALICE, H_UID_ALICE), 0);
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(a->xdg_runtime_dir, "-");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        ck_assert_int_eq(rmdir("/run/user/61001"), 0);

        const char *env[] = { "XDG_RUNTIME_DIR=/run/xdevtest", NULL };
        a = h_session_open("xdalice", h_vt, &(struct h_opts) { .env = env });
        ck_assert_str_eq(a->xdg_runtime_dir, "/run/xdevtest");
        ck_assert_msg(access("/run/user/61001", F_OK) < 0, "made one though the variable was set");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);

        h_fresh("devices = glob\nglob = drm:/dev/dri/card*\nlogind = ignore\nruntime_dir = no\n",
                NULL);
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(a->xdg_runtime_dir, "-");
        ck_assert_msg(access("/run/user/61001", F_OK) < 0, "made one with runtime_dir = no");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

/* /run/user writable by a user: she could swap /run/user/UID for a link
 * between two steps, so nothing is made there. */
START_TEST(test_runtime_dir_base_of_a_user_is_refused) {
        ck_assert_int_eq(mkdir("/run/user", 0755), 0);
        ck_assert_int_eq(chown("/run/user", H_UID_ALICE, H_UID_ALICE), 0);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_str_eq(a->xdg_runtime_dir, "-");
        ck_assert_msg(access("/run/user/61001", F_OK) < 0, "made one in a base the user owns");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

START_TEST(test_replaced_nodes_are_not_touched) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        /* between sessions: event0 becomes a symlink, event1 a tty node,
         * mouse0 a regular file */
        ck_assert_int_eq(unlink("/dev/input/event0"), 0);
        ck_assert_int_eq(symlink("/etc/shadow", "/dev/input/event0"), 0);
        ck_assert_int_eq(unlink("/dev/input/event1"), 0);
        ck_assert_int_eq(mknod("/dev/input/event1", S_IFCHR | 0600, makedev(4, 5)), 0);
        ck_assert_int_eq(unlink("/dev/input/mouse0"), 0);
        int fd = open("/dev/input/mouse0", O_CREAT | O_WRONLY, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
        char *shadow = h_node_describe("/etc/shadow");
        char *e1 = h_node_describe("/dev/input/event1");
        char *m0 = h_node_describe("/dev/input/mouse0");
        struct h_session *b = h_session_open("xdbob", h_vt, NULL);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_BOB), "rw");
        char *now = h_node_describe("/etc/shadow");
        ck_assert_str_eq(now, shadow);
        free(now);
        now = h_node_describe("/dev/input/event1");
        ck_assert_str_eq(now, e1);
        free(now);
        now = h_node_describe("/dev/input/mouse0");
        ck_assert_str_eq(now, m0);
        free(now);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
}
END_TEST

START_TEST(test_node_replaced_during_session_is_left_alone) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/input/event0", H_UID_ALICE), "rw");
        /* udev recreates the node (new inode) while alice holds it */
        ck_assert_int_eq(unlink("/dev/input/event0"), 0);
        ck_assert_int_eq(mknod("/dev/input/event0", S_IFCHR | 0640, makedev(13, 64)), 0);
        char *fresh_node = h_node_describe("/dev/input/event0");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *now = h_node_describe("/dev/input/event0");
        ck_assert_str_eq(now, fresh_node);
        free(now);
        free(fresh_node);
}
END_TEST

START_TEST(test_console_class_is_opt_in) {
        struct h_snap before;
        h_fresh("devices = glob\nglob = console:/dev/tty0\nconsole = rw\nlogind = ignore\n", NULL);
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/tty0", H_UID_ALICE), "rw");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after logout");
}
END_TEST

START_TEST(test_chown_mode_changes_owner_and_restores) {
        struct h_snap before;
        struct stat st;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(stat("/dev/dri/card0", &st), 0);
        ck_assert_uint_eq(st.st_uid, H_UID_ALICE);
        ck_assert_uint_eq(st.st_mode & 0700, 0600);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after logout");
}
END_TEST

static void chown_fixture(void) {
        h_fresh(NULL, "mode=chown");
}

START_TEST(test_read_only_access_per_class) {
        h_fresh("devices = glob\nglob = input:/dev/input/event*\nglob = drm:/dev/dri/card*\ninput = r\nlogind = ignore\n",
                NULL);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/input/event0", H_UID_ALICE), "r");
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

/* A stale /run/systemd/seats (an image built under systemd, booted
 * without it) is no logind: the login is granted as on any machine. */
START_TEST(test_stale_seats_dir_does_not_stand_down) {
        if (h_host_runs_logind()) {
                fprintf(stderr,
                        "test-pam: a logind runs on this machine: the stale case is not "
                        "testable here, skipped\n");
                return;
        }
        h_fresh("devices = glob\nglob = drm:/dev/dri/card*\n", NULL);
        h_seats_make();
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_msg(a->open_ret == PAM_SUCCESS, "stale seats dir: open_session returned %d",
                      a->open_ret);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_seats_remove();
}
END_TEST

/* A user's process named systemd-logind is no logind either: only root
 * can name a root process. */
START_TEST(test_user_process_named_logind_does_not_stand_down) {
        if (h_host_runs_logind())
                return;
        h_fresh("devices = glob\nglob = drm:/dev/dri/card*\n", NULL);
        h_seats_make();
        pid_t fake = h_fake_logind_start("systemd-logind", H_UID_BOB);
        ck_assert_int_gt(fake, 0);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_msg(a->open_ret == PAM_SUCCESS, "user's fake logind: open_session returned %d",
                      a->open_ret);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        (void) kill(fake, SIGKILL), (void) waitpid(fake, NULL, 0);
        h_seats_remove();
}
END_TEST

/* seat0's file and a live root process named elogind: the module stands
 * down, touches nothing, and the person at the console hears why. */
START_TEST(test_running_logind_stands_down_and_tells_user) {
        struct h_snap before;
        char want[300];
        h_fresh("devices = glob\nglob = drm:/dev/dri/card*\n", NULL);
        h_seats_make();
        pid_t fake = h_fake_logind_start("elogind", 0);
        ck_assert_int_gt(fake, 0);
        free(h_log_take()), free(h_conv_take());
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, H_IGNORED);
        h_snap_assert_equal(&before, "logind running");
        char *log = h_log_take(), *conv = h_conv_take();
        (void) snprintf(want, sizeof want,
                        "info: pam_xdevices: elogind (pid %d) manages the seats here: pam_xdevices "
                        "stands down and grants nothing (logind = ignore in xdevices.conf "
                        "overrides)\n",
                        (int) fake);
        ck_assert_str_eq(conv, want);
        (void) snprintf(want, sizeof want, "elogind (pid %d) manages the seats here", (int) fake);
        ck_assert_msg(strstr(log, want), "log lacks \"%s\": %s", want, log);
        free(log), free(conv);
        h_session_close(a);
        (void) kill(fake, SIGKILL), (void) waitpid(fake, NULL, 0);
        h_seats_remove();
}
END_TEST

START_TEST(test_module_arguments_override_file) {
        h_fresh(NULL, "drm=off");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "");
        ck_assert_str_eq(h_acl_of("/dev/input/event0", H_UID_ALICE), "rw");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

START_TEST(test_denied_service_grants_nothing) {
        h_fresh(NULL, "deny_services=xdtest");
        assert_ignored("xdalice", h_vt, NULL, "denied service");
        h_fresh(NULL, "services=login");
        assert_ignored("xdalice", h_vt, NULL, "service not in allow list");
}
END_TEST

START_TEST(test_root_login_grants_nothing) {
        assert_ignored("root", h_vt, NULL, "root login");
}
END_TEST

/* Fails unless the text LOG contains NEEDLE. */
#define assert_has(log, needle) \
        ck_assert_msg(strstr((log), (needle)), "lacks \"%s\" in:\n%s", (needle), (log))

/* The lines in TEXT that contain NEEDLE. */
static int count_lines(const char *text, const char *needle) {
        int n = 0;
        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* One info line per login: what was granted, by class, and why anything
 * expected was not; the user is told only when nothing but the VT was. */
START_TEST(test_login_line_names_grants_and_tells_user_when_only_vt) {
        char want[300];
        free(h_log_take());
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        char *log = h_log_take(), *conv = h_conv_take();
        snprintf(
                want, sizeof want,
                "\"xdalice\" on tty%d: granted vt 1, drm 2, input 5, console 0; holds the shared devices\n",
                h_vt);
        assert_has(log, want);
        ck_assert_msg(conv[0] == '\0', "the user was told: %s", conv);
        free(log), free(conv);
        /* bob's login gets only his VT, and hears why */
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        log = h_log_take(), conv = h_conv_take();
        snprintf(
                want, sizeof want,
                "\"xdbob\" on tty%d: granted vt 1, drm 0, input 0, console 0; only the VT: another console session holds the shared devices until its last logout (no xdevicesd runs)\n",
                h_vt + 1);
        assert_has(log, want);
        assert_has(
                conv,
                "info: pam_xdevices: only this VT was granted (another console session holds the shared devices");
        ck_assert_int_eq(count_lines(conv, "\n"), 1);
        free(log), free(conv);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);

        /* the shipped default, devices = auto, where there is no udevd (no
         * /run/udev/control in the test /run) and no glob line */
        h_fresh("logind = ignore\n", NULL);
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        log = h_log_take(), conv = h_conv_take();
        snprintf(
                want, sizeof want,
                "\"xdalice\" on tty%d: granted vt 1, drm 0, input 0, console 0; only the VT: devices = auto but no udev database (/run/udev/control) and no glob lines\n",
                h_vt);
        assert_has(log, want);
        ck_assert_str_eq(
                conv,
                "info: pam_xdevices: only this VT was granted (devices = auto but no udev database (/run/udev/control) and no glob lines); X or a compositor cannot start\n");
        free(log), free(conv);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);

        /* devices = udev where udevd does not run */
        h_fresh("devices = udev\nlogind = ignore\n", NULL);
        a = h_session_open("xdalice", h_vt, NULL);
        log = h_log_take(), conv = h_conv_take();
        snprintf(
                want, sizeof want,
                "\"xdalice\" on tty%d: granted vt 1, drm 0, input 0, console 0; only the VT: devices = udev but udevd is not running (no /run/udev/control)\n",
                h_vt);
        assert_has(log, want);
        ck_assert_int_eq(count_lines(conv, "info: pam_xdevices: only this VT was granted"), 1);
        free(log), free(conv);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);

        /* a class that is on but found nothing is named */
        h_fresh("devices = glob\nglob = drm:/dev/dri/card*\nlogind = ignore\n", NULL);
        a = h_session_open("xdalice", h_vt, NULL);
        log = h_log_take(), conv = h_conv_take();
        snprintf(
                want, sizeof want,
                "\"xdalice\" on tty%d: granted vt 1, drm 1, input 0, console 0; holds the shared devices: no input node matched a glob line\n",
                h_vt);
        assert_has(log, want);
        ck_assert_msg(conv[0] == '\0', "the user was told: %s", conv);
        free(log), free(conv);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

/* A broken config: nothing granted, and the person at the console reads
 * why in one line, with the file and line. */
START_TEST(test_broken_config_is_told_to_the_user) {
        h_fresh("vt = rw\nmode = sideways\ndrm = rwx\n", NULL);
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SESSION_ERR);
        h_snap_assert_equal(&before, "broken config");
        char *conv = h_conv_take();
        ck_assert_str_eq(
                conv,
                "error: pam_xdevices: the configuration is broken (" H_CONF
                ":2: bad value \"sideways\" for \"mode\" (acl, chown)): no device granted, not even this VT; tell the administrator\n");
        free(conv);
        h_session_close(a);
        /* not told to a login that does not count (su) */
        assert_ignored("xdalice", h_vt, &(struct h_opts) { .ruser = "xdbob" }, "su, broken config");
        conv = h_conv_take();
        ck_assert_msg(conv[0] == '\0', "su was told: %s", conv);
        free(conv);
}
END_TEST

/* What a login whose config is broken returns: with a VT (as root) the
 * module fails it; in h_init_userns's namespace (no VT) the login does not
 * count, but the module has read the config and said it is broken first. */
static int broken_ret(void) {
        return h_in_userns() ? H_IGNORED : PAM_SESSION_ERR;
}

/* A config of one broken line (conf-lines.h), one a test: the module logs
 * the line and its reason and grants nothing; with a VT the user is told
 * why (not in the namespace with none: her login did not count). */
START_TEST(test_broken_config_line_grants_nothing) {
        const struct conf_line *c = &conf_bad_lines[_i];
        struct h_snap before;
        char want[400];

        h_fresh(c->text, NULL);
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_msg(a->open_ret == broken_ret(), "config \"%s\": open returned %d", c->text,
                      a->open_ret);
        h_snap_assert_equal(&before, c->text);
        char *log = h_log_take(), *conv = h_conv_take();
        snprintf(want, sizeof want, H_CONF ":1: %s", c->reason);
        assert_has(log, want);
        assert_has(log, "configuration is broken; no device will be granted");
        if (h_in_userns())
                ck_assert_msg(conv[0] == '\0', "the user was told: %s", conv);
        else {
                snprintf(want, sizeof want,
                         "error: pam_xdevices: the configuration is broken (" H_CONF
                         ":1: %s): no device granted, not even this VT; tell the administrator\n",
                         c->reason);
                ck_assert_str_eq(conv, want);
        }
        free(log), free(conv);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after the logout");
}
END_TEST

/* Module arguments the module refuses, one a test: as a broken config. */
static const struct {
        const char *args, *reason;
} bad_args[] = {
        { "drm=sometimes", "bad value in module argument \"drm=sometimes\"" },
        { "mode=sideways", "bad value in module argument \"mode=sideways\"" },
        { "linger_grace=60001", "bad value in module argument \"linger_grace=60001\"" },
        { "debug=maybe", "bad value in module argument \"debug=maybe\"" },
        { "glob=drm:/etc/*", "bad value in module argument \"glob=drm:/etc/*\"" },
        { "vt", "bad value in module argument \"vt\"" },
        { "=rw", "bad module argument \"=rw\"" },
        { "conf=xdevices.conf", "conf= needs an absolute path" },
        { "conf", "conf= needs an absolute path" },
        { "conf=" H_ROOT "/none.conf",
          H_ROOT "/none.conf: cannot open: No such file or directory" },
};

START_TEST(test_bad_module_argument_grants_nothing) {
        struct h_snap before;

        h_fresh(NULL, bad_args[_i].args);
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_msg(a->open_ret == broken_ret(), "arguments \"%s\": open returned %d",
                      bad_args[_i].args, a->open_ret);
        h_snap_assert_equal(&before, bad_args[_i].args);
        char *log = h_log_take(), *conv = h_conv_take();
        assert_has(log, bad_args[_i].reason);
        assert_has(log, "configuration is broken; no device will be granted");
        if (!h_in_userns())
                assert_has(conv, bad_args[_i].reason);
        free(log), free(conv);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after the logout");
}
END_TEST

/* A config file the module must not trust: refused, and said why. */
static void assert_untrusted(const char *what, const char *reason) {
        struct h_snap before;

        h_snap_take(&before);
        free(h_log_take());
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_msg(a->open_ret == broken_ret(), "%s: open returned %d", what, a->open_ret);
        h_snap_assert_equal(&before, what);
        char *log = h_log_take();
        assert_has(log, reason);
        assert_has(log, "configuration is broken; no device will be granted");
        free(log);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}

START_TEST(test_untrusted_config_files_grant_nothing) {
        h_fresh(NULL, NULL);
        ck_assert_int_eq(chmod(H_CONF, 0666), 0);
        assert_untrusted("world-writable config",
                         H_CONF ": must be owned by root and not writable by group or others");
        ck_assert_int_eq(chmod(H_CONF, 0664), 0);
        assert_untrusted("group-writable config",
                         H_CONF ": must be owned by root and not writable by group or others");
        ck_assert_int_eq(chmod(H_CONF, 0644), 0);
        /* no uid but root's is mapped in h_init_userns's namespace */
        if (!h_in_userns()) {
                ck_assert_int_eq(chown(H_CONF, H_UID_BOB, 0), 0);
                assert_untrusted("user-owned config",
                                 H_CONF
                                 ": must be owned by root and not writable by group or others");
        }
        ck_assert_int_eq(unlink(H_CONF), 0);
        ck_assert_int_eq(symlink("/dev/zero", H_CONF), 0);
        assert_untrusted("symlinked config", H_CONF ": a symbolic link: config files must be");
        ck_assert_int_eq(unlink(H_CONF), 0);
        ck_assert_int_eq(mkfifo(H_CONF, 0644), 0);
        assert_untrusted("FIFO config", H_CONF ": not a regular file");
}
END_TEST

START_TEST(test_unknown_key_is_logged_and_ignored) {
        h_fresh("devices = glob\nglob = drm:/dev/dri/card*\nfrobnicate = yes\nlogind = ignore\n",
                NULL);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, h_in_userns() ? H_IGNORED : PAM_SUCCESS);
        if (!h_in_userns())
                ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        char *log = h_log_take();
        assert_has(log, H_CONF ":3: unknown key \"frobnicate\"");
        ck_assert_msg(!strstr(log, "configuration is broken"), "log: %s", log);
        free(log);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

/* conf= that names a missing file is an error, not the defaults. */
START_TEST(test_missing_named_config_is_an_error) {
        ck_assert_int_eq(unlink(H_CONF), 0);
        struct h_snap before;
        h_snap_take(&before);
        free(h_log_take());
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, broken_ret());
        h_snap_assert_equal(&before, "missing config");
        char *log = h_log_take(), *conv = h_conv_take();
        assert_has(log, H_CONF ": cannot open: No such file or directory");
        if (!h_in_userns())
                assert_has(conv,
                           "error: pam_xdevices: the configuration is broken (" H_CONF
                           ": cannot open: No such file or directory)");
        free(log), free(conv);
        h_session_close(a);
}
END_TEST

/* Logins that do not count say so in one info line, without debug, and
 * tell the user nothing. */
START_TEST(test_ignored_logins_are_logged) {
        char want[200];
        free(h_log_take());
        assert_ignored("xdbob", h_vt, &(struct h_opts) { .ruser = "xdalice" }, "su");
        char *log = h_log_take();
        assert_has(log,
                   "\"xdbob\": not a console login (PAM_RHOST or PAM_RUSER set): nothing granted");
        free(log);
        assert_ignored("xdalice", h_vt, &(struct h_opts) { .tty = "pts/3" }, "pts");
        log = h_log_take();
        assert_has(log, "\"xdalice\": PAM_TTY is not a virtual console: nothing granted");
        free(log);
        assert_ignored("xdalice", h_vt, &(struct h_opts) { .not_leader = true }, "not the leader");
        log = h_log_take();
        snprintf(want, sizeof want, "\"xdalice\" on tty%d: this process does not lead the session",
                 h_vt);
        assert_has(log, want);
        free(log);
        assert_ignored("root", h_vt, NULL, "root");
        log = h_log_take();
        snprintf(want, sizeof want, "\"root\" on tty%d: root needs no grants: nothing granted",
                 h_vt);
        assert_has(log, want);
        free(log);
        char *conv = h_conv_take();
        ck_assert_msg(conv[0] == '\0', "the user was told: %s", conv);
        free(conv);
}
END_TEST

struct vt_modes {
        int mode, kb, sw;
};

static struct vt_modes vt_modes_of(int vt) {
        char path[32];
        struct vt_modes m;
        struct vt_mode vm;
        snprintf(path, sizeof path, "/dev/tty%d", vt);
        int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ioctl(fd, KDGETMODE, &m.mode), 0);
        ck_assert_int_eq(ioctl(fd, KDGKBMODE, &m.kb), 0);
        ck_assert_int_eq(ioctl(fd, VT_GETMODE, &vm), 0);
        m.sw = vm.mode;
        (void) close(fd);
        return m;
}

/* What a display server or xdevices-vt-run killed with SIGKILL leaves:
 * graphics mode, keyboard KB, and (PROCESS) VT switching held by a process
 * that is gone. */
static void vt_leave_behind(int vt, int kb, bool process) {
        char path[32];
        snprintf(path, sizeof path, "/dev/tty%d", vt);
        fflush(NULL);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
                struct vt_mode vm = { .mode = VT_PROCESS, .relsig = SIGUSR1, .acqsig = SIGUSR2 };
                if (fd < 0 || ioctl(fd, KDSETMODE, KD_GRAPHICS) < 0 ||
                    ioctl(fd, KDSKBMODE, kb) < 0 || (process && ioctl(fd, VT_SETMODE, &vm) < 0))
                        _exit(1);
                _exit(0);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "could not set tty%d's modes",
                      vt);
}

static int default_kb(void) {
        char c = '1';
        int fd = open("/sys/module/vt/parameters/default_utf8", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                ck_assert_int_eq(read(fd, &c, 1), 1);
                (void) close(fd);
        }
        return c == '0' ? K_XLATE : K_UNICODE;
}

/* A session that ends with its VT in graphics mode and the keyboard off
 * (its display server or xdevices-vt-run was killed) leaves a console the
 * next login cannot use: logout puts text mode, the default keyboard mode
 * and VT_AUTO back, and says so. A VT left in text mode with a keyboard
 * mode the user chose is left as it is. */
START_TEST(test_logout_resets_a_vt_left_in_graphics_mode) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        vt_leave_behind(h_vt, K_OFF, true);
        struct vt_modes m = vt_modes_of(h_vt);
        ck_assert(m.mode == KD_GRAPHICS && m.kb == K_OFF && m.sw == VT_PROCESS);
        free(h_log_take());
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        m = vt_modes_of(h_vt);
        ck_assert_int_eq(m.mode, KD_TEXT);
        ck_assert_int_eq(m.kb, default_kb());
        ck_assert_int_eq(m.sw, VT_AUTO);
        char *log = h_log_take();
        ck_assert_msg(strstr(log,
                             "was left in a state the next login cannot use (graphics mode, "
                             "keyboard off or raw, switches held by a process); reset"),
                      "log: %s", log);
        free(log);
        h_snap_assert_equal(&before, "after the logout");

        /* raw keyboard, switches by the kernel: the first two put back */
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        vt_leave_behind(h_vt, K_RAW, false);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        m = vt_modes_of(h_vt);
        ck_assert(m.mode == KD_TEXT && m.kb == default_kb() && m.sw == VT_AUTO);

        /* a usable console is the user's choice: left alone, nothing said */
        int other = default_kb() == K_UNICODE ? K_XLATE : K_UNICODE;
        char path[32];
        snprintf(path, sizeof path, "/dev/tty%d", h_vt);
        int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_int_eq(ioctl(fd, KDSKBMODE, other), 0);
        free(h_log_take());
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        m = vt_modes_of(h_vt);
        ck_assert(m.mode == KD_TEXT && m.kb == other && m.sw == VT_AUTO);
        log = h_log_take();
        ck_assert_msg(!strstr(log, "reset"), "log: %s", log);
        free(log);
        (void) close(fd); /* hung up with the session: a fresh one */
        fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ioctl(fd, KDSKBMODE, default_kb()), 0);
        (void) close(fd);
}
END_TEST

/* Two pam_xdevices lines in one stack (the package's common-session and a
 * line added to /etc/pam.d/login by hand): the second does nothing, so a
 * login logs one "granted" line, and the logout restores once. */
START_TEST(test_second_line_in_the_stack_is_harmless) {
        struct h_snap before;
        char svc[2048], *line;
        FILE *f;
        size_t n;

        f = fopen(H_PAMDIR "/" H_SERVICE, "re");
        ck_assert_ptr_nonnull(f);
        n = fread(svc, 1, sizeof svc - 1, f);
        (void) fclose(f);
        svc[n] = '\0';
        line = strstr(svc, "session ");
        ck_assert_ptr_nonnull(line);
        ck_assert_uint_lt(n + strlen(line), sizeof svc);
        memmove(svc + n, line, strlen(line) + 1);
        h_write_file(H_PAMDIR "/" H_SERVICE, svc, 0644, 0);
        h_snap_take(&before);
        free(h_log_take());
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        char *log = h_log_take();
        ck_assert_msg(count_lines(log, "granted vt") == 1, "not one granted line:\n%s", log);
        free(log);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_snap_assert_equal(&before, "after logout with two lines");
        h_snap_free(&before);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("pam");
        TCase *tc = h_tcase(s, "sessions", 60, fresh, NULL);
        tcase_add_test(tc, test_login_grants_vt_and_shared_and_logout_restores);
        tcase_add_test(tc, test_second_user_gets_only_their_vt);
        tcase_add_test(tc, test_same_user_twice_keeps_access_until_last_logout);
        tcase_add_test(tc, test_runtime_dir_lives_from_first_login_to_last_logout);
        tcase_add_test(tc, test_runtime_dir_of_a_killed_login_goes_when_reaped);
        tcase_add_test(tc, test_runtime_dir_that_is_not_ours_is_left_alone);
        tcase_add_test(tc, test_runtime_dir_base_of_a_user_is_refused);
        tcase_add_test(tc, test_holder_logout_hands_over_to_active_vt);
        tcase_add_test(tc, test_holder_logout_with_inactive_others_gives_to_nobody);
        tcase_add_test(tc, test_su_inside_session_grants_nothing);
        tcase_add_test(tc, test_planted_xdg_variables_are_overridden);
        tcase_add_test(tc, test_killed_leader_is_reaped_by_next_login);
        tcase_add_test(tc, test_replaced_nodes_are_not_touched);
        tcase_add_test(tc, test_node_replaced_during_session_is_left_alone);
        tcase_add_test(tc, test_console_class_is_opt_in);
        tcase_add_test(tc, test_read_only_access_per_class);
        tcase_add_test(tc, test_stale_seats_dir_does_not_stand_down);
        tcase_add_test(tc, test_user_process_named_logind_does_not_stand_down);
        tcase_add_test(tc, test_running_logind_stands_down_and_tells_user);
        tcase_add_test(tc, test_module_arguments_override_file);
        tcase_add_test(tc, test_root_login_grants_nothing);
        tcase_add_test(tc, test_second_line_in_the_stack_is_harmless);
        tcase_add_test(tc, test_login_line_names_grants_and_tells_user_when_only_vt);
        tcase_add_test(tc, test_broken_config_is_told_to_the_user);
        tcase_add_test(tc, test_ignored_logins_are_logged);
        tcase_add_test(tc, test_logout_resets_a_vt_left_in_graphics_mode);

        TCase *tcc = h_tcase(s, "chown", 60, chown_fixture, NULL);
        tcase_add_test(tcc, test_chown_mode_changes_owner_and_restores);
        return s;
}

/* Logins the module refuses on their PAM items or their service alone, and
 * the config it reads before it looks at any node: they pass in
 * h_init_userns's namespace too, as any user. */
static Suite *refusals_suite(void) {
        Suite *s = suite_create("pam refusals");
        TCase *tc = h_tcase(s, "refusals", 60, fresh, NULL);
        tcase_add_test(tc, test_remote_and_forged_ttys_grant_nothing);
        tcase_add_loop_test(tc, test_hostile_items_grant_nothing, 0,
                            (int) (sizeof hostile_items / sizeof hostile_items[0]));
        tcase_add_test(tc, test_denied_service_grants_nothing);
        tcase_add_loop_test(tc, test_broken_config_line_grants_nothing, 0, (int) CONF_N_BAD_LINES);
        tcase_add_loop_test(tc, test_bad_module_argument_grants_nothing, 0,
                            (int) (sizeof bad_args / sizeof bad_args[0]));
        tcase_add_test(tc, test_untrusted_config_files_grant_nothing);
        tcase_add_test(tc, test_unknown_key_is_logged_and_ignored);
        tcase_add_test(tc, test_missing_named_config_is_an_error);
        return s;
}

H_SUITE(suite, H_ROOT_ONLY)
H_SUITE(refusals_suite, H_USERNS)
H_MAIN(H_HARNESS)
