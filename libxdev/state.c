/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state: sessions, holder and ledger; strict text codec; locked store.
 *
 * Rules this file keeps:
 *  1. The state directory and its files are opened without following links
 *     and refused unless root-owned, of the right type and not shared.
 *  2. The state is replaced atomically (temp file, fsync, rename), so a
 *     crash leaves either the old or the new state, never a mix.
 *  3. The parser accepts exactly what the formatter writes; any other input
 *     fails as a whole and leaves the caller's state untouched. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "state.h"
#include "tty.h"

#define STATE_MAGIC "xdevices-state 1"

static void node_free(struct xdev_node *n) {
        free(n->path);
        free(n->acl);
        n->path = n->acl = NULL;
}

void xdev_state_free(struct xdev_state *state) {
        if (!state)
                return;
        for (size_t i = 0; i < state->n_nodes; i++)
                node_free(&state->nodes[i]);
        free(state->nodes);
        free(state->index);
        free(state->sessions);
        *state = (struct xdev_state) { 0 };
}

int xdev_state_add_session(struct xdev_state *state, const struct xdev_session *s) {
        struct xdev_session *p;

        if (state->n_sessions >= XDEV_SESSIONS_MAX)
                return -E2BIG;
        p = realloc(state->sessions, (state->n_sessions + 1) * sizeof *p);
        if (!p)
                return -ENOMEM;
        state->sessions = p;
        p[state->n_sessions++] = *s;
        return 0;
}

void xdev_state_remove_session(struct xdev_state *state, size_t index) {
        if (index >= state->n_sessions)
                return;
        memmove(&state->sessions[index], &state->sessions[index + 1],
                (state->n_sessions - index - 1) * sizeof state->sessions[0]);
        state->n_sessions--;
}

ssize_t xdev_state_find_session(const struct xdev_state *state, pid_t pid, uint64_t start) {
        for (size_t i = 0; i < state->n_sessions; i++)
                if (state->sessions[i].pid == pid && state->sessions[i].start == start)
                        return (ssize_t) i;
        return -1;
}

bool xdev_state_uid_has_session(const struct xdev_state *state, uid_t uid) {
        for (size_t i = 0; i < state->n_sessions; i++)
                if (state->sessions[i].uid == uid)
                        return true;
        return false;
}

ssize_t xdev_state_find_sweep(const struct xdev_state *state, uid_t uid) {
        for (size_t i = 0; i < state->n_sweeps; i++)
                if (state->sweeps[i].uid == uid)
                        return (ssize_t) i;
        return -1;
}

int xdev_state_set_sweep(struct xdev_state *state, const struct xdev_linger_rec *rec) {
        ssize_t i = xdev_state_find_sweep(state, rec->uid);

        if (i >= 0) {
                state->sweeps[i] = *rec;
                return 0;
        }
        if (state->n_sweeps >= XDEV_LINGER_RECS_MAX)
                return -E2BIG;
        state->sweeps[state->n_sweeps++] = *rec;
        return 0;
}

void xdev_state_remove_sweep(struct xdev_state *state, size_t index) {
        if (index >= state->n_sweeps)
                return;
        state->sweeps[index] = state->sweeps[--state->n_sweeps];
}

static size_t path_hash(const char *p) {
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (; *p; p++)
                h = (h ^ (unsigned char) *p) * 1099511628211ULL;
        return (size_t) h;
}

static void index_put(struct xdev_state *state, size_t i) {
        size_t mask = state->index_cap - 1;
        for (size_t slot = path_hash(state->nodes[i].path) & mask;; slot = (slot + 1) & mask)
                if (state->index[slot] == 0) {
                        state->index[slot] = i + 1;
                        return;
                }
}

static void index_rebuild(struct xdev_state *state) {
        size_t cap = 64;

        while (cap < 2 * state->n_nodes + 2)
                cap *= 2;
        state->index_valid = false;
        if (cap != state->index_cap) {
                size_t *p = realloc(state->index, cap * sizeof *p);
                if (!p)
                        return; /* lookups fall back to a linear search */
                state->index = p;
                state->index_cap = cap;
        }
        memset(state->index, 0, state->index_cap * sizeof *state->index);
        for (size_t i = 0; i < state->n_nodes; i++)
                index_put(state, i);
        state->index_valid = true;
}

int xdev_state_add_node(struct xdev_state *state, const struct xdev_node *n) {
        struct xdev_node copy = *n;

        if (state->n_nodes >= XDEV_NODES_MAX)
                return -E2BIG;
        if (state->n_nodes == state->cap_nodes) {
                size_t cap = state->cap_nodes ? state->cap_nodes * 2 : 16;
                struct xdev_node *p = realloc(state->nodes, cap * sizeof *p);
                if (!p)
                        return -ENOMEM;
                state->nodes = p;
                state->cap_nodes = cap;
        }
        copy.path = strdup(n->path);
        copy.acl = n->acl ? strdup(n->acl) : NULL;
        if (!copy.path || (n->acl && !copy.acl)) {
                node_free(&copy);
                return -ENOMEM;
        }
        state->nodes[state->n_nodes++] = copy;
        if (state->index_valid && state->index_cap >= 2 * state->n_nodes + 2)
                index_put(state, state->n_nodes - 1);
        else
                index_rebuild(state);
        return 0;
}

ssize_t xdev_state_find_node(const struct xdev_state *state, const char *path) {
        if (state->index_valid) {
                size_t mask = state->index_cap - 1;
                for (size_t slot = path_hash(path) & mask; state->index[slot];
                     slot = (slot + 1) & mask)
                        if (strcmp(state->nodes[state->index[slot] - 1].path, path) == 0)
                                return (ssize_t) (state->index[slot] - 1);
                return -1;
        }
        for (size_t i = 0; i < state->n_nodes; i++)
                if (strcmp(state->nodes[i].path, path) == 0)
                        return (ssize_t) i;
        return -1;
}

void xdev_state_remove_node(struct xdev_state *state, size_t index) {
        if (index >= state->n_nodes)
                return;
        node_free(&state->nodes[index]);
        memmove(&state->nodes[index], &state->nodes[index + 1],
                (state->n_nodes - index - 1) * sizeof state->nodes[0]);
        state->n_nodes--;
        state->index_valid = false;
}

void xdev_state_elect(struct xdev_state *state, int active_vt) {
        XDEV_ASSERT(state);
        if (!state->follow && state->has_holder && xdev_state_uid_has_session(state, state->holder))
                return;
        state->has_holder = false;
        if (active_vt <= 0)
                return;
        for (size_t i = state->n_sessions; i-- > 0;)
                if (state->sessions[i].vt == (unsigned) active_vt) {
                        state->has_holder = true;
                        state->holder = state->sessions[i].uid;
                        return;
                }
}

/* ---- codec ---- */

/* Takes the next space-separated token, which must be "KEY=...". */
static const char *take(char **cursor, const char *key) {
        char *tok = *cursor, *sp;
        size_t kl = strlen(key);

        if (!tok)
                return NULL;
        sp = strchr(tok, ' ');
        if (sp) {
                *sp = '\0';
                *cursor = sp + 1;
        } else
                *cursor = NULL;
        if (strncmp(tok, key, kl) != 0 || tok[kl] != '=')
                return NULL;
        return tok + kl + 1;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *ret) {
        return s ? xdev_parse_uint(s, max, ret) : -EINVAL;
}

/* The next field, KEY=N with MIN <= N <= MAX, into *RET. */
static int take_u64(char **line, const char *key, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v;

        if (parse_u64(take(line, key), max, &v) < 0 || v < min)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* The next field, KEY=ID, a uid or gid (not -1). */
static int take_id(char **line, const char *key, uint32_t *ret) {
        uint64_t v;

        if (take_u64(line, key, 0, UINT32_MAX - 1, &v) < 0)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

/* The next field, KEY=PID (1 or more). */
static int take_pid(char **line, const char *key, pid_t *ret) {
        uint64_t v;

        if (take_u64(line, key, 1, INT32_MAX, &v) < 0)
                return -EINVAL;
        *ret = (pid_t) v;
        return 0;
}

/* The next field, KEY=NAME, a portable name, into BUF (XDEV_NAME_MAX + 1). */
static int take_name(char **line, const char *key, char *buf) {
        const char *t = take(line, key);

        if (!xdev_name_is_valid(t, XDEV_NAME_MAX))
                return -EINVAL;
        strcpy(buf, t);
        return 0;
}

static int parse_devnum(const char *s, dev_t *ret) {
        char buf[32];
        const char *colon;
        uint64_t maj, min;

        if (!s || !(colon = strchr(s, ':')) || (size_t) (colon - s) >= sizeof buf)
                return -EINVAL;
        memcpy(buf, s, (size_t) (colon - s));
        buf[colon - s] = '\0';
        if (xdev_parse_uint(buf, 0xfffff, &maj) < 0 ||
            xdev_parse_uint(colon + 1, 0xfffff, &min) < 0)
                return -EINVAL;
        *ret = makedev((unsigned) maj, (unsigned) min);
        return 0;
}

static int parse_octal_mode(const char *s, mode_t *ret) {
        unsigned long v = 0;

        /* no leading zero: a character device's mode never has one, and one
         * spelling per value */
        if (!s || !*s || *s == '0' || strlen(s) > 7)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '7')
                        return -EINVAL;
                v = v * 8 + (unsigned long) (*p - '0');
        }
        if (!S_ISCHR(v))
                return -EINVAL;
        *ret = (mode_t) v;
        return 0;
}

static bool acl_text_is_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > XDEV_ACL_TEXT_MAX)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == ':' ||
                      *p == ',' || *p == '-'))
                        return false;
        return true;
}

/* What a node is put back to: uid=, gid=, mode= (a character device's)
 * and acl= ("-": none; else its text, *RET_ACL, NULL for none). */
static int take_original(char **line, uid_t *uid, gid_t *gid, mode_t *mode, const char **ret_acl) {
        const char *t;

        if (take_id(line, "uid", uid) < 0 || take_id(line, "gid", gid) < 0 ||
            parse_octal_mode(take(line, "mode"), mode) < 0)
                return -EINVAL;
        t = take(line, "acl");
        if (!t || (strcmp(t, "-") != 0 && !acl_text_is_valid(t)))
                return -EINVAL;
        *ret_acl = strcmp(t, "-") == 0 ? NULL : t;
        return 0;
}

static int parse_session(char *line, struct xdev_session *s) {
        uint64_t vt, since;

        *s = (struct xdev_session) { 0 };
        if (take_id(&line, "uid", &s->uid) < 0 || take_name(&line, "user", s->user) < 0 ||
            take_name(&line, "service", s->service) < 0 ||
            take_u64(&line, "vt", 1, XDEV_VT_MAX, &vt) < 0 || take_pid(&line, "pid", &s->pid) < 0 ||
            take_u64(&line, "start", 0, UINT64_MAX, &s->start) < 0 ||
            take_u64(&line, "since", 0, INT64_MAX, &since) < 0)
                return -EINVAL;
        s->vt = (unsigned) vt;
        s->since = (int64_t) since;
        return line ? -EINVAL : 0;
}

static int parse_follow(char *line, struct xdev_state *state) {
        if (take_pid(&line, "pid", &state->follow_pid) < 0 ||
            take_u64(&line, "start", 0, UINT64_MAX, &state->follow_start) < 0)
                return -EINVAL;
        state->follow = true;
        return line ? -EINVAL : 0;
}

static int parse_sweep(char *line, struct xdev_linger_rec *w) {
        if (take_id(&line, "uid", &w->uid) < 0 || take_pid(&line, "pid", &w->pid) < 0 ||
            take_u64(&line, "start", 0, UINT64_MAX, &w->start) < 0 ||
            take_u64(&line, "until", 0, UINT64_MAX, &w->until) < 0)
                return -EINVAL;
        return line ? -EINVAL : 0;
}

static int parse_node(char *line, struct xdev_node *n) {
        uint64_t v;
        const char *t;
        int c;

        *n = (struct xdev_node) { 0 };
        t = take(&line, "path");
        if (!xdev_path_is_valid(t))
                return -EINVAL;
        n->path = (char *) t;
        c = xdev_class_from_string(take(&line, "class"));
        if (c < 0)
                return -EINVAL;
        n->class = c;
        if (parse_devnum(take(&line, "fsdev"), &n->fsdev) < 0)
                return -EINVAL;
        if (take_u64(&line, "ino", 0, UINT64_MAX, &v) < 0)
                return -EINVAL;
        n->ino = (ino_t) v;
        if (parse_devnum(take(&line, "rdev"), &n->rdev) < 0 ||
            major(n->rdev) != xdev_class_major(n->class) ||
            take_original(&line, &n->uid, &n->gid, &n->mode, &t) < 0)
                return -EINVAL;
        n->acl = (char *) t;
        t = take(&line, "grant");
        if (!t)
                return -EINVAL;
        if (strcmp(t, "-") != 0) {
                /* UID:PERM:MODE */
                char buf[48], *a, *b;
                if (strlen(t) >= sizeof buf)
                        return -EINVAL;
                strcpy(buf, t);
                a = strchr(buf, ':');
                if (!a)
                        return -EINVAL;
                *a++ = '\0';
                b = strchr(a, ':');
                if (!b)
                        return -EINVAL;
                *b++ = '\0';
                if (xdev_parse_uint(buf, UINT32_MAX - 1, &v) < 0)
                        return -EINVAL;
                n->grantee = (uid_t) v;
                int perm = xdev_access_from_string(a), gmode = xdev_grant_mode_from_string(b);
                if (perm <= 0 || gmode < 0) /* "off" is no grant */
                        return -EINVAL;
                n->perm = (enum xdev_access) perm;
                n->gmode = (enum xdev_grant_mode) gmode;
                if (n->gmode == XDEV_GRANT_ACL && !n->acl)
                        return -EINVAL;
                n->granted = true;
        }
        return line ? -EINVAL : 0;
}

/* One line after the first: "holder" (second), "follow" (third), then the
 * sweeps, the sessions and the nodes, in that order. Returns 0, -EINVAL,
 * or the -errno of a full table. */
static int parse_line(struct xdev_state *tmp, char *line, unsigned lineno, bool *seen_holder) {
        if (strncmp(line, "holder ", 7) == 0) {
                uint64_t v;
                if (*seen_holder || lineno != 2)
                        return -EINVAL;
                *seen_holder = true;
                if (strcmp(line + 7, "-") == 0)
                        return 0;
                if (xdev_parse_uint(line + 7, UINT32_MAX - 1, &v) < 0)
                        return -EINVAL;
                tmp->has_holder = true;
                tmp->holder = (uid_t) v;
                return 0;
        }
        if (!*seen_holder)
                return -EINVAL;
        if (strncmp(line, "follow ", 7) == 0)
                return lineno != 3 || parse_follow(line + 7, tmp) < 0 ? -EINVAL : 0;
        if (strncmp(line, "sweep ", 6) == 0) {
                struct xdev_linger_rec w;
                /* after holder and follow, before sessions and nodes */
                if (tmp->n_sessions > 0 || tmp->n_nodes > 0 || parse_sweep(line + 6, &w) < 0 ||
                    xdev_state_find_sweep(tmp, w.uid) >= 0 || xdev_state_set_sweep(tmp, &w) < 0)
                        return -EINVAL;
                return 0;
        }
        if (strncmp(line, "session ", 8) == 0) {
                struct xdev_session ses;
                if (tmp->n_nodes > 0 || parse_session(line + 8, &ses) < 0 ||
                    xdev_state_find_session(tmp, ses.pid, ses.start) >= 0)
                        return -EINVAL;
                return xdev_state_add_session(tmp, &ses);
        }
        if (strncmp(line, "node ", 5) == 0) {
                struct xdev_node nd;
                if (parse_node(line + 5, &nd) < 0 || xdev_state_find_node(tmp, nd.path) >= 0)
                        return -EINVAL;
                return xdev_state_add_node(tmp, &nd);
        }
        return -EINVAL;
}

int xdev_state_parse(struct xdev_state *state, const char *buf, size_t len, unsigned *ret_line) {
        struct xdev_state tmp = { 0 };
        char line[XDEV_STATE_LINE_MAX + 1];
        unsigned lineno = 0;
        bool seen_holder = false;
        size_t pos = 0;
        int r = -EINVAL;

        if (len > XDEV_STATE_FILE_MAX || memchr(buf, '\0', len))
                goto fail;
        while (pos < len) {
                const char *nl = memchr(buf + pos, '\n', len - pos);
                size_t n;

                lineno++;
                if (!nl) /* every line, the last too, ends in \n: a cut file is refused */
                        goto fail;
                n = (size_t) (nl - (buf + pos));
                if (n > XDEV_STATE_LINE_MAX)
                        goto fail;
                memcpy(line, buf + pos, n);
                line[n] = '\0';
                pos += n + 1;
                if (lineno == 1)
                        r = strcmp(line, STATE_MAGIC) == 0 ? 0 : -EINVAL;
                else
                        r = parse_line(&tmp, line, lineno, &seen_holder);
                if (r < 0)
                        goto fail;
                r = -EINVAL;
        }
        if (!seen_holder)
                goto fail;
        if (tmp.has_holder && !xdev_state_uid_has_session(&tmp, tmp.holder))
                goto fail;
        xdev_state_free(state);
        *state = tmp;
        return 0;
fail:
        if (ret_line)
                *ret_line = lineno;
        xdev_state_free(&tmp);
        return r;
}

int xdev_state_format(const struct xdev_state *state, FILE *f) {
        fprintf(f, STATE_MAGIC "\n");
        if (state->has_holder)
                fprintf(f, "holder %u\n", (unsigned) state->holder);
        else
                fprintf(f, "holder -\n");
        if (state->follow)
                fprintf(f, "follow pid=%d start=%llu\n", (int) state->follow_pid,
                        (unsigned long long) state->follow_start);
        for (size_t i = 0; i < state->n_sweeps; i++)
                fprintf(f, "sweep uid=%u pid=%d start=%llu until=%llu\n",
                        (unsigned) state->sweeps[i].uid, (int) state->sweeps[i].pid,
                        (unsigned long long) state->sweeps[i].start,
                        (unsigned long long) state->sweeps[i].until);
        for (size_t i = 0; i < state->n_sessions; i++) {
                const struct xdev_session *s = &state->sessions[i];
                fprintf(f, "session uid=%u user=%s service=%s vt=%u pid=%d start=%llu since=%lld\n",
                        (unsigned) s->uid, s->user, s->service, s->vt, (int) s->pid,
                        (unsigned long long) s->start, (long long) (s->since < 0 ? 0 : s->since));
        }
        for (size_t i = 0; i < state->n_nodes; i++) {
                const struct xdev_node *n = &state->nodes[i];
                fprintf(f,
                        "node path=%s class=%s fsdev=%u:%u ino=%llu rdev=%u:%u uid=%u gid=%u mode=%o acl=%s",
                        n->path, xdev_class_to_string(n->class), major(n->fsdev), minor(n->fsdev),
                        (unsigned long long) n->ino, major(n->rdev), minor(n->rdev),
                        (unsigned) n->uid, (unsigned) n->gid, (unsigned) n->mode,
                        n->acl ? n->acl : "-");
                if (n->granted)
                        fprintf(f, " grant=%u:%s:%s\n", (unsigned) n->grantee,
                                xdev_access_to_string(n->perm),
                                xdev_grant_mode_to_string(n->gmode));
                else
                        fprintf(f, " grant=-\n");
        }
        return ferror(f) ? -EIO : 0;
}

/* ---- the mark on a granted node ---- */

#define MARK_MAGIC "xdevices-mark 1"

int xdev_mark_format(const struct xdev_node *n, char *buf, size_t size) {
        int len;

        if (!n->granted || size < XDEV_MARK_MAX)
                return -EINVAL;
        len = snprintf(buf, size, MARK_MAGIC " rdev=%u:%u uid=%u gid=%u mode=%o acl=%s grant=%u\n",
                       major(n->rdev), minor(n->rdev), (unsigned) n->uid, (unsigned) n->gid,
                       (unsigned) n->mode, n->acl ? n->acl : "-", (unsigned) n->grantee);
        return len < 0 || (size_t) len >= size ? -EINVAL : len;
}

int xdev_mark_parse(const char *buf, size_t len, struct xdev_mark *ret) {
        char line[XDEV_MARK_MAX + 1], *cursor;
        struct xdev_mark m = { 0 };
        const char *t;
        uint64_t v;

        /* one line, ending in \n, no NUL: a cut or padded value is refused */
        if (len < 2 || len > XDEV_MARK_MAX || buf[len - 1] != '\n' || memchr(buf, '\n', len - 1) ||
            memchr(buf, '\0', len))
                return -EINVAL;
        memcpy(line, buf, len - 1);
        line[len - 1] = '\0';
        if (strncmp(line, MARK_MAGIC " ", sizeof MARK_MAGIC) != 0)
                return -EINVAL;
        cursor = line + sizeof MARK_MAGIC;
        if (parse_devnum(take(&cursor, "rdev"), &m.rdev) < 0)
                return -EINVAL;
        if (take_original(&cursor, &m.uid, &m.gid, &m.mode, &t) < 0)
                return -EINVAL;
        if (t) {
                strcpy(m.acl, t);
                m.has_acl = true;
        }
        if (parse_u64(take(&cursor, "grant"), UINT32_MAX - 1, &v) < 0)
                return -EINVAL;
        m.grantee = (uid_t) v;
        if (cursor)
                return -EINVAL;
        *ret = m;
        return 0;
}

/* ---- store ---- */

int xdev_store_open(struct xdev_store *store, const char *dir) {
        struct stat st;
        int r;

        store->dirfd = store->lockfd = -1;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        store->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (store->dirfd < 0)
                return -errno;
        if (fstat(store->dirfd, &st) < 0) {
                r = -errno;
                goto fail;
        }
        if (st.st_uid != 0 || (st.st_mode & 07777) != 0700) {
                r = -EPERM;
                goto fail;
        }
        store->lockfd = openat(store->dirfd, "lock",
                               O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
        if (store->lockfd < 0) {
                r = -errno;
                goto fail;
        }
        if (fstat(store->lockfd, &st) < 0) {
                r = -errno;
                goto fail;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_nlink != 1) {
                r = -EPERM;
                goto fail;
        }
        while (flock(store->lockfd, LOCK_EX) < 0)
                if (errno != EINTR) {
                        r = -errno;
                        goto fail;
                }
        return 0;
fail:
        xdev_store_close(store);
        return r;
}

void xdev_store_close(struct xdev_store *store) {
        if (store->lockfd >= 0)
                (void) close(store->lockfd);
        if (store->dirfd >= 0)
                (void) close(store->dirfd);
        store->lockfd = store->dirfd = -1;
}

int xdev_store_load(struct xdev_store *store, struct xdev_state *state, unsigned *ret_line) {
        struct stat st;
        char *buf = NULL;
        size_t len = 0;
        int fd, r;

        fd = openat(store->dirfd, "state",
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                if (errno == ENOENT) {
                        xdev_state_free(state);
                        return 1;
                }
                return -errno;
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_nlink != 1 || (st.st_mode & 077)) {
                r = -EPERM;
                goto out;
        }
        if (st.st_size > XDEV_STATE_FILE_MAX) {
                r = -EFBIG;
                goto out;
        }
        r = xdev_read_file(fd, (size_t) st.st_size, "state-read", &buf);
        if (r < 0)
                goto out;
        len = (size_t) st.st_size;
        r = xdev_state_parse(state, buf, len, ret_line);
        if (r < 0)
                r = -EBADMSG;
out:
        free(buf);
        (void) close(fd);
        return r;
}

int xdev_store_save(struct xdev_store *store, const struct xdev_state *state) {
        FILE *f = NULL;
        int fd, r;

        xdev_fault_point("state-save");
        (void) unlinkat(store->dirfd, "state.tmp", 0);
        fd = openat(store->dirfd, "state.tmp", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0600);
        if (fd < 0)
                return -errno;
        f = fdopen(fd, "w");
        if (!f) {
                r = -errno;
                (void) close(fd);
                goto fail;
        }
        r = xdev_state_format(state, f);
        if (r == 0)
                r = xdev_fault_point("state-write");
        if (r < 0)
                goto fail;
        if (fflush(f) != 0 || fsync(fileno(f)) < 0) {
                r = -errno;
                goto fail;
        }
        if (fclose(f) != 0) {
                f = NULL;
                r = -errno;
                goto fail;
        }
        f = NULL;
        xdev_fault_point("state-rename");
        if (renameat(store->dirfd, "state.tmp", store->dirfd, "state") < 0) {
                r = -errno;
                goto fail;
        }
        return 0;
fail:
        if (f)
                (void) fclose(f);
        (void) unlinkat(store->dirfd, "state.tmp", 0);
        return r ? r : -EIO;
}
