/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The watch on the shared input nodes (doc/DESIGN.md §3.5.11):
 * fanotify's access and modify events, each naming the node by
 * its file handle and the process by a pidfd. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#include "access.h"
#include "devices.h"
#include "linger.h"
#include "logindefs.h"
#include "node.h"
#include "others.h"
#include "sweep.h"
#include "procfs.h"
#include "state.h"
#include "watch.h"

#define WATCH_NODES_MAX 256
/* Processes looked at once, whose next access after the look is their
 * second. */
#define WATCH_SUSPECTS_MAX 16
#define WATCH_HANDLE_MAX 64
/* Processes found free to touch the nodes, trusted again without a read
 * of their status for this long, while the holder stays (ms). */
#define WATCH_FREE_MAX 8
#define WATCH_FREE_MS 1000
/* A process left what it holds is looked at again this long after (ms). */
#define WATCH_QUIET_MS 10000
/* Reads of the queue a call to xdev_watch_read makes at most. */
#define WATCH_READS_PER_CALL 16
/* Stamps the queue may hold at once: each of its own file, as the kernel
 * merges an event into a like one still queued (same object, same
 * process) */
#define WATCH_STAMPS 4

struct wnode {
        int fd; /* O_PATH: the object of the mark */
        dev_t dev;
        ino_t ino;
        enum xdev_class class;
        char path[64];
        fsid_t fsid;
        int handle_type;
        unsigned handle_bytes;
        unsigned char handle[WATCH_HANDLE_MAX];
        bool seen;
};

struct suspect {
        pid_t pid;
        int pidfd;
        unsigned long after; /* its accesses after this stamp (of the
                              * stamps read) come after the look */
        double quiet_until;  /* CLOCK_MONOTONIC ms: what it holds was left
                              * to it (not revocable; lingering = warn) */
};

/* A process found free to touch the nodes, by its pidfd. */
struct freed {
        pid_t pid;
        int pidfd;
        double until; /* CLOCK_MONOTONIC ms */
};

struct xdev_watch {
        int fd, procfd;
        bool console;
        struct freed freed[WATCH_FREE_MAX];
        size_t n_freed;
        struct wnode nodes[WATCH_NODES_MAX];
        size_t n;
        bool has_holder;
        uid_t holder;
        uid_t system_uid_max;
        /* Stamps in the queue (doc/DESIGN.md §3.5.11): unnamed files of
         * the state directory's, written by the watch in turn; the event
         * of each write comes after every access made before it. */
        struct wnode stamps[WATCH_STAMPS];
        size_t n_stamps; /* 0: none, the queue drained instead */
        unsigned long stamps_read, stamps_written, stamps_wanted;
        bool drained;               /* (no stamp) since the last read of it */
        bool stamp_said;            /* that there is none */
        unsigned long switch_stamp; /* the stamp after the holder's change */
        struct suspect suspects[WATCH_SUSPECTS_MAX];
        size_t n_suspects;
        struct xdev_watch_counts counts;
};

int xdev_watch_open(struct xdev_watch **ret, bool console) {
        struct xdev_watch *w = calloc(1, sizeof *w);

        if (!w)
                return -ENOMEM;
        w->console = console;
        w->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        w->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_REPORT_PIDFD | FAN_CLOEXEC |
                                      FAN_NONBLOCK,
                              O_RDONLY | O_CLOEXEC);
        if (w->fd < 0 || w->procfd < 0) {
                int r = -errno;
                xdev_watch_free(w);
                return r;
        }
        w->system_uid_max = XDEV_SYSTEM_UID_LIMIT;
        *ret = w;
        return 0;
}

void xdev_watch_free(struct xdev_watch *w) {
        if (!w)
                return;
        for (size_t i = 0; i < w->n; i++)
                (void) close(w->nodes[i].fd);
        for (size_t i = 0; i < w->n_suspects; i++)
                (void) close(w->suspects[i].pidfd);
        for (size_t i = 0; i < w->n_freed; i++)
                (void) close(w->freed[i].pidfd);
        for (size_t i = 0; i < w->n_stamps; i++)
                (void) close(w->stamps[i].fd);
        if (w->fd >= 0)
                (void) close(w->fd);
        if (w->procfd >= 0)
                (void) close(w->procfd);
        free(w);
}

int xdev_watch_fd(const struct xdev_watch *w) {
        return w->fd;
}

struct xdev_watch_counts xdev_watch_counts(const struct xdev_watch *w) {
        return w->counts;
}

static unsigned long stamp_next(struct xdev_watch *w);

void xdev_watch_holder(struct xdev_watch *w, bool has, uid_t uid) {
        if (has != w->has_holder || uid != w->holder) {
                /* who is free changed: each is read again */
                for (size_t i = 0; i < w->n_freed; i++)
                        (void) close(w->freed[i].pidfd);
                w->n_freed = 0;
                /* what was cut off at the change was cut off before
                 * this stamp: an access after it comes from a hold the
                 * cut-off did not see */
                w->switch_stamp = stamp_next(w);
        }
        w->has_holder = has;
        w->holder = uid;
}

/* Marks (or, with REMOVE, unmarks) the node open as FD (O_PATH: named by
 * its /proc/self/fd link, which is that very node). */
static int node_mark(int fan, int fd, bool remove) {
        char p[32];

        (void) snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        return fanotify_mark(fan, remove ? FAN_MARK_REMOVE : FAN_MARK_ADD, FAN_ACCESS | FAN_MODIFY,
                             AT_FDCWD, p) < 0
                ? -errno
                : 0;
}

/* What names the node open as FD in an event: its file system and handle. */
static int node_identity(int fd, struct wnode *n) {
        union {
                struct file_handle fh;
                unsigned char raw[sizeof(struct file_handle) + WATCH_HANDLE_MAX];
        } h;
        struct statfs sfs;
        int mount_id;

        h.fh.handle_bytes = WATCH_HANDLE_MAX;
        if (name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) < 0 || fstatfs(fd, &sfs) < 0)
                return -errno;
        n->fsid = sfs.f_fsid;
        n->handle_type = h.fh.handle_type;
        n->handle_bytes = h.fh.handle_bytes;
        memcpy(n->handle, h.fh.f_handle, h.fh.handle_bytes);
        return 0;
}

/* Adds the node PATH of CLASS, or finds it watched already. */
static int watch_one(struct xdev_watch *w, const char *path, enum xdev_class class) {
        struct wnode n = { .fd = -1, .class = class };
        struct stat st;
        int r = xdev_node_open(NULL, path, class, &n.fd, &st);

        if (r < 0)
                return r;
        for (size_t i = 0; i < w->n; i++)
                if (w->nodes[i].dev == st.st_dev && w->nodes[i].ino == st.st_ino) {
                        w->nodes[i].seen = true;
                        (void) close(n.fd);
                        return 0;
                }
        n.dev = st.st_dev;
        n.ino = st.st_ino;
        n.seen = true;
        (void) snprintf(n.path, sizeof n.path, "%s", path);
        if (w->n == WATCH_NODES_MAX)
                r = -ENOSPC;
        else if ((r = node_identity(n.fd, &n)) == 0)
                r = node_mark(w->fd, n.fd, false);
        if (r < 0) {
                (void) close(n.fd);
                return r;
        }
        w->nodes[w->n++] = n;
        return 0;
}

/* Opens the stamps: unnamed files of DIR (the state directory, root's
 * alone), each marked for its writes and named in events by its handle;
 * all of them, or none. */
static int stamps_open(struct xdev_watch *w, const char *dir) {
        int r = 0;

        while (w->n_stamps < WATCH_STAMPS && r == 0) {
                struct wnode *m = &w->stamps[w->n_stamps];
                m->fd = open(dir, O_TMPFILE | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (m->fd < 0)
                        r = -errno;
                else if ((r = node_identity(m->fd, m)) == 0 &&
                         fanotify_mark(w->fd, FAN_MARK_ADD, FAN_MODIFY, m->fd, NULL) < 0)
                        r = -errno;
                if (r == 0)
                        w->n_stamps++;
                else if (m->fd >= 0)
                        (void) close(m->fd);
        }
        for (; r < 0 && w->n_stamps > 0; w->n_stamps--)
                (void) close(w->stamps[w->n_stamps - 1].fd);
        return r;
}

int xdev_watch_nodes(struct xdev_watch *w, struct xdev_ctx *ctx) {
        struct xdev_device_list list = { 0 };
        int r = xdev_devices_enumerate(&ctx->config, &list, &ctx->log);
        size_t k = 0;

        if (r < 0)
                return r;
        if (w->n_stamps == 0 && !w->stamp_said && (r = stamps_open(w, ctx->statedir)) < 0) {
                w->stamp_said = true;
                xdev_log(&ctx->log, LOG_WARNING,
                         "the watch on the input nodes cannot stamp its queue in \"%s\" (%s): "
                         "it drops what the queue holds at a change of holder and after a look "
                         "instead",
                         ctx->statedir, strerror(-r));
        }
        w->system_uid_max =
                xdev_linger_system_uid_max(&ctx->config, &ctx->log, ctx->logindefs_memo);
        for (size_t i = 0; i < w->n; i++)
                w->nodes[i].seen = false;
        for (size_t i = 0; i < list.n; i++) {
                const struct xdev_device *d = &list.items[i];
                if (d->class != XDEV_CLASS_INPUT && !(w->console && d->class == XDEV_CLASS_CONSOLE))
                        continue;
                r = watch_one(w, d->path, d->class);
                if (r < 0 && r != -ENOENT)
                        xdev_log(&ctx->log, LOG_WARNING, "cannot watch \"%s\": %s", d->path,
                                 strerror(-r));
        }
        xdev_device_list_free(&list);
        for (size_t i = 0; i < w->n; i++) {
                if (!w->nodes[i].seen) {
                        (void) node_mark(w->fd, w->nodes[i].fd, true);
                        (void) close(w->nodes[i].fd);
                        continue;
                }
                w->nodes[k++] = w->nodes[i];
        }
        w->n = k;
        return (int) k;
}

/* Whether the event's FID names the object N. */
static bool names(const struct wnode *n, const struct fanotify_event_info_fid *fid) {
        const struct file_handle *fh = (const void *) fid->handle;

        return memcmp(&n->fsid, &fid->fsid, sizeof n->fsid) == 0 &&
                n->handle_type == fh->handle_type && n->handle_bytes == fh->handle_bytes &&
                memcmp(n->handle, fh->f_handle, n->handle_bytes) == 0;
}

/* Whether the event's FID names one of the stamps. */
static bool is_stamp(const struct xdev_watch *w, const struct fanotify_event_info_fid *fid) {
        for (size_t i = 0; i < w->n_stamps; i++)
                if (names(&w->stamps[i], fid))
                        return true;
        return false;
}

/* The watched node an event names, or NULL. */
static const struct wnode *node_of(const struct xdev_watch *w,
                                   const struct fanotify_event_info_fid *fid) {
        for (size_t i = 0; i < w->n; i++)
                if (names(&w->nodes[i], fid))
                        return &w->nodes[i];
        return NULL;
}

static bool pidfd_alive(int pidfd) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        return poll(&p, 1, 0) == 0;
}

/* Whether PID was found free to touch the nodes a moment ago, and is the
 * same process still (its pidfd has not ended: the pid is not reused). */
static bool freed_has(struct xdev_watch *w, pid_t pid) {
        double now = xdev_now_ms();

        for (size_t i = 0; i < w->n_freed; i++) {
                struct freed *f = &w->freed[i];
                if (f->pid != pid)
                        continue;
                if (now < f->until && pidfd_alive(f->pidfd))
                        return true;
                (void) close(f->pidfd);
                *f = w->freed[--w->n_freed];
                return false;
        }
        return false;
}

static void freed_add(struct xdev_watch *w, pid_t pid, int pidfd) {
        int fd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);

        if (fd < 0)
                return;
        if (w->n_freed == WATCH_FREE_MAX) {
                (void) close(w->freed[0].pidfd);
                memmove(&w->freed[0], &w->freed[1], (WATCH_FREE_MAX - 1) * sizeof w->freed[0]);
                w->n_freed--;
        }
        w->freed[w->n_freed++] = (struct freed) { pid, fd, xdev_now_ms() + WATCH_FREE_MS };
}

/* Whether a process of the uids ST (real, effective, saved, fs) touches
 * the nodes freely, as the pass after the lock passes over it. */
static bool uids_may(const struct xdev_watch *w, const struct xdev_proc_status *st) {
        return xdev_sweep_uids_free(st->uid, w->system_uid_max, &w->holder, w->has_holder ? 1 : 0);
}

/* Whether PID could open N for what it did (WROTE: write, else read) with
 * its own rights, as the node is now: an input group's member's daemon. */
static bool own_right(const struct xdev_watch *w, const struct wnode *n, pid_t pid, bool wrote) {
        struct xdev_creds c;
        struct stat st;

        if (xdev_proc_creds_read(w->procfd, pid, &c) < 0 || fstat(n->fd, &st) < 0)
                return false;
        return xdev_creds_may_fd(&c, n->fd, &st, wrote ? XDEV_MAY_WRITE : XDEV_MAY_READ);
}

static struct suspect *suspect_of(struct xdev_watch *w, pid_t pid) {
        for (size_t i = 0; i < w->n_suspects; i++)
                if (w->suspects[i].pid == pid && pidfd_alive(w->suspects[i].pidfd))
                        return &w->suspects[i];
        return NULL;
}

static void suspect_drop(struct xdev_watch *w, struct suspect *s) {
        (void) close(s->pidfd);
        *s = w->suspects[--w->n_suspects];
}

/* Keeps PID (PIDFD, duplicated) as looked at before the stamp AFTER; the
 * oldest goes when the table is full. */
static void suspect_add(struct xdev_watch *w, pid_t pid, int pidfd, unsigned long after) {
        struct suspect *s = suspect_of(w, pid);
        int fd;

        if (s) {
                s->after = after;
                s->quiet_until = 0;
                return;
        }
        fd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return;
        for (size_t i = 0; i < w->n_suspects;)
                if (!pidfd_alive(w->suspects[i].pidfd))
                        suspect_drop(w, &w->suspects[i]);
                else
                        i++;
        if (w->n_suspects == WATCH_SUSPECTS_MAX) {
                (void) close(w->suspects[0].pidfd);
                memmove(&w->suspects[0], &w->suspects[1],
                        (WATCH_SUSPECTS_MAX - 1) * sizeof w->suspects[0]);
                w->n_suspects--;
        }
        w->suspects[w->n_suspects++] = (struct suspect) { pid, fd, after, 0 };
}

/* The holder as the state has it, kept for the next events. */
static int state_holder(struct xdev_watch *w, struct xdev_ctx *ctx) {
        struct xdev_store store = { -1, -1 };
        struct xdev_state state = { 0 };
        unsigned line;
        int r = xdev_store_open(&store, ctx->statedir);

        if (r >= 0)
                r = xdev_store_load(&store, &state, &line);
        if (r >= 0)
                xdev_watch_holder(w, state.has_holder, state.holder);
        xdev_state_free(&state);
        xdev_store_close(&store);
        return r < 0 ? r : 0;
}

/* Reads and drops what the queue holds (with no stamp). */
static void queue_drain(struct xdev_watch *w);

/* The next stamp: its write's event comes after every access made until
 * now. Written now, or, when every stamp's file has one in the queue, as
 * soon as the oldest is read. With no stamps the queue is drained instead,
 * and the next read of it starts after the stamp it stands for. Returns the
 * stamp's ordinal. */
static unsigned long stamp_next(struct xdev_watch *w) {
        if (w->n_stamps > 0 && w->stamps_written - w->stamps_read >= w->n_stamps)
                return w->stamps_wanted = w->stamps_written + 1;
        if (w->n_stamps > 0 &&
            pwrite(w->stamps[w->stamps_written % w->n_stamps].fd, "m", 1, 0) == 1)
                return ++w->stamps_written;
        queue_drain(w);
        w->drained = true;
        return ++w->stamps_written;
}

/* A stamp read from the queue (ALL: every stamp written, after an overflow
 * of the queue, which lost the ones behind it); the next one written if
 * it is wanted. */
static void stamp_read(struct xdev_watch *w, bool all) {
        if (all)
                w->stamps_read = w->stamps_written;
        else if (w->stamps_read < w->stamps_written)
                w->stamps_read++;
        if (w->stamps_wanted > w->stamps_written)
                (void) stamp_next(w);
}

/* PID (PIDFD) may not touch N and holds nothing of it /proc shows that
 * moves data, yet it read it (DID) after its look (LOOKED) or after the
 * holder's change. */
static void kill_hidden(struct xdev_watch *w, struct xdev_ctx *ctx, const struct wnode *n,
                        pid_t pid, int pidfd, uid_t uid, const char *did, bool looked) {
        int r = (int) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);

        /* no pidfd_send_signal (valgrind; a kernel with the watch has it):
         * the pid is its process's while its pidfd says it lives */
        if (r < 0 && errno == ENOSYS && pidfd_alive(pidfd))
                r = kill(pid, SIGKILL);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot kill pid %d, which %s \"%s\": %s", (int) pid,
                         did, n->path, strerror(errno));
                return;
        }
        w->counts.killed++;
        xdev_log(&ctx->log, LOG_WARNING,
                 "pid %d (uid %u) %s \"%s\" %s, through nothing of it that /proc shows (a ring "
                 "with neither fd nor mapping, a file received in flight): killed",
                 (int) pid, (unsigned) uid, did, n->path,
                 looked ? "again" : "after the devices changed hands");
}

/* Whether a look that counted C found what the access could have been
 * made through: a hold it cut off, or one it left working. An O_PATH fd
 * or an input fd revoked before moves no data: a process with only those
 * made the access through something the look cannot see. */
static bool explained(const struct xdev_sweep_counts *c) {
        return c->revoked + c->demoted + c->terminated > 0 || c->holders > c->spent;
}

/* PID, which may not touch N, read it (or, WROTE, wrote it): looked at
 * as the pass after the lock looks, and what it holds cut off. When the
 * look finds nothing, it is killed if the access came after the holder's
 * change, else at its next access after the look. */
static void strike(struct xdev_watch *w, struct xdev_ctx *ctx, const struct wnode *n, pid_t pid,
                   int pidfd, bool wrote) {
        struct suspect *s = suspect_of(w, pid);
        struct xdev_proc_status st;
        struct xdev_sweep_counts c;
        const char *did = wrote ? "wrote" : "read";
        bool late;
        int r;

        if (s && (w->stamps_read < s->after || xdev_now_ms() < s->quiet_until))
                return; /* reported before the look ended, or left to it */
        if (state_holder(w, ctx) < 0 || xdev_proc_status_read(w->procfd, pid, &st) < 0 ||
            !pidfd_alive(pidfd) || uids_may(w, &st))
                return;
        /* made after the look at it, or after what the holder's change
         * cut off: not a read from before a cut-off, reported after it
         * (but see c.stale below) */
        late = s || w->stamps_read >= w->switch_stamp;
        w->counts.checked++;
        r = xdev_others_cut_off(ctx, pid, &c);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot look at pid %d, which %s \"%s\": %s",
                         (int) pid, did, n->path, strerror(-r));
        } else if (explained(&c)) {
                w->counts.cut++;
                if (s)
                        xdev_debug(&ctx->log,
                                   "pid %d %s \"%s\" once more: %u fd(s) revoked, %u terminated",
                                   (int) pid, did, n->path, c.revoked, c.terminated);
                else
                        xdev_log(
                                &ctx->log, LOG_NOTICE,
                                "pid %d (uid %u) %s \"%s\", which it may not touch: %u fd(s) revoked, %u terminated",
                                (int) pid, (unsigned) st.uid[0], did, n->path, c.revoked,
                                c.terminated);
        } else if (!late || (!s && c.stale > 0)) {
                /* before the change; or through an fd of its that a cut-off
                 * revoked as the read went on (a display server's read whose
                 * copy waited for a page), reported after the stamp */
                xdev_log(&ctx->log, LOG_NOTICE,
                         "pid %d (uid %u) %s \"%s\", which it may not touch, through nothing of it "
                         "that /proc shows (%s); it is killed if it does again",
                         (int) pid, (unsigned) st.uid[0], did, n->path,
                         c.stale > 0 ? "but an fd revoked since"
                                     : "no fd for I/O, ring or mapping");
        } else {
                kill_hidden(w, ctx, n, pid, pidfd, st.uid[0], did, s != NULL);
                if (s)
                        suspect_drop(w, s);
                return;
        }
        /* what it read before the look is reported up to the stamp */
        suspect_add(w, pid, pidfd, stamp_next(w));
        /* what it holds was left to it, as the pass leaves it: looked at
         * again only once in WATCH_QUIET_MS, not at each access */
        s = suspect_of(w, pid);
        if (s && r >= 0 && c.holders > c.spent && c.revoked == 0 && c.terminated == 0)
                s->quiet_until = xdev_now_ms() + WATCH_QUIET_MS;
}

/* The node and the pidfd an event carries (*RET_FID NULL, *RET_PIDFD
 * -1 when it has none). */
static void event_parse(const struct fanotify_event_metadata *m,
                        const struct fanotify_event_info_fid **ret_fid, int *ret_pidfd) {
        const unsigned char *info = (const unsigned char *) m + m->metadata_len;
        const unsigned char *end = (const unsigned char *) m + m->event_len;

        *ret_fid = NULL;
        *ret_pidfd = -1;
        while (end - info >= (ptrdiff_t) sizeof(struct fanotify_event_info_header)) {
                const struct fanotify_event_info_header *h = (const void *) info;
                if ((size_t) h->len < sizeof *h || (ptrdiff_t) h->len > end - info)
                        break;
                if (h->info_type == FAN_EVENT_INFO_TYPE_FID &&
                    (size_t) h->len >= sizeof **ret_fid + sizeof(struct file_handle))
                        *ret_fid = (const void *) h;
                else if (h->info_type == FAN_EVENT_INFO_TYPE_PIDFD &&
                         (size_t) h->len >= sizeof(struct fanotify_event_info_pidfd))
                        *ret_pidfd = ((const struct fanotify_event_info_pidfd *) h)->pidfd;
                info += h->len;
        }
}

/* One access: by the process PID (PIDFD), of the node FID names. */
static void event_one(struct xdev_watch *w, struct xdev_ctx *ctx,
                      const struct fanotify_event_metadata *m,
                      const struct fanotify_event_info_fid *fid, int pidfd) {
        bool wrote = (m->mask & FAN_MODIFY) != 0;
        const struct wnode *n = fid ? node_of(w, fid) : NULL;
        struct xdev_proc_status st;

        if (!n || pidfd < 0 || m->pid <= 0 || freed_has(w, m->pid) ||
            xdev_proc_status_read(w->procfd, m->pid, &st) < 0 || !pidfd_alive(pidfd))
                return;
        if (uids_may(w, &st))
                freed_add(w, m->pid, pidfd);
        else if (!own_right(w, n, m->pid, wrote))
                strike(w, ctx, n, m->pid, pidfd, wrote);
}

/* One read of the queue into BUF: the events acted on, with CTX, else
 * dropped; each pidfd closed. Returns the bytes read, 0 when the queue is
 * empty. */
static ssize_t queue_read(struct xdev_watch *w, struct xdev_ctx *ctx, char *buf, size_t size) {
        ssize_t len = read(w->fd, buf, size);

        if (len <= 0)
                return 0;
        if (ctx && w->drained) {
                /* the queue was drained where a stamp would be */
                w->stamps_read = w->stamps_written;
                w->drained = false;
        }
        for (const struct fanotify_event_metadata *m = (const void *) buf; FAN_EVENT_OK(m, len);
             m = FAN_EVENT_NEXT(m, len)) {
                const struct fanotify_event_info_fid *fid;
                int pidfd;

                if (m->vers != FANOTIFY_METADATA_VERSION)
                        break;
                if (m->mask & FAN_Q_OVERFLOW) {
                        /* the stamps written and not read were lost
                         * with the accesses made while it was full */
                        w->counts.lost++;
                        stamp_read(w, true);
                        continue;
                }
                event_parse(m, &fid, &pidfd);
                if (fid && is_stamp(w, fid)) {
                        stamp_read(w, false);
                        if (pidfd >= 0)
                                (void) close(pidfd);
                        continue;
                }
                w->counts.events++;
                if (ctx)
                        event_one(w, ctx, m, fid, pidfd);
                if (pidfd >= 0)
                        (void) close(pidfd);
        }
        return len;
}

static void queue_drain(struct xdev_watch *w) {
        char buf[4096] __attribute__((aligned(8)));

        while (queue_read(w, NULL, buf, sizeof buf) > 0) {
        }
}

void xdev_watch_read(struct xdev_watch *w, struct xdev_ctx *ctx) {
        char buf[8192] __attribute__((aligned(8)));
        unsigned lost = w->counts.lost;

        /* a bounded share a call: the caller's other work (the holder
         * after a step, read by the same thread) waits for no flood */
        for (unsigned i = 0; i < WATCH_READS_PER_CALL; i++)
                if (queue_read(w, ctx, buf, sizeof buf) == 0)
                        break;
        if (w->counts.lost != lost)
                xdev_log(&ctx->log, LOG_WARNING,
                         "the watch on the input nodes lost events (its queue overflowed)");
}
