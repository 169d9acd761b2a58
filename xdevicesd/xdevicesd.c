/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevicesd(8): makes the shared devices follow the VT in front. A thin
 * front-end of the core: it watches, the core decides and acts.
 *
 * Rules this file keeps:
 *  1. Root only; never runs another program.
 *  2. A wake-up says only "look again": every time the active VT and the
 *     state are read anew (several switches can coalesce under load).
 *  3. One instance: an flock on STATEDIR/daemon.lock, taken before the state
 *     is marked as followed.
 *  4. Bounded: one pidfd per recorded session (at most XDEV_SESSIONS_MAX). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core.h"
#include "follow.h"
#include "others.h"
#include "procfs.h"
#include "proctab.h"
#include "step.h"
#include "watch.h"
#include "devices.h"
#include "logind.h"

#define ACTIVE_VT_PATH "/sys/class/tty/tty0/active"
#define RETRY_MS 1000
/* After a handover, the enumeration that finds nodes the ledger lacked runs
 * once no switch came for this long: switches in a row go first. */
#define ENUMERATE_IDLE_MS 100
/* Process events are read at most once in this long while idle (ms). */
#define PROCS_HOLDOFF_MS 1000
/* The bound of the test knob --test-grant-delay. */
#define GRANT_DELAY_MAX_MS 5000
/* A new holder's input nodes are looked at (and those its display server
 * did not reopen announced) once it has been in front this long (ms): in a
 * run of switches, udev's work for each announcement would be for holders
 * already gone, and would slow the next switch; and the server in front
 * has reopened its devices by then (DESIGN §3.10). --test-announce-after
 * sets it, at most ANNOUNCE_AFTER_MAX_MS. */
#define ANNOUNCE_AFTER_MS 300
#define ANNOUNCE_AFTER_MAX_MS 10000
/* A server still opening its devices takes more of them from one look to
 * the next, or is not done with its VT enter (xdev_follow_settled(): a
 * patched Xorg that waits for the grant, slowed by load, has opened none
 * yet). The daemon looks again, ANNOUNCE_AFTER_MS later, until two looks
 * agree on the nodes and the server is done (a stock Xorg whose opens
 * failed at VT enter, back in its event loop), for at most
 * LOOKS_PATIENCE_MS after the first look; then it announces. Bounded above the patched Xorg's own wait for
 * the grant (3 s at VT enter), so that a server kept busy for ever (by a
 * client that animates) is announced what it lacks all the same. */
#define LOOKS_PATIENCE_MS 3500

enum {
        EXIT_OK = XDEV_EXIT_OK,
        EXIT_FAILED = XDEV_EXIT_FAILED,
        EXIT_USAGE = XDEV_EXIT_USAGE,
        EXIT_NOTROOT = XDEV_EXIT_NOTROOT,
        EXIT_RUNNING = 5, /* another xdevicesd holds the lock */
        EXIT_LOGIND = 6,  /* a logind manages the seats: stood down */
};

/* fds polled: signals, the active VT, the state directory, the timer of
 * the sweeps' deadlines, the process events, then leaders */
enum { P_SIGNAL, P_ACTIVE, P_STATE, P_TIMER, P_PROCS, P_LEADERS };

static bool log_stderr;
static unsigned announce_after_ms = ANNOUNCE_AFTER_MS;
/* --test-watch-console: the watch on the nodes takes /dev/tty0 too, the
 * only node a host with no evdev can move data through (watch.h). */
static bool watch_console;

static XDEV_PRINTF(3, 0) void log_sink(void *userdata, int priority, const char *fmt, va_list ap) {
        char line[1024];
        va_list copy;
        int n;

        (void) userdata;
        va_copy(copy, ap);
        vsyslog(priority, fmt, copy);
        va_end(copy);
        if (!log_stderr)
                return;
        /* one write per line: lines from a busy step stay whole and cheap */
        n = snprintf(line, sizeof line, "xdevicesd: ");
        n += vsnprintf(line + n, sizeof line - (size_t) n - 1, fmt, ap);
        if (n > (int) sizeof line - 2)
                n = (int) sizeof line - 2;
        line[n++] = '\n';
        (void) !write(STDERR_FILENO, line, (size_t) n);
}

static void usage(FILE *out) {
        fprintf(out,
                "Usage: xdevicesd [--conf=PATH] [--debug] [--stderr] [--test-grant-delay=MS[-MS]]\n"
                "                 [--test-announce-after=MS] [--test-watch-console]\n"
                "       xdevicesd --version\n"
                "\n"
                "Gives the shared devices (DRM, input) to the user whose console session is on\n"
                "the VT in front, and to nobody while a VT without one is in front. Runs in\n"
                "the foreground; SIGTERM stops it, SIGHUP reloads the configuration.\n"
                "--test-grant-delay holds each new holder's grant back, --test-announce-after\n"
                "sets how long a new holder stays in front before its input nodes are\n"
                "announced, --test-watch-console watches /dev/tty0 as it watches the input\n"
                "nodes (test knobs).\n"
                "\n"
                "Exit status: 0 stopped, 1 failed, 2 usage, 3 not root, 5 already running,\n"
                "6 a logind manages the seats (stood down).\n");
}

/* The state directory, made and checked by the store, and the daemon lock
 * in it. Returns the lock fd, -EWOULDBLOCK when another daemon holds it. */
static int lock_daemon(const char *statedir) {
        struct xdev_store store;
        int fd, r;

        r = xdev_store_open(&store, statedir);
        if (r < 0)
                return r;
        fd = openat(store.dirfd, "daemon.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        r = fd < 0 ? -errno : 0;
        xdev_store_close(&store);
        if (r < 0)
                return r;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                r = -errno;
                (void) close(fd);
                return r;
        }
        return fd;
}

/* Reading the attribute re-arms its POLLPRI; the content is read by the
 * core, every time. */
static void active_rearm(int fd) {
        char buf[32];
        (void) lseek(fd, 0, SEEK_SET);
        (void) !read(fd, buf, sizeof buf);
}

/* Reads the queued inotify events; true if one says the state file was
 * replaced or removed (or events were lost). Other files in the directory
 * (the lock, opened for writing by every transaction, "state.tmp") are no
 * reason to look again: waking on the lock's close would wake the daemon
 * after each of its own steps, for ever. */
static bool state_events(int fd) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool state = false;
        ssize_t n;

        while ((n = read(fd, buf, sizeof buf)) > 0)
                for (size_t off = 0; off + sizeof(struct inotify_event) <= (size_t) n;) {
                        const struct inotify_event *ev = (const void *) (buf + off);
                        if ((ev->mask & IN_Q_OVERFLOW) ||
                            (ev->len > 0 && strcmp(ev->name, "state") == 0))
                                state = true;
                        off += sizeof *ev + ev->len;
                }
        return state;
}

/* Watches the state directory, and again when it is another directory
 * than the one watched: removed with its state while the daemon ran (the
 * watch went with it) and made anew by the last step. Returns 1 when a
 * watch was added, 0 when the one there still holds, or -errno. */
static int state_watch(int inofd, const char *statedir, struct stat *watched) {
        struct stat st;

        if (lstat(statedir, &st) < 0)
                return -errno;
        if (watched->st_ino == st.st_ino && watched->st_dev == st.st_dev)
                return 0;
        if (inotify_add_watch(inofd, statedir,
                              IN_MOVED_TO | IN_DELETE | IN_DONT_FOLLOW | IN_ONLYDIR) < 0)
                return -errno;
        *watched = st;
        return 1;
}

/* Replaces the leader pidfds in PFDS[P_LEADERS..] with those of RES.
 * Returns the number of pollfds in use; *RET_STALE is set when a leader
 * was already gone (look again at once). */
static size_t leaders_watch(struct pollfd *pfds, size_t n_used,
                            const struct xdev_follow_result *res, bool *ret_stale) {
        size_t n = P_LEADERS;

        for (size_t i = P_LEADERS; i < n_used; i++)
                (void) close(pfds[i].fd);
        *ret_stale = false;
        for (size_t i = 0; i < res->n_leaders; i++) {
                int fd = (int) syscall(SYS_pidfd_open, res->leaders[i].pid, 0);
                /* pinned first, then checked: a reused pid is not watched */
                if (fd < 0 || !xdev_pid_is_alive(res->leaders[i].pid, res->leaders[i].start)) {
                        if (fd >= 0)
                                (void) close(fd);
                        *ret_stale = true;
                        continue;
                }
                pfds[n++] = (struct pollfd) { .fd = fd, .events = POLLIN };
        }
        return n;
}

/* Arms the timer at AT_MS (CLOCK_MONOTONIC), or disarms it with 0: a
 * logout's sweep recorded in the state ends at its deadline even when its
 * sweeper is gone and nothing else happens (doc/DESIGN.md §3.5.7). */
static void timer_arm(int fd, uint64_t at_ms) {
        struct itimerspec its = { 0 };

        if (at_ms > 0)
                its.it_value = (struct timespec) { .tv_sec = (time_t) (at_ms / 1000),
                                                   .tv_nsec = (long) (at_ms % 1000) * 1000000 };
        (void) timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* The OOM killer must not pick the daemon: killed, it leaves the shared
 * devices with the last holder across every switch until it is started
 * again (xdevicesd(8)). -1000 exempts it; it is small and bounded. */
static void oom_protect(const struct xdev_log *log) {
        int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        int r = fd < 0 ? -errno : 0;

        if (fd >= 0) {
                if (write(fd, "-1000", 5) != 5)
                        r = -errno;
                (void) close(fd);
        }
        if (r < 0)
                xdev_log(
                        log, LOG_WARNING,
                        "cannot set oom_score_adj to -1000 (%s); the OOM killer may end the daemon, ignoring",
                        strerror(-r));
}

/* Whether a logind manages the seats (doc/DESIGN.md §3.8): then the
 * daemon says so and exits with EXIT_LOGIND, which init scripts report as
 * a start that did not happen. */
static bool stands_down(const struct xdev_ctx *ctx) {
        struct xdev_logind logind;

        if (ctx->config.ignore_logind || xdev_logind_find(&logind) <= 0)
                return false;
        xdev_log(&ctx->log, LOG_ERR,
                 "%s (pid %d) manages the seats here: xdevicesd stands down (logind = ignore in "
                 "xdevices.conf overrides)",
                 logind.name, (int) logind.pid);
        return true;
}

static void *closer(void *data) {
        struct xdev_fd_bin *bin = data;

        xdev_fd_bin_empty(bin);
        free(bin);
        return NULL;
}

/* Runs FN(ARG) in a detached thread; false when none could be started. */
static bool run_apart(void *(*fn)(void *), void *arg) {
        pthread_attr_t attr;
        pthread_t thread;
        bool started;

        if (pthread_attr_init(&attr) != 0)
                return false;
        started = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                pthread_create(&thread, &attr, fn, arg) == 0;
        (void) pthread_attr_destroy(&attr);
        return started;
}

/* Closes the copies of revoked fds from a thread of their own: the last
 * close of a revoked evdev file (its holder exited at the revoke) waits for
 * an RCU grace period, and the next switch must not wait behind it. */
static void close_apart(struct xdev_fd_bin *bin) {
        struct xdev_fd_bin *copy;

        if (bin->n == 0)
                return;
        copy = malloc(sizeof *copy);
        if (copy) {
                *copy = *bin;
                if (run_apart(closer, copy)) {
                        bin->n = 0;
                        return;
                }
        }
        free(copy);
        xdev_fd_bin_empty(bin);
}

struct sweep_job {
        struct xdev_ctx *ctx;
        struct xdev_sweep_wait *waits;
};

static void *sweeper(void *data) {
        struct sweep_job *job = data;

        xdev_linger_finish(job->ctx, job->waits);
        free(job);
        return NULL;
}

/* A logout's sweep in its grace period (lingering = kill, kill-user) runs
 * to its end in a thread of its own: switches go on meanwhile (§3.5.7). */
static void sweep_apart(struct xdev_ctx *ctx, struct xdev_sweep_wait *waits) {
        struct sweep_job *job;

        if (!waits)
                return;
        job = malloc(sizeof *job);
        if (job) {
                *job = (struct sweep_job) { .ctx = ctx, .waits = waits };
                if (run_apart(sweeper, job))
                        return;
        }
        free(job);
        xdev_linger_finish(ctx, waits);
}

/* The pass after the lock (doc/DESIGN.md §3.5.10) runs in one thread of
 * its own at a time: a step that changed the grants while it runs makes
 * it run once more when it ends, against the state of then. The processes
 * a step left over the scan budget, and the uid it took the devices from,
 * wait in DEFER for it; a uid that did not fit (a run of switches) waits
 * in DEPARTED for the next run with room. */
#define OTHERS_DEFER_MAX 4
static struct {
        pthread_mutex_t lock;
        pthread_cond_t idle; /* signalled when RUNNING goes false */
        bool running, again;
        struct xdev_sweep_defer defer[OTHERS_DEFER_MAX];
        size_t n_defer;
        bool has_departed;
        uid_t departed;
} others = { .lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER };

/* login.defs is read at each pass; a warning of it is given once, not at
 * every switch (the passes of others_pass and others_apart may overlap:
 * the memo has a lock of its own). */
static struct xdev_logindefs_memo logindefs_memo = XDEV_LOGINDEFS_MEMO_INIT;

/* Waits until no pass runs: the configuration it reads is reloaded only
 * then (a pass takes seconds at most). */
static void others_wait_idle(void) {
        (void) pthread_mutex_lock(&others.lock);
        while (others.running)
                (void) pthread_cond_wait(&others.idle, &others.lock);
        (void) pthread_mutex_unlock(&others.lock);
}

static void others_run(struct xdev_ctx *ctx, const struct xdev_sweep_defer *defer) {
        struct xdev_sweep_counts c;
        double t0 = xdev_now_ms();
        int r = xdev_sweep_others(ctx, defer, &c);

        if (r < 0)
                xdev_log(&ctx->log, LOG_ERR, "cannot look for holders after the lock: %s",
                         strerror(-r));
        else
                xdev_debug(&ctx->log, "after the lock: %u holder(s) among %u processes (%.1f ms)",
                           c.holders, c.examined, xdev_now_ms() - t0);
}

static void *others_pass(void *data) {
        struct xdev_ctx *ctx = data;
        struct xdev_sweep_defer defer;
        bool go = true;

        while (go) {
                (void) pthread_mutex_lock(&others.lock);
                defer.n = 0;
                defer.has_departed = false;
                defer.all = false;
                if (others.n_defer > 0) {
                        defer = others.defer[0];
                        memmove(&others.defer[0], &others.defer[1],
                                --others.n_defer * sizeof others.defer[0]);
                } else if (others.has_departed) {
                        defer.has_departed = true;
                        defer.departed = others.departed;
                        others.has_departed = false;
                }
                others.again = false;
                (void) pthread_mutex_unlock(&others.lock);
                others_run(ctx, &defer);
                (void) pthread_mutex_lock(&others.lock);
                go = others.again || others.n_defer > 0 || others.has_departed;
                others.running = go;
                if (!go)
                        (void) pthread_cond_broadcast(&others.idle);
                (void) pthread_mutex_unlock(&others.lock);
        }
        return NULL;
}

/* Whether a run still to come reads the maps of UID's user namespaces.
 * Called with others.lock held. */
static bool others_has_departed(uid_t uid) {
        for (size_t i = 0; i < others.n_defer; i++)
                if (others.defer[i].has_departed && others.defer[i].departed == uid)
                        return true;
        return others.has_departed && others.departed == uid;
}

/* After a step that took grants off: the pass after the lock, apart, with
 * DEFER (copied). */
static void others_apart(struct xdev_ctx *ctx, const struct xdev_sweep_defer *defer) {
        bool start, full;

        (void) pthread_mutex_lock(&others.lock);
        full = defer->n > 0 && others.n_defer == OTHERS_DEFER_MAX;
        if (defer->n > 0 && !full)
                others.defer[others.n_defer++] = *defer;
        else if (defer->n == 0 && defer->has_departed && !others_has_departed(defer->departed)) {
                /* only the uid: queued while there is room, else kept for
                 * the first run that has it (a run of switches): the pass
                 * itself is not run here for it */
                if (others.n_defer < OTHERS_DEFER_MAX)
                        others.defer[others.n_defer++] = *defer;
                else {
                        others.has_departed = true;
                        others.departed = defer->departed;
                }
        }
        start = !others.running;
        others.running = true;
        others.again = !start;
        (void) pthread_mutex_unlock(&others.lock);
        if (full) /* a run of switches, each leaving some: this one here */
                others_run(ctx, defer);
        if (start && !run_apart(others_pass, ctx))
                (void) others_pass(ctx);
}

/* The watch on the input nodes and the console (doc/DESIGN.md §3.5.11)
 * runs in a thread of its own: a look it takes at a process reads that
 * process to its end under the state lock, which no step should wait for.
 * The loop tells it the holder after each step and has it watch the nodes
 * anew; a reload of the configuration waits until it is done acting. */
static struct {
        pthread_mutex_t lock; /* HAS, UID, NODES */
        pthread_mutex_t busy; /* held while the watch acts, and by a reload */
        int efd;              /* wakes the thread: -1, no watch */
        bool has, nodes;
        uid_t uid;
        struct xdev_watch *w;
} guard = { .lock = PTHREAD_MUTEX_INITIALIZER, .busy = PTHREAD_MUTEX_INITIALIZER, .efd = -1 };

/* What the loop told the watch: the holder, and the nodes watched anew. */
static void guard_heard(struct xdev_ctx *ctx) {
        uint64_t v;
        bool has, nodes;
        uid_t uid;
        int r;

        (void) !read(guard.efd, &v, sizeof v);
        (void) pthread_mutex_lock(&guard.lock);
        has = guard.has;
        uid = guard.uid;
        nodes = guard.nodes;
        guard.nodes = false;
        (void) pthread_mutex_unlock(&guard.lock);
        xdev_watch_holder(guard.w, has, uid);
        if (!nodes)
                return;
        r = xdev_watch_nodes(guard.w, ctx);
        if (r < 0)
                xdev_log(&ctx->log, LOG_ERR, "cannot watch the input nodes: %s", strerror(-r));
        else
                xdev_debug(&ctx->log, "watching %d input and console node(s)", r);
}

static void *guard_thread(void *data) {
        struct xdev_ctx *ctx = data;
        struct pollfd p[2] = { { .fd = xdev_watch_fd(guard.w), .events = POLLIN },
                               { .fd = guard.efd, .events = POLLIN } };

        for (;;) {
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        xdev_log(&ctx->log, LOG_ERR, "the watch on the input nodes stops: %s",
                                 strerror(errno));
                        return NULL;
                }
                (void) pthread_mutex_lock(&guard.busy);
                if (p[1].revents & POLLIN)
                        guard_heard(ctx);
                if (p[0].revents & POLLIN)
                        xdev_watch_read(guard.w, ctx);
                (void) pthread_mutex_unlock(&guard.busy);
        }
}

static void guard_start(struct xdev_ctx *ctx) {
        int r = xdev_watch_open(&guard.w, watch_console);

        if (r == 0) {
                guard.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                r = guard.efd < 0 ? -errno : run_apart(guard_thread, ctx) ? 0 : -EAGAIN;
        }
        if (r == 0)
                return;
        xdev_log(&ctx->log, LOG_WARNING,
                 "cannot watch the input nodes (fanotify: %s): a process that holds one where no "
                 "read of /proc shows it is not found",
                 strerror(-r));
        if (guard.efd >= 0)
                (void) close(guard.efd);
        guard.efd = -1;
        xdev_watch_free(guard.w);
        guard.w = NULL;
}

/* At the daemon's end: waits until the watch is done acting, and keeps
 * it from acting again (its thread ends with the process). */
static void guard_halt(void) {
        if (guard.efd >= 0)
                (void) pthread_mutex_lock(&guard.busy);
}

/* After a step: the holder it left, the nodes watched anew. */
static void guard_tell(bool has, uid_t uid) {
        uint64_t one = 1;

        if (guard.efd < 0)
                return;
        (void) pthread_mutex_lock(&guard.lock);
        guard.has = has;
        guard.uid = uid;
        guard.nodes = true;
        (void) pthread_mutex_unlock(&guard.lock);
        (void) !write(guard.efd, &one, sizeof one);
}

/* The table of processes by uid that makes a switch's sweep read the
 * departing user's processes only (doc/DESIGN.md §3.5.3); without it (no
 * CAP_NET_ADMIN, a pid namespace of its own) every sweep walks /proc. */
static struct xdev_proctab *procs_open(struct xdev_ctx *ctx, struct xdev_procsrc *src) {
        struct xdev_proctab *t = NULL;
        int r;

        if (getenv("XDEVICESD_NO_PROC_EVENTS")) /* the tests' and the benchmark's switch */
                r = -ECANCELED;
        else
                r = xdev_proctab_open(&t, 0, &ctx->log);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_NOTICE,
                         "no process events (%s): each switch reads every process's status",
                         strerror(-r));
                return NULL;
        }
        xdev_proctab_source(t, src);
        ctx->procs = src;
        return t;
}

/* Sets PFD to poll the process events while the daemon is IDLE and the
 * hold-off after the last reading is over; during the hold-off the events
 * wait in the queue, and *WAIT becomes the time left of it (returns true).
 * A busy machine so wakes the daemon once per PROCS_HOLDOFF_MS, a quiet
 * one never. */
static bool procs_poll(struct xdev_proctab *procs, struct pollfd *pfd, bool idle, double after,
                       int *wait) {
        double left = after - xdev_now_ms();

        pfd->fd = -1;
        if (!procs || !idle)
                return false;
        if (left <= 0) {
                pfd->fd = xdev_proctab_fd(procs);
                return false;
        }
        *wait = (int) left + 1;
        return true;
}

/* At a VT switch a stock Xorg opens its input devices again the moment it
 * has its VT back, which may be before the grant: the open fails and the
 * device stays off for good (doc/DESIGN.md §3.5.1). A change event for an
 * event node makes an X server's udev backend remove and add it anew: the
 * server on the VT in front opens it now that it is granted, but every
 * server in the background loses it. So only the nodes the holder's
 * display server does not hold are announced, once it stopped taking more,
 * and only while its VT is in graphics mode and in front (§3.10): a server
 * that reopened them (the patched Xorg, a stock one that won the race, a
 * compositor under xdevices-vt-run) gets none. The looks read the holder's
 * processes, outside the lock. Only root can write a uevent file, and the
 * helper that udev runs on it grants nobody but the holder. */

/* What the looks after a grant keep between them. */
struct looks {
        unsigned n;                         /* looks so far for this holder */
        size_t last;                        /* nodes the last look found missing */
        double first_at;                    /* when the first look was (ms) */
        struct xdev_follow_servers servers; /* as the last look saw them */
};

/* Writes the change events of the M nodes NODES; returns how many went. */
static unsigned announce_nodes(struct xdev_ctx *ctx, const dev_t *nodes, size_t m) {
        unsigned n = 0;

        for (size_t i = 0; i < m; i++) {
                int r = xdev_device_announce(nodes[i]);
                if (r == 0)
                        n++;
                else
                        xdev_log(&ctx->log, LOG_WARNING,
                                 "cannot announce input node %u:%u again: %s, ignoring",
                                 major(nodes[i]), minor(nodes[i]), strerror(-r));
        }
        return n;
}

/* One look at RES's holder (see above). Returns the ms after which to
 * look again, 0 when done, -EAGAIN when the VT in front changed: nothing
 * was announced and the next step decides. */
static int announce_look(struct xdev_ctx *ctx, const struct xdev_follow_result *res,
                         struct looks *l) {
        dev_t unheld[XDEV_FOLLOW_EVDEV_MAX];
        struct xdev_follow_servers servers;
        double t0 = xdev_now_ms(), t1;
        unsigned uid = (unsigned) res->holder, sent;
        bool text, settled;
        size_t m;
        int r;

        r = xdev_follow_unheld(ctx, res, unheld, &text, &servers);
        t1 = xdev_now_ms() - t0;
        if (r == -EAGAIN) {
                xdev_debug(&ctx->log, "the VT in front is no longer tty%d: nothing announced",
                           res->active_vt);
                return r;
        }
        if (r < 0) {
                xdev_log(
                        &ctx->log, LOG_WARNING,
                        "cannot tell which input nodes uid %u's server holds: %s; announcing none, ignoring",
                        uid, strerror(-r));
                return 0;
        }
        if (text) {
                xdev_debug(&ctx->log, "tty%d is in text mode: nothing to announce (%.1f ms)",
                           res->active_vt, t1);
                return 0;
        }
        m = (size_t) r;
        if (l->n == 0)
                l->first_at = t0;
        settled = l->n > 0 && m == l->last && xdev_follow_settled(&l->servers, &servers);
        if (m > 0 && !settled && t0 - l->first_at < LOOKS_PATIENCE_MS) {
                xdev_debug(
                        &ctx->log,
                        "uid %u's server on tty%d lacks %zu of %zu input node(s)%s; looking again (look %.1f ms)",
                        uid, res->active_vt, m, res->n_evdev,
                        l->n == 0 || m < l->last ? "" : " and is not done with its VT enter", t1);
                l->n++;
                l->last = m;
                l->servers = servers;
                return (int) announce_after_ms;
        }
        if (m == 0) {
                xdev_debug(
                        &ctx->log,
                        "uid %u's server on tty%d holds its input nodes: nothing announced (look %.1f ms)",
                        uid, res->active_vt, t1);
                return 0;
        }
        sent = announce_nodes(ctx, unheld, m);
        xdev_debug(
                &ctx->log,
                "uid %u's server on tty%d lacks %zu of %zu input node(s)%s; announced %u again (look %.1f ms, announce %.1f ms)",
                uid, res->active_vt, m, res->n_evdev, settled ? "" : " and was never seen done",
                sent, t1, xdev_now_ms() - t0 - t1);
        return 0;
}

/* What the daemon's loop keeps between its steps. */
struct daemon {
        struct xdev_ctx *ctx;
        const char *conf;
        bool named, debug;
        struct xdev_step_watch *watch;
        struct xdev_follow_self self;
        struct xdev_follow_result *res;
        struct pollfd pfds[P_LEADERS + XDEV_SESSIONS_MAX];
        size_t n_pfds;
        struct stat watched;
        int lockfd, sigfd, activefd, inofd, timerfd;
        int timeout; /* ms until the next step; 0: at once; -1: on an event */
        bool stop, enumerate;
        struct xdev_procsrc src;
        struct xdev_proctab *procs;
        double procs_after; /* no reading of the events before (ms) */
        bool announced;     /* the input nodes of ANNOUNCED_UID were announced */
        uid_t announced_uid;
        bool announce;      /* RES's holder is to be looked at at ANNOUNCE_AT */
        double announce_at; /* ms */
        struct looks looks;
};

/* Who the daemon is, and the daemon lock. Returns -1 when it may go on,
 * else its exit code. */
static int daemon_start(struct daemon *d) {
        struct xdev_ctx *ctx = d->ctx;
        struct xdev_proc_stat pst;

        d->res = calloc(1, sizeof *d->res);
        if (!d->res || xdev_proc_stat(d->self.pid, &pst) < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot start: %s",
                         d->res ? "cannot read /proc/self/stat" : "out of memory");
                return EXIT_FAILED;
        }
        d->self.start = pst.start;
        oom_protect(&ctx->log);
        d->lockfd = lock_daemon(ctx->statedir);
        if (d->lockfd == -EWOULDBLOCK) {
                xdev_log(&ctx->log, LOG_ERR,
                         "another xdevicesd is running (\"%s/daemon.lock\" is held)",
                         ctx->statedir);
                return EXIT_RUNNING;
        }
        if (d->lockfd < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot lock \"%s/daemon.lock\": %s", ctx->statedir,
                         strerror(-d->lockfd));
                return EXIT_FAILED;
        }
        return -1;
}

/* What the loop polls: signals, the VT in front, the state directory, the
 * sweeps' timer, the process events. Returns 0 or -1 (logged). */
static int daemon_open(struct daemon *d) {
        struct xdev_ctx *ctx = d->ctx;
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
            (d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot set up signals: %s", strerror(errno));
                return -1;
        }
        d->activefd = open(ACTIVE_VT_PATH, O_RDONLY | O_CLOEXEC);
        if (d->activefd < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot open \"%s\": %s (no virtual consoles?)",
                         ACTIVE_VT_PATH, strerror(errno));
                return -1;
        }
        d->inofd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        r = d->inofd < 0 ? -errno : state_watch(d->inofd, ctx->statedir, &d->watched);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot watch \"%s\": %s", ctx->statedir,
                         strerror(-r));
                return -1;
        }
        d->watch->state_watch_fd = d->inofd;
        xdev_step_watch_attach(d->watch, &d->self);
        d->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (d->timerfd < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot create a timer: %s", strerror(errno));
                return -1;
        }
        d->pfds[P_SIGNAL] = (struct pollfd) { .fd = d->sigfd, .events = POLLIN };
        d->pfds[P_ACTIVE] = (struct pollfd) { .fd = d->activefd, .events = POLLPRI | POLLERR };
        d->pfds[P_STATE] = (struct pollfd) { .fd = d->inofd, .events = POLLIN };
        d->pfds[P_TIMER] = (struct pollfd) { .fd = d->timerfd, .events = POLLIN };
        d->procs = procs_open(ctx, &d->src);
        d->pfds[P_PROCS] = (struct pollfd) { .fd = d->procs ? xdev_proctab_fd(d->procs) : -1,
                                             .events = POLLIN };
        d->n_pfds = P_LEADERS;
        return 0;
}

/* After a step that went through: its log line, the sweeps' timer, the
 * state directory (watched anew if it was removed), the new holder's input
 * nodes announced, the leaders to watch. */
static void daemon_stepped(struct daemon *d, double step) {
        struct xdev_follow_result *res = d->res;
        struct xdev_ctx *ctx = d->ctx;
        bool stale = false;
        int r;

        if (res->changed)
                xdev_log(
                        &ctx->log, LOG_INFO,
                        "tty%d in front: %s (%.1f ms: load %.1f, grant %.1f, sweep %.1f of %u processes)",
                        res->active_vt,
                        !res->has_holder ? "nobody holds"
                                : ctx->config_ok
                                ? "its session holds"
                                : "its session keeps what it held (the configuration is "
                                  "broken: nothing new is granted)",
                        step, d->watch->load, d->watch->grant, d->watch->sweep, res->examined);
        timer_arm(d->timerfd, res->sweep_check_ms);
        r = state_watch(d->inofd, ctx->statedir, &d->watched);
        if (r != 0)
                xdev_log(&ctx->log, r > 0 ? LOG_WARNING : LOG_ERR,
                         "the state directory \"%s\" was removed; %s%s", ctx->statedir,
                         r > 0 ? "watching the new one" : "cannot watch the new one: ",
                         r > 0 ? "" : strerror(-r));
        /* a new holder, whoever handed over (the udev helper may have,
         * between two steps), announced once it stayed in front */
        if (!res->has_holder) {
                d->announce = d->announced = false;
        } else if (res->handed_over || !d->announced || d->announced_uid != res->holder) {
                if (res->handed_over || !d->announce) {
                        d->announce_at = xdev_now_ms() + announce_after_ms;
                        d->looks.n = 0;
                }
                d->announce = true;
                d->announced = false;
        }
        guard_tell(res->has_holder, res->holder);
        d->enumerate = res->enumerate || (d->enumerate && !res->changed);
        d->n_pfds = leaders_watch(d->pfds, d->n_pfds, res, &stale);
        d->timeout = stale ? 0 : -1;
}

/* One step: the VT in front followed, its fd copies closed and its sweeps
 * finished apart. */
static void daemon_step(struct daemon *d) {
        struct xdev_ctx *ctx = d->ctx;
        double t0;
        int r;

        active_rearm(d->activefd);
        (void) state_events(d->inofd);
        t0 = xdev_now_ms();
        xdev_step_watch_start(d->watch);
        r = xdev_follow_update(ctx, &d->self, d->res);
        t0 = xdev_now_ms() - t0;
        close_apart(&d->res->bin);
        sweep_apart(ctx, d->res->waits);
        d->res->waits = NULL;
        if (r >= 0 && (d->res->changed || xdev_sweep_defer_any(&d->res->defer)))
                others_apart(ctx, &d->res->defer);
        if (r >= 0) {
                daemon_stepped(d, t0);
                return;
        }
        xdev_log(&ctx->log, LOG_ERR, "cannot follow the VT in front: %s; retrying", strerror(-r));
        d->timeout = RETRY_MS;
        d->announce = false; /* again after a step that works */
}

/* Idle after a handover: looks for the nodes the ledger lacked. */
static void daemon_enumerate(struct daemon *d) {
        struct xdev_ctx *ctx = d->ctx;
        double t0 = xdev_now_ms();
        int r;

        d->enumerate = false;
        r = xdev_follow_enumerate(ctx, &d->self);
        if (r == -EAGAIN) {
                d->timeout = 0; /* the switch first */
                return;
        }
        if (r < 0 && r != -ESRCH)
                xdev_log(&ctx->log, LOG_ERR, "cannot add the devices the handover lacked: %s",
                         strerror(-r));
        else
                xdev_debug(&ctx->log, "enumeration after the handover: %d node(s) added (%.1f ms)",
                           r < 0 ? 0 : r, xdev_now_ms() - t0);
        d->timeout = r == -ESRCH ? 0 : -1;
}

/* The N events poll() reported. */
static void daemon_events(struct daemon *d, int n) {
        struct pollfd *pfds = d->pfds;

        if (pfds[P_PROCS].revents & POLLIN) {
                /* kept short, so that a switch has little to read; then
                 * left for PROCS_HOLDOFF_MS */
                (void) xdev_proctab_drain(d->procs);
                d->procs_after = xdev_now_ms() + PROCS_HOLDOFF_MS;
                if (--n == 0)
                        return;
        }
        if (n == 1 && (pfds[P_STATE].revents & POLLIN) && !state_events(d->inofd))
                return; /* not the state: timeout (and a pending enumeration) as before */
        d->timeout = 0; /* look again */
        if (pfds[P_TIMER].revents & POLLIN) {
                uint64_t expirations;
                (void) !read(d->timerfd, &expirations, sizeof expirations);
        }
        if (pfds[P_SIGNAL].revents & POLLIN) {
                struct signalfd_siginfo si;
                while (read(d->sigfd, &si, sizeof si) == sizeof si) {
                        if (si.ssi_signo != SIGHUP) {
                                d->stop = true;
                                continue;
                        }
                        xdev_log(&d->ctx->log, LOG_INFO, "reloading the configuration");
                        others_wait_idle();
                        (void) pthread_mutex_lock(&guard.busy);
                        (void) xdev_ctx_load_config(d->ctx, d->conf, d->named, d->debug);
                        (void) pthread_mutex_unlock(&guard.busy);
                }
        }
}

/* WAIT (ms, -1 for ever) shortened so that poll returns by AT (ms). */
static int wait_until(int wait, double at) {
        double left = at - xdev_now_ms();
        int ms = left <= 0 ? 0 : (int) left + 1;

        return wait < 0 || ms < wait ? ms : wait;
}

/* The holder stayed in front: a look at its server's nodes, another
 * later, or done. When its VT left the front meanwhile, the next step
 * decides (the wake-up of that switch is on its way). */
static void daemon_announce(struct daemon *d) {
        int r = announce_look(d->ctx, d->res, &d->looks);

        if (r > 0) {
                d->announce_at = xdev_now_ms() + r;
                return;
        }
        d->announce = false;
        d->announced = r == 0;
        d->announced_uid = d->res->holder;
}

/* Steps, then waits for what makes the next one, until a signal stops it.
 * Returns 0 or -1 (logged). */
static int daemon_loop(struct daemon *d) {
        while (!d->stop) {
                if (d->timeout >= 0)
                        daemon_step(d);
                if (d->timeout == 0)
                        continue;
                int wait = d->timeout < 0 && d->enumerate ? ENUMERATE_IDLE_MS : d->timeout;
                bool held = procs_poll(d->procs, &d->pfds[P_PROCS], d->timeout < 0 && !d->enumerate,
                                       d->procs_after, &wait);
                if (d->announce)
                        wait = wait_until(wait, d->announce_at);
                int r = poll(d->pfds, d->n_pfds, wait);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        xdev_log(&d->ctx->log, LOG_ERR, "poll: %s", strerror(errno));
                        return -1;
                }
                if (r == 0 && d->announce && xdev_now_ms() >= d->announce_at)
                        daemon_announce(d);
                else if (r == 0 && d->enumerate && d->timeout < 0)
                        daemon_enumerate(d);
                else if (r > 0 || !held) /* else the hold-off is over: poll again */
                        daemon_events(d, r);
        }
        return 0;
}

static void daemon_close(struct daemon *d) {
        int fds[] = { d->timerfd, d->inofd, d->activefd, d->sigfd, d->lockfd };

        d->ctx->procs = NULL;
        xdev_proctab_free(d->procs);
        for (size_t i = P_LEADERS; i < d->n_pfds; i++)
                (void) close(d->pfds[i].fd);
        for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
                if (fds[i] >= 0)
                        (void) close(fds[i]);
        free(d->res);
}

static int run(struct xdev_ctx *ctx, const struct xdev_cli *cli, struct xdev_step_watch *watch) {
        struct daemon d = { .ctx = ctx,
                            .conf = cli->conf,
                            .named = cli->named,
                            .debug = cli->debug,
                            .watch = watch,
                            .self = { .pid = getpid() },
                            .n_pfds = P_LEADERS,
                            .lockfd = -1,
                            .sigfd = -1,
                            .activefd = -1,
                            .inofd = -1,
                            .timerfd = -1 };
        int ret = daemon_start(&d);

        if (ret < 0 && daemon_open(&d) == 0) {
                xdev_log(&ctx->log, LOG_INFO, "following the VT in front (pid %d)",
                         (int) d.self.pid);
                guard_start(ctx);
                ret = EXIT_FAILED;
                int loop = daemon_loop(&d);
                /* the pass after the lock and the watch act on CTX from
                 * threads of their own: done before CTX goes */
                others_wait_idle();
                guard_halt();
                if (loop == 0) {
                        /* A clean stop: the login-time rule resumes. */
                        if (xdev_follow_update(ctx, NULL, NULL) < 0)
                                xdev_log(
                                        &ctx->log, LOG_ERR,
                                        "cannot clear the follow mark in the state; it stays in force");
                        xdev_log(&ctx->log, LOG_INFO, "stopped");
                        ret = EXIT_OK;
                }
        } else if (ret < 0)
                ret = EXIT_FAILED;
        daemon_close(&d);
        return ret;
}

/* "MS" or "MIN-MAX", each at most GRANT_DELAY_MAX_MS, MIN <= MAX. */
static int parse_delay(const char *s, unsigned *ret_min, unsigned *ret_max) {
        char buf[32];
        char *dash;
        uint64_t lo, hi;

        if (strlen(s) >= sizeof buf)
                return -EINVAL;
        strcpy(buf, s);
        dash = strchr(buf, '-');
        if (dash)
                *dash = '\0';
        if (xdev_parse_uint(buf, GRANT_DELAY_MAX_MS, &lo) < 0)
                return -EINVAL;
        hi = lo;
        if (dash && (xdev_parse_uint(dash + 1, GRANT_DELAY_MAX_MS, &hi) < 0 || hi < lo))
                return -EINVAL;
        *ret_min = (unsigned) lo;
        *ret_max = (unsigned) hi;
        return 0;
}

/* --test-grant-delay=MS[-MS]. Returns 0, or -EINVAL (said on stderr). */
static int parse_grant_delay(const char *s, unsigned *ret_min, unsigned *ret_max) {
        if (parse_delay(s, ret_min, ret_max) == 0)
                return 0;
        fprintf(stderr, "xdevicesd: --test-grant-delay takes MS or MIN-MAX, at most %d ms\n",
                GRANT_DELAY_MAX_MS);
        return -EINVAL;
}

/* --test-announce-after=MS. Returns 0, or -EINVAL (said on stderr). */
static int parse_announce_after(const char *s) {
        uint64_t ms;

        if (xdev_parse_uint(s, ANNOUNCE_AFTER_MAX_MS, &ms) < 0) {
                fprintf(stderr, "xdevicesd: --test-announce-after takes MS, at most %d\n",
                        ANNOUNCE_AFTER_MAX_MS);
                return -EINVAL;
        }
        announce_after_ms = (unsigned) ms;
        return 0;
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                XDEV_CLI_OPTIONS,
                { "stderr", no_argument, NULL, 's' },
                { "test-grant-delay", required_argument, NULL, 'D' },
                { "test-announce-after", required_argument, NULL, 'A' },
                { "test-watch-console", no_argument, NULL, 'W' },
                {},
        };
        struct xdev_cli cli = { .prog = "xdevicesd", .usage = usage, .conf = XDEV_DEFAULT_CONF };
        unsigned delay_min = 0, delay_max = 0;
        struct xdev_step_watch watch;
        struct xdev_ctx ctx;
        int c, ret;

        while ((c = getopt_long(argc, argv, XDEV_CLI_SHORT "s", opts, NULL)) != -1) {
                switch (c) {
                case 's':
                        log_stderr = true;
                        break;
                case 'D':
                        if (parse_grant_delay(optarg, &delay_min, &delay_max) < 0)
                                return EXIT_USAGE;
                        break;
                case 'A':
                        if (parse_announce_after(optarg) < 0)
                                return EXIT_USAGE;
                        break;
                case 'W':
                        watch_console = true;
                        break;
                default:
                        ret = xdev_cli_option(&cli, c, optarg);
                        if (ret >= 0)
                                return ret;
                }
        }
        if (optind != argc)
                return xdev_cli_usage_error(&cli, "unexpected operand \"%s\"", argv[optind]);
        ret = xdev_cli_need_root(&cli);
        if (ret != EXIT_OK)
                return ret;
        log_stderr = log_stderr || isatty(STDERR_FILENO);
        openlog("xdevicesd", LOG_PID, LOG_AUTHPRIV);

        xdev_ctx_init(&ctx);
        ctx.log = (struct xdev_log) { .fn = log_sink };
        ctx.logindefs_memo = &logindefs_memo;
        watch = (struct xdev_step_watch) { .state_watch_fd = -1,
                                           .delay_min_ms = delay_min,
                                           .delay_max_ms = delay_max,
                                           .log = &ctx.log };
        if (delay_max > 0)
                xdev_log(&ctx.log, LOG_WARNING,
                         "test knob: each new holder's grant is held back %u-%u ms", delay_min,
                         delay_max);
        /* as xdevices and the module: a --conf file must exist, and a
         * daemon on a broken config would only keep what is granted */
        if (xdev_ctx_load_config(&ctx, cli.conf, cli.named, cli.debug) < 0) {
                xdev_log(&ctx.log, LOG_ERR,
                         "xdevicesd does not start on a broken configuration; fix it (xdevices "
                         "check) and start it again");
                ret = EXIT_FAILED;
        } else if (stands_down(&ctx))
                ret = EXIT_LOGIND;
        else
                ret = run(&ctx, &cli, &watch);
        xdev_ctx_done(&ctx);
        return ret;
}
