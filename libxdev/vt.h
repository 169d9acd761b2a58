/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The virtual console: its identity (char 4:N, /dev/ttyN, 1 <= N <= 63), how
 * to open it safely and how to put it back in text mode. Written once for
 * the core and for xdevices-vt-run, which links this file alone: it uses
 * nothing else of the core. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#define XDEV_VT_MAJOR 4
#define XDEV_VT_MAX 63
/* "/dev/tty63" and its NUL */
#define XDEV_VT_PATH_MAX 16

/* The device number of VT N (4:N). */
dev_t xdev_vt_devnum(unsigned vt);

/* True when DEVNUM is a VT, 4:N with 1 <= N <= XDEV_VT_MAX; *RET_VT (may
 * be NULL) gets N. */
bool xdev_vt_from_devnum(dev_t devnum, unsigned *ret_vt);

/* "/dev/ttyN" into BUF. */
void xdev_vt_path(char buf[static XDEV_VT_PATH_MAX], unsigned vt);

/* Accepts exactly "ttyN" or "/dev/ttyN" with 1 <= N <= XDEV_VT_MAX, no
 * leading zero, no sign. Returns 0 with *RET_VT, or -EINVAL. */
int xdev_vt_parse(const char *name, unsigned *ret_vt);

/* Opens VT N: each component of /dev/ttyN without following a link, the
 * node as O_PATH, checked to be the character device 4:N, then that same
 * inode with O_RDWR | O_NOCTTY | O_CLOEXEC and FLAGS (e.g. O_NONBLOCK),
 * never becoming a controlling tty. Returns the fd, -ENOTTY when the name
 * is not VT N's node (a link, another device), or -errno. */
int xdev_vt_open(unsigned vt, int flags);

/* Whether VT N is in graphics mode (KDGETMODE), which a display server
 * puts it in while it owns it. 1 graphics, 0 text, or -errno. */
int xdev_vt_is_graphics(unsigned vt);

/* The keyboard mode a VT starts in: Unicode when the kernel's default is
 * UTF-8 (vt.default_utf8, the default), else translated (K_XLATE). */
int xdev_vt_default_kbmode(void);

/* What a session can leave its VT in that makes the console unusable for
 * the next login: graphics mode, a keyboard mode that delivers no
 * characters, or VT switching handled by a process (that may be dead). */
enum {
        XDEV_VT_LEFT_GRAPHICS = 1 << 0,
        XDEV_VT_LEFT_KEYBOARD = 1 << 1,
        XDEV_VT_LEFT_PROCESS = 1 << 2,
};

/* Puts the VT open on FD back into text mode, the kernel's default
 * keyboard mode and VT_AUTO, as far as it was left otherwise; a VT in text
 * mode with a working keyboard mode (e.g. translated, as the user chose)
 * is left as it is. Sets *RET_WHAT to the XDEV_VT_LEFT_* flags of what was
 * changed. Returns 0 or the -errno of the first change refused (the others
 * are still tried). */
int xdev_vt_reset(int fd, unsigned *ret_what);

/* The VT in the foreground (from /sys/class/tty/tty0/active), or -errno. */
int xdev_vt_active(void);
