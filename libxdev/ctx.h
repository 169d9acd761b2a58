/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The context every operation of the core runs in: the config, whether it
 * loaded, the log, the state directory and where sweeps find processes. */
#pragma once

#include <stdbool.h>

#include "conf.h"
#include "logindefs.h"
#include "sweep.h"
#include "util.h"

struct xdev_ctx {
        struct xdev_config config;
        bool config_ok; /* false: a broken config; grant nothing new */
        struct xdev_log log;
        const char *statedir; /* XDEV_STATEDIR unless a test says otherwise */
        /* Where the sweeps of a uid find its processes (xdevicesd's table of
         * process events), or NULL: they walk /proc. */
        const struct xdev_procsrc *procs;
        /* xdevicesd's memo of login.defs' last warning, so that a pass
         * repeats it at debug level only (doc/DESIGN.md §3.5.10), or NULL:
         * each pass warns (the module's, one a logout). */
        struct xdev_logindefs_memo *logindefs_memo;
};

/* CTX with the default config and state directory; xdev_ctx_done() frees it. */
void xdev_ctx_init(struct xdev_ctx *ctx);
void xdev_ctx_done(struct xdev_ctx *ctx);

/* (Re)loads CTX's config from PATH (NAMED: a file named by the admin, whose
 * absence is an error; see xdev_config_load_named()). A broken config is
 * logged and leaves CTX->config_ok false: nothing new is granted. Debug
 * lines are logged with DEBUG or the config's debug key. Returns the
 * load's result. */
int xdev_ctx_load_config(struct xdev_ctx *ctx, const char *path, bool named, bool debug);
