/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: what xdevices-vt-run --seat reads from its compositor,
 * the requests of libseat's seatd protocol, parsed one after another as the
 * server does; and the device paths it agrees to open. A request taken is a
 * whole one of a known opcode with the size that opcode has; a path taken
 * is NUL-terminated where its length says and names one of the three kinds
 * of node, in its canonical spelling. */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "fuzz.h"
#include "vt-seat.h"

static void check_kind(const char *path) {
        int kind = vtseat_path_kind(path);
        const char *digits;

        if (kind < 0)
                return;
        if (kind == VTSEAT_EVDEV) {
                assert(strncmp(path, "/dev/input/event", 16) == 0);
                digits = path + 16;
        } else {
                assert(kind == VTSEAT_DRM);
                if (strncmp(path, "/dev/dri/card", 13) == 0)
                        digits = path + 13;
                else {
                        assert(strncmp(path, "/dev/dri/renderD", 16) == 0);
                        digits = path + 16;
                }
        }
        assert(strlen(digits) >= 1 && strlen(digits) <= 5);
        assert(strspn(digits, "0123456789") == strlen(digits));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        size_t at = 0;

        while (at < size) {
                struct vtseat_request req;
                ssize_t k = vtseat_parse(data + at, size - at, &req);
                uint16_t opcode, len;

                if (k <= 0) {
                        /* incomplete: only a header's worth or a
                         * request whose announced size is not all in */
                        if (k == 0 && size - at >= 4) {
                                memcpy(&len, data + at + 2, sizeof len);
                                assert(size - at < 4u + len);
                        }
                        break;
                }
                assert((size_t) k >= 4 && (size_t) k <= size - at);
                memcpy(&opcode, data + at, sizeof opcode);
                memcpy(&len, data + at + 2, sizeof len);
                assert((size_t) k == 4u + len);
                assert(req.opcode == opcode && opcode >= 1 && opcode <= 7);
                if (opcode == 3) {
                        assert(len >= 3 && len <= 2 + VTSEAT_MAX_PATH);
                        assert(strlen(req.path) == (size_t) len - 3);
                        check_kind(req.path);
                } else if (opcode == 4 || opcode == 6)
                        assert(len == sizeof(int));
                else
                        assert(len == 0);
                at += (size_t) k;
        }
        /* the input as a path, too */
        if (size < 300) {
                char path[300];

                memcpy(path, data, size);
                path[size] = '\0';
                check_kind(path);
        }
        return 0;
}
