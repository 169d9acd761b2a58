/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the parsers of /proc/PID/status that the sweeper and
 * xdevicesd's table of processes read (libxdev/procfs.c), the uids and the
 * credentials. The input is the
 * text up to its first NUL. A refused text leaves the output untouched; an
 * accepted one has a Uid line, and parsing it again gives the same result. */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct xdev_proc_status st, before, again;
        char *text = malloc(size + 1);
        int r;

        assert(text);
        memcpy(text, data, size);
        text[size] = '\0';
        memset(&st, 0xa5, sizeof st);
        before = st;
        r = xdev_proc_status_parse(text, &st);
        if (r < 0) {
                assert(r == -EIO);
                assert(memcmp(&st, &before, sizeof st) == 0);
        } else {
                assert(r == 0);
                assert(strstr(text, "\nUid:"));
                memset(&again, 0x5a, sizeof again);
                assert(xdev_proc_status_parse(text, &again) == 0);
                assert(memcmp(st.uid, again.uid, sizeof st.uid) == 0);
                assert(st.has_ppid == again.has_ppid && st.has_cap_prm == again.has_cap_prm);
                assert(!st.has_ppid || st.ppid == again.ppid);
                assert(!st.has_cap_prm || st.cap_prm == again.cap_prm);
                /* the state a letter or none; the switches both counts */
                assert(st.state == again.state && (st.state == '\0' || isalpha(st.state)));
                assert(st.has_switches == again.has_switches);
                assert(!st.has_switches ||
                       (st.switches == again.switches &&
                        strstr(text, "\nnonvoluntary_ctxt_switches:")));
        }
        /* the syscall line's parser on the same text */
        long nr = -7;
        r = xdev_proc_syscall_parse(text, &nr);
        assert(r == 0 || r == -EBUSY || r == -EIO);
        assert(r == 0 ? isdigit((unsigned char) text[0]) && nr >= 0 : nr == -7);
        assert(r != -EBUSY || strncmp(text, "running", 7) == 0);
        /* the credentials' parser on the same text: refused, it leaves
         * its output alone; accepted, it keeps what fits and says so */
        struct xdev_creds c, cb;
        memset(&c, 0xa5, sizeof c);
        cb = c;
        r = xdev_proc_creds_parse(text, &c);
        if (r < 0) {
                assert(r == -EIO);
                assert(memcmp(&c, &cb, sizeof c) == 0);
        } else {
                assert(r == 0 && strstr(text, "\nGroups:"));
                assert(c.n_groups <= XDEV_CREDS_GROUPS_MAX);
                assert(c.complete || c.n_groups == XDEV_CREDS_GROUPS_MAX);
        }
        free(text);
        return 0;
}
