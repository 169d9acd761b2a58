/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A process that keeps its memory map lock from being taken, the way any
 * user can, for the qemu scenario l7 (linger/xdt-linger-scenarios) of a
 * sweep that reads its maps (doc/DESIGN.md §3.5.4). Run as root:
 *
 *   xdt-mapstall UID DIR
 *
 * drops to UID (every id, no group), enters a user and mount namespace of
 * its own (as an unprivileged user can), mounts there a FUSE file system
 * served by a child of its own at DIR: one file, "blk", 1 MiB of zeros,
 * whose writes are never answered. Its shared writable map of blk then
 * has a page under writeback; a thread writes to that page again and
 * waits for the writeback (holding the mapping's lock, or on Linux 6.1
 * the map's), another mprotect()s the mapping and waits for the map lock
 * to write: a read of /proc/PID/maps waits behind it. Prints "stall ready
 * pid=P server=S" (P the stalled process, S its server: killing S lets P
 * go) just before it starts the two threads, then waits. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what) {
        printf("stall failed: %s: %s\n", what, strerror(errno));
        fflush(stdout);
        exit(1);
}

static void reply(int fd, uint64_t unique, int error, const void *body, size_t len) {
        char buf[sizeof(struct fuse_out_header) + 4096];
        struct fuse_out_header h = { .len = (uint32_t) (sizeof h + len),
                                     .error = error,
                                     .unique = unique };
        memcpy(buf, &h, sizeof h);
        if (len)
                memcpy(buf + sizeof h, body, len);
        (void) !write(fd, buf, sizeof h + len);
}

static void attr_of(uint64_t node, struct fuse_attr *a) {
        *a = (struct fuse_attr) { .ino = node, .nlink = 1, .blksize = 4096 };
        a->mode = node == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0666;
        if (node != FUSE_ROOT_ID) {
                a->size = 1 << 20;
                a->blocks = (1 << 20) / 512;
        }
}

/* INIT, LOOKUP and GETATTR of the root and blk, OPEN, READ (zeros);
 * WRITE never answered; the rest ENOSYS. */
static void serve(int fd) {
        static char buf[1 << 21];
        static const char zeros[4096];
        for (;;) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < (ssize_t) sizeof(struct fuse_in_header))
                        _exit(0);
                const struct fuse_in_header *in = (const void *) buf;
                const char *arg = buf + sizeof *in;
                if (in->opcode == FUSE_INIT) {
                        struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
                                                   .minor = FUSE_KERNEL_MINOR_VERSION,
                                                   .max_write = 4096 };
                        reply(fd, in->unique, 0, &o, sizeof o);
                } else if (in->opcode == FUSE_LOOKUP) {
                        struct fuse_entry_out e = { .nodeid = 2, .generation = 1 };
                        attr_of(2, &e.attr);
                        if (strcmp(arg, "blk") == 0)
                                reply(fd, in->unique, 0, &e, sizeof e);
                        else
                                reply(fd, in->unique, -ENOENT, NULL, 0);
                } else if (in->opcode == FUSE_GETATTR) {
                        struct fuse_attr_out o = { .attr_valid = 60 };
                        attr_of(in->nodeid, &o.attr);
                        reply(fd, in->unique, 0, &o, sizeof o);
                } else if (in->opcode == FUSE_OPEN) {
                        struct fuse_open_out o = { .fh = 1 };
                        reply(fd, in->unique, 0, &o, sizeof o);
                } else if (in->opcode == FUSE_READ) {
                        const struct fuse_read_in *r = (const void *) arg;
                        reply(fd, in->unique, 0, zeros,
                              r->size < sizeof zeros ? r->size : sizeof zeros);
                } else if (in->opcode != FUSE_WRITE && in->opcode != FUSE_INTERRUPT &&
                           in->opcode != FUSE_FORGET && in->opcode != FUSE_BATCH_FORGET)
                        reply(fd, in->unique, -ENOSYS, NULL, 0);
        }
}

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text))
                die(path);
        (void) close(fd);
}

static char *area;

static void *writer(void *data) {
        (void) data;
        (void) usleep(200 * 1000);
        (void) mprotect(area, 4096, PROT_READ);
        return NULL;
}

static void *store(void *data) {
        (void) data;
        area[0] = 2;
        return NULL;
}

int main(int argc, char **argv) {
        char opts[160], map[64], path[4096];
        pthread_t w, s;
        if (argc != 3) {
                fprintf(stderr, "usage: xdt-mapstall UID DIR\n");
                return 2;
        }
        uid_t uid = (uid_t) strtoul(argv[1], NULL, 10);
        const char *dir = argv[2];
        if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                die("dropping to the user");
        (void) prctl(PR_SET_DUMPABLE, 1);
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                die("a user namespace of its own");
        write_file("/proc/self/setgroups", "deny");
        (void) snprintf(map, sizeof map, "0 %u 1", (unsigned) uid);
        write_file("/proc/self/uid_map", map);
        (void) snprintf(map, sizeof map, "0 %u 1", (unsigned) uid);
        write_file("/proc/self/gid_map", map);
        int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fd < 0)
                die("/dev/fuse");
        (void) snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
        if (mount("xdt-stall", dir, "fuse", MS_NOSUID | MS_NODEV, opts) < 0)
                die("mounting FUSE");
        pid_t server = fork();
        if (server < 0)
                die("fork");
        if (server == 0)
                serve(fd);
        (void) close(fd);
        (void) snprintf(path, sizeof path, "%s/blk", dir);
        int bf = open(path, O_RDWR | O_CLOEXEC);
        if (bf < 0)
                die(path);
        area = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, bf, 0);
        if (area == MAP_FAILED)
                die("mmap");
        area[0] = 1; /* read in, made writable, dirty */
        if (sync_file_range(bf, 0, 4096, SYNC_FILE_RANGE_WRITE) < 0)
                die("sync_file_range");
        (void) usleep(100 * 1000);
        /* said before the threads: once the map lock waits for its
         * writer, a fault of this thread (a new page of stdio's buffer)
         * waits too (Linux 6.1) */
        printf("stall ready pid=%d server=%d\n", (int) getpid(), (int) server);
        fflush(stdout);
        if (pthread_create(&w, NULL, writer, NULL) != 0 ||
            pthread_create(&s, NULL, store, NULL) != 0)
                die("threads");
        for (;;)
                (void) pause();
}
