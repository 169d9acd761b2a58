/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevices.conf: defaults, the file parser and the module-argument parser.
 *
 * The config decides who may touch devices, so it is trusted only when it is
 * a root-owned regular file that nobody else can write (OpenDoas' rule), and
 * a file that fails to parse changes nothing: no half-applied settings. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "conf.h"
#include "drmdev.h"
#include "evdev.h"
#include "logindefs.h"
#include "vt.h"

/* Every word the config spells for an enum, for parsing and printing
 * alike: WORDS[KIND][VALUE] is the spelling of VALUE in the enum KIND. */
enum word_kind { WORD_CLASS, WORD_ACCESS, WORD_MODE, WORD_SOURCE, WORD_LOGIND, WORD_LINGER };

#define WORDS_MAX 8 /* above the largest value of an enum with words */

static const char *const words[][WORDS_MAX] = {
        [WORD_CLASS] = { [XDEV_CLASS_VT] = "vt",
                         [XDEV_CLASS_DRM] = "drm",
                         [XDEV_CLASS_INPUT] = "input",
                         [XDEV_CLASS_CONSOLE] = "console" },
        [WORD_ACCESS] = { [XDEV_ACCESS_OFF] = "off",
                          [XDEV_ACCESS_R] = "r",
                          [XDEV_ACCESS_RW] = "rw" },
        [WORD_MODE] = { [XDEV_GRANT_ACL] = "acl", [XDEV_GRANT_CHOWN] = "chown" },
        [WORD_SOURCE] = { [XDEV_SOURCE_AUTO] = "auto",
                          [XDEV_SOURCE_UDEV] = "udev",
                          [XDEV_SOURCE_GLOB] = "glob" },
        [WORD_LOGIND] = { [false] = "standdown", [true] = "ignore" }, /* ignore_logind */
        [WORD_LINGER] = { [XDEV_LINGER_REVOKE] = "revoke",
                          [XDEV_LINGER_KILL] = "kill",
                          [XDEV_LINGER_WARN] = "warn",
                          [XDEV_LINGER_KILL_USER] = "kill-user" },
};

/* The value S spells in the enum KIND, or -EINVAL. */
static int word_value(enum word_kind kind, const char *s) {
        for (size_t i = 0; s && i < XDEV_ELEMENTSOF(words[kind]); i++)
                if (words[kind][i] && strcmp(s, words[kind][i]) == 0)
                        return (int) i;
        return -EINVAL;
}

/* The spelling of VALUE in the enum KIND, or FALLBACK. */
static const char *word_name(enum word_kind kind, int value, const char *fallback) {
        if (value < 0 || (size_t) value >= XDEV_ELEMENTSOF(words[kind]) || !words[kind][value])
                return fallback;
        return words[kind][value];
}

const char *xdev_class_to_string(enum xdev_class c) {
        return word_name(WORD_CLASS, (int) c, "?");
}

int xdev_class_from_string(const char *s) {
        return word_value(WORD_CLASS, s);
}

unsigned xdev_class_major(enum xdev_class c) {
        switch (c) {
        case XDEV_CLASS_DRM:
                return XDEV_DRM_MAJOR;
        case XDEV_CLASS_INPUT:
                return XDEV_INPUT_MAJOR;
        case XDEV_CLASS_VT:
        case XDEV_CLASS_CONSOLE:
        default:
                return XDEV_VT_MAJOR; /* tty0 is 4:0 */
        }
}

const char *xdev_access_to_string(enum xdev_access a) {
        return word_name(WORD_ACCESS, (int) a, "off");
}

const char *xdev_grant_mode_to_string(enum xdev_grant_mode m) {
        return word_name(WORD_MODE, (int) m, "?");
}

int xdev_access_from_string(const char *s) {
        return word_value(WORD_ACCESS, s);
}

int xdev_grant_mode_from_string(const char *s) {
        return word_value(WORD_MODE, s);
}

void xdev_config_init(struct xdev_config *config) {
        *config = (struct xdev_config) {
                .mode = XDEV_GRANT_ACL,
                .access = {
                        [XDEV_CLASS_VT] = XDEV_ACCESS_RW,
                        [XDEV_CLASS_DRM] = XDEV_ACCESS_RW,
                        [XDEV_CLASS_INPUT] = XDEV_ACCESS_RW,
                        [XDEV_CLASS_CONSOLE] = XDEV_ACCESS_OFF,
                },
                .source = XDEV_SOURCE_AUTO,
                .lingering = XDEV_LINGER_REVOKE,
                .linger_grace_ms = 2000,
                .linger_scan_budget = 8192, /* XDEV_SWEEP_SCAN_BUDGET */
                .system_uid_max = -1,       /* auto: login.defs */
                .runtime_dir = true,
        };
}

void xdev_config_free(struct xdev_config *config) {
        if (!config)
                return;
        for (size_t i = 0; i < config->n_globs; i++)
                free(config->globs[i].pattern);
        for (size_t i = 0; i < config->n_services; i++)
                free(config->services[i]);
        for (size_t i = 0; i < config->n_deny_services; i++)
                free(config->deny_services[i]);
        config->n_globs = config->n_services = config->n_deny_services = 0;
}

static int config_copy(struct xdev_config *dst, const struct xdev_config *src) {
        *dst = *src;
        dst->n_globs = dst->n_services = dst->n_deny_services = 0;
        for (size_t i = 0; i < src->n_globs; i++) {
                dst->globs[i].class = src->globs[i].class;
                dst->globs[i].pattern = strdup(src->globs[i].pattern);
                if (!dst->globs[i].pattern)
                        goto fail;
                dst->n_globs++;
        }
        for (size_t i = 0; i < src->n_services; i++) {
                dst->services[i] = strdup(src->services[i]);
                if (!dst->services[i])
                        goto fail;
                dst->n_services++;
        }
        for (size_t i = 0; i < src->n_deny_services; i++) {
                dst->deny_services[i] = strdup(src->deny_services[i]);
                if (!dst->deny_services[i])
                        goto fail;
                dst->n_deny_services++;
        }
        return 0;
fail:
        xdev_config_free(dst);
        return -ENOMEM;
}

static int parse_bool(const char *v, bool *ret) {
        if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
                *ret = true;
        else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

static int parse_access(const char *v, enum xdev_access *ret) {
        int a = word_value(WORD_ACCESS, v);
        if (a < 0)
                return a;
        *ret = (enum xdev_access) a;
        return 0;
}

/* A glob must stay inside /dev: the same rules as a stored path, with the
 * glob characters * ? [ ] allowed on top. */
static bool glob_is_valid(const char *pattern) {
        char tmp[256];
        size_t n = strlen(pattern);

        if (n >= sizeof tmp)
                return false;
        for (size_t i = 0; i <= n; i++) {
                char c = pattern[i];
                tmp[i] = (c == '*' || c == '?' || c == '[' || c == ']') ? 'x' : c;
        }
        return xdev_path_is_valid(tmp);
}

/* S without the blanks at its ends (cut in place). */
static char *strip(char *s) {
        char *e;

        while (*s == ' ' || *s == '\t')
                s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
                *--e = '\0';
        return s;
}

/* "a, b,c" into LIST (replacing its contents); all-or-nothing. Names are
 * separated by commas, with blanks around them or not; blanks inside a name
 * ("lo gin": two words, a comma forgotten) make it -EINVAL, as any other
 * bad name. */
static int parse_list(const char *v, char **list, size_t *n_list) {
        char *copy = NULL, *items[XDEV_SERVICES_MAX];
        size_t n = 0;
        int r = 0;

        copy = strdup(v);
        if (!copy)
                return -ENOMEM;
        for (char *save = NULL, *field = strtok_r(copy, ",", &save); field;
             field = strtok_r(NULL, ",", &save)) {
                char *tok = strip(field);
                if (*tok == '\0') /* "a, ,b": nothing between two commas */
                        continue;
                if (n >= XDEV_SERVICES_MAX) {
                        r = -E2BIG;
                        goto out;
                }
                if (!xdev_name_is_valid(tok, XDEV_NAME_MAX)) {
                        r = -EINVAL;
                        goto out;
                }
                items[n] = strdup(tok);
                if (!items[n]) {
                        r = -ENOMEM;
                        goto out;
                }
                n++;
        }
        for (size_t i = 0; i < *n_list; i++)
                free(list[i]);
        for (size_t i = 0; i < n; i++)
                list[i] = items[i];
        *n_list = n;
        n = 0;
out:
        for (size_t i = 0; i < n; i++)
                free(items[i]);
        free(copy);
        return r;
}

/* glob = CLASS:/dev/PATTERN, repeatable. */
static int parse_glob(const char *value, struct xdev_config *config) {
        const char *colon = strchr(value, ':');
        char cls[16], *p;
        int c;

        if (!colon || (size_t) (colon - value) >= sizeof cls)
                return -EINVAL;
        memcpy(cls, value, (size_t) (colon - value));
        cls[colon - value] = '\0';
        c = xdev_class_from_string(cls);
        if (c < 0 || c == XDEV_CLASS_VT || !glob_is_valid(colon + 1))
                return -EINVAL;
        if (config->n_globs >= XDEV_GLOBS_MAX)
                return -E2BIG;
        p = strdup(colon + 1);
        if (!p)
                return -ENOMEM;
        config->globs[config->n_globs++] = (struct xdev_glob) { .class = c, .pattern = p };
        return 0;
}

/* The keys whose value is a word of one enum (KEYS[KIND]; a class's key
 * takes an access word: parse_access): sets it, or -EINVAL for a word it
 * does not spell, or -ENOENT when KEY is none of them. */
static int set_word(struct xdev_config *config, const char *key, const char *value) {
        static const char *const keys[] = { [WORD_MODE] = "mode",
                                            [WORD_SOURCE] = "devices",
                                            [WORD_LOGIND] = "logind",
                                            [WORD_LINGER] = "lingering" };

        for (size_t i = 0; i < XDEV_ELEMENTSOF(keys); i++) {
                if (!keys[i] || strcmp(key, keys[i]) != 0)
                        continue;
                int c = word_value((enum word_kind) i, value);
                if (c < 0)
                        return c;
                switch ((enum word_kind) i) {
                case WORD_MODE:
                        config->mode = (enum xdev_grant_mode) c;
                        break;
                case WORD_SOURCE:
                        config->source = (enum xdev_source) c;
                        break;
                case WORD_LOGIND:
                        config->ignore_logind = c == 1;
                        break;
                case WORD_LINGER:
                        config->lingering = (enum xdev_linger) c;
                        break;
                case WORD_CLASS:
                case WORD_ACCESS:
                        break;
                }
                return 0;
        }
        return -ENOENT;
}

int xdev_config_set(struct xdev_config *config, const char *key, const char *value) {
        int c;

        if (strcmp(key, "debug") == 0)
                return value ? parse_bool(value, &config->debug) : (config->debug = true, 0);
        if (strcmp(key, "runtime_dir") == 0)
                return value ? parse_bool(value, &config->runtime_dir) : -EINVAL;
        if (!value)
                return xdev_class_from_string(key) >= 0 || strcmp(key, "mode") == 0 ? -EINVAL
                                                                                    : -ENOENT;

        c = xdev_class_from_string(key);
        if (c >= 0)
                return parse_access(value, &config->access[c]);
        c = set_word(config, key, value);
        if (c != -ENOENT)
                return c;
        if (strcmp(key, "glob") == 0)
                return parse_glob(value, config);
        if (strcmp(key, "services") == 0)
                return parse_list(value, config->services, &config->n_services);
        if (strcmp(key, "deny_services") == 0)
                return parse_list(value, config->deny_services, &config->n_deny_services);
        if (strcmp(key, "linger_grace") == 0) {
                uint64_t ms;
                if (xdev_parse_uint(value, 60000, &ms) < 0)
                        return -EINVAL;
                config->linger_grace_ms = (unsigned) ms;
                return 0;
        }
        if (strcmp(key, "linger_scan_budget") == 0) {
                uint64_t n;
                if (xdev_parse_uint(value, 1048576, &n) < 0 || n < 1024)
                        return -EINVAL;
                config->linger_scan_budget = (unsigned) n;
                return 0;
        }
        if (strcmp(key, "system_uid_max") == 0) {
                uint64_t n;
                if (strcmp(value, "auto") == 0)
                        config->system_uid_max = -1;
                else if (xdev_parse_uint(value, XDEV_SYSTEM_UID_LIMIT, &n) == 0)
                        config->system_uid_max = (long) n;
                else
                        return -EINVAL;
                return 0;
        }
        return -ENOENT;
}

/* What KEY takes, for a message about a bad value. */
static void allowed_values(const char *key, char *buf, size_t size) {
        static const struct {
                const char *key, *values;
        } fixed[] = {
                { "debug", "yes, no" },
                { "runtime_dir", "yes, no" },
                { "glob", "CLASS:/dev/PATTERN, CLASS one of vt, drm, input, console" },
                { "services", "PAM service names, separated by commas" },
                { "deny_services", "PAM service names, separated by commas" },
                { "linger_grace", "milliseconds, 0 to 60000" },
                { "linger_scan_budget", "a number, 1024 to 1048576" },
                { "system_uid_max", "auto, or a uid from 0 to 65533" },
        };
        static const struct {
                const char *key;
                enum word_kind kind;
        } worded[] = { { "mode", WORD_MODE },
                       { "devices", WORD_SOURCE },
                       { "logind", WORD_LOGIND },
                       { "lingering", WORD_LINGER } };
        enum word_kind kind = WORD_ACCESS; /* the class keys */
        size_t n = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < XDEV_ELEMENTSOF(fixed); i++)
                if (strcmp(key, fixed[i].key) == 0) {
                        (void) snprintf(buf, size, "%s", fixed[i].values);
                        return;
                }
        for (size_t i = 0; i < XDEV_ELEMENTSOF(worded); i++)
                if (strcmp(key, worded[i].key) == 0)
                        kind = worded[i].kind;
        if (kind == WORD_ACCESS && xdev_class_from_string(key) < 0)
                return;
        for (size_t i = 0; i < WORDS_MAX && n < size; i++)
                if (words[kind][i])
                        n += (size_t) snprintf(buf + n, size - n, "%s%s", n ? ", " : "",
                                               words[kind][i]);
}

/* Whether KEY is one of the file's keys. */
static bool key_is_known(const char *key) {
        char values[200];

        allowed_values(key, values, sizeof values);
        return values[0] != '\0';
}

/* How a load goes. Messages name their place as "FILE:LINE: message" (or
 * "FILE: message"). With CHECK (xdevices check) a bad line does not stop
 * the load: every one is reported and counted in ERRORS, unknown keys too,
 * and the load fails at the end when there was any. */
struct loader {
        const struct xdev_log *log;
        bool check;
        bool must_exist; /* the main file was named: missing is an error */
        unsigned errors;
        struct xdev_config_files *files; /* check: the files read, or NULL */
};

/* Notes the file PATH as read, with the errors counted since START. */
static void file_read(struct loader *ld, const char *path, unsigned start, bool missing) {
        struct xdev_config_file *f;

        if (!ld->files || ld->files->n >= XDEV_ELEMENTSOF(ld->files->file))
                return;
        f = &ld->files->file[ld->files->n++];
        (void) snprintf(f->path, sizeof f->path, "%s", path);
        f->errors = ld->errors - start;
        f->missing = missing;
}

/* "mode acl": a known key, a blank, a value, and no "=". Says so and
 * returns true. */
static bool missing_equals(char *line, const char *where, unsigned lineno,
                           const struct xdev_log *log) {
        size_t n = strcspn(line, " \t");
        char key[64];

        if (line[n] == '\0' || n >= sizeof key)
                return false;
        memcpy(key, line, n);
        key[n] = '\0';
        if (!key_is_known(key))
                return false;
        xdev_log(log, LOG_ERR, "%s:%u: \"%s\": missing \"=\" (write \"%s = %s\")", where, lineno,
                 line, key, strip(line + n));
        return true;
}

/* A bad VALUE for KEY (NULL: none given): the value, what the key takes,
 * and a comment at its end, which is not one. */
static void bad_value(const char *key, const char *value, const char *where, unsigned lineno,
                      const struct xdev_log *log) {
        const char *hash = value ? strchr(value, '#') : NULL;
        char allowed[200];

        allowed_values(key, allowed, sizeof allowed);
        xdev_log(log, LOG_ERR, "%s:%u: bad value \"%s\" for \"%s\"%s%s%s%s", where, lineno,
                 value ? value : "", key, allowed[0] ? " (" : "", allowed, allowed[0] ? ")" : "",
                 hash ? "; a comment must be on a line of its own, not after a value" : "");
}

/* One line into TMP; returns 0, or -EINVAL with a message logged. */
static int parse_line(struct xdev_config *tmp, char *line, const char *where, unsigned lineno,
                      struct loader *ld) {
        const struct xdev_log *log = ld->log;
        char *key, *value, *eq;
        int r;

        for (char *p = line; *p; p++)
                if ((unsigned char) *p < 0x20 && *p != '\t') {
                        xdev_log(log, LOG_ERR, "%s:%u: control character in line", where, lineno);
                        return -EINVAL;
                }
        key = strip(line);
        if (*key == '\0' || *key == '#')
                return 0;
        eq = strchr(key, '=');
        if (eq) {
                *eq = '\0';
                value = strip(eq + 1);
                key = strip(key);
        } else
                value = NULL;
        if (!value && missing_equals(key, where, lineno, log))
                return -EINVAL;
        r = xdev_config_set(tmp, key, value);
        if (r == -ENOENT) {
                xdev_log(log, ld->check ? LOG_ERR : LOG_WARNING, "%s:%u: unknown key \"%s\"%s",
                         where, lineno, key, ld->check ? " (the module ignores it)" : ", ignoring");
                if (ld->check)
                        ld->errors++;
                return 0;
        }
        if (r == -E2BIG) {
                xdev_log(log, LOG_ERR, "%s:%u: too many values for \"%s\"", where, lineno, key);
                return -EINVAL;
        }
        if (r < 0) {
                bad_value(key, value, where, lineno, log);
                return -EINVAL;
        }
        return 0;
}

static int parse_buf(struct xdev_config *config, const char *buf, size_t len, const char *where,
                     struct loader *ld) {
        const struct xdev_log *log = ld->log;
        struct xdev_config tmp;
        char line[XDEV_CONF_LINE_MAX + 1];
        unsigned lineno = 0;
        size_t pos = 0;
        int r;

        if (memchr(buf, '\0', len)) {
                xdev_log(log, LOG_ERR, "%s: NUL byte in file", where);
                ld->errors++;
                return -EINVAL;
        }
        r = config_copy(&tmp, config);
        if (r < 0)
                return r;
        while (pos < len) {
                const char *nl = memchr(buf + pos, '\n', len - pos);
                size_t n = nl ? (size_t) (nl - (buf + pos)) : len - pos;
                lineno++;
                if (n > XDEV_CONF_LINE_MAX) {
                        xdev_log(log, LOG_ERR, "%s:%u: line longer than %d bytes", where, lineno,
                                 XDEV_CONF_LINE_MAX);
                        r = -EINVAL;
                        ld->errors++;
                        if (!ld->check)
                                goto fail;
                        pos += n + (nl ? 1 : 0);
                        continue;
                }
                memcpy(line, buf + pos, n);
                line[n] = '\0';
                pos += n + (nl ? 1 : 0);
                r = parse_line(&tmp, line, where, lineno, ld);
                if (r < 0)
                        ld->errors++;
                if (r < 0 && !ld->check)
                        goto fail;
        }
        if (ld->check && ld->errors > 0) {
                r = -EINVAL;
                goto fail;
        }
        xdev_config_free(config);
        *config = tmp;
        return 0;
fail:
        xdev_config_free(&tmp);
        return r;
}

int xdev_config_parse(struct xdev_config *config, const char *buf, size_t len, const char *where,
                      const struct xdev_log *log) {
        struct loader ld = { .log = log };
        return parse_buf(config, buf, len, where, &ld);
}

/* Reads a trusted config file through one fd; -ENOENT if it does not exist. */
static int read_trusted(int dirfd, const char *name, const char *where, char **ret, size_t *ret_len,
                        const struct xdev_log *log) {
        struct stat st;
        char *buf = NULL;
        size_t len = 0;
        int fd, r;

        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                if (r == -ELOOP)
                        xdev_log(log, LOG_ERR,
                                 "%s: a symbolic link: config files must be regular files (links "
                                 "are not followed); copy the file there instead",
                                 where);
                else if (r == -EACCES)
                        xdev_log(log, LOG_ERR,
                                 "%s: cannot open: %s (it is root's: run as root to read it)",
                                 where, strerror(-r));
                else if (r != -ENOENT)
                        xdev_log(log, LOG_ERR, "%s: cannot open: %s", where, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out;
        }
        if (!S_ISREG(st.st_mode)) {
                xdev_log(log, LOG_ERR, "%s: not a regular file", where);
                r = -EPERM;
                goto out;
        }
        if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
                xdev_log(log, LOG_ERR,
                         "%s: must be owned by root and not writable by group or others", where);
                r = -EPERM;
                goto out;
        }
        if (st.st_size > XDEV_CONF_FILE_MAX) {
                xdev_log(log, LOG_ERR, "%s: larger than %d bytes", where, XDEV_CONF_FILE_MAX);
                r = -EFBIG;
                goto out;
        }
        r = xdev_read_file(fd, (size_t) st.st_size, "conf-read", &buf);
        if (r < 0) {
                xdev_log(log, LOG_ERR, "%s: cannot read: %s", where,
                         r == -ESTALE ? "it changed while being read" : strerror(-r));
                goto out;
        }
        len = (size_t) st.st_size;
        *ret = buf;
        *ret_len = len;
        buf = NULL;
        r = 0;
out:
        free(buf);
        (void) close(fd);
        return r;
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Drop-ins: DIR/xdevices.d/ *.conf (CFD is DIR), in lexical order, later
 * wins; parsed into CONFIG. A missing directory is fine; one we cannot
 * read may hold a restriction, so it fails. */
static int load_dropins(int cfd, const char *dir, struct xdev_config *config, struct loader *ld) {
        const struct xdev_log *log = ld->log;
        char dropdir[300], where[600], *buf = NULL, *names[XDEV_CONF_DROPINS_MAX];
        size_t len, n_names = 0;
        DIR *d = NULL;
        int dfd, r = 0;

        (void) snprintf(dropdir, sizeof dropdir, "%s/xdevices.d", strcmp(dir, "/") ? dir : "");
        dfd = openat(cfd, "xdevices.d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0) {
                if (errno == ENOENT)
                        return 0;
                r = -errno;
                xdev_log(log, LOG_ERR, "%s: cannot open: %s", dropdir, strerror(-r));
                ld->errors++;
                file_read(ld, dropdir, ld->errors - 1, false);
                return r;
        }
        d = fdopendir(dfd);
        if (!d) {
                r = -errno;
                (void) close(dfd);
                return r;
        }
        for (struct dirent *de; (de = readdir(d));) {
                size_t nl = strlen(de->d_name);
                if (de->d_name[0] == '.' || nl < 6 || strcmp(de->d_name + nl - 5, ".conf") != 0)
                        continue;
                if (n_names >= XDEV_CONF_DROPINS_MAX) {
                        xdev_log(log, LOG_ERR, "%s: more than %d files", dropdir,
                                 XDEV_CONF_DROPINS_MAX);
                        ld->errors++;
                        file_read(ld, dropdir, ld->errors - 1, false);
                        r = -E2BIG;
                        goto out;
                }
                names[n_names] = strdup(de->d_name);
                if (!names[n_names]) {
                        r = -ENOMEM;
                        goto out;
                }
                n_names++;
        }
        qsort(names, n_names, sizeof names[0], cmp_names);
        for (size_t i = 0; i < n_names; i++) {
                unsigned start = ld->errors;
                (void) snprintf(where, sizeof where, "%s/%s", dropdir, names[i]);
                r = read_trusted(dirfd(d), names[i], where, &buf, &len, log);
                if (r == -ENOENT) {
                        r = 0;
                        continue;
                }
                if (r == 0) {
                        r = parse_buf(config, buf, len, where, ld); /* counts its errors */
                        free(buf);
                        buf = NULL;
                } else
                        ld->errors++;
                file_read(ld, where, start, false);
                if (r < 0 && !ld->check)
                        goto out;
        }
        r = ld->check && ld->errors > 0 ? -EINVAL : 0;
out:
        for (size_t i = 0; i < n_names; i++)
                free(names[i]);
        (void) closedir(d);
        return r;
}

static int load(struct xdev_config *config, const char *path, struct loader *ld) {
        const struct xdev_log *log = ld->log;
        struct xdev_config tmp;
        const char *base, *slash;
        char dir[256], *buf = NULL;
        bool missing = false;
        unsigned start;
        size_t len;
        int cfd, r;

        if (!path || path[0] != '/' || strlen(path) >= sizeof dir) {
                xdev_log(log, LOG_ERR, "config path \"%s\" is not absolute", path ? path : "");
                return -EINVAL;
        }
        slash = strrchr(path, '/');
        base = slash + 1;
        memcpy(dir, path, (size_t) (slash - path));
        dir[slash - path] = '\0';
        if (dir[0] == '\0')
                strcpy(dir, "/");

        r = config_copy(&tmp, config);
        if (r < 0)
                return r;
        start = ld->errors;
        cfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cfd < 0) {
                r = -errno;
                if (r == -ENOENT && !ld->must_exist)
                        r = 0; /* no directory: the defaults */
                else {
                        xdev_log(log, LOG_ERR, "%s: cannot open: %s", path, strerror(-r));
                        ld->errors++;
                }
                file_read(ld, path, start, r == 0);
                goto out;
        }
        r = read_trusted(cfd, base, path, &buf, &len, log);
        if (r == 0) {
                r = parse_buf(&tmp, buf, len, path, ld); /* counts its errors */
                free(buf);
        } else if (r == -ENOENT && !ld->must_exist) {
                missing = true;
                r = 0;
        } else {
                if (r == -ENOENT) /* read_trusted says nothing of a missing file */
                        xdev_log(log, LOG_ERR, "%s: cannot open: %s", path, strerror(-r));
                ld->errors++;
        }
        file_read(ld, path, start, missing);
        if (r == 0 || ld->check) {
                int rd = load_dropins(cfd, dir, &tmp, ld);
                if (r == 0)
                        r = rd;
        }
        (void) close(cfd);
        if (r < 0)
                goto out;
        xdev_config_free(config);
        *config = tmp;
        tmp.n_globs = tmp.n_services = tmp.n_deny_services = 0;
out:
        xdev_config_free(&tmp);
        return r;
}

int xdev_config_load(struct xdev_config *config, const char *path, const struct xdev_log *log) {
        struct loader ld = { .log = log };
        return load(config, path, &ld);
}

int xdev_config_load_named(struct xdev_config *config, const char *path,
                           const struct xdev_log *log) {
        struct loader ld = { .log = log, .must_exist = true };
        return load(config, path, &ld);
}

int xdev_config_check(struct xdev_config *config, const char *path, bool must_exist,
                      const struct xdev_log *log, struct xdev_config_files *ret_files) {
        struct loader ld = {
                .log = log, .check = true, .must_exist = must_exist, .files = ret_files
        };
        int r;

        if (ret_files)
                ret_files->n = 0;
        r = load(config, path, &ld);

        if (r < 0 && ld.errors == 0)
                ld.errors = 1; /* a failure that was not one of the counted lines */
        return r < 0 ? (int) ld.errors : 0;
}

int xdev_config_parse_args(struct xdev_config *config, int argc, const char **argv,
                           const char **ret_conf, const struct xdev_log *log) {
        struct xdev_config tmp;
        const char *conf = NULL; /* handed out only on success */
        int r;

        r = config_copy(&tmp, config);
        if (r < 0)
                return r;
        for (int i = 0; i < argc; i++) {
                char key[64];
                const char *arg = argv[i], *eq = strchr(arg, '=');
                const char *value = eq ? eq + 1 : NULL;
                size_t kl = eq ? (size_t) (eq - arg) : strlen(arg);

                if (kl == 0 || kl >= sizeof key) {
                        xdev_log(log, LOG_ERR, "bad module argument \"%s\"", arg);
                        r = -EINVAL;
                        goto fail;
                }
                memcpy(key, arg, kl);
                key[kl] = '\0';
                if (strcmp(key, "conf") == 0) {
                        if (!value || value[0] != '/') {
                                xdev_log(log, LOG_ERR, "conf= needs an absolute path");
                                r = -EINVAL;
                                goto fail;
                        }
                        conf = value;
                        continue;
                }
                r = xdev_config_set(&tmp, key, value);
                if (r == -ENOENT) {
                        xdev_log(log, LOG_WARNING, "unknown module argument \"%s\", ignoring", key);
                        continue;
                }
                if (r < 0) {
                        xdev_log(log, LOG_ERR, "bad value in module argument \"%s\"", arg);
                        goto fail;
                }
        }
        xdev_config_free(config);
        *config = tmp;
        if (ret_conf && conf)
                *ret_conf = conf;
        return 0;
fail:
        xdev_config_free(&tmp);
        return r;
}

bool xdev_config_service_allowed(const struct xdev_config *config, const char *service) {
        if (!service)
                return false;
        for (size_t i = 0; i < config->n_deny_services; i++)
                if (strcmp(config->deny_services[i], service) == 0)
                        return false;
        if (config->n_services == 0)
                return true;
        for (size_t i = 0; i < config->n_services; i++)
                if (strcmp(config->services[i], service) == 0)
                        return true;
        return false;
}
