/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tests' private mount namespace, also where / is not a mount point. */
#pragma once

/* Call right after unshare(CLONE_NEWNS), as root: makes every mount of the
 * new namespace private, so that nothing a test mounts reaches another
 * namespace. Returns 0, or -errno with *RET_STEP naming what failed. */
int h_mounts_make_private(const char **ret_step);
