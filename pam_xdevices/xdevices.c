/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevices(8): the admin and udev front-end of the core.
 *
 * Rules this file keeps:
 *  1. Root only; never runs a shell or another program.
 *  2. What udev passes (DEVNAME, MAJOR, MINOR, XDEVICES_CLASS) is checked
 *     against the node on disk before anything is granted.
 *  3. It takes the same lock as the module, through the core. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <unistd.h>

#include "core.h"

enum {
        EXIT_OK = 0,
        EXIT_FAILED = 1,   /* the operation failed (see messages) */
        EXIT_USAGE = 2,
        EXIT_NOTROOT = 3,
        EXIT_REFUSED = 4,  /* input did not agree with the system; nothing touched */
};

static bool use_syslog;

static XDEV_PRINTF(3, 0) void log_to_stderr(void *userdata, int priority, const char *fmt, va_list ap) {
        va_list copy;

        va_copy(copy, ap);
        if (use_syslog)
                vsyslog(priority, fmt, copy);
        va_end(copy);
        fprintf(stderr, "xdevices: ");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
}

static void usage(FILE *out) {
        fprintf(out,
                "Usage: xdevices [--conf=PATH] [--debug] COMMAND\n"
                "\n"
                "  status [--json]     sessions, holder and every granted node\n"
                "  apply DEVNODE       grant a node udev added (needs DEVNAME, MAJOR, MINOR,\n"
                "                      XDEVICES_CLASS in the environment, as udev sets them)\n"
                "  forget DEVNODE      forget a node udev removed\n"
                "  gc                  reap sessions whose leader died and restore their nodes\n"
                "  reset [--force]     restore every recorded node and empty the state\n"
                "  revoke USER|--all   apply the lingering policy to processes of USER (or of\n"
                "                      anyone but root and the holder) still holding a shared node\n"
                "\n"
                "Exit status: 0 done, 1 failed, 2 usage, 3 not root, 4 input refused.\n");
}

static int env_uint(const char *name, uint64_t max, uint64_t *ret) {
        const char *v = getenv(name);
        return v ? xdev_parse_uint(v, max, ret) : -ENOENT;
}

static int cmd_apply(struct xdev_ctx *ctx, const char *devnode, bool forget) {
        const char *devname = getenv("DEVNAME");
        uint64_t maj, min;
        int class, r;

        if (!xdev_path_is_valid(devnode)) {
                xdev_log(&ctx->log, LOG_ERR, "\"%s\" is not a path under /dev, refusing", devnode);
                return EXIT_REFUSED;
        }
        if (!devname || strcmp(devname, devnode) != 0) {
                xdev_log(&ctx->log, LOG_ERR, "DEVNAME \"%s\" does not match \"%s\", refusing",
                         devname ? devname : "(unset)", devnode);
                return EXIT_REFUSED;
        }
        if (forget) {
                r = xdev_device_forget(ctx, devnode);
                return r < 0 ? EXIT_FAILED : EXIT_OK;
        }
        class = xdev_class_from_string(getenv("XDEVICES_CLASS"));
        if (class < 0 || class == XDEV_CLASS_VT) {
                xdev_log(&ctx->log, LOG_ERR, "XDEVICES_CLASS is not drm, input or console for \"%s\", refusing", devnode);
                return EXIT_REFUSED;
        }
        if (env_uint("MAJOR", 0xfff, &maj) < 0 || env_uint("MINOR", 0xfffff, &min) < 0) {
                xdev_log(&ctx->log, LOG_ERR, "MAJOR/MINOR missing or malformed for \"%s\", refusing", devnode);
                return EXIT_REFUSED;
        }
        if (maj != xdev_class_major(class)) {
                xdev_log(&ctx->log, LOG_ERR, "major %u is not that of class %s for \"%s\", refusing", (unsigned) maj,
                         xdev_class_to_string(class), devnode);
                return EXIT_REFUSED;
        }
        r = xdev_device_apply(ctx, devnode, class, makedev((unsigned) maj, (unsigned) min));
        if (r == -EINVAL)
                return EXIT_REFUSED;
        if (r < 0)
                return EXIT_FAILED;
        xdev_debug(&ctx->log, "\"%s\": %s", devnode, r > 0 ? "granted to the holder" : "nothing to do");
        return EXIT_OK;
}

/* WHO NULL: everyone's lingering holders. */
static int cmd_revoke(struct xdev_ctx *ctx, const char *who) {
        bool all = !who;
        struct passwd *pw = NULL;
        int r;

        if (!all) {
                pw = getpwnam(who);
                if (!pw) {
                        xdev_log(&ctx->log, LOG_ERR, "no such user \"%s\"", who);
                        return EXIT_USAGE;
                }
                if (pw->pw_uid == 0) {
                        xdev_log(&ctx->log, LOG_ERR, "processes of root are never revoked, refusing");
                        return EXIT_REFUSED;
                }
        }
        r = xdev_revoke(ctx, all, pw ? pw->pw_uid : 0);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot revoke: %s", strerror(-r));
                return EXIT_FAILED;
        }
        return EXIT_OK;
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "conf", required_argument, NULL, 'c' },
                { "debug", no_argument, NULL, 'd' },
                { "json", no_argument, NULL, 'j' },
                { "force", no_argument, NULL, 'f' },
                { "all", no_argument, NULL, 'a' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *conf = XDEV_DEFAULT_CONF, *cmd;
        bool json = false, force = false, debug = false, all = false;
        struct xdev_ctx ctx;
        int c, r, ret;

        while ((c = getopt_long(argc, argv, "+c:djfh", opts, NULL)) != -1) {
                switch (c) {
                case 'c':
                        conf = optarg;
                        break;
                case 'd':
                        debug = true;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'f':
                        force = true;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_OK;
                default:
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                usage(stderr);
                return EXIT_USAGE;
        }
        cmd = argv[optind++];
        /* options may follow the command too: "status --json" */
        while ((c = getopt_long(argc, argv, "jf", opts, NULL)) != -1) {
                if (c == 'j')
                        json = true;
                else if (c == 'f')
                        force = true;
                else if (c == 'a' && strcmp(cmd, "revoke") == 0)
                        all = true;
                else {
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (geteuid() != 0) {
                fprintf(stderr, "xdevices: must be run as root\n");
                return EXIT_NOTROOT;
        }
        use_syslog = !isatty(STDERR_FILENO);
        if (use_syslog)
                openlog("xdevices", LOG_PID, LOG_AUTHPRIV);

        xdev_ctx_init(&ctx);
        ctx.log = (struct xdev_log) { .fn = log_to_stderr, .debug = debug };
        r = xdev_config_load(&ctx.config, conf, &ctx.log);
        if (r < 0) {
                xdev_log(&ctx.log, LOG_ERR, "configuration is broken; no device will be granted");
                ctx.config_ok = false;
        }
        ctx.log.debug = debug || ctx.config.debug;

        if (strcmp(cmd, "status") == 0 && optind == argc) {
                ret = xdev_status(&ctx, stdout, json) < 0 ? EXIT_FAILED : EXIT_OK;
        } else if (strcmp(cmd, "revoke") == 0 && (all ? optind == argc : optind + 1 == argc))
                ret = cmd_revoke(&ctx, all ? NULL : argv[optind]);
        else if ((strcmp(cmd, "apply") == 0 || strcmp(cmd, "forget") == 0) && optind + 1 == argc)
                ret = cmd_apply(&ctx, argv[optind], cmd[0] == 'f');
        else if (strcmp(cmd, "gc") == 0 && optind == argc) {
                r = xdev_gc(&ctx);
                ret = r < 0 ? EXIT_FAILED : EXIT_OK;
                if (r >= 0)
                        xdev_debug(&ctx.log, "reaped %d session(s)", r);
        } else if (strcmp(cmd, "reset") == 0 && optind == argc)
                ret = xdev_reset(&ctx, force) < 0 ? EXIT_FAILED : EXIT_OK;
        else {
                usage(stderr);
                ret = EXIT_USAGE;
        }
        xdev_ctx_done(&ctx);
        return ret;
}
