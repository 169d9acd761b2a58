/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevices-vt-run(1): runs a display server that opens the console devices
 * through libseat (a wlroots compositor) on the VT of the login it is
 * started from, and is its seat: by default it serves libseat's seatd
 * protocol itself (vt-seat.c), which tells the compositor of each VT switch
 * and hands it the devices; with --no-seat, or LIBSEAT_BACKEND set, the
 * compositor uses libseat's embedded seatd not bound to a VT (or what the
 * user chose) and is told nothing. It puts that VT in graphics mode with the
 * keyboard off, so that the kernel neither draws the text console over the
 * compositor nor turns the keys the compositor reads into input of the
 * login shell, and puts both back when the command ends. The kernel ignores
 * every switch away from a VT in graphics mode unless a process handles its
 * switches (VT_PROCESS): the wrapper does, and lets each one happen (after
 * the seat's handshake), so that chvt and xdevicesd keep working; when the
 * wrapper is gone, the kernel's next switch away resets the VT to text mode
 * and the default keyboard mode itself. It runs as the user: the kernel
 * lets the process whose controlling tty a VT is change these modes. The
 * wrapper forks; the child execs the command, the parent serves the seat,
 * forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to the command, and restores
 * the VT whichever way the command ends. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vt-seat.h"
#include "vt.h"

#define PROG "xdevices-vt-run"
/* Exit codes of the wrapper itself, as env(1) and timeout(1) have them. */
#define EXIT_WRAPPER 125
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
/* What the kernel sends the VT's switch handler: leave, and come back. */
#define SIG_RELEASE SIGUSR1
#define SIG_ACQUIRE SIGUSR2

/* Whether the wrapper serves the seat when neither --seat nor --no-seat is
 * given and LIBSEAT_BACKEND is not set. */
#define SEAT_BY_DEFAULT true
/* How long a switch away waits for the compositor's ack, and a switch back
 * for xdevicesd's grant. */
#define SEAT_ACK_TIMEOUT_MS 2000
#define SEAT_GRANT_TIMEOUT_MS 3000

static void usage(FILE *f) {
        fprintf(f,
                "usage: " PROG
                " [--seat|--no-seat] COMMAND [ARG...]\n"
                "       " PROG
                " --reset /dev/ttyN\n"
                "Runs COMMAND (a Wayland compositor, for instance) with the controlling VT in\n"
                "graphics mode and its keyboard off, and restores both when COMMAND ends.\n"
                "It serves COMMAND the seat (libseat's seatd protocol on a socket in\n"
                "XDG_RUNTIME_DIR; LIBSEAT_BACKEND=seatd, SEATD_SOCK) unless LIBSEAT_BACKEND\n"
                "is set or --no-seat is given; then, unless LIBSEAT_BACKEND is set, it sets\n"
                "LIBSEAT_BACKEND=builtin and SEATD_VTBOUND=0 (libseat's embedded seatd, not\n"
                "bound to the VT). --reset puts a VT back into text mode with the kernel's\n"
                "default keyboard mode (root, or the VT's own session).\n"
                "See " PROG "(1).\n");
}

/* The controlling tty of this process as the kernel has it (the seventh
 * field of /proc/self/stat); 0 when there is none, -1 on error. */
static long long ctty_dev(void) {
        char buf[1024], *p;
        long long tty_nr;
        ssize_t n;
        int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof buf - 1);
        (void) close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        /* the command name may hold anything, even ") ": skip to the last ')' */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %lld", &tty_nr) != 1)
                return -1;
        return tty_nr;
}

/* VT N opened through the VT unit (libxdev/vt.h): checked to be the
 * character device 4:N, never becoming a ctty. Returns the fd or -1 with a
 * message printed. */
static int open_vt(unsigned vt) {
        int fd = xdev_vt_open(vt, 0);

        if (fd == -ENOTTY)
                fprintf(stderr, PROG ": /dev/tty%u is not the virtual console %u\n", vt, vt);
        else if (fd < 0)
                fprintf(stderr, PROG ": cannot open /dev/tty%u: %s\n", vt, strerror(-fd));
        return fd < 0 ? -1 : fd;
}

/* The VT this process's controlling tty is, opened; -1 with a message when
 * it has none or it is not a VT. */
static int open_ctty_vt(unsigned *ret_vt) {
        long long dev = ctty_dev();
        unsigned vt;

        if (dev < 0) {
                fprintf(stderr, PROG ": cannot read /proc/self/stat: %s\n", strerror(errno));
                return -1;
        }
        if (dev == 0) {
                fprintf(stderr,
                        PROG
                        ": no controlling terminal: run it from a console login "
                        "on a virtual console /dev/ttyN\n");
                return -1;
        }
        if (!xdev_vt_from_devnum((dev_t) dev, &vt)) {
                fprintf(stderr,
                        PROG
                        ": the controlling terminal (device %u:%u) is not a virtual "
                        "console /dev/tty1..63: run it from a console login, not from a "
                        "terminal emulator, ssh or a serial line\n",
                        major((dev_t) dev), minor((dev_t) dev));
                return -1;
        }
        *ret_vt = vt;
        return open_vt(vt);
}

static int set_modes(int fd, unsigned vt, int mode, int kbmode) {
        int r = 0;

        if (ioctl(fd, KDSKBMODE, kbmode) < 0) {
                fprintf(stderr, PROG ": tty%u: keyboard mode %d: %s\n", vt, kbmode,
                        strerror(errno));
                r = -1;
        }
        if (ioctl(fd, KDSETMODE, mode) < 0) {
                fprintf(stderr, PROG ": tty%u: %s mode: %s\n", vt,
                        mode == KD_TEXT ? "text" : "graphics", strerror(errno));
                r = -1;
        }
        return r;
}

/* The modes the VT had; says so when the kernel refuses (the VT was hung
 * up: the login ended first). */
static void restore(int fd, unsigned vt, int mode, int kbmode, const struct vt_mode *vtmode) {
        int r = set_modes(fd, vt, mode, kbmode);

        if (ioctl(fd, VT_SETMODE, vtmode) < 0) {
                fprintf(stderr, PROG ": tty%u: VT switch mode: %s\n", vt, strerror(errno));
                r = -1;
        }
        if (r < 0)
                fprintf(stderr,
                        PROG ": tty%u may stay in graphics mode: see " PROG "(1), RECOVERY\n", vt);
}

/* --reset /dev/ttyN: text mode, the default keyboard mode, switches by the
 * kernel (VT_AUTO), as the core resets a VT at a logout. */
static int reset(const char *arg) {
        unsigned vt, what;
        int fd, r;

        if (xdev_vt_parse(arg, &vt) < 0) {
                fprintf(stderr, PROG ": --reset: not a virtual console: %s\n", arg);
                return EXIT_WRAPPER;
        }
        fd = open_vt(vt);
        if (fd < 0)
                return EXIT_WRAPPER;
        r = xdev_vt_reset(fd, &what);
        (void) close(fd);
        if (r < 0) {
                fprintf(stderr, PROG ": tty%u: cannot reset its modes: %s\n", vt, strerror(-r));
                return EXIT_WRAPPER;
        }
        return 0;
}

static void child_exec(char **argv, const sigset_t *oldmask, const struct vtseat *seat) {
        struct sigaction sa = { .sa_handler = SIG_DFL };

        for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
                (void) sigaction(forwarded[i], &sa, NULL);
        (void) sigprocmask(SIG_SETMASK, oldmask, NULL);
        /* libseat's embedded seatd opens the granted nodes as the user and,
         * not bound to a VT, leaves the VT to us; Debian 12's noop backend
         * never tells wlroots the seat is enabled. */
        if (seat &&
            (setenv("LIBSEAT_BACKEND", "seatd", 1) < 0 ||
             setenv("SEATD_SOCK", seat->path, 1) < 0)) {
                fprintf(stderr, PROG ": setenv: %s\n", strerror(errno));
                _exit(EXIT_WRAPPER);
        }
        if (!seat && !getenv("LIBSEAT_BACKEND") &&
            (setenv("LIBSEAT_BACKEND", "builtin", 1) < 0 || setenv("SEATD_VTBOUND", "0", 0) < 0)) {
                fprintf(stderr, PROG ": setenv: %s\n", strerror(errno));
                _exit(EXIT_WRAPPER);
        }
        execvp(argv[0], argv);
        fprintf(stderr, PROG ": %s: %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
}

/* What the kernel or a user sent, taken from the signalfd; false when the
 * command has ended (its status in *STATUS). */
static bool on_signal(int sfd, int fd, unsigned vt, pid_t pid, struct vtseat *seat, int *status) {
        struct signalfd_siginfo si;
        pid_t w;

        if (read(sfd, &si, sizeof si) != (ssize_t) sizeof si)
                return true;
        switch (si.ssi_signo) {
        case SIG_RELEASE:
                /* another VT is asked for: the compositor lets go of the
                 * devices first, then it comes to the front */
                if (seat)
                        vtseat_disable(seat, SEAT_ACK_TIMEOUT_MS);
                if (ioctl(fd, VT_RELDISP, 1) < 0)
                        fprintf(stderr, PROG ": tty%u: allowing a VT switch: %s\n", vt,
                                strerror(errno));
                return true;
        case SIG_ACQUIRE:
                (void) ioctl(fd, VT_RELDISP, VT_ACKACQ);
                if (seat)
                        vtseat_enable(seat, SEAT_GRANT_TIMEOUT_MS);
                return true;
        case SIGCHLD:
                w = waitpid(pid, status, WNOHANG);
                if (w == pid)
                        return false;
                if (w < 0 && errno != EINTR) {
                        fprintf(stderr, PROG ": waitpid: %s\n", strerror(errno));
                        *status = EXIT_WRAPPER << 8;
                        return false;
                }
                return true;
        default:
                (void) kill(pid, (int) si.ssi_signo);
                return true;
        }
}

/* The VT of the login and its modes as found, to restore at the end. */
struct wrapped {
        int fd;
        unsigned vt; /* 1 to XDEV_VT_MAX */
        int mode, kbmode;
        struct vt_mode vtmode;
        struct vtseat *seat; /* NULL: no seat served */
};

/* The options. Returns -1 to go on with *WANT_SEAT (1, 0, or -1: the
 * default), or an exit code. */
static int parse_options(int argc, char **argv, int *want_seat) {
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },        { "version", no_argument, NULL, 'V' },
                { "reset", required_argument, NULL, 'r' }, { "seat", no_argument, NULL, 's' },
                { "no-seat", no_argument, NULL, 'n' },     {},
        };
        int c;

        /* "+": options end at the command, whose own options are its own */
        while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1)
                switch (c) {
                case 'h':
                        usage(stdout);
                        return 0;
                case 'V':
                        printf(PROG " " PACKAGE_VERSION "\n");
                        return 0;
                case 'r':
                        if (optind != argc) {
                                usage(stderr);
                                return 2;
                        }
                        return reset(optarg);
                case 's':
                        *want_seat = 1;
                        break;
                case 'n':
                        *want_seat = 0;
                        break;
                default:
                        usage(stderr);
                        return 2;
                }
        if (optind >= argc) {
                fprintf(stderr, PROG ": no command given\n");
                usage(stderr);
                return 2;
        }
        return -1;
}

/* Opens the controlling VT and reads its modes; refuses a VT whose
 * switches another program handles. Returns 0 or -1 (said). */
static int vt_take(struct wrapped *w) {
        w->fd = open_ctty_vt(&w->vt);
        if (w->fd < 0)
                return -1;
        if (ioctl(w->fd, KDGETMODE, &w->mode) < 0 || ioctl(w->fd, KDGKBMODE, &w->kbmode) < 0 ||
            ioctl(w->fd, VT_GETMODE, &w->vtmode) < 0) {
                fprintf(stderr, PROG ": tty%u: cannot read its modes: %s\n", w->vt,
                        strerror(errno));
                return -1;
        }
        if (w->vtmode.mode != VT_AUTO) {
                fprintf(stderr,
                        PROG
                        ": tty%u: another program handles its VT switches (VT_PROCESS): "
                        "is a display server already running on it?\n",
                        w->vt);
                return -1;
        }
        if (w->mode != KD_TEXT)
                fprintf(stderr, PROG ": warning: tty%u is already in graphics mode\n", w->vt);
        return 0;
}

/* From here to the end the forwarded signals and the VT's are only taken
 * from the returned signalfd: none can end us between setting the modes
 * and restoring them. Then the VT's switches are ours and it is in
 * graphics mode with the keyboard off. Returns the signalfd, or -1 (said;
 * the modes put back). */
static int vt_setup(struct wrapped *w, sigset_t *oldmask) {
        struct vt_mode process = { .mode = VT_PROCESS,
                                   .relsig = SIG_RELEASE,
                                   .acqsig = SIG_ACQUIRE };
        sigset_t mask;
        int sfd;

        sigemptyset(&mask);
        for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
                sigaddset(&mask, forwarded[i]);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIG_RELEASE);
        sigaddset(&mask, SIG_ACQUIRE);
        if (sigprocmask(SIG_BLOCK, &mask, oldmask) < 0 ||
            (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
                fprintf(stderr, PROG ": signals: %s\n", strerror(errno));
                return -1;
        }
        if (ioctl(w->fd, VT_SETMODE, &process) < 0) {
                fprintf(stderr, PROG ": tty%u: handling its VT switches: %s\n", w->vt,
                        strerror(errno));
                return -1;
        }
        if (set_modes(w->fd, w->vt, KD_GRAPHICS, K_OFF) < 0) {
                restore(w->fd, w->vt, w->mode, w->kbmode, &w->vtmode);
                return -1;
        }
        return sfd;
}

/* Serves the seat and the signals until the command PID ends; returns its
 * wait status. */
static int serve(struct wrapped *w, int sfd, pid_t pid) {
        struct vtseat *seat = w->seat;
        int status = 0;

        for (;;) {
                struct pollfd p[3] = {
                        { .fd = sfd, .events = POLLIN },
                        { .fd = seat ? seat->listen_fd : -1, .events = POLLIN },
                        { .fd = seat ? seat->client_fd : -1, .events = POLLIN },
                };

                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        fprintf(stderr, PROG ": poll: %s\n", strerror(errno));
                        (void) kill(pid, SIGTERM);
                        if (waitpid(pid, &status, 0) < 0)
                                status = EXIT_WRAPPER << 8;
                        return status;
                }
                if (p[2].revents)
                        vtseat_client_input(seat);
                if (p[1].revents & POLLIN)
                        vtseat_accept(seat);
                if ((p[0].revents & POLLIN) && !on_signal(sfd, w->fd, w->vt, pid, seat, &status))
                        return status;
        }
}

int main(int argc, char **argv) {
        static struct vtseat seat_storage;
        struct wrapped w = { .fd = -1 };
        sigset_t oldmask;
        int sfd, status, want_seat = -1;
        pid_t pid;

        status = parse_options(argc, argv, &want_seat);
        if (status >= 0)
                return status;
        if (want_seat < 0)
                want_seat = SEAT_BY_DEFAULT && !getenv("LIBSEAT_BACKEND");
        if (geteuid() != getuid() || getegid() != getgid()) {
                fprintf(stderr, PROG ": refusing to run set-user-ID or set-group-ID\n");
                return EXIT_WRAPPER;
        }
        if (vt_take(&w) < 0)
                return EXIT_WRAPPER;
        if (want_seat) {
                w.seat = &seat_storage;
                if (vtseat_listen(w.seat, w.fd, w.vt) < 0) {
                        vtseat_close(w.seat);
                        return EXIT_WRAPPER;
                }
        }
        sfd = vt_setup(&w, &oldmask);
        pid = sfd < 0 ? -1 : fork();
        if (sfd >= 0 && pid < 0) {
                fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
                restore(w.fd, w.vt, w.mode, w.kbmode, &w.vtmode);
        }
        if (pid < 0) {
                if (w.seat)
                        vtseat_close(w.seat);
                return EXIT_WRAPPER;
        }
        if (pid == 0)
                child_exec(argv + optind, &oldmask, w.seat);
        status = serve(&w, sfd, pid);
        if (w.seat)
                vtseat_close(w.seat);
        restore(w.fd, w.vt, w.mode, w.kbmode, &w.vtmode);
        (void) close(w.fd);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_WRAPPER;
}
