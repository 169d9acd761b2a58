/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevices.conf and module-argument parsing: defaults, every key, and every
 * malformed input leaves the config untouched with a message. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "conf.h"
#include "util.h"
#include "runner.h"

static char logbuf[4096];

static XDEV_PRINTF(3, 0) void capture(void *userdata, int priority, const char *fmt, va_list ap) {
        size_t n = strlen(logbuf);
        (void) userdata, (void) priority;
        vsnprintf(logbuf + n, sizeof logbuf - n, fmt, ap);
        strncat(logbuf, "\n", sizeof logbuf - strlen(logbuf) - 1);
}

static const struct xdev_log log_capture = { .fn = capture };

static int parse(struct xdev_config *c, const char *text) {
        logbuf[0] = '\0';
        return xdev_config_parse(c, text, strlen(text), "test.conf", &log_capture);
}

START_TEST(test_defaults) {
        struct xdev_config c;
        xdev_config_init(&c);
        ck_assert_int_eq(c.mode, XDEV_GRANT_ACL);
        ck_assert_int_eq(c.access[XDEV_CLASS_VT], XDEV_ACCESS_RW);
        ck_assert_int_eq(c.access[XDEV_CLASS_DRM], XDEV_ACCESS_RW);
        ck_assert_int_eq(c.access[XDEV_CLASS_INPUT], XDEV_ACCESS_RW);
        ck_assert_int_eq(c.access[XDEV_CLASS_CONSOLE], XDEV_ACCESS_OFF);
        ck_assert_int_eq(c.source, XDEV_SOURCE_AUTO);
        ck_assert_int_eq(c.lingering, XDEV_LINGER_REVOKE);
        ck_assert(!c.ignore_logind);
        ck_assert(xdev_config_service_allowed(&c, "login"));
        xdev_config_free(&c);
}
END_TEST

START_TEST(test_every_key) {
        struct xdev_config c;
        xdev_config_init(&c);
        ck_assert_int_eq(parse(&c,
                               "# comment\n"
                               "\n"
                               "  debug = yes  \n"
                               "mode=chown\n"
                               "vt = r\n"
                               "drm = off\n"
                               "input = r\n"
                               "console = rw\n"
                               "devices = glob\n"
                               "glob = input:/dev/input/event*\n"
                               "glob = drm:/dev/dri/card[0-9]\n"
                               "services = login, agetty\n"
                               "deny_services = su sudo\n"
                               "logind = ignore\n"
                               "lingering = warn\n"
                               "linger_grace = 500\n"
                               "linger_scan_budget = 65536"),
                         0);
        ck_assert(c.debug);
        ck_assert_int_eq(c.mode, XDEV_GRANT_CHOWN);
        ck_assert_int_eq(c.access[XDEV_CLASS_VT], XDEV_ACCESS_R);
        ck_assert_int_eq(c.access[XDEV_CLASS_DRM], XDEV_ACCESS_OFF);
        ck_assert_int_eq(c.access[XDEV_CLASS_INPUT], XDEV_ACCESS_R);
        ck_assert_int_eq(c.access[XDEV_CLASS_CONSOLE], XDEV_ACCESS_RW);
        ck_assert_int_eq(c.source, XDEV_SOURCE_GLOB);
        ck_assert_uint_eq(c.n_globs, 2);
        ck_assert_str_eq(c.globs[0].pattern, "/dev/input/event*");
        ck_assert_int_eq(c.globs[1].class, XDEV_CLASS_DRM);
        ck_assert(xdev_config_service_allowed(&c, "agetty"));
        ck_assert(!xdev_config_service_allowed(&c, "sshd"));
        ck_assert(!xdev_config_service_allowed(&c, "su"));
        ck_assert(c.ignore_logind);
        ck_assert_int_eq(c.lingering, XDEV_LINGER_WARN);
        ck_assert_uint_eq(c.linger_grace_ms, 500);
        ck_assert_uint_eq(c.linger_scan_budget, 65536);
        ck_assert_str_eq(logbuf, "");
        xdev_config_free(&c);
}
END_TEST

static const char *const malformed[] = {
        "mode = sideways\n",
        "mode\n",
        "drm = rwx\n",
        "input =\n",
        "devices = both\n",
        "glob = input\n",
        "glob = vt:/dev/tty1\n",
        "glob = input:/etc/shadow\n",
        "glob = input:/dev/../etc/shadow\n",
        "glob = input:dev/input/*\n",
        "glob = input:/dev/input/\n",
        "glob = input:/dev//input\n",
        "glob = input:/dev/input/event$(reboot)\n",
        "services = lo gin;\n",
        "logind = maybe\n",
        "lingering = sometimes\n",
        "linger_grace = -1\n",
        "linger_grace = 60001\n",
        "linger_grace = 010\n",
        "linger_scan_budget = 1023\n",
        "linger_scan_budget = 1048577\n",
        "linger_scan_budget = 8k\n",
        "debug = perhaps\n",
        "mode = acl\r\n",
        "mode = acl\x01\n",
};

START_TEST(test_malformed_leaves_config_untouched) {
        struct xdev_config c;
        xdev_config_init(&c);
        ck_assert_int_eq(parse(&c, "drm = r\nglob = drm:/dev/dri/card*\n"), 0);
        for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
                char text[256];
                snprintf(text, sizeof text, "input = off\n%s", malformed[i]);
                ck_assert_msg(parse(&c, text) == -EINVAL, "accepted: %s", malformed[i]);
                ck_assert_msg(strstr(logbuf, "test.conf:2: "),
                              "no message naming line 2 for: %s (got %s)", malformed[i], logbuf);
                /* untouched: input stayed rw, drm stayed r, one glob */
                ck_assert_int_eq(c.access[XDEV_CLASS_INPUT], XDEV_ACCESS_RW);
                ck_assert_int_eq(c.access[XDEV_CLASS_DRM], XDEV_ACCESS_R);
                ck_assert_uint_eq(c.n_globs, 1);
        }
        xdev_config_free(&c);
}
END_TEST

START_TEST(test_nul_and_overlong_lines_rejected) {
        struct xdev_config c;
        char *big = malloc(XDEV_CONF_LINE_MAX + 64);
        xdev_config_init(&c);
        logbuf[0] = '\0';
        ck_assert_int_eq(xdev_config_parse(&c, "mode = chown\0\n", 14, "test.conf", &log_capture),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(logbuf, "NUL"));
        ck_assert_int_eq(c.mode, XDEV_GRANT_ACL);
        memset(big, '#', XDEV_CONF_LINE_MAX + 1);
        strcpy(big + XDEV_CONF_LINE_MAX + 1, "\nmode = chown\n");
        ck_assert_int_eq(parse(&c, big), -EINVAL);
        ck_assert_ptr_nonnull(strstr(logbuf, "longer than"));
        ck_assert_int_eq(c.mode, XDEV_GRANT_ACL);
        /* exactly the limit is fine */
        memset(big, '#', XDEV_CONF_LINE_MAX);
        strcpy(big + XDEV_CONF_LINE_MAX, "\nmode = chown\n");
        ck_assert_int_eq(parse(&c, big), 0);
        ck_assert_int_eq(c.mode, XDEV_GRANT_CHOWN);
        free(big);
        xdev_config_free(&c);
}
END_TEST

START_TEST(test_unknown_key_logged_not_fatal) {
        struct xdev_config c;
        xdev_config_init(&c);
        ck_assert_int_eq(parse(&c, "frobnicate = yes\nmode = chown\n"), 0);
        ck_assert_ptr_nonnull(strstr(logbuf, "unknown key \"frobnicate\""));
        ck_assert_int_eq(c.mode, XDEV_GRANT_CHOWN);
        xdev_config_free(&c);
}
END_TEST

START_TEST(test_too_many_globs) {
        struct xdev_config c;
        char text[8192] = "";
        xdev_config_init(&c);
        for (int i = 0; i <= XDEV_GLOBS_MAX; i++)
                strcat(text, "glob = input:/dev/input/event*\n");
        ck_assert_int_eq(parse(&c, text), -EINVAL);
        ck_assert_uint_eq(c.n_globs, 0);
        xdev_config_free(&c);
}
END_TEST

/* The one reader of config and state files: a file that is not the size
 * fstat said when it is read is refused, never parsed in part. */
START_TEST(test_read_file_refuses_a_file_that_changed) {
        char path[] = "/tmp/xdev-test-read.XXXXXX", *buf = NULL;
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(write(fd, "mode = acl\n", 11), 11);
        ck_assert_int_eq(xdev_read_file(fd, 11, "none", &buf), -ESTALE); /* at EOF: 0 bytes */
        ck_assert_ptr_null(buf);
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
        ck_assert_int_eq(xdev_read_file(fd, 11, "none", &buf), 0);
        ck_assert_str_eq(buf, "mode = acl\n");
        free(buf);
        buf = NULL;
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0); /* grew: 11 said, 11 + more there */
        ck_assert_int_eq(xdev_read_file(fd, 5, "none", &buf), -ESTALE);
        ck_assert_ptr_null(buf);
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0); /* shrank: 20 said, 11 there */
        ck_assert_int_eq(xdev_read_file(fd, 20, "none", &buf), -ESTALE);
        ck_assert_ptr_null(buf);
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
        ck_assert_int_eq(xdev_read_file(fd, 0, "none", &buf), -ESTALE);
        (void) close(fd);
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* empty and 0 said: an empty string */
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(xdev_read_file(fd, 0, "none", &buf), 0);
        ck_assert_str_eq(buf, "");
        free(buf);
        (void) close(fd);
}
END_TEST

START_TEST(test_module_args) {
        struct xdev_config c;
        const char *conf = NULL;
        const char *args[] = { "debug", "conf=/etc/x.conf", "mode=chown",
                               "glob=input:/dev/input/js*", "bogus=1" };
        const char *bad[] = { "mode=chown", "drm=sometimes" };
        const char *badconf[] = { "conf=relative.conf" };
        xdev_config_init(&c);
        logbuf[0] = '\0';
        ck_assert_int_eq(xdev_config_parse_args(&c, 5, args, &conf, &log_capture), 0);
        ck_assert(c.debug);
        ck_assert_str_eq(conf, "/etc/x.conf");
        ck_assert_int_eq(c.mode, XDEV_GRANT_CHOWN);
        ck_assert_uint_eq(c.n_globs, 1);
        ck_assert_ptr_nonnull(strstr(logbuf, "unknown module argument \"bogus\""));
        xdev_config_free(&c);
        xdev_config_init(&c);
        ck_assert_int_eq(xdev_config_parse_args(&c, 2, bad, NULL, &log_capture), -EINVAL);
        ck_assert_int_eq(c.mode, XDEV_GRANT_ACL);
        ck_assert_int_eq(xdev_config_parse_args(&c, 1, badconf, &conf, &log_capture), -EINVAL);
        xdev_config_free(&c);
}
END_TEST

/* The shipped xdevices.conf says that its "#key = value" lines show the
 * defaults (examples are indented: "#  glob = ..."): with every such line
 * uncommented, it parses to exactly the built-in defaults. */
START_TEST(test_shipped_conf_shows_the_defaults) {
        const char *path = getenv("XDEV_SHIPPED_CONF");
        char line[1100], text[16384] = "";
        struct xdev_config c, d;
        FILE *f;
        int shown = 0;

        ck_assert_msg(path, "XDEV_SHIPPED_CONF is not set");
        f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof line, f)) {
                const char *p = line + 1;
                if (line[0] != '#' || !((*p >= 'a' && *p <= 'z') || *p == '_'))
                        continue;
                while ((*p >= 'a' && *p <= 'z') || *p == '_')
                        p++;
                if (*p != ' ' && *p != '=' && *p != '\n')
                        continue; /* prose */
                if (strstr(line, " = ") || strcmp(line, "#debug\n") == 0) {
                        strncat(text, line + 1, sizeof text - strlen(text) - 1);
                        shown++;
                }
        }
        fclose(f);
        ck_assert_int_ge(shown, 10);
        xdev_config_init(&c);
        xdev_config_init(&d);
        ck_assert_msg(parse(&c, text) == 0, "%s", logbuf);
        ck_assert_msg(logbuf[0] == '\0', "unknown keys: %s", logbuf);
        ck_assert_int_eq(c.mode, d.mode);
        for (int i = 0; i < _XDEV_CLASS_MAX; i++)
                ck_assert_int_eq(c.access[i], d.access[i]);
        ck_assert_int_eq(c.source, d.source);
        ck_assert_msg(c.n_globs == 0, "\"#glob = ...\" lines are not defaults (%zu)", c.n_globs);
        ck_assert_uint_eq(c.n_services, 0);
        ck_assert_uint_eq(c.n_deny_services, 0);
        ck_assert_int_eq(c.ignore_logind, d.ignore_logind);
        ck_assert_int_eq(c.lingering, d.lingering);
        ck_assert_uint_eq(c.linger_grace_ms, d.linger_grace_ms);
        ck_assert_int_eq(c.debug, d.debug);
        xdev_config_free(&c);
}
END_TEST

/* The shipped xdevices.conf names every lingering policy, kill-user too. */
START_TEST(test_shipped_conf_names_every_lingering_policy) {
        static const char *const policies[] = { "\"revoke\"", "\"kill\"", "\"warn\"",
                                                "\"kill-user\"" };
        const char *path = getenv("XDEV_SHIPPED_CONF");
        char text[16384];
        size_t n;
        FILE *f;

        ck_assert_msg(path, "XDEV_SHIPPED_CONF is not set");
        f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
                ck_assert_msg(strstr(text, policies[i]), "the shipped config does not name %s",
                              policies[i]);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("conf");
        TCase *tc = h_tcase(s, "parse", 0, NULL, NULL);
        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_every_key);
        tcase_add_test(tc, test_malformed_leaves_config_untouched);
        tcase_add_test(tc, test_nul_and_overlong_lines_rejected);
        tcase_add_test(tc, test_unknown_key_logged_not_fatal);
        tcase_add_test(tc, test_too_many_globs);
        tcase_add_test(tc, test_module_args);
        tcase_add_test(tc, test_read_file_refuses_a_file_that_changed);
        tcase_add_test(tc, test_shipped_conf_shows_the_defaults);
        tcase_add_test(tc, test_shipped_conf_names_every_lingering_policy);
        return s;
}

H_SUITE(suite, H_ANY_USER)
H_MAIN(NULL)
