/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the registered files listed in an io_uring's fdinfo,
 * whose names a user chooses and whose length has no bound. The input is
 * the fdinfo; the bounded-memory reader must find exactly what a reader of
 * whole lines finds, and stop at its budget. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "uring.h"

static const char *const names[] = { "/dev/input/event2", "/dev/tty0", "/dev/input/js0",
                                     "/dev/dri/card0", "/dev/input/mice" };
#define N_NAMES (sizeof names / sizeof names[0])

/* The oracle: whole lines in memory. A list line is up to 32 bytes of
 * spaces, digits and ": ", then a path compared whole, or a bare name (an
 * older kernel's) compared with each path's last component. */
/* Whether an index line of up to 32 bytes ("%5u: ") starts L (LEN bytes);
 * *RET_END: where what follows it starts. */
static bool index_line(const char *l, size_t len, size_t *ret_end) {
        size_t i = 0;
        while (i < len && l[i] == ' ')
                i++;
        if (i >= len || l[i] < '0' || l[i] > '9')
                return false;
        while (i < len && l[i] >= '0' && l[i] <= '9')
                i++;
        if (i + 2 > len || i + 2 > 32 || l[i] != ':' || l[i + 1] != ' ')
                return false;
        *ret_end = i + 2;
        return true;
}

/* The value of an "ino:" line above the list: blanks, then digits to its
 * end within its first 32 bytes, or 0. */
static uint64_t ino_line(const char *l, size_t len) {
        uint64_t v = 0;
        size_t i = 4;

        if (len > 32)
                return 0;
        while (i < len && (l[i] == '\t' || l[i] == ' '))
                i++;
        for (; i < len; i++) {
                if (l[i] < '0' || l[i] > '9' || v > (UINT64_MAX - 9) / 10)
                        return 0;
                v = v * 10 + (uint64_t) (l[i] - '0');
        }
        return v;
}

/* 1 found (*RET), 0 none, -EAGAIN not listed: no tag, or a count > 0 with
 * no index line after the tag. *INO: the ring's, from the last "ino:"
 * line read before the tag (the reader stops where it finds). */
static int reference(const char *d, size_t size, size_t *ret, uint64_t *ino) {
        bool in_list = false;
        unsigned long count = 0, listed = 0;

        *ino = 0;

        for (size_t s = 0; s < size;) {
                const char *nl = memchr(d + s, '\n', size - s);
                if (!nl)
                        break;
                size_t len = (size_t) (nl - (d + s)), i = 0;
                const char *l = d + s;
                s += len + 1;
                if (!in_list && len > 4 && memcmp(l, "ino:", 4) == 0) {
                        *ino = ino_line(l, len);
                        continue;
                }
                if (!in_list) {
                        in_list = len >= 10 && memcmp(l, "UserFiles:", 10) == 0;
                        for (size_t k = 10; in_list && k < len && k < 32; k++) {
                                if (l[k] >= '0' && l[k] <= '9')
                                        count = count * 10 + (unsigned long) (l[k] - '0');
                                else if (count || (l[k] != '\t' && l[k] != ' '))
                                        break;
                        }
                        continue;
                }
                if (!index_line(l, len, &i))
                        continue;
                listed++;
                const char *name = l + i;
                size_t nlen = (size_t) (l + len - name);
                for (size_t k = 0; k < N_NAMES; k++) {
                        const char *want = names[k];
                        if (nlen > 0 && name[0] != '/')
                                want = strrchr(want, '/') + 1;
                        if (strlen(want) == nlen && memcmp(want, name, nlen) == 0) {
                                *ret = k;
                                return 1;
                        }
                }
        }
        return !in_list || (count > 0 && listed == 0) ? -EAGAIN : 0;
}

static int run(int fd, unsigned budget, unsigned *cost, size_t *idx, uint64_t *ino) {
        assert(lseek(fd, 0, SEEK_SET) == 0);
        *cost = 0;
        *idx = SIZE_MAX;
        return xdev_uring_fdinfo_find(fd, names, N_NAMES, budget, cost, idx, ino);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        size_t want = SIZE_MAX, got;
        uint64_t want_ino, ino;
        unsigned cost;
        int want_r = reference((const char *) data, size, &want, &want_ino);
        bool found = want_r == 1;
        int fd = fuzz_memfd("fuzz-uring", data, size), r;

        if (fd < 0)
                return 0;
        r = run(fd, UINT32_MAX, &cost, &got, &ino);
        assert(r == want_r);
        assert(ino == want_ino);
        if (found)
                assert(got == want);
        /* a small budget: the same answer, or stopped past it */
        r = run(fd, 3, &cost, &got, NULL);
        assert(r == -E2BIG || r == want_r);
        assert(cost <= 4);
        if (r == -E2BIG)
                assert(cost == 4);
        if (r == 1)
                assert(got == want);
        (void) close(fd);
        return 0;
}
