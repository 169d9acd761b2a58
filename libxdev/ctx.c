/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The context of the core's operations: made, loaded from the config, freed. */
#include "config.h"

#include <syslog.h>

#include "ctx.h"

void xdev_ctx_init(struct xdev_ctx *ctx) {
        *ctx = (struct xdev_ctx) { .config_ok = true, .statedir = XDEV_STATEDIR };
        xdev_config_init(&ctx->config);
}

void xdev_ctx_done(struct xdev_ctx *ctx) {
        xdev_config_free(&ctx->config);
}

int xdev_ctx_load_config(struct xdev_ctx *ctx, const char *path, bool named, bool debug) {
        int r;

        xdev_config_free(&ctx->config);
        xdev_config_init(&ctx->config);
        ctx->config_ok = true;
        ctx->log.debug = debug;
        r = named ? xdev_config_load_named(&ctx->config, path, &ctx->log)
                  : xdev_config_load(&ctx->config, path, &ctx->log);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_ERR,
                         "configuration is broken; nothing new will be granted until it is fixed");
                ctx->config_ok = false;
        }
        ctx->log.debug = debug || ctx->config.debug;
        return r;
}
