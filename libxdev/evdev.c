/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The input device's ioctls that cut an open file off (evdev.h). */
#include "config.h"

#include <errno.h>
#include <linux/input.h>
#include <stddef.h>
#include <sys/ioctl.h>

#include "evdev.h"

int xdev_evdev_revoke(int fd) {
        return ioctl(fd, EVIOCREVOKE, NULL) == 0 ? 0 : -errno;
}

bool xdev_evdev_is_revoked(int fd) {
        int version;

        return ioctl(fd, EVIOCGVERSION, &version) < 0 && errno == ENODEV;
}
