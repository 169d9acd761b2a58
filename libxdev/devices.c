/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding the shared devices: udev's "xdevices" tag, or the config's globs.
 * Only names come from here; every node is checked again when opened. And
 * announcing a node again to udev's listeners (a "change" uevent). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <unistd.h>
#include <libudev.h>

#include "devices.h"
#include "state.h"

void xdev_device_list_free(struct xdev_device_list *list) {
        if (!list)
                return;
        for (size_t i = 0; i < list->n; i++)
                free(list->items[i].path);
        free(list->items);
        list->items = NULL;
        list->n = list->cap = 0;
}

static int list_add(struct xdev_device_list *list, const char *path, enum xdev_class class,
                    dev_t devnum) {
        struct xdev_device *p;

        /* duplicates are removed once at the end (list_dedup) */
        if (list->n >= XDEV_NODES_MAX)
                return -E2BIG;
        if (list->n == list->cap) {
                size_t cap = list->cap ? list->cap * 2 : 32;
                p = realloc(list->items, cap * sizeof *p);
                if (!p)
                        return -ENOMEM;
                list->items = p;
                list->cap = cap;
        }
        p = list->items;
        p[list->n].path = strdup(path);
        if (!p[list->n].path)
                return -ENOMEM;
        p[list->n].class = class;
        p[list->n].devnum = devnum;
        list->n++;
        return 0;
}

static bool class_is_shared_and_on(const struct xdev_config *config, int c) {
        return c >= 0 && c < _XDEV_CLASS_MAX && c != XDEV_CLASS_VT &&
                config->access[c] != XDEV_ACCESS_OFF;
}

static int enumerate_udev(const struct xdev_config *config, struct xdev_device_list *list,
                          const struct xdev_log *log) {
        struct udev *udev;
        struct udev_enumerate *e = NULL;
        struct udev_list_entry *entry;
        int r;

        udev = udev_new();
        if (!udev)
                return -ENOMEM;
        e = udev_enumerate_new(udev);
        if (!e) {
                r = -ENOMEM;
                goto out;
        }
        r = udev_enumerate_add_match_tag(e, XDEV_UDEV_TAG);
        if (r >= 0)
                r = udev_enumerate_scan_devices(e);
        if (r < 0)
                goto out;
        udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e)) {
                struct udev_device *d =
                        udev_device_new_from_syspath(udev, udev_list_entry_get_name(entry));
                const char *node, *cls;
                int c;
                if (!d)
                        continue;
                node = udev_device_get_devnode(d);
                cls = udev_device_get_property_value(d, "XDEVICES_CLASS");
                c = xdev_class_from_string(cls);
                if (node && class_is_shared_and_on(config, c)) {
                        if (!xdev_path_is_valid(node))
                                xdev_log(log, LOG_WARNING,
                                         "udev device node \"%s\" has an unexpected name, ignoring",
                                         node);
                        else
                                r = list_add(list, node, c, udev_device_get_devnum(d));
                } else if (!node || c < 0)
                        xdev_debug(log, "udev device \"%s\" has no node or class, ignoring",
                                   udev_list_entry_get_name(entry));
                udev_device_unref(d);
                if (r < 0)
                        goto out;
        }
        r = 0;
out:
        udev_enumerate_unref(e);
        udev_unref(udev);
        return r;
}

static int enumerate_globs(const struct xdev_config *config, struct xdev_device_list *list) {
        for (size_t i = 0; i < config->n_globs; i++) {
                const struct xdev_glob *g = &config->globs[i];
                glob_t gl;
                int r;

                if (!class_is_shared_and_on(config, (int) g->class))
                        continue;
                r = glob(g->pattern, GLOB_NOSORT | GLOB_NOESCAPE, NULL, &gl);
                if (r == GLOB_NOMATCH)
                        continue;
                if (r != 0)
                        return r == GLOB_NOSPACE ? -ENOMEM : -EIO;
                for (size_t j = 0; j < gl.gl_pathc; j++) {
                        if (!xdev_path_is_valid(gl.gl_pathv[j]))
                                continue;
                        r = list_add(list, gl.gl_pathv[j], g->class, 0);
                        if (r < 0) {
                                globfree(&gl);
                                return r;
                        }
                }
                globfree(&gl);
        }
        return 0;
}

static int cmp_device(const void *a, const void *b) {
        return strcmp(((const struct xdev_device *) a)->path,
                      ((const struct xdev_device *) b)->path);
}

/* Sorts by path and drops repeats (a node matched by two globs). */
static void list_dedup(struct xdev_device_list *list) {
        size_t out = 0;

        if (list->n < 2)
                return;
        qsort(list->items, list->n, sizeof list->items[0], cmp_device);
        for (size_t i = 0; i < list->n; i++) {
                if (out > 0 && strcmp(list->items[out - 1].path, list->items[i].path) == 0) {
                        free(list->items[i].path);
                        continue;
                }
                list->items[out++] = list->items[i];
        }
        list->n = out;
}

static bool udevd_runs(void) {
        return access("/run/udev/control", F_OK) == 0;
}

enum xdev_source xdev_devices_source(const struct xdev_config *config) {
        if (config->source != XDEV_SOURCE_AUTO)
                return config->source;
        return udevd_runs() ? XDEV_SOURCE_UDEV : XDEV_SOURCE_GLOB;
}

void xdev_devices_explain(const struct xdev_config *config, const unsigned *counts, char *buf,
                          size_t size) {
        enum xdev_source src = xdev_devices_source(config);
        const char *key = config->source == XDEV_SOURCE_AUTO ? "auto"
                : src == XDEV_SOURCE_UDEV                    ? "udev"
                                                             : "glob";
        bool any_on = false;
        size_t n = 0;

        buf[0] = '\0';
        for (int c = 0; c < _XDEV_CLASS_MAX; c++)
                any_on = any_on || class_is_shared_and_on(config, c);
        if (!any_on)
                return; /* nothing shared was asked for */
        if (src == XDEV_SOURCE_GLOB && config->n_globs == 0) {
                (void) snprintf(buf, size, "devices = %s but %sno glob lines", key,
                                config->source == XDEV_SOURCE_AUTO
                                        ? "no udev database (/run/udev/control) and "
                                        : "");
                return;
        }
        if (config->source == XDEV_SOURCE_UDEV && !udevd_runs()) {
                (void) snprintf(buf, size,
                                "devices = udev but udevd is not running (no /run/udev/control)");
                return;
        }
        for (int c = 0; counts && c < _XDEV_CLASS_MAX; c++) {
                int k;
                if (!class_is_shared_and_on(config, c) || counts[c] > 0 || n >= size)
                        continue;
                k = snprintf(buf + n, size - n, "%sno %s node %s", n ? ", " : "",
                             xdev_class_to_string(c),
                             src == XDEV_SOURCE_UDEV ? "tagged \"" XDEV_UDEV_TAG
                                                       "\" by udev (72-xdevices.rules)"
                                                     : "matched a glob line");
                n = k < 0 ? size : n + (size_t) k;
        }
}

int xdev_devices_enumerate(const struct xdev_config *config, struct xdev_device_list *list,
                           const struct xdev_log *log) {
        enum xdev_source src = xdev_devices_source(config);

        xdev_debug(log, "enumerating devices through %s",
                   src == XDEV_SOURCE_UDEV ? "udev" : "globs");
        int r = src == XDEV_SOURCE_UDEV ? enumerate_udev(config, list, log)
                                        : enumerate_globs(config, list);
        if (r >= 0)
                list_dedup(list);
        return r;
}

/* A version 4 UUID as text, for the kernel's synthetic uevent, which
 * checks only its form. The fixed one stands in when the random pool is
 * not ready yet (early boot): nobody matches on it. */
static void uuid_random(char buf[static 37]) {
        uint8_t b[16];

        if (getrandom(b, sizeof b, GRND_NONBLOCK) != (ssize_t) sizeof b) {
                (void) snprintf(buf, 37, "%s", "7c3a5e0d-1f6b-4a92-8e47-d05b9c2f6a13");
                return;
        }
        b[6] = (uint8_t) ((b[6] & 0x0f) | 0x40);
        b[8] = (uint8_t) ((b[8] & 0x3f) | 0x80);
        (void) snprintf(buf, 37,
                        "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                        b[12], b[13], b[14], b[15]);
}

static int uevent_write(int fd, const char *text) {
        size_t len = strlen(text);
        ssize_t n = pwrite(fd, text, len, 0);

        if (n < 0)
                return -errno;
        return n == (ssize_t) len ? 0 : -EIO;
}

int xdev_device_announce(dev_t rdev) {
        char path[64], text[96], uuid[37];
        int fd, r;

        (void) snprintf(path, sizeof path, "/sys/dev/char/%u:%u/uevent", major(rdev), minor(rdev));
        fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        uuid_random(uuid);
        (void) snprintf(text, sizeof text, "change %s %s", uuid, XDEV_ANNOUNCE_ARG);
        r = uevent_write(fd, text);
        if (r == -EINVAL) /* a kernel without arguments to synthetic uevents (< 4.13) */
                r = uevent_write(fd, "change");
        (void) close(fd);
        return r;
}
