/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pam_xdevices.so: the PAM session front-end. It decides whether this is a
 * real local console login, then hands the work to the core.
 *
 * Rules this file keeps:
 *  1. Every PAM item and the environment are hostile: a login counts only
 *     when PAM_TTY is exactly ttyN/dev/ttyN (1..63), the caller leads the
 *     session whose controlling tty that VT is, and PAM_RHOST and PAM_RUSER
 *     are empty (su and sudo, even to oneself, never count).
 *  2. Anything that does not count returns PAM_IGNORE and touches nothing;
 *     it says why in one info line (at debug level only for a service the
 *     config leaves out: services, deny_services).
 *  3. XDG_VTNR/XDG_SEAT are set from the validated VT only, overriding any
 *     value an earlier module or the user planted.
 *  4. One info line per login that counts says what was granted, by class,
 *     and why anything expected was not. The user hears of it (one line in
 *     the PAM conversation, not with PAM_SILENT) only when the config is
 *     broken or nothing but the VT was granted. */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <security/pam_modutil.h>

#include "core.h"
#include "procfs.h"
#include "devices.h"
#include "logind.h"
#include "rundir.h"
#include "tty.h"
#include "vt.h"

#define DATA_OPENED "pam_xdevices_opened"

/* Where the core's messages go: syslog, and the first error is kept for
 * the user (a broken config's FILE:LINE: reason). */
struct sink {
        pam_handle_t *pamh;
        char first_error[200];
};

static XDEV_PRINTF(3, 0) void log_to_pam(void *userdata, int priority, const char *fmt,
                                         va_list ap) {
        struct sink *sink = userdata;

        if (priority <= LOG_ERR && !sink->first_error[0]) {
                va_list copy;
                va_copy(copy, ap);
                (void) vsnprintf(sink->first_error, sizeof sink->first_error, fmt, copy);
                va_end(copy);
        }
        pam_vsyslog(sink->pamh, priority, fmt, ap);
}

/* One line to the user through the application's conversation. */
static void tell(pam_handle_t *pamh, int flags, int style, const char *msg) {
        if (flags & PAM_SILENT)
                return;
        (void) pam_prompt(pamh, style, NULL, "pam_xdevices: %s", msg);
}

/* Arguments, then the config file (which arguments may name: then it must
 * exist), then the arguments again so that they win over the file. */
static int setup(pam_handle_t *pamh, int argc, const char **argv, struct xdev_ctx *ctx,
                 struct sink *sink) {
        const char *conf = NULL; /* set when an argument names it */
        struct xdev_config scratch;
        int r;

        xdev_ctx_init(ctx);
        *sink = (struct sink) { .pamh = pamh };
        ctx->log = (struct xdev_log) { .fn = log_to_pam, .userdata = sink };
        xdev_config_init(&scratch);
        r = xdev_config_parse_args(&scratch, argc, argv, &conf, &ctx->log);
        ctx->log.debug = scratch.debug;
        xdev_config_free(&scratch);
        if (r < 0)
                goto broken;
        r = conf ? xdev_config_load_named(&ctx->config, conf, &ctx->log)
                 : xdev_config_load(&ctx->config, XDEV_DEFAULT_CONF, &ctx->log);
        if (r < 0)
                goto broken;
        r = xdev_config_parse_args(&ctx->config, argc, argv, NULL, NULL);
        if (r < 0)
                goto broken;
        ctx->log.debug = ctx->config.debug;
        return 0;
broken:
        pam_syslog(pamh, LOG_ERR, "configuration is broken; no device will be granted");
        ctx->config_ok = false;
        return r;
}

/* Whether a logind manages the seats (doc/DESIGN.md §3.8): then this
 * module stands down, and the person at the console is told so in one
 * line, since nothing she expects from it will happen. */
static bool stands_down(pam_handle_t *pamh, int flags, const struct xdev_ctx *ctx) {
        struct xdev_logind logind;
        char msg[300];

        if (ctx->config.ignore_logind || xdev_logind_find(&logind) <= 0)
                return false;
        (void) snprintf(msg, sizeof msg,
                        "%s (pid %d) manages the seats here: pam_xdevices stands down and grants "
                        "nothing (logind = ignore in xdevices.conf overrides)",
                        logind.name, (int) logind.pid);
        pam_syslog(pamh, LOG_INFO, "%s", msg);
        tell(pamh, flags, PAM_TEXT_INFO, msg);
        return true;
}

static const char *item(pam_handle_t *pamh, int type) {
        const void *v = NULL;
        if (pam_get_item(pamh, type, &v) != PAM_SUCCESS)
                return NULL;
        return v;
}

/* PAM_USER as logged: a name typed at a login prompt is hostile, and only
 * a portable name goes into the log as it is. */
static const char *loggable(const char *user) {
        return xdev_name_is_valid(user, XDEV_NAME_MAX) ? user : "(not a portable name)";
}

/* Logs why a login does not count; returns 0, its VT. */
static unsigned XDEV_PRINTF(3, 4)
        not_counted(pam_handle_t *pamh, int priority, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        pam_vsyslog(pamh, priority, fmt, ap);
        va_end(ap);
        return 0;
}

/* doc/DESIGN.md §3.3. Returns the VT, or 0 when this login does not count (the
 * reason is logged in one info line, at debug level for a service the config
 * leaves out, or as a warning for forged items). */
static unsigned login_vt(pam_handle_t *pamh, const struct xdev_ctx *ctx, const char *user) {
        const char *tty = item(pamh, PAM_TTY);
        const char *rhost = item(pamh, PAM_RHOST);
        const char *ruser = item(pamh, PAM_RUSER);
        const char *service = item(pamh, PAM_SERVICE);
        unsigned vt;

        if (!xdev_config_service_allowed(&ctx->config, service)) {
                xdev_debug(&ctx->log, "service \"%s\" is not allowed, ignoring",
                           service ? service : "");
                return 0;
        }
        if (!xdev_login_items_are_local(user, ruser, rhost))
                return not_counted(
                        pamh, LOG_INFO,
                        "\"%s\": not a console login (PAM_RHOST or PAM_RUSER set): nothing granted",
                        loggable(user));
        if (xdev_vt_parse(tty, &vt) < 0)
                return not_counted(pamh, LOG_INFO,
                                   "\"%s\": PAM_TTY is not a virtual console: nothing granted",
                                   loggable(user));
        if (xdev_tty_is_controlling(vt) <= 0)
                return not_counted(
                        pamh, LOG_WARNING,
                        "PAM_TTY names tty%u but it is not this process's controlling tty, ignoring",
                        vt);
        if (xdev_tty_leads_session(vt) <= 0)
                return not_counted(
                        pamh, LOG_INFO,
                        "\"%s\" on tty%u: this process does not lead the session of the VT (a session inside a session): nothing granted",
                        loggable(user), vt);
        return vt;
}

/* The login's line: the nodes granted by class, and why a class that is
 * on got none; the user is told when nothing but the VT was granted. */
static void report(pam_handle_t *pamh, int flags, const struct xdev_ctx *ctx, const char *user,
                   unsigned vt, bool holder, const struct xdev_login_result *res) {
        const unsigned *g = res->granted;
        char why[300] = "", msg[400];
        unsigned shared = g[XDEV_CLASS_DRM] + g[XDEV_CLASS_INPUT] + g[XDEV_CLASS_CONSOLE];

        if (!holder)
                (void) snprintf(why, sizeof why,
                                res->follow ? "the shared devices go to the VT in front (xdevicesd)"
                                            : "another console session holds the shared devices "
                                              "until its last logout (no xdevicesd runs)");
        else {
                xdev_devices_explain(&ctx->config, g, why, sizeof why);
                if (!why[0] && shared == 0 &&
                    (ctx->config.access[XDEV_CLASS_DRM] != XDEV_ACCESS_OFF ||
                     ctx->config.access[XDEV_CLASS_INPUT] != XDEV_ACCESS_OFF))
                        (void) snprintf(why, sizeof why, "no shared device found");
        }
        pam_syslog(pamh, LOG_INFO,
                   "\"%s\" on tty%u: granted vt %u, drm %u, input %u, console %u; %s%s%s", user, vt,
                   g[XDEV_CLASS_VT], g[XDEV_CLASS_DRM], g[XDEV_CLASS_INPUT], g[XDEV_CLASS_CONSOLE],
                   shared > 0 ? "holds the shared devices" : "only the VT", why[0] ? ": " : "",
                   why);
        if (shared == 0 && why[0]) {
                (void) snprintf(msg, sizeof msg,
                                "only this VT was granted (%s); X or a compositor cannot start",
                                why);
                tell(pamh, flags, PAM_TEXT_INFO, msg);
        }
}

/* Whether an earlier line of this stack opened the session in this
 * handle. */
static bool already_opened(pam_handle_t *pamh) {
        const void *opened = NULL;
        return pam_get_data(pamh, DATA_OPENED, &opened) == PAM_SUCCESS && opened;
}

/* XDG_RUNTIME_DIR, where nothing earlier in the stack set it (pam_rundir,
 * pam_xdg) and the configuration asks for it: /run/user/UID, a tmpfs of
 * the user's until her last console session ends (rundir.h). */
static void runtime_dir(pam_handle_t *pamh, struct xdev_ctx *ctx, const struct passwd *pw) {
        char path[64], env[96];

        if (!ctx->config.runtime_dir || pam_getenv(pamh, "XDG_RUNTIME_DIR"))
                return;
        if (xdev_rundir_make(XDEV_RUNDIR_BASE, pw->pw_uid, pw->pw_gid, &ctx->log, path,
                             sizeof path) < 0)
                return; /* logged */
        (void) snprintf(env, sizeof env, "XDG_RUNTIME_DIR=%s", path);
        if (pam_putenv(pamh, env) != PAM_SUCCESS)
                pam_syslog(pamh, LOG_WARNING, "cannot set XDG_RUNTIME_DIR, ignoring");
}

/* A broken config grants nothing, not even the VT: the user is told so,
 * with the first error the config's read logged. */
static void tell_broken_config(pam_handle_t *pamh, int flags, const struct sink *sink) {
        char msg[300];

        (void) snprintf(
                msg, sizeof msg,
                "the configuration is broken (%s): no device granted, not even this VT; tell the administrator",
                sink->first_error[0] ? sink->first_error : "see the system log");
        tell(pamh, flags, PAM_ERROR_MSG, msg);
}

XDEV_EXPORT int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
        struct xdev_ctx ctx;
        struct xdev_login_result result;
        struct xdev_login login = { .result = &result };
        struct sink sink;
        const char *user = NULL, *service;
        struct xdev_proc_stat pst;
        struct passwd *pw;
        char env[32];
        unsigned vt;
        int r, ret = PAM_IGNORE;

        (void) setup(pamh, argc, argv, &ctx, &sink);
        if (already_opened(pamh)) {
                /* a second pam_xdevices line in the stack (common-session
                 * and a line of its own in the service's file) */
                xdev_debug(&ctx.log, "an earlier pam_xdevices line opened this session, ignoring");
                goto out;
        }
        if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || !user) {
                xdev_debug(&ctx.log, "no user, ignoring");
                goto out;
        }
        vt = login_vt(pamh, &ctx, user);
        if (vt == 0 || stands_down(pamh, flags, &ctx))
                goto out;
        if (!ctx.config_ok) {
                tell_broken_config(pamh, flags, &sink);
                ret = PAM_SESSION_ERR;
                goto out;
        }
        if (!xdev_name_is_valid(user, XDEV_NAME_MAX)) {
                pam_syslog(pamh, LOG_ERR, "user name is not a portable name, ignoring");
                goto out;
        }
        pw = pam_modutil_getpwnam(pamh, user);
        if (!pw) {
                pam_syslog(pamh, LOG_ERR, "unknown user \"%s\", ignoring", user);
                goto out;
        }
        if (pw->pw_uid == 0) {
                pam_syslog(pamh, LOG_INFO, "\"%s\" on tty%u: root needs no grants: nothing granted",
                           user, vt);
                goto out;
        }
        service = item(pamh, PAM_SERVICE);
        login.user = user;
        login.uid = pw->pw_uid;
        login.service = service ? service : "unknown";
        login.vt = vt;
        login.pid = getpid();
        if (xdev_proc_stat(login.pid, &pst) < 0) {
                pam_syslog(pamh, LOG_ERR, "cannot read /proc/self/stat, ignoring");
                goto out;
        }
        login.start = pst.start;
        r = xdev_session_open(&ctx, &login);
        if (r < 0) {
                pam_syslog(pamh, LOG_ERR, "granting devices to \"%s\" on tty%u failed: %s", user,
                           vt, strerror(-r));
                ret = PAM_SESSION_ERR;
                goto out;
        }
        report(pamh, flags, &ctx, user, vt, r > 0, &result);
        if (pam_set_data(pamh, DATA_OPENED, (void *) 1, NULL) != PAM_SUCCESS)
                pam_syslog(
                        pamh, LOG_WARNING,
                        "cannot remember the session in the PAM handle; xdevices gc will restore it");
        (void) snprintf(env, sizeof env, "XDG_VTNR=%u", vt);
        if (pam_putenv(pamh, env) != PAM_SUCCESS ||
            pam_putenv(pamh, "XDG_SEAT=seat0") != PAM_SUCCESS)
                pam_syslog(pamh, LOG_WARNING, "cannot set XDG_VTNR/XDG_SEAT, ignoring");
        runtime_dir(pamh, &ctx, pw);
        ret = PAM_SUCCESS;
out:
        xdev_ctx_done(&ctx);
        return ret;
}

XDEV_EXPORT int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
        struct xdev_ctx ctx;
        struct xdev_proc_stat pst;
        struct sink sink;
        int r, ret = PAM_IGNORE;

        /* Only a handle whose open_session recorded a session has anything
         * to close: other sessions (su, sshd, ...) touch nothing here, nor
         * a second line of the stack once the first closed it. */
        if (!already_opened(pamh))
                return PAM_IGNORE;
        /* A broken config still lets us restore: the ledger holds everything. */
        (void) setup(pamh, argc, argv, &ctx, &sink);
        if (xdev_proc_stat(getpid(), &pst) < 0)
                goto out;
        r = xdev_session_close(&ctx, getpid(), pst.start);
        if (r >= 0 || r == -ENOENT)
                (void) pam_set_data(pamh, DATA_OPENED, NULL, NULL);
        if (r == -ENOENT) {
                xdev_debug(&ctx.log, "no session of ours in this process, ignoring");
                goto out;
        }
        if (r < 0) {
                pam_syslog(pamh, LOG_ERR, "closing the device session failed: %s", strerror(-r));
                ret = PAM_SESSION_ERR;
                goto out;
        }
        ret = PAM_SUCCESS;
out:
        xdev_ctx_done(&ctx);
        return ret;
}
