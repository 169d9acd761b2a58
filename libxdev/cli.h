/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the command lines of xdevices(8) and xdevicesd(8) share: the exit
 * codes both give, the options both take (--conf, --debug, --help,
 * --version) and their handling. Linked alone (libxdev-cli.la) by those
 * two programs; the PAM module has no command line. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

enum {
        XDEV_EXIT_OK = 0,
        XDEV_EXIT_FAILED = 1, /* the operation failed (see messages) */
        XDEV_EXIT_USAGE = 2,
        XDEV_EXIT_NOTROOT = 3,
};

/* The long options of every program, for its struct option table, and the
 * short ones, for its getopt string. */
#define XDEV_CLI_OPTION(name, has_arg, c) \
        { name, has_arg, NULL, c }
#define XDEV_CLI_OPTIONS \
        XDEV_CLI_OPTION("conf", required_argument, 'c'), \
                XDEV_CLI_OPTION("debug", no_argument, 'd'), \
                XDEV_CLI_OPTION("help", no_argument, 'h'), \
                XDEV_CLI_OPTION("version", no_argument, 'V')
#define XDEV_CLI_SHORT "c:dhV"

struct xdev_cli {
        const char *prog;         /* for --version */
        void (*usage)(FILE *out); /* the program's usage text */
        const char *conf;         /* --conf, or the default */
        bool named;               /* the config was named by --conf */
        bool debug;               /* --debug */
};

/* Takes option C (with ARG) of XDEV_CLI_OPTIONS, or an unknown one.
 * Returns -1 to go on, XDEV_EXIT_OK after --help or --version (printed),
 * XDEV_EXIT_USAGE for an option the program does not take (getopt named
 * it; xdev_cli_usage_error() adds the pointer at --help). */
int xdev_cli_option(struct xdev_cli *cli, int c, const char *arg);

/* A usage error: "PROG: MESSAGE" (when FMT is not NULL: getopt has said
 * which option it did not know) and one line pointing at --help, on
 * stderr, not the whole help. Returns XDEV_EXIT_USAGE. */
int xdev_cli_usage_error(const struct xdev_cli *cli, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* XDEV_EXIT_OK for root; else says the program must be run as root and
 * returns XDEV_EXIT_NOTROOT. */
int xdev_cli_need_root(const struct xdev_cli *cli);
