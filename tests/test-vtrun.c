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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "runner.h"
#include "vt.h"

static const char *wrapper;
static char self[4096];
static char seat_client[4096];
/* For the seat cases: the read end of a pipe that becomes the wrapper's fd
 * 3 (-1: none). XDG_RUNTIME_DIR is runtime_dir (NULL: unset), below. */
static int cmd_fd = -1;
#define SEAT_DIR H_ROOT "/xdg-alice"
static const char *runtime_dir;

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
                if (ctty != CTTY_NONE && fd < 0)
                        _exit(97);
                /* (a wrapper of a failed case may still be ending: the VT is
                 * free once it has) */
                for (int i = 0; ctty != CTTY_NONE && ioctl(fd, TIOCSCTTY, 0) < 0; i++) {
                        if (errno != EPERM || i == 300) {
                                fprintf(stderr, "TIOCSCTTY: %s\n", strerror(errno));
                                _exit(91);
                        }
                        usleep(10000);
                }
                /* stdin stays on it, as in a login: the tty's last close
                 * would end it being our controlling tty */
                if (fd >= 0 && (dup2(fd, 0) < 0 || close(fd) < 0))
                        _exit(95);
                if (dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
                        _exit(92);
                if (uid && (setgid(uid) < 0 || setgroups(0, NULL) < 0 || setuid(uid) < 0))
                        _exit(93);
                /* a case that fails ends its process, not the wrapper it
                 * started: this ends it too (set after setuid, which
                 * clears it) */
                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0)
                        _exit(98);
                if (backend)
                        (void) setenv("LIBSEAT_BACKEND", backend, 1);
                else
                        (void) unsetenv("LIBSEAT_BACKEND");
                if (runtime_dir)
                        (void) setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
                else
                        (void) unsetenv("XDG_RUNTIME_DIR");
                if (cmd_fd >= 0 && dup2(cmd_fd, 3) < 0)
                        _exit(96);
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

/* alice's XDG_RUNTIME_DIR, made as a login has it */
static void runtime_dir_setup(void) {
        if (mkdir(SEAT_DIR, 0700) < 0)
                ck_assert_int_eq(errno, EEXIST);
        ck_assert_int_eq(chown(SEAT_DIR, H_UID_ALICE, H_UID_ALICE), 0);
        ck_assert_int_eq(chmod(SEAT_DIR, 0700), 0);
        runtime_dir = SEAT_DIR;
}

/* The modes a test VT is in before a test: text, Unicode keyboard, switches
 * by the kernel. */
static void vt_setup(void) {
        int fd = open(h_vt_path(0), O_RDWR | O_NOCTTY | O_CLOEXEC);

        /* the wrapper serves the seat by default: its socket goes there */
        runtime_dir_setup();
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
        ck_assert_ptr_nonnull(strstr(out, "usage: xdevices-vt-run [--seat|--no-seat] COMMAND"));
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
 * LIBSEAT_BACKEND=seatd (the wrapper's seat, by default), its exit status,
 * text and Unicode after. */
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
        ck_assert_str_eq(backend, "seatd");
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

/* The seat (the default, or --seat) with the real libseat in seat-client:
 * alice's wrapper on the test VT, its XDG_RUNTIME_DIR made as a login has
 * it. */

static int cmd_w = -1;
static int orig_vt;
static pid_t seat_pid; /* the wrapper of a seat case, ended by the teardown if a case failed */

static int active_vt(void) {
        struct vt_stat st;
        int fd = open("/dev/tty0", O_RDWR | O_NOCTTY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ioctl(fd, VT_GETSTATE, &st), 0);
        (void) close(fd);
        return st.v_active;
}

static void activate(int vt) {
        int fd = open("/dev/tty0", O_RDWR | O_NOCTTY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ioctl(fd, VT_ACTIVATE, vt), 0);
        (void) close(fd);
}

/* Waits (at most 10 s) until VT is in front. */
static void wait_active(int vt) {
        for (int i = 0; i < 1000 && active_vt() != vt; i++)
                usleep(10000);
        ck_assert_int_eq(active_vt(), vt);
}

/* The next line of FD, waited for at most 10 s; "" at the end or on time out. */
static char *next_line(int fd) {
        static char line[512];
        size_t n = 0;

        while (n < sizeof line - 1) {
                struct pollfd p = { .fd = fd, .events = POLLIN };

                if (poll(&p, 1, 10000) <= 0 || read(fd, line + n, 1) != 1)
                        break;
                if (line[n] == '\n')
                        break;
                n++;
        }
        line[n] = '\0';
        return line;
}

static void expect_line(struct run *r, const char *want) {
        char *got = next_line(r->out);

        ck_assert_msg(strcmp(got, want) == 0, "seat-client said \"%s\", not \"%s\"", got, want);
}

/* The seat-client's answer to "open PATH": refused with errno WANT or
 * ALSO. (libseat 0.9.1 loses the errno of an error reply: it reads on
 * after it and leaves EAGAIN; its refusal shows all the same.) */
static void expect_refused(struct run *r, const char *path, int want, int also) {
        char *line = next_line(r->out), p[300];
        int err;

        ck_assert_msg(sscanf(line, "open %299s error %d", p, &err) == 2 && strcmp(p, path) == 0,
                      "seat-client said \"%s\" to open %s", line, path);
        ck_assert_msg(err == want || err == also || err == EAGAIN,
                      "open %s: error %d, not %d or %d", path, err, want, also);
}

__attribute__((format(printf, 1, 2))) static void send_cmd(const char *fmt, ...) {
        va_list ap;
        char buf[300];
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        ck_assert_int_eq(write(cmd_w, buf, (size_t) n), n);
}

/* The seat asked for the next VT (SWITCH_SESSION): it says so and is
 * disabled, the VT changes; back on ours, it is enabled. */
static void seat_switch_away_and_back(struct run *r) {
        char want[64];

        send_cmd("switch %d\n", h_vt + 1);
        (void) snprintf(want, sizeof want, "switch %d 0", h_vt + 1);
        expect_line(r, want);
        expect_line(r, "disable");
        wait_active(h_vt + 1);
        activate(h_vt);
        wait_active(h_vt);
        expect_line(r, "enable");
}

static void seat_setup(void) {
        int p[2];

        vt_setup();
        ck_assert_int_eq(pipe(p), 0);
        cmd_fd = p[0];
        cmd_w = p[1];
        /* the console's VT in front, to be put back after; a test VT left
         * in front (a case that failed) is not one: tty1 then */
        orig_vt = active_vt();
        if (orig_vt >= h_vt && orig_vt < h_vt + H_N_VTS)
                orig_vt = 1;
        if (active_vt() == h_vt) {
                activate(h_vt + 2);
                wait_active(h_vt + 2);
        }
}

static void seat_teardown(void) {
        if (seat_pid > 0 && kill(seat_pid, SIGTERM) == 0)
                (void) waitpid(seat_pid, NULL, 0);
        seat_pid = 0;
        (void) close(cmd_fd);
        (void) close(cmd_w);
        cmd_fd = cmd_w = -1;
        runtime_dir = NULL;
        activate(orig_vt);
        wait_active(orig_vt);
}

/* Starts the wrapper with the seat and seat-client (ARG: "ack" or
 * "noack"), the test VT not in front; the client has the seat open. */
static struct run seat_start(const char *arg) {
        struct run r = start(CTTY_VT, H_UID_ALICE, NULL,
                             (const char *[]) { "--seat", seat_client, arg, NULL });

        seat_pid = r.pid;
        expect_line(&r, "opened seat0");
        return r;
}

static void seat_quit(struct run *r) {
        char *err, sock[128];

        send_cmd("quit\n");
        ck_assert_msg(finish(r, NULL, &err) == 0, "stderr: %s", err);
        seat_pid = 0;
        /* the socket went with the wrapper */
        (void) snprintf(sock, sizeof sock, SEAT_DIR "/xdevices-seat-tty%d", h_vt);
        ck_assert_int_eq(access(sock, F_OK), -1);
}

/* A switch to the wrapper's VT enables the seat; what the seat opens and
 * refuses; a switch away asked for by the compositor (SWITCH_SESSION)
 * disables it, and the compositor's ack comes before the switch; a switch
 * back enables it again. */
START_TEST(test_seat_roundtrip) {
        struct run r = seat_start("ack");
        int fd;

        ck_assert_int_ne(active_vt(), h_vt);
        activate(h_vt);
        wait_active(h_vt);
        expect_line(&r, "enable");

        /* not a node the seat serves: ENOENT, as seatd answers */
        send_cmd("open /dev/null\n");
        expect_refused(&r, "/dev/null", ENOENT, ENOENT);
        send_cmd("open /dev/input/event0/../event1\n");
        expect_refused(&r, "/dev/input/event0/../event1", ENOENT, ENOENT);
        send_cmd("open /dev/dri/../input/event0\n");
        expect_refused(&r, "/dev/dri/../input/event0", ENOENT, ENOENT);
        /* a symlink in the node's place is not followed (O_PATH|O_NOFOLLOW
         * opens the link itself, not a character device): ENODEV */
        ck_assert_int_eq(symlink("/dev/null", "/dev/input/event9"), 0);
        send_cmd("open /dev/input/event9\n");
        expect_refused(&r, "/dev/input/event9", ENODEV, ENODEV);
        ck_assert_int_eq(unlink("/dev/input/event9"), 0);
        /* the memory device /dev/null is under a DRM name: refused
         * (opened, it would have given an fd) */
        ck_assert_int_eq(mknod("/dev/dri/card7", S_IFCHR | 0666, makedev(1, 3)), 0);
        send_cmd("open /dev/dri/card7\n");
        expect_refused(&r, "/dev/dri/card7", ENODEV, ENODEV);
        ck_assert_int_eq(unlink("/dev/dri/card7"), 0);
        /* an input node alice may open: the kernel has no such device on
         * this host, and its error comes back (ENODEV or ENXIO) */
        fd = open("/dev/input/event0", O_PATH | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        (void) close(fd);
        ck_assert_int_eq(chmod("/dev/input/event0", 0666), 0);
        send_cmd("open /dev/input/event0\n");
        expect_refused(&r, "/dev/input/event0", ENODEV, ENXIO);
        ck_assert_int_eq(chmod("/dev/input/event0", 0660), 0);
        send_cmd("close 42\n");
        expect_line(&r, "close 42 -1");

        /* the compositor's own VT key (SWITCH_SESSION), and back: the grant is there (no
         * xdevicesd here), enabled at once */
        seat_switch_away_and_back(&r);
        /* and a switch asked for by someone else (chvt) */
        activate(h_vt + 1);
        expect_line(&r, "disable");
        wait_active(h_vt + 1);
        activate(h_vt);
        expect_line(&r, "enable");
        seat_quit(&r);
        assert_text_again();
}
END_TEST

/* A compositor that does not ack: the switch waits for it, then goes
 * through, logged; the seat comes back on the return. */
START_TEST(test_seat_no_ack) {
        char *err;
        struct run r = seat_start("noack");

        activate(h_vt);
        wait_active(h_vt);
        expect_line(&r, "enable");
        activate(h_vt + 1);
        expect_line(&r, "disable");
        /* the client has the event and did not ack: the switch is held */
        ck_assert_int_eq(active_vt(), h_vt);
        wait_active(h_vt + 1);
        activate(h_vt);
        wait_active(h_vt);
        expect_line(&r, "enable");
        send_cmd("quit\n");
        ck_assert_int_eq(finish(&r, NULL, &err), 0);
        ck_assert_msg(strstr(err, "did not ack the disable"), "stderr: %s", err);
        assert_text_again();
}
END_TEST

/* SWITCH_SESSION carries the protocol's int: a number that is no VT (0,
 * 64) is refused by the seat, never handed to the kernel, and the seat
 * stays as it was; a VT after them still switches. (libseat itself
 * refuses a negative one.) */
START_TEST(test_seat_switch_to_no_vt_refused) {
        static const int bad[] = { 0, XDEV_VT_MAX + 1 };
        char want[128], *err;
        struct run r = seat_start("ack");

        activate(h_vt);
        wait_active(h_vt);
        expect_line(&r, "enable");
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                char *got;
                send_cmd("switch %d\n", bad[i]);
                /* libseat 0.9 and later hear the refusal (-1), earlier ones
                 * wait for no reply (0) */
                got = next_line(r.out);
                (void) snprintf(want, sizeof want, "switch %d ", bad[i]);
                ck_assert_msg(strncmp(got, want, strlen(want)) == 0, "seat-client said \"%s\"",
                              got);
        }
        /* answered in order: once this one is through, so were they */
        seat_switch_away_and_back(&r);
        send_cmd("quit\n");
        ck_assert_int_eq(finish(&r, NULL, &err), 0);
        seat_pid = 0;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                (void) snprintf(want, sizeof want, "refused a switch to VT %d\n", bad[i]);
                ck_assert_msg(strstr(err, want), "no \"%s\" in stderr: %s", want, err);
        }
        ck_assert_msg(!strstr(err, "cannot switch"), "stderr: %s", err);
        assert_text_again();
}
END_TEST

/* Only alice's own processes are served: root's connection is closed. */
START_TEST(test_seat_peer_refused) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct run r = seat_start("ack");
        char c, *err;
        ssize_t n;
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        (void) snprintf(sa.sun_path, sizeof sa.sun_path, SEAT_DIR "/xdevices-seat-tty%d", h_vt);
        ck_assert_int_ge(s, 0);
        ck_assert_int_eq(connect(s, (struct sockaddr *) &sa, sizeof sa), 0);
        /* OPEN_SEAT, if the wrapper has not closed it yet */
        n = write(s, "\1\0\0\0", 4);
        ck_assert_msg(n == 4 || (n < 0 && (errno == EPIPE || errno == ECONNRESET)), "write: %zd %s",
                      n, strerror(errno));
        /* closed with our request unread: a reset, or the end */
        n = read(s, &c, 1);
        ck_assert_msg(n == 0 || (n < 0 && errno == ECONNRESET), "read: %zd %s", n, strerror(errno));
        (void) close(s);
        send_cmd("quit\n");
        ck_assert_int_eq(finish(&r, NULL, &err), 0);
        ck_assert_msg(strstr(err, "refused a connection of uid 0"), "stderr: %s", err);
}
END_TEST

/* The socket's directory must be alice's alone, and really a directory. */
START_TEST(test_seat_runtime_dir_refused) {
        char *err;
        struct run r;

        ck_assert_int_eq(chmod(SEAT_DIR, 0770), 0);
        r = start(CTTY_VT, H_UID_ALICE, NULL, (const char *[]) { "--seat", "true", NULL });
        ck_assert_int_eq(finish(&r, NULL, &err), 125);
        ck_assert_msg(strstr(err, "is not ours alone"), "stderr: %s", err);
        ck_assert_int_eq(chmod(SEAT_DIR, 0700), 0);
        ck_assert_int_eq(chown(SEAT_DIR, H_UID_BOB, H_UID_BOB), 0);
        r = start(CTTY_VT, H_UID_ALICE, NULL, (const char *[]) { "--seat", "true", NULL });
        ck_assert_int_eq(finish(&r, NULL, &err), 125);
        ck_assert_msg(strstr(err, "is not ours alone"), "stderr: %s", err);
        ck_assert_int_eq(chown(SEAT_DIR, H_UID_ALICE, H_UID_ALICE), 0);
        ck_assert_int_eq(symlink(SEAT_DIR, H_ROOT "/xdg-link"), 0);
        runtime_dir = H_ROOT "/xdg-link";
        r = start(CTTY_VT, H_UID_ALICE, NULL, (const char *[]) { "--seat", "true", NULL });
        ck_assert_int_eq(finish(&r, NULL, &err), 125);
        ck_assert_msg(strstr(err, "XDG_RUNTIME_DIR " H_ROOT "/xdg-link"), "stderr: %s", err);
        ck_assert_int_eq(unlink(H_ROOT "/xdg-link"), 0);
        runtime_dir = NULL;
        r = start(CTTY_VT, H_UID_ALICE, NULL, (const char *[]) { "--seat", "true", NULL });
        ck_assert_int_eq(finish(&r, NULL, &err), 125);
        ck_assert_msg(strstr(err, "XDG_RUNTIME_DIR is not set"), "stderr: %s", err);
        assert_text_again();
}
END_TEST

/* The backend the command gets: the seat by default and with --seat;
 * libseat's embedded seatd with --no-seat; the user's own choice kept. */
static void backend_is(const char *set, const char *flag, const char *want) {
        char *out, *err;
        int mode, kbmode, pid;
        char backend[64];
        struct run r = start(CTTY_VT, H_UID_ALICE, set,
                             flag ? (const char *[]) { flag, self, "--probe", NULL }
                                  : (const char *[]) { self, "--probe", NULL });

        ck_assert_msg(finish(&r, &out, &err) == 0, "stderr: %s", err);
        ck_assert_int_eq(sscanf(out, "%d %d %*d %63s %d", &mode, &kbmode, backend, &pid), 4);
        ck_assert_msg(strcmp(backend, want) == 0, "LIBSEAT_BACKEND=%s with %s %s, not %s", backend,
                      set ? set : "(unset)", flag ? flag : "", want);
}

START_TEST(test_seat_env) {
        backend_is(NULL, NULL, "seatd");
        backend_is(NULL, "--seat", "seatd");
        backend_is(NULL, "--no-seat", "builtin");
        backend_is("builtin", NULL, "builtin");
        backend_is("builtin", "--seat", "seatd");
        assert_text_again();
}
END_TEST

static Suite *refusals_suite(void) {
        Suite *s = suite_create("xdevices-vt-run");
        TCase *tc = h_tcase(s, "refusals", 0, NULL, NULL);

        tcase_add_test(tc, test_usage);
        tcase_add_test(tc, test_no_ctty);
        tcase_add_test(tc, test_pty_refused);
        tcase_add_test(tc, test_reset_refuses_non_vt);
        return s;
}

static Suite *vt_suite(void) {
        Suite *s = suite_create("xdevices-vt-run on a VT");
        TCase *tc = h_tcase(s, "vt", 0, vt_setup, NULL);

        tcase_add_test(tc, test_vt_modes_as_user);
        tcase_add_test(tc, test_vt_backend_kept);
        tcase_add_test(tc, test_vt_sigterm_forwarded);
        tcase_add_test(tc, test_vt_sighup_forwarded);
        tcase_add_test(tc, test_vt_command_killed);
        tcase_add_test(tc, test_vt_exec_fails);
        tcase_add_test(tc, test_vt_wrapper_killed_then_reset);
        tcase_add_test(tc, test_vt_process_refused);
        return s;
}

/* Empty without seat-client (libseat-dev missing). */
static Suite *seat_suite(void) {
        Suite *s = suite_create("xdevices-vt-run's seat");
        TCase *tc;

        if (!seat_client[0])
                return s;
        tc = h_tcase(s, "seat", 60, seat_setup, seat_teardown);
        tcase_add_test(tc, test_seat_roundtrip);
        tcase_add_test(tc, test_seat_no_ack);
        tcase_add_test(tc, test_seat_switch_to_no_vt_refused);
        tcase_add_test(tc, test_seat_peer_refused);
        tcase_add_test(tc, test_seat_runtime_dir_refused);
        tcase_add_test(tc, test_seat_env);
        return s;
}

H_SUITE(refusals_suite, H_ANY_USER)
H_SUITE(vt_suite, H_ROOT_ONLY)
H_SUITE(seat_suite, H_ROOT_ONLY)

/* The namespace, the lock, the first free test VT; the VT node given to
 * alice as pam_xdevices gives a login VT. */
static int setup_root(void) {
        const char *seat;

        h_init();
        /* alice runs both programs: copies she can reach, whatever the mode
         * of the build tree's directories (a 0700 clone) */
        if (copy_exe(wrapper, H_ROOT "/bin/xdevices-vt-run") < 0 ||
            copy_exe(self, H_ROOT "/bin/test-vtrun") < 0)
                return 99;
        wrapper = H_ROOT "/bin/xdevices-vt-run";
        seat = getenv("XDEV_SEAT_CLIENT");
        if (seat && access(seat, X_OK) == 0) {
                if (copy_exe(seat, H_ROOT "/bin/seat-client") < 0)
                        return 99;
                strcpy(seat_client, H_ROOT "/bin/seat-client");
        } else
                fprintf(stderr,
                        "no seat-client (libseat-dev missing): the seat cases "
                        "are skipped\n");
        strcpy(self, H_ROOT "/bin/test-vtrun");
        if (chown(h_vt_path(0), H_UID_ALICE, H_UID_ALICE) < 0)
                return 99;
        /* the harness's /dev has no pseudo-terminals: a devpts of our own */
        if (mount("devpts", "/dev/pts", "devpts", 0, "newinstance,ptmxmode=0666,mode=0620") < 0 ||
            symlink("pts/ptmx", "/dev/ptmx") < 0)
                return 99;
        return 0;
}

int main(int argc, char **argv) {
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
        ret = h_suites_run(&(const struct h_setup) { setup_root, NULL });
        if (geteuid() == 0 && h_vt > 0) {
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
