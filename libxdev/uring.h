/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registered files an io_uring's /proc fdinfo lists, read in bounded
 * memory however long it is. */
#pragma once

#include <stddef.h>

/* Reads the fdinfo of a ring from FD to its end and looks in its
 * "UserFiles:" list for one of the nodes PATHS (absolute, each shorter than
 * 64 bytes): a listed path that is one of them whole, or, as an older
 * kernel prints it, a bare name that is one's last component. Each listed file adds one to *COST; past
 * BUDGET the reading stops. Returns 1 (the first name found in *RET_INDEX),
 * 0 when none is listed, -E2BIG past the budget, -EAGAIN when the ring's
 * files were not listed (the kernel could not take the ring's lock: no
 * "UserFiles:" line, or on older kernels its count with no line under it):
 * unknown, not empty; -errno when FD cannot be read. */
int xdev_uring_fdinfo_find(int fd, const char *const *paths, size_t n_paths, unsigned budget,
                           unsigned *cost, size_t *ret_index);
