/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the io_uring rings a process's /proc/PID/maps shows
 * (libxdev/uring.c), whose file names a user chooses. The input is the
 * maps text; the bounded reader must keep exactly the rings a reader of
 * whole lines keeps, stop at its line budget, and leave its result alone
 * when it fails. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fuzz.h"
#include "uring.h"

static const char ring_name[] = "anon_inode:[io_uring]";
#define NAME_LEN (sizeof ring_name - 1)
#define KEPT_MAX 256 /* the reader's whole-line buffer */

/* The oracle, on whole lines in memory. A count of DIGITS (hex or
 * decimal) at the start of S (LEN bytes) and its value; false for none,
 * more than MAX of them, or a value past 64 bits. */
static bool number(const char *s, size_t len, bool hex, size_t max, size_t *used, uint64_t *v) {
        size_t k = 0;
        *v = 0;
        while (k < len) {
                char c = s[k];
                unsigned d;
                if (c >= '0' && c <= '9')
                        d = (unsigned) (c - '0');
                else if (hex && c >= 'a' && c <= 'f')
                        d = (unsigned) (c - 'a' + 10);
                else
                        break;
                if (k == max || *v > (UINT64_MAX - d) / (hex ? 16 : 10))
                        return false;
                *v = *v * (hex ? 16 : 10) + d;
                k++;
        }
        *used = k;
        return k > 0;
}

/* One line: 1 a ring (*DEV, *INO), 0 none, -EIO a ring's name after
 * fields that do not parse. */
static int ref_line(const char *l, size_t len, dev_t *dev, uint64_t *ino) {
        uint64_t v[6];
        size_t i = 0, used, end;

        if (len > KEPT_MAX || len < NAME_LEN + 1 || memcmp(l + len - NAME_LEN, ring_name, NAME_LEN))
                return 0;
        end = len - NAME_LEN;
        /* start-end perms offset maj:min inode: the perms stand apart */
        static const struct {
                bool hex;
                size_t max;
        } f[6] = { { true, 16 }, { true, 16 }, { true, 16 },
                   { true, 3 },  { true, 5 },  { false, SIZE_MAX } };
        for (int k = 0; k < 6; k++) {
                if (!number(l + i, end - i, f[k].hex, f[k].max, &used, &v[k]))
                        return -EIO;
                i += used;
                if (k == 1) { /* " rwxs " */
                        if (end - i < 6 || l[i] != ' ' || l[i + 5] != ' ')
                                return -EIO;
                        for (int p = 0; p < 4; p++)
                                if (l[i + 1 + p] != "rwxs"[p] && l[i + 1 + p] != "---p"[p])
                                        return -EIO;
                        i += 6;
                        continue;
                }
                if (k < 5) {
                        char want = k == 0 ? '-' : k == 3 ? ':' : ' ';
                        if (i >= end || l[i] != want)
                                return -EIO;
                        i++;
                }
        }
        if (i == end)
                return -EIO;
        while (i < end && l[i] == ' ')
                i++;
        if (i != end)
                return 0;
        *dev = makedev((unsigned) v[3], (unsigned) v[4]);
        *ino = v[5];
        return 1;
}

static int reference(const char *d, size_t size, size_t max, struct xdev_uring_mapped *m,
                     size_t *lines) {
        *m = (struct xdev_uring_mapped) { .n = 0 };
        *lines = 0;
        for (size_t s = 0; s < size;) {
                const char *nl = memchr(d + s, '\n', size - s);
                size_t len = nl ? (size_t) (nl - (d + s)) : size - s;
                const char *l = d + s;
                dev_t dev;
                uint64_t ino;
                bool seen = false;

                s += len + 1;
                if (++*lines > max)
                        return -E2BIG;
                int r = ref_line(l, len, &dev, &ino);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                for (size_t k = 0; k < m->n; k++)
                        seen = seen || (m->dev[k] == dev && m->ino[k] == ino);
                if (seen)
                        continue;
                if (m->n == XDEV_URING_MAPPED_MAX)
                        m->overflow = true;
                else {
                        m->dev[m->n] = dev;
                        m->ino[m->n++] = ino;
                }
        }
        return 0;
}

static int run(int fd, size_t max, size_t *lines, struct xdev_uring_mapped *m) {
        off_t at = lseek(fd, 0, SEEK_SET);
        assert(at == 0);
        *lines = 0;
        return xdev_uring_maps_read(fd, max, lines, m);
}

static bool same(const struct xdev_uring_mapped *a, const struct xdev_uring_mapped *b) {
        if (a->n != b->n || a->overflow != b->overflow)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (a->dev[i] != b->dev[i] || a->ino[i] != b->ino[i])
                        return false;
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static struct xdev_uring_mapped want, got, untouched;
        size_t want_lines, lines;
        int want_r = reference((const char *) data, size, SIZE_MAX, &want, &want_lines);
        int fd = fuzz_memfd("fuzz-maps", data, size), r;

        if (fd < 0)
                return 0;
        memset(&untouched, 0xa5, sizeof untouched);
        got = untouched;
        r = run(fd, SIZE_MAX, &lines, &got);
        assert(r == want_r);
        assert(lines == want_lines);
        if (r == 0)
                assert(same(&got, &want));
        else
                assert(memcmp(&got, &untouched, sizeof got) == 0);
        /* a budget of 3 lines: the same answer, or stopped past it */
        got = untouched;
        r = run(fd, 3, &lines, &got);
        want_r = reference((const char *) data, size, 3, &want, &want_lines);
        assert(r == want_r && lines == want_lines && lines <= 4);
        if (r == -E2BIG)
                assert(lines == 4);
        if (r == 0)
                assert(same(&got, &want));
        else
                assert(memcmp(&got, &untouched, sizeof got) == 0);
        (void) close(fd);
        return 0;
}
