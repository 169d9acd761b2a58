/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registered files an io_uring's /proc fdinfo lists, read in bounded
 * memory however long it is; and the rings a process has mapped, from its
 * /proc maps, which show a ring that no fd names any more. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads the fdinfo of a ring from FD to its end and looks in its
 * "UserFiles:" list for one of the nodes PATHS (absolute, each shorter than
 * 64 bytes): a listed path that is one of them whole, or, as an older
 * kernel prints it, a bare name that is one's last component. Each listed file adds one to *COST; past
 * BUDGET the reading stops. Returns 1 (the first name found in *RET_INDEX),
 * 0 when none is listed, -E2BIG past the budget, -EAGAIN when the ring's
 * files were not listed (the kernel could not take the ring's lock: no
 * "UserFiles:" line, or on older kernels its count with no line under it):
 * unknown, not empty; -errno when FD cannot be read. *RET_INO gets the
 * ring's inode from the "ino:" line above the list (0 without one): the
 * ring whose files were read, whichever file the fd number named before. */
int xdev_uring_fdinfo_find(int fd, const char *const *paths, size_t n_paths, unsigned budget,
                           unsigned *cost, size_t *ret_index, uint64_t *ret_ino);

/* The distinct rings (each its own anonymous inode) one process maps. */
#define XDEV_URING_MAPPED_MAX 64
struct xdev_uring_mapped {
        size_t n;
        bool overflow; /* more than XDEV_URING_MAPPED_MAX: the rest not kept */
        dev_t dev[XDEV_URING_MAPPED_MAX];
        uint64_t ino[XDEV_URING_MAPPED_MAX];
};

/* Reads a /proc/PID/maps text from FD to its end and keeps the device and
 * inode of each mapping the kernel names "anon_inode:[io_uring]" (any part
 * of a ring: its SQ or CQ ring, its SQEs, a buffer ring), each ring once.
 * Each line read adds one to *LINES; past MAX_LINES the reading stops.
 * Returns 0 (*RET filled), -E2BIG past MAX_LINES, -EIO when a line names a
 * ring but its fields do not parse, or -errno when FD cannot be read; on
 * failure *RET is left alone. */
int xdev_uring_maps_read(int fd, size_t max_lines, size_t *lines, struct xdev_uring_mapped *ret);

/* Reads maps texts for its owner, who waits for each read no longer than
 * it chose. Reading /proc/PID/maps takes that process's memory map lock; a
 * process can keep it from being taken for as long as it likes, at no CPU
 * cost (a page of its own FUSE file under a writeback its server never
 * answers, written to again by one thread while another changes that
 * mapping), and a read would wait behind it for ever, with whatever lock
 * its reader holds (doc/DESIGN.md §3.5.4). Each read is made by a task of
 * its own that is killed when it does not come back in time. Zero-
 * initialised; xdev_uring_maps_reader_done() frees what it keeps. */
struct xdev_uring_maps_reader {
        void *stack; /* the reading task's, kept from one read to the next */
};

/* Reads FD as xdev_uring_maps_read() does, waiting at most TIMEOUT_MS.
 * Returns its result (*LINES, *RET as it gives them), -ETIMEDOUT when the
 * read did not come back in time (it is ended), or -errno when it could
 * not be started. FD is closed in every case. */
int xdev_uring_maps_read_within(struct xdev_uring_maps_reader *r, int fd, size_t max_lines,
                                unsigned timeout_ms, size_t *lines, struct xdev_uring_mapped *ret);

/* Frees what R keeps; R can be used again. */
void xdev_uring_maps_reader_done(struct xdev_uring_maps_reader *r);
