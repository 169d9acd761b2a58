/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Files in flight in a unix socket's queue (doc/DESIGN.md §3.5.12): a peek
 * at the queue, made by a process of its own. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sched.h>

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND (RUNNING_ON_VALGRIND != 0)
#else
#define UNDER_VALGRIND false
#endif

#include "drmdev.h"
#include "evdev.h"
#include "inflight.h"
#include "util.h"

/* What one peek reads at most: the sockets (the one asked for and those
 * in flight in it, and in them), and the messages of all of them. */
#define PEEK_SOCKETS_MAX 16
#define PEEK_MESSAGES_MAX 4096
/* The files one message carries at most (the kernel's SCM_MAX_FD). */
#define PEEK_FDS_MAX 253
#define PEEK_DATA 16384
/* How long the peek's process is waited for once it answered (ms). */
#define PEEK_EXIT_MS 100
/* Peeks' processes left stuck (reap), reaped at later peeks. */
#define PEEK_LEFT_MAX 16

static struct {
        pthread_mutex_t lock;
        int pidfd[PEEK_LEFT_MAX];
        size_t n;
} left = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Reaps the peeks' processes left before that have ended since; with
 * PIDFD >= 0, keeps that one (taken) among them, the oldest let go
 * (closed unreaped) when there is no room. */
static void left_reap(int pidfd) {
        siginfo_t si;
        size_t k = 0;

        (void) pthread_mutex_lock(&left.lock);
        for (size_t i = 0; i < left.n; i++) {
                si.si_pid = 0;
                if (waitid(P_PIDFD, (id_t) left.pidfd[i], &si, WEXITED | WNOHANG | __WALL) == 0 &&
                    si.si_pid != 0) {
                        (void) close(left.pidfd[i]);
                        continue;
                }
                left.pidfd[k++] = left.pidfd[i];
        }
        left.n = k;
        if (pidfd >= 0) {
                if (left.n == PEEK_LEFT_MAX) {
                        (void) close(left.pidfd[0]);
                        memmove(&left.pidfd[0], &left.pidfd[1],
                                (PEEK_LEFT_MAX - 1) * sizeof left.pidfd[0]);
                        left.n--;
                }
                left.pidfd[left.n++] = pidfd;
        }
        (void) pthread_mutex_unlock(&left.lock);
}

int xdev_inflight_count_parse(const char *text) {
        for (const char *p = text; p; p = strchr(p, '\n')) {
                unsigned long v = 0;
                if (*p == '\n')
                        p++;
                if (strncmp(p, "scm_fds:", 8) != 0)
                        continue;
                p += 8;
                while (*p == ' ' || *p == '\t')
                        p++;
                if (*p < '0' || *p > '9')
                        return -EIO;
                for (; *p >= '0' && *p <= '9'; p++) {
                        v = v * 10 + (unsigned long) (*p - '0');
                        if (v > INT32_MAX)
                                return -EIO;
                }
                return (int) v;
        }
        return 0;
}

int xdev_inflight_count(int fd) {
        char buf[4096];
        size_t len = 0;

        for (;;) {
                ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0 || (len += (size_t) r) == sizeof buf - 1)
                        break;
        }
        buf[len] = '\0';
        return xdev_inflight_count_parse(buf);
}

/* Why a peek left part of a queue unread, as the peek's process tells it. */
enum why {
        WHY_NONE,
        WHY_LISTENING,
        WHY_PEEK_OFF,
        WHY_TRUNCATED,
        WHY_MESSAGES,
        WHY_SOCKETS,
        WHY_FOUND,
        WHY_ERROR,
        WHY_SLOW,
};

static const char *why_text(enum why w) {
        switch (w) {
        case WHY_LISTENING:
                return "a listening socket's connections not accepted yet carry files, which no peek reads";
        case WHY_PEEK_OFF:
                return "its queue cannot be walked (no peek offset)";
        case WHY_TRUNCATED:
                return "a message carries more files than a peek takes";
        case WHY_MESSAGES:
                return "more messages queued than a peek reads";
        case WHY_SOCKETS:
                return "more sockets in flight than a peek reads";
        case WHY_FOUND:
                return "more shared nodes' files queued than a peek keeps";
        case WHY_ERROR:
                return "its queue could not be read";
        case WHY_SLOW:
                return "the peek did not come back in time (the socket's I/O lock is held)";
        case WHY_NONE:
                break;
        }
        return "";
}

/* What the peek's process writes back, in one write (under PIPE_BUF). */
struct answer {
        uint32_t n, why, messages, sockets;
        struct {
                uint32_t node, state;
        } found[XDEV_INFLIGHT_FOUND_MAX];
};

struct peek {
        const struct xdev_inflight_node *nodes;
        size_t n_nodes;
        bool cut;
        int work[PEEK_SOCKETS_MAX];
        size_t n_work;
        struct answer a;
};

static void peek_unknown(struct peek *pk, enum why w) {
        if (pk->a.why == WHY_NONE)
                pk->a.why = w;
}

/* The state of a queued file of NODE, open as FD; cut off first with
 * CUT. */
static enum xdev_inflight_state file_state(const struct peek *pk, int fd, size_t node) {
        int r;

        switch (pk->nodes[node].kind) {
        case XDEV_INFLIGHT_INPUT:
                if (!pk->cut)
                        return xdev_evdev_is_revoked(fd) ? XDEV_INFLIGHT_REVOKED
                                                         : XDEV_INFLIGHT_LIVE;
                r = xdev_evdev_revoke(fd);
                return r == 0          ? XDEV_INFLIGHT_CUT
                        : r == -ENODEV ? XDEV_INFLIGHT_REVOKED
                                       : XDEV_INFLIGHT_FAILED;
        case XDEV_INFLIGHT_DRM_PRIMARY:
                if (!pk->cut)
                        return XDEV_INFLIGHT_LIVE;
                r = xdev_drm_drop_master(fd);
                return r == 0          ? XDEV_INFLIGHT_CUT
                        : r == -EINVAL ? XDEV_INFLIGHT_LIVE
                                       : XDEV_INFLIGHT_FAILED;
        case XDEV_INFLIGHT_OTHER:
                break;
        }
        return XDEV_INFLIGHT_LIVE;
}

static void found_add(struct peek *pk, size_t node, enum xdev_inflight_state state) {
        /* a message read in parts gives its files at each part */
        for (uint32_t i = 0; i < pk->a.n; i++)
                if (pk->a.found[i].node == node && pk->a.found[i].state == (uint32_t) state)
                        return;
        if (pk->a.n == XDEV_INFLIGHT_FOUND_MAX) {
                peek_unknown(pk, WHY_FOUND);
                return;
        }
        pk->a.found[pk->a.n].node = (uint32_t) node;
        pk->a.found[pk->a.n].state = (uint32_t) state;
        pk->a.n++;
}

/* One file a peek installed, as FD. A unix socket is kept to be read in
 * turn; a socket or a pipe of another kind is closed (neither has a flush
 * to wait for); anything else stays open until the process exits, so
 * that no flush (a FUSE file's) holds up the peek. */
static void file_check(struct peek *pk, int fd) {
        struct stat st;
        int domain = 0;
        socklen_t l = sizeof domain;

        if (fstat(fd, &st) < 0)
                return;
        if (S_ISCHR(st.st_mode)) {
                for (size_t i = 0; i < pk->n_nodes; i++)
                        if (pk->nodes[i].rdev == st.st_rdev) {
                                found_add(pk, i, file_state(pk, fd, i));
                                return;
                        }
                return;
        }
        if (S_ISSOCK(st.st_mode) && getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) == 0 &&
            domain == AF_UNIX) {
                for (size_t i = 0; i < pk->n_work; i++) {
                        struct stat w;
                        if (fstat(pk->work[i], &w) == 0 && w.st_ino == st.st_ino &&
                            w.st_dev == st.st_dev) {
                                (void) close(fd); /* the same socket, read already */
                                return;
                        }
                }
                if (pk->n_work < PEEK_SOCKETS_MAX) {
                        pk->work[pk->n_work++] = fd;
                        return;
                }
                peek_unknown(pk, WHY_SOCKETS);
        }
        if (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode))
                (void) close(fd);
}

static void control_check(struct peek *pk, struct msghdr *mh) {
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                size_t n;
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
                    c->cmsg_len < CMSG_LEN(0))
                        continue;
                n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < n; i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                        file_check(pk, fd);
                }
        }
}

/* Walks the queue of SOCK with a peek offset from 0, put back after. */
static void queue_walk(struct peek *pk, int sock) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * PEEK_FDS_MAX)];
        } ctl;
        static char data[PEEK_DATA];
        int listening = 0, off = -1, zero = 0, type = 0;
        socklen_t l = sizeof listening;

        if (getsockopt(sock, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l) == 0 && listening) {
                peek_unknown(pk, WHY_LISTENING);
                return;
        }
        l = sizeof type;
        (void) getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &l);
        l = sizeof off;
        if (getsockopt(sock, SOL_SOCKET, SO_PEEK_OFF, &off, &l) < 0 ||
            setsockopt(sock, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof zero) < 0) {
                peek_unknown(pk, WHY_PEEK_OFF);
                return;
        }
        pk->a.sockets++;
        for (;;) {
                struct iovec iov = { data, sizeof data };
                struct msghdr mh = { .msg_iov = &iov,
                                     .msg_iovlen = 1,
                                     .msg_control = ctl.buf,
                                     .msg_controllen = sizeof ctl.buf };
                ssize_t r;

                if (pk->a.messages >= PEEK_MESSAGES_MAX) {
                        peek_unknown(pk, WHY_MESSAGES);
                        break;
                }
                r = recvmsg(sock, &mh, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        if (errno != EAGAIN && errno != EWOULDBLOCK)
                                peek_unknown(pk, WHY_ERROR);
                        break; /* the end of the queue */
                }
                pk->a.messages++;
                if (mh.msg_flags & MSG_CTRUNC)
                        peek_unknown(pk, WHY_TRUNCATED);
                control_check(pk, &mh);
                if (r == 0 && mh.msg_controllen == 0 && type == SOCK_STREAM)
                        break; /* the peer is gone and nothing is left */
        }
        (void) setsockopt(sock, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof off);
}

/* The peek's process: reads, answers in one write to OUT, exits without
 * closing anything it was given (its exit does that). Calls nothing but
 * system calls: it was forked from a process that may have threads. */
static _Noreturn void peek_run(struct peek *pk, int out) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max; /* the files it is given stay open */
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        for (size_t i = 0; i < pk->n_work; i++)
                queue_walk(pk, pk->work[i]);
        (void) !write(out, &pk->a, sizeof pk->a);
        _exit(0);
}

/* A process of its own, without SIGCHLD to its parent (clone3; fork where
 * the kernel or valgrind has no clone3): 0 in it, its pid in the caller
 * (*PIDFD its pidfd, or -1), or -errno. */
static pid_t spawn(int *pidfd) {
        struct clone_args args = { .flags = CLONE_PIDFD, .pidfd = (uint64_t) (uintptr_t) pidfd };
        long r;

        *pidfd = -1;
        if (!UNDER_VALGRIND) {
                r = syscall(SYS_clone3, &args, sizeof args);
                if (r >= 0 || errno != ENOSYS)
                        return r < 0 ? -errno : (pid_t) r;
        }
        r = fork();
        return r < 0 ? -errno : (pid_t) r;
}

/* Reaps the peek's process: it answered, or its time is up (SLOW, then
 * killed first). One stuck in a flush at its exit, or at the socket's
 * lock, which no signal ends, is left to a later peek to reap: it holds
 * nothing of the caller's. */
static void reap(pid_t pid, int pidfd, bool slow) {
        siginfo_t si = { 0 };

        if (slow || (pidfd >= 0 && !xdev_fd_readable_within(pidfd, PEEK_EXIT_MS))) {
                if (pidfd >= 0)
                        (void) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                else
                        (void) kill(pid, SIGKILL);
                if (pidfd >= 0)
                        (void) xdev_fd_readable_within(pidfd, PEEK_EXIT_MS);
        }
        if (pidfd >= 0) {
                if (waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED | WNOHANG | __WALL) == 0 &&
                    si.si_pid != 0)
                        (void) close(pidfd);
                else
                        left_reap(pidfd);
        } else {
                for (int i = 0; i < PEEK_EXIT_MS && waitpid(pid, NULL, WNOHANG) == 0; i++)
                        (void) nanosleep(&(struct timespec) { 0, 1000000 }, NULL);
        }
}

int xdev_inflight_peek(int sock, const struct xdev_inflight_node *nodes, size_t n, bool cut,
                       unsigned timeout_ms, struct xdev_inflight *ret) {
        struct peek pk = {
                .nodes = nodes, .n_nodes = n, .cut = cut, .work = { sock }, .n_work = 1
        };
        int p[2], pidfd;
        bool answered = false;
        pid_t pid;

        *ret = (struct xdev_inflight) { 0 };
        left_reap(-1);
        if (UNDER_VALGRIND) /* its process runs under valgrind too */
                timeout_ms *= 20;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = spawn(&pidfd);
        if (pid == 0) {
                (void) close(p[0]);
                peek_run(&pk, p[1]);
        }
        (void) close(p[1]);
        if (pid < 0) {
                (void) close(p[0]);
                return pid;
        }
        if (xdev_fd_readable_within(p[0], timeout_ms)) {
                ssize_t r = read(p[0], &pk.a, sizeof pk.a);
                answered = r == (ssize_t) sizeof pk.a && pk.a.n <= XDEV_INFLIGHT_FOUND_MAX;
        }
        (void) close(p[0]);
        reap(pid, pidfd, !answered);
        if (!answered) {
                ret->unknown = true;
                ret->why = why_text(WHY_SLOW);
                return 0;
        }
        for (size_t i = 0; i < pk.a.n; i++) {
                if (pk.a.found[i].node >= n || pk.a.found[i].state > XDEV_INFLIGHT_FAILED) {
                        pk.a.why = WHY_ERROR;
                        continue;
                }
                ret->found[ret->n].node = pk.a.found[i].node;
                ret->found[ret->n].state = (enum xdev_inflight_state) pk.a.found[i].state;
                ret->n++;
        }
        if (pk.a.why > WHY_SLOW)
                pk.a.why = WHY_ERROR;
        ret->unknown = pk.a.why != WHY_NONE;
        ret->listening = pk.a.why == WHY_LISTENING;
        ret->why = why_text((enum why) pk.a.why);
        ret->messages = pk.a.messages;
        ret->sockets = pk.a.sockets;
        return 0;
}
