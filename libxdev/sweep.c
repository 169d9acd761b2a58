/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc sweeper: finds the processes that still hold a node open after
 * its grant was taken back, and revokes, demotes or terminates them as its
 * options say. Which nodes, whose processes and with which options is the
 * policy's (linger.c).
 *
 * Rules this file keeps:
 *  1. A process is identified by a pidfd taken before it is checked; every
 *     action goes through that pidfd (signals) or an fd copied through it
 *     (ioctls), so a reused pid is never hit.
 *  2. What an fd is comes from the open file itself (stat of the /proc magic
 *     link, then fstat of the copy): char device, class major, rdev. Nothing
 *     a user names or links is followed.
 *  3. Processes of the current holder are never touched; after a handover
 *     only processes with the departing uid as real, effective, saved or fs
 *     uid are (a setuid program it started included); root's never.
 *  4. Bounded: a fixed number of graceful terminations, the grace period
 *     capped, at most three passes. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/kcmp.h>
#include <linux/nsfs.h>
#include <xf86drm.h>

#include "access.h"
#include "drmdev.h"
#include "evdev.h"
#include "inflight.h"
#include "procfs.h"
#include "sweep.h"
#include "uring.h"

#define FDS_PER_PROC_MAX 64
#define PASSES_MAX 3
#define KILL_WAIT_MS 1000
#define KTHREADD_PID 2
/* Unix sockets of one process whose queues hold files, looked into by
 * the pass after the lock (§3.5.12); past it, the rest is unknown. */
#define SOCKS_PER_PROC_MAX 8
/* Sockets whose fdinfo count a pass remembers (a direct-mapped table by
 * inode; a power of two). */
#define SOCK_MEMO 256
/* How long a peek at one queue may take (ms). */
#define INFLIGHT_PEEK_MS 250
#define URING_TRIES 3               /* reads of a ring's fdinfo whose lock is held */
#define URING_RETRY_NS 200000       /* between two */
#define PF_KTHREAD_FLAG 0x00200000u /* PF_KTHREAD, include/linux/sched.h */
/* Lines of PID/maps that count one to the scan budget: a line costs 0.1 to
 * 0.4 us to read (a file's path is the dearer), an fd entry about 4 us. */
#define MAPS_LINES_PER_ENTRY 16
/* How long a sweep waits for one maps read, and for all of its reads that
 * did not come back in time; once those have taken MAPS_WAIT_ALL_MS, each
 * read gets MAPS_WAIT_LAST_MS (doc/DESIGN.md §3.5.4). A read of a process
 * whose map lock nobody keeps takes well under a millisecond on a host
 * and a few under TCG. */
#define MAPS_WAIT_MS 250
#define MAPS_WAIT_ALL_MS 1000
#define MAPS_WAIT_LAST_MS 20

static int pidfd_open(pid_t pid) {
        return (int) syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_getfd(int pidfd, int fd) {
        return (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

static int pidfd_signal(int pidfd, int sig) {
        return (int) syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static uint64_t now_ms(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* A ring whose files no scan lists, though P maps it (doc/DESIGN.md
 * §3.5.4): its fd closed (IORING_REGISTER_RING_FDS lets a process go on
 * submitting by index), more rings than are tracked, or a PID/maps that
 * could not be read. */
enum ring_gap { RING_GAP_NONE, RING_GAP_NO_FD, RING_GAP_TOO_MANY, RING_GAP_UNREAD };

struct proc {
        pid_t pid;
        uid_t ruid, euid, suid, fsuid;
        char comm[17];
        int fds[FDS_PER_PROC_MAX];
        size_t tgt[FDS_PER_PROC_MAX];
        size_t n_fds;
        pid_t hidden_tid; /* a thread with its own fd table holds a target */
        size_t hidden_tgt;
        int uring_fd; /* an io_uring with a target among its registered files */
        size_t uring_tgt;
        int uring_unlisted; /* an io_uring whose files the kernel did not list, or -1 */
        unsigned cost;      /* entries read, threads compared: XDEV_SWEEP_SCAN_BUDGET */
        bool over_budget;   /* not read to the end: taken for unreachable */
        /* The pass after the lock took an input fd revoked before off its
         * list (proc_keep_own). */
        bool stale;
        /* The rings P maps (sweep_reads_maps), bit I of RINGS_LISTED set once
         * an fd of ring I was found and its files listed; what is left is a
         * ring no scan reads (RING_GAP). */
        struct xdev_uring_mapped rings;
        uint64_t rings_listed;
        int maps_error; /* PID/maps could not be read: -errno, else 0 */
        bool maps_slow; /* a read of PID/maps did not come back in time: the
                         * scan again after the pin waits MAPS_WAIT_LAST_MS */
        enum ring_gap ring_gap;
        uint64_t ring_gap_ino;
        /* Its unix sockets whose queues hold files (the pass after the
         * lock's, sock_note), each to be looked into once P is pinned;
         * more than SOCKS_PER_PROC_MAX: SOCKS_OVER. */
        int socks[SOCKS_PER_PROC_MAX];
        ino_t sock_ino[SOCKS_PER_PROC_MAX];
        size_t n_socks;
        bool socks_over;
        /* What a look into them found (inflight_look): a socket with a
         * target in flight, usable, or -1; a queue that could not be read,
         * and why (NULL: none). */
        int inflight_fd;
        size_t inflight_tgt;
        int inflight_unread_fd;
        const char *inflight_why;
};

struct victim {
        int pidfd;
        pid_t pid;
        uint64_t give_up; /* 0: sent SIGTERM; else sent SIGKILL, waited for until then */
        char comm[17];
        char node[64];
};

struct xdev_sweep {
        const struct xdev_sweep_target *targets;
        size_t n_targets;
        const struct xdev_sweep_opts *opts;
        const struct xdev_log *log;
        struct xdev_sweep_counts *counts;
        struct victim victims[XDEV_SWEEP_GRACEFUL_MAX];
        size_t n_victims;
        unsigned pass;
        unsigned spent;    /* entries read in all (XDEV_SWEEP_LOCKED_BUDGET) */
        uint64_t deadline; /* SIGKILL to the victims still there */
        unsigned grace_ms; /* for messages */
        /* its maps reads (MAPS: &OWN_MAPS, writable through a const sweep) */
        struct sweep_maps {
                struct xdev_uring_maps_reader reader; /* the reading task's stack */
                unsigned waited_ms;                   /* spent on reads given up */
        } own_maps, *maps;
        /* what a pass read of sockets' fdinfo (sock_note), by inode: a
         * socket many processes hold (one inherited from their parent) is
         * read once a pass (MEMO: &OWN_MEMO, writable through a const
         * sweep) */
        struct sock_memo {
                ino_t ino;
                int count;
        } own_memo[SOCK_MEMO], *memo;
        /* a sweep left to finish after the lock: its own copies */
        struct xdev_sweep_opts own_opts;
        struct xdev_sweep_counts own_counts;
        struct xdev_sweep_target *own_targets;
};

/* Real, effective, saved and fs uid from PID/status. */
static int proc_uids(int procfd, struct proc *p) {
        struct xdev_proc_status st;
        int r = xdev_proc_status_read(procfd, p->pid, &st);

        if (r < 0)
                return r;
        p->ruid = st.uid[0];
        p->euid = st.uid[1];
        p->suid = st.uid[2];
        p->fsuid = st.uid[3];
        return 0;
}

static bool proc_has_uid(const struct proc *p, uid_t uid) {
        return p->ruid == uid || p->euid == uid || p->suid == uid || p->fsuid == uid;
}

/* comm is chosen by the process: keep printable ASCII only. */
static void proc_comm(int procfd, pid_t pid, char *buf, size_t size) {
        char path[64];
        int n;

        (void) snprintf(path, sizeof path, "%d/comm", (int) pid);
        n = xdev_read_small(procfd, path, buf, size);
        if (n <= 0) {
                (void) snprintf(buf, size, "?");
                return;
        }
        for (char *c = buf; *c; c++) {
                if (*c == '\n') {
                        *c = '\0';
                        break;
                }
                if (*c < 0x20 || *c > 0x7e || *c == '"' || *c == '\\')
                        *c = '?';
        }
}

static ssize_t target_match(const struct xdev_sweep *s, const struct stat *st) {
        if (!S_ISCHR(st->st_mode))
                return -1;
        for (size_t i = 0; i < s->n_targets; i++)
                if (st->st_rdev == s->targets[i].rdev &&
                    major(st->st_rdev) == xdev_class_major(s->targets[i].class))
                        return (ssize_t) i;
        return -1;
}

/* A sweep whose caller reads what it leaves after the lock (past the
 * list's room, every process of the uid). Not kill-user's at a logout,
 * which ends every process of the user unread. */
static bool sweep_defers(const struct xdev_sweep *s) {
        const struct xdev_sweep_opts *o = s->opts;
        return o->defer && o->has_only && !o->report_only &&
                !(o->policy == XDEV_LINGER_KILL_USER && !o->in_session) &&
                (o->defer->n == 0 || o->defer->uid == o->only_uid);
}

/* How much of one process the sweep reads: the scan budget, and, where
 * the rest is read after the lock, no more than is left of the sweep's
 * own (XDEV_SWEEP_LOCKED_BUDGET). */
static unsigned scan_budget(const struct xdev_sweep *s) {
        unsigned b = s->opts->scan_budget ? s->opts->scan_budget : XDEV_SWEEP_SCAN_BUDGET;
        if (sweep_defers(s)) {
                unsigned left = s->spent < XDEV_SWEEP_LOCKED_BUDGET
                        ? XDEV_SWEEP_LOCKED_BUDGET - s->spent
                        : 0;
                if (left < b)
                        b = left;
        }
        return b;
}

/* Whether P runs in a user namespace OWNER made, or in one under such a
 * namespace: a subordinate uid of OWNER's (doc/DESIGN.md §3.5.10). Ours
 * is nobody's (not pid 1's: in a container that one may be out of reach),
 * and the walk up ends at it (NS_GET_PARENT is refused past it). */
static bool proc_in_userns_of(int procfd, const struct proc *p, uid_t owner) {
        struct stat st, own;
        char path[48];
        int fd;

        (void) snprintf(path, sizeof path, "%d/ns/user", (int) p->pid);
        if (fstatat(procfd, path, &st, 0) < 0 || fstatat(procfd, "self/ns/user", &own, 0) < 0 ||
            (st.st_dev == own.st_dev && st.st_ino == own.st_ino))
                return false;
        fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        /* the kernel nests user namespaces 32 deep at most */
        for (int depth = 0; fd >= 0 && depth < 33; depth++) {
                uid_t u;
                int parent;
                if (ioctl(fd, NS_GET_OWNER_UID, &u) == 0 && u == owner) {
                        (void) close(fd);
                        return true;
                }
                parent = ioctl(fd, NS_GET_PARENT);
                (void) close(fd);
                fd = parent; /* EPERM at the initial one */
        }
        if (fd >= 0)
                (void) close(fd);
        return false;
}

/* Whether the sweep reads P's maps for rings with no fd left: in a sweep
 * of one departing uid's processes, in the pass after the lock for a
 * process in a user namespace the departing uid made (NS_OWNER), and in
 * the watch's look at a process that touched a node (ALL_MAPS). Not for
 * other users' processes in that pass (they lost no grant, and a ring
 * without an fd is no sign of a hold), nor in a look that acts on nothing
 * (FD_RINGS_ONLY). */
static bool sweep_reads_maps(const struct xdev_sweep *s, int procfd, const struct proc *p) {
        const struct xdev_sweep_opts *o = s->opts;
        if (o->fd_rings_only)
                return false;
        if (o->has_only && !o->others)
                return true;
        return o->others &&
                (o->all_maps || (o->has_ns_owner && proc_in_userns_of(procfd, p, o->ns_owner)));
}

/* The rings P maps, read before its fd tables (rings made after this read
 * are not looked for, as a file opened after the scan is not). Every
 * MAPS_LINES_PER_ENTRY lines count one to P's scan budget. A read that
 * does not come back in time (MAPS_WAIT_MS) leaves the map unread. */
static void proc_read_maps(const struct xdev_sweep *s, int procfd, struct proc *p) {
        unsigned budget = scan_budget(s);
        size_t lines = 0, max = budget > p->cost ? (size_t) (budget - p->cost) : 0;
        char path[64];
        int fd, r;

        (void) snprintf(path, sizeof path, "%d/maps", (int) p->pid);
        fd = openat(procfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
                /* gone: it holds nothing */
                if (errno != ENOENT && errno != ESRCH)
                        p->maps_error = -errno;
                return;
        }
        unsigned spent = s->maps->waited_ms;
        unsigned wait = spent >= MAPS_WAIT_ALL_MS         ? MAPS_WAIT_LAST_MS
                : MAPS_WAIT_ALL_MS - spent < MAPS_WAIT_MS ? MAPS_WAIT_ALL_MS - spent
                                                          : MAPS_WAIT_MS;
        if (wait < MAPS_WAIT_LAST_MS || p->maps_slow)
                wait = MAPS_WAIT_LAST_MS;
        r = xdev_uring_maps_read_within(&s->maps->reader, fd, max * MAPS_LINES_PER_ENTRY, wait,
                                        &lines, &p->rings);
        if (r == -ETIMEDOUT) {
                s->maps->waited_ms += wait;
                p->maps_slow = true;
        }
        p->cost += (unsigned) ((lines + MAPS_LINES_PER_ENTRY - 1) / MAPS_LINES_PER_ENTRY);
        if (r == -E2BIG)
                p->over_budget = true;
        else if (r < 0 && r != -ESRCH)
                p->maps_error = r;
}

/* Notes that the files of ring DEV:INO, one P maps, were listed. */
static void proc_ring_listed(struct proc *p, dev_t dev, uint64_t ino) {
        for (size_t i = 0; i < p->rings.n; i++)
                if (p->rings.dev[i] == dev && p->rings.ino[i] == ino)
                        p->rings_listed |= UINT64_C(1) << i;
}

/* After the fd tables: a ring P maps whose files no fd let the sweep list.
 * Only when the scan went to its end: one that stopped early (over the
 * budget, at a ring or a thread that holds, at too many fds) makes P
 * unreachable already, and left rings unread. */
static void proc_rings_check(struct proc *p) {
        if (p->maps_error < 0) {
                p->ring_gap = RING_GAP_UNREAD;
                return;
        }
        if (p->over_budget || p->hidden_tid != 0 || p->uring_fd >= 0 || p->uring_unlisted >= 0 ||
            p->n_fds >= FDS_PER_PROC_MAX)
                return;
        if (p->rings.overflow) {
                p->ring_gap = RING_GAP_TOO_MANY;
                return;
        }
        for (size_t i = 0; i < p->rings.n; i++)
                if (!(p->rings_listed & (UINT64_C(1) << i))) {
                        p->ring_gap = RING_GAP_NO_FD;
                        p->ring_gap_ino = p->rings.ino[i];
                        return;
                }
}

/* An io_uring keeps registered files without an fd for them. Its fdinfo
 * lists them ("%5u: event2", or the whole path on newer kernels) while its
 * lock is free; a target's path there (its name, from a kernel that prints
 * no path) is taken as the target. The fdinfo
 * is read to its end, however long (uring.c); each listed file counts to
 * P's scan budget, and past the budget the reading stops (P->over_budget).
 * Returns the target index or -1. */
static ssize_t uring_match(const struct xdev_sweep *s, int procfd, struct proc *p,
                           const char *fdname, dev_t dev) {
        const char *paths[XDEV_SWEEP_TARGETS_MAX];
        size_t found = 0;
        uint64_t ino = 0;
        char path[96];
        int fd, r;

        for (size_t t = 0; t < s->n_targets && t < XDEV_SWEEP_TARGETS_MAX; t++)
                paths[t] = s->targets[t].path;
        (void) snprintf(path, sizeof path, "%d/fdinfo/%s", (int) p->pid, fdname);
        /* a ring whose lock was held lists nothing: read it again a few
         * times (a submission holds it for microseconds), then take it for
         * unknown, as a process over the budget is */
        for (int tries = 0;; tries++) {
                fd = openat(procfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0)
                        return -1;
                r = xdev_uring_fdinfo_find(fd, paths, s->n_targets, scan_budget(s), &p->cost,
                                           &found, &ino);
                (void) close(fd);
                if (r != -EAGAIN || tries == URING_TRIES - 1)
                        break;
                (void) nanosleep(&(struct timespec) { 0, URING_RETRY_NS }, NULL);
        }
        if (r == -E2BIG)
                p->over_budget = true;
        /* the ring whose files were listed is the one the fdinfo names,
         * whatever the fd number named when it was looked at */
        if (r >= 0)
                proc_ring_listed(p, dev, ino);
        if (r == -EAGAIN && p->uring_unlisted < 0)
                p->uring_unlisted = atoi(fdname);
        return r > 0 ? (ssize_t) found : -1;
}

/* The pass after the lock: P's socket fd NAME (ST) is noted when its
 * fdinfo says that its queue holds files. One read each, to P's budget. */
static void sock_note(const struct xdev_sweep *s, int procfd, struct proc *p, const char *name,
                      const struct stat *st) {
        struct sock_memo *m = &s->memo[st->st_ino & (SOCK_MEMO - 1)];
        char path[64];
        int fd, n;

        if (!s->opts->others || p->socks_over || ++p->cost > scan_budget(s))
                return;
        if (m->ino != st->st_ino || st->st_ino == 0) {
                (void) snprintf(path, sizeof path, "%d/fdinfo/%s", (int) p->pid, name);
                fd = openat(procfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0)
                        return;
                n = xdev_inflight_count(fd);
                (void) close(fd);
                *m = (struct sock_memo) { st->st_ino, n };
        }
        n = m->count;
        if (n <= 0)
                return;
        if (p->n_socks == SOCKS_PER_PROC_MAX) {
                p->socks_over = true;
                return;
        }
        p->socks[p->n_socks] = atoi(name);
        p->sock_ino[p->n_socks++] = st->st_ino;
}

/* Appends to FDS/TGT (up to FDS_PER_PROC_MAX) the fds listed in the /proc
 * directory PATH whose open file is one of the targets; notes in P an
 * io_uring holding a target. Each entry counts to P's scan budget. */
static int fd_dir_scan(const struct xdev_sweep *s, int procfd, const char *path, struct proc *p,
                       int *fds, size_t *tgt, size_t *n) {
        struct xdev_fddir d;
        const char *name;
        uint64_t num;
        int r;

        r = xdev_fddir_open(procfd, path, &d);
        if (r < 0)
                return r;
        while (!p->over_budget && *n < FDS_PER_PROC_MAX &&
               xdev_fddir_next(&d, scan_budget(s) - p->cost + 1, &num, &name)) {
                struct stat st;
                ssize_t t;
                if (++p->cost > scan_budget(s)) {
                        p->over_budget = true;
                        break;
                }
                /* Follows the magic link to the open file itself, not a path. */
                if (fstatat(d.fd, name, &st, 0) < 0)
                        continue;
                t = target_match(s, &st);
                if (S_ISSOCK(st.st_mode) && fds == p->fds)
                        sock_note(s, procfd, p, name, &st);
                /* one ring found holding, or unlisted, settles it */
                if (t < 0 && (st.st_mode & S_IFMT) == 0 && p->uring_fd < 0 &&
                    p->uring_unlisted < 0) {
                        /* anonymous inodes have no file type: is it an io_uring? */
                        char link[32];
                        ssize_t l = readlinkat(d.fd, name, link, sizeof link - 1);
                        if (l > 0) {
                                link[l] = '\0';
                                if (strcmp(link, "anon_inode:[io_uring]") == 0) {
                                        ssize_t u = uring_match(s, procfd, p, name, st.st_dev);
                                        if (u >= 0) {
                                                p->uring_fd = (int) num;
                                                p->uring_tgt = (size_t) u;
                                        }
                                }
                        }
                }
                if (t < 0)
                        continue;
                fds[*n] = (int) num;
                tgt[*n] = (size_t) t;
                (*n)++;
        }
        xdev_fddir_close(&d);
        return 0;
}

static bool proc_has_fd(const struct proc *p, int fd, size_t tgt) {
        for (size_t i = 0; i < p->n_fds; i++)
                if (p->fds[i] == fd && p->tgt[i] == tgt)
                        return true;
        return false;
}

/* Fills P->fds with the fds of PID whose open file is one of the targets.
 * PID/fd shows the leader's fd table only: a thread that unshared its own
 * (unshare(CLONE_FILES)) is found through PID/task, and noted in
 * P->hidden_tid since pidfd_getfd cannot reach its fds. */
static int proc_scan_fds(const struct xdev_sweep *s, int procfd, struct proc *p) {
        char path[64];
        uint64_t tid;
        DIR *d;
        int r;

        p->n_fds = 0;
        p->hidden_tid = 0;
        p->uring_fd = -1;
        p->uring_unlisted = -1;
        p->cost = 0;
        p->over_budget = false;
        p->rings = (struct xdev_uring_mapped) { .n = 0 };
        p->rings_listed = 0;
        p->maps_error = 0;
        p->ring_gap = RING_GAP_NONE;
        p->n_socks = 0;
        p->socks_over = false;
        p->inflight_fd = -1;
        p->inflight_unread_fd = -1;
        p->inflight_why = NULL;
        if (sweep_reads_maps(s, procfd, p))
                proc_read_maps(s, procfd, p);
        (void) snprintf(path, sizeof path, "%d/fd", (int) p->pid);
        r = fd_dir_scan(s, procfd, path, p, p->fds, p->tgt, &p->n_fds);
        if (r < 0)
                return r;
        (void) snprintf(path, sizeof path, "%d/task", (int) p->pid);
        if (xdev_numdir_open(procfd, path, &d) < 0) {
                proc_rings_check(p);
                return 0;
        }
        while (!p->over_budget && p->hidden_tid == 0 && xdev_numdir_next(d, &tid, NULL)) {
                int tfds[FDS_PER_PROC_MAX];
                size_t ttgt[FDS_PER_PROC_MAX], tn = 0;
                if ((pid_t) tid == p->pid)
                        continue;
                if (++p->cost > scan_budget(s)) {
                        p->over_budget = true;
                        break;
                }
                /* Threads that share the leader's table (nearly all) were
                 * seen already: scanning each again costs threads x fds. */
                if (syscall(SYS_kcmp, p->pid, (pid_t) tid, KCMP_FILES, 0, 0) == 0)
                        continue;
                (void) snprintf(path, sizeof path, "%d/task/%d/fd", (int) p->pid, (int) tid);
                if (fd_dir_scan(s, procfd, path, p, tfds, ttgt, &tn) < 0)
                        continue;
                for (size_t i = 0; i < tn; i++)
                        if (!proc_has_fd(p, tfds[i], ttgt[i])) {
                                p->hidden_tid = (pid_t) tid;
                                p->hidden_tgt = ttgt[i];
                                break;
                        }
        }
        (void) closedir(d);
        proc_rings_check(p);
        return 0;
}

/* P holds a target, or may: it was not read to the end. */
static bool proc_holds(const struct proc *p) {
        return p->n_fds > 0 || p->hidden_tid != 0 || p->uring_fd >= 0 || p->uring_unlisted >= 0 ||
                p->over_budget || p->ring_gap != RING_GAP_NONE || p->inflight_fd >= 0 ||
                p->inflight_why;
}

/* P has sockets whose queues hold files, not looked into yet. */
static bool proc_may_hold_in_flight(const struct proc *p) {
        return p->n_socks > 0 || p->socks_over;
}

/* A uid of a system account (nobody among them), up to MAX: a daemon
 * root started. */
static bool uid_is_a_system(uid_t u, uid_t max) {
        return u <= max || u == XDEV_NOBODY_UID;
}

bool xdev_sweep_uids_free(const uid_t uid[4], uid_t system_uid_max, const uid_t *spare,
                          size_t n_spare) {
        if (uid[0] == 0 && uid[1] == 0 && uid[2] == 0)
                return true;
        if (uid_is_a_system(uid[0], system_uid_max) && uid_is_a_system(uid[1], system_uid_max) &&
            uid_is_a_system(uid[2], system_uid_max))
                return true;
        for (size_t i = 0; i < n_spare; i++)
                for (size_t k = 0; k < 4; k++)
                        if (uid[k] == spare[i])
                                return true;
        return false;
}

/* The pass after the lock passes over root's and system accounts' daemons
 * (a nobody daemon reading hotkeys) and the processes of the uids in
 * SPARE (the holder's). It looks at the rest, other users' (with a
 * session in the background or none) and subordinate uids', and leaves
 * each of them what is cut off already and what it could open with its
 * own rights (proc_keep_own). */
static bool proc_is_spared(const struct xdev_sweep_opts *o, const struct proc *p) {
        const uid_t uid[4] = { p->ruid, p->euid, p->suid, p->fsuid };
        return xdev_sweep_uids_free(uid, o->system_uid_max, o->spare, o->n_spare);
}

static bool proc_is_exempt(const struct xdev_sweep *s, const struct proc *p) {
        const struct xdev_sweep_opts *o = s->opts;
        /* root's daemon that borrowed the user's fsuid (a file server at
         * her request) is root's; a set-user-ID program of hers has her
         * real or saved uid */
        if (p->ruid == 0 && p->euid == 0 && p->suid == 0)
                return true;
        if (o->others)
                return proc_is_spared(o, p);
        if (o->has_only) /* a setuid-root program of the user's is not exempt */
                return o->only_uid == 0 || !proc_has_uid(p, o->only_uid) ||
                        (o->has_keep && o->keep_uid == o->only_uid);
        if (p->ruid == 0 || p->euid == 0)
                return true;
        if (o->has_keep && (p->ruid == o->keep_uid || p->euid == o->keep_uid))
                return true;
        return false;
}

/* SIGTERM now, SIGKILL after the grace period (sweep_wait); SIGKILL at
 * once when P is not cut off (UNCUT: it still holds what could read the
 * next holder's input or keep a device, which the grace period would leave
 * it) and at a VT switch, where nothing else is terminated. Takes PIDFD. */
static void victim_add(struct xdev_sweep *s, int pidfd, const struct proc *p, const char *node,
                       const char *why, bool uncut) {
        bool now = uncut || s->opts->in_session || s->opts->kill_now;
        bool graceful = s->n_victims < XDEV_SWEEP_GRACEFUL_MAX && s->pass == 0 && !now;
        bool keep = s->n_victims < XDEV_SWEEP_GRACEFUL_MAX;
        int sig = graceful ? SIGTERM : SIGKILL;

        if (pidfd_signal(pidfd, sig) < 0) {
                if (errno != ESRCH) {
                        xdev_log(s->log, LOG_ERR, "cannot signal pid %d (\"%s\"): %s", (int) p->pid,
                                 p->comm, strerror(errno));
                        s->counts->failed++;
                }
                (void) close(pidfd);
                return;
        }
        xdev_log(s->log, LOG_WARNING, "pid %d (\"%s\", uid %u) still holds \"%s\" (%s): sent %s",
                 (int) p->pid, p->comm, (unsigned) p->ruid, node, why,
                 graceful                               ? "SIGTERM"
                         : uncut || s->opts->in_session ? "SIGKILL, not cut off"
                                                        : "SIGKILL");
        if (!keep) {
                s->counts->terminated++;
                (void) close(pidfd);
                return;
        }
        struct victim *v = &s->victims[s->n_victims++];
        v->pidfd = pidfd;
        v->pid = p->pid;
        v->give_up = graceful ? 0 : now_ms() + KILL_WAIT_MS;
        (void) snprintf(v->comm, sizeof v->comm, "%s", p->comm);
        (void) snprintf(v->node, sizeof v->node, "%s", node);
}

static bool victim_known(const struct xdev_sweep *s, pid_t pid) {
        for (size_t i = 0; i < s->n_victims; i++)
                if (s->victims[i].pid == pid)
                        return true;
        return false;
}

static bool victim_exited(const struct victim *v) {
        struct pollfd pfd = { .fd = v->pidfd, .events = POLLIN };
        return poll(&pfd, 1, 0) > 0;
}

/* Waits for the victims until the grace period is over, then SIGKILLs the
 * rest and waits a little more (a victim sent SIGKILL at once is only
 * waited for that little). */
static void sweep_wait(struct xdev_sweep *s) {
        for (;;) {
                uint64_t now = now_ms(), next = UINT64_MAX;
                struct victim *first = NULL;

                for (size_t i = 0; i < s->n_victims; i++) {
                        struct victim *v = &s->victims[i];
                        if (v->pidfd < 0 || victim_exited(v))
                                continue;
                        if (v->give_up == 0 && now >= s->deadline) {
                                xdev_log(s->log, LOG_WARNING,
                                         "pid %d (\"%s\") did not exit within %u ms: sent SIGKILL",
                                         (int) v->pid, v->comm, s->grace_ms);
                                (void) pidfd_signal(v->pidfd, SIGKILL);
                                v->give_up = now + KILL_WAIT_MS;
                        }
                        if (v->give_up != 0 && now >= v->give_up) {
                                xdev_log(s->log, LOG_ERR,
                                         "pid %d (\"%s\") is still there after SIGKILL, ignoring",
                                         (int) v->pid, v->comm);
                                s->counts->failed++;
                                (void) close(v->pidfd);
                                v->pidfd = -1;
                                continue;
                        }
                        uint64_t until = v->give_up != 0 ? v->give_up : s->deadline;
                        if (until < next)
                                next = until;
                        if (!first)
                                first = v;
                }
                if (!first)
                        break;
                /* Any victim's exit wakes us; poll the first one alive. */
                struct pollfd pfd = { .fd = first->pidfd, .events = POLLIN };
                uint64_t left = next - now;
                (void) poll(&pfd, 1, (int) (left > 50 ? 50 : left));
        }
        for (size_t i = 0; i < s->n_victims; i++)
                if (s->victims[i].pidfd >= 0) {
                        s->counts->terminated++;
                        (void) close(s->victims[i].pidfd);
                }
        s->n_victims = 0;
}

/* EVIOCREVOKE through a copy of the process's fd: the copy is the same open
 * file, so the original is cut off and its grab released. 1 revoked, 0
 * already revoked, -ENOTTY when the node cannot be revoked (mousedev,
 * joydev), other -errno. */
static int fd_revoke_input(int copy) {
        int r = xdev_evdev_revoke(copy);

        if (r == 0)
                return 1;
        if (r == -ENODEV)
                return 0;
        return r == -EINVAL ? -ENOTTY : r;
}

/* DROP_MASTER through the copy when that file is master. 1 dropped, 0 was
 * not master, -errno. */
static int fd_drop_master(int copy) {
        int r;

        if (!drmIsMaster(copy))
                return 0;
        r = xdev_drm_drop_master(copy);
        return r < 0 ? r : 1;
}

/* The policy that applies to a holder: at a VT switch the user's X server
 * lives on, so "kill" and "kill-user" act as "revoke". */
static enum xdev_linger policy_of(const struct xdev_sweep_opts *o) {
        if (o->policy == XDEV_LINGER_WARN)
                return XDEV_LINGER_WARN;
        if (o->in_session || o->policy == XDEV_LINGER_KILL_USER)
                return XDEV_LINGER_REVOKE;
        return o->policy;
}

/* P, over the scan budget, left to be read to the end after the lock:
 * true when the caller takes it (room in its list). */
static bool proc_defer(struct xdev_sweep *s, const struct proc *p) {
        struct xdev_sweep_defer *d = s->opts->defer;

        if (!d || !s->opts->has_only || s->opts->report_only)
                return false;
        for (size_t i = 0; i < d->n; i++)
                if (d->pids[i] == p->pid)
                        return true;
        if (!sweep_defers(s))
                return false;
        d->uid = s->opts->only_uid;
        d->ended = !s->opts->in_session;
        if (d->n == XDEV_SWEEP_DEFER_MAX) {
                /* the list is full: the rest of the uid's processes are
                 * all read after the lock, and the lock stays bounded */
                if (!d->all)
                        xdev_log(
                                s->log, LOG_INFO,
                                "more than %d processes of uid %u over the scan budget: every process of it is read to the end after the lock",
                                XDEV_SWEEP_DEFER_MAX, (unsigned) d->uid);
                d->all = true;
                return true;
        }
        d->cost[d->n] = p->cost;
        d->pids[d->n++] = p->pid;
        return true;
}

/* Once the sweep's own budget under the lock is spent (or its list is
 * full), P is not read at all under it: left to the pass after the lock,
 * which reads it to the end. What it holds is cut off there, the pass's
 * time later (doc/DESIGN.md §3.5.5). */
static bool proc_defer_unread(struct xdev_sweep *s, struct proc *p) {
        const struct xdev_sweep_defer *d = s->opts->defer;

        if (!sweep_defers(s) || (!d->all && s->spent < XDEV_SWEEP_LOCKED_BUDGET))
                return false;
        p->cost = 0;
        if (s->pass == 0)
                s->counts->deferred++;
        if (proc_defer(s, p) && !d->all)
                xdev_log(
                        s->log, LOG_INFO,
                        "pid %d (uid %u) not read under the lock (the sweep's budget there is spent); read to the end after the lock",
                        (int) p->pid, (unsigned) p->ruid);
        return true;
}

/* A ring P maps whose files no scan lists: under "warn" logged, else
 * *RET_WHY says why P must go. */
static void proc_ring_gap(struct xdev_sweep *s, const struct proc *p, enum xdev_linger policy,
                          const char **ret_node, const char **ret_why) {
        const char *why = NULL;
        char what[96];

        switch (p->ring_gap) {
        case RING_GAP_NONE:
                return;
        case RING_GAP_NO_FD:
                (void) snprintf(what, sizeof what,
                                "an io_uring (inode %llu) mapped with no fd left",
                                (unsigned long long) p->ring_gap_ino);
                why = "an io_uring mapped with no fd left, whose files no scan lists, may hold it unseen";
                break;
        case RING_GAP_TOO_MANY:
                (void) snprintf(what, sizeof what, "more than %d io_uring rings mapped",
                                XDEV_URING_MAPPED_MAX);
                why = "more io_uring rings mapped than a scan tracks, may hold it unseen";
                break;
        case RING_GAP_UNREAD:
                if (p->maps_error == -ETIMEDOUT)
                        (void) snprintf(what, sizeof what,
                                        "a memory map that did not come back in time (its "
                                        "map lock is held)");
                else
                        (void) snprintf(what, sizeof what,
                                        "a memory map that could not be read (%s)",
                                        strerror(-p->maps_error));
                why = "its memory map could not be read for io_uring rings with no fd, may hold it unseen";
                break;
        }
        if (policy == XDEV_LINGER_WARN) {
                xdev_log(
                        s->log, LOG_WARNING,
                        "pid %d (\"%s\", uid %u) has %s, whose files no scan lists; lingering = warn, leaving it",
                        (int) p->pid, p->comm, (unsigned) p->ruid, what);
                return;
        }
        xdev_log(s->log, LOG_WARNING, "pid %d (\"%s\", uid %u) has %s", (int) p->pid, p->comm,
                 (unsigned) p->ruid, what);
        *ret_node = p->n_fds > 0 ? s->targets[p->tgt[0]].path : "any shared node";
        *ret_why = why;
}

/* What no fd copy can reach: more fds than one scan lists, an io_uring
 * registered file, a thread's own fd table. Returns why the process must
 * go (and *RET_NODE), or NULL; under "warn" it only logs. */
static const char *proc_unreachable(struct xdev_sweep *s, const struct proc *p,
                                    enum xdev_linger policy, const char **ret_node) {
        const char *why = NULL;

        /* Separate opens are separate files, each to revoke: past the
         * limit some may be unseen. */
        if (p->n_fds >= FDS_PER_PROC_MAX && policy != XDEV_LINGER_WARN) {
                *ret_node = s->targets[p->tgt[0]].path;
                why = "too many fds to revoke one by one";
        }
        if (p->uring_fd >= 0) {
                const char *node = s->targets[p->uring_tgt].path;
                if (policy == XDEV_LINGER_WARN)
                        xdev_log(
                                s->log, LOG_WARNING,
                                "pid %d (\"%s\", uid %u) still holds \"%s\" in an io_uring (fd %d); lingering = warn, leaving it",
                                (int) p->pid, p->comm, (unsigned) p->ruid, node, p->uring_fd);
                else {
                        *ret_node = node;
                        why = "held as an io_uring registered file, which cannot be revoked";
                }
        }
        if (p->uring_unlisted >= 0) {
                if (policy == XDEV_LINGER_WARN)
                        xdev_log(
                                s->log, LOG_WARNING,
                                "pid %d (\"%s\", uid %u) has an io_uring (fd %d) whose files the kernel did not list (its lock is held); lingering = warn, leaving it",
                                (int) p->pid, p->comm, (unsigned) p->ruid, p->uring_unlisted);
                else {
                        *ret_node = p->n_fds > 0 ? s->targets[p->tgt[0]].path : "any shared node";
                        why = "an io_uring whose files the kernel did not list (its lock is held), may hold it unseen";
                }
        }
        proc_ring_gap(s, p, policy, ret_node, &why);
        if (p->over_budget && proc_defer(s, p)) {
                if (!s->opts->defer->all)
                        xdev_log(
                                s->log, LOG_INFO,
                                "pid %d (\"%s\", uid %u) not read to the end under the lock (%u entries read); read to the end after the lock",
                                (int) p->pid, p->comm, (unsigned) p->ruid, p->cost);
        } else if (p->over_budget) {
                const char *node = p->n_fds > 0 ? s->targets[p->tgt[0]].path : "any shared node";
                if (policy == XDEV_LINGER_WARN)
                        xdev_log(
                                s->log, LOG_WARNING,
                                "pid %d (\"%s\", uid %u) has more fds, threads and io_uring files than the scan budget (%u); lingering = warn, leaving it",
                                (int) p->pid, p->comm, (unsigned) p->ruid, scan_budget(s));
                else {
                        *ret_node = node;
                        why = "more fds, threads and io_uring files than the scan budget, may hold it unseen";
                }
        }
        if (p->hidden_tid != 0) {
                const char *node = s->targets[p->hidden_tgt].path;
                if (policy == XDEV_LINGER_WARN)
                        xdev_log(
                                s->log, LOG_WARNING,
                                "thread %d of pid %d (\"%s\", uid %u) still holds \"%s\" in its own fd table; lingering = warn, leaving it",
                                (int) p->hidden_tid, (int) p->pid, p->comm, (unsigned) p->ruid,
                                node);
                else {
                        *ret_node = node;
                        why = "held by a thread with its own fd table";
                }
        }
        return why;
}

/* What an fd of a target is to its process, as the sweep acted on it. */
enum hold {
        HOLD_NONE,  /* O_PATH: reads, writes and ioctls nothing */
        HOLD_SPENT, /* an input fd revoked before this sweep */
        HOLD_LIVE,  /* a file for I/O, or one that could not be looked at */
};

/* Cuts off fd I of P through its COPY: an input file revoked, a DRM
 * primary node's master dropped. Returns why the process must go, or NULL;
 * sets *UNCUT when the fd could not be cut off, *HOLD to HOLD_SPENT when
 * it was revoked before. */
static const char *fd_cut(struct xdev_sweep *s, const struct proc *p, size_t i, int copy,
                          bool *uncut, enum hold *hold) {
        const struct xdev_sweep_target *t = &s->targets[p->tgt[i]];
        const char *why = NULL;
        int r;

        if (t->class == XDEV_CLASS_INPUT) {
                r = fd_revoke_input(copy);
                if (r > 0) {
                        s->counts->revoked++;
                        xdev_log(s->log, LOG_NOTICE,
                                 "revoked \"%s\" (fd %d) of pid %d (\"%s\", uid %u)", t->path,
                                 p->fds[i], (int) p->pid, p->comm, (unsigned) p->ruid);
                } else if (r == 0) {
                        *hold = HOLD_SPENT; /* revoked before: reads nothing */
                } else {
                        why = r == -ENOTTY ? "not an evdev node, cannot be revoked"
                                           : "revoke failed";
                        *uncut = true;
                }
        } else {
                r = fd_drop_master(copy);
                if (r > 0) {
                        s->counts->demoted++;
                        xdev_log(s->log, LOG_NOTICE,
                                 "dropped DRM master of pid %d (\"%s\", uid %u) on \"%s\"",
                                 (int) p->pid, p->comm, (unsigned) p->ruid, t->path);
                } else if (r < 0) {
                        xdev_log(s->log, LOG_ERR,
                                 "cannot drop DRM master of pid %d (\"%s\") on \"%s\": %s",
                                 (int) p->pid, p->comm, t->path, strerror(-r));
                        s->counts->failed++;
                        *uncut = true;
                }
                /* A former master takes master back when none is held: at a
                 * logout it goes. At a VT switch its X server stays (it
                 * dropped master itself, or was just made to) and takes
                 * master again when its VT returns. */
                if (!s->opts->in_session)
                        why = "DRM primary node";
        }
        return why;
}

/* "revoke" on fd I of P: EVIOCREVOKE an input fd, drop DRM master of a
 * primary node's fd, through a copy taken with PIDFD. ENDING: P is to be
 * terminated anyway (kill, kill-user), and is cut off first so that it
 * reads nothing during its grace period. Returns why the process must go,
 * or NULL; sets *UNCUT when the fd could not be cut off, and *HOLD to what
 * the fd is: a file opened for I/O, or one that could not be looked at, is
 * a hold (HOLD_LIVE), an input fd revoked before a spent one (HOLD_SPENT).
 * An O_PATH file reads, writes and ioctls nothing: no hold (*HOLD left).
 * The copy's flags are what counts, not the fdinfo's: the copy is the
 * file acted on (the holder could swap the fd number between the two). */
static const char *fd_act(struct xdev_sweep *s, int pidfd, const struct proc *p, size_t i,
                          bool ending, bool *uncut, enum hold *hold) {
        const struct xdev_sweep_target *t = &s->targets[p->tgt[i]];
        bool primary = t->class == XDEV_CLASS_DRM && minor(t->rdev) < XDEV_DRM_MINOR_RENDER;
        bool revocable = t->class == XDEV_CLASS_INPUT || primary;
        const char *why;
        struct stat st;
        int copy, fl;

        copy = pidfd_getfd(pidfd, p->fds[i]);
        if (copy < 0 && (errno == ESRCH || errno == EBADF))
                return NULL; /* exited, or closed it meanwhile */
        if (copy >= 0) {
                if (fstat(copy, &st) < 0 || target_match(s, &st) != (ssize_t) p->tgt[i]) {
                        (void) close(copy); /* fd number reused meanwhile */
                        return NULL;
                }
                fl = fcntl(copy, F_GETFL);
                if (fl >= 0 && (fl & O_PATH)) {
                        (void) close(copy);
                        if (s->pass == 0)
                                xdev_log(
                                        s->log, LOG_INFO,
                                        "pid %d (\"%s\", uid %u) has an O_PATH fd %d of \"%s\", which reads nothing; leaving it",
                                        (int) p->pid, p->comm, (unsigned) p->ruid, p->fds[i],
                                        t->path);
                        return NULL;
                }
        }
        *hold = HOLD_LIVE;
        if (!revocable) {
                if (copy >= 0)
                        (void) close(copy);
                if (s->pass == 0 && !ending)
                        xdev_log(
                                s->log, LOG_NOTICE,
                                "pid %d (\"%s\", uid %u) still holds \"%s\" (fd %d); not revocable, leaving it",
                                (int) p->pid, p->comm, (unsigned) p->ruid, t->path, p->fds[i]);
                return NULL;
        }
        if (copy < 0) {
                xdev_log(
                        s->log, LOG_ERR,
                        "cannot take fd %d of pid %d (\"%s\") holding \"%s\": %s%s; terminating it instead",
                        p->fds[i], (int) p->pid, p->comm, t->path, strerror(errno),
                        errno == EPERM ? " (Yama ptrace_scope 3?)" : "");
                s->counts->failed++;
                *uncut = true;
                return "fd cannot be revoked";
        }
        why = fd_cut(s, p, i, copy, uncut, hold);
        xdev_fd_bin_add(s->opts->bin, copy);
        return why;
}

void xdev_fd_bin_add(struct xdev_fd_bin *bin, int fd) {
        if (bin && bin->n < XDEV_FD_BIN_MAX)
                bin->fds[bin->n++] = fd;
        else
                (void) close(fd);
}

void xdev_fd_bin_empty(struct xdev_fd_bin *bin) {
        while (bin->n > 0)
                (void) close(bin->fds[--bin->n]);
}

/* The targets as a peek looks for them (index for index). */
static size_t inflight_nodes(const struct xdev_sweep *s, struct xdev_inflight_node *nodes) {
        size_t n = 0;

        for (; n < s->n_targets && n < XDEV_SWEEP_TARGETS_MAX; n++) {
                const struct xdev_sweep_target *t = &s->targets[n];
                bool ok = major(t->rdev) == xdev_class_major(t->class);
                nodes[n].rdev = ok ? t->rdev : (dev_t) -1;
                nodes[n].kind = t->class == XDEV_CLASS_INPUT ? XDEV_INFLIGHT_INPUT
                        : t->class == XDEV_CLASS_DRM && minor(t->rdev) < XDEV_DRM_MINOR_RENDER
                        ? XDEV_INFLIGHT_DRM_PRIMARY
                        : XDEV_INFLIGHT_OTHER;
        }
        return n;
}

/* A copy of P's socket I, taken with PIDFD, checked to be the socket the
 * scan noted; -1 when it is gone. */
static int sock_copy(int pidfd, const struct proc *p, size_t i) {
        struct stat st;
        int copy = pidfd_getfd(pidfd, p->socks[i]);

        if (copy < 0)
                return -1;
        if (fstat(copy, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_ino != p->sock_ino[i]) {
                (void) close(copy);
                return -1;
        }
        return copy;
}

/* Peeks at the queue of P's socket I (with CUT, cutting off what it holds
 * of the targets). Returns 0 (*RET filled) or -1, logged. */
static int sock_peek(struct xdev_sweep *s, int pidfd, const struct proc *p, size_t i, bool cut,
                     struct xdev_inflight *ret) {
        struct xdev_inflight_node nodes[XDEV_SWEEP_TARGETS_MAX];
        size_t n = inflight_nodes(s, nodes);
        int copy = sock_copy(pidfd, p, i), r;

        if (copy < 0)
                return -1;
        r = xdev_inflight_peek(copy, nodes, n, cut, INFLIGHT_PEEK_MS, ret);
        (void) close(copy);
        if (r < 0) {
                xdev_log(s->log, LOG_ERR,
                         "cannot look into the queue of socket fd %d of pid %d (\"%s\"): %s",
                         p->socks[i], (int) p->pid, p->comm, strerror(-r));
                return -1;
        }
        if (ret->unknown && ret->listening && s->pass == 0)
                xdev_log(
                        s->log, LOG_NOTICE,
                        "pid %d (\"%s\", uid %u), socket fd %d: %s; leaving it (doc/DESIGN.md §3.5.12)",
                        (int) p->pid, p->comm, (unsigned) p->ruid, p->socks[i], ret->why);
        return 0;
}

/* The look without the lock: which of P's sockets has a usable target in
 * flight in its queue, and which queue could not be read. */
static void inflight_look(struct xdev_sweep *s, int pidfd, struct proc *p) {
        if (p->socks_over) {
                p->inflight_unread_fd = p->socks[0];
                p->inflight_why = "more sockets with files queued than a pass looks into";
        }
        for (size_t i = 0; i < p->n_socks && p->inflight_fd < 0; i++) {
                struct xdev_inflight f;
                if (sock_peek(s, pidfd, p, i, false, &f) < 0)
                        continue;
                if (f.unknown && !f.listening) {
                        p->inflight_unread_fd = p->socks[i];
                        p->inflight_why = f.why;
                }
                for (size_t k = 0; k < f.n && p->inflight_fd < 0; k++)
                        if (f.found[k].state == XDEV_INFLIGHT_LIVE) {
                                p->inflight_fd = p->socks[i];
                                p->inflight_tgt = f.found[k].node;
                        }
        }
}

/* What a cut-off peek did to a target in flight to P, on its socket fd
 * SOCK. Returns why P must go, or NULL; sets *UNCUT when it is not cut
 * off. */
static const char *inflight_done(struct xdev_sweep *s, const struct proc *p, int sock, size_t node,
                                 enum xdev_inflight_state state, bool *uncut) {
        const struct xdev_sweep_target *t = &s->targets[node];
        bool primary = t->class == XDEV_CLASS_DRM && minor(t->rdev) < XDEV_DRM_MINOR_RENDER;

        switch (state) {
        case XDEV_INFLIGHT_CUT:
                if (t->class == XDEV_CLASS_INPUT)
                        s->counts->revoked++;
                else
                        s->counts->demoted++;
                xdev_log(
                        s->log, LOG_NOTICE,
                        "%s \"%s\" in flight to pid %d (\"%s\", uid %u), queued on its socket fd %d",
                        t->class == XDEV_CLASS_INPUT ? "revoked" : "dropped DRM master of", t->path,
                        (int) p->pid, p->comm, (unsigned) p->ruid, sock);
                break;
        case XDEV_INFLIGHT_FAILED:
                xdev_log(s->log, LOG_ERR,
                         "cannot cut off \"%s\" in flight to pid %d (\"%s\") on its socket fd %d",
                         t->path, (int) p->pid, p->comm, sock);
                s->counts->failed++;
                *uncut = true;
                return "a file in flight to it cannot be cut off";
        case XDEV_INFLIGHT_LIVE:
                if (!primary && s->pass == 0)
                        xdev_log(
                                s->log, LOG_NOTICE,
                                "pid %d (\"%s\", uid %u) has \"%s\" in flight on its socket fd %d; not revocable, leaving it",
                                (int) p->pid, p->comm, (unsigned) p->ruid, t->path, sock);
                break;
        case XDEV_INFLIGHT_REVOKED:
                return NULL;
        }
        /* as a DRM primary node's fd of its own: it goes at a logout */
        return primary && !s->opts->in_session ? "DRM primary node in flight" : NULL;
}

/* Cuts off what P's sockets hold in flight of the targets (the pass after
 * the lock; under "warn" only logged). Returns why P must go, or NULL,
 * and *RET_NODE; sets *UNCUT when something could not be cut off or
 * looked at. */
static const char *inflight_act(struct xdev_sweep *s, int pidfd, const struct proc *p,
                                enum xdev_linger policy, const char **ret_node, bool *uncut) {
        bool warn = policy == XDEV_LINGER_WARN;
        const char *why = NULL;

        for (size_t i = 0; i < p->n_socks; i++) {
                struct xdev_inflight f;
                if (sock_peek(s, pidfd, p, i, !warn, &f) < 0)
                        continue;
                for (size_t k = 0; k < f.n; k++) {
                        const char *path = s->targets[f.found[k].node].path;
                        const char *w;
                        if (warn) {
                                if (f.found[k].state != XDEV_INFLIGHT_REVOKED)
                                        xdev_log(
                                                s->log, LOG_WARNING,
                                                "pid %d (\"%s\", uid %u) has \"%s\" in flight on its socket fd %d; lingering = warn, leaving it",
                                                (int) p->pid, p->comm, (unsigned) p->ruid, path,
                                                p->socks[i]);
                                continue;
                        }
                        w = inflight_done(s, p, p->socks[i], f.found[k].node, f.found[k].state,
                                          uncut);
                        if (!w && policy == XDEV_LINGER_KILL &&
                            f.found[k].state != XDEV_INFLIGHT_REVOKED)
                                w = "lingering = kill";
                        if (w) {
                                why = w;
                                *ret_node = path;
                        }
                }
                if (f.unknown && !f.listening) {
                        xdev_log(s->log, LOG_WARNING, "pid %d (\"%s\", uid %u), socket fd %d: %s%s",
                                 (int) p->pid, p->comm, (unsigned) p->ruid, p->socks[i], f.why,
                                 warn ? "; lingering = warn, leaving it" : "");
                        if (!warn) {
                                why = "files in flight to it that no peek read may hold it unseen";
                                *ret_node = "any shared node";
                                *uncut = true;
                        }
                }
        }
        if (p->socks_over && !warn) {
                xdev_log(s->log, LOG_WARNING,
                         "pid %d (\"%s\", uid %u) has more than %d sockets with files queued",
                         (int) p->pid, p->comm, (unsigned) p->ruid, SOCKS_PER_PROC_MAX);
                why = "files in flight to it that no peek read may hold it unseen";
                *ret_node = "any shared node";
                *uncut = true;
        }
        return why;
}

/* P, over the scan budget, was left to the pass after the lock
 * (proc_defer): not one left holding, one that pass reads. */
static bool proc_was_deferred(const struct xdev_sweep *s, const struct proc *p) {
        const struct xdev_sweep_defer *d = s->opts->defer;

        if (!p->over_budget || !d || !s->opts->has_only || s->opts->report_only)
                return false;
        for (size_t i = 0; i < d->n; i++)
                if (d->pids[i] == p->pid)
                        return true;
        return d->all;
}

/* Applies the policy to one holder. PIDFD is this process, checked alive
 * after its fds were scanned; it is taken. */
static void proc_act(struct xdev_sweep *s, int pidfd, const struct proc *p) {
        enum xdev_linger policy = policy_of(s->opts);
        const char *kill_node = NULL, *kill_why = proc_unreachable(s, p, policy, &kill_node);
        bool uncut = kill_why != NULL;
        bool live = false;  /* a hold left working: an fd for I/O not revoked */
        bool stale = false; /* an input fd revoked before */

        for (size_t i = 0; i < p->n_fds; i++) {
                const struct xdev_sweep_target *t = &s->targets[p->tgt[i]];
                const char *why;

                if (policy == XDEV_LINGER_WARN) {
                        live = true;
                        xdev_log(
                                s->log, LOG_WARNING,
                                "pid %d (\"%s\", uid %u) still holds \"%s\" (fd %d); lingering = warn, leaving it",
                                (int) p->pid, p->comm, (unsigned) p->ruid, t->path, p->fds[i]);
                        continue;
                }
                if (policy == XDEV_LINGER_KILL) {
                        /* cut off first: the next holder may be granted
                         * before its grace period ends (§3.5.7) */
                        enum hold hold = HOLD_NONE;
                        (void) fd_act(s, pidfd, p, i, true, &uncut, &hold);
                        if (hold != HOLD_NONE) {
                                kill_node = t->path;
                                kill_why = "lingering = kill";
                        }
                        continue;
                }
                enum hold hold = HOLD_NONE;
                why = fd_act(s, pidfd, p, i, false, &uncut, &hold);
                live = live || hold == HOLD_LIVE;
                stale = stale || hold == HOLD_SPENT;
                if (why) {
                        kill_node = t->path;
                        kill_why = why;
                }
        }
        if (proc_may_hold_in_flight(p)) {
                const char *node = NULL, *why = inflight_act(s, pidfd, p, policy, &node, &uncut);
                if (why) {
                        kill_node = node;
                        kill_why = why;
                }
        }
        if (policy == XDEV_LINGER_WARN || !kill_why) {
                if (s->pass == 0 && proc_was_deferred(s, p))
                        s->counts->deferred++; /* known by the pass after the lock */
                else if (s->pass == 0)
                        s->counts->left++;
                if (s->pass == 0 && !live && !proc_was_deferred(s, p)) {
                        s->counts->spent++;
                        s->counts->stale += stale;
                }
                (void) close(pidfd);
                return;
        }
        victim_add(s, pidfd, p, kill_node, kill_why, uncut);
}

/* An input fd already revoked answers ENODEV to every ioctl. */
static bool fd_is_revoked(int pidfd, int fd) {
        int copy = pidfd_getfd(pidfd, fd);
        bool revoked = copy >= 0 && xdev_evdev_is_revoked(copy);

        if (copy >= 0)
                (void) close(copy);
        return revoked;
}

void xdev_sweep_report_free(struct xdev_sweep_report *r) {
        if (!r)
                return;
        free(r->items);
        *r = (struct xdev_sweep_report) { 0 };
}

static void report_add(struct xdev_sweep *s, const struct proc *p, const char *path, int fd,
                       pid_t tid, bool revoked, bool uring) {
        struct xdev_sweep_report *r = s->opts->report;
        struct xdev_sweep_entry *e;

        if (!r || r->n >= XDEV_SWEEP_TARGETS_MAX * 4)
                return;
        e = realloc(r->items, (r->n + 1) * sizeof *e);
        if (!e)
                return;
        r->items = e;
        e = &r->items[r->n++];
        *e = (struct xdev_sweep_entry) {
                .pid = p->pid,
                .uid = p->ruid,
                .fd = fd,
                .thread = tid,
                .revoked = revoked,
                .uring = uring,
        };
        (void) snprintf(e->comm, sizeof e->comm, "%s", p->comm);
        (void) snprintf(e->path, sizeof e->path, "%s", path);
}

static void proc_report(struct xdev_sweep *s, int pidfd, const struct proc *p) {
        for (size_t i = 0; i < p->n_fds; i++) {
                const struct xdev_sweep_target *t = &s->targets[p->tgt[i]];
                bool revoked = t->class == XDEV_CLASS_INPUT && fd_is_revoked(pidfd, p->fds[i]);
                report_add(s, p, t->path, p->fds[i], 0, revoked, false);
        }
        if (p->uring_fd >= 0)
                report_add(s, p, s->targets[p->uring_tgt].path, p->uring_fd, 0, false, true);
        if (p->inflight_fd >= 0)
                report_add(s, p, s->targets[p->inflight_tgt].path, p->inflight_fd, 0, false, false);
        if (p->inflight_why)
                report_add(s, p, s->targets[0].path, p->inflight_unread_fd, 0, false, false);
        if (p->hidden_tid != 0)
                report_add(s, p, s->targets[p->hidden_tgt].path, -1, p->hidden_tid, false, false);
        /* for the look after the lock, which acts on the pids it lists */
        if (p->ring_gap != RING_GAP_NONE)
                report_add(s, p, s->targets[0].path, -1, 0, false, true);
}

/* Kernel threads all share one fd table, kthreadd's (pid 2 of the initial
 * pid namespace), which holds no file. kcmp() tells in one syscall that a
 * process uses that table, where reading its status costs a formatted page:
 * under TCG most of a sweep went to the kernel's threads. A user process
 * never shares that table (execve unshares it, a usermode helper gets a
 * copy). Usable only when pid 2 is a kernel thread (not in a pid namespace
 * of its own, where pid 2 is any process) and its table is empty. */
static bool kernel_table_usable(int procfd) {
        struct xdev_proc_stat st;
        struct dirent *de;
        char self[16], want[16];
        bool empty = true;
        ssize_t n;
        DIR *d;

        /* kcmp() takes pids of our pid namespace: /proc must show that one
         * (not the host's, seen from a namespace of its own) */
        n = readlinkat(procfd, "self", self, sizeof self - 1);
        if (n <= 0)
                return false;
        self[n] = '\0';
        (void) snprintf(want, sizeof want, "%d", (int) getpid());
        if (strcmp(self, want) != 0)
                return false;
        if (xdev_proc_stat(KTHREADD_PID, &st) < 0 || !(st.flags & PF_KTHREAD_FLAG))
                return false;
        if (xdev_numdir_open(procfd, "2/fd", &d) < 0)
                return false;
        while (empty && (de = readdir(d)))
                empty = de->d_name[0] == '.';
        (void) closedir(d);
        return empty;
}

bool xdev_sweep_kernel_table_usable(void) {
        int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        bool r;

        if (procfd < 0)
                return false;
        r = kernel_table_usable(procfd);
        (void) close(procfd);
        return r;
}

static bool uses_kernel_table(pid_t pid) {
        return pid != KTHREADD_PID && syscall(SYS_kcmp, KTHREADD_PID, pid, KCMP_FILES, 0, 0) == 0;
}

/* P's uids read, and P one the options let the sweep act on. */
static bool proc_is_ours(const struct xdev_sweep *s, int procfd, struct proc *p) {
        return proc_uids(procfd, p) >= 0 && !proc_is_exempt(s, p);
}

/* P, pinned, is one the pass found: its name read for messages, counted
 * once per sweep. */
static void proc_found(struct xdev_sweep *s, int procfd, struct proc *p) {
        proc_comm(procfd, p->pid, p->comm, sizeof p->comm);
        if (s->pass == 0)
                s->counts->holders++;
}

/* lingering = kill-user at a logout, the strong guarantee: P ends, whatever
 * it holds (in flight or in a ring), cut off first. Returns 1 when P was
 * taken, 0 when not. */
static int sweep_end_user(struct xdev_sweep *s, int procfd, struct proc *p) {
        struct xdev_proc_stat st;
        int pidfd = pidfd_open(p->pid);
        bool uncut;

        if (pidfd < 0)
                return 0;
        /* a zombie holds nothing and cannot be ended again */
        if (!proc_is_ours(s, procfd, p) || xdev_proc_stat(p->pid, &st) < 0 || st.state == 'Z' ||
            pidfd_signal(pidfd, 0) < 0) {
                (void) close(pidfd);
                return 0;
        }
        proc_found(s, procfd, p);
        /* what it holds is cut off before the signal: the grace period is
         * not a time to read keys in */
        uncut = proc_scan_fds(s, procfd, p) < 0 || p->uring_fd >= 0 || p->hidden_tid != 0 ||
                p->uring_unlisted >= 0 || p->over_budget || p->ring_gap != RING_GAP_NONE ||
                p->n_fds >= FDS_PER_PROC_MAX;
        for (size_t i = 0; i < p->n_fds; i++)
                (void) fd_act(s, pidfd, p, i, true, &uncut, &(enum hold) { HOLD_NONE });
        victim_add(s, pidfd, p, s->targets[0].path, "lingering = kill-user, the user logged out",
                   uncut);
        return 1;
}

/* The bits an fd's access mode asks for. */
static unsigned fd_wants(int flags) {
        switch (flags & O_ACCMODE) {
        case O_RDONLY:
                return XDEV_MAY_READ;
        case O_WRONLY:
                return XDEV_MAY_WRITE;
        default:
                return XDEV_MAY_READ | XDEV_MAY_WRITE;
        }
}

/* An fd, through its COPY, that is cut off already: an input file
 * revoked (ENODEV to every ioctl), a DRM primary node's that is not
 * master (a display server in the background, its master dropped). */
static bool fd_is_cut(const struct xdev_sweep_target *t, int copy) {
        if (t->class == XDEV_CLASS_INPUT)
                return xdev_evdev_is_revoked(copy);
        if (t->class == XDEV_CLASS_DRM && minor(t->rdev) < XDEV_DRM_MINOR_RENDER)
                return !drmIsMaster(copy);
        return false;
}

/* The pass after the lock: P's fds that are cut off already, and those
 * of nodes it could open again with its own rights as they are now (a
 * member of group input, a user the node's ACL names, a render node anyone
 * may open), are no holds of another's grant, and are taken off P's list;
 * the second kind logged (by the look without the lock, which then leaves
 * P out of what is read again under it). What cannot be looked at stays a
 * hold. Returns whether P still holds. */
static bool proc_keep_own(struct xdev_sweep *s, int procfd, int pidfd, struct proc *p) {
        struct xdev_creds c;
        bool creds = xdev_proc_creds_read(procfd, p->pid, &c) == 0;
        size_t kept = 0;

        p->stale = false;
        for (size_t i = 0; i < p->n_fds; i++) {
                const struct xdev_sweep_target *t = &s->targets[p->tgt[i]];
                struct stat st;
                int copy = pidfd_getfd(pidfd, p->fds[i]), fl = -1;
                bool looked = copy >= 0 && fstat(copy, &st) == 0 &&
                        target_match(s, &st) == (ssize_t) p->tgt[i] &&
                        (fl = fcntl(copy, F_GETFL)) >= 0 && !(fl & O_PATH);
                bool cut = looked && fd_is_cut(t, copy);
                bool own =
                        looked && !cut && creds && xdev_creds_may_fd(&c, copy, &st, fd_wants(fl));

                if (copy >= 0)
                        (void) close(copy);
                p->stale = p->stale || (cut && t->class == XDEV_CLASS_INPUT);
                if (!cut && !own) {
                        p->fds[kept] = p->fds[i];
                        p->tgt[kept++] = p->tgt[i];
                        continue;
                }
                if (own && s->pass == 0) {
                        char comm[sizeof p->comm];
                        proc_comm(procfd, p->pid, comm, sizeof comm);
                        xdev_log(
                                s->log, LOG_INFO,
                                "pid %d (\"%s\", uid %u) may open \"%s\" with its own rights; leaving its fd %d",
                                (int) p->pid, comm, (unsigned) c.fsuid, t->path, p->fds[i]);
                }
        }
        p->n_fds = kept;
        return proc_holds(p);
}

/* The pass after the lock, P pinned as PIDFD: what it holds that is not
 * its own (proc_keep_own), and, looking without the lock, what its
 * sockets' queues hold in flight; acting, those queues are looked into by
 * the act itself. */
static bool proc_others_holds(struct xdev_sweep *s, int procfd, int pidfd, struct proc *p) {
        bool holds = proc_keep_own(s, procfd, pidfd, p);

        if (!proc_may_hold_in_flight(p))
                return holds;
        if (!s->opts->report_only)
                return true;
        proc_comm(procfd, p->pid, p->comm, sizeof p->comm); /* for its messages */
        inflight_look(s, pidfd, p);
        return proc_holds(p);
}

/* P, if it holds a target: pinned, checked again, then reported or acted
 * on as the policy says. Returns 1 when P was one, 0 when not. */
static int sweep_holder(struct xdev_sweep *s, int procfd, struct proc *p) {
        struct xdev_proc_stat st0, st1;
        bool over;
        int pidfd, r;

        if (proc_defer_unread(s, p))
                return 0;
        r = proc_scan_fds(s, procfd, p);
        s->spent += p->cost;
        if (r < 0 || !(proc_holds(p) || proc_may_hold_in_flight(p)))
                return 0;
        /* A process over the budget is not read again (that would double
         * the cost): its start time, read now and once it is pinned, tells
         * that the pidfd names the same process. */
        over = p->over_budget;
        if (over && xdev_proc_stat(p->pid, &st0) < 0)
                return 0;
        /* Found one: pin it, then check again what the pidfd now names, and
         * that it still lives after the check. */
        pidfd = pidfd_open(p->pid);
        if (pidfd < 0)
                return 0;
        if (!proc_is_ours(s, procfd, p) ||
            (over ? xdev_proc_stat(p->pid, &st1) < 0 || st1.start != st0.start
                  : proc_scan_fds(s, procfd, p) < 0 ||
                             !(proc_holds(p) || proc_may_hold_in_flight(p))) ||
            pidfd_signal(pidfd, 0) < 0) {
                (void) close(pidfd);
                return 0;
        }
        if (s->opts->others && !proc_others_holds(s, procfd, pidfd, p)) {
                if (p->stale && s->pass == 0 && s->opts->report_only)
                        s->counts->stale++; /* for the watch's look */
                (void) close(pidfd);
                return 0;
        }
        proc_found(s, procfd, p);
        if (s->opts->report_only) {
                proc_report(s, pidfd, p);
                (void) close(pidfd);
        } else
                proc_act(s, pidfd, p);
        return 1;
}

/* The pids a pass reads: the candidates the process source gave, or else
 * every entry of /proc. */
struct pid_source {
        DIR *proc;
        pid_t *cand; /* NULL: the walk of /proc */
        size_t n_cand, i_cand;
};

static bool pid_next(struct pid_source *src, pid_t *ret) {
        uint64_t num;

        if (src->cand) {
                if (src->i_cand == src->n_cand)
                        return false;
                *ret = src->cand[src->i_cand++];
                return true;
        }
        do
                if (!xdev_numdir_next(src->proc, &num, NULL))
                        return false;
        while (num == 0);
        *ret = (pid_t) num;
        return true;
}

/* One pass over /proc. Returns the number of holders acted on or -errno. */
static int sweep_pass(struct xdev_sweep *s) {
        const struct xdev_sweep_opts *o = s->opts;
        bool end_user = o->policy == XDEV_LINGER_KILL_USER && o->has_only && !o->in_session &&
                !o->report_only;
        struct pid_source src = { 0 };
        int procfd, n = 0, r;
        bool kernel;

        r = xdev_numdir_open(AT_FDCWD, "/proc", &src.proc);
        if (r < 0)
                return r;
        memset(s->own_memo, 0, sizeof s->own_memo); /* queues change */
        procfd = dirfd(src.proc);
        kernel = kernel_table_usable(procfd);
        /* with a process table, only the candidates, read one by one as
         * the walk would read them */
        if (o->procs && (o->has_only || o->others) &&
            o->procs->pids_of(o->procs->data, o->only_uid, &src.cand, &src.n_cand) < 0)
                src.cand = NULL;
        for (;;) {
                struct proc p = { 0 };

                if (!pid_next(&src, &p.pid))
                        break;
                if (p.pid == getpid() || (kernel && uses_kernel_table(p.pid)) ||
                    victim_known(s, p.pid))
                        continue;
                s->counts->examined++;
                if (!proc_is_ours(s, procfd, &p))
                        continue;
                n += end_user ? sweep_end_user(s, procfd, &p) : sweep_holder(s, procfd, &p);
        }
        (void) closedir(src.proc);
        free(src.cand);
        return n;
}

void xdev_sweep_counts_add(struct xdev_sweep_counts *to, const struct xdev_sweep_counts *c) {
        to->holders += c->holders;
        to->revoked += c->revoked;
        to->demoted += c->demoted;
        to->terminated += c->terminated;
        to->left += c->left;
        to->deferred += c->deferred;
        to->spent += c->spent;
        to->stale += c->stale;
        to->failed += c->failed;
        to->examined += c->examined;
}

void xdev_sweep_counts_log(const struct xdev_log *log, int priority, const char *what,
                           const struct xdev_sweep_counts *c) {
        char after[96] = "";

        if (c->deferred > 0)
                (void) snprintf(
                        after, sizeof after,
                        "; %u process(es) not read to the end under the lock, read after it",
                        c->deferred);
        xdev_log(
                log, priority,
                "%s: %u found, %u fd(s) revoked, %u DRM master(s) dropped, %u terminated, %u left%s",
                what, c->holders, c->revoked, c->demoted, c->terminated, c->left, after);
}

/* The passes after the first: terminated holders may have forked
 * meanwhile, while the last pass ended any (the count of terminated went
 * past BEFORE). Returns 0 or -errno. */
static int sweep_rest(struct xdev_sweep *s, unsigned before) {
        int r = 0;

        sweep_wait(s);
        /* at a VT switch the passes ran at once, under the lock: a pass
         * now could revoke what the user opened after switching back */
        if (s->opts->in_session)
                return 0;
        for (s->pass = 1; s->pass < PASSES_MAX; s->pass++) {
                if (s->opts->report_only || s->opts->policy == XDEV_LINGER_WARN ||
                    s->counts->terminated == before)
                        break;
                before = s->counts->terminated;
                r = sweep_pass(s);
                if (r < 0)
                        break;
                sweep_wait(s);
        }
        return r < 0 ? r : 0;
}

static void sweep_free(struct xdev_sweep *s) {
        if (!s)
                return;
        xdev_uring_maps_reader_done(&s->own_maps.reader);
        for (size_t i = 0; i < s->n_victims; i++)
                if (s->victims[i].pidfd >= 0)
                        (void) close(s->victims[i].pidfd);
        free(s->own_targets);
        free(s);
}

/* Makes S (whose first pass is done) independent of the caller's memory,
 * for xdev_sweep_wait_finish after the lock is let go. */
static struct xdev_sweep_wait *sweep_detach(struct xdev_sweep *s, uid_t uid) {
        struct xdev_sweep_wait *w = calloc(1, sizeof *w);
        struct xdev_sweep_target *t = malloc(s->n_targets * sizeof *t);

        if (!w || !t) {
                free(w);
                free(t);
                return NULL;
        }
        memcpy(t, s->targets, s->n_targets * sizeof *t);
        s->own_targets = t;
        s->targets = t;
        s->own_opts = *s->opts;
        s->own_opts.bin = NULL; /* the transaction's bin is gone by then */
        s->own_opts.report = NULL;
        s->own_opts.procs = NULL; /* the owner's table is not for other threads */
        s->opts = &s->own_opts;
        s->own_counts = (struct xdev_sweep_counts) { 0 };
        s->counts = &s->own_counts;
        w->uid = uid;
        w->until = s->deadline;
        w->record = !s->opts->in_session;
        w->sweep = s;
        return w;
}

int xdev_sweep_start(const struct xdev_sweep_target *targets, size_t n,
                     const struct xdev_sweep_opts *opts, const struct xdev_log *log,
                     struct xdev_sweep_counts *ret, struct xdev_sweep_wait **ret_wait) {
        struct xdev_sweep_counts counts = { 0 };
        unsigned grace =
                opts->grace_ms > XDEV_SWEEP_GRACE_MAX_MS ? XDEV_SWEEP_GRACE_MAX_MS : opts->grace_ms;
        struct xdev_sweep *s;
        int r;

        if (ret_wait)
                *ret_wait = NULL;
        if (n == 0) {
                *ret = counts;
                return 0;
        }
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        *s = (struct xdev_sweep) { .targets = targets,
                                   .n_targets = n,
                                   .opts = opts,
                                   .log = log,
                                   .counts = &counts,
                                   .grace_ms = grace,
                                   .deadline = opts->until_ms ? opts->until_ms : now_ms() + grace };
        s->maps = &s->own_maps;
        s->memo = s->own_memo;
        r = sweep_pass(s);
        /* At a VT switch every victim was sent SIGKILL (§3.5.6): what it
         * forked before the signal landed is looked for at once, while the
         * user cannot be switched back to, and no pass comes later. */
        for (s->pass = 1; opts->in_session && r >= 0 && s->pass < PASSES_MAX; s->pass++) {
                size_t before = s->n_victims;
                if (before == 0 || before >= XDEV_SWEEP_GRACEFUL_MAX)
                        break;
                r = sweep_pass(s);
                if (s->n_victims == before)
                        break;
        }
        s->pass = 0;
        /* The wait is left to the caller (after the lock): at a logout, the
         * user has no session, so nothing can make him the holder and give
         * him new fds that a later pass would revoke; at a switch there is
         * no later pass, and the SIGKILLs are sent. */
        if (r >= 0 && s->n_victims > 0 && ret_wait && opts->has_only) {
                struct xdev_sweep_wait *w = sweep_detach(s, opts->only_uid);
                if (w) {
                        *ret_wait = w;
                        *ret = counts;
                        return 0;
                }
        }
        if (r >= 0)
                r = sweep_rest(s, 0);
        sweep_free(s);
        *ret = counts;
        return r;
}

void xdev_sweep_wait_finish(struct xdev_sweep_wait *w, struct xdev_sweep_counts *ret) {
        while (w) {
                struct xdev_sweep_wait *next = w->next;
                struct xdev_sweep *s = w->sweep;
                (void) sweep_rest(s, 0);
                if (ret)
                        xdev_sweep_counts_add(ret, s->counts);
                sweep_free(s);
                free(w);
                w = next;
        }
}

int xdev_sweep_run(const struct xdev_sweep_target *targets, size_t n,
                   const struct xdev_sweep_opts *opts, const struct xdev_log *log,
                   struct xdev_sweep_counts *ret) {
        return xdev_sweep_start(targets, n, opts, log, ret, NULL);
}
