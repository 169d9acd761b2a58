/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the parser of a unix socket's fdinfo that tells the
 * pass after the lock whether its queue holds files in flight
 * (libxdev/inflight.c). The input is the text up to its first NUL. The
 * count is told only from a line that starts "scm_fds:", is never
 * negative but for -EIO, and parsing again gives the same. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "inflight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        int r;

        assert(text);
        memcpy(text, data, size);
        text[size] = '\0';
        r = xdev_inflight_count_parse(text);
        assert(r >= 0 || r == -EIO);
        assert(r == xdev_inflight_count_parse(text));
        if (r != 0)
                assert(strncmp(text, "scm_fds:", 8) == 0 || strstr(text, "\nscm_fds:"));
        free(text);
        return 0;
}
