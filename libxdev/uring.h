/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registered files an io_uring's /proc fdinfo lists, read in bounded
 * memory however long it is. */
#pragma once

#include <stddef.h>

/* Reads the fdinfo of a ring from FD to its end and looks in its
 * "UserFiles:" list for a file whose last path component is one of NAMES
 * (each shorter than 64 bytes). Each listed file adds one to *COST; past
 * BUDGET the reading stops. Returns 1 (the first name found in *RET_INDEX),
 * 0 when none is listed, -E2BIG past the budget, -errno when FD cannot be
 * read. */
int xdev_uring_fdinfo_find(int fd, const char *const *names, size_t n_names, unsigned budget,
                           unsigned *cost, size_t *ret_index);
