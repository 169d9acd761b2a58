/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Adversarial inputs through the real libpam, each with its safe result:
 * refused or ignored, logged where the admin must know, nothing touched.
 * Cases test-pam.c already pins (tty0, tty64, pts/3, :0, ttyS0, another VT,
 * no controlling tty, PAM_RHOST=localhost, su, planted XDG_*, symlink /
 * regular file / tty node at a node's path, user-owned, world-writable,
 * FIFO and /dev/zero configs) are not repeated here. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include <security/pam_appl.h>

#include "harness.h"
#include "runner.h"

#define N_MAX 32
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static const char *watched[N_MAX];
static size_t n_watched;
static char vtpath[H_N_VTS][32];
static const char *helper;
static unsigned n_cases;

struct snap {
        char *desc[N_MAX];
};

static void collect_nodes(void) {
        n_watched = 0;
        for (size_t i = 0; i < h_n_shared_nodes; i++)
                watched[n_watched++] = h_shared_nodes[i];
        watched[n_watched++] = "/dev/tty0";
        watched[n_watched++] = "/dev/tty1";
        watched[n_watched++] = "/dev/null";
        watched[n_watched++] = "/etc/shadow";
        watched[n_watched++] = "/etc/passwd";
        for (int i = 0; i < H_N_VTS; i++) {
                snprintf(vtpath[i], sizeof vtpath[i], "/dev/tty%d", h_vt + i);
                watched[n_watched++] = vtpath[i];
        }
}

static void snap_take(struct snap *s) {
        for (size_t i = 0; i < n_watched; i++)
                s->desc[i] = h_node_describe(watched[i]);
}

static void snap_check(struct snap *a, const char *when) {
        for (size_t i = 0; i < n_watched; i++) {
                char *now = h_node_describe(watched[i]);
                ck_assert_msg(strcmp(a->desc[i], now) == 0, "%s: %s was \"%s\", is \"%s\"", when,
                              watched[i], a->desc[i], now);
                free(now);
                free(a->desc[i]);
        }
}

/* One adversarial login: expects EXPECT from open_session, nothing touched,
 * and LOGGED (when not NULL) in syslog. */
static void expect_login(const char *user, int vt, const struct h_opts *o, int expect,
                         const char *logged, const char *what) {
        struct snap before;
        free(h_log_take());
        snap_take(&before);
        struct h_session *s = h_session_open(user, vt, o);
        ck_assert_msg(s->open_ret == expect, "%s: open returned %d, expected %d", what, s->open_ret,
                      expect);
        snap_check(&before, what);
        (void) h_session_close(s);
        if (logged) {
                char *log = h_log_take();
                ck_assert_msg(strstr(log, logged), "%s: \"%s\" not logged; the log was:\n%s", what,
                              logged, log);
                free(log);
        }
        n_cases++;
}

static void fresh(void) {
        h_fresh(NULL, "debug");
        n_cases = 0;
}

/* Each test runs in its own process: it adds its count to a file. */
static void count_cases(void) {
        FILE *f = fopen(H_ROOT "/cases", "a");
        if (f) {
                fprintf(f, "%u\n", n_cases);
                fclose(f);
        }
}

/* ---- PAM items ---- */

START_TEST(test_pam_tty_spellings_are_ignored) {
        static const char *const ttys[] = {
                "tty01",
                "tty1\n",
                "../",
                "../tty1",
                "tty99999999999999999999",
                "tty18446744073709551617",
                "/dev/tty1/",
                "/dev//tty1",
                "tty 1",
                "tty+1",
                "tty-1",
                "TTY1",
                "tty",
                "/dev/tty",
                "",
                "/proc/self/fd/0",
                "tty1 ",
                " tty1",
                "vc/1",
                "/dev/vc/1",
                "/dev/./tty1",
                "dev/tty1",
                "tty0x1",
                "tty1\t",
                "ttyS0\n",
                "/dev/tty\xd9\xa1",
        };
        for (size_t i = 0; i < ELEMENTSOF(ttys); i++) {
                char what[64];
                snprintf(what, sizeof what, "PAM_TTY \"%s\"", ttys[i]);
                expect_login("xdalice", h_vt, &(struct h_opts) { .tty = ttys[i] }, H_IGNORED, NULL,
                             what);
        }
}
END_TEST

START_TEST(test_remote_hosts_are_ignored) {
        static const char *const hosts[] = { "127.0.0.1", "::1",  "localhost.localdomain",
                                             " ",         "tty1", ":0" };
        for (size_t i = 0; i < ELEMENTSOF(hosts); i++)
                expect_login("xdalice", h_vt, &(struct h_opts) { .rhost = hosts[i] }, H_IGNORED,
                             NULL, hosts[i]);
}
END_TEST

/* su, sudo, runuser inside a console session: the tty is the session's,
 * PAM_RUSER is the caller. Each service gets a real service file. */
START_TEST(test_su_sudo_runuser_grant_nothing) {
        static const char *const services[] = { "su",     "su-l",    "sudo",
                                                "sudo-i", "runuser", "runuser-l" };
        static const char *const rusers[] = { "xdalice", "root" };
        char svc[1024];
        FILE *f = fopen(H_PAMDIR "/" H_SERVICE, "r");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(svc, 1, sizeof svc - 1, f);
        svc[n] = '\0';
        fclose(f);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        for (size_t i = 0; i < ELEMENTSOF(services); i++) {
                char path[128], what[64];
                snprintf(path, sizeof path, H_PAMDIR "/%s", services[i]);
                h_write_file(path, svc, 0644, 0);
                for (size_t j = 0; j < ELEMENTSOF(rusers); j++) {
                        snprintf(what, sizeof what, "%s from %s", services[i], rusers[j]);
                        /* on alice's own VT, as su would be: in her session, so the
                         * VT is not a controlling tty this new session can take */
                        expect_login("xdbob", h_vt,
                                     &(struct h_opts) { .service = services[i],
                                                        .ruser = rusers[j],
                                                        .no_ctty = true },
                                     H_IGNORED, NULL, what);
                        expect_login("xdcarol", h_vt + 1,
                                     &(struct h_opts) { .service = services[i],
                                                        .ruser = rusers[j] },
                                     H_IGNORED, NULL, what);
                }
        }
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_BOB), "");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
}
END_TEST

/* XDG_VTNR/XDG_SEAT planted by an earlier module never choose the VT. */
START_TEST(test_planted_xdg_does_not_choose_the_vt) {
        static const char *env[] = { "XDG_VTNR=1", "XDG_SEAT=seat0", "XDG_SESSION_TYPE=x11", NULL };
        char t1[16];
        snprintf(t1, sizeof t1, "tty%d", h_vt);
        /* no controlling tty, planted VT: still ignored */
        expect_login("xdalice", h_vt, &(struct h_opts) { .env = env, .no_ctty = true }, H_IGNORED,
                     "not this process's controlling tty",
                     "planted XDG_VTNR without a controlling tty");
        /* the real VT wins over the planted one */
        struct h_session *a = h_session_open("xdalice", h_vt, &(struct h_opts) { .env = env });
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_int_eq(atoi(a->xdg_vtnr), h_vt);
        ck_assert_str_eq(h_acl_of("/dev/tty1", H_UID_ALICE), "");
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        n_cases++;
}
END_TEST

/* ---- nodes ---- */

static void replace_with(const char *path, const char *how) {
        ck_assert_int_eq(unlink(path), 0);
        if (strcmp(how, "hardlink-vt") == 0)
                ck_assert_int_eq(link(vtpath[3], path), 0);
        else if (strcmp(how, "block") == 0)
                ck_assert_int_eq(mknod(path, S_IFBLK | 0660, makedev(13, 64)), 0);
        else if (strcmp(how, "fifo") == 0)
                ck_assert_int_eq(mkfifo(path, 0660), 0);
        else if (strcmp(how, "dir") == 0)
                ck_assert_int_eq(mkdir(path, 0755), 0);
        else if (strcmp(how, "socket") == 0) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                int fd = socket(AF_UNIX, SOCK_STREAM, 0);
                snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
                ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof sa), 0);
                close(fd);
        } else if (strcmp(how, "drm-major") == 0)
                ck_assert_int_eq(mknod(path, S_IFCHR | 0660, makedev(226, 0)), 0);
        else if (strcmp(how, "mem") == 0)
                ck_assert_int_eq(mknod(path, S_IFCHR | 0640, makedev(1, 1)), 0);
        else if (strcmp(how, "symlink-vt") == 0)
                ck_assert_int_eq(symlink(vtpath[3], path), 0);
}

/* Every kind of impostor at /dev/input/event0: the login goes on for the
 * rest, the impostor and what it points at are untouched. */
START_TEST(test_impostor_nodes_are_not_touched) {
        static const char *const kinds[] = { "hardlink-vt", "block",     "fifo", "dir",
                                             "socket",      "drm-major", "mem",  "symlink-vt" };
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                h_fresh(NULL, "debug");
                replace_with("/dev/input/event0", kinds[i]);
                char *imp = h_node_describe("/dev/input/event0");
                char *vt3 = h_node_describe(vtpath[3]);
                struct h_session *a = h_session_open("xdalice", h_vt, NULL);
                ck_assert_msg(a->open_ret == PAM_SUCCESS, "%s: open returned %d", kinds[i],
                              a->open_ret);
                ck_assert_str_eq(h_acl_of("/dev/input/event1", H_UID_ALICE), "rw");
                char *now = h_node_describe("/dev/input/event0");
                ck_assert_msg(strcmp(now, imp) == 0, "%s: impostor changed: \"%s\" -> \"%s\"",
                              kinds[i], imp, now);
                free(now);
                now = h_node_describe(vtpath[3]);
                ck_assert_msg(strcmp(now, vt3) == 0, "%s: %s changed", kinds[i], vtpath[3]);
                free(now);
                ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
                free(imp);
                free(vt3);
                if (strcmp(kinds[i], "dir") == 0)
                        rmdir("/dev/input/event0");
                n_cases++;
        }
}
END_TEST

/* /dev/input itself a symlink to a directory of look-alike nodes. */
START_TEST(test_symlinked_device_directory_is_not_followed) {
        ck_assert_int_eq(mkdir(H_ROOT "/fake", 0755), 0);
        ck_assert_int_eq(mknod(H_ROOT "/fake/event0", S_IFCHR | 0600, makedev(13, 64)), 0);
        ck_assert_int_eq(system("rm -rf /dev/input"), 0);
        ck_assert_int_eq(symlink(H_ROOT "/fake", "/dev/input"), 0);
        char *fake = h_node_describe(H_ROOT "/fake/event0");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_str_eq(h_acl_of("/dev/dri/card0", H_UID_ALICE), "rw");
        char *now = h_node_describe(H_ROOT "/fake/event0");
        ck_assert_str_eq(now, fake);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        free(now);
        free(fake);
        ck_assert_int_eq(system("rm -rf " H_ROOT "/fake /dev/input"), 0);
        ck_assert_int_eq(mkdir("/dev/input", 0755), 0);
        n_cases++;
}
END_TEST

/* A symlinked directory sorted right after a real one: the walk of the
 * real one, kept for the next node, must not be reused for the other. */
START_TEST(test_symlinked_sibling_directory_is_not_followed) {
        h_fresh("devices = glob\nglob = input:/dev/input/event*\nglob = input:/dev/inputs/event*\n"
                "glob = drm:/dev/dri/card*\nlogind = ignore\n",
                "debug");
        ck_assert_int_eq(mkdir(H_ROOT "/fake", 0755), 0);
        ck_assert_int_eq(mknod(H_ROOT "/fake/event0", S_IFCHR | 0600, makedev(13, 64)), 0);
        ck_assert_int_eq(symlink(H_ROOT "/fake", "/dev/inputs"), 0);
        char *fake = h_node_describe(H_ROOT "/fake/event0");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_str_eq(h_acl_of("/dev/input/event0", H_UID_ALICE), "rw");
        ck_assert_str_eq(h_acl_of("/dev/input/event1", H_UID_ALICE), "rw");
        char *now = h_node_describe(H_ROOT "/fake/event0");
        ck_assert_str_eq(now, fake);
        free(now);
        char *log = h_log_take();
        ck_assert_msg(strstr(log, "\"/dev/inputs/event0\" is not a device node of class input"),
                      "the symlinked directory was not reported; the log was:\n%s", log);
        free(log);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        ck_assert_str_eq(h_acl_of("/dev/input/event0", H_UID_ALICE), "");
        now = h_node_describe(H_ROOT "/fake/event0");
        ck_assert_str_eq(now, fake);
        free(now);
        free(fake);
        ck_assert_int_eq(system("rm -rf " H_ROOT "/fake /dev/inputs"), 0);
        n_cases++;
}
END_TEST

/* Globs that try to leave /dev, or match everything in it. */
START_TEST(test_globs_cannot_reach_outside_dev) {
        static const char *const confs[] = {
                "devices = glob\nglob = input:/dev/[.][.]/etc/shadow\nlogind = ignore\n",
                "devices = glob\nglob = input:/dev/*\nglob = drm:/dev/*/*\nlogind = ignore\n",
                "devices = glob\nglob = input:/dev/?input/../../etc/*\nlogind = ignore\n",
        };
        static const int expect[] = { PAM_SUCCESS, PAM_SUCCESS, PAM_SESSION_ERR };
        for (size_t i = 0; i < ELEMENTSOF(confs); i++) {
                h_fresh(confs[i], NULL);
                struct snap before;
                snap_take(&before);
                struct h_session *a = h_session_open("xdalice", h_vt, NULL);
                ck_assert_msg(a->open_ret == expect[i], "%s: open returned %d", confs[i],
                              a->open_ret);
                /* "/dev/" + "*" matches drm and input names too, but at the
                 * wrong depth or with the wrong major: all stay untouched
                 * except the login VT, which logout restores */
                ck_assert_str_eq(h_acl_of("/etc/shadow", H_UID_ALICE)
                                         ? h_acl_of("/etc/shadow", H_UID_ALICE)
                                         : "",
                                 "");
                ck_assert_str_eq(h_acl_of("/dev/null", H_UID_ALICE), "");
                ck_assert_str_eq(h_acl_of("/dev/tty1", H_UID_ALICE), "");
                (void) h_session_close(a);
                snap_check(&before, confs[i]);
                n_cases++;
        }
}
END_TEST

/* ---- config files ---- */

static void write_bytes(const char *path, const char *buf, size_t len, mode_t mode, uid_t uid) {
        int fd;
        (void) unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, buf, len), (ssize_t) len);
        ck_assert_int_eq(fchown(fd, uid, 0), 0);
        ck_assert_int_eq(fchmod(fd, mode), 0);
        close(fd);
}

/* What a login on a config the module refuses returns: with a VT (as root)
 * the module fails it; in h_init_userns's namespace (no VT) it does not
 * count, but the config was read, and said broken, first. */
static int broken(void) {
        return h_in_userns() ? H_IGNORED : PAM_SESSION_ERR;
}

START_TEST(test_hostile_config_files_grant_nothing) {
        static const char good[] = "devices = glob\nglob = drm:/dev/dri/card*\nlogind = ignore\n";
        size_t big = 10 * 1024 * 1024;
        char *buf = malloc(big + 64);
        ck_assert_ptr_nonnull(buf);

        /* group-writable */
        write_bytes(H_CONF, good, strlen(good), 0664, 0);
        expect_login("xdalice", h_vt, NULL, broken(), "must be owned by root",
                     "group-writable config");
        /* a 10 MiB line */
        memset(buf, 'a', big);
        memcpy(buf, "mode = ", 7);
        buf[big] = '\n';
        write_bytes(H_CONF, buf, big + 1, 0644, 0);
        expect_login("xdalice", h_vt, NULL, broken(), "larger than", "10 MiB line");
        /* a 2000-byte line in a small file */
        memset(buf, ' ', 2000);
        memcpy(buf + 2000, "debug\n", 6);
        write_bytes(H_CONF, buf, 2006, 0644, 0);
        expect_login("xdalice", h_vt, NULL, broken(), "line longer than", "long line");
        /* a NUL byte */
        write_bytes(H_CONF, "devices = glob\0\nglob = drm:/dev/*\n", 35, 0644, 0);
        expect_login("xdalice", h_vt, NULL, broken(), "NUL byte", "NUL in config");
        /* CRLF line ends throughout */
        write_bytes(H_CONF, "devices = glob\r\nlogind = ignore\r\n", 33, 0644, 0);
        expect_login("xdalice", h_vt, NULL, broken(), "control character", "CRLF config");
        /* a good file, then hostile drop-ins */
        write_bytes(H_CONF, good, strlen(good), 0644, 0);
        ck_assert_int_eq(mkdir(H_ROOT "/xdevices.d", 0755), 0);
        /* no uid but root's is mapped in h_init_userns's namespace */
        if (!h_in_userns()) {
                write_bytes(H_ROOT "/xdevices.d/10-user.conf", "input = rw\n", 11, 0644, H_UID_BOB);
                expect_login("xdalice", h_vt, NULL, broken(), "must be owned by root",
                             "user-owned drop-in");
                ck_assert_int_eq(unlink(H_ROOT "/xdevices.d/10-user.conf"), 0);
        }
        ck_assert_int_eq(symlink("/etc/passwd", H_ROOT "/xdevices.d/10-link.conf"), 0);
        expect_login("xdalice", h_vt, NULL, broken(), "10-link.conf", "symlinked drop-in");
        ck_assert_int_eq(unlink(H_ROOT "/xdevices.d/10-link.conf"), 0);
        ck_assert_int_eq(mkfifo(H_ROOT "/xdevices.d/10-fifo.conf", 0644), 0);
        expect_login("xdalice", h_vt, NULL, broken(), "not a regular file", "FIFO drop-in");
        ck_assert_int_eq(unlink(H_ROOT "/xdevices.d/10-fifo.conf"), 0);
        ck_assert_int_eq(rmdir(H_ROOT "/xdevices.d"), 0);
        ck_assert_int_eq(symlink("/etc", H_ROOT "/xdevices.d"), 0);
        expect_login("xdalice", h_vt, NULL, broken(), "xdevices.d", "symlinked drop-in directory");
        ck_assert_int_eq(unlink(H_ROOT "/xdevices.d"), 0);
        free(buf);
}
END_TEST

/* ---- the state directory and its files ---- */

static void plant(const char *what) {
        (void) system("rm -rf /run/xdevices /run/xdevtest/evil");
        ck_assert_int_eq(mkdir(H_ROOT "/evil", 0700), 0);
        write_bytes(H_ROOT "/evil/target", "secret\n", 7, 0600, 0); /* hardlinks stay on one fs */
        if (strcmp(what, "dir-symlink") == 0) {
                ck_assert_int_eq(symlink(H_ROOT "/evil", "/run/xdevices"), 0);
                return;
        }
        if (strcmp(what, "dir-user") == 0) {
                ck_assert_int_eq(mkdir("/run/xdevices", 0700), 0);
                ck_assert_int_eq(chown("/run/xdevices", H_UID_BOB, H_UID_BOB), 0);
                return;
        }
        if (strcmp(what, "dir-0755") == 0) {
                ck_assert_int_eq(mkdir("/run/xdevices", 0700), 0);
                ck_assert_int_eq(chmod("/run/xdevices", 0755), 0);
                return;
        }
        if (strcmp(what, "dir-fifo") == 0) {
                ck_assert_int_eq(mkfifo("/run/xdevices", 0700), 0);
                return;
        }
        ck_assert_int_eq(mkdir("/run/xdevices", 0700), 0);
        if (strcmp(what, "state-symlink") == 0)
                ck_assert_int_eq(symlink("/etc/shadow", "/run/xdevices/state"), 0);
        else if (strcmp(what, "state-fifo") == 0)
                ck_assert_int_eq(mkfifo("/run/xdevices/state", 0600), 0);
        else if (strcmp(what, "state-user") == 0)
                write_bytes("/run/xdevices/state", "xdevices-state 1\nholder -\n", 26, 0600,
                            H_UID_BOB);
        else if (strcmp(what, "state-0644") == 0)
                write_bytes("/run/xdevices/state", "xdevices-state 1\nholder -\n", 26, 0644, 0);
        else if (strcmp(what, "state-hardlink") == 0)
                ck_assert_int_eq(link(H_ROOT "/evil/target", "/run/xdevices/state"), 0);
        else if (strcmp(what, "lock-symlink") == 0)
                ck_assert_int_eq(symlink("/etc/shadow", "/run/xdevices/lock"), 0);
        else if (strcmp(what, "lock-fifo") == 0)
                ck_assert_int_eq(mkfifo("/run/xdevices/lock", 0600), 0);
        else if (strcmp(what, "lock-hardlink") == 0)
                ck_assert_int_eq(link(H_ROOT "/evil/target", "/run/xdevices/lock"), 0);
}

START_TEST(test_planted_state_is_refused) {
        static const char *const plants[] = { "dir-symlink",  "dir-user",      "dir-0755",
                                              "dir-fifo",     "state-symlink", "state-fifo",
                                              "state-user",   "state-0644",    "state-hardlink",
                                              "lock-symlink", "lock-fifo",     "lock-hardlink" };
        for (size_t i = 0; i < ELEMENTSOF(plants); i++) {
                plant(plants[i]);
                char *evil = h_node_describe(H_ROOT "/evil");
                expect_login("xdalice", h_vt, NULL, PAM_SESSION_ERR, "state", plants[i]);
                char *now = h_node_describe(H_ROOT "/evil");
                ck_assert_msg(strcmp(now, evil) == 0, "%s: the planted target changed", plants[i]);
                free(now);
                free(evil);
                ck_assert_msg(access(H_ROOT "/evil/state", F_OK) != 0,
                              "%s: state written through a link", plants[i]);
                (void) system("rm -rf /run/xdevices");
        }
}
END_TEST

/* A planted state.tmp (symlink to /etc/shadow) is replaced, never followed. */
START_TEST(test_planted_state_tmp_is_not_followed) {
        ck_assert_int_eq(mkdir("/run/xdevices", 0700), 0);
        ck_assert_int_eq(symlink("/etc/shadow", "/run/xdevices/state.tmp"), 0);
        struct snap before;
        snap_take(&before);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        snap_check(&before, "planted state.tmp");
        n_cases++;
}
END_TEST

static int helper_run(const char *a1, const char *a2, char **out) {
        const char *argv[] = { helper, "--conf=" H_CONF, a1, a2, NULL };
        const char *env[] = { "PATH=/usr/bin:/bin", NULL };
        return h_run_helper(argv, env, out);
}

/* A ledger edited to name /etc/shadow (or a symlink to it under /dev):
 * the module, gc and reset never touch the target. */
START_TEST(test_edited_ledger_cannot_aim_at_other_files) {
        struct stat st;
        char text[1024], *out = NULL;
        ck_assert_int_eq(lstat("/etc/shadow", &st), 0);
        static const char *const paths[] = { "/etc/shadow", "/dev/../etc/shadow",
                                             "/dev/input/evil" };
        ck_assert_int_eq(symlink("/etc/shadow", "/dev/input/evil"), 0);
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                (void) system("rm -rf /run/xdevices");
                ck_assert_int_eq(mkdir("/run/xdevices", 0700), 0);
                snprintf(
                        text, sizeof text,
                        "xdevices-state 1\nholder -\nnode path=%s class=input fsdev=%u:%u ino=%llu rdev=13:64 "
                        "uid=%u gid=%u mode=20666 acl=- grant=-\n",
                        paths[i], major(st.st_dev), minor(st.st_dev),
                        (unsigned long long) st.st_ino, 61002u, 0u);
                write_bytes("/run/xdevices/state", text, strlen(text), 0600, 0);
                struct snap before;
                snap_take(&before);
                int expect = i == 2 ? PAM_SUCCESS : PAM_SESSION_ERR;
                struct h_session *a = h_session_open("xdalice", h_vt, NULL);
                ck_assert_msg(a->open_ret == expect, "%s: open returned %d", paths[i], a->open_ret);
                (void) h_session_close(a);
                (void) helper_run("gc", NULL, NULL);
                (void) helper_run("reset", NULL, NULL);
                ck_assert_int_eq(helper_run("reset", "--force", &out), 0);
                free(out);
                snap_check(&before, paths[i]);
                n_cases++;
        }
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("adversarial");
        TCase *tc = h_tcase(s, "adversarial", 180, fresh, count_cases);
        tcase_add_test(tc, test_su_sudo_runuser_grant_nothing);
        tcase_add_test(tc, test_planted_xdg_does_not_choose_the_vt);
        tcase_add_test(tc, test_impostor_nodes_are_not_touched);
        tcase_add_test(tc, test_symlinked_device_directory_is_not_followed);
        tcase_add_test(tc, test_symlinked_sibling_directory_is_not_followed);
        tcase_add_test(tc, test_globs_cannot_reach_outside_dev);
        tcase_add_test(tc, test_planted_state_is_refused);
        tcase_add_test(tc, test_planted_state_tmp_is_not_followed);
        tcase_add_test(tc, test_edited_ledger_cannot_aim_at_other_files);
        return s;
}

/* the namespace, the nodes watched, the helper */
static int setup_root(void) {
        h_init();
        collect_nodes();
        helper = getenv("XDEV_HELPER");
        if (!helper) {
                fprintf(stderr, "XDEV_HELPER must be set\n");
                return 99;
        }
        (void) unlink(H_ROOT "/cases");
        return 0;
}

/* The PAM items and the config files refused before any node is looked
 * at: as any user too. */
static Suite *items_suite(void) {
        Suite *s = suite_create("adversarial PAM items");
        TCase *tc = h_tcase(s, "items", 180, fresh, count_cases);
        tcase_add_test(tc, test_pam_tty_spellings_are_ignored);
        tcase_add_test(tc, test_remote_hosts_are_ignored);
        tcase_add_test(tc, test_hostile_config_files_grant_nothing);
        return s;
}

static int setup_user(void) {
        int r = h_init_userns();
        if (r == 0) {
                collect_nodes();
                (void) unlink(H_ROOT "/cases");
        }
        return r;
}

H_SUITE(suite, H_ROOT_ONLY)
H_SUITE(items_suite, H_USERNS)

int main(void) {
        int failed = h_suites_run(&(const struct h_setup) { setup_root, setup_user });
        if (failed > 1) /* skipped, or the setup failed */
                return failed;
        unsigned total = 0, k;
        FILE *f = fopen(H_ROOT "/cases", "r");
        while (f && fscanf(f, "%u", &k) == 1)
                total += k;
        if (f)
                fclose(f);
        printf("adversarial cases: %u\n", total);
        return failed;
}
