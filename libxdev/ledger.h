/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ledger's plan inside a transaction (ledger.c): what each recorded node
 * should be, and the nodes recorded for the holder or a login's VT. Called
 * with the state lock held; nothing is saved or changed on a node here. */
#pragma once

#include <sys/types.h>

#include "conf.h"
#include "txn.h"

/* Makes sure the ledger has an entry for the node at PATH and that it wants
 * UID to have PERM. A recorded node that was replaced is forgotten first.
 * EXPECT, when not 0, is the rdev the caller was told (udev). */
int xdev_ledger_want(struct xdev_ctx *ctx, struct xdev_txn *t, const char *path,
                     enum xdev_class class, dev_t expect, uid_t uid, enum xdev_access perm);

/* Who should have each recorded node now. VTs go to the latest session on
 * them, shared nodes to the holder. */
void xdev_ledger_plan(const struct xdev_ctx *ctx, struct xdev_txn *t);

/* Adds every enumerated shared device to the ledger for the holder. */
int xdev_ledger_enumerate(struct xdev_ctx *ctx, struct xdev_txn *t);
