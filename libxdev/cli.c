/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The options xdevices(8) and xdevicesd(8) share (cli.h). */
#include "config.h"

#include <stdarg.h>
#include <unistd.h>

#include "cli.h"

int xdev_cli_option(struct xdev_cli *cli, int c, const char *arg) {
        switch (c) {
        case 'c':
                cli->conf = arg;
                cli->named = true;
                return -1;
        case 'd':
                cli->debug = true;
                return -1;
        case 'h':
                cli->usage(stdout);
                return XDEV_EXIT_OK;
        case 'V':
                printf("%s " PACKAGE_VERSION "\n", cli->prog);
                return XDEV_EXIT_OK;
        default:
                return xdev_cli_usage_error(cli, NULL);
        }
}

int xdev_cli_usage_error(const struct xdev_cli *cli, const char *fmt, ...) {
        va_list ap;

        if (fmt) {
                fprintf(stderr, "%s: ", cli->prog);
                va_start(ap, fmt);
                vfprintf(stderr, fmt, ap);
                va_end(ap);
                fputc('\n', stderr);
        }
        fprintf(stderr, "Try '%s --help' for more information.\n", cli->prog);
        return XDEV_EXIT_USAGE;
}

int xdev_cli_need_root(const struct xdev_cli *cli) {
        if (geteuid() == 0)
                return XDEV_EXIT_OK;
        fprintf(stderr, "%s: must be run as root\n", cli->prog);
        return XDEV_EXIT_NOTROOT;
}
