/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Holders that a sweep by uid does not see, for the qemu scenario of who a
 * switch cuts off (linger/xdt-linger-scenarios, l6). Run as root; each
 * drops to UID itself and prints to stdout (CLOCK_MONOTONIC ms first):
 *
 *   xdt-scope-keylog clone-parent TAG UID NODE
 *       opens NODE as UID, makes a child with clone(CLONE_PARENT) (its
 *       parent is this process's parent, not this process) that reads
 *       NODE, and exits: the child logs "key CODE" per key press and
 *       "read: ERR" when its fd stops working (revoked: ENODEV).
 *   xdt-scope-keylog subuid TAG UID NODE SUBUID [ring]
 *       opens NODE as UID, enters a user namespace of its own, has uid
 *       SUBUID mapped (written by its root parent, as newuidmap would for
 *       a subordinate uid) and setresuid()s to it, then reads as above.
 *       With "ring" it keeps NODE only as an io_uring registered file,
 *       the ring's own fd registered in the ring and closed, NODE's fd
 *       closed (only its memory map shows the ring), and reads through
 *       the ring by its registered index.
 *   xdt-scope-keylog handed TAG UID NODE TOUID
 *       opens NODE as UID and hands the fd (SCM_RIGHTS) to a process of
 *       TOUID (no supplementary group: no right of its own to NODE),
 *       which reads as above; the opener exits.
 *   xdt-scope-keylog inflight TAG UID NODE TOUID
 *       as handed, but the process of TOUID takes the fd off its socket
 *       only once it gets SIGUSR1: until then the file is in flight, in
 *       no process's fd table.
 *   xdt-scope-keylog hidden TAG UID NODE [shield]
 *       as UID, keeps NODE only in an io_uring that no read of /proc
 *       shows: HIDDEN_READS reads of one event each queued on it, the
 *       ring's fd registered in the ring and closed, its mappings
 *       unmapped, NODE's fd closed. The reads complete into its own
 *       memory, which it watches: "key CODE" per key press. With
 *       "shield" it also keeps an O_PATH fd of NODE, which moves no
 *       data; with "stale" an fd of NODE opened for reading that it
 *       never reads (a switch revokes it).
 *   xdt-scope-keylog fat TAG UID N
 *       opens /dev/null N times, then runs as UID holding no device
 *       (a browser or a build with many fds).
 *
 * Each prints "TAG ready pid=P uid=U" once it is set up. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/input.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xdt-ring.h"

static const char *tag;

static long long now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(const char *fmt, ...) {
        va_list ap;
        printf("%lld %s ", now_ms(), tag);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

static void die(const char *what) {
        say("%s: %s", what, strerror(errno));
        exit(1);
}

static void become(uid_t uid) {
        if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                die("cannot become the user");
}

/* Reads key presses from FD until it fails, then stays (a holder that was
 * cut off is alive, not gone). */
static void read_keys(int fd) {
        struct input_event ev;

        say("ready pid=%ld uid=%u", (long) getpid(), (unsigned) getuid());
        for (;;) {
                ssize_t n = read(fd, &ev, sizeof ev);
                if (n == (ssize_t) sizeof ev) {
                        if (ev.type == EV_KEY && ev.value == 1)
                                say("key %u", (unsigned) ev.code);
                        continue;
                }
                say("read: %s", n < 0 ? strerror(errno) : "short read");
                for (;;)
                        pause();
        }
}

/* A ring holding FD as registered file 0, mapped, its own fd registered
 * in it and closed: NODE is reachable through the ring's index alone. */
struct kring {
        unsigned index; /* the ring's registered index */
        struct xdt_ring r;
};

static void ring_take(int fd, struct kring *k) {
        struct io_uring_params p = { 0 };
        struct io_uring_rsrc_update self = { .offset = UINT32_MAX };
        int ring = (int) syscall(SYS_io_uring_setup, 4, &p);

        if (ring < 0 || syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1) < 0)
                die("io_uring");
        int e = xdt_ring_map(ring, &p, &k->r);
        if (e < 0) {
                errno = -e;
                die("mmap of the ring");
        }
        self.data = (uint64_t) ring;
        if (syscall(SYS_io_uring_register, ring, IORING_REGISTER_RING_FDS, &self, 1) != 1)
                die("IORING_REGISTER_RING_FDS");
        k->index = self.offset;
        (void) close(ring);
        (void) close(fd);
}

/* read_keys() through the ring of K. */
static void read_keys_ring(struct kring *k) {
        struct input_event ev[16];

        say("ready pid=%ld uid=%u", (long) getpid(), (unsigned) getuid());
        for (;;) {
                unsigned t = *k->r.sq_tail, idx = t & *k->r.sq_mask;
                struct io_uring_sqe *e = &k->r.sqes[idx];
                memset(e, 0, sizeof *e);
                e->opcode = IORING_OP_READ;
                e->flags = IOSQE_FIXED_FILE;
                e->fd = 0;
                e->addr = (unsigned long) ev;
                e->len = sizeof ev;
                e->off = (unsigned long long) -1;
                k->r.sq_array[idx] = idx;
                __atomic_store_n(k->r.sq_tail, t + 1, __ATOMIC_RELEASE);
                if (syscall(SYS_io_uring_enter, k->index, 1, 1,
                            IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING, NULL, 0) < 0 &&
                    errno != EINTR)
                        die("io_uring_enter");
                unsigned h = *k->r.cq_head;
                if (h == __atomic_load_n(k->r.cq_tail, __ATOMIC_ACQUIRE))
                        continue;
                int res = k->r.cqes[h & *k->r.cq_mask].res;
                __atomic_store_n(k->r.cq_head, h + 1, __ATOMIC_RELEASE);
                if (res <= 0) {
                        say("read: %s", res < 0 ? strerror(-res) : "end");
                        for (;;)
                                pause();
                }
                for (size_t i = 0; i < (size_t) res / sizeof ev[0]; i++)
                        if (ev[i].type == EV_KEY && ev[i].value == 1)
                                say("key %u", (unsigned) ev[i].code);
        }
}

/* The "hidden" holder: FD's reads queued in a ring that leaves no trace in
 * /proc, then watched for in its own memory. */
#define HIDDEN_READS 96
static void read_keys_hidden(int fd) {
        static struct input_event ev[HIDDEN_READS];
        struct io_uring_params p = { 0 };
        struct io_uring_rsrc_update self = { .offset = UINT32_MAX };
        struct xdt_ring r;
        bool seen[HIDDEN_READS] = { false };
        int ring = (int) syscall(SYS_io_uring_setup, 128, &p);

        if (ring < 0 || syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1) < 0)
                die("io_uring");
        int e = xdt_ring_map(ring, &p, &r);
        if (e < 0) {
                errno = -e;
                die("mmap of the ring");
        }
        for (unsigned i = 0; i < HIDDEN_READS; i++) {
                struct io_uring_sqe *q = &r.sqes[i];
                memset(q, 0, sizeof *q);
                q->opcode = IORING_OP_READ;
                q->flags = IOSQE_FIXED_FILE;
                q->addr = (unsigned long) &ev[i];
                q->len = sizeof ev[i];
                q->off = (unsigned long long) -1;
                r.sq_array[i] = i;
        }
        __atomic_store_n(r.sq_tail, HIDDEN_READS, __ATOMIC_RELEASE);
        self.data = (uint64_t) ring;
        if (syscall(SYS_io_uring_register, ring, IORING_REGISTER_RING_FDS, &self, 1) != 1)
                die("IORING_REGISTER_RING_FDS");
        if (syscall(SYS_io_uring_enter, self.offset, HIDDEN_READS, 0, IORING_ENTER_REGISTERED_RING,
                    NULL, 0) != HIDDEN_READS)
                die("io_uring_enter");
        /* nothing left of it: no fd of the ring or of NODE, no mapping */
        size_t sq = p.sq_off.array + p.sq_entries * sizeof(unsigned);
        size_t cq = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
        (void) munmap((char *) r.sq_tail - p.sq_off.tail, sq > cq ? sq : cq);
        if (!(p.features & IORING_FEAT_SINGLE_MMAP))
                (void) munmap((char *) r.cq_tail - p.cq_off.tail, cq);
        (void) munmap(r.sqes, p.sq_entries * sizeof *r.sqes);
        (void) close(ring);
        (void) close(fd);
        say("ready pid=%ld uid=%u", (long) getpid(), (unsigned) getuid());
        for (;;) {
                for (unsigned i = 0; i < HIDDEN_READS; i++) {
                        if (seen[i] || __atomic_load_n(&ev[i].type, __ATOMIC_ACQUIRE) == 0)
                                continue;
                        seen[i] = true;
                        if (ev[i].type == EV_KEY && ev[i].value == 1)
                                say("key %u", (unsigned) ev[i].code);
                }
                (void) usleep(5000);
        }
}

static int clone_parent(void) {
        fflush(stdout);
        return (int) syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
}

int main(int argc, char **argv) {
        if (argc < 5)
                return 2;
        tag = argv[2];
        uid_t uid = (uid_t) strtoul(argv[3], NULL, 10);
        setvbuf(stdout, NULL, _IOLBF, 0);

        if (strcmp(argv[1], "fat") == 0) {
                long n = strtol(argv[4], NULL, 10);
                struct rlimit rl = { (rlim_t) n + 64, (rlim_t) n + 64 };
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        die("setrlimit");
                for (long i = 0; i < n; i++)
                        if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0)
                                die("open /dev/null");
                become(uid);
                say("ready pid=%ld uid=%u", (long) getpid(), (unsigned) getuid());
                for (;;)
                        pause();
        }
        if (strcmp(argv[1], "hidden") == 0) {
                become(uid);
                int fd = open(argv[4], O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        die("open");
                if (argc >= 6 && strcmp(argv[5], "shield") == 0 &&
                    open(argv[4], O_PATH | O_CLOEXEC) < 0)
                        die("open (O_PATH)");
                if (argc >= 6 && strcmp(argv[5], "stale") == 0 &&
                    open(argv[4], O_RDONLY | O_CLOEXEC) < 0)
                        die("open (stale)");
                read_keys_hidden(fd);
        }
        if (strcmp(argv[1], "clone-parent") == 0) {
                become(uid);
                int fd = open(argv[4], O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        die("open");
                int c = clone_parent();
                if (c < 0)
                        die("clone(CLONE_PARENT)");
                if (c == 0)
                        read_keys(fd);
                return 0; /* the child's parent is ours: it lives on */
        }
        if (strcmp(argv[1], "subuid") == 0 && argc >= 6) {
                uid_t sub = (uid_t) strtoul(argv[5], NULL, 10);
                int go[2], ready[2];
                char c;
                if (pipe(go) < 0 || pipe(ready) < 0)
                        die("pipe");
                pid_t pid = fork();
                if (pid < 0)
                        die("fork");
                if (pid == 0) {
                        become(uid);
                        struct kring k = { 0 };
                        bool ring = argc >= 7 && strcmp(argv[6], "ring") == 0;
                        int fd = open(argv[4], O_RDONLY | O_CLOEXEC);
                        if (fd < 0)
                                die("open");
                        if (ring)
                                ring_take(fd, &k);
                        if (unshare(CLONE_NEWUSER) < 0)
                                die("unshare(CLONE_NEWUSER)");
                        (void) !write(ready[1], "u", 1);
                        if (read(go[0], &c, 1) != 1 || setresuid(1, 1, 1) < 0)
                                die("setresuid to the subordinate uid");
                        if (ring)
                                read_keys_ring(&k);
                        read_keys(fd);
                }
                if (read(ready[0], &c, 1) != 1)
                        die("the child did not enter its namespace");
                char path[64], map[64];
                snprintf(path, sizeof path, "/proc/%d/uid_map", (int) pid);
                snprintf(map, sizeof map, "0 %u 1\n1 %u 1\n", (unsigned) uid, (unsigned) sub);
                int m = open(path, O_WRONLY | O_CLOEXEC);
                if (m < 0 || write(m, map, strlen(map)) != (ssize_t) strlen(map))
                        die("uid_map");
                close(m);
                if (write(go[1], "g", 1) != 1)
                        die("go");
                return 0;
        }
        bool inflight = strcmp(argv[1], "inflight") == 0;
        if ((inflight || strcmp(argv[1], "handed") == 0) && argc >= 6) {
                uid_t to = (uid_t) strtoul(argv[5], NULL, 10);
                int sv[2];
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                        die("socketpair");
                pid_t pid = fork();
                if (pid < 0)
                        die("fork");
                char byte = 'f';
                char ctl[CMSG_SPACE(sizeof(int))];
                struct iovec iov = { &byte, 1 };
                struct msghdr msg = { .msg_iov = &iov,
                                      .msg_iovlen = 1,
                                      .msg_control = ctl,
                                      .msg_controllen = sizeof ctl };
                if (pid == 0) {
                        close(sv[0]);
                        become(to);
                        if (inflight) {
                                sigset_t usr1;
                                int sig;
                                sigemptyset(&usr1);
                                sigaddset(&usr1, SIGUSR1);
                                (void) sigprocmask(SIG_BLOCK, &usr1, NULL);
                                say("ready pid=%ld uid=%u (the fd in flight)", (long) getpid(),
                                    (unsigned) getuid());
                                (void) sigwait(&usr1, &sig);
                                say("receiving");
                        }
                        if (recvmsg(sv[1], &msg, MSG_CMSG_CLOEXEC) != 1)
                                die("recvmsg");
                        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
                        if (!cm || cm->cmsg_type != SCM_RIGHTS)
                                die("no fd handed");
                        int fd;
                        memcpy(&fd, CMSG_DATA(cm), sizeof fd);
                        read_keys(fd);
                }
                close(sv[1]);
                become(uid);
                int fd = open(argv[4], O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        die("open");
                memset(ctl, 0, sizeof ctl);
                struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof fd);
                memcpy(CMSG_DATA(cm), &fd, sizeof fd);
                if (sendmsg(sv[0], &msg, 0) != 1)
                        die("sendmsg");
                return 0;
        }
        return 2;
}
