/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A compositor's part of the seat, with the real libseat: test-vtrun runs
 * it under xdevices-vt-run --seat (LIBSEAT_BACKEND=seatd, SEATD_SOCK set by
 * the wrapper). It opens the seat and prints on stdout, one line each:
 *   "opened SEAT"       the seat is open
 *   "enable"            the seat was enabled
 *   "disable"           the seat was disabled (acked at once, as wlroots
 *                       does, unless started with "noack")
 *   "open PATH ID FD"   / "open PATH error ERRNO"   the answer to "open"
 *   "close ID 0|-1"
 *   "switch N 0|-1"
 * and takes commands on fd 3 (stdin is the VT, as in a login): "open PATH",
 * "close ID", "switch N", "quit". */
#include "config.h"

#include <errno.h>
#include <libseat.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool ack = true;

static void on_enable(struct libseat *seat, void *data) {
        (void) seat;
        (void) data;
        printf("enable\n");
        fflush(stdout);
}

static void on_disable(struct libseat *seat, void *data) {
        (void) data;
        printf("disable\n");
        fflush(stdout);
        if (ack && libseat_disable_seat(seat) < 0) {
                printf("ack error %d\n", errno);
                fflush(stdout);
        }
}

static void command(struct libseat *seat, char *line) {
        char arg[300];
        int n, fd = -1;

        if (sscanf(line, "open %299s", arg) == 1) {
                n = libseat_open_device(seat, arg, &fd);
                if (n < 0)
                        printf("open %s error %d\n", arg, errno);
                else
                        printf("open %s %d %d\n", arg, n, fd);
        } else if (sscanf(line, "close %d", &n) == 1)
                printf("close %d %d\n", n, libseat_close_device(seat, n));
        else if (sscanf(line, "switch %d", &n) == 1)
                printf("switch %d %d\n", n, libseat_switch_session(seat, n));
        else
                printf("what? %s", line);
        fflush(stdout);
}

int main(int argc, char **argv) {
        struct libseat_seat_listener listener = { .enable_seat = on_enable,
                                                  .disable_seat = on_disable };
        struct libseat *seat;
        char line[512];
        FILE *cmd = fdopen(3, "r");

        if (!cmd)
                return 5;
        /* one byte at a time: no line may wait in stdio's buffer unseen by poll */
        setvbuf(cmd, NULL, _IONBF, 0);
        if (argc > 1 && strcmp(argv[1], "noack") == 0)
                ack = false;
        libseat_set_log_level(LIBSEAT_LOG_LEVEL_ERROR);
        seat = libseat_open_seat(&listener, NULL);
        if (!seat) {
                printf("open_seat error %d\n", errno);
                return 1;
        }
        printf("opened %s\n", libseat_seat_name(seat));
        fflush(stdout);
        /* an enable sent with the seat's name is in libseat's buffer already */
        if (libseat_dispatch(seat, 0) < 0)
                return 2;
        for (;;) {
                struct pollfd p[2] = { { .fd = 3, .events = POLLIN },
                                       { .fd = libseat_get_fd(seat), .events = POLLIN } };

                if (poll(p, 2, -1) < 0)
                        continue;
                if (p[1].revents && libseat_dispatch(seat, 0) < 0) {
                        printf("dispatch error %d\n", errno);
                        return 3;
                }
                if (p[0].revents) {
                        if (!fgets(line, sizeof line, cmd) || strncmp(line, "quit", 4) == 0)
                                break;
                        command(seat, line);
                }
        }
        return libseat_close_seat(seat) < 0 ? 4 : 0;
}
