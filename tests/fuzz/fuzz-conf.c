/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the xdevices.conf parser and the module-argument parser.
 * On failure the config (and the conf= output) must be exactly as before;
 * nothing may leak (LeakSanitizer). */
#include "config.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "fuzz.h"

static XDEV_PRINTF(3, 0) void log_sink(void *userdata, int priority, const char *fmt, va_list ap) {
        char buf[2048];
        (void) userdata, (void) priority;
        (void) vsnprintf(buf, sizeof buf, fmt, ap);
}

static const struct xdev_log fuzz_log = { .fn = log_sink, .debug = true };

/* A config that is not the defaults, so "untouched" is a real check. */
static void config_preload(struct xdev_config *c) {
        int r = 0;

        xdev_config_init(c);
        r |= xdev_config_set(c, "glob", "drm:/dev/dri/card*");
        r |= xdev_config_set(c, "services", "login,xdm");
        r |= xdev_config_set(c, "deny_services", "sshd");
        r |= xdev_config_set(c, "input", "r");
        assert(r == 0);
}

static bool config_equal(const struct xdev_config *a, const struct xdev_config *b) {
        if (a->debug != b->debug || a->mode != b->mode || a->source != b->source ||
            a->ignore_logind != b->ignore_logind || a->lingering != b->lingering ||
            a->linger_grace_ms != b->linger_grace_ms ||
            a->linger_scan_budget != b->linger_scan_budget ||
            a->system_uid_max != b->system_uid_max ||
            memcmp(a->access, b->access, sizeof a->access) != 0 || a->n_globs != b->n_globs ||
            a->n_services != b->n_services || a->n_deny_services != b->n_deny_services)
                return false;
        for (size_t i = 0; i < a->n_globs; i++)
                if (a->globs[i].class != b->globs[i].class ||
                    strcmp(a->globs[i].pattern, b->globs[i].pattern) != 0)
                        return false;
        for (size_t i = 0; i < a->n_services; i++)
                if (strcmp(a->services[i], b->services[i]) != 0)
                        return false;
        for (size_t i = 0; i < a->n_deny_services; i++)
                if (strcmp(a->deny_services[i], b->deny_services[i]) != 0)
                        return false;
        return true;
}

/* Every accepted value keeps the invariants the rest of the core relies on. */
static void config_check_sane(const struct xdev_config *c) {
        assert(c->system_uid_max >= -1 && c->system_uid_max < 65534);
        assert(c->n_globs <= XDEV_GLOBS_MAX);
        assert(c->n_services <= XDEV_SERVICES_MAX && c->n_deny_services <= XDEV_SERVICES_MAX);
        for (size_t i = 0; i < c->n_globs; i++) {
                assert(c->globs[i].class != XDEV_CLASS_VT && c->globs[i].class < _XDEV_CLASS_MAX);
                assert(strncmp(c->globs[i].pattern, "/dev/", 5) == 0);
                assert(!strstr(c->globs[i].pattern, "/../") && !strstr(c->globs[i].pattern, "//"));
        }
        for (size_t i = 0; i < c->n_services; i++)
                assert(xdev_name_is_valid(c->services[i], XDEV_NAME_MAX));
        for (size_t i = 0; i < c->n_deny_services; i++)
                assert(xdev_name_is_valid(c->deny_services[i], XDEV_NAME_MAX));
        for (int k = 0; k < _XDEV_CLASS_MAX; k++)
                assert(c->access[k] == XDEV_ACCESS_OFF || c->access[k] == XDEV_ACCESS_R ||
                       c->access[k] == XDEV_ACCESS_RW);
}

static void fuzz_file(const uint8_t *data, size_t size) {
        struct xdev_config config, before;
        int r;

        config_preload(&config);
        config_preload(&before);
        r = xdev_config_parse(&config, (const char *) data, size, "fuzz", &fuzz_log);
        if (r < 0)
                assert(config_equal(&config, &before));
        config_check_sane(&config);
        xdev_config_free(&config);
        xdev_config_free(&before);
}

/* NUL-separated arguments, as PAM hands them over (at most 64). */
static void fuzz_args(const uint8_t *data, size_t size) {
        static const char sentinel[] = "/sentinel";
        struct xdev_config config, before;
        const char *argv[64], *conf = sentinel;
        char *copy = malloc(size + 1);
        int argc = 0, r;

        assert(copy);
        memcpy(copy, data, size);
        copy[size] = '\0';
        for (size_t pos = 0; pos < size && argc < 64;) {
                argv[argc++] = copy + pos;
                pos += strlen(copy + pos) + 1;
        }
        config_preload(&config);
        config_preload(&before);
        r = xdev_config_parse_args(&config, argc, argv, &conf, &fuzz_log);
        if (r < 0) {
                assert(config_equal(&config, &before));
                assert(conf == sentinel);
        } else if (conf != sentinel)
                assert(conf[0] == '/');
        config_check_sane(&config);
        xdev_config_free(&config);
        xdev_config_free(&before);
        free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1 || size > 256 * 1024)
                return 0;
        /* The first byte picks the parser, so one corpus feeds both. */
        if (data[0] & 1)
                fuzz_args(data + 1, size - 1);
        else
                fuzz_file(data + 1, size - 1);
        return 0;
}
