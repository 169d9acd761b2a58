/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registered files an io_uring's fdinfo lists. The kernel prints them
 * as "%5u: NAME" after a "UserFiles:\t%u" line (NAME a dentry name on older
 * kernels, a path escaped by seq_file on newer ones, so that no name holds a
 * newline); the list may be as long as RLIMIT_NOFILE, and a user chooses
 * the names. Rules this file keeps:
 *  1. Bounded memory: a line is kept as its head and its tail, whatever its
 *     length, and the file is read in fixed chunks to its end.
 *  2. A file is matched by its identity as the kernel prints it: a path
 *     (newer kernels) only by the whole path of a node, a bare name (older
 *     kernels, which print no more) by a node's last component. A line
 *     whose middle was dropped is longer than any node's path: no match. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "uring.h"

#define LINE_HEAD 32  /* the index and ": " */
#define LINE_TAIL 160 /* more than any name looked for */

struct line {
        char buf[LINE_HEAD + LINE_TAIL];
        size_t len;
        bool cut; /* the middle was dropped: buf is head then tail */
};

static void line_add(struct line *l, const char *seg, size_t n) {
        size_t room = sizeof l->buf - l->len, k;

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
        if (n >= LINE_TAIL) {
                memcpy(l->buf + LINE_HEAD, seg + n - LINE_TAIL, LINE_TAIL);
                return;
        }
        k = LINE_TAIL - n;
        memmove(l->buf + LINE_HEAD, l->buf + LINE_HEAD + LINE_TAIL - k, k);
        memcpy(l->buf + LINE_HEAD + k, seg, n);
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
        bool in_list;
        unsigned long count;  /* the files the tag counts */
        unsigned long listed; /* index lines after it (files, then buffers) */
};

/* One whole line. 1: a path found; 0: go on; -E2BIG: past the budget. */
static int scan_line(struct scan *sc, const struct line *l, const char *const *paths,
                     size_t n_paths, unsigned budget, unsigned *cost, size_t *ret_index) {
        /* Every line after the tag, to the end: an old kernel prints names
         * unescaped, and a name with a newline must not end the list early.
         * Such a name can at worst make a line that matches, which ends its
         * own process. */
        if (sc->in_list) {
                if (line_match(l, paths, n_paths, ret_index) == 0)
                        return 1;
                if (line_index_end(l) != 0)
                        sc->listed++;
                if (++*cost > budget)
                        return -E2BIG;
        } else if (l->len >= 10 && memcmp(l->buf, "UserFiles:", 10) == 0) {
                sc->in_list = true;
                sc->count = tag_count(l);
        }
        return 0;
}

int xdev_uring_fdinfo_find(int fd, const char *const *paths, size_t n_paths, unsigned budget,
                           unsigned *cost, size_t *ret_index) {
        struct line line = { .len = 0 };
        struct scan sc = { .in_list = false };
        char buf[16384];

        for (;;) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0) /* a last line without '\n' is not whole */
                        return !sc.in_list || (sc.count > 0 && sc.listed == 0) ? -EAGAIN : 0;
                for (const char *c = buf, *e = buf + n; c < e;) {
                        const char *nl = memchr(c, '\n', (size_t) (e - c));
                        line_add(&line, c, (size_t) ((nl ? nl : e) - c));
                        if (!nl)
                                break;
                        c = nl + 1;
                        int r = scan_line(&sc, &line, paths, n_paths, budget, cost, ret_index);
                        if (r != 0)
                                return r;
                        line.len = 0;
                        line.cut = false;
                }
        }
}
