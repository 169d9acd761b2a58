/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which logins count: PAM_TTY spelling, the controlling tty, the active VT. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"
#include "tty.h"
#include "util.h"

/* 1 when VT N is the calling process's controlling tty and, with LEADS,
 * the process leads that tty's session; 0 when not, -errno. */
static int self_on_vt(unsigned vt, bool leads) {
        struct xdev_proc_stat st;
        int r = xdev_proc_stat(getpid(), &st);

        if (r < 0)
                return r;
        return st.tty_nr == xdev_vt_devnum(vt) && (!leads || st.session == getpid());
}

int xdev_tty_is_controlling(unsigned vt) {
        return self_on_vt(vt, false);
}

int xdev_tty_leads_session(unsigned vt) {
        return self_on_vt(vt, true);
}

/* Whether one of PID's direct children keeps its VT-less session alive:
 * it leads a session whose controlling tty is VT (util-linux login's
 * child, once it took the VT), or it is on its way there, forked and still
 * in PID's session, or leading a session of its own that has no controlling
 * tty yet (between its setsid() and its TIOCSCTTY). doc/DESIGN.md §3.3. */
static bool child_keeps_session(pid_t pid, unsigned vt) {
        char path[64], buf[512], *save = NULL;

        (void) snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int) pid, (int) pid);
        if (xdev_read_small(AT_FDCWD, path, buf, sizeof buf) <= 0)
                return false;
        for (char *tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
                struct xdev_proc_stat st;
                uint64_t child;
                if (xdev_parse_uint(tok, INT32_MAX, &child) < 0 ||
                    xdev_proc_stat((pid_t) child, &st) < 0 || st.state == 'Z')
                        continue;
                if (st.session == pid && st.tty_nr == 0)
                        return true;
                if (st.session == (pid_t) child &&
                    (st.tty_nr == xdev_vt_devnum(vt) || st.tty_nr == 0))
                        return true;
        }
        return false;
}

/* Whether PID's standard input is still VT: util-linux login between its
 * TIOCNOTTY and its fork, which closes it in the parent. */
static bool stdin_is_vt(pid_t pid, unsigned vt) {
        char path[64];
        struct stat st;

        (void) snprintf(path, sizeof path, "/proc/%d/fd/0", (int) pid);
        return stat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == xdev_vt_devnum(vt);
}

bool xdev_leader_is_live(pid_t pid, uint64_t start, unsigned vt) {
        struct xdev_proc_stat st;

        if (xdev_proc_stat(pid, &st) < 0 || st.start != start)
                return false;
        /* A zombie is gone for our purposes, and a leader whose controlling
         * tty is another tty lost the VT. */
        if (st.state == 'Z' || st.state == 'X' || st.state == 'x')
                return false;
        if (st.tty_nr == xdev_vt_devnum(vt))
                return true;
        if (st.tty_nr != 0)
                return false;
        /* util-linux login gives the VT up in the parent that waits (and
         * closes the PAM session), then forks the session's child, which
         * takes the VT as the controlling tty of a session of its own. The
         * login lives through each step of that; once its child is gone it
         * has neither a child nor the VT on its standard input. */
        return child_keeps_session(pid, vt) || stdin_is_vt(pid, vt);
}

bool xdev_login_items_are_local(const char *user, const char *ruser, const char *rhost) {
        if (rhost && rhost[0] != '\0')
                return false;
        /* su and sudo set PAM_RUSER to the caller, even for "su" to oneself:
         * such a session runs inside another and never counts. */
        if (ruser && ruser[0] != '\0')
                return false;
        return user && user[0] != '\0';
}
