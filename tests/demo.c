/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* make demo: a real PAM session through pam_xdevices.so for a throwaway user
 * on a free real VT of this machine, with DRM and input nodes mknod'd in a
 * private mount namespace; prints each node before, during and after. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <security/pam_appl.h>

#include "harness.h"

static void row(const char *path, char *const cols[3]) {
        printf("| %-20s | %-34s | %-50s | %-34s |\n", path, cols[0], cols[1], cols[2]);
}

/* "uid gid mode rdev acl" -> "owner:group mode ACL" for the table */
static char *pretty(const char *desc) {
        unsigned uid, gid, mode;
        char rdev[32], acl[512], *out = NULL;
        if (sscanf(desc, "%u %u %o %31s %511s", &uid, &gid, &mode, rdev, acl) != 5)
                return strdup(desc);
        if (asprintf(&out, "%u:%u %04o %s", uid, gid, mode & 07777, acl) < 0)
                return NULL;
        return out;
}

int main(void) {
        const char *nodes[16];
        char vtnode[32], *cols[16][3];
        size_t n = 0;
        int vt;

        h_init();
        h_fresh(NULL, NULL);
        vt = h_vt_openqry();
        if (vt < 2) {
                fprintf(stderr, "demo: VT_OPENQRY found no free VT\n");
                return 1;
        }
        snprintf(vtnode, sizeof vtnode, "/dev/tty%d", vt);
        nodes[n++] = vtnode;
        for (size_t i = 0; i < h_n_shared_nodes; i++)
                nodes[n++] = h_shared_nodes[i];
        nodes[n++] = "/dev/tty0";

        printf("pam_xdevices demo: user xdalice (uid %d), free VT %s (VT_OPENQRY), nodes mknod'd in a private /dev\n",
               H_UID_ALICE, vtnode);
        printf("PAM service: %s/%s = session required pam_xdevices.so (real libpam)\n\n", H_PAMDIR,
               H_SERVICE);
        for (size_t i = 0; i < n; i++) {
                char *d = h_node_describe(nodes[i]);
                cols[i][0] = pretty(d);
                free(d);
        }
        struct h_session *s = h_session_open("xdalice", vt, NULL);
        if (s->open_ret != PAM_SUCCESS) {
                fprintf(stderr, "demo: pam_open_session returned %d\n%s", s->open_ret,
                        h_log_take());
                return 1;
        }
        for (size_t i = 0; i < n; i++) {
                char *d = h_node_describe(nodes[i]);
                cols[i][1] = pretty(d);
                free(d);
        }
        printf("session environment: XDG_VTNR=%s XDG_SEAT=%s\n", s->xdg_vtnr, s->xdg_seat);
        int r = h_session_close(s);
        for (size_t i = 0; i < n; i++) {
                char *d = h_node_describe(nodes[i]);
                cols[i][2] = pretty(d);
                free(d);
        }
        printf("pam_close_session: %s\n\n", r == PAM_SUCCESS ? "success" : "FAILED");
        char *hdr[3] = { "before login (owner:group mode ACL)", "during the session",
                         "after logout" };
        row("node", hdr);
        printf("|%s|%s|%s|%s|\n", "----------------------", "------------------------------------",
               "----------------------------------------------------",
               "------------------------------------");
        int same = 1;
        for (size_t i = 0; i < n; i++) {
                row(nodes[i], cols[i]);
                same &= strcmp(cols[i][0], cols[i][2]) == 0;
        }
        char *log = h_log_take();
        printf("\nwhat the module logged:\n%s", log);
        free(log);
        printf("\nevery node after logout is %s before login\n", same ? "exactly as" : "NOT as");
        return same && r == PAM_SUCCESS ? 0 : 1;
}
