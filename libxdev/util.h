/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small shared helpers of the core: logging sink, number parsing, /proc. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#define XDEV_EXPORT __attribute__((visibility("default")))
#define XDEV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define XDEV_ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* The core never decides where messages go: each front-end hands it a sink
 * (pam_syslog in the module, syslog/stderr in the helper). */
typedef void (*xdev_log_fn)(void *userdata, int priority, const char *fmt, va_list ap);

struct xdev_log {
        xdev_log_fn fn;
        void *userdata;
        bool debug;
};

void xdev_log(const struct xdev_log *log, int priority, const char *fmt, ...) XDEV_PRINTF(3, 4);
#define xdev_debug(log, ...) \
        do { \
                if ((log) && (log)->debug) \
                        xdev_log((log), LOG_DEBUG, __VA_ARGS__); \
        } while (0)

/* Strict decimal parsing: no sign, no spaces, no leading zeros, in range. */
int xdev_parse_uint(const char *s, uint64_t max, uint64_t *ret);

/* CLOCK_MONOTONIC in milliseconds, for timing steps. */
double xdev_now_ms(void);

/* Whether FD became readable (POLLIN, or its end) within MS. A poll cut
 * short, by a signal or anything else, goes on with what is left of the
 * time; errno is not read (a task sharing this thread's memory may be
 * writing it). */
bool xdev_fd_readable_within(int fd, unsigned ms);

/* Names we store and print: portable user/service names only. */
bool xdev_name_is_valid(const char *s, size_t max);

/* Paths we act on: absolute, under /dev/, a closed charset, no . or .. parts. */
bool xdev_path_is_valid(const char *path);

/* Reads a regular file of SIZE bytes (from fstat) through FD into a new
 * NUL-terminated buffer. A file that is not exactly SIZE bytes long when
 * read (it changed meanwhile) gives -ESTALE, a read error -errno: never a
 * short read taken for the whole file. FAULT names a test fault point. */
int xdev_read_file(int fd, size_t size, const char *fault, char **ret);

/* One read() of the small file PATH below DIRFD (AT_FDCWD: PATH as it
 * is), its last component not followed if a link, into BUF of SIZE bytes,
 * NUL-terminated: what /proc and /sys give in one go. Returns the number of
 * bytes read or -errno. */
int xdev_read_small(int dirfd, const char *path, char *buf, size_t size);

/* The preconditions the header comments of the public functions state,
 * checked in test builds only (-DXDEV_ASSERTIONS: libxdev-test.la, which
 * the tests link): a failed one says where and what on stderr and aborts.
 * Elsewhere COND is not evaluated (it is still compiled). */
#ifdef XDEV_ASSERTIONS
_Noreturn void xdev_assert_failed(const char *cond, const char *file, int line, const char *func);
#define XDEV_ASSERT(cond) \
        ((cond) ? (void) 0 : xdev_assert_failed(#cond, __FILE__, __LINE__, __func__))
#else
#define XDEV_ASSERT(cond) ((void) sizeof(!(cond)))
#endif

/* Fault points for crash-consistency tests; compiled out of release builds. */
/* XDEV_FAULT=NAME:ACTION[@N] acts at the Nth (default first) time NAME is
 * reached: "kill", "abort", "stop" (SIGSTOP, then go on), or an errno name
 * (EIO, ENOSPC, EPERM, ENOTSUP, ENOENT) that is returned as -errno; callers
 * that cannot fail ignore the result. Returns 0 otherwise. */
#ifdef XDEV_FAULT_POINTS
int xdev_fault_point(const char *name);
#else
static inline int xdev_fault_point(const char *name) {
        (void) name;
        return 0;
}
#endif
