/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether a logind (systemd-logind or elogind) manages the seats here: the
 * one test the module, xdevices and xdevicesd make before they stand down
 * (doc/DESIGN.md §3.8). */
#pragma once

#include <sys/types.h>

/* The file a running logind keeps for the console's seat. */
#define XDEV_LOGIND_SEAT0 "/run/systemd/seats/seat0"

struct xdev_logind {
        pid_t pid;     /* the logind process found */
        char name[16]; /* its comm: "systemd-logind", "elogind", ... */
};

/* A logind runs when XDEV_LOGIND_SEAT0 is a regular file and a live
 * process (not a zombie) of real and effective uid 0 has a logind's name
 * as its comm. A stale /run/systemd/seats (an image built under systemd,
 * booted without it) is not one; a user cannot fake one either, since only
 * root can name a root process. Returns 1 and fills *RET (may be NULL), 0
 * when none runs, or -errno when /proc cannot be read. */
int xdev_logind_find(struct xdev_logind *ret);
