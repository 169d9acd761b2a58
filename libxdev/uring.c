/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registered files an io_uring's fdinfo lists. The kernel prints them
 * as "%5u: NAME" after a "UserFiles:\t%u" line (NAME a dentry name on older
 * kernels, a path escaped by seq_file on newer ones, so that no name holds a
 * newline); the list may be as long as RLIMIT_NOFILE, and a user chooses
 * the names. Rules this file keeps:
 *  1. Bounded memory: a line is kept as its head and its tail, whatever its
 *     length, and the file is read in fixed chunks to its end.
 *  2. A name is matched only when it is whole: a line whose middle was
 *     dropped matches only by a last component that lies in its tail. */
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

/* For a line of the list ("   7: name", "100000: /dev/x"): 0 and the index
 * of the name its last component is, -1 for none or a line of another
 * kind. */
static int line_match(const struct line *l, const char *const *names, size_t n_names, size_t *ret) {
        const char *b = l->buf, *end = l->buf + l->len, *name;
        size_t i = 0, len;

        while (i < l->len && b[i] == ' ')
                i++;
        if (i >= l->len || b[i] < '0' || b[i] > '9')
                return -1;
        while (i < l->len && b[i] >= '0' && b[i] <= '9')
                i++;
        /* the kernel's "%5u: " is 12 bytes at most: it lies in the head */
        if (i + 2 > l->len || i + 2 > LINE_HEAD || b[i] != ':' || b[i + 1] != ' ')
                return -1;
        name = b + i + 2;
        for (const char *c = end; c-- > name;)
                if (*c == '/') {
                        name = c + 1;
                        break;
                }
        /* cut: a component that starts in the head or right at the cut
         * runs through the dropped middle, longer than any name */
        if (l->cut && name <= b + LINE_HEAD)
                return -1;
        len = (size_t) (end - name);
        for (size_t k = 0; k < n_names; k++)
                if (strlen(names[k]) == len && memcmp(names[k], name, len) == 0) {
                        *ret = k;
                        return 0;
                }
        return -1;
}

int xdev_uring_fdinfo_find(int fd, const char *const *names, size_t n_names, unsigned budget,
                           unsigned *cost, size_t *ret_index) {
        struct line line = { .len = 0 };
        bool in_list = false;
        char buf[16384];

        for (;;) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0; /* a last line without '\n' is not whole */
                for (const char *c = buf, *e = buf + n; c < e;) {
                        const char *nl = memchr(c, '\n', (size_t) (e - c));
                        line_add(&line, c, (size_t) ((nl ? nl : e) - c));
                        if (!nl)
                                break;
                        c = nl + 1;
                        /* Every line after the tag, to the end: an old
                         * kernel prints names unescaped, and a name with a
                         * newline must not end the list early. Such a name
                         * can at worst make a line that matches, which
                         * ends its own process. */
                        if (in_list) {
                                if (line_match(&line, names, n_names, ret_index) == 0)
                                        return 1;
                                if (++*cost > budget)
                                        return -E2BIG;
                        } else if (line.len >= 10 && memcmp(line.buf, "UserFiles:", 10) == 0)
                                in_list = true;
                        line.len = 0;
                        line.cut = false;
                }
        }
}
