/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The guest probes' io_uring, raw syscalls, no liburing: its rings mapped
 * as liburing maps them, and the fields a reader of one request at a time
 * needs. Included by each probe that is built alone (build-image.sh). */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <linux/io_uring.h>
#include <sys/mman.h>

struct xdt_ring {
        unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
        struct io_uring_sqe *sqes;
        struct io_uring_cqe *cqes;
};

/* Maps the rings of RING, set up with P, into *R. 0 or -errno. */
static inline int xdt_ring_map(int ring, const struct io_uring_params *p, struct xdt_ring *r) {
        size_t sq_size = p->sq_off.array + p->sq_entries * sizeof(unsigned);
        size_t cq_size = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
        int single = (p->features & IORING_FEAT_SINGLE_MMAP) != 0;

        if (single)
                sq_size = cq_size = sq_size > cq_size ? sq_size : cq_size;
        char *sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                        IORING_OFF_SQ_RING);
        if (sq == MAP_FAILED)
                return -errno;
        char *cq = single ? sq
                          : mmap(NULL, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                                 ring, IORING_OFF_CQ_RING);
        if (cq == MAP_FAILED)
                return -errno;
        r->sqes = mmap(NULL, p->sq_entries * sizeof *r->sqes, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
        if (r->sqes == MAP_FAILED)
                return -errno;
        r->sq_tail = (unsigned *) (sq + p->sq_off.tail);
        r->sq_mask = (unsigned *) (sq + p->sq_off.ring_mask);
        r->sq_array = (unsigned *) (sq + p->sq_off.array);
        r->cq_head = (unsigned *) (cq + p->cq_off.head);
        r->cq_tail = (unsigned *) (cq + p->cq_off.tail);
        r->cq_mask = (unsigned *) (cq + p->cq_off.ring_mask);
        r->cqes = (struct io_uring_cqe *) (cq + p->cq_off.cqes);
        return 0;
}
