/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevices-vt-run: what it refuses (any user), and on a real VT (root: the
 * harness's namespace and a VT nobody uses) that it sets graphics mode and
 * the keyboard off for the command, as the VT's user, and restores both
 * however the command ends. The command is this program in probe mode. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "runner.h"

static const char *wrapper;
static char self[4096];

/* The probe: prints "KDGETMODE KDGKBMODE VT_GETMODE LIBSEAT_BACKEND pid"
 * of its controlling tty, then exits with the status given, or with "wait"
 * waits for a signal. */
static int probe(int argc, char **argv) {
        const char *backend = getenv("LIBSEAT_BACKEND");
        int fd = open("/dev/tty", O_RDWR | O_CLOEXEC), mode = -1, kbmode = -1;
        struct vt_mode vtmode = { .mode = -1 };

        if (fd >= 0) {
                (void) ioctl(fd, KDGETMODE, &mode);
                (void) ioctl(fd, KDGKBMODE, &kbmode);
                (void) ioctl(fd, VT_GETMODE, &vtmode);
        }
        printf("%d %d %d %s %d\n", mode, kbmode, vtmode.mode, backend ? backend : "-",
               (int) getpid());
        fflush(stdout);
        if (argc > 2 && strcmp(argv[2], "wait") == 0)
                for (;;)
                        pause();
        return argc > 2 ? atoi(argv[2]) : 0;
}

enum ctty { CTTY_NONE, CTTY_PTY, CTTY_VT };

struct run {
        pid_t pid;
        int out, err;
};

/* Starts the wrapper with ARGS (NULL-terminated, after argv[0]) in a new
 * session whose controlling tty is CTTY (for CTTY_VT the first test VT), as
 * UID (0: root), with LIBSEAT_BACKEND set to BACKEND unless NULL. */
static struct run start(enum ctty ctty, uid_t uid, const char *backend, const char *const *args) {
        int out[2], err[2];
        struct run r;

        ck_assert_int_eq(pipe(out), 0);
        ck_assert_int_eq(pipe(err), 0);
        r.pid = fork();
        ck_assert_int_ge(r.pid, 0);
        if (r.pid == 0) {
                const char *argv[16] = { wrapper };
                int fd = -1;
                size_t n = 1;

                (void) setsid();
                if (ctty == CTTY_PTY) {
                        int m = posix_openpt(O_RDWR | O_NOCTTY);
                        if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
                                _exit(90);
                        fd = open(ptsname(m), O_RDWR);
                } else if (ctty == CTTY_VT)
                        fd = open(h_vt_path(0), O_RDWR);
                if (ctty != CTTY_NONE && (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0))
                        _exit(91);
                /* stdin stays on it, as in a login: the tty's last close
                 * would end it being our controlling tty */
                if (fd >= 0 && (dup2(fd, 0) < 0 || close(fd) < 0))
                        _exit(95);
                if (dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
                        _exit(92);
                if (uid && (setgid(uid) < 0 || setgroups(0, NULL) < 0 || setuid(uid) < 0))
                        _exit(93);
                if (backend)
                        (void) setenv("LIBSEAT_BACKEND", backend, 1);
                else
                        (void) unsetenv("LIBSEAT_BACKEND");
                (void) signal(SIGPIPE, SIG_DFL);
                for (; *args && n < 15; args++)
                        argv[n++] = *args;
                argv[n] = NULL;
                execv(wrapper, (char *const *) argv);
                _exit(94);
        }
        (void) close(out[1]);
        (void) close(err[1]);
        r.out = out[0];
        r.err = err[0];
        return r;
}

/* Copies the executable FROM to TO (0755, root's), making TO's directory. */
static int copy_exe(const char *from, const char *to) {
        char dir[256], buf[65536];
        ssize_t n = 0;
        int in, out, r = 0;

        (void) snprintf(dir, sizeof dir, "%s", to);
        *strrchr(dir, '/') = '\0';
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -1;
        in = open(from, O_RDONLY | O_CLOEXEC);
        out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, (size_t) n) != n)
                        r = -1;
        if (in < 0 || out < 0 || n < 0 || fchmod(out, 0755) < 0)
                r = -1;
        if (in >= 0)
                (void) close(in);
        if (out >= 0 && close(out) < 0)
                r = -1;
        if (r < 0)
                fprintf(stderr, "cannot copy %s to %s: %s\n", from, to, strerror(errno));
        return r;
}

static char *slurp(int fd) {
        static char buf[4][4096];
        static int i;
        char *b = buf[i++ % 4];
        size_t n = 0;
        ssize_t k;

        while (n < sizeof buf[0] - 1 && (k = read(fd, b + n, sizeof buf[0] - 1 - n)) > 0)
                n += (size_t) k;
        b[n] = '\0';
        return b;
}

/* Reads one line from the probe, waits for the wrapper; returns its exit
 * code as a shell gives it. */
static int finish(struct run *r, char **ret_out, char **ret_err) {
        int status;
        char *o = slurp(r->out), *e = slurp(r->err);

        ck_assert_int_eq(waitpid(r->pid, &status, 0), r->pid);
        (void) close(r->out);
        (void) close(r->err);
        if (ret_out)
                *ret_out = o;
        if (ret_err)
                *ret_err = e;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run(enum ctty ctty, const char *const *args, char **ret_out, char **ret_err) {
        struct run r = start(ctty, 0, NULL, args);
        return finish(&r, ret_out, ret_err);
}

/* Reads the probe's line (the wrapper still running). */
static void probe_line(struct run *r, int *mode, int *kbmode, char *backend, pid_t *pid) {
        char line[256];
        size_t n = 0;
        int p, vtmode;

        while (n < sizeof line - 1 && read(r->out, line + n, 1) == 1 && line[n] != '\n')
                n++;
        line[n] = '\0';
        ck_assert_msg(sscanf(line, "%d %d %d %63s %d", mode, kbmode, &vtmode, backend, &p) == 5,
                      "probe said \"%s\"", line);
        ck_assert_int_eq(vtmode, VT_PROCESS);
        *pid = p;
}

static void vt_modes(int *mode, int *kbmode) {
        int fd = open(h_vt_path(0), O_RDWR | O_NOCTTY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ioctl(fd, KDGETMODE, mode), 0);
        ck_assert_int_eq(ioctl(fd, KDGKBMODE, kbmode), 0);
        (void) close(fd);
}

static void vt_set(int mode, int kbmode) {
        int fd = open(h_vt_path(0), O_RDWR | O_NOCTTY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ioctl(fd, KDSETMODE, mode), 0);
        ck_assert_int_eq(ioctl(fd, KDSKBMODE, kbmode), 0);
        (void) close(fd);
}

static int vt_switch_mode(void) {
        int fd = open(h_vt_path(0), O_RDWR | O_NOCTTY | O_CLOEXEC);
        struct vt_mode m;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ioctl(fd, VT_GETMODE, &m), 0);
        (void) close(fd);
        return m.mode;
}

/* The modes a test VT is in before a test: text, Unicode keyboard, switches
 * by the kernel. */
static void vt_setup(void) {
        int fd = open(h_vt_path(0), O_RDWR | O_NOCTTY | O_CLOEXEC);

        vt_set(KD_TEXT, K_UNICODE);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ioctl(fd, VT_SETMODE, &(struct vt_mode) { .mode = VT_AUTO }), 0);
        (void) close(fd);
}

static void assert_text_again(void) {
        int mode, kbmode;

        vt_modes(&mode, &kbmode);
        ck_assert_int_eq(mode, KD_TEXT);
        ck_assert_int_eq(kbmode, K_UNICODE);
        ck_assert_int_eq(vt_switch_mode(), VT_AUTO);
}

START_TEST(test_usage) {
        char *out, *err;

        ck_assert_int_eq(run(CTTY_NONE, (const char *[]) { NULL }, NULL, &err), 2);
        ck_assert_ptr_nonnull(strstr(err, "no command given"));
        ck_assert_int_eq(run(CTTY_NONE, (const char *[]) { "--bogus", "true", NULL }, NULL, NULL),
                         2);
        ck_assert_int_eq(run(CTTY_NONE, (const char *[]) { "--help", NULL }, &out, NULL), 0);
        ck_assert_ptr_nonnull(strstr(out, "usage: xdevices-vt-run COMMAND"));
        ck_assert_int_eq(run(CTTY_NONE, (const char *[]) { "--version", NULL }, &out, NULL), 0);
        ck_assert_ptr_nonnull(strstr(out, PACKAGE_VERSION));
        ck_assert_int_eq(run(CTTY_NONE, (const char *[]) { "--reset", "/dev/tty5", "x", NULL },
                             NULL, NULL),
                         2);
}
END_TEST

START_TEST(test_no_ctty) {
        char *err;

        ck_assert_int_eq(run(CTTY_NONE, (const char *[]) { "true", NULL }, NULL, &err), 125);
        ck_assert_msg(strstr(err, "no controlling terminal"), "stderr: %s", err);
}
END_TEST

START_TEST(test_pty_refused) {
        char *err;

        ck_assert_int_eq(run(CTTY_PTY, (const char *[]) { "true", NULL }, NULL, &err), 125);
        ck_assert_msg(strstr(err, "is not a virtual console"), "stderr: %s", err);
}
END_TEST

START_TEST(test_reset_refuses_non_vt) {
        static const char *const bad[] = { "/dev/ttyS0", "tty0",       "/dev/tty64",  "/dev/tty1x",
                                           "/dev/tty01", "/dev/pts/0", "/etc/passwd", "" };

        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                ck_assert_msg(run(CTTY_NONE, (const char *[]) { "--reset", bad[i], NULL }, NULL,
                                  NULL) == 125,
                              "accepted --reset %s", bad[i]);
}
END_TEST

/* As a user whose login VT it is: graphics and K_OFF for the command,
 * LIBSEAT_BACKEND=builtin, its exit status, text and Unicode after. */
START_TEST(test_vt_modes_as_user) {
        char *out, *err;
        int mode, kbmode, vtmode, pid;
        char backend[64];
        const char *args[] = { self, "--probe", "3", NULL };
        struct run r = start(CTTY_VT, H_UID_ALICE, NULL, args);

        ck_assert_msg(finish(&r, &out, &err) == 3, "stderr: %s", err);
        ck_assert_msg(sscanf(out, "%d %d %d %63s %d", &mode, &kbmode, &vtmode, backend, &pid) == 5,
                      "probe said \"%s\", the wrapper \"%s\"", out, err);
        ck_assert_int_eq(mode, KD_GRAPHICS);
        ck_assert_int_eq(kbmode, K_OFF);
        /* switches away are handled (and allowed) by the wrapper: in
         * graphics mode the kernel would ignore them */
        ck_assert_int_eq(vtmode, VT_PROCESS);
        ck_assert_str_eq(backend, "builtin");
        assert_text_again();
}
END_TEST

START_TEST(test_vt_backend_kept) {
        char *out;
        int mode, kbmode, pid;
        char backend[64];
        struct run r =
                start(CTTY_VT, H_UID_ALICE, "seatd", (const char *[]) { self, "--probe", NULL });

        ck_assert_int_eq(finish(&r, &out, NULL), 0);
        ck_assert_int_eq(sscanf(out, "%d %d %*d %63s %d", &mode, &kbmode, backend, &pid), 4);
        ck_assert_str_eq(backend, "seatd");
        assert_text_again();
}
END_TEST

/* A signal to the wrapper goes to the command; the VT comes back after. */
static void forwarded(int sig) {
        int mode, kbmode;
        char backend[64];
        pid_t pid;
        struct run r = start(CTTY_VT, H_UID_ALICE, NULL,
                             (const char *[]) { self, "--probe", "wait", NULL });

        probe_line(&r, &mode, &kbmode, backend, &pid);
        ck_assert_int_eq(mode, KD_GRAPHICS);
        ck_assert_int_eq(kill(r.pid, sig), 0);
        ck_assert_int_eq(finish(&r, NULL, NULL), 128 + sig);
        ck_assert_int_eq(kill(pid, 0), -1);
        assert_text_again();
}

START_TEST(test_vt_sigterm_forwarded) {
        forwarded(SIGTERM);
}
END_TEST

START_TEST(test_vt_sighup_forwarded) {
        forwarded(SIGHUP);
}
END_TEST

START_TEST(test_vt_command_killed) {
        int mode, kbmode;
        char backend[64];
        pid_t pid;
        struct run r = start(CTTY_VT, H_UID_ALICE, NULL,
                             (const char *[]) { self, "--probe", "wait", NULL });

        probe_line(&r, &mode, &kbmode, backend, &pid);
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(finish(&r, NULL, NULL), 128 + SIGKILL);
        assert_text_again();
}
END_TEST

START_TEST(test_vt_exec_fails) {
        char *err;
        struct run r =
                start(CTTY_VT, H_UID_ALICE, NULL, (const char *[]) { "/nonexistent/sway", NULL });

        ck_assert_int_eq(finish(&r, NULL, &err), 127);
        ck_assert_msg(strstr(err, "/nonexistent/sway"), "stderr: %s", err);
        assert_text_again();
}
END_TEST

/* The wrapper itself killed: the VT stays in graphics mode, the user
 * cannot reset a VT that is not her controlling tty, root can. */
START_TEST(test_vt_wrapper_killed_then_reset) {
        int mode, kbmode;
        char backend[64], *err;
        pid_t pid;
        struct run r = start(CTTY_VT, H_UID_ALICE, NULL,
                             (const char *[]) { self, "--probe", "wait", NULL });

        probe_line(&r, &mode, &kbmode, backend, &pid);
        ck_assert_int_eq(kill(r.pid, SIGKILL), 0);
        /* the probe may be gone already: the wrapper led the VT's session,
         * so its end hung the VT up and sent the probe SIGHUP (a flake of
         * check-stress when the kernel was quicker than this kill) */
        ck_assert_msg(kill(pid, SIGKILL) == 0 || errno == ESRCH, "kill %d: %s", (int) pid,
                      strerror(errno));
        ck_assert_int_eq(finish(&r, NULL, NULL), 128 + SIGKILL);
        vt_modes(&mode, &kbmode);
        ck_assert_int_eq(mode, KD_GRAPHICS);
        ck_assert_int_eq(kbmode, K_OFF);
        /* (the kernel's next switch away from it would reset it: its
         * switch handler is gone) */
        ck_assert_int_eq(vt_switch_mode(), VT_PROCESS);
        r = start(CTTY_NONE, H_UID_ALICE, NULL, (const char *[]) { "--reset", h_vt_path(0), NULL });
        ck_assert_int_eq(finish(&r, NULL, &err), 125);
        ck_assert_msg(strstr(err, "Operation not permitted"), "stderr: %s", err);
        ck_assert_int_eq(run(CTTY_NONE, (const char *[]) { "--reset", h_vt_path(0), NULL }, NULL,
                             &err),
                         0);
        assert_text_again();
}
END_TEST

/* A VT whose switches another program handles (a display server on it)
 * is left alone. */
START_TEST(test_vt_process_refused) {
        char *err;
        int fd = open(h_vt_path(0), O_RDWR | O_NOCTTY | O_CLOEXEC);
        struct vt_mode process = { .mode = VT_PROCESS, .relsig = SIGUSR1, .acqsig = SIGUSR2 };
        struct run r;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ioctl(fd, VT_SETMODE, &process), 0);
        r = start(CTTY_VT, H_UID_ALICE, NULL, (const char *[]) { "true", NULL });
        ck_assert_int_eq(finish(&r, NULL, &err), 125);
        ck_assert_msg(strstr(err, "another program handles its VT switches"), "stderr: %s", err);
        ck_assert_int_eq(vt_switch_mode(), VT_PROCESS);
        /* (FD was hung up with the wrapper's session: a fresh one) */
        (void) close(fd);
        vt_setup();
        ck_assert_int_eq(vt_switch_mode(), VT_AUTO);
}
END_TEST

static Suite *vtrun_suite(bool vt) {
        Suite *s = suite_create("xdevices-vt-run");
        TCase *tc = tcase_create("refusals");

        tcase_add_test(tc, test_usage);
        tcase_add_test(tc, test_no_ctty);
        tcase_add_test(tc, test_pty_refused);
        tcase_add_test(tc, test_reset_refuses_non_vt);
        suite_add_tcase(s, tc);
        if (vt) {
                tc = tcase_create("vt");
                tcase_add_checked_fixture(tc, vt_setup, NULL);
                tcase_add_test(tc, test_vt_modes_as_user);
                tcase_add_test(tc, test_vt_backend_kept);
                tcase_add_test(tc, test_vt_sigterm_forwarded);
                tcase_add_test(tc, test_vt_sighup_forwarded);
                tcase_add_test(tc, test_vt_command_killed);
                tcase_add_test(tc, test_vt_exec_fails);
                tcase_add_test(tc, test_vt_wrapper_killed_then_reset);
                tcase_add_test(tc, test_vt_process_refused);
                suite_add_tcase(s, tc);
        }
        return s;
}

int main(int argc, char **argv) {
        bool vt = geteuid() == 0;
        ssize_t n;
        int ret;

        if (argc > 1 && strcmp(argv[1], "--probe") == 0)
                return probe(argc, argv);
        wrapper = getenv("XDEV_VT_RUN");
        if (!wrapper) {
                fprintf(stderr, "XDEV_VT_RUN is not set (run it with make check)\n");
                return 99;
        }
        n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
                return 99;
        self[n] = '\0';
        if (vt) {
                /* the namespace, the lock, the first free test VT; the VT
                 * node given to alice as pam_xdevices gives a login VT */
                h_init();
                /* alice runs both programs: copies she can reach, whatever
                 * the mode of the build tree's directories (a 0700 clone) */
                if (copy_exe(wrapper, H_ROOT "/bin/xdevices-vt-run") < 0 ||
                    copy_exe(self, H_ROOT "/bin/test-vtrun") < 0)
                        return 99;
                wrapper = H_ROOT "/bin/xdevices-vt-run";
                strcpy(self, H_ROOT "/bin/test-vtrun");
                if (chown(h_vt_path(0), H_UID_ALICE, H_UID_ALICE) < 0)
                        return 99;
                /* the harness's /dev has no pseudo-terminals: a devpts of
                 * our own */
                if (mount("devpts", "/dev/pts", "devpts", 0,
                          "newinstance,ptmxmode=0666,mode=0620") < 0 ||
                    symlink("pts/ptmx", "/dev/ptmx") < 0)
                        return 99;
        } else
                fprintf(stderr, "not root: the cases on a real VT are skipped\n");
        ret = h_suite_run(vtrun_suite(vt));
        if (vt) {
                /* whatever happened, the test VT goes back to text */
                int fd = open(h_vt_path(0), O_RDWR | O_NOCTTY | O_CLOEXEC);
                if (fd >= 0) {
                        (void) ioctl(fd, KDSETMODE, KD_TEXT);
                        (void) ioctl(fd, KDSKBMODE, K_UNICODE);
                        (void) ioctl(fd, VT_SETMODE, &(struct vt_mode) { .mode = VT_AUTO });
                        (void) close(fd);
                }
        }
        return ret;
}
