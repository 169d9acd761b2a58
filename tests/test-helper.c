/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevices(8) run the way udev runs it, against mknod'd nodes during real
 * PAM sessions: hotplugged nodes join the holder's session, spoofed or
 * odd input changes nothing. */
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
#include <grp.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <security/pam_appl.h>

#include "conf-lines.h"
#include "harness.h"
#include "runner.h"

/* Fails unless the text OUT contains NEEDLE. */
#define assert_has(out, needle) \
        ck_assert_msg(strstr((out), (needle)), "lacks \"%s\" in:\n%s", (needle), (out))

static const char *helper(void) {
        const char *h = getenv("XDEV_HELPER");
        return h ? h : "../xdevices/xdevices";
}

/* Runs "xdevices apply|forget PATH" with a udev-like environment. */
static int udev_event(const char *action, const char *arg, const char *devname, unsigned maj,
                      unsigned min, const char *cls, char **ret_out) {
        char e_action[64], e_devname[300], e_major[32], e_minor[32], e_class[64];
        const char *argv[] = { helper(), "--conf=" H_CONF,
                               strcmp(action, "remove") ? "apply" : "forget", arg, NULL };
        const char *env[] = { e_action,
                              e_devname,
                              e_major,
                              e_minor,
                              e_class,
                              "SUBSYSTEM=input",
                              "TAGS=:xdevices:",
                              "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                              NULL };
        snprintf(e_action, sizeof e_action, "ACTION=%s", action);
        snprintf(e_devname, sizeof e_devname, "DEVNAME=%s", devname);
        snprintf(e_major, sizeof e_major, "MAJOR=%u", maj);
        snprintf(e_minor, sizeof e_minor, "MINOR=%u", min);
        snprintf(e_class, sizeof e_class, "XDEVICES_CLASS=%s", cls);
        return h_run_helper(argv, env, ret_out);
}

static int run(const char *cmd, const char *arg, char **ret_out) {
        const char *argv[] = { helper(), "--conf=" H_CONF, cmd, arg, NULL };
        const char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
        return h_run_helper(argv, env, ret_out);
}

static void new_node(const char *path, unsigned maj, unsigned min) {
        (void) unlink(path);
        ck_assert_int_eq(mknod(path, S_IFCHR | 0660, makedev(maj, min)), 0);
}

static void fresh(void) {
        h_fresh(NULL, NULL);
}

START_TEST(test_hotplug_during_session_is_granted_then_restored) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        new_node("/dev/input/event5", 13, 69);
        char *before = h_node_describe("/dev/input/event5");
        ck_assert_str_eq(h_acl_of("/dev/input/event5", H_UID_ALICE), "");
        char *out = NULL;
        ck_assert_int_eq(udev_event("add", "/dev/input/event5", "/dev/input/event5", 13, 69,
                                    "input", &out),
                         0);
        free(out);
        ck_assert_str_eq(h_acl_of("/dev/input/event5", H_UID_ALICE), "rw");
        /* a repeated "change" is idempotent */
        ck_assert_int_eq(udev_event("change", "/dev/input/event5", "/dev/input/event5", 13, 69,
                                    "input", NULL),
                         0);
        ck_assert_str_eq(h_acl_of("/dev/input/event5", H_UID_ALICE), "rw");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *after = h_node_describe("/dev/input/event5");
        ck_assert_str_eq(after, before);
        /* after logout, a new event grants nothing */
        ck_assert_int_eq(udev_event("add", "/dev/input/event5", "/dev/input/event5", 13, 69,
                                    "input", NULL),
                         0);
        char *again = h_node_describe("/dev/input/event5");
        ck_assert_str_eq(again, before);
        free(before);
        free(after);
        free(again);
}
END_TEST

START_TEST(test_no_session_nothing_granted) {
        new_node("/dev/input/event5", 13, 69);
        char *before = h_node_describe("/dev/input/event5");
        ck_assert_int_eq(udev_event("add", "/dev/input/event5", "/dev/input/event5", 13, 69,
                                    "input", NULL),
                         0);
        char *after = h_node_describe("/dev/input/event5");
        ck_assert_str_eq(after, before);
        free(before);
        free(after);
}
END_TEST

/* During a live session, each bad event is refused (exit 4), says why, and
 * leaves the node and its target untouched. */
static void assert_refused(const char *arg, const char *devname, unsigned maj, unsigned min,
                           const char *cls, const char *watch, const char *needle) {
        char *before = h_node_describe(watch), *out = NULL;
        int r = udev_event("add", arg, devname, maj, min, cls, &out);
        ck_assert_msg(r == 4, "%s: exit %d, expected 4 (%s)", arg, r, out);
        ck_assert_msg(strstr(out, needle), "%s: message \"%s\" lacks \"%s\"", arg, out, needle);
        char *after = h_node_describe(watch);
        ck_assert_msg(strcmp(before, after) == 0, "%s changed: \"%s\" -> \"%s\"", watch, before,
                      after);
        free(before);
        free(after);
        free(out);
}

START_TEST(test_spoofed_and_odd_events_are_refused) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        new_node("/dev/input/event5", 13, 69);
        assert_refused("/dev/input/event5", "/dev/input/event6", 13, 69, "input",
                       "/dev/input/event5", "does not match");
        assert_refused("/dev/input/event5", "/dev/input/event5", 13, 70, "input",
                       "/dev/input/event5", "not the 13:70");
        assert_refused("/dev/input/event5", "/dev/input/event5", 226, 69, "drm",
                       "/dev/input/event5", "is not a device node of class drm");
        assert_refused("/dev/input/event5", "/dev/input/event5", 13, 69, "vt", "/dev/input/event5",
                       "XDEVICES_CLASS");
        assert_refused("/dev/input/event5", "/dev/input/event5", 4, 69, "input",
                       "/dev/input/event5", "major 4");
        ck_assert_int_eq(symlink("/etc/shadow", "/dev/input/event7"), 0);
        assert_refused("/dev/input/event7", "/dev/input/event7", 13, 71, "input", "/etc/shadow",
                       "not a device node of class input");
        ck_assert_int_eq(symlink("/dev/input/event5", "/dev/input/event9"), 0);
        assert_refused("/dev/input/event9", "/dev/input/event9", 13, 69, "input",
                       "/dev/input/event5", "not a device node of class input");
        int fd = open("/dev/input/event8", O_CREAT | O_WRONLY, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
        assert_refused("/dev/input/event8", "/dev/input/event8", 13, 72, "input",
                       "/dev/input/event8", "not a device node of class input");
        assert_refused("/etc/shadow", "/etc/shadow", 13, 72, "input", "/etc/shadow",
                       "not a path under /dev");
        assert_refused("/dev/input/../../etc/shadow", "/dev/input/../../etc/shadow", 13, 72,
                       "input", "/etc/shadow", "not a path under /dev");
        /* a node with a second link (hardlink) is refused too */
        ck_assert_int_eq(link("/dev/input/event5", "/dev/input/event10"), 0);
        assert_refused("/dev/input/event10", "/dev/input/event10", 13, 69, "input",
                       "/dev/input/event5", "not a device node of class input");
        ck_assert_str_eq(h_acl_of("/dev/input/event5", H_UID_ALICE), "");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

START_TEST(test_remove_event_forgets_the_node) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        new_node("/dev/input/event5", 13, 69);
        char *before = h_node_describe("/dev/input/event5");
        ck_assert_int_eq(udev_event("add", "/dev/input/event5", "/dev/input/event5", 13, 69,
                                    "input", NULL),
                         0);
        char *out = NULL;
        ck_assert_int_eq(run("status", "--json", &out), 0);
        ck_assert_ptr_nonnull(strstr(out, "\"/dev/input/event5\""));
        free(out);
        ck_assert_int_eq(unlink("/dev/input/event5"), 0);
        ck_assert_int_eq(udev_event("remove", "/dev/input/event5", "/dev/input/event5", 13, 69,
                                    "input", NULL),
                         0);
        ck_assert_int_eq(run("status", "--json", &out), 0);
        ck_assert_ptr_null(strstr(out, "\"/dev/input/event5\""));
        free(out);
        /* the device comes back: it is granted afresh, and restored at logout */
        new_node("/dev/input/event5", 13, 69);
        ck_assert_int_eq(udev_event("add", "/dev/input/event5", "/dev/input/event5", 13, 69,
                                    "input", NULL),
                         0);
        ck_assert_str_eq(h_acl_of("/dev/input/event5", H_UID_ALICE), "rw");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *after = h_node_describe("/dev/input/event5");
        ck_assert_str_eq(after, before);
        free(before);
        free(after);
}
END_TEST

START_TEST(test_status_shows_two_users) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        char *out = NULL, want[64];
        ck_assert_int_eq(run("status", NULL, &out), 0);
        printf("--- xdevices status, two users ---\n%s---\n", out);
        snprintf(want, sizeof want, "holder: uid %d", H_UID_ALICE);
        ck_assert_ptr_nonnull(strstr(out, want));
        ck_assert_ptr_nonnull(strstr(out, "xdalice"));
        ck_assert_ptr_nonnull(strstr(out, "xdbob"));
        ck_assert_ptr_nonnull(strstr(out, "/dev/dri/card0"));
        free(out);
        ck_assert_int_eq(run("status", "--json", &out), 0);
        snprintf(want, sizeof want, ",\"holder\":%d,", H_UID_ALICE);
        ck_assert_ptr_nonnull(strstr(out, want));
        ck_assert_ptr_nonnull(strstr(out, "\"user\":\"xdbob\""));
        free(out);
        h_session_close(b);
        h_session_close(a);
}
END_TEST

START_TEST(test_gc_reaps_killed_session) {
        char *before[16];
        for (size_t i = 0; i < h_n_shared_nodes; i++)
                before[i] = h_node_describe(h_shared_nodes[i]);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        h_session_kill(a);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        ck_assert_int_eq(run("gc", NULL, NULL), 0);
        for (size_t i = 0; i < h_n_shared_nodes; i++) {
                char *now = h_node_describe(h_shared_nodes[i]);
                ck_assert_str_eq(now, before[i]);
                free(now);
                free(before[i]);
        }
        char *out = NULL;
        ck_assert_int_eq(run("status", "--json", &out), 0);
        ck_assert_ptr_nonnull(strstr(out, "\"sessions\":[]"));
        ck_assert_ptr_nonnull(strstr(out, "\"nodes\":[]"));
        free(out);
}
END_TEST

START_TEST(test_reset_restores_everything) {
        char *before[16];
        for (size_t i = 0; i < h_n_shared_nodes; i++)
                before[i] = h_node_describe(h_shared_nodes[i]);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(run("reset", NULL, NULL), 0);
        for (size_t i = 0; i < h_n_shared_nodes; i++) {
                char *now = h_node_describe(h_shared_nodes[i]);
                ck_assert_str_eq(now, before[i]);
                free(now);
                free(before[i]);
        }
        /* the session record is gone: close finds nothing of ours */
        ck_assert_int_eq(h_session_close(a), H_IGNORED);
}
END_TEST

START_TEST(test_damaged_state_is_refused_until_forced_reset) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_write_file("/run/xdevices/state", "xdevices-state 1\nholder -\nnode path=/etc/shadow\n",
                     0600, 0);
        char *out = NULL;
        ck_assert_int_eq(run("status", NULL, &out), 1);
        ck_assert_ptr_nonnull(strstr(out, "damaged"));
        free(out);
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SESSION_ERR);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "");
        h_session_close(a);
        ck_assert_int_eq(run("reset", NULL, NULL), 1);
        ck_assert_int_eq(run("reset", "--force", NULL), 0);
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

/* Runs PROG (a path) with ARGV[1..] as UID (0: root); its stdout and
 * stderr go to *RET_OUT. Returns the exit status. */
static int run_as(uid_t uid, const char *prog, const char *const *argv, char **ret_out) {
        int p[2], status;
        /* opened as root: the build tree may sit under a directory the
         * unprivileged user cannot enter (a 0700 mktemp -d) */
        int exe = open(prog, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(exe, 0);
        ck_assert_int_eq(pipe(p), 0);
        fflush(NULL);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(p[1], 1);
                dup2(p[1], 2);
                if (uid != 0 && (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0))
                        _exit(99);
                fexecve(exe, (char *const *) argv, environ);
                _exit(98);
        }
        close(exe);
        close(p[1]);
        size_t cap = 65536, len = 0;
        char *buf = malloc(cap);
        ck_assert_ptr_nonnull(buf);
        for (ssize_t n; (n = read(p[0], buf + len, cap - 1 - len)) > 0;)
                len += (size_t) n;
        buf[len] = '\0';
        close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        *ret_out = buf;
        return WEXITSTATUS(status);
}

/* A user who is not root: alice, or in h_init_userns's namespace, where no
 * other uid is mapped, root there (this user outside it). */
static uid_t any_user(void) {
        return h_in_userns() ? 0 : H_UID_ALICE;
}

START_TEST(test_refuses_non_root_and_bad_usage) {
        char *out = NULL;
        const char *argv[] = { "xdevices", "gc", NULL };
        ck_assert_int_eq(run_as(H_UID_ALICE, helper(), argv, &out), 3);
        ck_assert_ptr_nonnull(strstr(out, "must be run as root"));
        free(out);
        ck_assert_int_eq(run("frobnicate", NULL, NULL), 2);
        ck_assert_int_eq(run("apply", NULL, NULL), 2);
}
END_TEST

/* --version on every program: the configure version, exit 0. */
START_TEST(test_version) {
        const char *progs[] = { helper(), getenv("XDEV_DAEMON"), getenv("XDEV_VT_RUN") };
        const char *names[] = { "xdevices ", "xdevicesd ", "xdevices-vt-run " };
        for (size_t i = 0; i < 3; i++) {
                char *out = NULL, want[64];
                const char *argv[] = { names[i], "--version", NULL };
                ck_assert_msg(progs[i], "XDEV_DAEMON or XDEV_VT_RUN is not set");
                ck_assert_int_eq(run_as(any_user(), progs[i], argv, &out), 0);
                snprintf(want, sizeof want, "%s%s\n", names[i], PACKAGE_VERSION);
                ck_assert_str_eq(out, want);
                free(out);
        }
}
END_TEST

/* xdevices check, as root and as any user: every error of the file and
 * its drop-ins as FILE:LINE: message, exit 1; a good file "ok", exit 0; a
 * named file that is missing is an error, not the defaults. */
START_TEST(test_check) {
        char *out = NULL;
        const char *argv[] = { "xdevices", "check", "--conf=" H_ROOT "/check/x.conf", NULL };
        const char *argv_missing[] = { "xdevices", "--conf=" H_ROOT "/check/none.conf", "check",
                                       NULL };

        (void) mkdir(H_ROOT "/check", 0755);
        (void) mkdir(H_ROOT "/check/xdevices.d", 0755);
        h_write_file(H_ROOT "/check/x.conf",
                     "# a comment\nmode = chwon\nfrobnicate = 1\ndrm = r\nlinger_grace = 1x\n"
                     "mode acl\ndrm = rw # read and write\n",
                     0644, 0);
        h_write_file(H_ROOT "/check/xdevices.d/10-a.conf", "\ninput = sometimes\n", 0644, 0);
        h_write_file(H_ROOT "/check/real.conf", "drm = r\n", 0644, 0);
        (void) unlink(H_ROOT "/check/xdevices.d/20-link.conf");
        ck_assert_int_eq(symlink("../real.conf", H_ROOT "/check/xdevices.d/20-link.conf"), 0);
        h_write_file(H_ROOT "/check/xdevices.d/30-b.conf", "drm = r\n", 0644, 0);
        /* root, and a user (none but root is mapped in h_init_userns's) */
        for (int as = 0; as < (h_in_userns() ? 1 : 2); as++) {
                ck_assert_int_eq(run_as(as ? H_UID_ALICE : 0, helper(), argv, &out), 1);
                printf("--- xdevices check (uid %d) ---\n%s---\n", as ? H_UID_ALICE : 0, out);
                assert_has(out,
                           H_ROOT
                           "/check/x.conf:2: bad value \"chwon\" for \"mode\" (acl, chown)\n");
                assert_has(out, H_ROOT "/check/x.conf:3: unknown key");
                assert_has(out,
                           H_ROOT
                           "/check/x.conf:5: bad value \"1x\" for \"linger_grace\" "
                           "(milliseconds, 0 to 60000)\n");
                assert_has(out,
                           H_ROOT
                           "/check/x.conf:6: \"mode acl\": missing \"=\" (write "
                           "\"mode = acl\")\n");
                assert_has(out,
                           H_ROOT
                           "/check/x.conf:7: bad value \"rw # read and write\" for "
                           "\"drm\" (off, r, rw); a comment must be on a line of its "
                           "own, not after a value\n");
                assert_has(out,
                           H_ROOT
                           "/check/xdevices.d/10-a.conf:2: bad value \"sometimes\" "
                           "for \"input\" (off, r, rw)\n");
                assert_has(out,
                           H_ROOT
                           "/check/xdevices.d/20-link.conf: a symbolic link: config "
                           "files must be regular files");
                /* each file's errors under its own name, and the good one named */
                assert_has(out, H_ROOT "/check/x.conf: 5 errors\n");
                assert_has(out, H_ROOT "/check/xdevices.d/10-a.conf: 1 error\n");
                assert_has(out, H_ROOT "/check/xdevices.d/20-link.conf: 1 error\n");
                assert_has(out, H_ROOT "/check/xdevices.d/30-b.conf: ok\n");
                free(out);
        }
        ck_assert_int_eq(unlink(H_ROOT "/check/xdevices.d/20-link.conf"), 0);
        /* a group-writable drop-in is an error of its own */
        h_write_file(H_ROOT "/check/x.conf", "drm = r\n", 0644, 0);
        h_write_file(H_ROOT "/check/xdevices.d/10-a.conf", "input = r\n", 0664, 0);
        ck_assert_int_eq(run_as(0, helper(), argv, &out), 1);
        ck_assert_ptr_nonnull(
                strstr(out, H_ROOT "/check/xdevices.d/10-a.conf: must be owned by root"));
        free(out);
        h_write_file(H_ROOT "/check/xdevices.d/10-a.conf", "input = r\n", 0644, 0);
        h_write_file(H_ROOT "/check/x.conf", "drm = r\ndevices = glob\nglob = drm:/dev/dri/card*\n",
                     0644, 0);
        ck_assert_int_eq(run_as(any_user(), helper(), argv, &out), 0);
        ck_assert_str_eq(out,
                         H_ROOT "/check/x.conf: ok\n" H_ROOT
                                "/check/xdevices.d/10-a.conf: ok\n" H_ROOT
                                "/check/xdevices.d/30-b.conf: ok\n");
        free(out);
        /* a user against a root 0600 file: root's to read, and said so */
        if (!h_in_userns()) {
                h_write_file(H_ROOT "/check/x.conf", "drm = r\n", 0600, 0);
                ck_assert_int_eq(run_as(H_UID_ALICE, helper(), argv, &out), 1);
                assert_has(out,
                           H_ROOT
                           "/check/x.conf: cannot open: Permission denied (it is root's: run "
                           "as root to read it)\n");
                free(out);
        }
        h_write_file(H_ROOT "/check/x.conf", "drm = r\n", 0644, 0);
        /* devices = glob with no glob line: fine to parse, but said */
        h_write_file(H_ROOT "/check/x.conf", "devices = glob\n", 0644, 0);
        ck_assert_int_eq(run_as(0, helper(), argv, &out), 0);
        ck_assert_ptr_nonnull(
                strstr(out, "warning: devices = glob but no glob lines: a login gets only its VT"));
        free(out);
        ck_assert_int_eq(run_as(0, helper(), argv_missing, &out), 1);
        ck_assert_ptr_nonnull(
                strstr(out, H_ROOT "/check/none.conf: cannot open: No such file or directory"));
        free(out);
}
END_TEST

/* xdevices status by a user who is not root: her own VT and grants, read
 * from the nodes; nothing of bob (his name, uid, VT) and no originals. */
START_TEST(test_status_as_user) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        const char *argv[] = { "xdevices", "status", NULL };
        const char *argv_json[] = { "xdevices", "status", "--json", NULL };
        char *out = NULL, want[128], bob_uid[32];

        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        snprintf(bob_uid, sizeof bob_uid, "%d", H_UID_BOB);
        ck_assert_int_eq(run_as(H_UID_ALICE, helper(), argv, &out), 0);
        printf("--- xdevices status as xdalice ---\n%s---\n", out);
        snprintf(want, sizeof want, "user: xdalice (uid %d)", H_UID_ALICE);
        ck_assert_ptr_nonnull(strstr(out, want));
        snprintf(want, sizeof want, "console VTs: tty%d\n", h_vt);
        ck_assert_ptr_nonnull(strstr(out, want));
        ck_assert_ptr_nonnull(strstr(out, "shared devices (DRM, input): yours"));
        ck_assert_ptr_nonnull(strstr(out, "/dev/dri/card0           drm     rw (ACL entry)"));
        ck_assert_ptr_nonnull(strstr(out, "/dev/input/event0"));
        ck_assert_ptr_null(strstr(out, "xdbob"));
        ck_assert_ptr_null(strstr(out, bob_uid));
        ck_assert_ptr_null(strstr(out, "was "));
        free(out);
        ck_assert_int_eq(run_as(H_UID_BOB, helper(), argv, &out), 0);
        printf("--- xdevices status as xdbob ---\n%s---\n", out);
        snprintf(want, sizeof want, "console VTs: tty%d\n", h_vt + 1);
        ck_assert_ptr_nonnull(strstr(out, want));
        ck_assert_ptr_nonnull(strstr(out, "shared devices (DRM, input): not yours"));
        ck_assert_ptr_null(strstr(out, "/dev/dri/card0"));
        ck_assert_ptr_null(strstr(out, "xdalice"));
        free(out);
        ck_assert_int_eq(run_as(H_UID_ALICE, helper(), argv_json, &out), 0);
        snprintf(want, sizeof want, ",\"uid\":%d,\"user\":\"xdalice\",", H_UID_ALICE);
        ck_assert_ptr_nonnull(strstr(out, want));
        ck_assert_ptr_nonnull(strstr(out, "\"holds_shared\":true"));
        ck_assert_ptr_nonnull(strstr(
                out,
                "{\"path\":\"/dev/dri/card0\",\"class\":\"drm\",\"access\":\"rw\",\"by\":\"acl\"}"));
        free(out);
        h_session_close(b);
        h_session_close(a);
        /* after the logout: nothing */
        ck_assert_int_eq(run_as(H_UID_ALICE, helper(), argv, &out), 0);
        ck_assert_ptr_nonnull(strstr(out, "nodes: 0\n"));
        free(out);
}
END_TEST

/* What rm -rf of the state directory does to a running system: every
 * session record and the ledger are gone while the nodes keep their
 * grants. */
static void lose_state(void) {
        ck_assert_int_eq(system("rm -rf /run/xdevices"), 0);
}

/* No node the test looks at carries the mark of a grant any more. */
static void assert_no_marks(const struct h_snap *s) {
        char buf[64];
        for (size_t i = 0; i < s->n; i++)
                ck_assert_msg(getxattr(s->path[i], "trusted.xdevices", buf, sizeof buf) < 0 &&
                                      errno == ENODATA,
                              "%s still carries trusted.xdevices", s->path[i]);
}

START_TEST(test_state_lost_mid_session_logout_restores_every_node) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        lose_state();
        h_session_close(a);
        h_snap_assert_equal(&before, "after the logout of a session whose state was lost");
        assert_no_marks(&before);
        h_snap_free(&before);
}
END_TEST

START_TEST(test_state_lost_status_says_so_and_gc_restores_loudly) {
        struct h_snap before;
        char *out = NULL;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        lose_state();
        /* status changes nothing and tells the admin to look */
        ck_assert_int_eq(run("status", NULL, &out), 5);
        ck_assert_msg(strstr(out, "state was lost") && strstr(out, "/dev/dri/card0"), "%s", out);
        free(out);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        ck_assert_int_eq(run("status", "--json", &out), 5);
        ck_assert_msg(strstr(out, "\"lost\":[{\"path\":"), "%s", out);
        free(out);
        /* gc puts every node back, names each, and exits non-zero */
        ck_assert_int_eq(run("gc", NULL, &out), 5);
        ck_assert_msg(strstr(out, "/dev/dri/card0") && strstr(out, h_vt_path(0)) &&
                              strstr(out, "lost"),
                      "%s", out);
        free(out);
        h_snap_assert_equal(&before, "after gc");
        assert_no_marks(&before);
        ck_assert_int_eq(run("status", NULL, &out), 0);
        free(out);
        ck_assert_int_eq(run("gc", NULL, &out), 0);
        free(out);
        h_session_close(a);
        h_snap_assert_equal(&before, "after the logout");
        h_snap_free(&before);
}
END_TEST

START_TEST(test_state_lost_next_login_does_not_take_the_grant_for_the_original) {
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        lose_state();
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_BOB), "rw");
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "");
        ck_assert_str_eq(h_acl_of(h_vt_path(0), H_UID_ALICE), "");
        h_session_close(b);
        h_snap_assert_equal(&before, "after the next login's logout");
        h_session_close(a);
        h_snap_assert_equal(&before, "after both logouts");
        assert_no_marks(&before);
        h_snap_free(&before);
}
END_TEST

START_TEST(test_state_lost_reset_restores_and_says_so) {
        struct h_snap before;
        char *out = NULL;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        lose_state();
        ck_assert_int_eq(run("reset", NULL, &out), 5);
        ck_assert_msg(strstr(out, "lost"), "%s", out);
        free(out);
        h_snap_assert_equal(&before, "after reset");
        h_session_close(a);
        h_snap_free(&before);
}
END_TEST

/* What the grantee of a lost state still holds open is cut off as at a VT
 * switch (her sessions are unknown): looked at, never terminated for it,
 * whatever the lingering policy. */
START_TEST(test_state_lost_holders_are_cut_off_not_killed) {
        char *out = NULL;
        int status;
        h_fresh("devices = glob\nglob = console:/dev/tty0\nconsole = rw\nlogind = ignore\n"
                "lingering = kill\nlinger_grace = 1000\n",
                NULL);
        struct h_snap before;
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/tty0", H_UID_ALICE), "rw");
        pid_t holder = h_holder_start("/dev/tty0", 1, H_UID_ALICE, false);
        lose_state();
        ck_assert_int_eq(run("gc", NULL, &out), 5);
        ck_assert_msg(strstr(out, "processes still holding what the lost state granted: 1 found"),
                      "%s", out);
        free(out);
        h_snap_assert_equal(&before, "after gc");
        ck_assert_msg(waitpid(holder, &status, WNOHANG) == 0, "alice's holder was ended");
        ck_assert_int_eq(kill(holder, SIGKILL), 0);
        ck_assert_int_eq(waitpid(holder, &status, 0), holder);
        h_session_close(a);
        h_snap_free(&before);
}
END_TEST

/* login(1) gives the VT to the user 0620 after the session opened; with an
 * ACL that mode is the mask, which gc must leave as it is. */
START_TEST(test_gc_keeps_a_vt_mode_and_mask) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of(h_vt_path(0), H_UID_ALICE), "rw");
        ck_assert_int_eq(chown(h_vt_path(0), H_UID_ALICE, 5), 0);
        ck_assert_int_eq(chmod(h_vt_path(0), 0620), 0);
        char *was = h_node_describe(h_vt_path(0));
        ck_assert_int_eq(run("gc", NULL, NULL), 0);
        char *now = h_node_describe(h_vt_path(0));
        ck_assert_str_eq(now, was);
        free(now);
        free(was);
        h_session_close(a);
}
END_TEST

/* The package's prerm: "reset --revoke" takes every grant back and cuts a
 * running display server off as a VT switch does, but never terminates
 * it, whatever the lingering policy. A plain reset sweeps as a logout
 * does: under lingering = kill the same holder goes. */
START_TEST(test_reset_revoke_cuts_off_without_killing) {
        struct h_snap before;
        int status;
        h_fresh("devices = glob\nglob = console:/dev/tty0\nconsole = rw\nlogind = ignore\n"
                "lingering = kill\nlinger_grace = 1000\n",
                NULL);
        h_snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/tty0", H_UID_ALICE), "rw");
        pid_t holder = h_holder_start("/dev/tty0", 1, H_UID_ALICE, false);
        ck_assert_int_eq(run("reset", "--revoke", NULL), 0);
        h_snap_assert_equal(&before, "after reset --revoke");
        ck_assert_msg(waitpid(holder, NULL, WNOHANG) == 0, "reset --revoke ended alice's holder");
        ck_assert_int_eq(h_session_close(a), H_IGNORED);
        a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/tty0", H_UID_ALICE), "rw");
        ck_assert_int_eq(run("reset", NULL, NULL), 0);
        ck_assert_int_eq(waitpid(holder, &status, WNOHANG), holder);
        ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
        h_snap_assert_equal(&before, "after reset");
        ck_assert_int_eq(h_session_close(a), H_IGNORED);
        h_snap_free(&before);
}
END_TEST

/* With no VT to read in /sys (a container, a chroot), status says the
 * active VT is unknown, not a negative errno; JSON has null there, and a
 * version. */
START_TEST(test_status_without_active_vt_says_unknown) {
        char *out = NULL;
        int fd = open(H_ROOT "/active", O_WRONLY | O_TRUNC | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "none\n", 5), 5);
        (void) close(fd);
        ck_assert_int_eq(run("status", NULL, &out), 0);
        assert_has(out, "active VT: unknown (/sys/class/tty/tty0/active: ");
        free(out);
        ck_assert_int_eq(run("status", "--json", &out), 0);
        assert_has(out, "{\"version\":\"" PACKAGE_VERSION "\",");
        assert_has(out, "\"active_vt\":null");
        free(out);
        h_set_active_vt(1);
}
END_TEST

/* A usage error names the bad word and points at --help in one line,
 * not the whole help. */
START_TEST(test_usage_error_names_the_word) {
        char *out = NULL;
        ck_assert_int_eq(run("frobnicate", NULL, &out), 2);
        ck_assert_str_eq(out,
                         "xdevices: unknown command \"frobnicate\"\n"
                         "Try 'xdevices --help' for more information.\n");
        free(out);
        ck_assert_int_eq(run("status", "--revoke", &out), 2);
        ck_assert_str_eq(out,
                         "xdevices: status: \"--revoke\" does not go with it\n"
                         "Try 'xdevices --help' for more information.\n");
        free(out);
}
END_TEST

/* A reset says what it took and which sessions it forgot, on stderr and in
 * syslog, as gc says what it reaps: the package's prerm runs it, and a
 * user at the console loses her devices without a word otherwise. */
START_TEST(test_reset_says_what_it_took_and_forgot) {
        char want[300];
        h_fresh("devices = glob\nglob = console:/dev/tty0\nconsole = rw\nlogind = ignore\n", NULL);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_str_eq(h_acl_of("/dev/tty0", H_UID_ALICE), "rw");
        pid_t holder = h_holder_start("/dev/tty0", 1, H_UID_ALICE, false);
        free(h_log_take());
        char *err = NULL;
        ck_assert_int_eq(run("reset", "--revoke", &err), 0);
        char *log = h_log_take();
        (void) snprintf(want, sizeof want,
                        "reset: forgetting the session of \"xdalice\" on tty%d (leader %d still "
                        "logged in: it keeps its login, not its devices)",
                        h_vt, (int) a->pid);
        ck_assert_msg(strstr(err, want), "stderr lacks \"%s\":\n%s", want, err);
        ck_assert_msg(strstr(log, want), "syslog lacks \"%s\":\n%s", want, log);
        (void) snprintf(want, sizeof want, "reset: taking \"/dev/tty0\" (console) back from uid %u",
                        (unsigned) H_UID_ALICE);
        ck_assert_msg(strstr(err, want), "stderr lacks \"%s\":\n%s", want, err);
        ck_assert_msg(strstr(log, want), "syslog lacks \"%s\":\n%s", want, log);
        ck_assert_msg(strstr(err, "lingering holders: "), "stderr lacks the sweep's counts:\n%s",
                      err);
        free(err), free(log);
        (void) kill(holder, SIGKILL), (void) waitpid(holder, NULL, 0);
        ck_assert_int_eq(h_session_close(a), H_IGNORED);
}
END_TEST

/* ---- mdev: "*xdevices mdev" in mdev.conf, without udevd ---- */

#define DP_EVENT5 "/devices/platform/i8042/serio1/input/input5/event5"
#define DP_CARD1 "/devices/pci0000:00/0000:00:02.0/drm/card1"

/* One more variable of the event, such as a synthetic uevent's argument. */
static const char *mdev_extra_env;

/* Runs "xdevices mdev" as an mdev.conf line "*xdevices mdev" does: with the
 * kernel's uevent variables and mdev's MDEV (the node's name under /dev).
 * A NULL value leaves that variable out. */
static int mdev_event(const char *action, const char *mdev, const char *subsystem,
                      const char *devpath, const char *maj, const char *min, char **ret_out) {
        const char *argv[] = { helper(), "--conf=" H_CONF, "mdev", NULL };
        const char *names[] = { "ACTION", "MDEV", "SUBSYSTEM", "DEVPATH", "MAJOR", "MINOR" };
        const char *values[] = { action, mdev, subsystem, devpath, maj, min };
        char vars[6][300];
        const char *env[10];
        size_t n = 0;

        for (size_t i = 0; i < 6; i++)
                if (values[i]) {
                        (void) snprintf(vars[n], sizeof vars[n], "%s=%s", names[i], values[i]);
                        env[n] = vars[n];
                        n++;
                }
        if (mdev_extra_env)
                env[n++] = mdev_extra_env;
        env[n++] = "SEQNUM=1234";
        env[n++] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
        env[n] = NULL;
        return h_run_helper(argv, env, ret_out);
}

START_TEST(test_mdev_hotplug_during_session_is_granted_then_restored) {
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        new_node("/dev/input/event5", 13, 69);
        new_node("/dev/dri/card1", 226, 1);
        char *before = h_node_describe("/dev/input/event5");
        char *card_before = h_node_describe("/dev/dri/card1"), *out = NULL;
        int r = mdev_event("add", "input/event5", "input", DP_EVENT5, "13", "69", &out);
        ck_assert_msg(r == 0, "input add: exit %d: %s", r, out);
        free(out);
        ck_assert_str_eq(h_acl_of("/dev/input/event5", H_UID_ALICE), "rw");
        r = mdev_event("add", "dri/card1", "drm", DP_CARD1, "226", "1", &out);
        ck_assert_msg(r == 0, "drm add: exit %d: %s", r, out);
        free(out);
        ck_assert_str_eq(h_acl_of("/dev/dri/card1", H_UID_ALICE), "rw");
        /* mdev runs a "*" line before it unlinks the node: it goes back as it
         * was and leaves the ledger */
        ck_assert_int_eq(mdev_event("remove", "dri/card1", "drm", DP_CARD1, "226", "1", NULL), 0);
        char *card_after = h_node_describe("/dev/dri/card1");
        ck_assert_str_eq(card_after, card_before);
        ck_assert_int_eq(run("status", "--json", &out), 0);
        ck_assert_ptr_null(strstr(out, "\"/dev/dri/card1\""));
        ck_assert_ptr_nonnull(strstr(out, "\"/dev/input/event5\""));
        free(out);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *after = h_node_describe("/dev/input/event5");
        ck_assert_str_eq(after, before);
        /* after logout, a new add grants nothing */
        ck_assert_int_eq(mdev_event("add", "input/event5", "input", DP_EVENT5, "13", "69", NULL),
                         0);
        char *again = h_node_describe("/dev/input/event5");
        ck_assert_str_eq(again, before);
        free(before), free(after), free(again), free(card_before), free(card_after);
}
END_TEST

/* One mdev event during a live session: its exit status (-1: any but 0),
 * a word its message must hold (NULL: none), and the file WATCH unchanged. */
static void assert_mdev(int want, const char *action, const char *mdev, const char *subsystem,
                        const char *devpath, const char *maj, const char *min, const char *watch,
                        const char *needle) {
        char *before = h_node_describe(watch), *out = NULL;
        int r = mdev_event(action, mdev, subsystem, devpath, maj, min, &out);
        ck_assert_msg(want < 0 ? r != 0 : r == want,
                      "MDEV=%s DEVPATH=%s: exit %d, expected %d (%s)", mdev, devpath, r, want, out);
        ck_assert_msg(!needle || strstr(out, needle), "MDEV=%s: message \"%s\" lacks \"%s\"", mdev,
                      out, needle);
        char *after = h_node_describe(watch);
        ck_assert_msg(strcmp(before, after) == 0, "MDEV=%s: %s changed: \"%s\" -> \"%s\"", mdev,
                      watch, before, after);
        free(before), free(after), free(out);
}

START_TEST(test_mdev_hostile_or_foreign_events_change_nothing) {
        const char *ev5 = "/dev/input/event5";
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        new_node(ev5, 13, 69);
        /* refused (exit 4): names, paths and numbers that do not fit */
        assert_mdev(4, "add", "/dev/input/event5", "input", DP_EVENT5, "13", "69", ev5,
                    "not a node name under /dev");
        assert_mdev(4, "add", "input/../../etc/shadow", "input", DP_EVENT5, "13", "69",
                    "/etc/shadow", "not a node name under /dev");
        assert_mdev(4, "add", "input//event5", "input", DP_EVENT5, "13", "69", ev5,
                    "not a node name under /dev");
        assert_mdev(4, "add", "input/event5", "input", "/sys/devices/x/event5", "13", "69", ev5,
                    "DEVPATH");
        assert_mdev(4, "add", "input/event5", "input", "/devices/x/../event5", "13", "69", ev5,
                    "DEVPATH");
        assert_mdev(4, "add", "input/event5", "input", DP_EVENT5, "13x", "69", ev5, "MAJOR/MINOR");
        assert_mdev(4, "add", "input/event5", "input", DP_EVENT5, NULL, NULL, ev5, "MAJOR/MINOR");
        assert_mdev(4, "add", "input/event5", "input", DP_EVENT5, "13", "70", ev5, "not the 13:70");
        assert_mdev(4, "add", "input/event5", "input", DP_EVENT5, "226", "69", ev5, "major 226");
        assert_mdev(4, NULL, "input/event5", "input", DP_EVENT5, "13", "69", ev5, "ACTION or MDEV");
        assert_mdev(4, "add", NULL, "input", DP_EVENT5, "13", "69", ev5, "ACTION or MDEV");
        /* never through a symlink: not the last component, nor one before it */
        ck_assert_int_eq(symlink("/etc/shadow", "/dev/input/event7"), 0);
        assert_mdev(4, "add", "input/event7", "input", "/devices/x/input7/event7", "13", "71",
                    "/etc/shadow", "not a device node of class input");
        ck_assert_int_eq(symlink("/dev/input", "/dev/evil"), 0);
        assert_mdev(-1, "add", "evil/event5", "input", DP_EVENT5, "13", "69", ev5, NULL);
        /* nothing to do (exit 0): not a console device, a scan, another action */
        assert_mdev(0, "add", "input/event5", "block", "/devices/x/block/sda", "13", "69", ev5,
                    NULL);
        assert_mdev(0, "add", "input/event5", "input", "/devices/x/input/input5", "13", "69", ev5,
                    NULL);
        assert_mdev(0, "add", "input/event5", "drm", "/devices/x/drm/card1-HDMI-A-1", "13", "69",
                    ev5, NULL);
        assert_mdev(0, "add", "input/event5", "input", NULL, NULL, NULL, ev5, NULL);
        assert_mdev(0, "bind", "input/event5", "input", DP_EVENT5, "13", "69", ev5, NULL);
        /* xdevicesd's announcement of a node it granted is no new node */
        mdev_extra_env = "SYNTH_ARG_XDEVICES=announce";
        assert_mdev(0, "change", "input/event5", "input", DP_EVENT5, "13", "69", ev5, NULL);
        mdev_extra_env = NULL;
        ck_assert_str_eq(h_acl_of(ev5, H_UID_ALICE), "");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

/* ---- the shipped mdev.conf lines, run by busybox's own mdev ---- */

/* busybox mdev reads /etc/mdev.conf and, for an "add", /sys$DEVPATH/dev.
 * Both are put in place in the tests' mount namespace only: an overlay on
 * /etc (with the harness's /etc/passwd bound again on top of it) and a
 * tmpfs on a directory of /sys/devices that nothing here reads. */
#define BB_SYSDIR "/sys/devices/virtual/workqueue"
#define BB_DP_EVENT5 "/devices/virtual/workqueue/xdevtest/input/input5/event5"
#define BB_DP_CARD1 "/devices/virtual/workqueue/xdevtest/drm/card1"

static const char *busybox(void) {
        if (access("/bin/busybox", X_OK) == 0)
                return "/bin/busybox";
        if (access("/usr/bin/busybox", X_OK) == 0)
                return "/usr/bin/busybox";
        return NULL;
}

/* The lines of mdev/mdev.conf.in, with this tree's helper and the tests'
 * config in place of "@sbindir@/xdevices". */
static void write_mdev_conf(void) {
        const char *in = getenv("XDEV_MDEV_CONF_IN");
        char line[1024], cmd[512];
        FILE *f = fopen(in ? in : "../mdev/mdev.conf.in", "re");
        FILE *out = fopen("/etc/mdev.conf", "we");
        ck_assert_msg(f && out, "mdev.conf.in or /etc/mdev.conf: %s", strerror(errno));
        (void) snprintf(cmd, sizeof cmd, "%s --conf=" H_CONF, helper());
        while (fgets(line, sizeof line, f)) {
                char *at = strstr(line, "@sbindir@/xdevices");
                if (at) {
                        *at = '\0';
                        fprintf(out, "%s%s%s", line, cmd, at + strlen("@sbindir@/xdevices"));
                } else
                        fputs(line, out);
        }
        fclose(f);
        ck_assert_int_eq(fclose(out), 0);
}

static void sys_dev_file(const char *devpath, const char *majmin) {
        char dir[300], cmd[400];
        (void) snprintf(dir, sizeof dir, "/sys%s", devpath);
        (void) snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
        (void) snprintf(dir, sizeof dir, "/sys%s/dev", devpath);
        h_write_file(dir, majmin, 0444, 0);
}

/* Returns false, having said why, where this machine cannot do it. */
static bool busybox_mdev_setup(void) {
        if ((mkdir(H_ROOT "/etc-upper", 0755) < 0 && errno != EEXIST) ||
            (mkdir(H_ROOT "/etc-work", 0755) < 0 && errno != EEXIST))
                ck_abort_msg("mkdir: %s", strerror(errno));
        if (mount("xdevtest", "/etc", "overlay", 0,
                  "lowerdir=/etc,upperdir=" H_ROOT "/etc-upper,workdir=" H_ROOT "/etc-work") < 0) {
                fprintf(stderr, "no overlay on /etc (%s): the mdev.conf lines are not tried\n",
                        strerror(errno));
                return false;
        }
        ck_assert_int_eq(mount(H_ROOT "/passwd", "/etc/passwd", NULL, MS_BIND, NULL), 0);
        write_mdev_conf();
        ck_assert_int_eq(mount("xdevtest", BB_SYSDIR, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"),
                         0);
        sys_dev_file(BB_DP_EVENT5, "13:69\n");
        sys_dev_file(BB_DP_CARD1, "226:1\n");
        return true;
}

static void busybox_mdev_teardown(void) {
        (void) umount2(BB_SYSDIR, MNT_DETACH);
        (void) umount2("/etc/passwd", MNT_DETACH);
        (void) umount2("/etc", MNT_DETACH);
}

/* busybox mdev as the kernel runs it for a uevent (hotplug mode). */
static int busybox_mdev(const char *bb, const char *action, const char *devpath,
                        const char *subsystem, const char *devname, const char *maj,
                        const char *min, char **ret_out) {
        const char *argv[] = { bb, "mdev", NULL };
        char e[6][300];
        const char *env[] = { e[0], e[1], e[2],          e[3],
                              e[4], e[5], "SEQNUM=1234", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                              NULL };
        (void) snprintf(e[0], sizeof e[0], "ACTION=%s", action);
        (void) snprintf(e[1], sizeof e[1], "DEVPATH=%s", devpath);
        (void) snprintf(e[2], sizeof e[2], "SUBSYSTEM=%s", subsystem);
        (void) snprintf(e[3], sizeof e[3], "DEVNAME=%s", devname);
        (void) snprintf(e[4], sizeof e[4], "MAJOR=%s", maj);
        (void) snprintf(e[5], sizeof e[5], "MINOR=%s", min);
        return h_run_helper(argv, env, ret_out);
}

START_TEST(test_mdev_conf_lines_under_busybox_mdev) {
        const char *bb = busybox();
        struct stat st;
        char *out = NULL;

        if (!bb) {
                fprintf(stderr, "no busybox: the mdev.conf lines are not tried\n");
                return;
        }
        if (!busybox_mdev_setup())
                return;
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        /* mdev makes the nodes, then runs "xdevices mdev": they are granted */
        int r = busybox_mdev(bb, "add", BB_DP_EVENT5, "input", "input/event5", "13", "69", &out);
        ck_assert_msg(r == 0, "mdev add input/event5: exit %d: %s", r, out);
        free(out);
        ck_assert_int_eq(lstat("/dev/input/event5", &st), 0);
        ck_assert(S_ISCHR(st.st_mode) && st.st_rdev == makedev(13, 69));
        ck_assert_str_eq(h_acl_of("/dev/input/event5", H_UID_ALICE), "rw");
        r = busybox_mdev(bb, "add", BB_DP_CARD1, "drm", "dri/card1", "226", "1", &out);
        ck_assert_msg(r == 0, "mdev add dri/card1: exit %d: %s", r, out);
        free(out);
        ck_assert_str_eq(h_acl_of("/dev/dri/card1", H_UID_ALICE), "rw");
        /* mdev runs the line before it removes the node: the ledger forgets it */
        ck_assert_int_eq(busybox_mdev(bb, "remove", BB_DP_CARD1, "drm", "dri/card1", "226", "1",
                                      NULL),
                         0);
        ck_assert_int_eq(lstat("/dev/dri/card1", &st), -1);
        ck_assert_int_eq(run("status", "--json", &out), 0);
        ck_assert_ptr_null(strstr(out, "\"/dev/dri/card1\""));
        ck_assert_ptr_nonnull(strstr(out, "\"/dev/input/event5\""));
        free(out);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        ck_assert_str_eq(h_acl_of("/dev/input/event5", H_UID_ALICE), "");
        busybox_mdev_teardown();
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("helper");
        TCase *tc = h_tcase(s, "udev", 60, fresh, NULL);
        tcase_add_test(tc, test_hotplug_during_session_is_granted_then_restored);
        tcase_add_test(tc, test_no_session_nothing_granted);
        tcase_add_test(tc, test_spoofed_and_odd_events_are_refused);
        tcase_add_test(tc, test_remove_event_forgets_the_node);
        tcase_add_test(tc, test_status_shows_two_users);
        tcase_add_test(tc, test_gc_reaps_killed_session);
        tcase_add_test(tc, test_reset_restores_everything);
        tcase_add_test(tc, test_damaged_state_is_refused_until_forced_reset);
        tcase_add_test(tc, test_refuses_non_root_and_bad_usage);
        tcase_add_test(tc, test_status_as_user);
        tcase_add_test(tc, test_state_lost_mid_session_logout_restores_every_node);
        tcase_add_test(tc, test_state_lost_status_says_so_and_gc_restores_loudly);
        tcase_add_test(tc, test_state_lost_next_login_does_not_take_the_grant_for_the_original);
        tcase_add_test(tc, test_state_lost_reset_restores_and_says_so);
        tcase_add_test(tc, test_state_lost_holders_are_cut_off_not_killed);
        tcase_add_test(tc, test_gc_keeps_a_vt_mode_and_mask);
        tcase_add_test(tc, test_reset_revoke_cuts_off_without_killing);
        tcase_add_test(tc, test_reset_says_what_it_took_and_forgot);
        tcase_add_test(tc, test_status_without_active_vt_says_unknown);
        tc = h_tcase(s, "mdev", 60, fresh, NULL);
        tcase_add_test(tc, test_mdev_hotplug_during_session_is_granted_then_restored);
        tcase_add_test(tc, test_mdev_hostile_or_foreign_events_change_nothing);
        tcase_add_test(tc, test_mdev_conf_lines_under_busybox_mdev);
        return s;
}

/* Usage errors of xdevices, one a test: exit 2, the reason and the pointer
 * at --help, nothing else. */
static const struct {
        const char *args[5], *said;
} usage_errors[] = {
        { { NULL }, "no command given" },
        { { "--json", NULL }, "no command given" },
        { { "frobnicate", NULL }, "unknown command \"frobnicate\"" },
        { { "status", "extra", NULL }, "status: unexpected operand \"extra\"" },
        { { "status", "--all", NULL }, "status: \"--all\" does not go with it" },
        { { "apply", NULL }, "apply: missing operand" },
        { { "apply", "/dev/input/event0", "/dev/input/event1", NULL },
          "apply: unexpected operand \"/dev/input/event1\"" },
        { { "apply", "--all", NULL }, "apply: \"--all\" does not go with it" },
        { { "forget", NULL }, "forget: missing operand" },
        { { "forget", "a", "b", NULL }, "forget: unexpected operand \"b\"" },
        { { "gc", "x", NULL }, "gc: unexpected operand \"x\"" },
        { { "gc", "--revoke", NULL }, "gc: \"--revoke\" does not go with it" },
        { { "reset", "x", NULL }, "reset: unexpected operand \"x\"" },
        { { "reset", "--revoke", "--force", "extra", NULL },
          "reset: unexpected operand \"extra\"" },
        { { "revoke", NULL }, "revoke: missing operand" },
        { { "revoke", "xdalice", "xdbob", NULL }, "revoke: unexpected operand \"xdbob\"" },
        { { "revoke", "--all", "xdalice", NULL }, "revoke: unexpected operand \"xdalice\"" },
        { { "mdev", "x", NULL }, "mdev: unexpected operand \"x\"" },
        { { "check", "x", NULL }, "check: unexpected operand \"x\"" },
        { { "--frobnicate", "status", NULL }, "unrecognized option '--frobnicate'" },
        { { "status", "--frobnicate", NULL }, "unrecognized option '--frobnicate'" },
        { { "-x", "status", NULL }, "invalid option -- 'x'" },
        { { "status", "--conf", NULL }, "option '--conf' requires an argument" },
};

START_TEST(test_usage_error_is_said_with_its_reason) {
        const char *argv[8] = { "xdevices", "--conf=" H_CONF };
        char *out = NULL, want[200];
        size_t n = 2;

        for (const char *const *a = usage_errors[_i].args; *a; a++)
                argv[n++] = *a;
        ck_assert_int_eq(run_as(0, helper(), argv, &out), 2);
        snprintf(want, sizeof want, "xdevices: %s\nTry 'xdevices --help' for more information.\n",
                 usage_errors[_i].said);
        ck_assert_str_eq(out, want);
        free(out);
}
END_TEST

/* "xdevices check" on a config of one broken line (conf-lines.h), one a
 * test: exit 1, the line and its reason, the count. */
START_TEST(test_check_names_a_broken_line) {
        const char *argv[] = { "xdevices", "check", "--conf=" H_ROOT "/one.conf", NULL };
        char *out = NULL, want[400];

        h_write_file(H_ROOT "/one.conf", conf_bad_lines[_i].text, 0644, 0);
        ck_assert_int_eq(run_as(any_user(), helper(), argv, &out), 1);
        snprintf(want, sizeof want, H_ROOT "/one.conf:1: %s\n", conf_bad_lines[_i].reason);
        assert_has(out, want);
        assert_has(out, H_ROOT "/one.conf: 1 error\n");
        free(out);
}
END_TEST

/* Lines "xdevices check" takes, one a test: every value of every key (and
 * the spellings a line may have), after a glob so that no warning is due. */
static const char *const good_lines[] = {
        "mode = acl",
        "mode = chown",
        "vt = off",
        "vt = r",
        "vt = rw",
        "drm = off",
        "drm = r",
        "input = off",
        "input = r",
        "console = r",
        "console = rw",
        "devices = glob",
        "logind = standdown",
        "logind = ignore",
        "lingering = revoke",
        "lingering = kill",
        "lingering = warn",
        "lingering = kill-user",
        "linger_grace = 0",
        "linger_grace = 60000",
        "linger_scan_budget = 1024",
        "linger_scan_budget = 1048576",
        "debug = yes",
        "debug = no",
        "runtime_dir = yes",
        "runtime_dir = no",
        "services = login,lightdm",
        "services = login, lightdm",
        "services = login ,\tlightdm ,",
        "deny_services = sshd",
        "deny_services = sshd, su",
        "glob = console:/dev/tty0",
        "glob = input:/dev/input/event*",
        "drm=r",
        "  drm = r",
        "# drm = sometimes",
        "",
};

START_TEST(test_check_takes_a_good_line) {
        const char *argv[] = { "xdevices", "check", "--conf=" H_ROOT "/one.conf", NULL };
        char *out = NULL, text[200];

        snprintf(text, sizeof text, "devices = glob\nglob = drm:/dev/dri/card*\n%s\n",
                 good_lines[_i]);
        h_write_file(H_ROOT "/one.conf", text, 0644, 0);
        ck_assert_msg(run_as(any_user(), helper(), argv, &out) == 0, "\"%s\": %s", good_lines[_i],
                      out);
        ck_assert_str_eq(out, H_ROOT "/one.conf: ok\n");
        free(out);
}
END_TEST

/* What the helper refuses on its command line alone, and what "xdevices
 * check" says of a config: as any user too. */
static Suite *usage_suite(void) {
        Suite *s = suite_create("helper usage");
        TCase *tc = h_tcase(s, "usage", 60, fresh, NULL);
        tcase_add_test(tc, test_usage_error_names_the_word);
        tcase_add_loop_test(tc, test_usage_error_is_said_with_its_reason, 0,
                            (int) (sizeof usage_errors / sizeof usage_errors[0]));
        tcase_add_test(tc, test_version);
        tc = h_tcase(s, "check", 60, fresh, NULL);
        tcase_add_test(tc, test_check);
        tcase_add_loop_test(tc, test_check_names_a_broken_line, 0, (int) CONF_N_BAD_LINES);
        tcase_add_loop_test(tc, test_check_takes_a_good_line, 0,
                            (int) (sizeof good_lines / sizeof good_lines[0]));
        return s;
}

H_SUITE(suite, H_ROOT_ONLY)
H_SUITE(usage_suite, H_USERNS)
H_MAIN(H_HARNESS)
