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
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "uring.h"

static const char *const names[] = { "/dev/input/event2", "/dev/tty0", "/dev/input/js0",
                                     "/dev/dri/card0", "/dev/input/mice" };
#define N_NAMES (sizeof names / sizeof names[0])

/* The oracle: whole lines in memory. A list line is up to 32 bytes of
 * spaces, digits and ": ", then a path compared whole, or a bare name (an
 * older kernel's) compared with each path's last component. */
static bool reference(const char *d, size_t size, size_t *ret) {
        bool in_list = false;

        for (size_t s = 0; s < size;) {
                const char *nl = memchr(d + s, '\n', size - s);
                if (!nl)
                        break;
                size_t len = (size_t) (nl - (d + s)), i = 0;
                const char *l = d + s;
                s += len + 1;
                if (!in_list) {
                        in_list = len >= 10 && memcmp(l, "UserFiles:", 10) == 0;
                        continue;
                }
                while (i < len && l[i] == ' ')
                        i++;
                if (i >= len || l[i] < '0' || l[i] > '9')
                        continue;
                while (i < len && l[i] >= '0' && l[i] <= '9')
                        i++;
                if (i + 2 > len || i + 2 > 32 || l[i] != ':' || l[i + 1] != ' ')
                        continue;
                const char *name = l + i + 2;
                size_t nlen = (size_t) (l + len - name);
                for (size_t k = 0; k < N_NAMES; k++) {
                        const char *want = names[k];
                        if (nlen > 0 && name[0] != '/')
                                want = strrchr(want, '/') + 1;
                        if (strlen(want) == nlen && memcmp(want, name, nlen) == 0) {
                                *ret = k;
                                return true;
                        }
                }
        }
        return false;
}

static int run(int fd, unsigned budget, unsigned *cost, size_t *idx) {
        assert(lseek(fd, 0, SEEK_SET) == 0);
        *cost = 0;
        *idx = SIZE_MAX;
        return xdev_uring_fdinfo_find(fd, names, N_NAMES, budget, cost, idx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        size_t want = SIZE_MAX, got;
        unsigned cost;
        bool found = reference((const char *) data, size, &want);
        int fd = memfd_create("fuzz-uring", MFD_CLOEXEC), r;

        if (fd < 0)
                return 0;
        for (size_t off = 0; off < size;) {
                ssize_t n = write(fd, data + off, size - off);
                if (n <= 0) {
                        (void) close(fd);
                        return 0;
                }
                off += (size_t) n;
        }
        r = run(fd, UINT32_MAX, &cost, &got);
        assert(r == (found ? 1 : 0));
        if (found)
                assert(got == want);
        /* a small budget: the same answer, or stopped past it */
        r = run(fd, 3, &cost, &got);
        assert(r == -E2BIG || r == (found ? 1 : 0));
        assert(cost <= 4);
        if (r == -E2BIG)
                assert(cost == 4);
        if (r == 1)
                assert(got == want);
        (void) close(fd);
        return 0;
}
