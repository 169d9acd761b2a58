/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding the shared devices: udev's "xdevices" tag, or the config's globs;
 * announcing one again. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "conf.h"
#include "util.h"

#define XDEV_UDEV_TAG "xdevices"

struct xdev_device {
        char *path;
        enum xdev_class class;
        dev_t devnum; /* what udev says; 0 when found by glob */
};

struct xdev_device_list {
        struct xdev_device *items;
        size_t n;
        size_t cap;
};

void xdev_device_list_free(struct xdev_device_list *list);

/* Lists the shared devices of every enabled class (not the login VT).
 * Source "auto" is udev when udevd runs (/run/udev/control), else globs. */
int xdev_devices_enumerate(const struct xdev_config *config, struct xdev_device_list *list,
                           const struct xdev_log *log);

/* The source "auto" stands for here and now: udev or globs. */
enum xdev_source xdev_devices_source(const struct xdev_config *config);

/* Why a holder gets no node of a shared class CONFIG turns on, as one
 * phrase into BUF ("" when there is no reason to give): first what the
 * config and the system lack (no udevd and no glob lines), then, with
 * COUNTS (nodes granted per class), each class that is on and got none. */
void xdev_devices_explain(const struct xdev_config *config, const unsigned *counts, char *buf,
                          size_t size);

/* The argument of xdevicesd's announcements: the kernel passes it to udev
 * as SYNTH_ARG_XDEVICES=announce, for which 72-xdevices.rules runs no
 * helper (doc/DESIGN.md §3.10). */
#define XDEV_ANNOUNCE_ARG "XDEVICES=announce"

/* Asks the kernel to announce the character device RDEV again: writes
 * "change UUID XDEVICES=announce" to /sys/dev/char/MAJ:MIN/uevent, a
 * synthetic change event that udev runs its rules for and passes on to its
 * listeners (an X server's udev backend removes and adds the device anew,
 * opening it again); a kernel that takes no arguments gets "change". 0 or
 * -errno. */
int xdev_device_announce(dev_t rdev);
