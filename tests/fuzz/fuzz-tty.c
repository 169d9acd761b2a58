/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: what decides whether a login counts and which names and
 * paths are acted on: PAM_TTY parsing, the PAM_RHOST/PAM_RUSER decision, user
 * and service names, /dev paths, strict numbers. Each accepted input must be
 * exactly the canonical spelling; a refused number leaves its output alone. */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "fuzz.h"
#include "tty.h"
#include "util.h"
#include "vt.h"

static void check_tty(const char *s) {
        char canon[32];
        unsigned vt = 0xdead;

        if (xdev_vt_parse(s, &vt) < 0) {
                assert(vt == 0xdead);
                return;
        }
        assert(vt >= 1 && vt <= XDEV_VT_MAX);
        (void) snprintf(canon, sizeof canon, "%stty%u", strncmp(s, "/dev/", 5) == 0 ? "/dev/" : "",
                        vt);
        assert(strcmp(canon, s) == 0);
}

static void check_uint(const char *s) {
        uint64_t v = 0xdeadbeef, max = (strlen(s) & 1) ? UINT64_MAX : 63;
        char canon[32];

        if (xdev_parse_uint(s, max, &v) < 0) {
                assert(v == 0xdeadbeef);
                return;
        }
        assert(v <= max);
        (void) snprintf(canon, sizeof canon, "%" PRIu64, v);
        assert(strcmp(canon, s) == 0);
}

static void check_name(const char *s) {
        if (!xdev_name_is_valid(s, XDEV_NAME_MAX))
                return;
        assert(strlen(s) >= 1 && strlen(s) <= XDEV_NAME_MAX && s[0] != '-');
        assert(strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$") ==
               strlen(s));
        assert(!strchr(s, '$') || strchr(s, '$') == s + strlen(s) - 1);
}

static void check_path(const char *s) {
        size_t n = strlen(s);

        if (!xdev_path_is_valid(s))
                return;
        assert(strncmp(s, "/dev/", 5) == 0 && n > 5 && n < 256 && s[n - 1] != '/');
        assert(!strstr(s, "//") && !strstr(s, "/../") && !strstr(s, "/./"));
        assert(!(n >= 3 && strcmp(s + n - 3, "/..") == 0) &&
               !(n >= 2 && strcmp(s + n - 2, "/.") == 0));
        assert(strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-+:/") ==
               n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *part[3] = { NULL, NULL, NULL };
        char *copy;
        size_t pos = 0;
        int n = 0;

        if (size > 4096)
                return 0;
        copy = malloc(size + 1);
        assert(copy);
        memcpy(copy, data, size);
        copy[size] = '\0';
        check_tty(copy);
        check_uint(copy);
        check_name(copy);
        check_path(copy);
        /* "user\0ruser\0rhost": the doc/DESIGN.md §3.3 decision on PAM items */
        while (pos <= size && n < 3) {
                part[n++] = copy + pos;
                pos += strlen(copy + pos) + 1;
        }
        if (xdev_login_items_are_local(part[0], part[1], part[2])) {
                assert(!part[2] || part[2][0] == '\0');
                assert(!part[1] || part[1][0] == '\0'); /* su to oneself too: never */
                assert(part[0] && part[0][0] != '\0');
        }
        free(copy);
        return 0;
}
