/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The seat of xdevices-vt-run(1): libseat's seatd protocol, served to the
 * one compositor the wrapper runs, as the user and with no privilege.
 *
 * The protocol, as libseat's seatd backend speaks it (seatd 0.7.0 to
 * 0.9.x): each message is a header of two native-endian uint16, an opcode
 * and the size of the payload that follows. Requests are 1..7; events and
 * replies carry the opcode of their request plus 0x8000; an error reply is
 * 0xffff with an int errno. OPEN_SEAT is answered with the seat's name
 * (uint16 length, NUL included, then the name), OPEN_DEVICE (uint16 length,
 * then the NUL-terminated path) with an int device id and the fd in
 * SCM_RIGHTS. DISABLE_SEAT and ENABLE_SEAT are events; the client answers
 * the first with its own DISABLE_SEAT: the ack. libseat 0.9.0 and later
 * wait for a reply to their DISABLE_SEAT (SEAT_DISABLED) and SWITCH_SESSION
 * (SESSION_SWITCHED); 0.7.0 and 0.8.0 expect none and would take one for the
 * answer to their next request. Which one a client is shows only in the
 * library it runs: see peer_wants_acks().
 *
 * The rules this file keeps:
 * 1. A device is opened by a path of the three kinds the seat serves, never
 *    through a symlink at its end: O_PATH|O_NOFOLLOW, fstat (a character
 *    device of the right major), then that inode reopened through
 *    /proc/self/fd. The fd handed out is checked to be that same node.
 * 2. Only a peer of our own uid is served, one at a time.
 * 3. What was handed out is revoked (evdev) or loses DRM master before the
 *    VT switch goes through, acked or not: the switch waits for the
 *    compositor for a bounded time only. */
#include "config.h"

#include "vt-seat.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/vt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "drmdev.h"
#include "evdev.h"
#include "vt.h"

#define PROG "xdevices-vt-run"

#define REQ_OPEN_SEAT 1
#define REQ_CLOSE_SEAT 2
#define REQ_OPEN_DEVICE 3
#define REQ_CLOSE_DEVICE 4
#define REQ_DISABLE_SEAT 5
#define REQ_SWITCH_SESSION 6
#define REQ_PING 7
#define EV(op) ((uint16_t) (0x8000u + (op)))
#define EV_ENABLE_SEAT EV(6)
#define EV_SESSION_SWITCHED EV(8)
#define EV_SEAT_DISABLED EV(9)
#define EV_ERROR EV(0x7fff)

#define SEAT_NAME "seat0"

struct header {
        uint16_t opcode;
        uint16_t size;
};

static double now_ms(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1000.0 + (double) ts.tv_nsec / 1e6;
}

ssize_t vtseat_parse(const unsigned char *buf, size_t len, struct vtseat_request *req) {
        struct header h;
        uint16_t plen;
        int v;

        if (len < sizeof h)
                return 0;
        memcpy(&h, buf, sizeof h);
        /* the longest request is OPEN_DEVICE's: refuse more before it is all in */
        if (h.size > sizeof plen + VTSEAT_MAX_PATH)
                return -EBADMSG;
        switch (h.opcode) {
        case REQ_OPEN_SEAT:
        case REQ_CLOSE_SEAT:
        case REQ_DISABLE_SEAT:
        case REQ_PING:
                if (h.size != 0)
                        return -EBADMSG;
                break;
        case REQ_CLOSE_DEVICE:
        case REQ_SWITCH_SESSION:
                if (h.size != sizeof v)
                        return -EBADMSG;
                break;
        case REQ_OPEN_DEVICE:
                if (h.size < sizeof plen + 1)
                        return -EBADMSG;
                break;
        default:
                return -EBADMSG;
        }
        if (len < sizeof h + h.size)
                return 0;
        req->opcode = h.opcode;
        req->value = 0;
        req->path[0] = '\0';
        if (h.size == sizeof v && h.opcode != REQ_OPEN_DEVICE)
                memcpy(&req->value, buf + sizeof h, sizeof v);
        if (h.opcode == REQ_OPEN_DEVICE) {
                memcpy(&plen, buf + sizeof h, sizeof plen);
                if (plen != h.size - sizeof plen)
                        return -EBADMSG;
                memcpy(req->path, buf + sizeof h + sizeof plen, plen);
                if (req->path[plen - 1] != '\0' || strlen(req->path) != (size_t) plen - 1)
                        return -EBADMSG;
        }
        return (ssize_t) (sizeof h + h.size);
}

/* Sends one message, with FD (>= 0) in SCM_RIGHTS. */
static int send_msg(struct vtseat *s, uint16_t opcode, const void *payload, uint16_t size, int fd) {
        unsigned char buf[sizeof(struct header) + 64];
        struct header h = { .opcode = opcode, .size = size };
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof h + size };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

        if (s->client_fd < 0 || size > sizeof buf - sizeof h)
                return -1;
        memcpy(buf, &h, sizeof h);
        if (size)
                memcpy(buf + sizeof h, payload, size);
        if (fd >= 0) {
                struct cmsghdr *c;

                memset(&control, 0, sizeof control);
                msg.msg_control = control.buf;
                msg.msg_controllen = sizeof control.buf;
                c = CMSG_FIRSTHDR(&msg);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof fd);
        }
        if (sendmsg(s->client_fd, &msg, MSG_NOSIGNAL) != (ssize_t) iov.iov_len) {
                fprintf(stderr, PROG ": seat: cannot write to the compositor: %s\n",
                        strerror(errno));
                return -1;
        }
        return 0;
}

static int send_error(struct vtseat *s, int err) {
        return send_msg(s, EV_ERROR, &err, sizeof err, -1);
}

int vtseat_path_kind(const char *path) {
        static const struct {
                const char *prefix;
                int kind;
        } kinds[] = {
                { "/dev/dri/card", VTSEAT_DRM },
                { "/dev/dri/renderD", VTSEAT_DRM },
                { "/dev/input/event", VTSEAT_EVDEV },
        };

        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
                size_t n = strlen(kinds[i].prefix), d;

                if (strncmp(path, kinds[i].prefix, n) != 0)
                        continue;
                d = strspn(path + n, "0123456789");
                if (d == 0 || d > 5 || path[n + d] != '\0')
                        return -1;
                return kinds[i].kind;
        }
        return -1;
}

/* Rule 1: opens PATH for reading and writing; returns the fd, or -errno. */
static int device_open(const char *path, int kind, struct stat *ret_st) {
        char self[64];
        struct stat st, st2;
        int pfd, fd, err;

        pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0)
                return -errno;
        if (fstat(pfd, &st) < 0) {
                err = -errno;
                (void) close(pfd);
                return err;
        }
        if (!S_ISCHR(st.st_mode) ||
            major(st.st_rdev) != (kind == VTSEAT_DRM ? XDEV_DRM_MAJOR : XDEV_INPUT_MAJOR)) {
                (void) close(pfd);
                return -ENODEV;
        }
        (void) snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
        fd = open(self, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        err = fd < 0 ? -errno : 0;
        (void) close(pfd);
        if (fd < 0)
                return err;
        if (fstat(fd, &st2) < 0 || st2.st_rdev != st.st_rdev || st2.st_ino != st.st_ino) {
                (void) close(fd);
                return -ENODEV;
        }
        *ret_st = st;
        return fd;
}

/* Takes away what D's fd gives: an input device is revoked for every copy
 * of the open file (the compositor's too), a DRM file loses master. The
 * kernel lets us drop and set master on a file we opened as master
 * (drm_master_check_perm: was master, and we are its opener), which the
 * compositor could not do on the file we passed it. */
static void device_pause(struct vtseat *s, struct vtseat_device *d) {
        int r;

        if (d->kind == VTSEAT_EVDEV) {
                r = xdev_evdev_revoke(d->fd);
                if (r < 0 && r != -ENODEV)
                        fprintf(stderr, PROG ": seat: tty%u: cannot revoke %s: %s\n", s->vt,
                                d->path, strerror(-r));
        } else if (xdev_drm_path_is_primary(d->path)) {
                r = xdev_drm_drop_master(d->fd);
                if (r < 0 && r != -EINVAL)
                        fprintf(stderr, PROG ": seat: tty%u: cannot drop DRM master of %s: %s\n",
                                s->vt, d->path, strerror(-r));
        }
}

static void device_free(struct vtseat *s, struct vtseat_device *d) {
        device_pause(s, d);
        (void) close(d->fd);
        memset(d, 0, sizeof *d);
        d->fd = -1;
}

static void drop_client(struct vtseat *s, const char *why) {
        if (s->client_fd < 0)
                return;
        fprintf(stderr, PROG ": seat: tty%u: compositor (pid %d) %s\n", s->vt, (int) s->client_pid,
                why);
        for (size_t i = 0; i < VTSEAT_MAX_DEVICES; i++)
                if (s->devices[i].id)
                        device_free(s, &s->devices[i]);
        (void) close(s->client_fd);
        s->client_fd = -1;
        s->client_pid = 0;
        s->opened = s->enabled = s->disabling = false;
        s->in_len = 0;
        s->n_known = 0;
}

static bool vt_in_front(const struct vtseat *s) {
        struct vt_stat st;

        return ioctl(s->vt_fd, VT_GETSTATE, &st) == 0 && st.v_active == s->vt;
}

/* Whether FILE (a path taken from the peer's maps, or /proc/PID/exe) holds
 * MARK. At most 64 MiB are read. */
static bool file_holds(const char *file, const char *mark) {
        static unsigned char buf[65536 + 64];
        size_t m = strlen(mark), keep = 0, total = 0;
        bool found = false;
        ssize_t n;
        int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        struct stat st;

        if (fd < 0)
                return false;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                (void) close(fd);
                return false;
        }
        while (!found && total < 64u << 20 && (n = read(fd, buf + keep, 65536)) > 0) {
                size_t have = keep + (size_t) n;

                total += (size_t) n;
                found = memmem(buf, have, mark, m) != NULL;
                keep = have < m - 1 ? have : m - 1;
                memmove(buf, buf + have - keep, keep);
        }
        (void) close(fd);
        return found;
}

/* Whether the peer's libseat wants replies to DISABLE_SEAT and
 * SWITCH_SESSION (0.9.0 and later). The protocol does not say: the library
 * mapped into the peer does. libseat 0.9.0's logind backend logs "Device
 * paused (%s)", 0.7.0's and 0.8.0's "DRM device paused: %s". A libseat linked
 * into the program itself is looked for in its executable. Unknown: the
 * current protocol. */
static bool peer_wants_acks(pid_t pid) {
        char maps[64], line[1024], file[1024] = "";
        FILE *f;
        bool found = false;

        (void) snprintf(maps, sizeof maps, "/proc/%d/maps", (int) pid);
        f = fopen(maps, "re");
        while (f && !found && fgets(line, sizeof line, f)) {
                char *p = strchr(line, '/');
                char *nl = strchr(line, '\n');

                if (nl)
                        *nl = '\0';
                if (p && strstr(p, "/libseat.so") && !strstr(p, " (deleted)")) {
                        (void) snprintf(file, sizeof file, "%s", p);
                        found = true;
                }
        }
        if (f)
                (void) fclose(f);
        if (!found)
                (void) snprintf(file, sizeof file, "/proc/%d/exe", (int) pid);
        if (file_holds(file, "Device paused (%s)"))
                return true;
        if (file_holds(file, "DRM device paused: %s"))
                return false;
        fprintf(stderr,
                PROG
                ": seat: cannot tell the version of libseat in %s: taking it for 0.9 or later\n",
                file);
        return true;
}

int vtseat_listen(struct vtseat *s, int vt_fd, unsigned vt) {
        const char *dir = getenv("XDG_RUNTIME_DIR");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;
        mode_t old;
        int r;

        memset(s->devices, 0, sizeof s->devices);
        for (size_t i = 0; i < VTSEAT_MAX_DEVICES; i++)
                s->devices[i].fd = -1;
        s->dir_fd = s->listen_fd = s->client_fd = -1;
        s->vt_fd = vt_fd;
        s->vt = vt;
        s->opened = s->enabled = s->disabling = false;
        s->in_len = 0;
        s->n_known = 0;
        if (!dir || dir[0] != '/') {
                fprintf(stderr,
                        PROG
                        ": XDG_RUNTIME_DIR is not set to an absolute path: it is "
                        "where the seat's socket goes (or use --no-seat)\n");
                return -1;
        }
        s->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s->dir_fd < 0 || fstat(s->dir_fd, &st) < 0) {
                fprintf(stderr, PROG ": XDG_RUNTIME_DIR %s: %s\n", dir, strerror(errno));
                return -1;
        }
        if (st.st_uid != getuid() || (st.st_mode & 0022)) {
                fprintf(stderr,
                        PROG
                        ": XDG_RUNTIME_DIR %s is not ours alone (owner %u, mode %04o): "
                        "refusing to put the seat's socket there\n",
                        dir, (unsigned) st.st_uid, (unsigned) st.st_mode & 07777);
                return -1;
        }
        (void) snprintf(s->name, sizeof s->name, "xdevices-seat-tty%u", vt);
        if ((size_t) snprintf(s->path, sizeof s->path, "%s/%s", dir, s->name) >= sizeof s->path) {
                fprintf(stderr, PROG ": XDG_RUNTIME_DIR is too long\n");
                return -1;
        }
        /* a socket left by a wrapper killed on this VT; nothing else */
        if (fstatat(s->dir_fd, s->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode))
                (void) unlinkat(s->dir_fd, s->name, 0);
        /* bound through the checked directory's fd, not its name again */
        (void) snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", s->dir_fd, s->name);
        s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s->listen_fd < 0) {
                fprintf(stderr, PROG ": socket: %s\n", strerror(errno));
                return -1;
        }
        old = umask(0077);
        r = bind(s->listen_fd, (struct sockaddr *) &sa, sizeof sa);
        (void) umask(old);
        if (r < 0 || listen(s->listen_fd, 4) < 0) {
                fprintf(stderr, PROG ": seat socket %s: %s\n", s->path, strerror(errno));
                (void) close(s->listen_fd);
                s->listen_fd = -1;
                return -1;
        }
        return 0;
}

void vtseat_accept(struct vtseat *s) {
        struct ucred cred;
        socklen_t len = sizeof cred;
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0)
                return;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid()) {
                fprintf(stderr, PROG ": seat: tty%u: refused a connection of uid %d\n", s->vt,
                        len == sizeof cred ? (int) cred.uid : -1);
                (void) close(fd);
                return;
        }
        if (s->client_fd >= 0) {
                fprintf(stderr,
                        PROG ": seat: tty%u: refused pid %d: the seat serves pid %d already\n",
                        s->vt, (int) cred.pid, (int) s->client_pid);
                (void) close(fd);
                return;
        }
        s->client_fd = fd;
        s->client_pid = cred.pid;
        s->acks = peer_wants_acks(cred.pid);
        s->in_len = 0;
        fprintf(stderr, PROG ": seat: tty%u: compositor pid %d connected (libseat %s)\n", s->vt,
                (int) cred.pid, s->acks ? ">= 0.9" : "< 0.9");
}

static void enable_now(struct vtseat *s) {
        for (size_t i = 0; i < VTSEAT_MAX_DEVICES; i++) {
                struct vtseat_device *d = &s->devices[i];

                int r = d->id && xdev_drm_path_is_primary(d->path) ? xdev_drm_set_master(d->fd) : 0;

                if (r < 0)
                        fprintf(stderr, PROG ": seat: tty%u: cannot set DRM master of %s: %s\n",
                                s->vt, d->path, strerror(-r));
        }
        if (send_msg(s, EV_ENABLE_SEAT, NULL, 0, -1) < 0) {
                drop_client(s, "is gone");
                return;
        }
        s->enabled = true;
        s->disabling = false;
}

static void remember(struct vtseat *s, const char *path) {
        for (size_t i = 0; i < s->n_known; i++)
                if (strcmp(s->known[i], path) == 0)
                        return;
        /* full: the oldest goes */
        if (s->n_known == VTSEAT_MAX_DEVICES) {
                memmove(s->known[0], s->known[1], sizeof s->known[0] * (VTSEAT_MAX_DEVICES - 1));
                s->n_known--;
        }
        (void) snprintf(s->known[s->n_known++], sizeof s->known[0], "%s", path);
}

static int open_device(struct vtseat *s, const char *path) {
        struct vtseat_device *d = NULL;
        struct stat st = { 0 };
        int kind = vtseat_path_kind(path), fd, id = 1;

        if (kind < 0) {
                fprintf(stderr, PROG ": seat: tty%u: refused to open %s: not a DRM or evdev node\n",
                        s->vt, path);
                return send_error(s, ENOENT);
        }
        for (size_t i = 0; i < VTSEAT_MAX_DEVICES; i++) {
                struct vtseat_device *o = &s->devices[i];

                if (!o->id) {
                        if (!d)
                                d = o;
                        continue;
                }
                if (strcmp(o->path, path) == 0) {
                        o->refs++;
                        return send_msg(s, EV(REQ_OPEN_DEVICE), &o->id, sizeof o->id, o->fd);
                }
                if (o->id >= id)
                        id = o->id + 1;
        }
        if (!d)
                return send_error(s, EMFILE);
        fd = device_open(path, kind, &st);
        if (fd < 0) {
                fprintf(stderr, PROG ": seat: tty%u: cannot open %s: %s\n", s->vt, path,
                        strerror(-fd));
                return send_error(s, -fd);
        }
        d->id = id;
        d->fd = fd;
        d->refs = 1;
        d->kind = kind;
        (void) snprintf(d->path, sizeof d->path, "%s", path);
        remember(s, path);
        /* as seatd does: master now if the card has none (at the open,
         * the kernel made this file master already if so) */
        if (xdev_drm_path_is_primary(path))
                (void) xdev_drm_set_master(fd);
        return send_msg(s, EV(REQ_OPEN_DEVICE), &d->id, sizeof d->id, d->fd);
}

static int close_device(struct vtseat *s, int id) {
        for (size_t i = 0; i < VTSEAT_MAX_DEVICES; i++) {
                struct vtseat_device *d = &s->devices[i];

                if (!d->id || d->id != id)
                        continue;
                if (--d->refs == 0)
                        device_free(s, d);
                return send_msg(s, EV(REQ_CLOSE_DEVICE), NULL, 0, -1);
        }
        return send_error(s, EBADF);
}

/* Answers REQ; -1 drops the client. */
static int handle(struct vtseat *s, const struct vtseat_request *req) {
        static const char seat_name[] = SEAT_NAME;
        unsigned char opened[sizeof(uint16_t) + sizeof seat_name];
        uint16_t n = sizeof seat_name;

        if (!s->opened && req->opcode != REQ_OPEN_SEAT && req->opcode != REQ_PING)
                return -1;
        switch (req->opcode) {
        case REQ_OPEN_SEAT:
                if (s->opened)
                        return -1;
                memcpy(opened, &n, sizeof n);
                memcpy(opened + sizeof n, seat_name, sizeof seat_name);
                if (send_msg(s, EV(REQ_OPEN_SEAT), opened, sizeof opened, -1) < 0)
                        return -1;
                s->opened = true;
                /* the login's own VT in front: the login was granted its devices */
                if (vt_in_front(s))
                        enable_now(s);
                return 0;
        case REQ_CLOSE_SEAT:
                for (size_t i = 0; i < VTSEAT_MAX_DEVICES; i++)
                        if (s->devices[i].id)
                                device_free(s, &s->devices[i]);
                s->opened = s->enabled = s->disabling = false;
                return send_msg(s, EV(REQ_CLOSE_SEAT), NULL, 0, -1);
        case REQ_OPEN_DEVICE:
                if (!s->enabled)
                        return send_error(s, EPERM);
                return open_device(s, req->path);
        case REQ_CLOSE_DEVICE:
                return close_device(s, req->value);
        case REQ_DISABLE_SEAT:
                if (!s->disabling)
                        return s->acks ? send_error(s, EBUSY) : 0;
                s->disabling = false;
                return s->acks ? send_msg(s, EV_SEAT_DISABLED, NULL, 0, -1) : 0;
        case REQ_SWITCH_SESSION:
                /* the protocol's session is an int: a VT number here */
                if (req->value < 1 || req->value > XDEV_VT_MAX || !s->enabled) {
                        fprintf(stderr, PROG ": seat: tty%u: refused a switch to VT %d\n", s->vt,
                                req->value);
                        return s->acks ? send_error(s, EINVAL) : 0;
                }
                if (s->acks && send_msg(s, EV_SESSION_SWITCHED, NULL, 0, -1) < 0)
                        return -1;
                /* the kernel asks us (the release signal) before it switches */
                if ((unsigned) req->value != s->vt && ioctl(s->vt_fd, VT_ACTIVATE, req->value) < 0)
                        fprintf(stderr, PROG ": seat: tty%u: cannot switch to VT %d: %s\n", s->vt,
                                req->value, strerror(errno));
                return 0;
        case REQ_PING:
                return send_msg(s, EV(REQ_PING), NULL, 0, -1);
        }
        return -1;
}

void vtseat_client_input(struct vtseat *s) {
        ssize_t n;

        if (s->client_fd < 0)
                return;
        n = recv(s->client_fd, s->in + s->in_len, sizeof s->in - s->in_len, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                drop_client(s, "closed the seat's connection");
                return;
        }
        if (n < 0)
                return;
        s->in_len += (size_t) n;
        for (;;) {
                struct vtseat_request req;
                ssize_t k = vtseat_parse(s->in, s->in_len, &req);

                if (k == 0)
                        break;
                if (k < 0) {
                        drop_client(s, "sent a malformed request: dropped");
                        return;
                }
                memmove(s->in, s->in + k, s->in_len - (size_t) k);
                s->in_len -= (size_t) k;
                if (handle(s, &req) < 0) {
                        drop_client(s, "broke the protocol or the connection: dropped");
                        return;
                }
        }
}

bool vtseat_active(const struct vtseat *s) {
        return s->client_fd >= 0 && s->opened;
}

void vtseat_disable(struct vtseat *s, int timeout_ms) {
        double t0 = now_ms(), left;

        if (!vtseat_active(s) || !s->enabled)
                return;
        s->enabled = false;
        s->disabling = true;
        if (send_msg(s, EV(REQ_DISABLE_SEAT), NULL, 0, -1) < 0) {
                drop_client(s, "is gone");
                return;
        }
        while (s->disabling && s->client_fd >= 0 && (left = t0 + timeout_ms - now_ms()) > 0) {
                struct pollfd p = { .fd = s->client_fd, .events = POLLIN };

                if (poll(&p, 1, (int) left + 1) > 0)
                        vtseat_client_input(s);
        }
        if (s->client_fd >= 0 && s->disabling)
                fprintf(stderr,
                        PROG
                        ": seat: tty%u: the compositor did not ack the disable in %d ms: "
                        "revoking its devices anyway\n",
                        s->vt, timeout_ms);
        else
                fprintf(stderr, PROG ": seat: tty%u: seat disabled, acked in %.1f ms\n", s->vt,
                        now_ms() - t0);
        for (size_t i = 0; i < VTSEAT_MAX_DEVICES; i++)
                if (s->devices[i].id)
                        device_pause(s, &s->devices[i]);
}

/* Whether we may open PATH again: readable and writable for us
 * (xdevicesd's grant is an ACL entry on it). A node gone (unplugged) is
 * not waited for. */
static bool node_granted(const char *path) {
        char self[64];
        struct stat st;
        bool ok;
        int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return errno == ENOENT;
        (void) snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        ok = fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && access(self, R_OK | W_OK) == 0;
        (void) close(fd);
        return ok;
}

static bool all_granted(const struct vtseat *s) {
        for (size_t i = 0; i < s->n_known; i++)
                if (!node_granted(s->known[i]))
                        return false;
        return true;
}

void vtseat_enable(struct vtseat *s, int timeout_ms) {
        double t0 = now_ms(), left;
        int in = -1;
        bool granted;

        if (!vtseat_active(s) || s->enabled)
                return;
        granted = all_granted(s);
        if (!granted) {
                /* the grant changes the nodes' ACLs: IN_ATTRIB; a poll every
                 * 50 ms besides, for a node replaced under its name */
                in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
                for (size_t i = 0; in >= 0 && i < s->n_known; i++)
                        (void) inotify_add_watch(in, s->known[i], IN_ATTRIB | IN_DONT_FOLLOW);
        }
        while (!granted && s->client_fd >= 0 && (left = t0 + timeout_ms - now_ms()) > 0) {
                struct pollfd p[2] = { { .fd = in, .events = POLLIN },
                                       { .fd = s->client_fd, .events = POLLIN } };
                char buf[4096];

                if (poll(p, 2, left < 50 ? (int) left + 1 : 50) > 0) {
                        if (p[0].revents & POLLIN)
                                while (read(in, buf, sizeof buf) > 0)
                                        ;
                        if (p[1].revents)
                                vtseat_client_input(s);
                }
                granted = all_granted(s);
        }
        if (in >= 0)
                (void) close(in);
        if (s->client_fd < 0)
                return;
        if (granted)
                fprintf(stderr,
                        PROG
                        ": seat: tty%u: the %zu device(s) held %.1f ms after the switch back\n",
                        s->vt, s->n_known, now_ms() - t0);
        else
                fprintf(stderr,
                        PROG
                        ": seat: tty%u: the devices were not granted in %d ms: enabling "
                        "the seat anyway\n",
                        s->vt, timeout_ms);
        enable_now(s);
        if (s->client_fd >= 0)
                fprintf(stderr, PROG ": seat: tty%u: seat enabled\n", s->vt);
}

void vtseat_close(struct vtseat *s) {
        drop_client(s, "left: seat closed");
        if (s->listen_fd >= 0) {
                (void) close(s->listen_fd);
                s->listen_fd = -1;
                (void) unlinkat(s->dir_fd, s->name, 0);
        }
        if (s->dir_fd >= 0) {
                (void) close(s->dir_fd);
                s->dir_fd = -1;
        }
}
