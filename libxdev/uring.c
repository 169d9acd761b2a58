/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registered files an io_uring's fdinfo lists, and the rings a process
 * maps (uring.h). The kernel prints the files
 * as "%5u: NAME" after a "UserFiles:\t%u" line (NAME a dentry name on older
 * kernels, a path escaped by seq_file on newer ones, so that no name holds a
 * newline); the list may be as long as RLIMIT_NOFILE, and a user chooses
 * the names. Rules this file keeps:
 *  1. Bounded memory: both files are read in fixed chunks to their end by
 *     one line reader (lines_read), which keeps a line whole up to a bound
 *     and a longer one as its head and its tail (fdinfo) or as cut (maps).
 *  2. A file is matched by its identity as the kernel prints it: a path
 *     (newer kernels) only by the whole path of a node, a bare name (older
 *     kernels, which print no more) by a node's last component. A line
 *     whose middle was dropped is longer than any node's path: no match.
 *  3. A ring is known in maps by what only the kernel writes there: the
 *     name "anon_inode:[io_uring]" whole, after fields that parse, on a line
 *     short enough to be kept whole. A user names files, never an anonymous
 *     inode, and the kernel escapes a newline in a name ("\012"). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uring.h"
#include "util.h"

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND (RUNNING_ON_VALGRIND != 0)
#else
#define UNDER_VALGRIND false
#endif

#define LINE_HEAD 32  /* the index and ": " */
#define LINE_TAIL 160 /* more than any name looked for */
#define LINE_KEPT 256 /* the most of a line any reader keeps */

/* A line as a reader keeps it: whole up to SIZE bytes (at most LINE_KEPT);
 * a longer one is CUT, and keeps its first HEAD bytes and its last SIZE -
 * HEAD (none when HEAD is SIZE: only that it was longer counts). */
struct line {
        char buf[LINE_KEPT];
        size_t size, head;
        size_t len;
        bool cut; /* longer than SIZE: BUF is its head, then its tail */
};

static void line_add(struct line *l, const char *seg, size_t n) {
        size_t room = l->size - l->len, tail = l->size - l->head, k;

        if (!l->cut && n <= room) {
                memcpy(l->buf + l->len, seg, n);
                l->len += n;
                return;
        }
        if (!l->cut) { /* fill up, then slide the tail */
                memcpy(l->buf + l->len, seg, room);
                l->len += room;
                seg += room;
                n -= room;
                l->cut = true;
        }
        if (tail == 0)
                return;
        if (n >= tail) {
                memcpy(l->buf + l->head, seg + n - tail, tail);
                return;
        }
        k = tail - n;
        memmove(l->buf + l->head, l->buf + l->head + tail - k, k);
        memcpy(l->buf + l->head + k, seg, n);
}

/* What lines_read hands each whole line (its '\n' read) to, with its DATA;
 * non-zero stops the reading. */
typedef int line_fn(void *data, const struct line *l);

/* Reads FD to its end in fixed chunks, each line kept in L as line_add
 * keeps it and handed to ON_LINE, until ON_LINE returns non-zero. Returns
 * that, 0 at the end, or -errno when FD cannot be read. A last line without
 * '\n' is left in L (its LEN or CUT set), for the caller to judge. */
static int lines_read(int fd, struct line *l, line_fn *on_line, void *data) {
        char buf[16384];
        ssize_t n;
        int r = 0;

        while (r == 0) {
                n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                for (const char *c = buf, *e = buf + n; c < e && r == 0;) {
                        const char *nl = memchr(c, '\n', (size_t) (e - c));
                        line_add(l, c, (size_t) ((nl ? nl : e) - c));
                        if (!nl)
                                break;
                        c = nl + 1;
                        r = on_line(data, l);
                        l->len = 0;
                        l->cut = false;
                }
        }
        return r;
}

/* Whether NAME (LEN bytes) is the node PATH as a ring's fdinfo prints it:
 * the whole path, or on an older kernel (no '/') its last component. */
static bool name_is(const char *name, size_t len, const char *path) {
        if (len > 0 && name[0] != '/') {
                const char *base = strrchr(path, '/');
                path = base ? base + 1 : path;
        }
        return strlen(path) == len && memcmp(path, name, len) == 0;
}

/* For a line of a list ("   7: name", "100000: /dev/x"): the offset of
 * what follows the index, 0 for a line of another kind. */
static size_t line_index_end(const struct line *l) {
        const char *b = l->buf;
        size_t i = 0;

        while (i < l->len && b[i] == ' ')
                i++;
        if (i >= l->len || b[i] < '0' || b[i] > '9')
                return 0;
        while (i < l->len && b[i] >= '0' && b[i] <= '9')
                i++;
        /* the kernel's "%5u: " is 12 bytes at most: it lies in the head */
        if (i + 2 > l->len || i + 2 > LINE_HEAD || b[i] != ':' || b[i + 1] != ' ')
                return 0;
        return i + 2;
}

/* For a line of the list: 0 and the index of the path it names, -1 for
 * none or a line of another kind. */
static int line_match(const struct line *l, const char *const *paths, size_t n_paths, size_t *ret) {
        const char *b = l->buf, *name;
        size_t i = line_index_end(l);

        if (l->cut || i == 0)
                return -1;
        name = b + i;
        for (size_t k = 0; k < n_paths; k++)
                if (name_is(name, (size_t) (b + l->len - name), paths[k])) {
                        *ret = k;
                        return 0;
                }
        return -1;
}

/* The count of a "UserFiles:\t%u" line (kept whole: it is short). */
static unsigned long tag_count(const struct line *l) {
        unsigned long v = 0;
        for (size_t i = 10; i < l->len && i < LINE_HEAD; i++) {
                if (l->buf[i] >= '0' && l->buf[i] <= '9')
                        v = v * 10 + (unsigned long) (l->buf[i] - '0');
                else if (v || (l->buf[i] != '\t' && l->buf[i] != ' '))
                        break;
        }
        return v;
}

struct scan {
        const char *const *paths; /* what is looked for, and how far */
        size_t n_paths;
        unsigned budget;
        unsigned *cost;
        size_t *ret_index;
        bool in_list;
        unsigned long count;  /* the files the tag counts */
        unsigned long listed; /* index lines after it (files, then buffers) */
        uint64_t ino;         /* of the "ino:\t%lu" line, 0 before it */
};

/* The inode of an "ino:\t%lu" line (above the list: the kernel's own). */
static uint64_t ino_value(const struct line *l) {
        uint64_t v = 0;
        size_t i = 4;

        while (i < l->len && i < LINE_HEAD && (l->buf[i] == '\t' || l->buf[i] == ' '))
                i++;
        for (; i < l->len && i < LINE_HEAD && l->buf[i] >= '0' && l->buf[i] <= '9'; i++) {
                if (v > (UINT64_MAX - 9) / 10)
                        return 0;
                v = v * 10 + (uint64_t) (l->buf[i] - '0');
        }
        return i == l->len ? v : 0;
}

/* One whole line of the scan DATA. 1: a path found; 0: go on; -E2BIG:
 * past the budget. */
static int scan_line(void *data, const struct line *l) {
        struct scan *sc = data;

        /* Every line after the tag, to the end: an old kernel prints names
         * unescaped, and a name with a newline must not end the list early.
         * Such a name can at worst make a line that matches, which ends its
         * own process. */
        if (sc->in_list) {
                if (line_match(l, sc->paths, sc->n_paths, sc->ret_index) == 0)
                        return 1;
                if (line_index_end(l) != 0)
                        sc->listed++;
                if (++*sc->cost > sc->budget)
                        return -E2BIG;
        } else if (l->len >= 10 && memcmp(l->buf, "UserFiles:", 10) == 0) {
                sc->in_list = true;
                sc->count = tag_count(l);
        } else if (l->len > 4 && memcmp(l->buf, "ino:", 4) == 0) {
                sc->ino = ino_value(l);
        }
        return 0;
}

int xdev_uring_fdinfo_find(int fd, const char *const *paths, size_t n_paths, unsigned budget,
                           unsigned *cost, size_t *ret_index, uint64_t *ret_ino) {
        struct line line = { .size = LINE_HEAD + LINE_TAIL, .head = LINE_HEAD };
        struct scan sc = {
                .paths = paths,
                .n_paths = n_paths,
                .budget = budget,
                .cost = cost,
                .ret_index = ret_index,
        };
        int r = lines_read(fd, &line, scan_line, &sc);

        if (ret_ino)
                *ret_ino = sc.ino;
        if (r != 0)
                return r;
        /* a last line without '\n' is not whole */
        return !sc.in_list || (sc.count > 0 && sc.listed == 0) ? -EAGAIN : 0;
}

/* A line of maps is kept whole up to this length. A ring's line is far
 * shorter: two addresses, the permissions, the offset, the device and the
 * inode, padding to column 73, then the 21 bytes of its name. */
#define MAPS_LINE_MAX LINE_KEPT
#define RING_NAME "anon_inode:[io_uring]"

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1; /* the kernel prints lower case */
}

/* Hex digits at *P (before END), at most MAX of them; false for none. */
static bool take_hex(const char **p, const char *end, size_t max, uint64_t *ret) {
        uint64_t v = 0;
        size_t k = 0;

        for (; *p < end && hex_digit(**p) >= 0; (*p)++, k++) {
                if (k == max)
                        return false;
                v = v << 4 | (uint64_t) hex_digit(**p);
        }
        *ret = v;
        return k > 0;
}

/* Decimal digits at *P (before END) that fit 64 bits; false for none. */
static bool take_dec(const char **p, const char *end, uint64_t *ret) {
        uint64_t v = 0;
        size_t k = 0;

        for (; *p < end && **p >= '0' && **p <= '9'; (*p)++, k++) {
                uint64_t d = (uint64_t) (**p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return k > 0;
}

static bool take_char(const char **p, const char *end, char c) {
        if (*p >= end || **p != c)
                return false;
        (*p)++;
        return true;
}

/* The permissions, "rwxs" with '-' for each one missing ('p' private). */
static bool take_perms(const char **p, const char *end) {
        static const char yes[] = "rwxs", no[] = "---p";

        if (end - *p < 4)
                return false;
        for (int i = 0; i < 4; i++)
                if ((*p)[i] != yes[i] && (*p)[i] != no[i])
                        return false;
        *p += 4;
        return true;
}

/* For a whole line L (LEN bytes) of maps, "START-END PERMS OFFSET MAJ:MIN
 * INODE   NAME": 1 and the ring's device and inode when NAME is the ring's
 * name whole, 0 for any other mapping (a file whose path only ends like
 * it), -EIO when the name is a ring's but the fields do not parse. */
static int maps_line_ring(const char *l, size_t len, dev_t *ret_dev, uint64_t *ret_ino) {
        const size_t nlen = sizeof RING_NAME - 1;
        const char *p = l, *end;
        uint64_t skip, maj, min, ino; /* SKIP: the addresses, the offset */

        if (len < nlen + 1 || memcmp(l + len - nlen, RING_NAME, nlen) != 0)
                return 0;
        end = l + len - nlen; /* the fields, then the padding */
        if (!take_hex(&p, end, 16, &skip) || !take_char(&p, end, '-') ||
            !take_hex(&p, end, 16, &skip) || !take_char(&p, end, ' ') || !take_perms(&p, end) ||
            !take_char(&p, end, ' ') || !take_hex(&p, end, 16, &skip) || !take_char(&p, end, ' ') ||
            !take_hex(&p, end, 3, &maj) || !take_char(&p, end, ':') ||
            !take_hex(&p, end, 5, &min) || !take_char(&p, end, ' ') || !take_dec(&p, end, &ino))
                return -EIO;
        /* the name starts after the padding: anything else before it is
         * part of another name ("/home/a/x anon_inode:[io_uring]") */
        if (p == end)
                return -EIO;
        while (p < end && *p == ' ')
                p++;
        if (p != end)
                return 0;
        *ret_dev = makedev((unsigned) maj, (unsigned) min);
        *ret_ino = ino;
        return 1;
}

static void mapped_add(struct xdev_uring_mapped *m, dev_t dev, uint64_t ino) {
        for (size_t i = 0; i < m->n; i++)
                if (m->dev[i] == dev && m->ino[i] == ino)
                        return;
        if (m->n == XDEV_URING_MAPPED_MAX) {
                m->overflow = true;
                return;
        }
        m->dev[m->n] = dev;
        m->ino[m->n++] = ino;
}

struct maps_scan {
        struct xdev_uring_mapped m;
        size_t max_lines;
        size_t *lines;
};

/* One line of the scan DATA, cut when it was longer than kept (no ring's).
 * 0, -E2BIG past its MAX_LINES lines, -EIO. */
static int maps_line(void *data, const struct line *l) {
        struct maps_scan *ms = data;
        dev_t dev;
        uint64_t ino;
        int r;

        if (++*ms->lines > ms->max_lines)
                return -E2BIG;
        if (l->cut)
                return 0;
        r = maps_line_ring(l->buf, l->len, &dev, &ino);
        if (r > 0)
                mapped_add(&ms->m, dev, ino);
        return r < 0 ? r : 0;
}

int xdev_uring_maps_read(int fd, size_t max_lines, size_t *lines, struct xdev_uring_mapped *ret) {
        struct line line = { .size = MAPS_LINE_MAX, .head = MAPS_LINE_MAX };
        struct maps_scan ms = { .m = { .n = 0 }, .max_lines = max_lines, .lines = lines };
        int r = lines_read(fd, &line, maps_line, &ms);

        /* the kernel ends every line; a last one without '\n' is read too */
        if (r == 0 && (line.len > 0 || line.cut))
                r = maps_line(&ms, &line);
        if (r < 0)
                return r;
        *ret = ms.m;
        return 0;
}

/* A maps read done by a task of its own: it shares the caller's memory
 * (CLONE_VM: it writes the result where the caller reads it) but is no
 * thread of the caller's process, so it can be killed alone (SIGKILL ends
 * a read that waits for the map lock: the wait is killable), a glibc
 * set*id() of the caller never waits for it (a PAM module's host, login,
 * changes its uids after the session opens), and it sends no SIGCHLD. It
 * runs only xdev_uring_maps_read(), which takes no lock and allocates
 * nothing; the caller waits on its pidfd meanwhile. */
struct maps_job {
        int fd;
        size_t max_lines, lines;
        int r;
        struct xdev_uring_mapped rings;
};

#define MAPS_TASK_STACK (128 * 1024)

static int maps_task(void *data) {
        struct maps_job *j = data;
        sigset_t all;

        (void) sigfillset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL);
        j->r = xdev_uring_maps_read(j->fd, j->max_lines, &j->lines, &j->rings);
        return 0;
}

static int pidfd_send(int pidfd, int sig) {
        return (int) syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Reaps the task, which has ended or was sent SIGKILL: it no longer runs
 * in user space, so errno is this thread's again. */
static void maps_task_reap(int pidfd) {
        siginfo_t si;

        while (waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED | __WALL) < 0 && errno == EINTR)
                ;
}

int xdev_uring_maps_read_within(struct xdev_uring_maps_reader *mr, int fd, size_t max_lines,
                                unsigned timeout_ms, size_t *lines, struct xdev_uring_mapped *ret) {
        struct maps_job job = { .fd = fd, .max_lines = max_lines, .r = -EIO };
        int pidfd = -1, r;
        bool ended;
        pid_t pid;

        if (!mr->stack) {
                void *st = mmap(NULL, MAPS_TASK_STACK, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
                if (st == MAP_FAILED) {
                        r = -errno;
                        (void) close(fd);
                        return r;
                }
                mr->stack = st;
        }
        if (UNDER_VALGRIND) {
                /* valgrind runs no CLONE_VM task that is not a thread
                 * (it exits): read here, without a bound */
                r = xdev_uring_maps_read(fd, max_lines, lines, ret);
                (void) close(fd);
                return r;
        }
        pid = clone(maps_task, (char *) mr->stack + MAPS_TASK_STACK,
                    CLONE_VM | CLONE_FILES | CLONE_PIDFD, &job, &pidfd);
        if (pid < 0) {
                r = -errno;
                (void) close(fd);
                return r;
        }
        ended = xdev_fd_readable_within(pidfd, timeout_ms);
        if (!ended) /* stuck behind the map lock: the killable wait ends */
                (void) pidfd_send(pidfd, SIGKILL);
        maps_task_reap(pidfd);
        (void) close(pidfd);
        (void) close(fd);
        if (!ended)
                return -ETIMEDOUT;
        *lines += job.lines;
        if (job.r == 0)
                *ret = job.rings;
        return job.r;
}

void xdev_uring_maps_reader_done(struct xdev_uring_maps_reader *mr) {
        if (mr->stack)
                (void) munmap(mr->stack, MAPS_TASK_STACK);
        mr->stack = NULL;
}
