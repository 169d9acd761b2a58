/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the state/ledger parser. On failure the state passed in
 * must be untouched (same text, same allocations); on success formatting and
 * parsing again must give the same text; nothing may leak. */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "state.h"

static const char preload_text[] =
        "xdevices-state 1\n"
        "holder 61001\n"
        "session uid=61001 user=xdalice service=login vt=2 pid=4242 start=777 since=1700000000\n"
        "node path=/dev/dri/card0 class=drm fsdev=0:5 ino=12 rdev=226:0 uid=0 gid=44 mode=20660 "
        "acl=user::rw-,group::rw-,other::--- grant=61001:rw:acl\n";

static char *format(const struct xdev_state *s, size_t *ret_len) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        int r;

        assert(f);
        r = xdev_state_format(s, f);
        assert(r == 0);
        r = fclose(f);
        assert(r == 0);
        *ret_len = len;
        return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct xdev_state state = { 0 }, copy;
        unsigned line = 0;
        char *before, *after;
        size_t blen, alen;
        int r;

        if (size > 1024 * 1024)
                return 0;
        r = xdev_state_parse(&state, preload_text, strlen(preload_text), NULL);
        assert(r == 0);
        before = format(&state, &blen);
        copy = state;
        r = xdev_state_parse(&state, (const char *) data, size, &line);
        if (r < 0) {
                /* untouched: the same arrays, the same content */
                assert(memcmp(&copy, &state, sizeof state) == 0);
                after = format(&state, &alen);
                assert(alen == blen && memcmp(before, after, blen) == 0);
                free(after);
                /* line 0: the buffer as a whole was refused (NUL byte, size) */
                assert(line >= 1 || size == 0 || memchr(data, '\0', size));
        } else {
                struct xdev_state again = { 0 };
                char *text2;
                size_t len2;

                assert(!state.has_holder || xdev_state_uid_has_session(&state, state.holder));
                assert(state.n_sessions <= XDEV_SESSIONS_MAX && state.n_nodes <= XDEV_NODES_MAX);
                for (size_t i = 0; i < state.n_nodes; i++)
                        assert(xdev_path_is_valid(state.nodes[i].path));
                after = format(&state, &alen);
                r = xdev_state_parse(&again, after, alen, NULL);
                assert(r == 0);
                text2 = format(&again, &len2);
                assert(len2 == alen && memcmp(after, text2, alen) == 0);
                free(text2);
                free(after);
                xdev_state_free(&again);
        }
        free(before);
        xdev_state_free(&state);
        return 0;
}
