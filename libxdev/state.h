/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state: live sessions, the holder of the shared devices, and the ledger
 * of every node we changed with what it was before. Text format, parsed
 * strictly; stored in XDEV_STATEDIR under an flock. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "conf.h"

#define XDEV_SESSIONS_MAX 256
#define XDEV_NODES_MAX 16384
#define XDEV_ACL_TEXT_MAX 2048
#define XDEV_STATE_FILE_MAX (16 * 1024 * 1024)
#define XDEV_STATE_LINE_MAX 4096
#define XDEV_LINGER_RECS_MAX 32

struct xdev_session {
        uid_t uid;
        char user[XDEV_NAME_MAX + 1];
        char service[XDEV_NAME_MAX + 1];
        unsigned vt;
        pid_t pid;      /* the session leader: the process that opened it */
        uint64_t start; /* its start time, so a reused pid is not taken for it */
        int64_t since;  /* wall clock, for status only */
};

/* A logout's sweep still in its grace period, outside the lock
 * (doc/DESIGN.md §3.5.7): the sweeper (pid and start time) SIGKILLs the
 * processes of UID still there at UNTIL (CLOCK_MONOTONIC ms). A new session
 * of UID waits for it; a sweep whose sweeper died is finished by the next
 * transaction. */
struct xdev_linger_rec {
        uid_t uid;
        pid_t pid;
        uint64_t start;
        uint64_t until;
};

/* One node we changed (or are about to). Identity (path, fs dev, inode,
 * rdev) and its original owner/group/mode/ACL are recorded before the first
 * change; grantee says who should have it now. */
struct xdev_node {
        char *path;
        enum xdev_class class;
        dev_t fsdev;
        ino_t ino;
        dev_t rdev;
        uid_t uid;
        gid_t gid;
        mode_t mode;
        char *acl;    /* access ACL text, NULL when the fs has none */
        bool granted; /* grantee/perm/gmode below are meaningful */
        uid_t grantee;
        enum xdev_access perm;
        enum xdev_grant_mode gmode;
        bool dirty; /* in memory only: must be converged */
        bool lost;  /* in memory only: found by its mark, granted by a
                     * state that was lost (grantee: to whom) */
};

/* The mark a grant leaves on its node (doc/DESIGN.md §3.6): an extended
 * attribute in the trusted namespace, which only CAP_SYS_ADMIN reads or
 * changes, holding the node's original as the ledger records it and the
 * grantee. It lives and dies with the inode, so a ledger lost with
 * /run/xdevices leaves it behind on every node still granted. */
#define XDEV_MARK_XATTR "trusted.xdevices"
#define XDEV_MARK_MAX (XDEV_ACL_TEXT_MAX + 160)

struct xdev_mark {
        dev_t rdev; /* the node it was set on: a copy elsewhere is refused */
        uid_t uid;
        gid_t gid;
        mode_t mode;
        bool has_acl;
        char acl[XDEV_ACL_TEXT_MAX + 1];
        uid_t grantee;
};

/* The mark of granted node N into BUF (SIZE >= XDEV_MARK_MAX): returns its
 * length, or -EINVAL when N is not granted. */
int xdev_mark_format(const struct xdev_node *n, char *buf, size_t size);
/* Strict parser of the mark: exactly what xdev_mark_format writes. On
 * failure (-EINVAL) *RET is untouched. */
int xdev_mark_parse(const char *buf, size_t len, struct xdev_mark *ret);

struct xdev_state {
        bool has_holder;
        uid_t holder;
        /* Set while xdevicesd runs (and kept if it dies without stopping):
         * the shared devices follow the VT in front. */
        bool follow;
        pid_t follow_pid; /* the daemon, for status only */
        uint64_t follow_start;
        struct xdev_linger_rec sweeps[XDEV_LINGER_RECS_MAX];
        size_t n_sweeps;
        struct xdev_session *sessions;
        size_t n_sessions;
        struct xdev_node *nodes;
        size_t n_nodes;
        size_t cap_nodes;
        /* path -> node index (+1), open addressing; rebuilt when stale, so
         * lookups stay O(1) with thousands of nodes */
        size_t *index;
        size_t index_cap;
        bool index_valid;
};

void xdev_state_free(struct xdev_state *state);

/* The text format (/run/xdevices/state), one record a line, in this order:
 *
 *   xdevices-state 1
 *   holder UID | holder -
 *   [follow pid=PID start=TICKS]
 *   sweep uid=UID pid=PID start=TICKS until=TICKS          (0..32)
 *   session uid=UID user=NAME service=NAME vt=N pid=PID start=TICKS since=SECS
 *   node path=PATH class=CLASS fsdev=M:m ino=INO rdev=M:m uid=UID gid=GID
 *        mode=OCTAL acl=ACL|- grant=UID:PERM:MODE|-        (one line)
 *
 * Keys come in exactly this order; each value is a decimal (mode: octal)
 * without sign or padding, in its type's range. PATH is /dev/... under
 * 256 bytes of [A-Za-z0-9_.+:/-], each component a plain name (no empty,
 * "." or ".."); ACL libacl's short text form, of [a-z0-9:,-]; CLASS,
 * PERM and MODE the words of conf.c (class "vt", "drm", ...; "r" or
 * "rw"; "acl" or "chown"). Sessions are unique by pid and start,
 * nodes by path, sweeps by uid. At most XDEV_STATE_LINE_MAX bytes a line
 * and XDEV_STATE_FILE_MAX a file, no NUL. Anything else refuses the whole
 * file. */

/* Strict parser of the text format; on failure *STATE is untouched and
 * nothing stays allocated. ret_line gets the failing line number. */
int xdev_state_parse(struct xdev_state *state, const char *buf, size_t len, unsigned *ret_line);
int xdev_state_format(const struct xdev_state *state, FILE *f);

int xdev_state_add_session(struct xdev_state *state, const struct xdev_session *s);
void xdev_state_remove_session(struct xdev_state *state, size_t index);
ssize_t xdev_state_find_session(const struct xdev_state *state, pid_t pid, uint64_t start);
bool xdev_state_uid_has_session(const struct xdev_state *state, uid_t uid);

/* The pending sweep of UID, or -1. */
ssize_t xdev_state_find_sweep(const struct xdev_state *state, uid_t uid);
/* Records (or moves to REC's sweeper) the sweep of REC->uid; -E2BIG when
 * XDEV_LINGER_RECS_MAX are pending. */
int xdev_state_set_sweep(struct xdev_state *state, const struct xdev_linger_rec *rec);
void xdev_state_remove_sweep(struct xdev_state *state, size_t index);

/* Adds a node record (takes copies of path and acl). */
int xdev_state_add_node(struct xdev_state *state, const struct xdev_node *n);
ssize_t xdev_state_find_node(const struct xdev_state *state, const char *path);
void xdev_state_remove_node(struct xdev_state *state, size_t index);

/* Who holds the shared devices (doc/DESIGN.md §3.4); the
 * sessions in STATE must all be live (reaped before). With STATE->follow:
 * the owner of the latest session on ACTIVE_VT, else nobody. Without: the
 * holder keeps them while it has a session; else the owner of the latest
 * session on ACTIVE_VT, else nobody. */
void xdev_state_elect(struct xdev_state *state, int active_vt);

/* The locked state directory: created 0700 root if missing, refused when it
 * is anything else. LOCK_FD holds an exclusive flock until xdev_store_close. */
struct xdev_store {
        int dirfd;
        int lockfd;
};

int xdev_store_open(struct xdev_store *store, const char *dir);
/* Reads the state: 0, or 1 when there is no state file (an empty state:
 * the first transaction since boot, or a state that was lost), or -errno
 * (-EBADMSG: damaged at *RET_LINE). */
int xdev_store_load(struct xdev_store *store, struct xdev_state *state, unsigned *ret_line);
int xdev_store_save(struct xdev_store *store, const struct xdev_state *state);
void xdev_store_close(struct xdev_store *store);
