/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevices(8): the admin and udev front-end of the core.
 *
 * Rules this file keeps:
 *  1. Root only, but for "check" and a user's own "status" (which read only
 *     what any user may: the config file, the device nodes' owners and ACLs;
 *     never the state); never runs a shell or another program.
 *  2. What udev passes (DEVNAME, MAJOR, MINOR, XDEVICES_CLASS) and what
 *     mdev passes (ACTION, MDEV, SUBSYSTEM, DEVPATH, MAJOR, MINOR) is checked
 *     against the node on disk before anything is granted; a name mdev
 *     passes is a plain relative name under /dev, and the node is reached
 *     without following a symlink (the core's rule).
 *  3. It takes the same lock as the module, through the core. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <acl/libacl.h>

#include "cli.h"
#include "core.h"
#include "devices.h"
#include "logind.h"
#include "node.h"
#include "tty.h"
#include "vt.h"

enum {
        EXIT_OK = XDEV_EXIT_OK,
        EXIT_FAILED = XDEV_EXIT_FAILED,
        EXIT_USAGE = XDEV_EXIT_USAGE,
        EXIT_NOTROOT = XDEV_EXIT_NOTROOT,
        EXIT_REFUSED = 4, /* input did not agree with the system; nothing touched */
        EXIT_LOST = 5,    /* the state was lost while nodes were granted (see messages) */
};

static bool use_syslog;

static XDEV_PRINTF(3, 0) void log_to_stderr(void *userdata, int priority, const char *fmt,
                                            va_list ap) {
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
                "       xdevices --version\n"
                "\n"
                "  check               check the configuration (any user): every error as\n"
                "                      FILE:LINE: message, exit 1 if there is one\n"
                "  status [--json]     sessions, holder and every granted node; run by\n"
                "                      another user than root: that user's own grants\n"
                "  apply DEVNODE       grant a node udev added (needs DEVNAME, MAJOR, MINOR,\n"
                "                      XDEVICES_CLASS in the environment, as udev sets them)\n"
                "  forget DEVNODE      forget a node udev removed\n"
                "  mdev                what mdev.conf runs for a node it made or removes\n"
                "                      (ACTION, MDEV, SUBSYSTEM, DEVPATH, MAJOR, MINOR as\n"
                "                      mdev sets them)\n"
                "  gc                  reap sessions whose leader died and restore their nodes\n"
                "  reset [--force] [--revoke]\n"
                "                      restore every recorded node and empty the state;\n"
                "                      --revoke: cut what still holds them off as a VT switch\n"
                "                      does (revoke input, drop DRM master) whatever the\n"
                "                      lingering policy: an X server keeps running\n"
                "  revoke USER|--all   apply the lingering policy to processes of USER (or of\n"
                "                      anyone but root and the holder) still holding a shared node\n"
                "\n"
                "Exit status: 0 done, 1 failed (check: errors found), 2 usage, 3 not root,\n"
                "4 input refused, 5 the state was lost while nodes were granted (status:\n"
                "they still are; gc, reset: they were put back).\n");
}

static int env_uint(const char *name, uint64_t max, uint64_t *ret) {
        const char *v = getenv(name);
        return v ? xdev_parse_uint(v, max, ret) : -ENOENT;
}

/* Grants DEVNODE of CLASS, numbered MAJ:MIN by the device manager, to the
 * session holding the shared devices: what udev's "apply" and mdev's add
 * have in common. */
static int apply_node(struct xdev_ctx *ctx, const char *devnode, int class, uint64_t maj,
                      uint64_t min) {
        int r;

        if (maj != xdev_class_major(class)) {
                xdev_log(&ctx->log, LOG_ERR,
                         "major %u is not that of class %s for \"%s\", refusing", (unsigned) maj,
                         xdev_class_to_string(class), devnode);
                return EXIT_REFUSED;
        }
        r = xdev_device_apply(ctx, devnode, class, makedev((unsigned) maj, (unsigned) min));
        if (r == -EINVAL)
                return EXIT_REFUSED;
        if (r < 0)
                return EXIT_FAILED;
        xdev_debug(&ctx->log, "\"%s\": %s", devnode,
                   r > 0 ? "granted to the holder" : "nothing to do");
        return EXIT_OK;
}

static int forget_node(struct xdev_ctx *ctx, const char *devnode) {
        return xdev_device_forget(ctx, devnode) < 0 ? EXIT_FAILED : EXIT_OK;
}

static int cmd_apply(struct xdev_ctx *ctx, const char *devnode, bool forget) {
        const char *devname = getenv("DEVNAME");
        uint64_t maj, min;
        int class;

        if (!xdev_path_is_valid(devnode)) {
                xdev_log(&ctx->log, LOG_ERR, "\"%s\" is not a path under /dev, refusing", devnode);
                return EXIT_REFUSED;
        }
        if (!devname || strcmp(devname, devnode) != 0) {
                xdev_log(&ctx->log, LOG_ERR, "DEVNAME \"%s\" does not match \"%s\", refusing",
                         devname ? devname : "(unset)", devnode);
                return EXIT_REFUSED;
        }
        if (forget)
                return forget_node(ctx, devnode);
        class = xdev_class_from_string(getenv("XDEVICES_CLASS"));
        if (class < 0 || class == XDEV_CLASS_VT) {
                xdev_log(&ctx->log, LOG_ERR,
                         "XDEVICES_CLASS is not drm, input or console for \"%s\", refusing",
                         devnode);
                return EXIT_REFUSED;
        }
        if (env_uint("MAJOR", 0xfff, &maj) < 0 || env_uint("MINOR", 0xfffff, &min) < 0) {
                xdev_log(&ctx->log, LOG_ERR,
                         "MAJOR/MINOR missing or malformed for \"%s\", refusing", devnode);
                return EXIT_REFUSED;
        }
        return apply_node(ctx, devnode, class, maj, min);
}

/* Whether NAME is PREFIX followed by 1 to MAX_DIGITS digits and nothing
 * else. */
static bool name_is_numbered(const char *name, const char *prefix, size_t max_digits) {
        size_t n = strlen(prefix), digits;

        if (strncmp(name, prefix, n) != 0)
                return false;
        name += n;
        digits = strspn(name, "0123456789");
        return digits >= 1 && digits <= max_digits && name[digits] == '\0';
}

/* The class of the kernel's device NAME in SUBSYSTEM, or -1 when it is no
 * console device: the same names 72-xdevices.rules tags. */
static int mdev_class(const char *subsystem, const char *name) {
        if (!subsystem)
                return -1;
        if (strcmp(subsystem, "drm") == 0)
                return name_is_numbered(name, "card", 2) || name_is_numbered(name, "renderD", 4)
                        ? XDEV_CLASS_DRM
                        : -1;
        if (strcmp(subsystem, "input") == 0)
                return name_is_numbered(name, "event", 4) || name_is_numbered(name, "mouse", 4) ||
                                name_is_numbered(name, "js", 4) || strcmp(name, "mice") == 0
                        ? XDEV_CLASS_INPUT
                        : -1;
        if (strcmp(subsystem, "tty") == 0)
                return strcmp(name, "tty0") == 0 ? XDEV_CLASS_CONSOLE : -1;
        return -1;
}

/* The kernel's name of the device at DEVPATH ("/devices/.../input5/event3"
 * gives "event3"), or NULL when DEVPATH is not a plain path under
 * /devices/. */
static const char *devpath_kernel_name(const char *devpath) {
        const char *base;

        if (strncmp(devpath, "/devices/", 9) != 0 || strlen(devpath) >= 1024)
                return NULL;
        for (const char *p = devpath; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || strchr("_.-+:/", *p)))
                        return NULL;
        if (strstr(devpath, "//") || strstr(devpath, "/./") || strstr(devpath, "/../"))
                return NULL;
        base = strrchr(devpath, '/') + 1;
        if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
                return NULL;
        return base;
}

/* What an mdev.conf line "*xdevices mdev" runs: mdev made the node
 * /dev/$MDEV (ACTION=add, or change), or is about to remove it. A scan
 * ("mdev -s", no DEVPATH) and a device that is no console device are
 * nothing to do; what does not fit together is refused. */
static int cmd_mdev(struct xdev_ctx *ctx) {
        const char *action = getenv("ACTION"), *mdev = getenv("MDEV");
        const char *subsystem = getenv("SUBSYSTEM"), *devpath = getenv("DEVPATH"), *name;
        char devnode[256];
        uint64_t maj, min;
        bool remove;
        int class;

        if (!action || !mdev) {
                xdev_log(&ctx->log, LOG_ERR, "ACTION or MDEV unset: not run by mdev, refusing");
                return EXIT_REFUSED;
        }
        if (strcmp(action, "add") == 0 || strcmp(action, "change") == 0)
                remove = false;
        else if (strcmp(action, "remove") == 0)
                remove = true;
        else {
                xdev_debug(&ctx->log, "ACTION \"%s\": nothing to do", action);
                return EXIT_OK;
        }
        /* xdevicesd's announcement of a node it has just granted (a "change"
         * with SYNTH_ARG_XDEVICES=announce, which only root can write to the
         * uevent file): nothing to apply, as in 72-xdevices.rules */
        if (strcmp(action, "change") == 0) {
                const char *arg = getenv("SYNTH_ARG_XDEVICES");
                if (arg && strcmp(arg, "announce") == 0)
                        return EXIT_OK;
        }
        if (mdev[0] == '/' ||
            (size_t) snprintf(devnode, sizeof devnode, "/dev/%s", mdev) >= sizeof devnode ||
            !xdev_path_is_valid(devnode)) {
                xdev_log(&ctx->log, LOG_ERR, "MDEV \"%s\" is not a node name under /dev, refusing",
                         mdev);
                return EXIT_REFUSED;
        }
        if (!devpath) {
                /* "mdev -s" at boot: no login holds anything yet, and one
                 * that does finds the node through its globs */
                xdev_debug(&ctx->log, "\"%s\": a scan, not a hotplug: nothing to do", devnode);
                return EXIT_OK;
        }
        name = devpath_kernel_name(devpath);
        if (!name) {
                xdev_log(&ctx->log, LOG_ERR,
                         "DEVPATH \"%s\" is not a path under /devices/, refusing", devpath);
                return EXIT_REFUSED;
        }
        class = mdev_class(subsystem, name);
        if (class < 0) {
                xdev_debug(&ctx->log, "\"%s\" (%s) is no console device: nothing to do", devnode,
                           subsystem ? subsystem : "no SUBSYSTEM");
                return EXIT_OK;
        }
        if (remove)
                return forget_node(ctx, devnode);
        if (env_uint("MAJOR", 0xfff, &maj) < 0 || env_uint("MINOR", 0xfffff, &min) < 0) {
                xdev_log(&ctx->log, LOG_ERR,
                         "MAJOR/MINOR missing or malformed for \"%s\", refusing", devnode);
                return EXIT_REFUSED;
        }
        return apply_node(ctx, devnode, class, maj, min);
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
                        xdev_log(&ctx->log, LOG_ERR,
                                 "processes of root are never revoked, refusing");
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

struct flags {
        bool json, force, all, revoke;
};

/* ---- status: the one place that writes text and JSON ---- */

/* S as a JSON string: quotes, backslashes and control characters escaped. */
static void json_string(FILE *out, const char *s) {
        fputc('"', out);
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        fprintf(out, "\\%c", *s);
                else if ((unsigned char) *s < 0x20)
                        fprintf(out, "\\u%04x", (unsigned char) *s);
                else
                        fputc(*s, out);
        }
        fputc('"', out);
}

static void json_bool(FILE *out, const char *key, bool v) {
        fprintf(out, ",\"%s\":%s", key, v ? "true" : "false");
}

/* Until the grace period of a logout's sweep ends; negative past it. */
static long long sweep_ms_left(const struct xdev_linger_rec *w) {
        return (long long) w->until - (long long) xdev_now_ms();
}

/* The active VT as status prints it: a number, or why it is unknown
 * (no /sys: a container, a chroot). */
static void active_vt_text(FILE *out, int active) {
        if (active > 0)
                fprintf(out, "active VT: %d\n", active);
        else
                fprintf(out, "active VT: unknown (%s: %s)\n", "/sys/class/tty/tty0/active",
                        active < 0 ? strerror(-active) : "no VT");
}

static void active_vt_json(FILE *out, int active) {
        if (active > 0)
                fprintf(out, ",\"active_vt\":%d", active);
        else
                fprintf(out, ",\"active_vt\":null");
}

/* Whether the module and xdevicesd stand down for a running logind
 * (doc/DESIGN.md §3.8): status and check say so, as the module tells the
 * user at login and xdevicesd exits. */
static bool stands_down(bool ignore_logind, struct xdev_logind *ret) {
        return !ignore_logind && xdev_logind_find(ret) > 0;
}

static void logind_json(FILE *out, bool ignore_logind) {
        struct xdev_logind l;

        if (stands_down(ignore_logind, &l))
                fprintf(out, ",\"logind\":{\"name\":\"%s\",\"pid\":%d}", l.name, (int) l.pid);
        else
                fprintf(out, ",\"logind\":null");
}

static void logind_text(FILE *out, bool ignore_logind) {
        struct xdev_logind l;

        if (stands_down(ignore_logind, &l))
                fprintf(out,
                        "stands down: %s (pid %d) manages the seats; pam_xdevices and xdevicesd "
                        "grant nothing (logind = ignore in xdevices.conf overrides)\n",
                        l.name, (int) l.pid);
}

static void status_json(FILE *out, const struct xdev_status *st, bool ignore_logind) {
        const struct xdev_state *state = &st->state;

        fprintf(out, "{\"version\":\"" PACKAGE_VERSION "\",\"holder\":");
        if (state->has_holder)
                fprintf(out, "%u", (unsigned) state->holder);
        else
                fprintf(out, "null");
        active_vt_json(out, st->active_vt);
        logind_json(out, ignore_logind);
        json_bool(out, "follow", state->follow);
        if (state->follow)
                fprintf(out, ",\"daemon\":%d", (int) state->follow_pid);
        else
                fprintf(out, ",\"daemon\":null");
        json_bool(out, "daemon_alive", st->daemon_alive);
        fprintf(out, ",\"lost\":[");
        for (size_t i = 0, k = 0; i < state->n_nodes; i++)
                if (state->nodes[i].lost) {
                        fprintf(out, "%s{\"path\":", k++ ? "," : "");
                        json_string(out, state->nodes[i].path);
                        fprintf(out, ",\"grantee\":%u}", (unsigned) state->nodes[i].grantee);
                }
        fprintf(out, "],\"sweeps\":[");
        for (size_t i = 0; i < state->n_sweeps; i++)
                fprintf(out, "%s{\"uid\":%u,\"sweeper\":%d,\"ms_left\":%lld}", i ? "," : "",
                        (unsigned) state->sweeps[i].uid, (int) state->sweeps[i].pid,
                        sweep_ms_left(&state->sweeps[i]));
        fprintf(out, "],\"sessions\":[");
        for (size_t i = 0; i < state->n_sessions; i++) {
                const struct xdev_session *s = &state->sessions[i];
                fprintf(out, "%s{\"user\":", i ? "," : "");
                json_string(out, s->user);
                fprintf(out, ",\"uid\":%u,\"service\":", (unsigned) s->uid);
                json_string(out, s->service);
                fprintf(out, ",\"vt\":%u,\"leader\":%d,\"since\":%lld", s->vt, (int) s->pid,
                        (long long) s->since);
                json_bool(out, "alive", st->leader_alive[i]);
                fputc('}', out);
        }
        fprintf(out, "],\"nodes\":[");
        for (size_t i = 0, k = 0; i < state->n_nodes; i++) {
                const struct xdev_node *n = &state->nodes[i];
                if (n->lost)
                        continue;
                fprintf(out, "%s{\"path\":", k++ ? "," : "");
                json_string(out, n->path);
                fprintf(out,
                        ",\"class\":\"%s\",\"rdev\":\"%u:%u\",\"original\":{\"uid\":%u,\"gid\":%u,\"mode\":\"%04o\",\"acl\":",
                        xdev_class_to_string(n->class), major(n->rdev), minor(n->rdev),
                        (unsigned) n->uid, (unsigned) n->gid, (unsigned) (n->mode & 07777));
                if (n->acl)
                        json_string(out, n->acl);
                else
                        fprintf(out, "null");
                fprintf(out, "},\"grantee\":");
                if (!n->granted)
                        fprintf(out, "null}");
                else
                        fprintf(out, "%u,\"access\":\"%s\",\"by\":\"%s\"}", (unsigned) n->grantee,
                                xdev_access_to_string(n->perm),
                                xdev_grant_mode_to_string(n->gmode));
        }
        fprintf(out, "],\"lingering\":[");
        for (size_t i = 0; i < st->lingering.n; i++) {
                const struct xdev_sweep_entry *e = &st->lingering.items[i];
                fprintf(out, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int) e->pid);
                json_string(out, e->comm);
                fprintf(out, ",\"uid\":%u,\"path\":", (unsigned) e->uid);
                json_string(out, e->path);
                if (e->thread)
                        fprintf(out, ",\"fd\":null,\"thread\":%d", (int) e->thread);
                else
                        fprintf(out, ",\"fd\":%d,\"thread\":null", e->fd);
                json_bool(out, "revoked", e->revoked);
                fputc('}', out);
        }
        fprintf(out, "]}\n");
}

/* The processes still holding shared nodes without a grant. */
static void status_text_lingering(FILE *out, const struct xdev_status *st) {
        fprintf(out, "lingering holders:\n");
        for (size_t i = 0; i < st->lingering.n; i++) {
                const struct xdev_sweep_entry *e = &st->lingering.items[i];
                fprintf(out, "  pid %-7d %-16s uid %-6u ", (int) e->pid, e->comm,
                        (unsigned) e->uid);
                if (e->thread)
                        fprintf(out, "thread %d (own fd table) %s\n", (int) e->thread, e->path);
                else
                        fprintf(out, "fd %-4d %s%s\n", e->fd, e->path,
                                e->uring             ? " (io_uring registered file)"
                                        : e->revoked ? " (revoked)"
                                                     : "");
        }
        if (st->lingering.n == 0)
                fprintf(out, "  none\n");
}

static void status_text(FILE *out, const struct xdev_status *st, bool ignore_logind) {
        const struct xdev_state *state = &st->state;
        const char *holder_name = NULL;

        logind_text(out, ignore_logind);
        for (size_t i = 0; state->has_holder && i < state->n_sessions && !holder_name; i++)
                if (state->sessions[i].uid == state->holder)
                        holder_name = state->sessions[i].user;
        if (!state->has_holder)
                fprintf(out, "holder: none\n");
        else
                fprintf(out, "holder: uid %u (%s)\n", (unsigned) state->holder,
                        holder_name ? holder_name : "?");
        if (!state->follow)
                fprintf(out, "follow: no\n");
        else
                fprintf(out, "follow: yes (xdevicesd pid %d%s)\n", (int) state->follow_pid,
                        st->daemon_alive ? "" : " is gone; restart it");
        if (st->lost > 0)
                fprintf(out,
                        "lost: the state was lost while these %u node(s) were granted; their sessions are unknown and \"xdevices gc\" puts them back:\n",
                        st->lost);
        for (size_t i = 0; i < state->n_nodes; i++) {
                const struct xdev_node *n = &state->nodes[i];
                if (n->lost)
                        fprintf(out, "  %-24s %-7s uid %-6u  was %u:%u %04o %s\n", n->path,
                                xdev_class_to_string(n->class), (unsigned) n->grantee,
                                (unsigned) n->uid, (unsigned) n->gid, (unsigned) (n->mode & 07777),
                                n->acl ? n->acl : "(no ACL support)");
        }
        for (size_t i = 0; i < state->n_sweeps; i++) {
                long long left = sweep_ms_left(&state->sweeps[i]);
                fprintf(out, "logout sweep: the processes of uid %u are being ended by pid %d",
                        (unsigned) state->sweeps[i].uid, (int) state->sweeps[i].pid);
                if (left > 0)
                        fprintf(out, " (SIGKILL in %lld ms)\n", left);
                else
                        fprintf(out, " (SIGKILL sent)\n");
        }
        active_vt_text(out, st->active_vt);
        fprintf(out, "sessions: %zu\n", state->n_sessions);
        for (size_t i = 0; i < state->n_sessions; i++) {
                const struct xdev_session *s = &state->sessions[i];
                char since[32] = "?";
                time_t tt = (time_t) s->since;
                struct tm tm;
                if (localtime_r(&tt, &tm))
                        (void) strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", &tm);
                fprintf(out, "  %-12s uid %-6u tty%-3u leader %-7d %s since %s%s\n", s->user,
                        (unsigned) s->uid, s->vt, (int) s->pid, s->service, since,
                        st->leader_alive[i] ? "" : " (leader gone)");
        }
        fprintf(out, "nodes: %zu\n", state->n_nodes - st->lost);
        for (size_t i = 0; i < state->n_nodes; i++) {
                const struct xdev_node *n = &state->nodes[i];
                if (n->lost)
                        continue;
                fprintf(out, "  %-24s %-7s ", n->path, xdev_class_to_string(n->class));
                if (n->granted)
                        fprintf(out, "uid %-6u %-2s (%s)", (unsigned) n->grantee,
                                xdev_access_to_string(n->perm),
                                xdev_grant_mode_to_string(n->gmode));
                else
                        fprintf(out, "%-18s", "not granted");
                fprintf(out, "  was %u:%u %04o %s\n", (unsigned) n->uid, (unsigned) n->gid,
                        (unsigned) (n->mode & 07777), n->acl ? n->acl : "(no ACL support)");
        }
        status_text_lingering(out, st);
}

static int cmd_status(struct xdev_ctx *ctx, char **args, const struct flags *f) {
        struct xdev_status st;
        int r;

        (void) args;
        r = xdev_status_get(ctx, &st);
        if (r < 0)
                return EXIT_FAILED;
        if (f->json)
                status_json(stdout, &st, ctx->config.ignore_logind);
        else
                status_text(stdout, &st, ctx->config.ignore_logind);
        r = st.lost > 0 ? EXIT_LOST : EXIT_OK;
        xdev_status_free(&st);
        return fflush(stdout) == 0 && !ferror(stdout) ? r : EXIT_FAILED;
}

/* ---- status for a user who is not root ----
 *
 * The state is root's (0700): a user learns her grants from what the
 * device nodes themselves say, which any user can read (owner, mode and
 * ACL, as getfacl shows them). Only her own uid's entries are printed:
 * nothing of another user, of the originals or of the state. */

struct user_grant {
        char path[64];
        enum xdev_class class;
        enum xdev_access access;
        bool owner; /* by ownership (mode=chown, or login(1) on a VT) */
};

/* UID's access to the node behind FD through a named ACL entry (masked),
 * or by ownership. */
static enum xdev_access user_access(int fd, const struct stat *st, uid_t uid, bool *owner) {
        unsigned bits = 0;
        char p[32];
        acl_t acl;

        *owner = st->st_uid == uid;
        if (*owner)
                bits = (st->st_mode >> 6) & 6;
        (void) snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        acl = acl_get_file(p, ACL_TYPE_ACCESS);
        if (acl) {
                unsigned entry = 0, mask = 6;
                bool found = false;
                acl_entry_t e;
                for (int id = ACL_FIRST_ENTRY; acl_get_entry(acl, id, &e) == 1;
                     id = ACL_NEXT_ENTRY) {
                        acl_tag_t tag;
                        acl_permset_t ps;
                        unsigned perm = 0;
                        if (acl_get_tag_type(e, &tag) < 0 || acl_get_permset(e, &ps) < 0)
                                continue;
                        perm = (acl_get_perm(ps, ACL_READ) == 1 ? 4u : 0u) |
                                (acl_get_perm(ps, ACL_WRITE) == 1 ? 2u : 0u);
                        if (tag == ACL_MASK)
                                mask = perm;
                        else if (tag == ACL_USER) {
                                uid_t *q = acl_get_qualifier(e);
                                if (q && *q == uid) {
                                        entry = perm;
                                        found = true;
                                }
                                if (q)
                                        (void) acl_free(q);
                        }
                }
                (void) acl_free(acl);
                if (found && !*owner)
                        bits = entry & mask;
        }
        return bits == 6 ? XDEV_ACCESS_RW : bits & 4 ? XDEV_ACCESS_R : XDEV_ACCESS_OFF;
}

static void user_scan(const char *path, enum xdev_class class, uid_t uid, struct user_grant *out,
                      size_t max, size_t *n) {
        struct stat st;
        int fd;

        for (size_t i = 0; i < *n; i++)
                if (strcmp(out[i].path, path) == 0)
                        return;
        if (*n >= max || strlen(path) >= sizeof out[0].path)
                return;
        if (xdev_node_open(NULL, path, class, &fd, &st) < 0)
                return; /* not a node of the class: nothing of ours */
        out[*n] = (struct user_grant) { .class = class };
        out[*n].access = user_access(fd, &st, uid, &out[*n].owner);
        (void) close(fd);
        if (out[*n].access == XDEV_ACCESS_OFF)
                return;
        strcpy(out[*n].path, path);
        (*n)++;
}

static void user_glob(const char *pattern, enum xdev_class class, uid_t uid, struct user_grant *out,
                      size_t max, size_t *n) {
        glob_t gl;

        if (glob(pattern, GLOB_NOESCAPE, NULL, &gl) != 0)
                return;
        for (size_t i = 0; i < gl.gl_pathc; i++)
                if (xdev_path_is_valid(gl.gl_pathv[i]))
                        user_scan(gl.gl_pathv[i], class, uid, out, max, n);
        globfree(&gl);
}

static int cmd_status_user(const struct xdev_config *config, bool json) {
        static const struct {
                const char *pattern;
                enum xdev_class class;
        } patterns[] = {
                { "/dev/dri/card*", XDEV_CLASS_DRM },
                { "/dev/dri/renderD*", XDEV_CLASS_DRM },
                { "/dev/input/event*", XDEV_CLASS_INPUT },
                { "/dev/input/mouse*", XDEV_CLASS_INPUT },
                { "/dev/input/mice", XDEV_CLASS_INPUT },
                { "/dev/input/js*", XDEV_CLASS_INPUT },
        };
        struct user_grant grants[XDEV_NODES_MAX] = { 0 };
        struct passwd *pw = getpwuid(getuid());
        bool holds = false;
        size_t n = 0;
        int active = xdev_vt_active();

        for (unsigned vt = 1; vt <= XDEV_VT_MAX; vt++) {
                char path[XDEV_VT_PATH_MAX];
                xdev_vt_path(path, vt);
                user_scan(path, XDEV_CLASS_VT, getuid(), grants, XDEV_NODES_MAX, &n);
        }
        user_scan("/dev/tty0", XDEV_CLASS_CONSOLE, getuid(), grants, XDEV_NODES_MAX, &n);
        for (size_t i = 0; i < XDEV_ELEMENTSOF(patterns); i++)
                user_glob(patterns[i].pattern, patterns[i].class, getuid(), grants, XDEV_NODES_MAX,
                          &n);
        for (size_t i = 0; config && i < config->n_globs; i++)
                user_glob(config->globs[i].pattern, config->globs[i].class, getuid(), grants,
                          XDEV_NODES_MAX, &n);
        for (size_t i = 0; i < n; i++)
                holds = holds || grants[i].class == XDEV_CLASS_DRM ||
                        grants[i].class == XDEV_CLASS_INPUT;
        if (json) {
                printf("{\"version\":\"" PACKAGE_VERSION "\",\"uid\":%u,\"user\":",
                       (unsigned) getuid());
                json_string(stdout, pw ? pw->pw_name : "?");
                active_vt_json(stdout, active);
                logind_json(stdout, config && config->ignore_logind);
                json_bool(stdout, "holds_shared", holds);
                printf(",\"nodes\":[");
                for (size_t i = 0; i < n; i++)
                        printf("%s{\"path\":\"%s\",\"class\":\"%s\",\"access\":\"%s\",\"by\":\"%s\"}",
                               i ? "," : "", grants[i].path, xdev_class_to_string(grants[i].class),
                               xdev_access_to_string(grants[i].access),
                               grants[i].owner ? "owner" : "acl");
                printf("]}\n");
        } else {
                printf("user: %s (uid %u); what the device nodes give you (the state is root's)\n",
                       pw ? pw->pw_name : "?", (unsigned) getuid());
                logind_text(stdout, config && config->ignore_logind);
                active_vt_text(stdout, active);
                printf("console VTs:");
                for (size_t i = 0; i < n; i++)
                        if (grants[i].class == XDEV_CLASS_VT)
                                printf(" %s", grants[i].path + 5);
                printf("\nshared devices (DRM, input): %s\nnodes: %zu\n",
                       holds ? "yours" : "not yours (another session holds them, or nobody)", n);
                for (size_t i = 0; i < n; i++)
                        printf("  %-24s %-7s %-2s (%s)\n", grants[i].path,
                               xdev_class_to_string(grants[i].class),
                               xdev_access_to_string(grants[i].access),
                               grants[i].owner ? "owner" : "ACL entry");
        }
        return fflush(stdout) == 0 && !ferror(stdout) ? EXIT_OK : EXIT_FAILED;
}

/* ---- check: any user ---- */

static XDEV_PRINTF(3, 0) void log_plain(void *userdata, int priority, const char *fmt, va_list ap) {
        (void) userdata, (void) priority;
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
}

/* Each file check read: "ok" on stdout, or its errors on stderr; a main
 * file that does not exist is no "ok" (the built-in defaults apply).
 * Returns the number of files with errors, the missing main file one. */
static int check_summary(const struct xdev_config_files *files) {
        int bad = 0;

        for (size_t i = 0; i < files->n; i++) {
                const struct xdev_config_file *f = &files->file[i];
                if (f->missing) {
                        fprintf(stderr,
                                "%s: does not exist: the module and xdevicesd run on the "
                                "built-in defaults\n",
                                f->path);
                        bad++;
                } else if (f->errors > 0) {
                        fprintf(stderr, "%s: %u error%s\n", f->path, f->errors,
                                f->errors == 1 ? "" : "s");
                        bad++;
                } else
                        printf("%s: ok\n", f->path);
        }
        return bad;
}

static int cmd_check(const char *conf, bool named) {
        struct xdev_log log = { .fn = log_plain };
        static struct xdev_config_files files;
        struct xdev_config config;
        struct xdev_logind logind;
        char why[256];
        int errors;

        xdev_config_init(&config);
        errors = xdev_config_check(&config, conf, named, &log, &files);
        if (stands_down(config.ignore_logind, &logind))
                fprintf(stderr,
                        "%s: warning: %s (pid %d) manages the seats here: pam_xdevices and "
                        "xdevicesd stand down and grant nothing (logind = ignore overrides)\n",
                        conf, logind.name, (int) logind.pid);
        if (errors == 0) {
                xdev_devices_explain(&config, NULL, why, sizeof why);
                if (why[0])
                        fprintf(stderr, "%s: warning: %s: a login gets only its VT\n", conf, why);
        }
        if (check_summary(&files) > 0 && errors == 0)
                errors = 1; /* the main file is missing */
        xdev_config_free(&config);
        return errors > 0 ? EXIT_FAILED : EXIT_OK;
}

static int cmd_revoke_args(struct xdev_ctx *ctx, char **args, const struct flags *f) {
        return cmd_revoke(ctx, f->all ? NULL : args[0]);
}

static int cmd_apply_args(struct xdev_ctx *ctx, char **args, const struct flags *f) {
        (void) f;
        return cmd_apply(ctx, args[0], false);
}

static int cmd_forget_args(struct xdev_ctx *ctx, char **args, const struct flags *f) {
        (void) f;
        return cmd_apply(ctx, args[0], true);
}

static int cmd_mdev_args(struct xdev_ctx *ctx, char **args, const struct flags *f) {
        (void) args, (void) f;
        return cmd_mdev(ctx);
}

static int cmd_gc(struct xdev_ctx *ctx, char **args, const struct flags *f) {
        unsigned lost;
        int r;
        (void) args, (void) f;
        r = xdev_gc(ctx, &lost);
        if (r >= 0)
                xdev_debug(&ctx->log, "reaped %d session(s)", r);
        return r < 0 ? EXIT_FAILED : lost > 0 ? EXIT_LOST : EXIT_OK;
}

static int cmd_reset(struct xdev_ctx *ctx, char **args, const struct flags *f) {
        unsigned lost;
        int r;
        (void) args;
        r = xdev_reset(ctx, f->force, f->revoke, &lost);
        return r < 0 ? EXIT_FAILED : lost > 0 ? EXIT_LOST : EXIT_OK;
}

/* The commands: name, operands (-1: "revoke", one operand or --all) and the
 * function. */
static const struct command {
        const char *name;
        int operands;
        int (*run)(struct xdev_ctx *ctx, char **args, const struct flags *f);
} commands[] = {
        { "status", 0, cmd_status },      { "apply", 1, cmd_apply_args },
        { "forget", 1, cmd_forget_args }, { "gc", 0, cmd_gc },
        { "reset", 0, cmd_reset },        { "revoke", -1, cmd_revoke_args },
        { "mdev", 0, cmd_mdev_args },
};

static int run_command(struct xdev_ctx *ctx, const struct xdev_cli *cli, const char *name,
                       int n_args, char **args, const struct flags *f) {
        for (size_t i = 0; i < XDEV_ELEMENTSOF(commands); i++) {
                const struct command *c = &commands[i];
                int want = c->operands >= 0 ? c->operands : f->all ? 0 : 1;
                if (strcmp(name, c->name) != 0)
                        continue;
                if (n_args > want)
                        return xdev_cli_usage_error(cli, "%s: unexpected operand \"%s\"", name,
                                                    args[want]);
                if (n_args < want)
                        return xdev_cli_usage_error(cli, "%s: missing operand", name);
                return c->run(ctx, args, f);
        }
        return xdev_cli_usage_error(cli, "unknown command \"%s\"", name);
}

static const struct option options[] = {
        XDEV_CLI_OPTIONS,
        { "json", no_argument, NULL, 'j' },
        { "force", no_argument, NULL, 'f' },
        { "all", no_argument, NULL, 'a' },
        { "revoke", no_argument, NULL, 'r' },
        {},
};

struct args {
        struct xdev_cli cli; /* --conf, --debug */
        const char *cmd;
        struct flags flags;
};

/* The options before the command. Returns -1 to go on, or an exit code. */
static int parse_options(int argc, char **argv, struct args *a) {
        int c;

        while ((c = getopt_long(argc, argv, "+" XDEV_CLI_SHORT "jf", options, NULL)) != -1) {
                if (c == 'j')
                        a->flags.json = true;
                else if (c == 'f')
                        a->flags.force = true;
                else {
                        int ret = xdev_cli_option(&a->cli, c, optarg);
                        if (ret >= 0)
                                return ret;
                }
        }
        return -1;
}

/* The command and the options that may follow it ("status --json").
 * Returns -1 to go on, or an exit code. */
static int parse_command(int argc, char **argv, struct args *a) {
        int c;

        if (optind >= argc)
                return xdev_cli_usage_error(&a->cli, "no command given");
        a->cmd = argv[optind++];
        while ((c = getopt_long(argc, argv, "c:jf", options, NULL)) != -1) {
                if (c == 'c' && strcmp(a->cmd, "check") == 0) {
                        a->cli.conf = optarg; /* "check --conf=PATH" */
                        a->cli.named = true;
                } else if (c == 'j')
                        a->flags.json = true;
                else if (c == 'f')
                        a->flags.force = true;
                else if (c == 'a' && strcmp(a->cmd, "revoke") == 0)
                        a->flags.all = true;
                else if (c == 'r' && strcmp(a->cmd, "reset") == 0)
                        a->flags.revoke = true;
                else if (c == '?')
                        return xdev_cli_usage_error(&a->cli, NULL); /* getopt named it */
                else
                        return xdev_cli_usage_error(&a->cli, "%s: \"%s\" does not go with it",
                                                    a->cmd, argv[optind - 1]);
        }
        return -1;
}

/* "status" as a user: the globs of a readable config; without it, the
 * usual names. */
static int status_as_user(const char *conf, bool json) {
        struct xdev_config config;
        int ret;

        xdev_config_init(&config);
        if (xdev_config_load(&config, conf, NULL) < 0)
                xdev_config_free(&config);
        ret = cmd_status_user(&config, json);
        xdev_config_free(&config);
        return ret;
}

int main(int argc, char **argv) {
        struct args a = { .cli = {
                                  .prog = "xdevices", .usage = usage, .conf = XDEV_DEFAULT_CONF } };
        struct xdev_ctx ctx;
        int ret;

        ret = parse_options(argc, argv, &a);
        if (ret < 0)
                ret = parse_command(argc, argv, &a);
        if (ret >= 0)
                return ret;
        if (strcmp(a.cmd, "check") == 0) {
                if (optind != argc)
                        return xdev_cli_usage_error(&a.cli, "check: unexpected operand \"%s\"",
                                                    argv[optind]);
                return cmd_check(a.cli.conf, a.cli.named);
        }
        if (geteuid() != 0 && strcmp(a.cmd, "status") == 0 && optind == argc)
                return status_as_user(a.cli.conf, a.flags.json);
        ret = xdev_cli_need_root(&a.cli);
        if (ret != EXIT_OK)
                return ret;
        /* a reset takes grants from live sessions: it is always recorded */
        use_syslog = !isatty(STDERR_FILENO) || strcmp(a.cmd, "reset") == 0;
        if (use_syslog)
                openlog("xdevices", LOG_PID, LOG_AUTHPRIV);

        xdev_ctx_init(&ctx);
        ctx.log = (struct xdev_log) { .fn = log_to_stderr };
        (void) xdev_ctx_load_config(&ctx, a.cli.conf, a.cli.named, a.cli.debug);

        ret = run_command(&ctx, &a.cli, a.cmd, argc - optind, argv + optind, &a.flags);
        xdev_ctx_done(&ctx);
        return ret;
}
