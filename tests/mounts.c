/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Making a new mount namespace private where / is not a mount point: in a
 * plain chroot, mount(MS_REC | MS_PRIVATE) on "/" fails with EINVAL, and
 * the mount that must become private, the one holding the chroot's
 * directory, lies above the root. Skipping it would let the tests' tmpfs
 * on /run and their bind mounts propagate to the host when that mount is
 * shared (as systemd makes /). So, in the new namespace only, the process
 * steps out of the chroot to the namespace's root (root may: a chroot is
 * no jail for it), makes everything private there, and steps back in. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mounts.h"

#define STEP(s) (*ret_step = (s), -errno)

/* From inside the chroot to the namespace's root: chroot into a new
 * directory below the current root leaves the working directory outside
 * the root, from where ".." climbs to the top. */
static int chroot_leave(const char *dir, const char **ret_step) {
        int r = 0;

        if (chdir("/") < 0 || chroot(dir) < 0)
                r = STEP("chroot into a directory below the root");
        for (int i = 0; r == 0 && i < 256; i++)
                if (chdir("..") < 0)
                        r = STEP("chdir ..");
        if (r == 0 && chroot(".") < 0)
                r = STEP("chroot to the namespace's root");
        return r;
}

int h_mounts_make_private(const char **ret_step) {
        char dir[] = "/tmp/.xdevtest-chroot-XXXXXX";
        int oldroot, r;

        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
                return 0;
        if (errno != EINVAL)
                return STEP("make-rprivate /");
        /* / is not a mount point: a plain chroot */
        oldroot = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (oldroot < 0)
                return STEP("open /");
        if (!mkdtemp(dir)) {
                r = STEP("mkdtemp in /tmp");
                (void) close(oldroot);
                return r;
        }
        r = chroot_leave(dir, ret_step);
        if (r == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                r = STEP("make-rprivate the namespace's root");
        if (fchdir(oldroot) < 0 || chroot(".") < 0 || chdir("/") < 0) {
                /* not back in the chroot: never go on outside it */
                *ret_step = "chroot back into the chroot";
                abort();
        }
        (void) close(oldroot);
        (void) rmdir(dir);
        return r;
}
