/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The DRM device: its major, which of its nodes are primary (those with a
 * master), and how master is set and dropped. Written once for the sweeper
 * and for xdevices-vt-run's seat, which links it alone (libxdev-vt.la): it
 * uses nothing else of the core, and not libdrm. */
#pragma once

#include <stdbool.h>

/* /dev/dri/card*, renderD*: char 226:N */
#define XDEV_DRM_MAJOR 226
/* Minors from here are render nodes, which have no master; below, primary
 * nodes. */
#define XDEV_DRM_MINOR_RENDER 128

/* Whether PATH names a primary node, /dev/dri/card*. */
bool xdev_drm_path_is_primary(const char *path);

/* DRM_IOCTL_SET_MASTER and DRM_IOCTL_DROP_MASTER on FD (the kernel lets
 * the file that was master, or a CAP_SYS_ADMIN caller, do either). Return
 * 0 or -errno (-EINVAL: FD was not master, at a drop). */
int xdev_drm_set_master(int fd);
int xdev_drm_drop_master(int fd);
