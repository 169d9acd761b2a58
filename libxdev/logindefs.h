/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The machine's bound of system accounts, from login.defs(5): the highest
 * uid useradd gives a system account (SYS_UID_MAX, else UID_MIN - 1),
 * which the pass after the lock leaves alone (doc/DESIGN.md §3.5.10). The
 * file is root's and is read as hostile input all the same: no link
 * followed, its owner and mode checked, its size bounded, its numbers
 * strict decimals in a sane range. */
#pragma once

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include "util.h"

#define XDEV_LOGIN_DEFS "/etc/login.defs"
/* The bound when login.defs gives none, or is refused: login.defs' own
 * default (UID_MIN 1000, less one). No user can take a uid up to it, not
 * even through a user namespace. */
#define XDEV_SYSTEM_UID_MAX 999
#define XDEV_NOBODY_UID 65534
/* A bound is below nobody's uid; a larger one is refused. */
#define XDEV_SYSTEM_UID_LIMIT (XDEV_NOBODY_UID - 1)
/* A login.defs larger than this is refused (Debian's is 13 KiB). */
#define XDEV_LOGIN_DEFS_FILE_MAX (64 * 1024)

/* The longest warning a memo keeps whole. */
#define XDEV_LOGINDEFS_WARNING_MAX 512

/* What the loads through it last warned of, for a caller that loads the
 * file again and again (xdevicesd, at each pass after the lock), so that a
 * problem is one warning, not one a pass: the same warning again (the same
 * file, the same reason) is logged at debug level only, until a load that
 * warns of nothing (a good read, a missing file: a debug line says the
 * warning is past) or of something else; the next problem, or the same one
 * back, is a warning again. Loads through one memo may run in several
 * threads at once. Made with XDEV_LOGINDEFS_MEMO_INIT. */
struct xdev_logindefs_memo {
        pthread_mutex_t lock;
        char last[XDEV_LOGINDEFS_WARNING_MAX]; /* "": none */
};
#define XDEV_LOGINDEFS_MEMO_INIT \
        { .lock = PTHREAD_MUTEX_INITIALIZER, .last = "" }

/* Parses BUF, LEN bytes of login.defs(5) text (NUL bytes are no end), as
 * shadow reads it: a line is NAME, blanks, VALUE (in double quotes or
 * not), with blanks around; an empty line or one whose first non-blank is
 * '#' is a comment; the last line of a name counts. Sets *RET to
 * SYS_UID_MAX (0 to XDEV_SYSTEM_UID_LIMIT), else UID_MIN - 1 (UID_MIN 1 to
 * XDEV_NOBODY_UID), and returns 0. -ENOENT: neither is there; -EINVAL: the
 * one that counts is not a plain decimal in its range (a sign, a leading
 * zero, hex, an overflow, words after it), logged as "WHERE:LINE: ...".
 * *RET is left alone on failure. */
int xdev_logindefs_parse(const char *buf, size_t len, const char *where, const struct xdev_log *log,
                         uid_t *ret);

/* The bound of PATH (XDEV_LOGIN_DEFS, or a test's file) into *RET, always
 * set. Opened without following a link (nor blocking, nor becoming a
 * controlling tty); it must be a regular file owned by root, writable by
 * neither group nor others, and at most XDEV_LOGIN_DEFS_FILE_MAX bytes.
 * Returns 0 with the file's bound, or XDEV_SYSTEM_UID_MAX when it names
 * neither key; else -errno with *RET XDEV_SYSTEM_UID_MAX, each a warning
 * saying why (a missing file, -ENOENT, at debug only): -ELOOP a link,
 * -EPERM not a root-owned regular file or writable by others, -EFBIG too
 * large, -ESTALE changed while read, -EINVAL a bad value. The warning goes
 * through MEMO when not NULL (the same one again at debug level only);
 * with NULL every load that fails logs it. */
int xdev_logindefs_load(const char *path, const struct xdev_log *log,
                        struct xdev_logindefs_memo *memo, uid_t *ret);
