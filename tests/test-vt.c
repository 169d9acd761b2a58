/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The VT unit (libxdev/vt.h) without root: the spellings of a VT, its device
 * number and path, the open that refuses a link or another device, the
 * reset that refuses what is not a VT. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kd.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vt.h"
#include "mounts.h"
#include "runner.h"

static unsigned parsed(const char *s) {
        unsigned vt = 0;

        ck_assert_msg(xdev_vt_parse(s, &vt) == 0, "refused \"%s\"", s);
        return vt;
}

START_TEST(test_accepted_spellings) {
        ck_assert_uint_eq(parsed("tty1"), 1);
        ck_assert_uint_eq(parsed("/dev/tty1"), 1);
        ck_assert_uint_eq(parsed("tty63"), 63);
        ck_assert_uint_eq(parsed("/dev/tty12"), 12);
}
END_TEST

START_TEST(test_rejected_spellings) {
        static const char *const bad[] = {
                "tty0",
                "tty64",
                "tty01",
                "tty1\n",
                "tty1 ",
                " tty1",
                "tty",
                "tty-1",
                "tty+1",
                "../tty1",
                "/dev/../dev/tty1",
                "/dev//tty1",
                "dev/tty1",
                ":0",
                ":0.0",
                "pts/3",
                "/dev/pts/3",
                "ttyS0",
                "ttyUSB0",
                "tty99999999999999999999",
                "tty4294967297",
                "TTY1",
                "console",
                "",
                "/dev/tty",
                "/dev/tty1/",
                "tty1x",
                "tty0x1",
                "tty100",
        };
        unsigned vt = 77;

        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                ck_assert_msg(xdev_vt_parse(bad[i], &vt) == -EINVAL, "accepted \"%s\"", bad[i]);
        ck_assert_int_eq(xdev_vt_parse(NULL, &vt), -EINVAL);
        /* a refused name leaves the output alone */
        ck_assert_uint_eq(vt, 77);
}
END_TEST

START_TEST(test_identity) {
        char path[XDEV_VT_PATH_MAX];
        unsigned vt = 0;

        ck_assert(xdev_vt_devnum(7) == makedev(4, 7));
        ck_assert(xdev_vt_from_devnum(makedev(4, 1), &vt) && vt == 1);
        ck_assert(xdev_vt_from_devnum(makedev(4, 63), &vt) && vt == 63);
        ck_assert(xdev_vt_from_devnum(makedev(4, 5), NULL));
        vt = 99;
        ck_assert(!xdev_vt_from_devnum(makedev(4, 0), &vt));   /* tty0: the VT in front */
        ck_assert(!xdev_vt_from_devnum(makedev(4, 64), &vt));  /* ttyS0 */
        ck_assert(!xdev_vt_from_devnum(makedev(5, 1), &vt));   /* /dev/console */
        ck_assert(!xdev_vt_from_devnum(makedev(136, 1), &vt)); /* a pty */
        ck_assert_uint_eq(vt, 99);
        xdev_vt_path(path, 1);
        ck_assert_str_eq(path, "/dev/tty1");
        xdev_vt_path(path, XDEV_VT_MAX);
        ck_assert_str_eq(path, "/dev/tty63");
}
END_TEST

START_TEST(test_open_out_of_range) {
        ck_assert_int_eq(xdev_vt_open(0, 0), -EINVAL);
        ck_assert_int_eq(xdev_vt_open(XDEV_VT_MAX + 1, 0), -EINVAL);
}
END_TEST

/* In a mount namespace of its own (a user namespace too when not root), a
 * tmpfs on /dev where tty5 is a link to /dev/null, tty6 a bind mount of
 * /dev/null (a character device, not 4:6) and tty7 a regular file: each is
 * refused with -ENOTTY, and tty8 (absent) with -ENOENT. */
/* Writes TEXT to /proc/self/FILE; returns 0 or -1. */
static int proc_self_write(const char *file, const char *text) {
        char p[64];
        int fd, r;

        (void) snprintf(p, sizeof p, "/proc/self/%s", file);
        fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        r = write(fd, text, strlen(text)) == (ssize_t) strlen(text) ? 0 : -1;
        (void) close(fd);
        return r;
}

/* Maps this user to root in the new user namespace: files it makes on its
 * tmpfs need an owner the namespace knows (EOVERFLOW otherwise). */
static int map_to_root(uid_t uid, gid_t gid) {
        char map[32];

        if (proc_self_write("setgroups", "deny") < 0)
                return -1;
        (void) snprintf(map, sizeof map, "0 %u 1\n", (unsigned) uid);
        if (proc_self_write("uid_map", map) < 0)
                return -1;
        (void) snprintf(map, sizeof map, "0 %u 1\n", (unsigned) gid);
        return proc_self_write("gid_map", map);
}

static int open_refusals(void) {
        const char *step = NULL;
        uid_t uid = getuid();
        gid_t gid = getgid();
        int fd, r;

        if (unshare(uid == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS) < 0)
                return 10;
        if (uid != 0 && map_to_root(uid, gid) < 0)
                return 15;
        r = uid == 0 ? h_mounts_make_private(&step)
                : mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0
                ? (step = "make-rprivate /", -errno)
                : 0;
        if (r < 0) {
                fprintf(stderr, "test-vt: %s: %s\n", step, strerror(-r));
                return 11;
        }
        fd = open("/dev/null", O_PATH | O_CLOEXEC);
        if (fd < 0 || mount("tmpfs", "/dev", "tmpfs", 0, "mode=0755") < 0)
                return 12;
        if (symlink("null", "/dev/tty5") < 0 ||
            close(open("/dev/tty6", O_CREAT | O_WRONLY, 0600)) < 0 ||
            close(open("/dev/tty7", O_CREAT | O_WRONLY, 0600)) < 0)
                return 13;
        {
                char self[32];
                (void) snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
                if (mount(self, "/dev/tty6", NULL, MS_BIND, NULL) < 0)
                        return 14;
        }
        if (xdev_vt_open(5, 0) != -ENOTTY)
                return 1;
        if (xdev_vt_open(6, 0) != -ENOTTY)
                return 2;
        if (xdev_vt_open(7, 0) != -ENOTTY)
                return 3;
        if (xdev_vt_open(8, 0) != -ENOENT)
                return 4;
        return 0;
}

START_TEST(test_open_refuses_what_is_not_the_vt) {
        int status;
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(open_refusals());
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status), "the child did not exit");
        ck_assert_msg(WEXITSTATUS(status) != 10,
                      "unshare(CLONE_NEWNS%s) failed: no %s namespace here",
                      getuid() == 0 ? "" : " | CLONE_NEWUSER",
                      getuid() == 0 ? "mount" : "user or mount");
        ck_assert_msg(WEXITSTATUS(status) != 11,
                      "could not make the new mount namespace private (see stderr)");
        ck_assert_msg(WEXITSTATUS(status) < 10, "could not set up a private /dev (step %d)",
                      WEXITSTATUS(status));
        ck_assert_msg(WEXITSTATUS(status) == 0, "tty%d was not refused as it should be",
                      4 + WEXITSTATUS(status));
}
END_TEST

START_TEST(test_reset_refuses_a_non_vt) {
        unsigned what = 77;
        int p[2];

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        ck_assert_int_eq(xdev_vt_reset(p[0], &what), -ENOTTY);
        ck_assert_uint_eq(what, 0);
        (void) close(p[0]);
        (void) close(p[1]);
}
END_TEST

START_TEST(test_default_kbmode) {
        char c = '1';
        int fd = open("/sys/module/vt/parameters/default_utf8", O_RDONLY | O_CLOEXEC);

        if (fd >= 0) {
                ck_assert_int_eq(read(fd, &c, 1), 1);
                (void) close(fd);
        }
        ck_assert_int_eq(xdev_vt_default_kbmode(), c == '0' ? K_XLATE : K_UNICODE);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("vt");
        TCase *tc = h_tcase(s, "vt", 0, NULL, NULL);
        tcase_add_test(tc, test_accepted_spellings);
        tcase_add_test(tc, test_rejected_spellings);
        tcase_add_test(tc, test_identity);
        tcase_add_test(tc, test_open_out_of_range);
        tcase_add_test(tc, test_open_refuses_what_is_not_the_vt);
        tcase_add_test(tc, test_reset_refuses_a_non_vt);
        tcase_add_test(tc, test_default_kbmode);
        return s;
}

H_SUITE(suite, H_ANY_USER)
H_MAIN(NULL)
