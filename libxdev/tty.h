/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which logins count: PAM_TTY spelling, the controlling tty, the active VT. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vt.h"

/* 1 when the calling process's controlling tty is VT N (char 4:N). */
int xdev_tty_is_controlling(unsigned vt);

/* 1 when the calling process leads its session and that session's
 * controlling tty is VT N: what getty and login are; su, sudo and anything
 * started from a shell are not. */
int xdev_tty_leads_session(unsigned vt);

/* A recorded session's leader still counts: the same process (pid and start
 * time), not a zombie, and VT N still its controlling tty, or (util-linux
 * login) no controlling tty and a child leading the session of VT N. */
bool xdev_leader_is_live(pid_t pid, uint64_t start, unsigned vt);

/* The login decision of doc/DESIGN.md §3.3 on PAM items alone (no
 * syscalls): a user, RHOST empty and RUSER empty. */
bool xdev_login_items_are_local(const char *user, const char *ruser, const char *rhost);
