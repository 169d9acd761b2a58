/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the login.defs parser (libxdev/logindefs.c), the whole
 * input as the file's text, NUL bytes and all. A refused text leaves the
 * bound untouched and names a key it holds; an accepted one gives a bound
 * below nobody's uid, and parsing it again gives the same. Every message
 * is printable ASCII, whatever the text holds. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "logindefs.h"

static XDEV_PRINTF(3, 0) void log_sink(void *userdata, int priority, const char *fmt, va_list ap) {
        char buf[2048];
        int n;

        (void) userdata, (void) priority;
        n = vsnprintf(buf, sizeof buf, fmt, ap);
        assert(n >= 0 && (size_t) n < sizeof buf);
        for (int i = 0; i < n; i++)
                assert(buf[i] >= 0x20 && buf[i] < 0x7f);
}

static const struct xdev_log fuzz_log = { .fn = log_sink, .debug = true };

static bool has(const uint8_t *data, size_t size, const char *name) {
        return memmem(data, size, name, strlen(name)) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uid_t u = 4242, again = 4343;
        int r, r2;

        r = xdev_logindefs_parse((const char *) data, size, "fuzz.defs", &fuzz_log, &u);
        assert(r == 0 || r == -ENOENT || r == -EINVAL);
        if (r < 0)
                assert(u == 4242);
        else
                assert(u <= XDEV_SYSTEM_UID_LIMIT);
        if (r != -ENOENT)
                assert(has(data, size, "SYS_UID_MAX") || has(data, size, "UID_MIN"));
        r2 = xdev_logindefs_parse((const char *) data, size, "fuzz.defs", &fuzz_log, &again);
        assert(r2 == r);
        assert(r < 0 ? again == 4343 : again == u);
        return 0;
}
