// SPDX-License-Identifier: LGPL-2.1-or-later
/* Watches device nodes and the active VT for the qemu suite, to order what
 * happens around a VT switch: the VT change, ACL changes (with the users the
 * ACL names then), and which processes gain or lose an open fd on the node.
 * usage: xdt-nodewatch NODE... (runs until killed; one line per event):
 *   <ms> active ttyN
 *   <ms> acl NODE users=UID,UID
 *   <ms> open NODE +PID:COMM:UID ...   (processes that newly hold it)
 *   <ms> close NODE -PID:COMM:UID ...  (processes that no longer do)
 * <ms> is CLOCK_MONOTONIC in milliseconds, taken when the event is read.
 * inotify has no pids; holders are found by a /proc scan after each event. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define MAX_NODES 8
#define MAX_HOLDERS 256

struct holder {
        int pid;
        unsigned uid;
        char comm[20];
};

struct node {
        const char *path;
        dev_t rdev;
        int wd;
        struct holder h[MAX_HOLDERS];
        int n;
};

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void acl_users(const char *path, char *out, size_t len) {
        unsigned char buf[1024];
        ssize_t n = getxattr(path, "system.posix_acl_access", buf, sizeof buf);
        size_t w = 0;
        out[0] = '\0';
        for (ssize_t off = 4; n > 0 && off + 8 <= n; off += 8) {
                uint16_t tag;
                uint32_t id;
                memcpy(&tag, buf + off, 2);
                memcpy(&id, buf + off + 4, 4);
                if (tag == 2 && w + 12 < len)
                        w += (size_t) snprintf(out + w, len - w, "%s%u", w ? "," : "", id);
        }
        if (!w)
                snprintf(out, len, "none");
}

static void proc_info(int pid, struct holder *h) {
        char p[64], line[256];
        h->pid = pid;
        h->uid = (unsigned) -1;
        snprintf(h->comm, sizeof h->comm, "?");
        snprintf(p, sizeof p, "/proc/%d/status", pid);
        FILE *f = fopen(p, "re");
        if (!f)
                return;
        while (fgets(line, sizeof line, f)) {
                if (!strncmp(line, "Name:\t", 6)) {
                        line[strcspn(line, "\n")] = '\0';
                        snprintf(h->comm, sizeof h->comm, "%.19s", line + 6);
                } else if (!strncmp(line, "Uid:\t", 5))
                        h->uid = (unsigned) strtoul(line + 5, NULL, 10);
        }
        fclose(f);
}

/* Every process with an fd on NODE now. */
static int scan(const struct node *nd, struct holder *out) {
        int n = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        if (!d)
                return 0;
        while ((e = readdir(d)) && n < MAX_HOLDERS) {
                int pid = atoi(e->d_name);
                if (pid <= 0 || pid == getpid())
                        continue;
                char p[64];
                snprintf(p, sizeof p, "/proc/%d/fd", pid);
                DIR *fds = opendir(p);
                if (!fds)
                        continue;
                struct dirent *f;
                while ((f = readdir(fds))) {
                        struct stat st;
                        if (f->d_name[0] == '.' || fstatat(dirfd(fds), f->d_name, &st, 0) < 0)
                                continue;
                        if (S_ISCHR(st.st_mode) && st.st_rdev == nd->rdev) {
                                proc_info(pid, &out[n++]);
                                break;
                        }
                }
                closedir(fds);
        }
        closedir(d);
        return n;
}

static int has(const struct holder *h, int n, int pid) {
        for (int i = 0; i < n; i++)
                if (h[i].pid == pid)
                        return 1;
        return 0;
}

static void diff(struct node *nd, double t) {
        static struct holder now[MAX_HOLDERS];
        int n = scan(nd, now);
        char buf[4096];
        size_t w = 0;
        for (int i = 0; i < n; i++)
                if (!has(nd->h, nd->n, now[i].pid) && w < sizeof buf - 64)
                        w += (size_t) snprintf(buf + w, sizeof buf - w, " +%d:%s:%u", now[i].pid,
                                               now[i].comm, now[i].uid);
        if (w)
                printf("%.1f open %s%s\n", t, nd->path, buf);
        w = 0;
        for (int i = 0; i < nd->n; i++)
                if (!has(now, n, nd->h[i].pid) && w < sizeof buf - 64)
                        w += (size_t) snprintf(buf + w, sizeof buf - w, " -%d:%s:%u", nd->h[i].pid,
                                               nd->h[i].comm, nd->h[i].uid);
        if (w)
                printf("%.1f close %s%s\n", t, nd->path, buf);
        memcpy(nd->h, now, sizeof now[0] * (size_t) n);
        nd->n = n;
}

int main(int argc, char **argv) {
        static struct node nodes[MAX_NODES];
        int nn = 0;
        if (argc < 2 || argc - 1 > MAX_NODES) {
                fprintf(stderr, "usage: %s NODE...\n", argv[0]);
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        int ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        int act = open("/sys/class/tty/tty0/active", O_RDONLY | O_CLOEXEC);
        if (ino < 0 || act < 0) {
                perror("xdt-nodewatch");
                return 1;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;
                struct node *nd = &nodes[nn];
                nd->path = argv[i];
                if (stat(argv[i], &st) < 0 || !S_ISCHR(st.st_mode)) {
                        fprintf(stderr, "xdt-nodewatch: %s: not a character device\n", argv[i]);
                        return 1;
                }
                nd->rdev = st.st_rdev;
                nd->wd = inotify_add_watch(ino, argv[i], IN_ATTRIB | IN_OPEN | IN_CLOSE);
                if (nd->wd < 0) {
                        perror("xdt-nodewatch: inotify_add_watch");
                        return 1;
                }
                nd->n = scan(nd, nd->h);
                char users[256];
                acl_users(nd->path, users, sizeof users);
                printf("%.1f start %s users=%s holders=%d\n", now_ms(), nd->path, users, nd->n);
                nn++;
        }
        printf("ready\n");
        char last[16] = "";
        for (;;) {
                /* The VT first: when a switch and the ACL changes it causes
                 * are read in one wake-up, the switch came first. Node
                 * events are printed in the order inotify queued them. */
                char a[16] = "";
                ssize_t r = pread(act, a, sizeof a - 1, 0);
                if (r > 0) {
                        a[r] = '\0';
                        a[strcspn(a, "\n")] = '\0';
                        if (strcmp(a, last)) {
                                printf("%.1f active %s\n", now_ms(), a);
                                snprintf(last, sizeof last, "%s", a);
                        }
                }
                char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
                ssize_t len;
                while ((len = read(ino, buf, sizeof buf)) > 0) {
                        double t = now_ms();
                        for (char *q = buf; q < buf + len;) {
                                const struct inotify_event *ev = (const struct inotify_event *) q;
                                for (int i = 0; i < nn; i++) {
                                        if (nodes[i].wd != ev->wd)
                                                continue;
                                        if (ev->mask & IN_ATTRIB) {
                                                char users[256];
                                                acl_users(nodes[i].path, users, sizeof users);
                                                printf("%.1f acl %s users=%s\n", t, nodes[i].path,
                                                       users);
                                        }
                                        if (ev->mask & (IN_OPEN | IN_CLOSE))
                                                diff(&nodes[i], t);
                                }
                                q += sizeof *ev + ev->len;
                        }
                }
                struct pollfd p[2] = { { .fd = ino, .events = POLLIN },
                                       { .fd = act, .events = POLLPRI | POLLERR } };
                (void) poll(p, 2, 1000);
        }
}
