/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevices.conf and module-argument parsing: defaults, every key, and every
 * malformed input leaves the config untouched with a message. login.defs,
 * for the bound of system accounts: its parser as any user, its loader's
 * refusals of hostile files (as root for those that need a root-owned
 * file). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "conf.h"
#include "linger.h"
#include "logindefs.h"
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
        ck_assert_int_eq(c.system_uid_max, -1);
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
                               "deny_services = su ,\tsudo\n"
                               "logind = ignore\n"
                               "lingering = warn\n"
                               "linger_grace = 500\n"
                               "system_uid_max = 1999\n"
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
        ck_assert_uint_eq(c.n_services, 2);
        ck_assert_str_eq(c.services[1], "agetty");
        ck_assert_uint_eq(c.n_deny_services, 2);
        ck_assert_str_eq(c.deny_services[1], "sudo");
        ck_assert(c.ignore_logind);
        ck_assert_int_eq(c.lingering, XDEV_LINGER_WARN);
        ck_assert_uint_eq(c.linger_grace_ms, 500);
        ck_assert_uint_eq(c.linger_scan_budget, 65536);
        ck_assert_int_eq(c.system_uid_max, 1999);
        ck_assert_int_eq(xdev_linger_system_uid_max(&c, &log_capture, NULL), 1999);
        ck_assert_int_eq(parse(&c, "system_uid_max = 0\n"), 0);
        ck_assert_int_eq(c.system_uid_max, 0);
        ck_assert_int_eq(parse(&c, "system_uid_max = auto\n"), 0);
        ck_assert_int_eq(c.system_uid_max, -1);
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
        "services = lo gin\n",
        "services = login,lo gin\n",
        "services = login\tsu\n",
        "deny_services = a b\n",
        "logind = maybe\n",
        "lingering = sometimes\n",
        "linger_grace = -1\n",
        "linger_grace = 60001\n",
        "linger_grace = 010\n",
        "linger_scan_budget = 1023\n",
        "linger_scan_budget = 1048577\n",
        "linger_scan_budget = 8k\n",
        "system_uid_max = 65534\n",
        "system_uid_max = -1\n",
        "system_uid_max = 0999\n",
        "system_uid_max = login.defs\n",
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
        ck_assert_int_eq(c.system_uid_max, d.system_uid_max);
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

/* login.defs text through its parser: RET's value when it returns 0, -1
 * (untouched) otherwise. */
static int defs_parse(const char *text, size_t len, uid_t *ret) {
        logbuf[0] = '\0';
        *ret = (uid_t) -1;
        return xdev_logindefs_parse(text, len, "test.defs", &log_capture, ret);
}

#define DEFS(text, ret) defs_parse((text), sizeof(text) - 1, (ret))

/* SYS_UID_MAX, else UID_MIN less one, as useradd reads login.defs: its
 * comments, blanks, quotes and repeated names. */
START_TEST(test_logindefs_reads_the_bound) {
        uid_t u;

        ck_assert_int_eq(DEFS("# /etc/login.defs\nMAIL_DIR\t/var/mail\nUID_MIN\t\t\t 1000\n"
                              "UID_MAX\t\t\t60000\n#SYS_UID_MIN\t\t  101\n#SYS_UID_MAX\t\t  999\n",
                              &u),
                         0);
        ck_assert_uint_eq(u, 999);
        ck_assert_int_eq(DEFS("SYS_UID_MAX 499\nUID_MIN 1000\n", &u), 0);
        ck_assert_uint_eq(u, 499);
        /* SYS_UID_MAX counts wherever UID_MIN is */
        ck_assert_int_eq(DEFS("SYS_UID_MAX 300\nUID_MIN 5000\n", &u), 0);
        ck_assert_uint_eq(u, 300);
        ck_assert_int_eq(DEFS("UID_MIN 500\n", &u), 0);
        ck_assert_uint_eq(u, 499);
        ck_assert_int_eq(DEFS("  SYS_UID_MAX \t \"1999\"  \r\n", &u), 0);
        ck_assert_uint_eq(u, 1999);
        ck_assert_int_eq(DEFS("SYS_UID_MAX 100\nSYS_UID_MAX 200\n", &u), 0);
        ck_assert_uint_eq(u, 200);
        ck_assert_int_eq(DEFS("SYS_UID_MAX 0", &u), 0);
        ck_assert_uint_eq(u, 0);
        ck_assert_int_eq(DEFS("SYS_UID_MAX 65533\n", &u), 0);
        ck_assert_uint_eq(u, 65533);
        ck_assert_int_eq(DEFS("UID_MIN 65534\n", &u), 0);
        ck_assert_uint_eq(u, 65533);
        /* a bad UID_MIN does not count beside a good SYS_UID_MAX */
        ck_assert_int_eq(DEFS("UID_MIN zero\nSYS_UID_MAX 999\n", &u), 0);
        ck_assert_uint_eq(u, 999);
        ck_assert_str_eq(logbuf, "");
        /* neither: comments, a name alone, other names, other cases */
        ck_assert_int_eq(DEFS("", &u), -ENOENT);
        ck_assert_int_eq(DEFS("#SYS_UID_MAX 5\n  # UID_MIN 5\nSYS_UID_MAX\nUID_MIN   \n", &u),
                         -ENOENT);
        ck_assert_int_eq(DEFS("SYS_UID_MAXX 5\nsys_uid_max 5\nXUID_MIN 5\nUID_MIN=5\n", &u),
                         -ENOENT);
        ck_assert_int_eq(DEFS("\0SYS_UID_MAX 5\n\n\n", &u), -ENOENT);
        ck_assert_uint_eq(u, (uid_t) -1);
}
END_TEST

/* A value that is not a plain decimal in range is refused with a line
 * naming the file's line, and nothing is taken from the file. */
START_TEST(test_logindefs_refuses_bad_values) {
        static const char *const bad[] = {
                "SYS_UID_MAX -1\n",
                "SYS_UID_MAX +5\n",
                "SYS_UID_MAX 0999\n",
                "SYS_UID_MAX 0x3E7\n",
                "SYS_UID_MAX 999 # the system's\n",
                "SYS_UID_MAX 999abc\n",
                "SYS_UID_MAX 1e3\n",
                "SYS_UID_MAX 65534\n",
                "SYS_UID_MAX 4294967295\n",
                "SYS_UID_MAX 18446744073709551616\n",
                "SYS_UID_MAX 99999999999999999999999999999999\n",
                "SYS_UID_MAX \"999\n",
                "SYS_UID_MAX \"\"\n",
                "UID_MIN 0\n",
                "UID_MIN 65535\n",
                "UID_MIN one-thousand\n",
                "UID_MIN 1000\nSYS_UID_MAX nine\n",
        };
        uid_t u;

        for (size_t i = 0; i < XDEV_ELEMENTSOF(bad); i++) {
                ck_assert_msg(defs_parse(bad[i], strlen(bad[i]), &u) == -EINVAL, "accepted: %s",
                              bad[i]);
                ck_assert_msg(strstr(logbuf, "test.defs:") && strstr(logbuf, "up to 999"),
                              "no message for %s: %s", bad[i], logbuf);
                ck_assert_uint_eq(u, (uid_t) -1);
        }
        /* a NUL in the value, and a control character shown as '?' */
        ck_assert_int_eq(DEFS("SYS_UID_MAX 9\0009\n", &u), -EINVAL);
        ck_assert_int_eq(DEFS("\n\nSYS_UID_MAX \x1b[2J\n", &u), -EINVAL);
        ck_assert_msg(strstr(logbuf, "test.defs:3: SYS_UID_MAX \"?[2J\"") &&
                              !strchr(logbuf, '\x1b'),
                      "%s", logbuf);
}
END_TEST

/* A temporary directory of files to load, removed by the caller. */
static char defs_dir[64];

static void defs_dir_make(void) {
        (void) snprintf(defs_dir, sizeof defs_dir, "/tmp/xdev-test-defs.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(defs_dir));
}

static void defs_dir_remove(void) {
        char cmd[128];
        (void) snprintf(cmd, sizeof cmd, "rm -rf '%s'", defs_dir);
        ck_assert_int_eq(system(cmd), 0);
}

/* DIR/NAME with LEN bytes of TEXT, MODE; its path in PATH. */
static void defs_write(char *path, size_t size, const char *name, const char *text, size_t len,
                       mode_t mode) {
        (void) snprintf(path, size, "%s/%s", defs_dir, name);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t) len);
        ck_assert_int_eq(fchmod(fd, mode), 0);
        (void) close(fd);
}

/* Loads PATH: its result, the bound in *RET. */
static int defs_load(const char *path, uid_t *ret) {
        logbuf[0] = '\0';
        *ret = 12345;
        return xdev_logindefs_load(path, &log_capture, NULL, ret);
}

/* What any user can be refused: a link (never followed), a FIFO (no
 * wait for a writer), a directory, a missing file (quietly), and, not as
 * root, a file that is not root's. Each leaves the default. */
START_TEST(test_logindefs_load_refuses_what_is_not_a_file) {
        char good[128], path[128];
        uid_t u;

        defs_dir_make();
        defs_write(good, sizeof good, "defs", "SYS_UID_MAX 1999\n", 17, 0644);
        (void) snprintf(path, sizeof path, "%s/link", defs_dir);
        ck_assert_int_eq(symlink(good, path), 0);
        ck_assert_int_eq(defs_load(path, &u), -ELOOP);
        ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
        ck_assert_msg(strstr(logbuf, "a symbolic link, not followed"), "%s", logbuf);
        (void) snprintf(path, sizeof path, "%s/fifo", defs_dir);
        ck_assert_int_eq(mkfifo(path, 0644), 0);
        ck_assert_int_eq(defs_load(path, &u), -EPERM);
        ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
        ck_assert_msg(strstr(logbuf, "not a regular file"), "%s", logbuf);
        ck_assert_int_eq(defs_load(defs_dir, &u), -EPERM);
        ck_assert_msg(strstr(logbuf, "not a regular file"), "%s", logbuf);
        (void) snprintf(path, sizeof path, "%s/none", defs_dir);
        ck_assert_int_eq(defs_load(path, &u), -ENOENT);
        ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
        ck_assert_str_eq(logbuf, ""); /* at debug only */
        if (geteuid() != 0) {
                ck_assert_int_eq(defs_load(good, &u), -EPERM);
                ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
                ck_assert_msg(strstr(logbuf, "not owned by root"), "%s", logbuf);
        }
        defs_dir_remove();
}
END_TEST

/* A load's log lines as xdevicesd's --debug has them, each after its level
 * ("warning: ", "debug: "), into logbuf. */
static XDEV_PRINTF(3, 0) void capture_level(void *userdata, int priority, const char *fmt,
                                            va_list ap) {
        size_t n = strlen(logbuf);
        (void) snprintf(logbuf + n, sizeof logbuf - n, "%s: ",
                        priority == LOG_DEBUG             ? "debug"
                                : priority == LOG_WARNING ? "warning"
                                                          : "other");
        capture(userdata, priority, fmt, ap);
}

static const struct xdev_log log_level = { .fn = capture_level, .debug = true };

/* Loads PATH through MEMO (NULL: none) with debug lines on: its result;
 * the bound is the default unless it is 0. */
static int defs_load_memo(const char *path, struct xdev_logindefs_memo *memo) {
        uid_t u = 12345;
        int r;

        logbuf[0] = '\0';
        r = xdev_logindefs_load(path, &log_level, memo, &u);
        if (r < 0)
                ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
        return r;
}

#define DEFS_LINK_WHY \
        ": a symbolic link, not followed; system accounts taken as uids up to 999 " \
        "(system_uid_max in xdevices.conf sets it)"
#define DEFS_AGAIN " (as before; a warning again once it changes)"
#define DEFS_PAST ": the warning of before no longer holds"

/* PATH made a link to TARGET, and the two lines its load gives through a
 * memo: the warning, and the debug line of a repeat. */
static void defs_link(const char *target, const char *path, char *warned, char *again,
                      size_t size) {
        (void) unlink(path);
        ck_assert_int_eq(symlink(target, path), 0);
        (void) snprintf(warned, size, "warning: %s" DEFS_LINK_WHY "\n", path);
        (void) snprintf(again, size, "debug: %s" DEFS_LINK_WHY DEFS_AGAIN "\n", path);
}

/* xdevicesd loads login.defs at each pass, through a memo: a problem is a
 * warning once, then a debug line at each load while it stays the same; a
 * load that warns of nothing (the file gone) makes the same problem a
 * warning again, and another problem (a FIFO) is a warning of its own.
 * Without a memo (the module: one pass a logout) each load warns. */
START_TEST(test_logindefs_memo_warns_once_a_problem) {
        struct xdev_logindefs_memo memo = XDEV_LOGINDEFS_MEMO_INIT;
        char good[128], path[128], warned[512], again[512], line[512];

        defs_dir_make();
        defs_write(good, sizeof good, "defs", "SYS_UID_MAX 1999\n", 17, 0644);
        (void) snprintf(path, sizeof path, "%s/login.defs", defs_dir);
        defs_link(good, path, warned, again, sizeof warned);
        ck_assert_int_eq(defs_load_memo(path, &memo), -ELOOP);
        ck_assert_str_eq(logbuf, warned);
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(defs_load_memo(path, &memo), -ELOOP);
                ck_assert_str_eq(logbuf, again);
        }
        /* gone: nothing to warn of, and the memo says the warning is past */
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(defs_load_memo(path, &memo), -ENOENT);
        (void) snprintf(line, sizeof line, "debug: %s" DEFS_PAST "\n", path);
        ck_assert_msg(strstr(logbuf, line) && !strstr(logbuf, "warning: "), "%s", logbuf);
        ck_assert_int_eq(defs_load_memo(path, &memo), -ENOENT);
        ck_assert_msg(!strstr(logbuf, DEFS_PAST), "said twice: %s", logbuf);
        /* the link again: a warning again */
        defs_link(good, path, warned, again, sizeof warned);
        ck_assert_int_eq(defs_load_memo(path, &memo), -ELOOP);
        ck_assert_str_eq(logbuf, warned);
        ck_assert_int_eq(defs_load_memo(path, &memo), -ELOOP);
        ck_assert_str_eq(logbuf, again);
        /* another problem at the same path: a warning of its own, once */
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(mkfifo(path, 0644), 0);
        (void) snprintf(line, sizeof line, "%s: not a regular file", path);
        ck_assert_int_eq(defs_load_memo(path, &memo), -EPERM);
        ck_assert_msg(strncmp(logbuf, "warning: ", 9) == 0 && strstr(logbuf, line), "%s", logbuf);
        ck_assert_int_eq(defs_load_memo(path, &memo), -EPERM);
        ck_assert_msg(strncmp(logbuf, "debug: ", 7) == 0 && strstr(logbuf, line) &&
                              strstr(logbuf, DEFS_AGAIN),
                      "%s", logbuf);
        /* without a memo, a warning at every load */
        defs_link(good, path, warned, again, sizeof warned);
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(defs_load_memo(path, NULL), -ELOOP);
                ck_assert_str_eq(logbuf, warned);
        }
        defs_dir_remove();
}
END_TEST

/* As root, the file fixed: a good read makes the memo forget, and the
 * link put back is a warning again. */
START_TEST(test_logindefs_memo_warns_again_after_a_good_read) {
        struct xdev_logindefs_memo memo = XDEV_LOGINDEFS_MEMO_INIT;
        char good[128], fixed[128], path[128], warned[512], again[512], past[512];

        defs_dir_make();
        defs_write(good, sizeof good, "defs", "SYS_UID_MAX 1999\n", 17, 0644);
        (void) snprintf(path, sizeof path, "%s/login.defs", defs_dir);
        defs_link(good, path, warned, again, sizeof warned);
        ck_assert_int_eq(defs_load_memo(path, &memo), -ELOOP);
        ck_assert_str_eq(logbuf, warned);
        ck_assert_int_eq(defs_load_memo(path, &memo), -ELOOP);
        ck_assert_str_eq(logbuf, again);
        defs_write(fixed, sizeof fixed, "fixed", "SYS_UID_MAX 1998\n", 17, 0644);
        ck_assert_int_eq(rename(fixed, path), 0); /* over the link, not through it */
        ck_assert_int_eq(defs_load_memo(path, &memo), 0);
        (void) snprintf(past, sizeof past, "debug: %s" DEFS_PAST "\n", path);
        ck_assert_str_eq(logbuf, past);
        ck_assert_int_eq(defs_load_memo(path, &memo), 0);
        ck_assert_str_eq(logbuf, "");
        defs_link(good, path, warned, again, sizeof warned);
        ck_assert_int_eq(defs_load_memo(path, &memo), -ELOOP);
        ck_assert_str_eq(logbuf, warned);
        ck_assert_int_eq(defs_load_memo(path, &memo), -ELOOP);
        ck_assert_str_eq(logbuf, again);
        defs_dir_remove();
}
END_TEST

/* As root: a root-owned file is read; one of another owner, one a group
 * or others may write, one too large, one with a bad value are refused,
 * each with its line, and leave the default; garbage with neither name
 * is the default, quietly. */
START_TEST(test_logindefs_load_checks_owner_mode_size) {
        static char big[XDEV_LOGIN_DEFS_FILE_MAX + 1];
        const char *tail = "\nSYS_UID_MAX 1999\n";
        char path[128];
        uid_t u;

        defs_dir_make();
        defs_write(path, sizeof path, "defs", "SYS_UID_MAX 1999\n", 17, 0644);
        ck_assert_int_eq(defs_load(path, &u), 0);
        ck_assert_uint_eq(u, 1999);
        ck_assert_int_eq(chown(path, 1000, 0), 0);
        ck_assert_int_eq(defs_load(path, &u), -EPERM);
        ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
        ck_assert_msg(strstr(logbuf, "not owned by root"), "%s", logbuf);
        ck_assert_int_eq(chown(path, 0, 0), 0);
        static const mode_t writable[] = { 0664, 0646, 0620, 0602 };
        for (size_t i = 0; i < XDEV_ELEMENTSOF(writable); i++) {
                ck_assert_int_eq(chmod(path, writable[i]), 0);
                ck_assert_int_eq(defs_load(path, &u), -EPERM);
                ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
                ck_assert_msg(strstr(logbuf, "writable by group or others"), "%s", logbuf);
        }
        /* the size cap: the key at its very end is read, one byte more is
         * refused without a read */
        memset(big, '#', sizeof big);
        memcpy(big + XDEV_LOGIN_DEFS_FILE_MAX - strlen(tail), tail, strlen(tail));
        defs_write(path, sizeof path, "big", big, XDEV_LOGIN_DEFS_FILE_MAX, 0600);
        ck_assert_int_eq(defs_load(path, &u), 0);
        ck_assert_uint_eq(u, 1999);
        defs_write(path, sizeof path, "huge", big, sizeof big, 0600);
        ck_assert_int_eq(defs_load(path, &u), -EFBIG);
        ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
        ck_assert_msg(strstr(logbuf, "larger than 65536 bytes"), "%s", logbuf);
        defs_write(path, sizeof path, "overflow", "SYS_UID_MAX 99999999999999999999\n", 33, 0644);
        ck_assert_int_eq(defs_load(path, &u), -EINVAL);
        ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
        ck_assert_msg(strstr(logbuf, "/overflow:1: SYS_UID_MAX"), "%s", logbuf);
        for (size_t i = 0; i < sizeof big; i++)
                big[i] = (char) (i * 7919 % 251 + 1);
        defs_write(path, sizeof path, "garbage", big, 4096, 0644);
        ck_assert_int_eq(defs_load(path, &u), 0);
        ck_assert_uint_eq(u, XDEV_SYSTEM_UID_MAX);
        ck_assert_str_eq(logbuf, "");
        defs_dir_remove();
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
        tc = h_tcase(s, "logindefs", 0, NULL, NULL);
        tcase_add_test(tc, test_logindefs_reads_the_bound);
        tcase_add_test(tc, test_logindefs_refuses_bad_values);
        tcase_add_test(tc, test_logindefs_load_refuses_what_is_not_a_file);
        tcase_add_test(tc, test_logindefs_memo_warns_once_a_problem);
        return s;
}

static Suite *root_suite(void) {
        Suite *s = suite_create("conf-root");
        TCase *tc = h_tcase(s, "logindefs-files", 0, NULL, NULL);
        tcase_add_test(tc, test_logindefs_load_checks_owner_mode_size);
        tcase_add_test(tc, test_logindefs_memo_warns_again_after_a_good_read);
        return s;
}

/* The root suite needs root's files, not the harness. */
static int root_ready(void) {
        return 0;
}

H_SUITE(suite, H_ANY_USER)
H_SUITE(root_suite, H_ROOT_ONLY)
H_MAIN((&(const struct h_setup) { root_ready, NULL }))
