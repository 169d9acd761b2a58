/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small shared helpers of the core: logging sink, number parsing, /proc. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/sysmacros.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <syslog.h>
#include <unistd.h>

#include "util.h"

void xdev_log(const struct xdev_log *log, int priority, const char *fmt, ...) {
        va_list ap;

        if (!log || !log->fn)
                return;
        if (priority == LOG_DEBUG && !log->debug)
                return;
        va_start(ap, fmt);
        log->fn(log->userdata, priority, fmt, ap);
        va_end(ap);
}

int xdev_parse_uint(const char *s, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (!s || !*s)
                return -EINVAL;
        if (s[0] == '0' && s[1] != '\0')
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - 9) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
                if (v > max)
                        return -ERANGE;
        }
        *ret = v;
        return 0;
}

int xdev_read_small(int dirfd, const char *path, char *buf, size_t size) {
        ssize_t n;
        int fd;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        (void) close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return (int) n;
}

double xdev_now_ms(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

bool xdev_fd_readable_within(int fd, unsigned ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        double end = xdev_now_ms() + ms;

        for (;;) {
                double left = end - xdev_now_ms();
                int r = poll(&p, 1, left > 0 ? (int) left + 1 : 0);
                if (r >= 0)
                        return r > 0; /* ready, or the time is up */
                if (left <= 0)
                        return false;
        }
}

bool xdev_name_is_valid(const char *s, size_t max) {
        size_t n;

        if (!s)
                return false;
        n = strlen(s);
        if (n == 0 || n > max || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-' || (c == '$' && i == n - 1)))
                        return false;
        }
        return true;
}

bool xdev_path_is_valid(const char *path) {
        size_t n;

        if (!path || strncmp(path, "/dev/", 5) != 0)
                return false;
        n = strlen(path);
        if (n <= 5 || n >= 256)
                return false;
        for (const char *p = path; *p; p++) {
                char c = *p;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-' || c == '+' || c == ':' || c == '/'))
                        return false;
        }
        /* Each component must be a plain name: no empty, "." or ".." parts. */
        for (const char *p = path + 1; *p;) {
                const char *slash = strchr(p, '/');
                size_t len = slash ? (size_t) (slash - p) : strlen(p);
                if (len == 0 || (len == 1 && p[0] == '.') ||
                    (len == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p += len;
                if (*p == '/')
                        p++;
                else
                        break;
        }
        return path[n - 1] != '/';
}

int xdev_read_file(int fd, size_t size, const char *fault, char **ret) {
        size_t len = 0;
        char *buf;
        int r;

        buf = malloc(size + 2); /* one byte more to see growth, and the NUL */
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n = read(fd, buf + len, size + 1 - len);
                r = xdev_fault_point(fault);
                if (r < 0)
                        goto fail;
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        goto fail;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len > size)
                        break;
        }
        if (len != size) {
                r = -ESTALE;
                goto fail;
        }
        buf[len] = '\0';
        *ret = buf;
        return 0;
fail:
        free(buf);
        return r;
}

#ifdef XDEV_ASSERTIONS
void xdev_assert_failed(const char *cond, const char *file, int line, const char *func) {
        fprintf(stderr, "%s:%d: %s: precondition failed: %s\n", file, line, func, cond);
        abort();
}
#endif

#ifdef XDEV_FAULT_POINTS
/* XDEV_FAULT=name:action[@N] (see util.h). Test builds only. */
int xdev_fault_point(const char *name) {
        static const struct {
                const char *name;
                int err;
        } errs[] = {
                { "EIO", EIO },         { "ENOSPC", ENOSPC }, { "EPERM", EPERM },
                { "ENOTSUP", ENOTSUP }, { "ENOENT", ENOENT },
        };
        static unsigned hits;
        const char *want = getenv("XDEV_FAULT"), *at;
        char action[16];
        size_t n = strlen(name), al;
        unsigned long nth = 1;

        if (!want || strncmp(want, name, n) != 0 || want[n] != ':')
                return 0;
        at = strchr(want + n + 1, '@');
        al = at ? (size_t) (at - (want + n + 1)) : strlen(want + n + 1);
        if (al >= sizeof action)
                abort();
        memcpy(action, want + n + 1, al);
        action[al] = '\0';
        if (at)
                nth = strtoul(at + 1, NULL, 10);
        if (++hits != nth)
                return 0;
        if (strcmp(action, "kill") == 0)
                (void) raise(SIGKILL);
        if (strcmp(action, "stop") == 0) {
                (void) raise(SIGSTOP);
                return 0;
        }
        for (size_t i = 0; i < XDEV_ELEMENTSOF(errs); i++)
                if (strcmp(action, errs[i].name) == 0)
                        return -errs[i].err;
        abort();
}
#endif
