/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* login.defs(5), for the one number the core needs of it: the highest uid
 * of a system account (doc/DESIGN.md §3.5.10). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "logindefs.h"

/* The digits of a uid, and room to see one more. */
#define VALUE_MAX 16
#define SHOWN_MAX 24

/* The value of a name, where its last line put it. */
struct defs_value {
        const char *p;
        size_t n;
        unsigned line;
        bool set;
};

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static bool is_space(char c) {
        return is_blank(c) || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool name_is(const char *p, size_t n, const char *name) {
        return n == strlen(name) && memcmp(p, name, n) == 0;
}

/* One line [S, E): a value of SYS_UID_MAX or UID_MIN into SYS or MIN. */
static void line_take(const char *s, const char *e, unsigned line, struct defs_value *sys,
                      struct defs_value *min) {
        struct defs_value *v;
        const char *name;

        while (e > s && is_space(e[-1]))
                e--;
        while (s < e && is_blank(*s))
                s++;
        if (s == e || *s == '#')
                return;
        name = s;
        while (s < e && !is_blank(*s))
                s++;
        v = name_is(name, (size_t) (s - name), "SYS_UID_MAX")   ? sys
                : name_is(name, (size_t) (s - name), "UID_MIN") ? min
                                                                : NULL;
        while (s < e && is_blank(*s))
                s++;
        if (!v || s == e) /* a name alone: shadow passes over it too */
                return;
        /* a value in double quotes: the pair taken off; a lone quote stays
         * and makes the value no number */
        if (e - s >= 2 && *s == '"' && e[-1] == '"') {
                s++;
                e--;
        }
        *v = (struct defs_value) { .p = s, .n = (size_t) (e - s), .line = line, .set = true };
}

/* V as a number from LOW to HIGH into *RET, or -EINVAL logged. */
static int value_number(const struct defs_value *v, const char *key, uint64_t low, uint64_t high,
                        const char *where, const struct xdev_log *log, uint64_t *ret) {
        char digits[VALUE_MAX + 1], shown[SHOWN_MAX + 4];
        size_t k = 0;
        uint64_t n;

        if (v->n <= VALUE_MAX) {
                memcpy(digits, v->p, v->n);
                digits[v->n] = '\0';
                if (memchr(digits, '\0', v->n) == NULL && xdev_parse_uint(digits, high, &n) == 0 &&
                    n >= low) {
                        *ret = n;
                        return 0;
                }
        }
        /* the value as a message may show it: printable ASCII, cut short */
        for (size_t i = 0; i < v->n && k < SHOWN_MAX; i++)
                shown[k++] = v->p[i] >= 0x20 && v->p[i] < 0x7f ? v->p[i] : '?';
        (void) snprintf(shown + k, sizeof shown - k, "%s", v->n > SHOWN_MAX ? "..." : "");
        xdev_log(log, LOG_WARNING,
                 "%s:%u: %s \"%s\" is not a decimal from %llu to %llu; system accounts taken as "
                 "uids up to %d",
                 where, v->line, key, shown, (unsigned long long) low, (unsigned long long) high,
                 XDEV_SYSTEM_UID_MAX);
        return -EINVAL;
}

int xdev_logindefs_parse(const char *buf, size_t len, const char *where, const struct xdev_log *log,
                         uid_t *ret) {
        struct defs_value sys = { 0 }, min = { 0 };
        unsigned line = 0;
        uint64_t n;
        int r;

        XDEV_ASSERT(buf || len == 0);
        for (size_t at = 0; at < len;) {
                const char *e = memchr(buf + at, '\n', len - at);
                size_t k = e ? (size_t) (e - (buf + at)) : len - at;
                line_take(buf + at, buf + at + k, ++line, &sys, &min);
                at += k + 1;
        }
        if (sys.set) {
                r = value_number(&sys, "SYS_UID_MAX", 0, XDEV_SYSTEM_UID_LIMIT, where, log, &n);
                if (r == 0)
                        *ret = (uid_t) n;
                return r;
        }
        if (min.set) {
                r = value_number(&min, "UID_MIN", 1, XDEV_NOBODY_UID, where, log, &n);
                if (r == 0)
                        *ret = (uid_t) (n - 1);
                return r;
        }
        return -ENOENT;
}

/* Opens PATH as hostile input and reads it whole into *RET (its size in
 * *RET_LEN); -errno, logged. */
static int defs_read(const char *path, const struct xdev_log *log, char **ret, size_t *ret_len) {
        const char *dflt = "system accounts taken as uids up to";
        struct stat st;
        int fd, r;

        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                if (r == -ENOENT)
                        xdev_debug(log, "%s: not there; %s %d", path, dflt, XDEV_SYSTEM_UID_MAX);
                else if (r == -ELOOP)
                        xdev_log(log, LOG_WARNING,
                                 "%s: a symbolic link, not followed; %s %d (system_uid_max in "
                                 "xdevices.conf sets it)",
                                 path, dflt, XDEV_SYSTEM_UID_MAX);
                else
                        xdev_log(log, LOG_WARNING, "%s: cannot open: %s; %s %d", path, strerror(-r),
                                 dflt, XDEV_SYSTEM_UID_MAX);
                return r;
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                xdev_log(log, LOG_WARNING, "%s: cannot stat: %s; %s %d", path, strerror(-r), dflt,
                         XDEV_SYSTEM_UID_MAX);
        } else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
                r = -EPERM;
                xdev_log(log, LOG_WARNING, "%s: %s; %s %d", path,
                         !S_ISREG(st.st_mode)     ? "not a regular file"
                                 : st.st_uid != 0 ? "not owned by root"
                                                  : "writable by group or others",
                         dflt, XDEV_SYSTEM_UID_MAX);
        } else if (st.st_size > XDEV_LOGIN_DEFS_FILE_MAX) {
                r = -EFBIG;
                xdev_log(log, LOG_WARNING, "%s: larger than %d bytes; %s %d", path,
                         XDEV_LOGIN_DEFS_FILE_MAX, dflt, XDEV_SYSTEM_UID_MAX);
        } else {
                r = xdev_read_file(fd, (size_t) st.st_size, "logindefs-read", ret);
                if (r < 0)
                        xdev_log(log, LOG_WARNING, "%s: cannot read: %s; %s %d", path,
                                 r == -ESTALE ? "it changed while being read" : strerror(-r), dflt,
                                 XDEV_SYSTEM_UID_MAX);
                else
                        *ret_len = (size_t) st.st_size;
        }
        (void) close(fd);
        return r;
}

/* The warning of one load, held until the load is over (a load gives one
 * at most), to be told through a memo; its debug lines go on at once. */
struct held {
        const struct xdev_log *log;
        int priority;
        char text[XDEV_LOGINDEFS_WARNING_MAX]; /* "": none */
};

static XDEV_PRINTF(3, 0) void held_sink(void *userdata, int priority, const char *fmt, va_list ap) {
        struct held *h = userdata;

        if (priority == LOG_DEBUG) {
                if (h->log && h->log->fn)
                        h->log->fn(h->log->userdata, priority, fmt, ap);
                return;
        }
        h->priority = priority;
        (void) vsnprintf(h->text, sizeof h->text, fmt, ap);
}

/* Logs H's warning of PATH, through MEMO when not NULL: one it holds
 * already at debug level, and the end of one it held at debug level. */
static void held_tell(const struct held *h, const char *path, const struct xdev_log *log,
                      struct xdev_logindefs_memo *memo) {
        bool again = false, past = false;

        if (memo) {
                (void) pthread_mutex_lock(&memo->lock);
                again = h->text[0] != '\0' && strcmp(memo->last, h->text) == 0;
                past = h->text[0] == '\0' && memo->last[0] != '\0';
                memcpy(memo->last, h->text, sizeof memo->last);
                (void) pthread_mutex_unlock(&memo->lock);
        }
        if (past)
                xdev_debug(log, "%s: the warning of before no longer holds", path);
        else if (again)
                xdev_debug(log, "%s (as before; a warning again once it changes)", h->text);
        else if (h->text[0] != '\0')
                xdev_log(log, h->priority, "%s", h->text);
}

/* xdev_logindefs_load's read and parse, its warning into LOG. */
static int defs_load(const char *path, const struct xdev_log *log, uid_t *ret) {
        char *buf = NULL;
        size_t len = 0;
        uid_t bound = XDEV_SYSTEM_UID_MAX;
        int r;

        r = defs_read(path, log, &buf, &len);
        if (r < 0)
                return r;
        r = xdev_logindefs_parse(buf, len, path, log, &bound);
        free(buf);
        if (r == -ENOENT) {
                xdev_debug(log,
                           "%s: neither SYS_UID_MAX nor UID_MIN; system accounts taken as "
                           "uids up to %d",
                           path, XDEV_SYSTEM_UID_MAX);
                return 0;
        }
        if (r == 0)
                *ret = bound;
        return r;
}

int xdev_logindefs_load(const char *path, const struct xdev_log *log,
                        struct xdev_logindefs_memo *memo, uid_t *ret) {
        struct held h = { .log = log };
        const struct xdev_log holder = { .fn = held_sink,
                                         .userdata = &h,
                                         .debug = log && log->debug };
        int r;

        XDEV_ASSERT(path && ret);
        *ret = XDEV_SYSTEM_UID_MAX;
        r = defs_load(path, &holder, ret);
        held_tell(&h, path, log, memo);
        return r;
}
