/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The seat xdevices-vt-run serves its command: libseat's seatd protocol on
 * a socket in $XDG_RUNTIME_DIR, for one client of the user's own uid. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The most devices one client may hold, as seatd has it. */
#define VTSEAT_MAX_DEVICES 128
/* The longest device path of a request, NUL included, as seatd has it. */
#define VTSEAT_MAX_PATH 256

struct vtseat_device {
        int id;   /* the client's handle; 0: a free slot */
        int fd;   /* our copy of the open file handed out */
        int refs; /* opens of the same path by the client */
        int kind; /* VTSEAT_DRM or VTSEAT_EVDEV */
        char path[VTSEAT_MAX_PATH];
};

enum { VTSEAT_DRM = 1, VTSEAT_EVDEV = 2 };

struct vtseat {
        int dir_fd;    /* $XDG_RUNTIME_DIR, checked */
        int listen_fd; /* -1: not serving */
        int client_fd; /* -1: no client */
        pid_t client_pid;
        bool acks;      /* the client is libseat >= 0.9: replies to disable and switch */
        bool opened;    /* the client opened the seat */
        bool enabled;   /* ENABLE_SEAT sent, no DISABLE_SEAT since */
        bool disabling; /* DISABLE_SEAT sent, the client's ack not yet in */
        int vt_fd;      /* the VT, for VT_ACTIVATE */
        unsigned vt;    /* its number, 1 to XDEV_VT_MAX (vt.h) */
        size_t in_len;
        unsigned char in[2048];
        struct vtseat_device devices[VTSEAT_MAX_DEVICES];
        /* every node the client opened since it connected, closed or not:
         * what it reopens after a switch back, so what the grant must
         * cover before the seat is enabled again */
        char known[VTSEAT_MAX_DEVICES][VTSEAT_MAX_PATH];
        size_t n_known;
        char name[64];  /* the socket's name in dir_fd */
        char path[512]; /* its path, for SEATD_SOCK */
};

/* Parsed request, or what was wrong with the bytes. */
struct vtseat_request {
        uint16_t opcode;
        int value;                  /* device id or session */
        char path[VTSEAT_MAX_PATH]; /* OPEN_DEVICE */
};

/* Parses the first request of BUF (LEN bytes). Returns the bytes it took
 * (> 0), 0 when the request is not complete yet, or -EBADMSG for bytes that
 * are no request (unknown opcode, sizes that do not match, a path too long
 * or not NUL-terminated). */
ssize_t vtseat_parse(const unsigned char *buf, size_t len, struct vtseat_request *req);

/* The kind of device PATH names, if it is one the seat serves (exactly
 * /dev/dri/cardN, /dev/dri/renderDN or /dev/input/eventN, N of 1 to 5
 * digits): VTSEAT_DRM, VTSEAT_EVDEV, or -1. */
int vtseat_path_kind(const char *path);

/* The socket in $XDG_RUNTIME_DIR (checked: an absolute path to a directory
 * of ours, not group- or world-writable, no symlink at its end) named after
 * VT, listening. Returns 0, or -1 with a message printed. */
int vtseat_listen(struct vtseat *s, int vt_fd, unsigned vt);

/* Accepts a connection: served when it is the only one and its peer has our
 * uid, else closed with a log line. */
void vtseat_accept(struct vtseat *s);

/* Reads and answers what the client sent; on a protocol error or a hangup
 * the client is dropped (its devices revoked and closed). */
void vtseat_client_input(struct vtseat *s);

/* Whether a client has the seat open (and so a switch must wait for it). */
bool vtseat_active(const struct vtseat *s);

/* A switch away: disables the seat, waits at most TIMEOUT_MS for the
 * client's ack, then revokes the input devices and drops DRM master. */
void vtseat_disable(struct vtseat *s, int timeout_ms);

/* A switch back: waits at most TIMEOUT_MS until the user may open every
 * device the client holds (the grant of xdevicesd lands after the switch),
 * takes DRM master back and enables the seat. */
void vtseat_enable(struct vtseat *s, int timeout_ms);

/* Drops the client and removes the socket. */
void vtseat_close(struct vtseat *s);
