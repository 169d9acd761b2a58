/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The user's runtime directory (XDG_RUNTIME_DIR) where no logind makes one:
 * a tmpfs of her own at /run/user/UID, mounted at her first console login
 * and unmounted at her last, as logind does (doc/DESIGN.md §3.7). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util.h"

#define XDEV_RUNDIR_BASE "/run/user"
/* The mark on the root of a runtime directory this project mounted: a
 * trusted xattr, which only root can set, so a directory the user made or
 * another module mounted is never taken for ours and removed. */
#define XDEV_RUNDIR_MARK "trusted.xdevices.rundir"

/* Makes UID's runtime directory under BASE (XDEV_RUNDIR_BASE; another for
 * the tests), owned by UID and GID, mode 0700: BASE is made (0755, marked)
 * if it is missing and must be root's and writable by nobody else; BASE/UID is
 * made and a tmpfs mounted on it (nosuid, nodev, size 10% of RAM), marked.
 * A BASE/UID already there is used when it is UID's own directory of mode
 * 0700 and no link (ours, from another session, or another module's), and
 * refused otherwise. Its path goes to PATH. Returns 0 (made or ours
 * already), 1 (someone else's, used and never removed) or -errno, logged. */
int xdev_rundir_make(const char *base, uid_t uid, gid_t gid, const struct xdev_log *log, char *path,
                     size_t size);

/* Unmounts and removes UID's runtime directory under BASE if it is ours
 * (the mark, on a mount point), then BASE if it is marked and empty, so
 * that the last logout leaves /run as it found it. Returns 0 (removed), 1
 * (none, or not ours: left alone) or -errno, logged. */
int xdev_rundir_remove(const char *base, uid_t uid, const struct xdev_log *log);
