/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test harness: private namespace, mknod'd nodes, real-PAM sessions. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <linux/io_uring.h>
#include <linux/vt.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>
#include <acl/libacl.h>
#include <security/pam_appl.h>

#include "harness.h"
#include "mounts.h"

int h_vt;

const char *const h_shared_nodes[] = {
        "/dev/dri/card0",    "/dev/dri/renderD128", "/dev/input/event0", "/dev/input/event1",
        "/dev/input/mouse0", "/dev/input/mice",     "/dev/input/js0",
};
const size_t h_n_shared_nodes = sizeof h_shared_nodes / sizeof h_shared_nodes[0];

static void die(const char *what) {
        fprintf(stderr, "harness: %s: %s\n", what, strerror(errno));
        exit(99);
}

void h_write_file(const char *path, const char *content, mode_t mode, uid_t uid) {
        int fd;

        (void) unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                die(path);
        if (write(fd, content, strlen(content)) != (ssize_t) strlen(content))
                die(path);
        if (fchmod(fd, mode) < 0 || fchown(fd, uid, 0) < 0)
                die(path);
        (void) close(fd);
}

static void mknod_at(const char *path, unsigned maj, unsigned min, gid_t gid, mode_t mode) {
        (void) unlink(path);
        if (mknod(path, S_IFCHR | mode, makedev(maj, min)) < 0)
                die(path);
        if (chown(path, 0, gid) < 0 || chmod(path, mode) < 0)
                die(path);
}

static gid_t group_id(const char *name, gid_t fallback) {
        struct group *g = getgrnam(name);
        return g ? g->gr_gid : fallback;
}

int h_vt_lead(int vt, bool steal) {
        char path[32];
        int fd;

        (void) setsid();
        (void) snprintf(path, sizeof path, "/dev/tty%d", vt);
        fd = open(path, O_RDWR | O_NOFOLLOW);
        if (fd >= 0 && ioctl(fd, TIOCSCTTY, steal ? 1 : 0) < 0) {
                int e = errno;
                (void) close(fd);
                errno = e;
                return -1;
        }
        return fd;
}

/* A VT no process uses: opening it in a new session must make it our
 * controlling tty. We ask from a child so we keep none. */
bool h_vt_is_free(int vt) {
        pid_t pid = fork();
        int status;

        if (pid < 0)
                die("fork");
        if (pid == 0)
                _exit(h_vt_lead(vt, false) >= 0 ? 0 : 1);
        if (waitpid(pid, &status, 0) < 0)
                die("waitpid");
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Whether this is h_init_userns's namespace: no device node, no VT. */
static bool userns;

/* As any user (h_init_userns): a tmpfs /dev with the host's null, zero,
 * urandom and tty bound in (no mknod in a user namespace) and no device
 * node of a test; made at H_ROOT/dev, then moved over /dev. */
static void make_dev_userns(void) {
        static const char *const bound[] = { "null", "zero", "urandom", "tty" };
        char p[64], host[32];

        (void) umount2("/dev", MNT_DETACH); /* ours; the host's is locked */
        if (mkdir(H_ROOT "/dev", 0755) < 0 && errno != EEXIST)
                die("mkdir " H_ROOT "/dev");
        if (mount("xdevtest", H_ROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") < 0)
                die("mount " H_ROOT "/dev");
        if (mkdir(H_ROOT "/dev/dri", 0755) < 0 || mkdir(H_ROOT "/dev/input", 0755) < 0 ||
            mkdir(H_ROOT "/dev/pts", 0755) < 0)
                die("mkdir");
        for (size_t i = 0; i < sizeof bound / sizeof bound[0]; i++) {
                (void) snprintf(p, sizeof p, H_ROOT "/dev/%s", bound[i]);
                (void) snprintf(host, sizeof host, "/dev/%s", bound[i]);
                h_write_file(p, "", 0666, 0);
                if (mount(host, p, NULL, MS_BIND, NULL) < 0)
                        die(host);
        }
        if (mount(H_ROOT "/dev", "/dev", NULL, MS_MOVE, NULL) < 0)
                die("move /dev");
}

static void make_dev(void) {
        char p[32];
        gid_t tty = group_id("tty", 5), video = group_id("video", 44),
              render = group_id("render", 108), input = group_id("input", 105);

        if (userns) {
                make_dev_userns();
                return;
        }
        (void) umount2("/dev", MNT_DETACH);
        if (mount("xdevtest", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") < 0)
                die("mount /dev");
        if (mkdir("/dev/dri", 0755) < 0 || mkdir("/dev/input", 0755) < 0 ||
            mkdir("/dev/pts", 0755) < 0)
                die("mkdir");
        mknod_at("/dev/null", 1, 3, 0, 0666);
        mknod_at("/dev/zero", 1, 5, 0, 0666);
        mknod_at("/dev/urandom", 1, 9, 0, 0666);
        mknod_at("/dev/tty", 5, 0, tty, 0666);
        mknod_at("/dev/tty0", 4, 0, tty, 0620);
        for (int vt = 1; vt <= 63; vt++) {
                (void) snprintf(p, sizeof p, "/dev/tty%d", vt);
                mknod_at(p, 4, (unsigned) vt, tty, 0620);
        }
        mknod_at("/dev/dri/card0", 226, 0, video, 0660);
        mknod_at("/dev/dri/renderD128", 226, 128, render, 0660);
        mknod_at("/dev/input/event0", 13, 64, input, 0660);
        mknod_at("/dev/input/event1", 13, 65, input, 0660);
        mknod_at("/dev/input/mouse0", 13, 32, input, 0660);
        mknod_at("/dev/input/mice", 13, 63, input, 0660);
        mknod_at("/dev/input/js0", 13, 0, input, 0664);
}

/* The uevent files of the mknod'd nodes, on a tmpfs over /sys/dev/char:
 * what xdevicesd writes to announce a node again lands there, never in the
 * host's sysfs (the nodes' numbers are those of real devices). Emptied by
 * h_fresh. */
static void make_sys_char(void) {
        char p[64];
        struct stat st;

        if (userns)
                return; /* no node: no uevent file */
        (void) umount2("/sys/dev/char", MNT_DETACH);
        if (mount("xdevtest", "/sys/dev/char", "tmpfs", MS_NOSUID | MS_NOEXEC | MS_NODEV,
                  "mode=0755") < 0)
                die("mount /sys/dev/char");
        for (size_t i = 0; i < h_n_shared_nodes; i++) {
                if (stat(h_shared_nodes[i], &st) < 0)
                        die(h_shared_nodes[i]);
                (void) snprintf(p, sizeof p, "/sys/dev/char/%u:%u", major(st.st_rdev),
                                minor(st.st_rdev));
                if (mkdir(p, 0755) < 0)
                        die(p);
                (void) strncat(p, "/uevent", sizeof p - strlen(p) - 1);
                h_write_file(p, "", 0644, 0);
        }
}

char *h_uevent_of(const char *node) {
        char p[64];
        struct stat st;
        char *buf = calloc(1, 256);
        int fd;

        if (!buf || stat(node, &st) < 0)
                die(node);
        (void) snprintf(p, sizeof p, "/sys/dev/char/%u:%u/uevent", major(st.st_rdev),
                        minor(st.st_rdev));
        fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, buf, 255) < 0)
                die(p);
        (void) close(fd);
        return buf;
}

static void add_users(void) {
        char buf[65536];
        ssize_t n;
        int fd;

        fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                die("/etc/passwd");
        n = read(fd, buf, sizeof buf - 512);
        (void) close(fd);
        if (n <= 0)
                die("read /etc/passwd");
        buf[n] = '\0';
        (void) snprintf(buf + n, sizeof buf - (size_t) n,
                        "xdalice:x:%d:%d::/nonexistent:/bin/sh\n"
                        "xdbob:x:%d:%d::/nonexistent:/bin/sh\n"
                        "xdcarol:x:%d:%d::/nonexistent:/bin/sh\n",
                        H_UID_ALICE, H_UID_ALICE, H_UID_BOB, H_UID_BOB, H_UID_CAROL, H_UID_CAROL);
        h_write_file(H_ROOT "/passwd", buf, 0644, 0);
        if (mount(H_ROOT "/passwd", "/etc/passwd", NULL, MS_BIND, NULL) < 0)
                die("bind /etc/passwd");
}

void h_set_active_vt(int vt) {
        char buf[32];
        (void) snprintf(buf, sizeof buf, "tty%d\n", vt);
        /* Rewrite in place: the bind mount keeps pointing at this inode. */
        int fd = open(H_ROOT "/active", O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0 || write(fd, buf, strlen(buf)) < 0)
                die("active");
        (void) close(fd);
}

int h_lock_waited;

/* login.defs as the tests': H_ROOT's file bound over the machine's, so
 * that the pass after the lock takes the tests' bound of system accounts,
 * not the machine's (the default, 999, unless a test sets another). */
#define LOGIN_DEFS_DEFAULT "UID_MIN\t\t\t 1000\n"
static bool login_defs_bound;

static void bind_login_defs(void) {
        struct stat st;

        h_write_file(H_ROOT "/login.defs", LOGIN_DEFS_DEFAULT, 0644, 0);
        if (stat("/etc/login.defs", &st) < 0 || !S_ISREG(st.st_mode))
                return; /* none: the core's default, 999, is the tests' too */
        if (mount(H_ROOT "/login.defs", "/etc/login.defs", NULL, MS_BIND, NULL) < 0)
                die("bind /etc/login.defs");
        login_defs_bound = true;
}

bool h_set_login_defs(const char *content) {
        const char *text = content ? content : LOGIN_DEFS_DEFAULT;
        /* rewritten in place: the bind mount keeps pointing at this inode */
        int fd = open(H_ROOT "/login.defs", O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text) ||
            fchmod(fd, 0644) < 0)
                die("login.defs");
        (void) close(fd);
        return login_defs_bound;
}

bool h_set_login_defs_link(bool on) {
        const char *link = H_ROOT "/login.defs.link";
        char fd_path[64];
        struct stat st;
        int fd;

        if (!login_defs_bound)
                return false;
        /* what the file system says, not a flag: a test's child may have
         * bound the link */
        while (lstat("/etc/login.defs", &st) == 0 && S_ISLNK(st.st_mode))
                if (umount2("/etc/login.defs", UMOUNT_NOFOLLOW) < 0)
                        die("umount the /etc/login.defs link");
        if (!on)
                return true;
        (void) unlink(link);
        if (symlink(H_ROOT "/login.defs", link) < 0)
                die("login.defs link");
        /* mount(2) follows a link it is given; the fd's path in /proc is
         * the link itself */
        fd = open(link, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                die("login.defs link");
        (void) snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%d", fd);
        if (mount(fd_path, "/etc/login.defs", NULL, MS_BIND, NULL) < 0)
                die("bind the login.defs link");
        (void) close(fd);
        return true;
}

/* In a new mount namespace: makes it private, a tmpfs /run with H_ROOT
 * (the PAM service files, the test users' passwd bound over /etc/passwd,
 * the tests' login.defs over the machine's) and the active VT's file. */
static void make_run(void) {
        const char *step = NULL;
        int r = h_mounts_make_private(&step);

        if (r < 0) {
                errno = -r;
                die(step);
        }
        if (mount("xdevtest", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
                die("mount /run");
        if (mkdir(H_ROOT, 0755) < 0 || mkdir(H_PAMDIR, 0755) < 0)
                die("mkdir " H_ROOT);
        add_users();
        bind_login_defs();
        h_write_file(H_ROOT "/active", "tty1\n", 0644, 0);
}

int h_init(void) {
        if (geteuid() != 0) {
                fprintf(stderr, "not root: skipping\n");
                exit(77);
        }
        /* Test programs share the machine's VTs: one at a time. The lock
         * is held until this process and all its children are gone.
         * H_LOCK_WAIT=SECONDS bounds the wait (the benchmark's choice: a
         * stuck test must not block it forever); the free-VT probe below
         * still keeps us off VTs in use. */
        int lock = open("/tmp/.pam_xdevices-tests.lock", O_RDWR | O_CREAT | O_NOFOLLOW, 0600);
        const char *wait_s = getenv("H_LOCK_WAIT");
        if (lock < 0)
                die("test lock");
        if (!wait_s) {
                if (flock(lock, LOCK_EX) < 0)
                        die("test lock");
        } else
                while (flock(lock, LOCK_EX | LOCK_NB) < 0) {
                        if (errno != EWOULDBLOCK)
                                die("test lock");
                        if (h_lock_waited == 0)
                                fprintf(stderr,
                                        "waiting for the test lock (another test is running) ...\n");
                        if (++h_lock_waited > atoi(wait_s)) {
                                fprintf(stderr,
                                        "the test lock is still held after %s s (see /proc/locks); "
                                        "going on without it\n",
                                        wait_s);
                                break;
                        }
                        sleep(1);
                }
        /* A test talks to children it may have killed: a write into a dead
         * child's pipe must fail with EPIPE, which the caller reads as that
         * death, not kill the test with SIGPIPE. Programs the tests exec get
         * the default back (h_run_helper). */
        if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
                die("SIGPIPE");
        if (unshare(CLONE_NEWNS) < 0)
                die("unshare");
        make_run();
        if (mount(H_ROOT "/active", "/sys/class/tty/tty0/active", NULL, MS_BIND, NULL) < 0)
                die("bind active");
        make_dev();
        make_sys_char();
        /* Several consecutive VTs no getty or session uses. */
        for (int vt = 20; vt + H_N_VTS - 1 <= 63; vt++) {
                bool ok = true;
                for (int i = 0; i < H_N_VTS && ok; i++)
                        ok = h_vt_is_free(vt + i);
                if (ok) {
                        h_vt = vt;
                        return vt;
                }
        }
        fprintf(stderr, "harness: no %d free VTs between 20 and 63\n", H_N_VTS);
        exit(99);
}

int h_init_root(void) {
        (void) h_init();
        return 0;
}

const char *h_fault_helper;

int h_init_fault_build(void) {
        (void) h_init();
        h_fault_helper = h_use_fault_build();
        return 0;
}

static void write_proc_self(const char *file, const char *text) {
        char p[64];
        int fd;

        (void) snprintf(p, sizeof p, "/proc/self/%s", file);
        fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text))
                die(p);
        (void) close(fd);
}

int h_init_userns(void) {
        char map[64];
        uid_t uid = geteuid();
        gid_t gid = getegid();

        if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
                die("SIGPIPE");
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
                fprintf(stderr, "harness: no user namespace (%s): skipping\n", strerror(errno));
                return 77;
        }
        /* this user is root in the namespace, as the files the module
         * trusts (its config, the service file) must be root's */
        write_proc_self("setgroups", "deny");
        (void) snprintf(map, sizeof map, "0 %u 1\n", (unsigned) uid);
        write_proc_self("uid_map", map);
        (void) snprintf(map, sizeof map, "0 %u 1\n", (unsigned) gid);
        write_proc_self("gid_map", map);
        userns = true;
        make_run();
        make_dev();
        /* no VT is used: these numbers name none in this /dev */
        h_vt = 20;
        return 0;
}

bool h_in_userns(void) {
        return userns;
}

const char *h_use_fault_build(void) {
        const char *helper = getenv("XDEV_TEST_HELPER"), *module = getenv("XDEV_TEST_MODULE");

        if (!helper || !module) {
                fprintf(stderr, "XDEV_TEST_HELPER and XDEV_TEST_MODULE must be set\n");
                exit(99);
        }
        if (setenv("XDEV_MODULE", module, 1) < 0) /* h_fresh writes it into the service file */
                die("setenv");
        return helper;
}

static const char default_conf[] =
        "# test config\n"
        "devices = glob\n"
        "glob = drm:/dev/dri/card*\n"
        "glob = drm:/dev/dri/renderD*\n"
        "glob = input:/dev/input/event*\n"
        "glob = input:/dev/input/mouse*\n"
        "glob = input:/dev/input/mice\n"
        "glob = input:/dev/input/js*\n"
        "glob = console:/dev/tty0\n"
        "logind = ignore\n";

/* A logger child drains /dev/log into a file at once: an undrained datagram
 * socket would block every sender after a few messages. */
static pid_t log_pid = -1;
static off_t log_seen;
static unsigned log_marks;

static void log_listen(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
        int fd, out;

        if (log_pid > 0) {
                (void) kill(log_pid, SIGKILL);
                (void) waitpid(log_pid, NULL, 0);
        }
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                die("/dev/log");
        (void) chmod("/dev/log", 0666);
        out = open(H_ROOT "/syslog", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
        if (out < 0)
                die("syslog file");
        log_seen = 0;
        fflush(NULL);
        log_pid = fork();
        if (log_pid < 0)
                die("fork");
        if (log_pid == 0) {
                char msg[2048], line[2100];
                ssize_t n;
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                while ((n = recv(fd, msg, sizeof msg - 1, 0)) >= 0) {
                        msg[n] = '\0';
                        /* drop "<prio>Mmm dd hh:mm:ss " down to "tag: text" */
                        const char *p = strchr(msg, '>');
                        p = p ? p + 1 : msg;
                        if (strlen(p) > 16 && p[3] == ' ' && p[6] == ' ' && p[9] == ':')
                                p += 16;
                        int len = snprintf(line, sizeof line, "%s\n", p);
                        if (write(out, line, (size_t) len) < 0)
                                _exit(1);
                }
                _exit(0);
        }
        (void) close(fd);
        (void) close(out);
}

char *h_log_take(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
        char mark[64], *buf;
        size_t cap = 1 << 20;
        ssize_t n = 0;
        int fd;

        /* A marker through the same socket: once it is in the file, so is
         * everything sent before it. */
        (void) snprintf(mark, sizeof mark, "<15>harness-mark-%u", ++log_marks);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || sendto(fd, mark, strlen(mark), 0, (struct sockaddr *) &sa, sizeof sa) < 0)
                die("log mark");
        (void) close(fd);
        buf = calloc(1, cap);
        if (!buf)
                die("calloc");
        /* Bounded at 60 s; the logger child may be slow to run under load. */
        for (int tries = 0; tries < 6000; tries++) {
                fd = open(H_ROOT "/syslog", O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        die("syslog file");
                n = pread(fd, buf, cap - 1, log_seen);
                (void) close(fd);
                if (n < 0)
                        die("pread");
                buf[n] = '\0';
                char *m = strstr(buf, mark + 4);
                if (m) {
                        *m = '\0';
                        log_seen +=
                                (off_t) (strchr(m + 1, '\n') ? strchr(m + 1, '\n') + 1 - buf : n);
                        return buf;
                }
                usleep(10000);
        }
        return buf;
}

int h_vt_openqry(void) {
        int fd = open("/dev/tty0", O_RDONLY | O_NOCTTY | O_CLOEXEC), vt = -1;

        if (fd < 0)
                return -1;
        if (ioctl(fd, VT_OPENQRY, &vt) < 0)
                vt = -1;
        (void) close(fd);
        return vt;
}

/* What a test left under /run/user (a session killed and never reaped):
 * unmounted and removed, links and all. */
static void rundirs_clean(void) {
        DIR *d = opendir("/run/user");
        struct dirent *e;
        char p[300];

        if (!d)
                return;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.') {
                        (void) snprintf(p, sizeof p, "/run/user/%s", e->d_name);
                        (void) umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW);
                        if (rmdir(p) < 0 && unlink(p) < 0 && errno != ENOENT) {
                                char cmd[340];
                                (void) snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
                                if (system(cmd) != 0)
                                        die("rm -rf /run/user/...");
                        }
                }
        (void) closedir(d);
        (void) rmdir("/run/user");
}

void h_fresh(const char *conf, const char *args) {
        char svc[1024];
        const char *module = getenv("XDEV_MODULE");

        if (!module)
                module = "../pam_xdevices/.libs/pam_xdevices.so";
        make_dev();
        make_sys_char();
        if (system("rm -rf /run/xdevices") != 0)
                die("rm -rf /run/xdevices");
        rundirs_clean();
        h_write_file(H_CONF, conf ? conf : default_conf, 0644, 0);
        (void) snprintf(svc, sizeof svc,
                        "auth required pam_permit.so\n"
                        "account required pam_permit.so\n"
                        "session required %s conf=" H_CONF " %s\n",
                        module, args ? args : "");
        h_write_file(H_PAMDIR "/" H_SERVICE, svc, 0644, 0);
        h_write_file(H_PAMDIR "/other-service", svc, 0644, 0);
        h_set_active_vt(1);
        (void) h_set_login_defs(NULL);
        (void) h_set_login_defs_link(false);
        log_listen();
        (void) unlink(H_ROOT "/conv");
}

char *h_node_describe(const char *path) {
        struct stat st;
        char *out = NULL, *text = NULL;
        acl_t acl;

        if (lstat(path, &st) < 0)
                return strdup("(missing)");
        acl = S_ISLNK(st.st_mode) ? NULL : acl_get_file(path, ACL_TYPE_ACCESS);
        if (acl) {
                text = acl_to_any_text(acl, NULL, ',', TEXT_ABBREVIATE | TEXT_NUMERIC_IDS);
                acl_free(acl);
        }
        if (asprintf(&out, "%u %u %06o %u:%u %s", (unsigned) st.st_uid, (unsigned) st.st_gid,
                     (unsigned) st.st_mode, major(st.st_rdev), minor(st.st_rdev),
                     text ? text : "-") < 0)
                out = NULL;
        if (text)
                acl_free(text);
        return out;
}

const char *h_acl_of(const char *path, uid_t uid) {
        static char buf[4];
        acl_t acl = acl_get_file(path, ACL_TYPE_ACCESS);
        acl_entry_t e;

        if (!acl)
                return NULL;
        buf[0] = '\0';
        for (int id = ACL_FIRST_ENTRY; acl_get_entry(acl, id, &e) == 1; id = ACL_NEXT_ENTRY) {
                acl_tag_t tag;
                acl_permset_t ps;
                uid_t *q;
                if (acl_get_tag_type(e, &tag) < 0 || tag != ACL_USER)
                        continue;
                q = acl_get_qualifier(e);
                if (q && *q == uid && acl_get_permset(e, &ps) == 0) {
                        int i = 0;
                        if (acl_get_perm(ps, ACL_READ) == 1)
                                buf[i++] = 'r';
                        if (acl_get_perm(ps, ACL_WRITE) == 1)
                                buf[i++] = 'w';
                        buf[i] = '\0';
                }
                if (q)
                        acl_free(q);
        }
        acl_free(acl);
        return buf;
}

/* The application's side of the PAM conversation, as login(1) has it for
 * messages: each info or error message is appended to H_ROOT/conv as
 * "info: TEXT" or "error: TEXT" (h_conv_take reads them). A prompt gets
 * PAM_CONV_ERR: the module must never ask anything. */
static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
        struct pam_response *r;
        int fd;

        (void) data;
        *resp = NULL;
        for (int i = 0; i < n; i++)
                if (msg[i]->msg_style != PAM_TEXT_INFO && msg[i]->msg_style != PAM_ERROR_MSG)
                        return PAM_CONV_ERR;
        if (n <= 0 || n > PAM_MAX_NUM_MSG)
                return PAM_CONV_ERR;
        r = calloc((size_t) n, sizeof *r);
        if (!r)
                return PAM_BUF_ERR;
        fd = open(H_ROOT "/conv", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        for (int i = 0; fd >= 0 && i < n; i++)
                (void) !dprintf(fd, "%s: %s\n",
                                msg[i]->msg_style == PAM_TEXT_INFO ? "info" : "error", msg[i]->msg);
        if (fd >= 0)
                (void) close(fd);
        *resp = r;
        return PAM_SUCCESS;
}

char *h_conv_take(void) {
        int fd = open(H_ROOT "/conv", O_RDONLY | O_CLOEXEC);
        char *buf = calloc(1, 65536);
        ssize_t n;

        if (!buf)
                die("calloc");
        if (fd < 0)
                return buf;
        n = read(fd, buf, 65535);
        (void) close(fd);
        if (n < 0)
                die("read conv");
        (void) unlink(H_ROOT "/conv");
        return buf;
}

static void child_session(const char *user, int vt, const struct h_opts *o, int in, int out) {
        struct pam_conv c = { conv, NULL };
        pam_handle_t *pamh = NULL;
        char tty[32], path[32], cmd[128] = "", reply[128];
        const char *v;
        int r;

        pid_t shell = 0;
        int ttyfd = -1;

        (void) snprintf(path, sizeof path, "/dev/tty%d", vt);
        if (o->no_ctty || userns) /* h_init_userns: there is no VT */
                (void) setsid();
        else {
                ttyfd = h_vt_lead(vt, false);
                if (ttyfd < 0) {
                        fprintf(stderr, "harness: cannot make %s the controlling tty: %s\n", path,
                                strerror(errno));
                        _exit(98);
                }
                /* kept open: the last close of a tty clears it as the
                 * session's controlling tty */
        }
        if (o->not_leader) {
                /* the leader waits for PAM's process like a shell for su */
                pid_t pid = fork();
                int status;
                if (pid < 0)
                        _exit(93);
                if (pid > 0) {
                        (void) close(in);
                        (void) close(out);
                        _exit(waitpid(pid, &status, 0) == pid && WIFEXITED(status)
                                      ? WEXITSTATUS(status)
                                      : 92);
                }
        }
        (void) snprintf(tty, sizeof tty, "tty%d", vt);
        int fds_before = h_count_fds();
        r = pam_start_confdir(o->service ? o->service : H_SERVICE, user, &c, H_PAMDIR, &pamh);
        if (r != PAM_SUCCESS)
                _exit(97);
        (void) pam_set_item(pamh, PAM_TTY, o->tty ? o->tty : tty);
        if (o->rhost)
                (void) pam_set_item(pamh, PAM_RHOST, o->rhost);
        if (o->ruser)
                (void) pam_set_item(pamh, PAM_RUSER, o->ruser);
        for (const char **e = o->env; e && *e; e++)
                (void) pam_putenv(pamh, *e);
        if (o->fault)
                (void) setenv("XDEV_FAULT", o->fault, 1);
        r = pam_open_session(pamh, 0);
        (void) unsetenv("XDEV_FAULT");
        if (o->detach && ttyfd >= 0) {
                /* util-linux login's fork_session(): the parent drops the
                 * tty, the child leads a new session on it */
                (void) signal(SIGHUP, SIG_IGN);
                /* login's standard input is the VT (the count of fds
                 * stays: this replaces the test's fd 0) */
                if (dup2(ttyfd, 0) < 0)
                        _exit(90);
                (void) ioctl(ttyfd, TIOCNOTTY);
                /* a test that fails while this session is stopped must not
                 * leave it stopped, holding the test lock, for ever */
                if (o->detach_stop)
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (o->detach_stop == H_DETACH_AT_NOTTY)
                        (void) raise(SIGSTOP);
                (void) setsid();
                shell = fork();
                if (shell == 0) {
                        if (o->detach_stop)
                                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (o->detach_stop == H_DETACH_AT_FORK)
                                (void) raise(SIGSTOP);
                        (void) setsid();
                        if (o->detach_stop == H_DETACH_AT_SETSID)
                                (void) raise(SIGSTOP);
                        if (h_vt_lead(vt, false) < 0)
                                _exit(91);
                        for (;;)
                                pause();
                }
                /* after the fork, as login closes its standard input */
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0)
                        _exit(90);
                (void) close(null);
                (void) close(ttyfd);
                fds_before--;
                /* the child has the VT once it leads its session on it */
                for (int tries = 0; shell > 0 && tries < 500; tries++) {
                        char sp[64], sb[512];
                        (void) snprintf(sp, sizeof sp, "/proc/%d/stat", (int) shell);
                        int sfd = open(sp, O_RDONLY | O_CLOEXEC);
                        ssize_t sn = sfd >= 0 ? read(sfd, sb, sizeof sb - 1) : -1;
                        if (sfd >= 0)
                                (void) close(sfd);
                        if (sn > 0) {
                                sb[sn] = '\0';
                                char *q = strrchr(sb, ')');
                                int ppid, pgrp, sid, ttynr = 0;
                                if (q &&
                                    sscanf(q + 2, "%*c %d %d %d %d", &ppid, &pgrp, &sid, &ttynr) ==
                                            4 &&
                                    ttynr != 0)
                                        break;
                        }
                        usleep(10000);
                }
        }
        v = pam_getenv(pamh, "XDG_VTNR");
        (void) snprintf(reply, sizeof reply, "%d %s %s %s", r, v ? v : "-",
                        pam_getenv(pamh, "XDG_SEAT") ? pam_getenv(pamh, "XDG_SEAT") : "-",
                        pam_getenv(pamh, "XDG_RUNTIME_DIR") ? pam_getenv(pamh, "XDG_RUNTIME_DIR")
                                                            : "-");
        if (write(out, reply, strlen(reply) + 1) < 0)
                _exit(96);
        /* "c" then the fault to close with, if any; "x": exit without
         * closing (h_session_exit); "k": end the detached child first
         * (h_session_end_child), then "c" */
        if (read(in, cmd, sizeof cmd - 1) <= 0)
                _exit(95);
        if (cmd[0] == 'x')
                _exit(0);
        if (cmd[0] == 'k' && shell > 0) {
                (void) kill(shell, SIGKILL);
                (void) waitpid(shell, NULL, 0);
                shell = 0;
                memset(cmd, 0, sizeof cmd);
                if (write(out, "k", 1) != 1 || read(in, cmd, sizeof cmd - 1) <= 0)
                        _exit(95);
        }
        if (cmd[0] != 'c')
                _exit(95);
        if (shell > 0) {
                (void) kill(shell, SIGKILL);
                (void) waitpid(shell, NULL, 0);
        }
        if (cmd[1])
                (void) setenv("XDEV_FAULT", cmd + 1, 1);
        r = r == PAM_SUCCESS ? pam_close_session(pamh, 0) : PAM_SUCCESS;
        pam_end(pamh, r);
        closelog(); /* pam_syslog's socket is libc's, not a leak of ours */
        if (h_count_fds() != fds_before) {
                fprintf(stderr, "harness: %d fds open after the session, %d before\n",
                        h_count_fds(), fds_before);
                _exit(94);
        }
        _exit(r == PAM_SUCCESS ? 0 : 10 + (r & 0x7f));
}

struct h_session *h_session_start(const char *user, int vt, const struct h_opts *opts) {
        static const struct h_opts none;
        struct h_session *s = calloc(1, sizeof *s);
        int to[2], from[2];

        if (!s || pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
                die("pipe");
        s->faulty = opts && opts->fault;
        s->open_ret = -1;
        fflush(NULL);
        s->pid = fork();
        if (s->pid < 0)
                die("fork");
        if (s->pid == 0) {
                (void) close(to[1]);
                (void) close(from[0]);
                child_session(user, vt, opts ? opts : &none, to[0], from[1]);
        }
        (void) close(to[0]);
        (void) close(from[1]);
        s->to_child = to[1];
        s->from_child = from[0];
        return s;
}

int h_session_opened(struct h_session *s) {
        char reply[128] = "";
        ssize_t n;

        n = read(s->from_child, reply, sizeof reply - 1);
        if (n <= 0) {
                int status = 0;
                if (s->faulty)
                        return s->open_ret = -1; /* h_session_close_status reaps it */
                (void) waitpid(s->pid, &status, 0);
                fprintf(stderr,
                        "harness: session child died before open_session returned (status %d)\n",
                        status);
                exit(99);
        }
        reply[n] = '\0';
        if (sscanf(reply, "%d %31s %31s %63s", &s->open_ret, s->xdg_vtnr, s->xdg_seat,
                   s->xdg_runtime_dir) != 4)
                die("reply");
        return s->open_ret;
}

struct h_session *h_session_open(const char *user, int vt, const struct h_opts *opts) {
        struct h_session *s = h_session_start(user, vt, opts);

        (void) h_session_opened(s);
        return s;
}

int h_session_close_status(struct h_session *s, const char *fault) {
        char cmd[128];
        int status = 0;

        (void) snprintf(cmd, sizeof cmd, "c%s", fault ? fault : "");
        /* EPIPE: the child is already gone; its status says how. */
        if (s->open_ret != -1 && write(s->to_child, cmd, strlen(cmd) + 1) < 0 && errno != EPIPE)
                die("write");
        if (waitpid(s->pid, &status, 0) < 0)
                die("waitpid");
        (void) close(s->to_child);
        (void) close(s->from_child);
        free(s);
        return status;
}

ssize_t h_send_file(int sock, const void *data, size_t len, int fd) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct iovec iov = { (void *) data, len };
        struct msghdr mh = { .msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = ctl.buf,
                             .msg_controllen = sizeof ctl.buf };
        struct cmsghdr *c;

        memset(&ctl, 0, sizeof ctl);
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof fd);
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
        return sendmsg(sock, &mh, MSG_NOSIGNAL);
}

pid_t h_holder_spawn(int (*setup)(void *data), void *data, uid_t uid, bool ignore_term) {
        return h_holder_spawn_run(setup, NULL, data, uid, ignore_term);
}

pid_t h_holder_spawn_run(int (*setup)(void *data), void (*run)(void *data), void *data, uid_t uid,
                         bool ignore_term) {
        int p[2];
        char c;
        pid_t pid;

        if (pipe(p) < 0)
                die("pipe");
        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                int r;
                (void) close(p[0]);
                /* never check's handler, which signals the test's process
                 * group: a holder of the same user would take the others */
                (void) signal(SIGTERM, ignore_term ? SIG_IGN : SIG_DFL);
                r = setup ? setup(data) : 0;
                if (r != 0)
                        _exit(r);
                /* glibc applies set*id to every thread */
                if (uid != 0 &&
                    (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
                     setresuid(uid, uid, uid) < 0))
                        _exit(11);
                (void) !write(p[1], "r", 1);
                if (run)
                        run(data);
                for (;;)
                        pause();
        }
        (void) close(p[1]);
        if (read(p[0], &c, 1) != 1) {
                (void) waitpid(pid, NULL, 0);
                pid = -1;
        }
        (void) close(p[0]);
        return pid;
}

static int name_self(void *data) {
        return prctl(PR_SET_NAME, (unsigned long) data, 0, 0, 0) < 0 ? 12 : 0;
}

pid_t h_fake_logind_start(const char *comm, uid_t uid) {
        return h_holder_spawn(name_self, (void *) comm, uid, false);
}

bool h_host_runs_logind(void) {
        static const char *const names[] = { "systemd-logind\n", "elogind\n", "elogind-daemon\n" };
        struct dirent *de;
        bool found = false;
        DIR *d = opendir("/proc");

        if (!d)
                die("opendir /proc");
        while (!found && (de = readdir(d))) {
                char path[300], comm[64] = "";
                struct stat st;
                FILE *f;

                (void) snprintf(path, sizeof path, "/proc/%s/comm", de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                if (!fgets(comm, sizeof comm, f))
                        comm[0] = '\0';
                (void) fclose(f);
                (void) snprintf(path, sizeof path, "/proc/%s", de->d_name);
                for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                        found = found ||
                                (strcmp(comm, names[i]) == 0 && stat(path, &st) == 0 &&
                                 st.st_uid == 0);
        }
        (void) closedir(d);
        return found;
}

void h_seats_make(void) {
        if ((mkdir("/run/systemd", 0755) < 0 && errno != EEXIST) ||
            (mkdir("/run/systemd/seats", 0755) < 0 && errno != EEXIST))
                die("mkdir /run/systemd/seats");
        h_write_file("/run/systemd/seats/seat0",
                     "# This is private data. Do not parse.\nIS_SEAT0=1\n", 0644, 0);
}

void h_seats_remove(void) {
        if (system("rm -rf /run/systemd/seats") != 0)
                die("rm -rf /run/systemd/seats");
}

struct opens {
        const char *path;
        int n;
};

static int holder_opens(void *data) {
        const struct opens *o = data;

        for (int i = 0; i < o->n; i++)
                if (o->path && open(o->path, O_RDONLY | O_NOCTTY | O_CLOEXEC) < 0)
                        return 10;
        return 0;
}

pid_t h_holder_start(const char *path, int n, uid_t uid, bool ignore_term) {
        struct opens o = { path, n };
        pid_t pid = h_holder_spawn(holder_opens, &o, uid, ignore_term);

        if (pid < 0)
                die(path ? path : "holder");
        return pid;
}

/* The subordinate-uid holder's child: says which step failed and why
 * ("e" then the text), for the parent to print. */
static void subuid_fail(int fd, const char *step) {
        char msg[160];
        int n = snprintf(msg, sizeof msg, "e%s: %s", step, strerror(errno));

        if (n > 0)
                (void) !write(fd, msg, (size_t) n < sizeof msg ? (size_t) n : sizeof msg - 1);
        _exit(10);
}

bool h_wait_exit(pid_t pid, int ms, int *status) {
        int st = 0;

        for (int waited = 0;; waited += 20) {
                if (waitpid(pid, &st, WNOHANG) == pid) {
                        if (status)
                                *status = st;
                        return true;
                }
                if (waited >= ms)
                        break;
                (void) usleep(20 * 1000);
        }
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        return false;
}

int h_crowd_start(uid_t uid, size_t n, pid_t *pids) {
        int p[2];
        size_t got = 0;

        if (n == 0 || pipe(p) < 0)
                return -1;
        pid_t lead = fork();
        if (lead < 0)
                return -1;
        if (lead == 0) {
                (void) close(p[0]);
                (void) signal(SIGTERM, SIG_DFL);
                if (setpgid(0, 0) < 0 || setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
                    setresuid(uid, uid, uid) < 0)
                        _exit(10);
                pid_t me = getpid();
                if (write(p[1], &me, sizeof me) != (ssize_t) sizeof me)
                        _exit(11);
                for (size_t i = 1; i < n; i++) {
                        pid_t c = fork();
                        if (c < 0)
                                _exit(12);
                        if (c == 0) {
                                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                                pid_t self = getpid();
                                if (write(p[1], &self, sizeof self) != (ssize_t) sizeof self)
                                        _exit(11);
                                (void) close(p[1]);
                                for (;;)
                                        (void) pause();
                        }
                }
                (void) close(p[1]);
                for (;;)
                        (void) pause();
        }
        (void) close(p[1]);
        while (got < n && read(p[0], &pids[got], sizeof pids[got]) == (ssize_t) sizeof pids[got])
                got++;
        (void) close(p[0]);
        if (got == n)
                return 0;
        (void) kill(-lead, SIGKILL);
        (void) kill(lead, SIGKILL);
        (void) waitpid(lead, NULL, 0);
        return -1;
}

size_t h_crowd_stop(const pid_t *pids, size_t n) {
        size_t alive = 0;

        for (size_t i = 0; i < n; i++)
                if (kill(pids[i], 0) == 0) {
                        char path[32], st[512];
                        /* a zombie of the crowd is no survivor */
                        (void) snprintf(path, sizeof path, "/proc/%d/stat", (int) pids[i]);
                        FILE *f = fopen(path, "re");
                        size_t l = f ? fread(st, 1, sizeof st - 1, f) : 0;
                        if (f)
                                (void) fclose(f);
                        st[l] = '\0';
                        const char *e = strrchr(st, ')');
                        if (e && e[1] == ' ' && e[2] != 'Z')
                                alive++;
                }
        (void) kill(-pids[0], SIGKILL);
        (void) waitpid(pids[0], NULL, 0);
        /* until every one is gone: reparented to a subreaper (this
         * process, or one above it) they would stay zombies of UID, and
         * fill the next sweep's candidates */
        for (int ms = 0; ms < 3000; ms += 10) {
                size_t left = 0;
                for (size_t i = 1; i < n; i++) {
                        (void) waitpid(pids[i], NULL, WNOHANG);
                        if (kill(pids[i], 0) == 0)
                                left++;
                }
                if (left == 0)
                        break;
                (void) usleep(10 * 1000);
        }
        return alive;
}

pid_t h_fat_start(uid_t uid, unsigned fds, const char *path) {
        /* the fds as root, then setpriv to UID, which writes "r" to fd 3
         * once it is UID */
        static const char script[] =
                "ulimit -n $(($1 + 64)) || exit 9\n"
                "i=0; while [ $i -lt $1 ]; do exec {f}</dev/null || exit 10; i=$((i + 1)); done\n"
                "[ -z \"$3\" ] || exec {g}<\"$3\" || exit 11\n"
                "exec setpriv --reuid=\"$2\" --regid=\"$2\" --clear-groups "
                "sh -c 'echo r >&3; exec sleep 100000 3>&-'\n";
        char n[16], u[16];
        int p[2];
        char c = 'x';

        snprintf(n, sizeof n, "%u", fds);
        snprintf(u, sizeof u, "%u", (unsigned) uid);
        if (pipe(p) < 0)
                return -1;
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                (void) signal(SIGTERM, SIG_DFL);
                if (dup2(p[1], 3) < 0)
                        _exit(8);
                execl("/bin/bash", "bash", "-c", script, "fat", n, u, path ? path : "",
                      (char *) NULL);
                _exit(12);
        }
        (void) close(p[1]);
        if (read(p[0], &c, 1) != 1 || c != 'r') {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                pid = -1;
        }
        (void) close(p[0]);
        return pid;
}

int h_map_a_ring(void *data) {
        const struct h_ring_arg *a = data;
        struct io_uring_params params = { 0 };
        struct io_uring_rsrc_update self = { .offset = UINT32_MAX };
        int ring = (int) syscall(SYS_io_uring_setup, 4, &params);
        int fd = open(a->path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        size_t len = params.sq_off.array + params.sq_entries * sizeof(uint32_t);

        if (ring < 0 || fd < 0)
                return 12;
        if (mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                 IORING_OFF_SQ_RING) == MAP_FAILED ||
            syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1) < 0)
                return 13;
        (void) close(fd);
        if (!a->drop_fd)
                return 0;
        self.data = (uint64_t) ring;
        if (syscall(SYS_io_uring_register, ring, IORING_REGISTER_RING_FDS, &self, 1) != 1)
                return 14;
        (void) close(ring);
        /* still usable: a no-op submitted through the registered index */
        if (syscall(SYS_io_uring_enter, self.offset, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0) <
            0)
                return 15;
        return 0;
}

char h_logbuf[16384];

void h_log_capture(void *userdata, int priority, const char *fmt, va_list ap) {
        size_t len = strlen(h_logbuf);

        (void) userdata;
        (void) priority;
        if (len + 2 >= sizeof h_logbuf)
                return;
        (void) vsnprintf(h_logbuf + len, sizeof h_logbuf - len - 1, fmt, ap);
        (void) strcat(h_logbuf, "\n");
}

int h_hide_a_ring(void *data) {
        static const char nul[1] = { 0 };
        static char cued[1];
        static struct __kernel_timespec every;
        const struct h_hidden_arg *a = data;
        unsigned entries = 2 * a->n;
        struct io_uring_params params = { 0 };
        struct io_uring_rsrc_update self = { .offset = UINT32_MAX };
        int ring = (int) syscall(SYS_io_uring_setup, entries, &params);
        int fd = open(a->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        size_t sq_len = params.sq_off.array + params.sq_entries * sizeof(uint32_t);
        size_t sqe_len = params.sq_entries * sizeof(struct io_uring_sqe);
        char *sq;
        struct io_uring_sqe *sqes;

        if (ring < 0 || fd < 0 || params.sq_entries < entries ||
            (a->keep_path && open(a->path, O_PATH | O_CLOEXEC) < 0))
                return 12;
        sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                  IORING_OFF_SQ_RING);
        sqes = mmap(NULL, sqe_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                    IORING_OFF_SQES);
        int files[2] = { fd, a->cue };
        if (sq == MAP_FAILED || sqes == MAP_FAILED ||
            syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, files, a->cue > 0 ? 2 : 1) <
                    0)
                return 13;
        (void) close(fd);
        every.tv_sec = a->ms / 1000;
        every.tv_nsec = (long long) (a->ms % 1000) * 1000000;
        for (unsigned i = 0; i < entries; i++) {
                struct io_uring_sqe *e = &sqes[i];
                memset(e, 0, sizeof *e);
                if (i % 2 == 0 && a->cue > 0) {
                        e->opcode = IORING_OP_READ;
                        e->flags = IOSQE_FIXED_FILE;
                        e->fd = 1;
                        e->addr = (uint64_t) (uintptr_t) cued;
                        e->len = 1;
                        e->off = (uint64_t) -1;
                } else if (i % 2 == 0) {
                        e->opcode = IORING_OP_TIMEOUT;
                        e->addr = (uint64_t) (uintptr_t) &every;
                        e->len = 1;
                } else {
                        e->opcode = IORING_OP_WRITE;
                        e->flags = IOSQE_FIXED_FILE;
                        e->addr = (uint64_t) (uintptr_t) nul;
                        e->len = 1;
                        e->off = (uint64_t) -1;
                }
                if (i + 1 < entries)
                        e->flags |= IOSQE_IO_HARDLINK;
                ((uint32_t *) (sq + params.sq_off.array))[i] = i;
        }
        __atomic_store_n((uint32_t *) (sq + params.sq_off.tail), entries, __ATOMIC_RELEASE);
        self.data = (uint64_t) ring;
        if (syscall(SYS_io_uring_register, ring, IORING_REGISTER_RING_FDS, &self, 1) != 1)
                return 14;
        if (syscall(SYS_io_uring_enter, self.offset, entries, 0, IORING_ENTER_REGISTERED_RING, NULL,
                    0) != (long) entries)
                return 15;
        if (!a->keep_map) {
                (void) munmap(sq, sq_len);
                (void) munmap(sqes, sqe_len);
        }
        (void) close(ring);
        return 0;
}

static int subuid_open(void *data) {
        return open(data, O_RDONLY | O_NOCTTY | O_CLOEXEC) < 0 ? -1 : 0;
}

pid_t h_holder_start_subuid(const char *path, uid_t uid, uid_t subuid) {
        return h_holder_spawn_subuid(subuid_open, (void *) path, path, uid, subuid);
}

pid_t h_holder_spawn_subuid(int (*setup)(void *data), void *data, const char *what, uid_t uid,
                            uid_t subuid) {
        int go[2], ready[2];
        char c = 'x', p[64], map[64], why[160] = "";
        struct stat st;
        ssize_t n;
        pid_t pid;
        int fd;

        if (pipe(go) < 0 || pipe(ready) < 0)
                die("pipe");
        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                (void) signal(SIGTERM, SIG_DFL);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (setup(data) != 0)
                        subuid_fail(ready[1], what);
                if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
                    setresuid(uid, uid, uid) < 0 || prctl(PR_SET_DUMPABLE, 1) < 0)
                        subuid_fail(ready[1], "taking the uid");
                /* refused in a chroot: the root must be the mount namespace's */
                if (unshare(CLONE_NEWUSER) < 0)
                        subuid_fail(ready[1], "unshare(CLONE_NEWUSER)");
                (void) !write(ready[1], "u", 1);
                if (read(go[0], &c, 1) != 1 || setresuid(1, 1, 1) < 0)
                        _exit(11);
                (void) !write(ready[1], "r", 1);
                for (;;)
                        pause();
        }
        (void) close(go[0]);
        (void) close(ready[1]);
        n = read(ready[0], why, sizeof why - 1);
        if (n != 1 || why[0] != 'u') {
                fprintf(stderr, "harness: the subordinate-uid holder did not start: %s\n",
                        n > 1 && why[0] == 'e' ? why + 1 : "it died first");
                exit(99);
        }
        (void) snprintf(p, sizeof p, "/proc/%d/uid_map", (int) pid);
        (void) snprintf(map, sizeof map, "0 %u 1\n1 %u 1\n", (unsigned) uid, (unsigned) subuid);
        fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t) strlen(map))
                die("uid_map");
        (void) close(fd);
        if (write(go[1], "g", 1) != 1 || read(ready[0], &c, 1) != 1 || c != 'r')
                die("the subordinate-uid holder could not take its uid");
        (void) close(go[1]);
        (void) close(ready[0]);
        (void) snprintf(p, sizeof p, "/proc/%d", (int) pid);
        if (stat(p, &st) < 0 || st.st_uid != subuid)
                die("the subordinate-uid holder runs under another uid");
        return pid;
}

void h_session_close_begin(struct h_session *s) {
        if (write(s->to_child, "c", 2) < 0 && errno != EPIPE)
                die("write");
}

bool h_session_running(struct h_session *s) {
        siginfo_t info = { 0 };
        /* WNOWAIT: h_session_close_end still reaps it */
        if (waitid(P_PID, (id_t) s->pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
                die("waitid");
        return info.si_pid == 0;
}

int h_session_close_end(struct h_session *s) {
        int status = 0;

        if (waitpid(s->pid, &status, 0) < 0)
                die("waitpid");
        (void) close(s->to_child);
        (void) close(s->from_child);
        free(s);
        if (!WIFEXITED(status))
                return -1;
        return WEXITSTATUS(status) == 0 ? PAM_SUCCESS : WEXITSTATUS(status) - 10;
}

int h_session_close(struct h_session *s) {
        int status = h_session_close_status(s, NULL);

        if (!WIFEXITED(status))
                return -1;
        return WEXITSTATUS(status) == 0 ? PAM_SUCCESS : WEXITSTATUS(status) - 10;
}

void h_session_exit(struct h_session *s) {
        char path[64], buf[512];

        if (write(s->to_child, "x", 1) != 1)
                die("write");
        /* returns once the leader is a zombie, so callers see one */
        (void) snprintf(path, sizeof path, "/proc/%d/stat", (int) s->pid);
        for (int tries = 0; tries < 1000; tries++) {
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
                char *p;
                if (fd >= 0)
                        (void) close(fd);
                if (n > 0) {
                        buf[n] = '\0';
                        p = strrchr(buf, ')');
                        if (p && p[1] == ' ' && p[2] == 'Z')
                                return;
                }
                usleep(10000);
        }
        die("session leader did not become a zombie");
}

void h_session_end_child(struct h_session *s) {
        char c;
        if (write(s->to_child, "k", 1) != 1 || read(s->from_child, &c, 1) != 1)
                die("end child");
}

/* A process's state letter from /proc/PID/stat; '?' when unreadable. */
static char proc_state(pid_t pid) {
        char path[64], buf[512];
        ssize_t n;
        int fd;

        (void) snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return '?';
        n = read(fd, buf, sizeof buf - 1);
        (void) close(fd);
        if (n <= 0)
                return '?';
        buf[n] = '\0';
        char *q = strrchr(buf, ')');
        return q && q[1] == ' ' ? q[2] : '?';
}

pid_t h_session_stopped(struct h_session *s) {
        for (int tries = 0; tries < 1000; tries++) {
                char path[64], buf[128];
                if (proc_state(s->pid) == 'T')
                        return s->pid;
                (void) snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int) s->pid,
                                (int) s->pid);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
                if (fd >= 0)
                        (void) close(fd);
                int child = 0;
                if (n > 0) {
                        buf[n] = '\0';
                        child = atoi(buf);
                }
                if (child > 0 && proc_state(child) == 'T')
                        return child;
                usleep(5000);
        }
        die("the detached session never stopped");
        return -1;
}

void h_session_go(pid_t stopped) {
        if (kill(stopped, SIGCONT) < 0)
                die("SIGCONT");
}

void h_session_reap(struct h_session *s) {
        (void) waitpid(s->pid, NULL, 0);
        (void) close(s->to_child);
        (void) close(s->from_child);
        free(s);
}

void h_session_kill(struct h_session *s) {
        (void) kill(s->pid, SIGKILL);
        (void) waitpid(s->pid, NULL, 0);
        (void) close(s->to_child);
        (void) close(s->from_child);
        free(s);
}

int h_run_helper(const char *const *argv, const char *const *env, char **ret_err) {
        int errpipe[2], status;
        pid_t pid;

        if (pipe2(errpipe, O_CLOEXEC) < 0)
                die("pipe");
        fflush(NULL);
        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                (void) signal(SIGPIPE, SIG_DFL);
                (void) dup2(errpipe[1], STDERR_FILENO);
                (void) dup2(errpipe[1], STDOUT_FILENO);
                execve(argv[0], (char *const *) argv, (char *const *) env);
                _exit(127);
        }
        (void) close(errpipe[1]);
        {
                size_t cap = 4096, len = 0;
                char *buf = malloc(cap);
                ssize_t n;
                while (buf && (n = read(errpipe[0], buf + len, cap - len - 1)) > 0) {
                        len += (size_t) n;
                        if (cap - len < 2) {
                                char *nb = realloc(buf, cap *= 2);
                                if (!nb)
                                        break;
                                buf = nb;
                        }
                }
                if (buf)
                        buf[len] = '\0';
                if (ret_err)
                        *ret_err = buf;
                else
                        free(buf);
        }
        (void) close(errpipe[0]);
        if (waitpid(pid, &status, 0) < 0)
                die("waitpid");
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

const char *h_vt_path(int i) {
        static char paths[H_N_VTS][32];

        if (i < 0 || i >= H_N_VTS)
                return NULL;
        (void) snprintf(paths[i], sizeof paths[i], "/dev/tty%d", h_vt + i);
        return paths[i];
}

void h_snap_take(struct h_snap *s) {
        s->n = 0;
        for (size_t i = 0; i < h_n_shared_nodes; i++)
                s->path[s->n++] = h_shared_nodes[i];
        s->path[s->n++] = "/dev/tty0";
        for (int i = 0; i < H_N_VTS; i++)
                s->path[s->n++] = h_vt_path(i);
        for (size_t i = 0; i < s->n; i++)
                s->desc[i] = h_node_describe(s->path[i]);
}

char *h_snap_diff(const struct h_snap *s, const char *when) {
        char *out = NULL;

        for (size_t i = 0; i < s->n && !out; i++) {
                char *now = h_node_describe(s->path[i]);
                if (strcmp(s->desc[i], now) != 0 &&
                    asprintf(&out, "%s: %s was \"%s\", is \"%s\"", when, s->path[i], s->desc[i],
                             now) < 0)
                        die("asprintf");
                free(now);
        }
        return out;
}

void h_snap_free(struct h_snap *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->desc[i]);
        s->n = 0;
}

int h_count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        int n = 0;

        if (!d)
                die("opendir");
        while (readdir(d))
                n++;
        (void) closedir(d);
        return n - 3; /* ".", ".." and the DIR's own fd */
}
