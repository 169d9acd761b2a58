/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the parser of the mark a grant leaves on its node
 * (trusted.xdevices, doc/DESIGN.md §3.6). A refused value leaves the output
 * untouched; an accepted one is exactly what the formatter writes for it. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fuzz.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct xdev_mark m, before;
        char again[XDEV_MARK_MAX];
        int r, len;

        memset(&m, 0xa5, sizeof m);
        before = m;
        r = xdev_mark_parse((const char *) data, size, &m);
        if (r < 0) {
                assert(r == -EINVAL);
                assert(memcmp(&m, &before, sizeof m) == 0);
                return 0;
        }
        assert(S_ISCHR(m.mode));
        assert(!m.has_acl || (m.acl[0] && strlen(m.acl) <= XDEV_ACL_TEXT_MAX));
        struct xdev_node n = {
                .rdev = m.rdev,
                .uid = m.uid,
                .gid = m.gid,
                .mode = m.mode,
                .acl = m.has_acl ? m.acl : NULL,
                .granted = true,
                .grantee = m.grantee,
        };
        len = xdev_mark_format(&n, again, sizeof again);
        assert(len > 0 && (size_t) len == size && memcmp(again, data, size) == 0);
        return 0;
}
