/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The input device (evdev): its major, and how an open file of it is cut
 * off. Written once for the sweeper and for xdevices-vt-run's seat, which
 * links it alone (libxdev-vt.la): it uses nothing else of the core. */
#pragma once

#include <stdbool.h>

/* /dev/input/event*, mouse*, mice, js*: char 13:N */
#define XDEV_INPUT_MAJOR 13

/* EVIOCREVOKE on FD: that open file (every copy of it) reads and ioctls
 * nothing more and its grab is released, for good. Returns 0, or -errno:
 * -ENODEV when it was revoked already, -EINVAL when the node cannot be
 * revoked (mousedev, joydev). */
int xdev_evdev_revoke(int fd);

/* Whether FD is an input file that was revoked: it answers ENODEV to
 * every ioctl. */
bool xdev_evdev_is_revoked(int fd);
