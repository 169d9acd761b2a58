/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ledger's plan: which node each uid should have now, and the entry a
 * node gets when first recorded (its original, or the one its mark holds).
 * Changes the state only; xdev_txn_commit() saves it and changes the nodes. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <unistd.h>

#include "devices.h"
#include "ledger.h"
#include "vt.h"

static void node_revoke(struct xdev_node *n) {
        if (n->granted)
                n->dirty = true;
        n->granted = false;
}

static void node_grant(struct xdev_node *n, uid_t uid, enum xdev_access perm,
                       enum xdev_grant_mode gmode) {
        if (!n->granted || n->grantee != uid || n->perm != perm || n->gmode != gmode)
                n->dirty = true;
        n->granted = true;
        n->grantee = uid;
        n->perm = perm;
        n->gmode = gmode;
}

/* N for UID: a grant it has keeps its access and mode (a reload changes
 * no grant in place); a new grantee gets the configuration's. */
static void node_grant_as(const struct xdev_ctx *ctx, struct xdev_node *n, uid_t uid) {
        bool kept = n->granted && n->grantee == uid;

        node_grant(n, uid, kept ? n->perm : ctx->config.access[n->class],
                   kept ? n->gmode : ctx->config.mode);
}

/* A node about to be recorded that carries the mark of a grant no ledger
 * holds (doc/DESIGN.md §3.6) still has that grant: its original is the
 * mark's, never what it is now. */
static int take_original_from_mark(struct xdev_ctx *ctx, int fd, const struct stat *st,
                                   struct xdev_node *rec) {
        struct xdev_mark m;
        char *acl = NULL;
        int r = xdev_node_mark_read(fd, st, &m);

        if (r == -ENODATA)
                return 0;
        if (r < 0) {
                xdev_log(&ctx->log, LOG_WARNING,
                         "\"%s\" carries a mark that cannot be read (%s); not recording it",
                         rec->path, strerror(-r));
                return r;
        }
        if (m.has_acl && !(acl = strdup(m.acl)))
                return -ENOMEM;
        xdev_log(
                &ctx->log, LOG_WARNING,
                "\"%s\" is still granted to uid %u by a state that was lost; recording the original its mark holds (%u:%u %04o %s)",
                rec->path, (unsigned) m.grantee, (unsigned) m.uid, (unsigned) m.gid,
                (unsigned) (m.mode & 07777), m.has_acl ? m.acl : "(no ACL)");
        free(rec->acl);
        rec->acl = acl;
        rec->uid = m.uid;
        rec->gid = m.gid;
        rec->mode = m.mode;
        return 0;
}

int xdev_ledger_want(struct xdev_ctx *ctx, struct xdev_txn *t, const char *path,
                     enum xdev_class class, dev_t expect, uid_t uid, enum xdev_access perm) {
        struct xdev_node rec = { 0 };
        struct stat st;
        ssize_t idx;
        int fd, r;

        r = xdev_node_open(&t->dirs, path, class, &fd, &st);
        if (r == 0 && st.st_nlink != 1) {
                (void) close(fd);
                r = -ENOTTY; /* a grant would reach the other name too */
        }
        if (r < 0) {
                if (r == -ENOTTY)
                        xdev_log(
                                &ctx->log, LOG_WARNING,
                                "\"%s\" is not a device node of class %s (symlink, hard link, other type or major), ignoring",
                                path, xdev_class_to_string(class));
                else if (r != -ENOENT)
                        xdev_log(&ctx->log, LOG_WARNING, "cannot open \"%s\": %s, ignoring", path,
                                 strerror(-r));
                return r;
        }
        if (expect != 0 && st.st_rdev != expect) {
                xdev_log(&ctx->log, LOG_WARNING,
                         "\"%s\" is %u:%u, not the %u:%u announced, ignoring", path,
                         major(st.st_rdev), minor(st.st_rdev), major(expect), minor(expect));
                r = -ESTALE;
                goto out;
        }
        idx = xdev_state_find_node(&t->state, path);
        if (idx >= 0) {
                struct xdev_node *n = &t->state.nodes[idx];
                if (n->fsdev == st.st_dev && n->ino == st.st_ino && n->rdev == st.st_rdev) {
                        node_grant(n, uid, perm, ctx->config.mode);
                        r = 0;
                        goto out;
                }
                xdev_debug(&ctx->log, "\"%s\" was replaced since it was recorded; recording anew",
                           path);
                xdev_state_remove_node(&t->state, (size_t) idx);
        }
        rec.path = (char *) path;
        rec.class = class;
        r = xdev_node_snapshot(fd, &st, &rec);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_WARNING, "cannot read the state of \"%s\": %s, ignoring",
                         path, strerror(-r));
                goto out;
        }
        r = take_original_from_mark(ctx, fd, &st, &rec);
        if (r < 0)
                goto out;
        if (ctx->config.mode == XDEV_GRANT_ACL && !rec.acl) {
                xdev_log(&ctx->log, LOG_ERR,
                         "\"%s\" is on a file system without ACLs; use mode=chown", path);
                r = -EOPNOTSUPP;
                goto out;
        }
        node_grant(&rec, uid, perm, ctx->config.mode);
        rec.dirty = true;
        r = xdev_state_add_node(&t->state, &rec);
out:
        free(rec.acl);
        (void) close(fd);
        return r;
}

void xdev_ledger_plan(const struct xdev_ctx *ctx, struct xdev_txn *t) {
        for (size_t i = 0; i < t->state.n_nodes; i++) {
                struct xdev_node *n = &t->state.nodes[i];
                if (n->class == XDEV_CLASS_VT) {
                        const struct xdev_session *owner = NULL;
                        for (size_t j = 0; j < t->state.n_sessions; j++)
                                if (n->rdev == xdev_vt_devnum(t->state.sessions[j].vt))
                                        owner = &t->state.sessions[j];
                        if (owner)
                                node_grant_as(ctx, n, owner->uid);
                        else
                                node_revoke(n);
                } else if (t->state.has_holder &&
                           ((n->granted && n->grantee == t->state.holder) ||
                            ctx->config.access[n->class] != XDEV_ACCESS_OFF))
                        node_grant_as(ctx, n, t->state.holder);
                else
                        node_revoke(n);
        }
}

int xdev_ledger_enumerate(struct xdev_ctx *ctx, struct xdev_txn *t) {
        struct xdev_device_list list = { 0 };
        int r;

        if (!t->state.has_holder || !ctx->config_ok)
                return 0;
        r = xdev_devices_enumerate(&ctx->config, &list, &ctx->log);
        if (r < 0) {
                xdev_log(&ctx->log, LOG_ERR, "cannot enumerate devices: %s", strerror(-r));
                return r;
        }
        for (size_t i = 0; i < list.n; i++) {
                r = xdev_ledger_want(ctx, t, list.items[i].path, list.items[i].class,
                                     list.items[i].devnum, t->state.holder,
                                     ctx->config.access[list.items[i].class]);
                if (r == -ENOMEM || r == -E2BIG || r == -EOPNOTSUPP)
                        goto out;
        }
        r = 0;
out:
        xdev_device_list_free(&list);
        return r;
}
