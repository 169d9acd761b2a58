// SPDX-License-Identifier: LGPL-2.1-or-later
/* Switch-to-grant latency of xdevicesd, a figure of the qemu suite: switches
 * between two VTs COUNT times (VT_ACTIVATE + VT_WAITACTIVE on /dev/tty0) and
 * times, from the ioctl to when both are true: NODE's ACL names the new user
 * and not the old one, and an fd the old user opened before the switch has
 * been revoked (poll gives POLLERR|POLLHUP, read ENODEV).
 * usage: xdt-vtlatency [--acl-only] NODE VT_A USER_A VT_B USER_B COUNT
 * where a USER is NAME:UID:GID (no NSS lookups in a static binary).
 * Prints one line per switch, then
 * "switch-to-grant latency: median X ms, max Y ms over N switches";
 * with --acl-only (for managers that move ACLs but revoke nothing, such as
 * logind on a uaccess node) no fd is opened and only the ACL is timed: the
 * last line is "switch-to-ACL latency: median X ms, max Y ms over N switches";
 * the switches are then 250 ms apart, so that the manager is idle at each.
 * exits 1 if any switch did not complete within 5 s (it stops after three
 * such switches in a row). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <linux/vt.h>

#define TIMEOUT_MS 5000.0
#define SETTLE_MS 250

struct user {
        char pw_name[64];
        uid_t pw_uid;
        gid_t pw_gid;
};

static int user_parse(const char *s, struct user *u) {
        unsigned uid, gid;
        if (sscanf(s, "%63[^:]:%u:%u", u->pw_name, &uid, &gid) != 3)
                return -1;
        u->pw_uid = uid;
        u->pw_gid = gid;
        return 0;
}

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* 1 if the access ACL of PATH has a user entry for UID (raw xattr: a 4-byte
 * header, then 8-byte entries {u16 tag, u16 perm, u32 id}; ACL_USER = 2). */
static int acl_names(const char *path, uid_t uid) {
        unsigned char buf[1024];
        ssize_t n = getxattr(path, "system.posix_acl_access", buf, sizeof buf);
        for (ssize_t off = 4; n > 0 && off + 8 <= n; off += 8) {
                uint16_t tag;
                uint32_t id;
                memcpy(&tag, buf + off, 2);
                memcpy(&id, buf + off + 4, 4);
                if (tag == 2 && id == uid)
                        return 1;
        }
        return 0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

/* A process of PW that opens NODE (it must hold it now), says "R" on OUT,
 * then waits for the revocation and writes its time (or -1 after 10 s). */
static pid_t reader_start(const char *node, const struct user *pw, int *ret_fd) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                double t = -1;
                if (setgroups(0, NULL) < 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
                    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
                        _exit(2);
                int fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0) {
                        (void) !write(p[1], "E", 1);
                        _exit(1);
                }
                (void) !write(p[1], "R", 1);
                double end = now_ms() + 10000;
                for (;;) {
                        struct pollfd pfd = { .fd = fd, .events = POLLIN };
                        int left = (int) (end - now_ms());
                        if (left <= 0 || poll(&pfd, 1, left) < 0)
                                break;
                        if (pfd.revents & (POLLERR | POLLHUP)) {
                                t = now_ms();
                                break;
                        }
                        char ev[24 * 16];
                        if (read(fd, ev, sizeof ev) < 0 && errno == ENODEV) {
                                t = now_ms();
                                break;
                        }
                }
                (void) !write(p[1], &t, sizeof t);
                _exit(0);
        }
        close(p[1]);
        *ret_fd = p[0];
        return pid;
}

static int read_full(int fd, void *buf, size_t len, int timeout_ms) {
        size_t got = 0;
        while (got < len) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                if (poll(&pfd, 1, timeout_ms) <= 0)
                        return -1;
                ssize_t n = read(fd, (char *) buf + got, len - got);
                if (n <= 0)
                        return -1;
                got += (size_t) n;
        }
        return 0;
}

int main(int argc, char **argv) {
        int acl_only = argc > 1 && strcmp(argv[1], "--acl-only") == 0;
        if (acl_only) {
                argv[1] = argv[0];
                argv++;
                argc--;
        }
        if (argc != 7) {
                fprintf(stderr, "usage: %s [--acl-only] NODE VT_A USER_A VT_B USER_B COUNT\n",
                        argv[0]);
                return 2;
        }
        const char *node = argv[1];
        int vt[2] = { atoi(argv[2]), atoi(argv[4]) };
        struct user pws[2];
        for (int i = 0; i < 2; i++)
                if (user_parse(argv[3 + 2 * i], &pws[i]) < 0) {
                        fprintf(stderr, "bad user %s (NAME:UID:GID)\n", argv[3 + 2 * i]);
                        return 2;
                }
        int count = atoi(argv[6]);
        if (count < 1 || count > 10000)
                return 2;
        int tty0 = open("/dev/tty0", O_RDWR | O_CLOEXEC);
        int ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (tty0 < 0 || ino < 0 || inotify_add_watch(ino, node, IN_ATTRIB) < 0) {
                perror("xdt-vtlatency: setup");
                return 1;
        }
        /* start from A in front, holding */
        if (ioctl(tty0, VT_ACTIVATE, vt[0]) < 0 || ioctl(tty0, VT_WAITACTIVE, vt[0]) < 0) {
                perror("xdt-vtlatency: VT_ACTIVATE");
                return 1;
        }
        double until = now_ms() + TIMEOUT_MS;
        while (!acl_names(node, pws[0].pw_uid) && now_ms() < until)
                usleep(10000);
        double *lat = calloc((size_t) count, sizeof *lat);
        double *acl = calloc((size_t) count, sizeof *acl);
        double *rev = calloc((size_t) count, sizeof *rev);
        int failed = 0, bad_in_a_row = 0;
        for (int i = 0; i < count; i++) {
                int to = (i + 1) % 2, from = i % 2;
                int rfd = -1;
                char c = 0;
                pid_t child = acl_only ? 0 : reader_start(node, &pws[from], &rfd);
                if (!acl_only && (child < 0 || read_full(rfd, &c, 1, 5000) < 0 || c != 'R')) {
                        printf("switch %d: %s could not open %s before the switch\n", i + 1,
                               pws[from].pw_name, node);
                        failed++;
                        if (child > 0) {
                                kill(child, SIGKILL);
                                waitpid(child, NULL, 0);
                        }
                        if (rfd >= 0)
                                close(rfd);
                        lat[i] = acl[i] = rev[i] = TIMEOUT_MS;
                        /* put things back in order for the next switch */
                        (void) ioctl(tty0, VT_ACTIVATE, vt[to]);
                        (void) ioctl(tty0, VT_WAITACTIVE, vt[to]);
                        usleep(500000);
                        if (++bad_in_a_row >= 3) {
                                printf("3 switches in a row did not complete: stopping after %d\n",
                                       i + 1);
                                count = i + 1;
                                break;
                        }
                        continue;
                }
                /* the reader's fork and open leave the manager a moment after
                 * each switch; without them, let it finish the last step (work
                 * after the ACL, as xdevicesd's enumeration) before the next */
                if (acl_only && i > 0)
                        usleep(SETTLE_MS * 1000);
                char drain[4096];
                while (read(ino, drain, sizeof drain) > 0)
                        ;
                double t0 = now_ms();
                if (ioctl(tty0, VT_ACTIVATE, vt[to]) < 0 ||
                    ioctl(tty0, VT_WAITACTIVE, vt[to]) < 0) {
                        perror("xdt-vtlatency: VT_ACTIVATE");
                        return 1;
                }
                double t_active = now_ms() - t0, t_acl = -1, t_rev = -1;
                until = t0 + TIMEOUT_MS;
                for (;;) {
                        if (acl_names(node, pws[to].pw_uid) && !acl_names(node, pws[from].pw_uid)) {
                                t_acl = now_ms() - t0;
                                break;
                        }
                        if (now_ms() > until)
                                break;
                        /* every ACL change is an IN_ATTRIB: sleep until one
                         * comes (polling every 1 ms took a share of the
                         * guest's two vCPUs from the manager measured) */
                        struct pollfd pfd = { .fd = ino, .events = POLLIN };
                        if (poll(&pfd, 1, 100) > 0)
                                while (read(ino, drain, sizeof drain) > 0)
                                        ;
                }
                double trev_abs = -1;
                int left = (int) (t0 + TIMEOUT_MS - now_ms());
                if (acl_only)
                        t_rev = 0;
                else {
                        int wait_ms = left > 100 ? left : 100;
                        if (read_full(rfd, &trev_abs, sizeof trev_abs, wait_ms) == 0 &&
                            trev_abs > 0)
                                t_rev = trev_abs - t0;
                        close(rfd);
                        kill(child, SIGKILL);
                        waitpid(child, NULL, 0);
                }
                acl[i] = t_acl < 0 ? TIMEOUT_MS : t_acl;
                rev[i] = t_rev < 0 ? TIMEOUT_MS : t_rev;
                lat[i] = acl[i] > rev[i] ? acl[i] : rev[i];
                if (t_acl < 0 || t_rev < 0) {
                        failed++;
                        bad_in_a_row++;
                } else
                        bad_in_a_row = 0;
                char moved[32] = "never", revoked[48] = "";
                if (t_acl >= 0)
                        snprintf(moved, sizeof moved, "%.1f ms", t_acl);
                if (!acl_only && t_rev < 0)
                        snprintf(revoked, sizeof revoked, ", old fd revoked never");
                else if (!acl_only)
                        snprintf(revoked, sizeof revoked, ", old fd revoked %.1f ms", t_rev);
                printf("switch %d: tty%d -> tty%d (%s -> %s): active %.1f ms, ACL moved %s%s\n",
                       i + 1, vt[from], vt[to], pws[from].pw_name, pws[to].pw_name, t_active, moved,
                       revoked);
                fflush(stdout);
                if (bad_in_a_row >= 3) {
                        printf("3 switches in a row did not complete: stopping after %d\n", i + 1);
                        count = i + 1;
                        break;
                }
        }
        qsort(lat, (size_t) count, sizeof *lat, cmp_double);
        qsort(acl, (size_t) count, sizeof *acl, cmp_double);
        qsort(rev, (size_t) count, sizeof *rev, cmp_double);
#define MEDIAN(a) (count % 2 ? a[count / 2] : (a[count / 2 - 1] + a[count / 2]) / 2)
        if (acl_only) {
                printf("switch-to-ACL latency: median %.1f ms, max %.1f ms over %d switches%s\n",
                       MEDIAN(acl), acl[count - 1], count,
                       failed ? " (some did not complete: counted as 5000 ms)" : "");
                if (failed)
                        printf("%d of %d switches did not move the ACL within %.0f ms\n", failed,
                               count, TIMEOUT_MS);
                return failed ? 1 : 0;
        }
        printf("ACL moved: median %.1f ms, max %.1f ms; old fd revoked: median %.1f ms, max %.1f ms\n",
               MEDIAN(acl), acl[count - 1], MEDIAN(rev), rev[count - 1]);
        printf("switch-to-grant latency: median %.1f ms, max %.1f ms over %d switches%s\n",
               MEDIAN(lat), lat[count - 1], count,
               failed ? " (some did not complete: counted as 5000 ms)" : "");
        if (failed)
                printf("%d of %d switches did not complete within %.0f ms\n", failed, count,
                       TIMEOUT_MS);
        return failed ? 1 : 0;
}
