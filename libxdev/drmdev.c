/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The DRM device's master ioctls and primary nodes (drmdev.h). */
#include "config.h"

#include <drm.h>
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "drmdev.h"

bool xdev_drm_path_is_primary(const char *path) {
        return strncmp(path, "/dev/dri/card", 13) == 0;
}

int xdev_drm_set_master(int fd) {
        return ioctl(fd, DRM_IOCTL_SET_MASTER, 0) == 0 ? 0 : -errno;
}

int xdev_drm_drop_master(int fd) {
        return ioctl(fd, DRM_IOCTL_DROP_MASTER, 0) == 0 ? 0 : -errno;
}
