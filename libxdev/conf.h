/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevices.conf: defaults, the file parser and the module-argument parser. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

enum xdev_class {
        XDEV_CLASS_VT,      /* the login VT, /dev/ttyN, 1 <= N <= 63 */
        XDEV_CLASS_DRM,     /* card*, renderD*, major 226 */
        XDEV_CLASS_INPUT,   /* event*, mouse*, mice, js*, major 13 */
        XDEV_CLASS_CONSOLE, /* /dev/tty0, opt-in: it follows the foreground VT */
        _XDEV_CLASS_MAX,
};

/* Permission bits as in an ACL entry. */
enum xdev_access {
        XDEV_ACCESS_OFF = 0,
        XDEV_ACCESS_R = 4,
        XDEV_ACCESS_RW = 6,
};

enum xdev_grant_mode { XDEV_GRANT_ACL, XDEV_GRANT_CHOWN };
enum xdev_source { XDEV_SOURCE_AUTO, XDEV_SOURCE_UDEV, XDEV_SOURCE_GLOB };
/* What happens to processes of a user who lost the shared devices and still
 * hold them open. KILL_USER: at logout, every process of that user ends. */
enum xdev_linger { XDEV_LINGER_REVOKE, XDEV_LINGER_KILL, XDEV_LINGER_WARN, XDEV_LINGER_KILL_USER };

#define XDEV_CONF_LINE_MAX 1024
#define XDEV_CONF_FILE_MAX (64 * 1024)
#define XDEV_CONF_DROPINS_MAX 64
#define XDEV_GLOBS_MAX 32
#define XDEV_SERVICES_MAX 32
#define XDEV_NAME_MAX 32
#define XDEV_DEFAULT_CONF SYSCONFDIR "/security/xdevices.conf"

struct xdev_glob {
        enum xdev_class class;
        char *pattern;
};

struct xdev_config {
        bool debug;
        bool runtime_dir; /* make /run/user/UID where nobody else does (rundir.h) */
        enum xdev_grant_mode mode;
        enum xdev_access access[_XDEV_CLASS_MAX];
        enum xdev_source source;
        struct xdev_glob globs[XDEV_GLOBS_MAX];
        size_t n_globs;
        char *services[XDEV_SERVICES_MAX]; /* allow list; empty = any */
        size_t n_services;
        char *deny_services[XDEV_SERVICES_MAX];
        size_t n_deny_services;
        bool ignore_logind;
        enum xdev_linger lingering;
        unsigned linger_grace_ms;
        unsigned linger_scan_budget; /* per process, see sweep.h */
        /* the highest uid of a system account, which the pass after the
         * lock leaves alone; -1 (auto): login.defs' (logindefs.h) */
        long system_uid_max;
};

const char *xdev_class_to_string(enum xdev_class c);
int xdev_class_from_string(const char *s); /* class or -EINVAL */
unsigned xdev_class_major(enum xdev_class c);
const char *xdev_access_to_string(enum xdev_access a);
int xdev_access_from_string(const char *s); /* access or -EINVAL */
const char *xdev_grant_mode_to_string(enum xdev_grant_mode m);
int xdev_grant_mode_from_string(const char *s); /* mode or -EINVAL */

/* Fills CONFIG with the built-in defaults (no globs, no services list). */
void xdev_config_init(struct xdev_config *config);
void xdev_config_free(struct xdev_config *config);

/* Applies one "key=value" (or "debug"). Returns 0, -ENOENT for an unknown key
 * (the caller logs and goes on), -EINVAL for a bad value or -E2BIG for a full
 * list; CONFIG is unchanged on failure. */
int xdev_config_set(struct xdev_config *config, const char *key, const char *value);

/* Parses a buffer in xdevices.conf syntax. Any malformed line makes the whole
 * buffer fail and leaves CONFIG unchanged; unknown keys are logged and
 * skipped. WHERE names the source in messages. */
int xdev_config_parse(struct xdev_config *config, const char *buf, size_t len, const char *where,
                      const struct xdev_log *log);

/* Reads PATH (must be a root-owned regular file, not group/world-writable,
 * opened without following links) and then PATH's sibling "xdevices.d/
 * *.conf" in lexical order. A missing main file is fine (defaults).
 * Returns 0 or -errno; on failure CONFIG is back to what it was. */
int xdev_config_load(struct xdev_config *config, const char *path, const struct xdev_log *log);

/* The same for a file that was named (conf=, --conf): a missing main file
 * is an error (-ENOENT, logged), not the defaults. */
int xdev_config_load_named(struct xdev_config *config, const char *path,
                           const struct xdev_log *log);

/* The files xdevices check read: the main one first, then each drop-in
 * (or the drop-in directory, when it cannot be read), with the errors
 * counted in each. */
struct xdev_config_files {
        size_t n;
        struct xdev_config_file {
                char path[600];
                unsigned errors;
                bool missing; /* the main file does not exist: the defaults apply */
        } file[XDEV_CONF_DROPINS_MAX + 2];
};

/* xdevices check: loads as xdev_config_load() (MUST_EXIST: as
 * xdev_config_load_named()) but goes on after a bad line or file and logs
 * every one as "FILE:LINE: message" or "FILE: message"; an unknown key,
 * which a load only warns of, counts too. Fills *RET_FILES (may be NULL)
 * with the files read. Returns the number of errors (0: CONFIG is what a
 * load gives). */
int xdev_config_check(struct xdev_config *config, const char *path, bool must_exist,
                      const struct xdev_log *log, struct xdev_config_files *ret_files);

/* Module arguments: "debug", "conf=PATH" (taken out into *ret_conf), and the
 * same keys as the file. Malformed values fail the whole argument list. */
int xdev_config_parse_args(struct xdev_config *config, int argc, const char **argv,
                           const char **ret_conf, const struct xdev_log *log);

bool xdev_config_service_allowed(const struct xdev_config *config, const char *service);
