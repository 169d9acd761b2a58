/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Lingering holders: the /proc scan and the policy decisions, with real
 * processes of test users holding real fds (VTs and tty0 open on the host;
 * EVIOCREVOKE and DROP_MASTER are proven in the qemu suite). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <dirent.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <security/pam_appl.h>

#include "harness.h"
#include "util.h"
#include "linger.h"
#include "core.h"
#include "follow.h"
#include "procfs.h"
#include "uring.h"
#include "runner.h"

static const struct xdev_log test_log = { .fn = h_log_capture };

struct holder {
        pid_t pid;
        int status;
        bool reaped;
};

static struct holder holder_start_n(const char *path, uid_t uid, bool ignore_term, int n) {
        return (struct holder) { .pid = h_holder_start(path, n, uid, ignore_term) };
}

struct thread_arg {
        const char *path;
        int ready[2];
};

static void *thread_hide_fd(void *data) {
        struct thread_arg *a = data;
        char c = 'x';
        if (unshare(CLONE_FILES) == 0 && open(a->path, O_RDONLY | O_NOCTTY | O_CLOEXEC) >= 0)
                c = 'r';
        (void) write(a->ready[1], &c, 1);
        for (;;)
                pause();
        return NULL;
}

static int hide_fd(void *data) {
        struct thread_arg *a = data;
        pthread_t t;
        char c;

        if (pipe(a->ready) < 0 || pthread_create(&t, NULL, thread_hide_fd, a) != 0 ||
            read(a->ready[0], &c, 1) != 1 || c != 'r')
                return 10;
        return 0;
}

/* Like holder_start, but the fd lives only in the own fd table of a second
 * thread (unshare(CLONE_FILES)): PID/fd does not show it. */
static struct holder holder_start_hidden(const char *path, uid_t uid) {
        struct thread_arg a = { .path = path };
        struct holder h = { .pid = h_holder_spawn(hide_fd, &a, uid, false) };

        ck_assert_msg(h.pid > 0, "hidden holder of %s did not start", path);
        return h;
}

static struct holder holder_start(const char *path, uid_t uid, bool ignore_term) {
        return holder_start_n(path, uid, ignore_term, 1);
}

/* A holder with real, effective and saved uid R, E, S: E = S = 0 and R the
 * user is a setuid-root program the user started. */
struct ids_arg {
        const char *path;
        uid_t r, e, s;
};

static int open_then_take_ids(void *data) {
        const struct ids_arg *a = data;
        if (a->path && open(a->path, O_RDONLY | O_NOCTTY | O_CLOEXEC) < 0)
                return 10;
        return setgroups(0, NULL) < 0 || setresuid(a->r, a->e, a->s) < 0 ? 11 : 0;
}

static struct holder holder_start_ids(const char *path, uid_t r, uid_t e, uid_t sv) {
        struct ids_arg a = { path, r, e, sv };
        /* uid 0: the holder keeps the ids its setup took */
        struct holder h = { .pid = h_holder_spawn(open_then_take_ids, &a, 0, false) };

        ck_assert_msg(h.pid > 0, "holder %u/%u/%u did not start", (unsigned) r, (unsigned) e,
                      (unsigned) sv);
        return h;
}

/* A process of UID whose only reference to PATH is an O_PATH fd: it can
 * neither read nor ioctl through it. */
static int open_o_path(void *data) {
        return open(data, O_PATH | O_NOFOLLOW | O_CLOEXEC) < 0 ? 10 : 0;
}

static struct holder holder_start_opath(const char *path, uid_t uid) {
        struct holder h = { .pid = h_holder_spawn(open_o_path, (void *) path, uid, false) };

        ck_assert_msg(h.pid > 0, "O_PATH holder did not start");
        return h;
}

struct uring_arg {
        const char *path;
        unsigned pad;
};

static int register_in_ring(void *data) {
        const struct uring_arg *a = data;
        struct io_uring_params params = { 0 };
        struct rlimit rl = { a->pad + 64, a->pad + 64 };
        struct rlimit now;
        int r = 12;

        if (getrlimit(RLIMIT_NOFILE, &now) == 0 && rl.rlim_max < now.rlim_max)
                rl.rlim_max = now.rlim_max;
        int *files = calloc(a->pad + 1, sizeof *files);
        /* a table may not be larger than RLIMIT_NOFILE */
        if (a->pad + 64 > 1024)
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        int ring = (int) syscall(SYS_io_uring_setup, 4, &params);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int fd = open(a->path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        if (files && ring >= 0 && null >= 0 && fd >= 0) {
                for (unsigned i = 0; i < a->pad; i++)
                        files[i] = null;
                files[a->pad] = fd;
                if (syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, files,
                            a->pad + 1) == 0) {
                        (void) close(fd);
                        (void) close(null);
                        r = 0;
                }
        }
        free(files);
        return r;
}

/* A process whose only reference to PATH is an io_uring registered file,
 * after PAD registered /dev/null files: nothing in PID/fd names it, and its
 * entry comes past PAD lines of the ring's fdinfo. Returns pid 0 when
 * io_uring is unavailable. */
static struct holder holder_start_uring_padded(const char *path, uid_t uid, unsigned pad,
                                               bool ignore_term) {
        struct uring_arg a = { path, pad };
        pid_t pid = h_holder_spawn(register_in_ring, &a, uid, ignore_term);

        return (struct holder) { .pid = pid > 0 ? pid : 0 };
}

static struct holder holder_start_uring(const char *path, uid_t uid) {
        return holder_start_uring_padded(path, uid, 0, false);
}

/* Returns pid 0 when io_uring (or, with DROP_FD, a registered ring fd) is
 * unavailable. */
static struct holder holder_start_mapped_ring(const char *path, uid_t uid, bool drop_fd) {
        struct h_ring_arg a = { path, drop_fd };
        pid_t pid = h_holder_spawn(h_map_a_ring, &a, uid, false);

        return (struct holder) { .pid = pid > 0 ? pid : 0 };
}

static bool holder_alive(struct holder *h) {
        if (h->reaped)
                return false;
        pid_t r = waitpid(h->pid, &h->status, WNOHANG);
        if (r == h->pid)
                h->reaped = true;
        return r == 0;
}

static void holder_stop(struct holder *h) {
        if (h->reaped)
                return;
        (void) kill(h->pid, SIGKILL);
        (void) waitpid(h->pid, &h->status, 0);
        h->reaped = true;
}

static char vtpath[32];
static struct xdev_sweep_target vt_target;

static void fresh(void) {
        h_fresh(NULL, NULL);
        h_logbuf[0] = '\0';
        (void) snprintf(vtpath, sizeof vtpath, "/dev/tty%d", h_vt + 3);
        vt_target = (struct xdev_sweep_target) { .rdev = makedev(4, (unsigned) h_vt + 3),
                                                 .class = XDEV_CLASS_VT };
        (void) snprintf(vt_target.path, sizeof vt_target.path, "%s", vtpath);
}

static struct xdev_sweep_counts sweep(enum xdev_linger policy,
                                      const struct xdev_sweep_opts *extra) {
        struct xdev_sweep_opts o = extra ? *extra : (struct xdev_sweep_opts) { 0 };
        struct xdev_sweep_counts c;
        o.policy = policy;
        /* The grace period only bounds the wait: a holder that dies of
         * SIGTERM ends it at once. A short one made a holder that was not
         * scheduled in time under load die of SIGKILL instead. */
        if (!o.grace_ms)
                o.grace_ms = XDEV_SWEEP_GRACE_MAX_MS;
        ck_assert_int_eq(xdev_sweep_run(&vt_target, 1, &o, &test_log, &c), 0);
        return c;
}

START_TEST(test_warn_logs_holder_and_leaves_it) {
        struct holder h = holder_start(vtpath, H_UID_ALICE, false);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_WARN, NULL);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert_uint_eq(c.left, 1);
        ck_assert_uint_eq(c.terminated, 0);
        ck_assert_msg(holder_alive(&h), "warn killed the holder");
        char want[128];
        snprintf(want, sizeof want, "pid %d (\"test-linger\", uid %u) still holds \"%s\"",
                 (int) h.pid, (unsigned) H_UID_ALICE, vtpath);
        ck_assert_msg(strstr(h_logbuf, want) && strstr(h_logbuf, "lingering = warn"),
                      "log lacks \"%s\": %s", want, h_logbuf);
        holder_stop(&h);
}
END_TEST

START_TEST(test_kill_terminates_holder_with_sigterm) {
        struct holder h = holder_start(vtpath, H_UID_ALICE, false);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_KILL, NULL);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert_uint_eq(c.terminated, 1);
        ck_assert_int_eq(waitpid(h.pid, &h.status, 0), h.pid);
        h.reaped = true;
        ck_assert_msg(WIFSIGNALED(h.status) && WTERMSIG(h.status) == SIGTERM, "status %#x",
                      h.status);
        ck_assert_msg(strstr(h_logbuf, "sent SIGTERM"), "log: %s", h_logbuf);
}
END_TEST

START_TEST(test_kill_sends_sigkill_after_grace) {
        struct holder h = holder_start(vtpath, H_UID_ALICE, true);
        struct xdev_sweep_opts o = { .grace_ms = 400 };
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_KILL, &o);
        clock_gettime(CLOCK_MONOTONIC, &b);
        long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
        ck_assert_uint_eq(c.terminated, 1);
        /* Only the lower bound is the behaviour; the upper one just says the
         * sweep did not wait for ever, with room for a loaded machine. */
        ck_assert_msg(ms >= 400 && ms < 400 + XDEV_SWEEP_GRACE_MAX_MS,
                      "took %ld ms for a 400 ms grace", ms);
        ck_assert_int_eq(waitpid(h.pid, &h.status, 0), h.pid);
        h.reaped = true;
        ck_assert_msg(WIFSIGNALED(h.status) && WTERMSIG(h.status) == SIGKILL, "status %#x",
                      h.status);
        ck_assert_msg(strstr(h_logbuf, "did not exit within 400 ms: sent SIGKILL"), "log: %s",
                      h_logbuf);
}
END_TEST

START_TEST(test_revoke_leaves_holders_of_unrevocable_nodes) {
        /* VTs, tty0 and render nodes cannot be revoked: only logged */
        struct holder h = holder_start(vtpath, H_UID_ALICE, false);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_REVOKE, NULL);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert_uint_eq(c.left, 1);
        ck_assert_uint_eq(c.terminated, 0);
        ck_assert_msg(holder_alive(&h), "revoke killed the holder of a VT");
        ck_assert_msg(strstr(h_logbuf, "not revocable, leaving it"), "log: %s", h_logbuf);
        holder_stop(&h);
}
END_TEST

START_TEST(test_root_processes_are_never_touched) {
        struct holder h = holder_start(vtpath, 0, false);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_KILL, NULL);
        ck_assert_uint_eq(c.holders, 0);
        ck_assert_msg(holder_alive(&h), "a root process was killed");
        holder_stop(&h);
}
END_TEST

START_TEST(test_new_holder_is_never_touched) {
        struct holder a = holder_start(vtpath, H_UID_ALICE, false);
        struct holder b = holder_start(vtpath, H_UID_BOB, false);
        struct xdev_sweep_opts o = { .has_keep = true, .keep_uid = H_UID_BOB };
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_KILL, &o);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert_msg(!holder_alive(&a), "alice's lingering holder survived");
        ck_assert_msg(holder_alive(&b), "the new holder's process was killed");
        holder_stop(&a);
        holder_stop(&b);
}
END_TEST

START_TEST(test_only_uid_limits_the_sweep) {
        struct holder a = holder_start(vtpath, H_UID_ALICE, false);
        struct xdev_sweep_opts o = { .has_only = true, .only_uid = H_UID_BOB };
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_KILL, &o);
        ck_assert_uint_eq(c.holders, 0);
        ck_assert(holder_alive(&a));
        o.only_uid = H_UID_ALICE;
        c = sweep(XDEV_LINGER_KILL, &o);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert(!holder_alive(&a));
        holder_stop(&a);
}
END_TEST

/* After a handover only the uid that lost the grant is swept: a setuid-root
 * program it started too, but no other user's process nor a daemon's. */
START_TEST(test_only_uid_matches_every_uid_of_a_process) {
        struct holder a = holder_start(vtpath, H_UID_ALICE, false);
        struct holder asu = holder_start_ids(vtpath, H_UID_ALICE, 0, 0);
        struct holder carol = holder_start(vtpath, H_UID_CAROL, false);
        struct holder nobody = holder_start(vtpath, 65534, false);
        struct xdev_sweep_opts o = { .has_only = true, .only_uid = H_UID_ALICE };
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_KILL, &o);
        ck_assert_msg(c.holders == 2, "%u holders found, not 2:\n%s", c.holders, h_logbuf);
        ck_assert_msg(!holder_alive(&a), "alice's holder survived");
        ck_assert_msg(!holder_alive(&asu), "alice's setuid-root holder survived");
        ck_assert_msg(holder_alive(&carol), "carol's process was hit by alice's sweep");
        ck_assert_msg(holder_alive(&nobody), "a daemon of nobody was hit by alice's sweep");
        holder_stop(&a);
        holder_stop(&asu);
        holder_stop(&carol);
        holder_stop(&nobody);
}
END_TEST

/* A root daemon (real, effective and saved uid 0) that borrowed alice's
 * fsuid, as a file server does for her request, is not hers: her sweep
 * leaves it, under kill and kill-user alike. */
static int borrow_fsuid(void *data) {
        const char *path = data;
        if (open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC) < 0)
                return 10;
        (void) setfsuid(H_UID_ALICE);
        return (uid_t) setfsuid((uid_t) -1) == H_UID_ALICE ? 0 : 11;
}

START_TEST(test_root_daemon_with_a_borrowed_fsuid_is_not_swept) {
        static const enum xdev_linger policies[] = { XDEV_LINGER_KILL, XDEV_LINGER_KILL_USER };
        for (size_t i = 0; i < 2; i++) {
                struct holder h = { .pid = h_holder_spawn(borrow_fsuid, vtpath, 0, false) };
                ck_assert_msg(h.pid > 0, "the root daemon did not start");
                struct xdev_sweep_opts o = { .has_only = true, .only_uid = H_UID_ALICE };
                struct xdev_sweep_counts c = sweep(policies[i], &o);
                bool alive = holder_alive(&h);
                holder_stop(&h);
                ck_assert_msg(alive && c.holders == 0,
                              "a root daemon with alice's fsuid was swept as hers (policy %d, %u "
                              "holders):\n%s",
                              (int) policies[i], c.holders, h_logbuf);
        }
}
END_TEST

/* kill-user at a logout ends every process of the user, holder or not (fds
 * in flight or in rings cannot hide there); at a VT switch it only revokes. */
START_TEST(test_kill_user_ends_every_process_of_the_user) {
        struct holder idle = holder_start(NULL, H_UID_ALICE, true);
        struct holder carol = holder_start(NULL, H_UID_CAROL, false);
        struct xdev_sweep_opts o = {
                .has_only = true, .only_uid = H_UID_ALICE, .in_session = true, .grace_ms = 200
        };
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_KILL_USER, &o);
        ck_assert_uint_eq(c.holders, 0);
        ck_assert_msg(holder_alive(&idle), "kill-user ended a process at a VT switch");
        o.in_session = false;
        c = sweep(XDEV_LINGER_KILL_USER, &o);
        ck_assert_msg(c.terminated == 1, "%u processes ended, not 1:\n%s", c.terminated, h_logbuf);
        ck_assert_msg(
                !holder_alive(&idle),
                "alice's process survived kill-user (it ignores SIGTERM: SIGKILL must follow)");
        ck_assert_msg(holder_alive(&carol), "kill-user ended another user's process");
        ck_assert_msg(strstr(h_logbuf, "lingering = kill-user"), "log: %s", h_logbuf);
        holder_stop(&idle);
        holder_stop(&carol);
}
END_TEST

START_TEST(test_io_uring_registered_file_is_found) {
        struct holder h = holder_start_uring(vtpath, H_UID_ALICE);
        if (h.pid == 0) {
                fprintf(stderr,
                        "test-linger: io_uring is not available here; the qemu suite covers it\n");
                return;
        }
        struct xdev_sweep_opts o = { .has_only = true, .only_uid = H_UID_ALICE };
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_REVOKE, &o);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert_msg(!holder_alive(&h), "a process holding the node in an io_uring survived");
        ck_assert_msg(strstr(h_logbuf, "io_uring"), "log: %s", h_logbuf);
        holder_stop(&h);
}
END_TEST

/* A ring whose fd was registered in itself and closed holds the node where
 * no fd table shows it, and its fdinfo cannot be read: only PID/maps shows
 * the ring. Its process is unreachable and goes under revoke at a logout,
 * by SIGKILL at once at a VT switch, and is logged under warn. A ring with
 * its fd, holding /dev/null, and a process with no ring are left alone. */
START_TEST(test_io_uring_with_no_fd_left_is_unreachable) {
        struct holder h = holder_start_mapped_ring(vtpath, H_UID_ALICE, true);
        if (h.pid == 0) {
                fprintf(stderr, "test-linger: a registered io_uring fd is not available here\n");
                return;
        }
        struct holder ring = holder_start_mapped_ring("/dev/null", H_UID_ALICE, false);
        struct holder plain = { .pid = h_holder_spawn(NULL, NULL, H_UID_ALICE, false) };
        ck_assert_msg(ring.pid > 0 && plain.pid > 0, "the innocent processes did not start");
        struct xdev_sweep_opts o = { .has_only = true, .only_uid = H_UID_ALICE };

        struct xdev_sweep_counts c = sweep(XDEV_LINGER_REVOKE, &o);
        bool gone = !holder_alive(&h), ring_alive = holder_alive(&ring),
             plain_alive = holder_alive(&plain);
        holder_stop(&h);
        ck_assert_msg(gone, "a process holding the node in a ring with no fd left survived:\n%s",
                      h_logbuf);
        ck_assert_msg(ring_alive, "a ring with its fd, holding /dev/null, was ended:\n%s",
                      h_logbuf);
        ck_assert_msg(plain_alive, "a process without a ring was ended:\n%s", h_logbuf);
        ck_assert_msg(c.holders == 1 && c.terminated == 1, "%u holders, %u ended, not 1:\n%s",
                      c.holders, c.terminated, h_logbuf);
        ck_assert_msg(strstr(h_logbuf, "no fd left"), "log: %s", h_logbuf);

        /* at a VT switch (the user keeps her session): killed at once */
        h = holder_start_mapped_ring(vtpath, H_UID_ALICE, true);
        ck_assert_msg(h.pid > 0, "the holder at a switch did not start");
        h_logbuf[0] = '\0';
        struct xdev_sweep_opts sw = o;
        sw.in_session = true;
        c = sweep(XDEV_LINGER_KILL, &sw);
        gone = !holder_alive(&h);
        holder_stop(&h);
        ck_assert_msg(gone && holder_alive(&ring) && holder_alive(&plain),
                      "at a switch: the ring with no fd left %s, the innocent ones %s:\n%s",
                      gone ? "ended" : "survived",
                      holder_alive(&ring) && holder_alive(&plain) ? "left" : "ended", h_logbuf);
        ck_assert_msg(strstr(h_logbuf, "SIGKILL, not cut off"), "log: %s", h_logbuf);

        /* warn: logged, left */
        h = holder_start_mapped_ring(vtpath, H_UID_ALICE, true);
        ck_assert_msg(h.pid > 0, "the second holder did not start");
        h_logbuf[0] = '\0';
        c = sweep(XDEV_LINGER_WARN, &o);
        bool alive = holder_alive(&h);
        holder_stop(&h);
        holder_stop(&ring);
        holder_stop(&plain);
        ck_assert_msg(alive && c.terminated == 0, "warn ended a process:\n%s", h_logbuf);
        ck_assert_msg(strstr(h_logbuf, "no fd left") && strstr(h_logbuf, "lingering = warn"),
                      "warn did not log the ring with no fd left:\n%s", h_logbuf);
}
END_TEST

/* A ring padded with registered /dev/null files before the node: its
 * entry comes past any fixed-size read of the fdinfo. The second pad is as
 * large as RLIMIT_NOFILE lets a table be (past index 99999 the kernel no
 * longer indents it, "%5u: ": the fuzz seeds cover that where the hard
 * limit is lower). */
/* A ring holding alice's own regular file named event1 holds no node:
 * a ring's file is matched by its path, not its last component. */
START_TEST(test_io_uring_file_of_the_same_name_is_not_a_holder) {
        struct xdev_sweep_target in = { .class = XDEV_CLASS_INPUT };
        struct stat st;
        ck_assert_int_eq(stat("/dev/input/event1", &st), 0);
        in.rdev = st.st_rdev;
        (void) snprintf(in.path, sizeof in.path, "/dev/input/event1");
        ck_assert_int_eq(mkdir(H_ROOT "/alice", 0755) == 0 || errno == EEXIST, 1);
        h_write_file(H_ROOT "/alice/event1", "notes\n", 0600, H_UID_ALICE);

        struct holder h = holder_start_uring(H_ROOT "/alice/event1", H_UID_ALICE);
        if (h.pid == 0) {
                fprintf(stderr, "test-linger: io_uring is not available here\n");
                return;
        }
        struct xdev_sweep_counts c;
        struct xdev_sweep_opts o = { .policy = XDEV_LINGER_REVOKE,
                                     .in_session = true,
                                     .grace_ms = XDEV_SWEEP_GRACE_MAX_MS };
        ck_assert_int_eq(xdev_sweep_run(&in, 1, &o, &test_log, &c), 0);
        bool alive = holder_alive(&h);
        holder_stop(&h);
        ck_assert_msg(alive && c.holders == 0,
                      "a ring holding a regular file named event1 was taken for a holder of "
                      "/dev/input/event1 (%u):\n%s",
                      c.holders, h_logbuf);
}
END_TEST

/* An O_PATH fd of an input node reads nothing and cannot be revoked
 * (EVIOCREVOKE on it fails): its process is left alone at a switch
 * (revoke) and at a logout under kill, not taken for a holder that could
 * not be cut off. The test is on the copy that is acted on. */
START_TEST(test_o_path_fd_is_no_hold) {
        struct xdev_sweep_target in = { .class = XDEV_CLASS_INPUT };
        struct stat st;
        ck_assert_int_eq(stat("/dev/input/event1", &st), 0);
        in.rdev = st.st_rdev;
        (void) snprintf(in.path, sizeof in.path, "/dev/input/event1");
        enum xdev_linger pol[] = { XDEV_LINGER_REVOKE, XDEV_LINGER_KILL };
        bool sess[] = { true, false };
        for (size_t i = 0; i < 2; i++) {
                struct holder h = holder_start_opath("/dev/input/event1", H_UID_ALICE);
                struct xdev_sweep_counts c;
                struct xdev_sweep_opts o = { .policy = pol[i],
                                             .has_only = true,
                                             .only_uid = H_UID_ALICE,
                                             .in_session = sess[i],
                                             .grace_ms = XDEV_SWEEP_GRACE_MAX_MS };
                h_logbuf[0] = '\0';
                ck_assert_int_eq(xdev_sweep_run(&in, 1, &o, &test_log, &c), 0);
                bool alive = holder_alive(&h);
                holder_stop(&h);
                ck_assert_msg(alive && c.terminated == 0,
                              "a process holding only an O_PATH fd of event1 was ended (%s):\n%s",
                              sess[i] ? "switch, revoke" : "logout, kill", h_logbuf);
        }
}
END_TEST

/* A ring holding PATH whose lock is held for good: a thread of the
 * holder updates the ring's files from an array on a page that faults
 * into a userfaultfd nobody serves, so the kernel waits in the copy with
 * the ring's lock held (the user's own FUSE file does the same), and the
 * ring's fdinfo lists none of its files. Returns pid 0 when io_uring or
 * userfaultfd is unavailable. */
struct busy_ring {
        int ring;
        void *page;
};

static void *thread_stall_ring(void *data) {
        struct busy_ring *b = data;
        struct io_uring_files_update up = { .offset = 0, .fds = (uint64_t) (uintptr_t) b->page };
        (void) syscall(SYS_io_uring_register, b->ring, IORING_REGISTER_FILES_UPDATE, &up, 1);
        return NULL;
}

static char busy_ring_setup(const char *path, uid_t uid, struct busy_ring *b) {
        struct io_uring_params params = { 0 };
        struct uffdio_api api = { .api = UFFD_API };
        int fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        /* created by root: it may take the kernel's own faults */
        int uffd = (int) syscall(SYS_userfaultfd, O_CLOEXEC);
        b->ring = (int) syscall(SYS_io_uring_setup, 4, &params);
        b->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (fd < 0 || uffd < 0 || b->ring < 0 || b->page == MAP_FAILED ||
            ioctl(uffd, UFFDIO_API, &api) < 0)
                return 'x';
        struct uffdio_register reg = { .range = { (uint64_t) (uintptr_t) b->page, 4096 },
                                       .mode = UFFDIO_REGISTER_MODE_MISSING };
        if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0 ||
            syscall(SYS_io_uring_register, b->ring, IORING_REGISTER_FILES, &fd, 1) < 0)
                return 'x';
        (void) close(fd);
        if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                return 'x';
        return 'r';
}

struct busy_ring_arg {
        const char *path;
        uid_t uid;
};

static int stall_a_ring(void *data) {
        const struct busy_ring_arg *a = data;
        static struct busy_ring b; /* the thread's after this returns */
        pthread_t t;

        if (busy_ring_setup(a->path, a->uid, &b) != 'r' ||
            pthread_create(&t, NULL, thread_stall_ring, &b) != 0)
                return 12;
        (void) usleep(100 * 1000); /* the thread in its copy */
        return 0;
}

/* Returns pid 0 when io_uring or userfaultfd is unavailable. */
static struct holder holder_start_busy_ring(const char *path, uid_t uid) {
        /* uid 0: busy_ring_setup takes UID itself, before the thread */
        struct busy_ring_arg a = { path, uid };
        pid_t pid = h_holder_spawn(stall_a_ring, &a, 0, false);

        return (struct holder) { .pid = pid > 0 ? pid : 0 };
}

/* A ring whose fdinfo lists nothing because its lock is held is unknown,
 * not empty: its process is taken for unreachable and ended at a switch. */
START_TEST(test_io_uring_with_its_lock_held_is_unreachable) {
        struct holder h = holder_start_busy_ring(vtpath, H_UID_ALICE);
        if (h.pid == 0) {
                fprintf(stderr, "test-linger: io_uring or userfaultfd is not available here\n");
                return;
        }
        struct xdev_sweep_counts c;
        struct xdev_sweep_opts o = { .policy = XDEV_LINGER_REVOKE,
                                     .in_session = true,
                                     .grace_ms = XDEV_SWEEP_GRACE_MAX_MS };
        ck_assert_int_eq(xdev_sweep_run(&vt_target, 1, &o, &test_log, &c), 0);
        bool alive = holder_alive(&h);
        holder_stop(&h);
        ck_assert_msg(!alive && c.holders == 1,
                      "a ring whose lock was held hid %s: its holder %s (%u holders):\n%s", vtpath,
                      alive ? "survived the switch" : "ended", c.holders, h_logbuf);
}
END_TEST

/* Where the stalled process mounts its FUSE file system: its own mount
 * namespace's, inside the test's. */
#define STALL_MNT H_ROOT "/fuse"

/* Starts tests/vm/guest/xdt-mapstall (XDEV_MAPSTALL) for UID: as that
 * user, in a user namespace of hers, a process whose map lock is kept
 * from being taken by her own FUSE server. Returns its pid (a child of
 * this process) and *SERVER's, or 0 when FUSE or a user namespace of her
 * own is not available here. */
static pid_t mapstall_start(uid_t uid, pid_t *server) {
        const char *bin = getenv("XDEV_MAPSTALL");
        char uidbuf[16], line[256] = "";
        int pfd[2], p = -1, sv = -1;
        size_t len = 0;

        ck_assert_ptr_nonnull(bin);
        /* the test's /dev is its own: the node made where the user finds it */
        (void) mknod("/dev/fuse", S_IFCHR | 0666, makedev(10, 229));
        (void) chmod("/dev/fuse", 0666);
        (void) mkdir(STALL_MNT, 0777);
        (void) chmod(STALL_MNT, 0777);
        (void) snprintf(uidbuf, sizeof uidbuf, "%u", (unsigned) uid);
        ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                (void) dup2(pfd[1], 1);
                execl(bin, "xdt-mapstall", uidbuf, STALL_MNT, (char *) NULL);
                _exit(127);
        }
        (void) close(pfd[1]);
        for (struct pollfd w = { .fd = pfd[0], .events = POLLIN };
             len + 1 < sizeof line && !strchr(line, '\n') && poll(&w, 1, 10000) > 0;) {
                ssize_t n = read(pfd[0], line + len, sizeof line - 1 - len);
                if (n <= 0)
                        break;
                len += (size_t) n;
                line[len] = '\0';
        }
        (void) close(pfd[0]);
        if (sscanf(line, "stall ready pid=%d server=%d", &p, &sv) == 2 && p == pid) {
                *server = sv;
                return pid;
        }
        fprintf(stderr, "test-linger: no process with its map lock held here: %s\n",
                line[0] ? line : "(nothing said)");
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        return 0;
}

/* Whether a read of PID's maps is held up (it did not come back within
 * 100 ms), waiting for it up to 5 s. */
static bool maps_stalled(pid_t pid) {
        struct xdev_uring_maps_reader mr = { 0 };
        bool stalled = false;
        char path[64];
        (void) snprintf(path, sizeof path, "/proc/%d/maps", (int) pid);
        for (int i = 0; i < 50 && !stalled; i++) {
                struct xdev_uring_mapped m;
                size_t lines = 0;
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        break;
                stalled =
                        xdev_uring_maps_read_within(&mr, fd, 100000, 100, &lines, &m) == -ETIMEDOUT;
                if (!stalled)
                        (void) usleep(100 * 1000);
        }
        xdev_uring_maps_reader_done(&mr);
        return stalled;
}

/* A process of the departing user that keeps its map lock from being
 * taken made the sweep, which reads every such process's maps under the
 * state lock, wait for ever (every switch and login behind it). Its map
 * is given up on after a bounded wait: the sweep returns, the process is
 * taken for one whose rings cannot be read and ended; a process of hers
 * whose map reads is left alone. */
START_TEST(test_a_held_map_lock_does_not_stall_the_sweep) {
        pid_t server = 0;
        struct holder h = { .pid = mapstall_start(H_UID_ALICE, &server) };
        if (h.pid == 0) {
                fprintf(stderr,
                        "test-linger: FUSE in a user namespace is not available here: "
                        "not tested\n");
                return;
        }
        struct holder plain = { .pid = h_holder_spawn(NULL, NULL, H_UID_ALICE, false) };
        ck_assert_msg(plain.pid > 0, "the other process did not start");
        ck_assert_msg(maps_stalled(h.pid), "the process's maps could still be read");

        struct xdev_sweep_opts sw = { .has_only = true,
                                      .only_uid = H_UID_ALICE,
                                      .in_session = true };
        double t0 = xdev_now_ms();
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_REVOKE, &sw);
        double took = xdev_now_ms() - t0;
        bool plain_alive = holder_alive(&plain);
        char killed[96];
        (void) snprintf(killed, sizeof killed, "pid %d (\"xdt-mapstall\", uid %u)", (int) h.pid,
                        (unsigned) H_UID_ALICE);
        /* its threads wait on the file system without end, SIGKILL or
         * not (so it is still there): its server's end lets them go */
        (void) kill(server, SIGKILL);
        holder_stop(&h);
        holder_stop(&plain);
        const char *line = strstr(h_logbuf, killed);
        ck_assert_msg(line && strstr(line, "did not come back in time") &&
                              strstr(line, "sent SIGKILL, not cut off") && plain_alive,
                      "the process with its map lock held was not sent SIGKILL, or the other "
                      "was ended (%s; %.0f ms):\n%s",
                      plain_alive ? "left" : "ended", took, h_logbuf);
        ck_assert_uint_eq(c.holders, 1);
}
END_TEST

START_TEST(test_io_uring_padded_past_any_read_is_found) {
        struct rlimit rl;
        ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        unsigned most = rl.rlim_max > 100064 ? 100000 : (unsigned) rl.rlim_max - 64;
        const unsigned pads[] = { 1000, most };
        for (size_t i = 0; i < sizeof pads / sizeof pads[0]; i++) {
                struct holder h = holder_start_uring_padded(vtpath, H_UID_ALICE, pads[i], true);
                if (h.pid == 0 && i == 0) {
                        fprintf(stderr, "test-linger: io_uring is not available here\n");
                        return;
                }
                ck_assert_msg(h.pid != 0, "no ring padded with %u files", pads[i]);
                h_logbuf[0] = '\0';
                struct xdev_sweep_opts o = { .has_only = true,
                                             .only_uid = H_UID_ALICE,
                                             .in_session = true };
                struct xdev_sweep_counts c = sweep(XDEV_LINGER_REVOKE, &o);
                ck_assert_msg(c.holders == 1 && c.terminated == 1,
                              "pad %u: %u holders, %u terminated:\n%s", pads[i], c.holders,
                              c.terminated, h_logbuf);
                ck_assert_int_eq(waitpid(h.pid, &h.status, 0), h.pid);
                h.reaped = true;
                ck_assert_msg(WIFSIGNALED(h.status) && WTERMSIG(h.status) == SIGKILL,
                              "pad %u: the ring's holder did not end by SIGKILL", pads[i]);
                ck_assert_msg(strstr(h_logbuf, "io_uring"), "log: %s", h_logbuf);
        }
}
END_TEST

struct own_tables_arg {
        unsigned fds;
        int ready;
};

static void *thread_own_table(void *data) {
        struct own_tables_arg *a = data;
        char c = 'x';
        if (unshare(CLONE_FILES) == 0) {
                c = 'r';
                for (unsigned i = 0; i < a->fds; i++)
                        if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0)
                                c = 'x';
        }
        (void) write(a->ready, &c, 1);
        for (;;)
                pause();
        return NULL;
}

struct tables_arg {
        const char *path;
        unsigned threads, fds;
};

static int open_in_tables(void *data) {
        const struct tables_arg *t = data;
        struct rlimit rl = { t->fds + 64, t->fds + 64 };
        /* static: the threads read it after this returns */
        static struct own_tables_arg a;
        int ready[2];
        char c;

        if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || pipe(ready) < 0 ||
            open(t->path, O_RDONLY | O_NOCTTY | O_CLOEXEC) < 0)
                return 10;
        a = (struct own_tables_arg) { .fds = t->fds, .ready = ready[1] };
        for (unsigned i = 0; i < t->threads; i++) {
                pthread_t th;
                if (pthread_create(&th, NULL, thread_own_table, &a) != 0 ||
                    read(ready[0], &c, 1) != 1 || c != 'r')
                        return 11;
        }
        return 0;
}

/* A holder of PATH (in its main table) with THREADS threads, each with a
 * table of its own of FDS more files. */
static struct holder holder_start_tables(const char *path, uid_t uid, unsigned threads,
                                         unsigned fds) {
        struct tables_arg a = { path, threads, fds };
        struct holder h = { .pid = h_holder_spawn(open_in_tables, &a, uid, false) };

        ck_assert_msg(h.pid > 0, "holder with %u tables did not start", threads);
        return h;
}

/* Threads with their own fd tables cost threads x fds to scan: past the
 * per-process budget the process is not scanned further but ended; under
 * it, what it holds is only revoked (a VT here: left). */
START_TEST(test_process_over_the_scan_budget_is_terminated) {
        unsigned per = 1000, over = XDEV_SWEEP_SCAN_BUDGET / per + 2;
        struct xdev_sweep_opts o = { .has_only = true,
                                     .only_uid = H_UID_ALICE,
                                     .in_session = true };
        struct holder under = holder_start_tables(vtpath, H_UID_ALICE, 4, per);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_REVOKE, &o);
        ck_assert_msg(c.holders == 1 && c.terminated == 0 && holder_alive(&under),
                      "a process under the scan budget was ended:\n%s", h_logbuf);
        holder_stop(&under);
        h_logbuf[0] = '\0';
        struct holder h = holder_start_tables(vtpath, H_UID_ALICE, over, per);
        c = sweep(XDEV_LINGER_REVOKE, &o);
        ck_assert_msg(c.holders == 1 && c.terminated == 1,
                      "%u holders, %u terminated with %u tables of %u fds:\n%s", c.holders,
                      c.terminated, over, per, h_logbuf);
        ck_assert_int_eq(waitpid(h.pid, &h.status, 0), h.pid);
        h.reaped = true;
        ck_assert_msg(strstr(h_logbuf, "scan budget"), "log: %s", h_logbuf);
}
END_TEST

START_TEST(test_process_without_the_node_is_not_a_holder) {
        /* holds another VT, and a node of the same rdev but another class major is not possible:
         * a target of class DRM with the VT's rdev must not match either */
        char other[32];
        snprintf(other, sizeof other, "/dev/tty%d", h_vt + 2);
        struct holder h = holder_start(other, H_UID_ALICE, false);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_KILL, NULL);
        ck_assert_uint_eq(c.holders, 0);
        struct holder h2 = holder_start(vtpath, H_UID_ALICE, false);
        struct xdev_sweep_target wrong = vt_target;
        wrong.class = XDEV_CLASS_DRM;
        struct xdev_sweep_opts o = { .policy = XDEV_LINGER_KILL, .grace_ms = 300 };
        ck_assert_int_eq(xdev_sweep_run(&wrong, 1, &o, &test_log, &c), 0);
        ck_assert_uint_eq(c.holders, 0);
        ck_assert(holder_alive(&h));
        ck_assert(holder_alive(&h2));
        holder_stop(&h);
        holder_stop(&h2);
}
END_TEST

START_TEST(test_found_through_another_name) {
        /* matched by the open file's rdev, whatever path it was opened by */
        ck_assert_int_eq(mknod("/dev/alias", S_IFCHR | 0600, vt_target.rdev), 0);
        struct holder h = holder_start("/dev/alias", H_UID_ALICE, false);
        ck_assert_int_eq(unlink("/dev/alias"), 0);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_WARN, NULL);
        ck_assert_uint_eq(c.holders, 1);
        holder_stop(&h);
}
END_TEST

START_TEST(test_fd_in_a_thread_own_fd_table_is_found) {
        struct holder h = holder_start_hidden(vtpath, H_UID_ALICE);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_WARN, NULL);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert_msg(strstr(h_logbuf, "in its own fd table; lingering = warn"), "log: %s",
                      h_logbuf);
        ck_assert(holder_alive(&h));
        c = sweep(XDEV_LINGER_KILL, NULL);
        ck_assert_uint_eq(c.terminated, 1);
        ck_assert_msg(!holder_alive(&h),
                      "a holder hiding its fd in a thread survived lingering = kill");
        holder_stop(&h);
}
END_TEST

static bool is_kthread(pid_t pid) {
        struct xdev_proc_stat st;
        return xdev_proc_stat(pid, &st) == 0 && (st.flags & 0x00200000u);
}

START_TEST(test_sweep_reads_no_kernel_thread) {
        /* kernel threads share kthreadd's empty fd table: the sweep passes
         * over them with one kcmp() instead of reading their status */
        unsigned kthreads = 0, others = 0;
        DIR *d = opendir("/proc");
        struct dirent *de;
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                pid_t pid = (pid_t) atoi(de->d_name);
                if (pid <= 0)
                        continue;
                if (is_kthread(pid))
                        kthreads++;
                else
                        others++;
        }
        (void) closedir(d);
        struct holder h = holder_start(vtpath, H_UID_ALICE, false);
        struct xdev_sweep_opts o = { .has_only = true, .only_uid = H_UID_ALICE };
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_WARN, &o);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert_msg(holder_alive(&h), "warn ended the holder");
        holder_stop(&h);
        /* the holder is one more process; a few others may come and go */
        ck_assert_msg(c.examined >= 1 && c.examined <= others + 1 + 8,
                      "%u processes read, %u user processes and %u kernel threads seen", c.examined,
                      others, kthreads);
        if (is_kthread(2)) {
                ck_assert(xdev_sweep_kernel_table_usable());
                ck_assert_msg(kthreads > 8 && c.examined < others + kthreads - 8,
                              "%u processes read of %u (%u kernel threads)", c.examined,
                              others + kthreads, kthreads);
        } else
                fprintf(stderr,
                        "test-linger: no kthreadd as pid 2 here (a pid namespace): no kernel thread to pass over\n");
}
END_TEST

/* Runs INIT as pid 1 of a new pid namespace (with UNSHARE's other
 * namespaces too) and returns its exit status: 0 when the shortcut was
 * refused, 26 when it was taken, anything else a setup failure. */
static int in_new_pid_namespace(int unshare_flags, int (*init)(void)) {
        pid_t outer = fork();
        int st;

        ck_assert_int_ge(outer, 0);
        if (outer == 0) {
                if (unshare(CLONE_NEWPID | unshare_flags) < 0)
                        _exit(20);
                pid_t inner = fork();
                if (inner < 0)
                        _exit(21);
                if (inner == 0)
                        _exit(init());
                if (waitpid(inner, &st, 0) != inner || !WIFEXITED(st))
                        _exit(27);
                _exit(WEXITSTATUS(st));
        }
        ck_assert_int_eq(waitpid(outer, &st, 0), outer);
        ck_assert(WIFEXITED(st));
        return WEXITSTATUS(st);
}

static int shortcut_taken(void) {
        return xdev_sweep_kernel_table_usable() ? 26 : 0;
}

/* A pid namespace that kept the host's /proc: pid 2 there is kthreadd with
 * its empty table, but kcmp() would take 2 as this namespace's pid 2. */
START_TEST(test_proc_of_another_pid_namespace_is_not_trusted) {
        if (!xdev_sweep_kernel_table_usable()) {
                fprintf(stderr, "test-linger: no kthreadd as pid 2 here: nothing to mistake\n");
                return;
        }
        int rc = in_new_pid_namespace(0, shortcut_taken);
        ck_assert_msg(rc != 26, "the host's /proc was trusted from another pid namespace");
        ck_assert_msg(rc == 0, "pid namespace setup failed (%d)", rc);
}
END_TEST

/* pid 1 of a namespace with its own /proc, whose pid 2 has an empty fd
 * table like kthreadd's */
static int proc_with_a_fake_kthreadd(void) {
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return 22;
        pid_t two = fork();
        if (two < 0)
                return 23;
        if (two == 0) {
                (void) syscall(SYS_close_range, 0, ~0u, 0);
                for (;;)
                        pause();
        }
        if (two != 2)
                return 24;
        int rc = 25;
        for (int i = 0; i < 500; i++) {
                char buf[64];
                ssize_t n = readlink("/proc/2/fd/0", buf, sizeof buf);
                if (n < 0 && errno == ENOENT) {
                        rc = shortcut_taken();
                        break;
                }
                usleep(10000);
        }
        (void) kill(two, SIGKILL);
        (void) waitpid(two, NULL, 0);
        return rc;
}

/* In a pid namespace of its own, pid 2 is any process: one with an empty
 * fd table must not be taken for kthreadd, or what shares its table (a
 * process with a thread of its own table, say) would be passed over. */
START_TEST(test_pid_2_of_a_pid_namespace_is_not_taken_for_kthreadd) {
        int rc = in_new_pid_namespace(CLONE_NEWNS, proc_with_a_fake_kthreadd);
        ck_assert_msg(rc != 26, "pid 2 of a pid namespace was taken for kthreadd");
        ck_assert_msg(rc == 0, "pid namespace setup failed (%d)", rc);
}
END_TEST

START_TEST(test_holder_of_too_many_fds_is_terminated) {
        /* each open is its own file to revoke; past the scan's limit the
         * process is terminated rather than partly revoked */
        struct holder h = holder_start_n(vtpath, H_UID_ALICE, false, 100);
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_REVOKE, NULL);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert_uint_eq(c.terminated, 1);
        ck_assert_msg(strstr(h_logbuf, "too many fds to revoke one by one"), "log: %s", h_logbuf);
        ck_assert(!holder_alive(&h));
        holder_stop(&h);
}
END_TEST

START_TEST(test_report_only_lists_and_changes_nothing) {
        struct holder h = holder_start(vtpath, H_UID_ALICE, false);
        struct xdev_sweep_report report = { 0 };
        struct xdev_sweep_opts o = { .report_only = true, .report = &report };
        struct xdev_sweep_counts c = sweep(XDEV_LINGER_KILL, &o);
        ck_assert_uint_eq(c.holders, 1);
        ck_assert(holder_alive(&h));
        ck_assert_uint_eq(report.n, 1);
        ck_assert_int_eq(report.items[0].pid, h.pid);
        ck_assert_uint_eq(report.items[0].uid, H_UID_ALICE);
        ck_assert_str_eq(report.items[0].path, vtpath);
        ck_assert_int_ge(report.items[0].fd, 0);
        ck_assert_int_eq(report.items[0].thread, 0);
        xdev_sweep_report_free(&report);
        holder_stop(&h);
}
END_TEST

/* The module: logout of the holder sweeps what it held (tty0 here, the one
 * shared node that opens on the host). */
static const char console_conf[] =
        "devices = glob\nglob = console:/dev/tty0\nconsole = rw\nlogind = ignore\nlinger_grace = 30000\n";

static void conf_with(const char *extra) {
        char conf[512];
        snprintf(conf, sizeof conf, "%s%s", console_conf, extra);
        h_fresh(conf, NULL);
}

START_TEST(test_logout_kills_lingering_holder_with_kill) {
        conf_with("lingering = kill\n");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        struct holder h = holder_start("/dev/tty0", H_UID_ALICE, false);
        free(h_log_take());
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        ck_assert_msg(!holder_alive(&h), "alice's process holding tty0 survived her logout");
        char *log = h_log_take(), want[160];
        snprintf(
                want, sizeof want,
                "pid %d (\"test-linger\", uid %u) still holds \"/dev/tty0\" (lingering = kill): sent SIGTERM",
                (int) h.pid, (unsigned) H_UID_ALICE);
        ck_assert_msg(strstr(log, want), "log lacks \"%s\":\n%s", want, log);
        ck_assert_msg(strstr(log, "lingering holders: 1 found"), "no summary line:\n%s", log);
        free(log);
        holder_stop(&h);
}
END_TEST

/* The logout sweep acts on the user who logged out alone: another user's
 * reader and a daemon's (triggerhappy runs as nobody) are left alone. */
START_TEST(test_logout_spares_other_users_and_daemons) {
        conf_with("lingering = kill\n");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        struct holder ha = holder_start("/dev/tty0", H_UID_ALICE, false);
        struct holder hc = holder_start("/dev/tty0", H_UID_CAROL, false);
        struct holder hn = holder_start("/dev/tty0", 65534, false);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        ck_assert_msg(!holder_alive(&ha), "alice's holder survived her logout");
        ck_assert_msg(holder_alive(&hc), "carol's process was killed by alice's logout");
        ck_assert_msg(holder_alive(&hn), "nobody's daemon was killed by alice's logout");
        holder_stop(&ha);
        holder_stop(&hc);
        holder_stop(&hn);
}
END_TEST

/* A process that left alice's uid for a subordinate one (a user namespace
 * of its own) and keeps her fd: no sweep by her uid sees it, the pass the
 * module runs after its transaction at her logout does (tty0 cannot be
 * revoked and is left, logged; an input node would be revoked). */
START_TEST(test_logout_finds_a_holder_that_left_the_uid) {
        conf_with("lingering = revoke\n");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        pid_t h = h_holder_start_subuid("/dev/tty0", H_UID_ALICE, 300000);
        /* and a login uid with no session and no right of its own, handed
         * an fd (opened as root here) */
        pid_t g = h_holder_start("/dev/tty0", 1, 1500, false);
        free(h_log_take());
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *log = h_log_take(), want[64];
        (void) kill(h, SIGKILL);
        (void) waitpid(h, NULL, 0);
        (void) kill(g, SIGKILL);
        (void) waitpid(g, NULL, 0);
        snprintf(want, sizeof want, "pid %d (", (int) h);
        const char *at = strstr(log, want);
        ck_assert_msg(at && strstr(at, "holds \"/dev/tty0\""),
                      "alice's logout did not find her process under a subordinate uid:\n%s", log);
        snprintf(want, sizeof want, "pid %d (", (int) g);
        at = strstr(log, want);
        ck_assert_msg(at && strstr(at, "holds \"/dev/tty0\""),
                      "alice's logout did not find a handed fd of a uid with no session:\n%s", log);
        free(log);
}
END_TEST

/* At a logout too, a process of alice's over the scan budget (9000 fds)
 * is not killed for it: the module reads it to the end after the lock,
 * and ends it (lingering = kill) only if it holds a node. */
START_TEST(test_logout_reads_a_process_over_the_budget_after_the_lock) {
        conf_with("lingering = kill\n");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        pid_t idle = h_fat_start(H_UID_ALICE, 9000, NULL);
        pid_t holder = h_fat_start(H_UID_ALICE, 9000, "/dev/tty0");
        ck_assert_msg(idle > 0 && holder > 0, "the 9000-fd processes did not start");
        free(h_log_take());
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *log = h_log_take(), want[96];
        bool idle_alive = waitpid(idle, NULL, WNOHANG) == 0;
        int st = 0;
        bool holder_ended = h_wait_exit(holder, 2000, &st);
        (void) h_wait_exit(idle, 0, NULL);
        ck_assert_msg(idle_alive,
                      "a 9000-fd process of alice's holding nothing was killed at her logout:\n%s",
                      log);
        ck_assert_msg(holder_ended && WIFSIGNALED(st),
                      "the 9000-fd holder of tty0 outlived alice's logout:\n%s", log);
        snprintf(want, sizeof want, "pid %d (", (int) holder);
        const char *at = strstr(log, want);
        ck_assert_msg(at && strstr(at, "read to the end after the lock"),
                      "the holder was not left to the pass after the lock:\n%s", log);
        ck_assert_msg(!strstr(log, "than the scan budget"),
                      "a process was ended for the scan budget:\n%s", log);
        ck_assert_msg(strstr(log,
                             "0 left; 2 process(es) not read to the end under the lock, "
                             "read after it"),
                      "the logout's summary counts the two as holders left:\n%s", log);
        free(log);
}
END_TEST

/* A logout of a user with many processes that hold nothing (a build left
 * running under nohup, a browser's) kills none of them, however many the
 * sweep leaves to the pass after the lock (past 256, all of hers, read
 * there). */
START_TEST(test_logout_leaves_a_crowd_of_idle_processes) {
        enum { N = 900 };
        static pid_t crowd[N];
        conf_with("lingering = revoke\n");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        ck_assert_msg(h_crowd_start(H_UID_ALICE, N, crowd) == 0, "the crowd did not start");
        free(h_log_take());
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        (void) usleep(300 * 1000);
        size_t alive = h_crowd_stop(crowd, N);
        char *log = h_log_take();
        ck_assert_msg(alive == N,
                      "%zu of alice's %d idle processes were killed at her logout:\n%.3000s",
                      (size_t) N - alive, (int) N, log);
        ck_assert_msg(strstr(log, "every process of it is read to the end after the lock"),
                      "the sweep did not leave the rest to the pass:\n%.3000s", log);
        free(log);
}
END_TEST

/* A process that left alice's uid for a subordinate one (a user namespace
 * she made) with the node in a ring whose fd it closed (only its maps show
 * the ring): the pass after her logout reads its maps as hers, and ends it.
 * One in a user namespace carol made, with such a ring of /dev/null, is
 * not read so, and lives. */
START_TEST(test_logout_ends_a_subuid_ring_with_no_fd) {
        conf_with("lingering = revoke\n");
        struct h_ring_arg ring = { "/dev/tty0", true }, null = { "/dev/null", true };
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        pid_t h = h_holder_spawn_subuid(h_map_a_ring, &ring, "a ring", H_UID_ALICE, 300001);
        pid_t c = h_holder_spawn_subuid(h_map_a_ring, &null, "a ring", H_UID_CAROL, 300002);
        free(h_log_take());
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        char *log = h_log_take();
        bool h_gone = h_wait_exit(h, 2000, NULL);
        bool c_alive = !h_wait_exit(c, 0, NULL);
        ck_assert_msg(
                h_gone,
                "alice's subordinate-uid process with tty0 in a ring with no fd survived her logout:\n%s",
                log);
        ck_assert_msg(c_alive, "a process in carol's user namespace was ended:\n%s", log);
        ck_assert_msg(strstr(log, "no fd left"), "log: %s", log);
        free(log);
}
END_TEST

START_TEST(test_logout_leaves_lingering_holder_with_warn) {
        conf_with("lingering = warn\n");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct holder h = holder_start("/dev/tty0", H_UID_ALICE, false);
        free(h_log_take());
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        ck_assert_msg(holder_alive(&h), "warn killed a holder");
        char *log = h_log_take(), want[160];
        snprintf(want, sizeof want, "pid %d (\"test-linger\", uid %u) still holds \"/dev/tty0\"",
                 (int) h.pid, (unsigned) H_UID_ALICE);
        ck_assert_msg(strstr(log, want) && strstr(log, "lingering = warn, leaving it"),
                      "log lacks \"%s\":\n%s", want, log);
        free(log);
        holder_stop(&h);
}
END_TEST

START_TEST(test_handover_spares_the_new_holder) {
        conf_with("lingering = kill\n");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        struct holder ha = holder_start("/dev/tty0", H_UID_ALICE, false);
        struct holder hb = holder_start("/dev/tty0", H_UID_BOB, false);
        h_set_active_vt(h_vt + 1);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        ck_assert_str_eq(h_acl_of("/dev/tty0", H_UID_BOB), "rw");
        ck_assert_msg(!holder_alive(&ha), "alice's holder survived the handover");
        ck_assert_msg(holder_alive(&hb), "bob, the new holder, lost his process");
        holder_stop(&ha);
        holder_stop(&hb);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        h_set_active_vt(1);
}
END_TEST

START_TEST(test_session_of_holder_still_open_is_not_swept) {
        conf_with("lingering = kill\n");
        struct h_session *a1 = h_session_open("xdalice", h_vt, NULL);
        struct h_session *a2 = h_session_open("xdalice", h_vt + 1, NULL);
        struct holder h = holder_start("/dev/tty0", H_UID_ALICE, false);
        ck_assert_int_eq(h_session_close(a1), PAM_SUCCESS);
        ck_assert_msg(holder_alive(&h), "alice still holds: her process must live");
        ck_assert_int_eq(h_session_close(a2), PAM_SUCCESS);
        ck_assert(!holder_alive(&h));
        holder_stop(&h);
}
END_TEST

START_TEST(test_reaped_holder_is_swept_by_next_login) {
        conf_with("lingering = kill\n");
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct holder h = holder_start("/dev/tty0", H_UID_ALICE, false);
        h_session_kill(a);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        ck_assert_msg(!holder_alive(&h), "the dead holder's process survived the reaping");
        holder_stop(&h);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
}
END_TEST

static const char *helper(void) {
        const char *h = getenv("XDEV_HELPER");
        return h ? h : "../xdevices/xdevices";
}

static void conf_grace(const char *policy, unsigned grace_ms) {
        char conf[512];
        snprintf(conf, sizeof conf,
                 "devices = glob\nglob = console:/dev/tty0\nconsole = rw\nlogind = ignore\n"
                 "lingering = %s\nlinger_grace = %u\n",
                 policy, grace_ms);
        h_fresh(conf, NULL);
}

/* Whether the state file holds LINE (the start of one), waiting up to MS
 * for it to be so (PRESENT) or not. */
static bool state_has(const char *line, bool present, int ms) {
        char buf[16384], want[128];
        snprintf(want, sizeof want, "\n%s", line);
        for (int waited = 0;; waited += 10) {
                FILE *f = fopen("/run/xdevices/state", "re");
                size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
                if (f)
                        (void) fclose(f);
                buf[n] = '\0';
                if ((strstr(buf, want) != NULL) == present)
                        return true;
                if (waited >= ms)
                        return false;
                (void) usleep(10 * 1000);
        }
}

/* lingering = kill at a logout: the grace period is waited out after the
 * state lock is let go. The next holder has the devices and another login
 * goes through while the holder that ignores SIGTERM still lives. */
START_TEST(test_logout_grace_period_keeps_nobody_waiting) {
        conf_grace("kill", 30000);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        struct holder ha = holder_start("/dev/tty0", H_UID_ALICE, true);
        h_set_active_vt(h_vt + 1);
        h_session_close_begin(a);
        for (int i = 0; i < 2000 && strcmp(h_acl_of("/dev/tty0", H_UID_BOB), "rw") != 0; i++)
                (void) usleep(10 * 1000);
        ck_assert_msg(strcmp(h_acl_of("/dev/tty0", H_UID_BOB), "rw") == 0 && holder_alive(&ha),
                      "bob did not get tty0 while alice's holder was in its grace period");
        ck_assert_str_eq(h_acl_of("/dev/tty0", H_UID_ALICE), "");
        ck_assert_msg(h_session_running(a),
                      "alice's close did not wait for her holder, which ignores SIGTERM");
        /* the record is saved after the grant's changes, before the lock
         * is let go: bounded wait, not a race with the ACL seen above */
        ck_assert_msg(state_has("sweep uid=61001 ", true, 5000),
                      "alice's sweep in its grace period is not in the state");
        const char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
        const char *st[] = { helper(), "--conf=" H_CONF, "status", NULL };
        const char *sj[] = { helper(), "--conf=" H_CONF, "status", "--json", NULL };
        char *out = NULL, want[128];
        ck_assert_int_eq(h_run_helper(st, env, &out), 0);
        snprintf(want, sizeof want,
                 "logout sweep: the processes of uid 61001 are being ended by pid %d (SIGKILL in ",
                 (int) a->pid);
        ck_assert_msg(strstr(out, want), "status lacks \"%s\": %s", want, out);
        free(out);
        ck_assert_int_eq(h_run_helper(sj, env, &out), 0);
        snprintf(want, sizeof want,
                 ",\"sweeps\":[{\"uid\":61001,\"sweeper\":%d,\"ms_left\":", (int) a->pid);
        ck_assert_msg(strstr(out, want), "status --json lacks %s: %s", want, out);
        free(out);
        struct h_session *c = h_session_open("xdcarol", h_vt + 2, NULL);
        ck_assert_int_eq(c->open_ret, PAM_SUCCESS);
        ck_assert_msg(holder_alive(&ha) && h_session_running(a),
                      "carol's login waited for the end of alice's grace period");
        holder_stop(&ha); /* the sweep sees it gone and ends */
        ck_assert_int_eq(h_session_close_end(a), PAM_SUCCESS);
        ck_assert_msg(state_has("sweep ", false, 0), "the ended sweep is still in the state");
        ck_assert_int_eq(h_session_close(c), PAM_SUCCESS);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        h_set_active_vt(1);
}
END_TEST

/* The closer is killed in its grace period: the next transaction (here
 * "xdevices gc") finishes its sweep by the same deadline. */
START_TEST(test_sweep_of_a_killed_closer_is_finished_by_the_next_transaction) {
        conf_grace("kill", 2000);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        struct holder ha = holder_start("/dev/tty0", H_UID_ALICE, true);
        h_session_close_begin(a);
        ck_assert_msg(state_has("sweep uid=61001 ", true, 20000),
                      "alice's sweep in its grace period is not in the state");
        h_session_kill(a);
        ck_assert(holder_alive(&ha));
        const char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
        const char *gc[] = { helper(), "--conf=" H_CONF, "gc", NULL };
        char *out = NULL;
        ck_assert_int_eq(h_run_helper(gc, env, &out), 0);
        ck_assert_msg(!holder_alive(&ha), "the holder outlived the sweep taken over: %s", out);
        ck_assert_msg(WIFSIGNALED(ha.status) && WTERMSIG(ha.status) == SIGKILL,
                      "the holder did not end by SIGKILL");
        ck_assert_msg(strstr(out, "did not finish the sweep of uid 61001"), "gc said: %s", out);
        ck_assert_msg(state_has("sweep ", false, 0), "the finished sweep is still in the state");
        free(out);
}
END_TEST

/* xdevicesd's step reaps a session whose login was killed and sends its
 * holder SIGTERM, but leaves the grace period to the caller (the daemon
 * waits it out in a thread): the step, and the next switch, do not wait. */
START_TEST(test_daemon_step_leaves_the_grace_period_to_the_caller) {
        struct xdev_follow_result *res = calloc(1, sizeof *res);
        struct xdev_follow_self self = { .pid = getpid() };
        struct xdev_proc_stat pst;
        struct xdev_ctx ctx;
        char want[96];

        conf_grace("kill", 30000);
        ck_assert_ptr_nonnull(res);
        ck_assert_int_eq(xdev_proc_stat(self.pid, &pst), 0);
        self.start = pst.start;
        xdev_ctx_init(&ctx);
        ck_assert_int_ge(xdev_config_load(&ctx.config, H_CONF, NULL), 0);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_int_eq(b->open_ret, PAM_SUCCESS);
        h_set_active_vt(h_vt);
        ck_assert_int_eq(xdev_follow_update(&ctx, &self, res), 0);
        xdev_fd_bin_empty(&res->bin);
        ck_assert(res->has_holder && res->holder == H_UID_ALICE && !res->waits);
        struct holder ha = holder_start("/dev/tty0", H_UID_ALICE, true);
        h_session_kill(a);
        h_set_active_vt(h_vt + 1);
        ck_assert_int_eq(xdev_follow_update(&ctx, &self, res), 0);
        xdev_fd_bin_empty(&res->bin);
        ck_assert(res->has_holder && res->holder == H_UID_BOB);
        ck_assert_str_eq(h_acl_of("/dev/tty0", H_UID_BOB), "rw");
        ck_assert_msg(res->waits && res->waits->uid == H_UID_ALICE && !res->waits->next,
                      "the step did not hand alice's grace period back");
        ck_assert_msg(holder_alive(&ha), "the step waited for alice's holder");
        struct xdev_sweep_wait *w = res->waits;
        snprintf(want, sizeof want, "sweep uid=61001 pid=%d ", (int) getpid());
        ck_assert_msg(state_has(want, true, 0), "the state does not say who sweeps");
        /* a switch meanwhile is not held up either */
        h_set_active_vt(h_vt + 2);
        ck_assert_int_eq(xdev_follow_update(&ctx, &self, res), 0);
        xdev_fd_bin_empty(&res->bin);
        ck_assert(!res->has_holder && !res->waits);
        ck_assert(holder_alive(&ha));
        /* the caller ends the sweep: here the holder goes by itself */
        holder_stop(&ha);
        xdev_linger_finish(&ctx, w);
        ck_assert_msg(state_has("sweep ", false, 0), "the ended sweep is still in the state");
        ck_assert_int_eq(xdev_follow_update(&ctx, NULL, NULL), 0);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        h_set_active_vt(1);
        xdev_ctx_done(&ctx);
        free(res);
}
END_TEST

/* lingering = kill-user: while the processes of alice's last session are
 * being ended, her new login waits, so that it is not ended with them. */
START_TEST(test_new_session_of_the_user_waits_for_her_sweep) {
        conf_grace("kill-user", 2000);
        struct h_session *a = h_session_open("xdalice", h_vt, NULL);
        ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
        struct holder ha = holder_start(NULL, H_UID_ALICE, true);
        h_session_close_begin(a);
        ck_assert_msg(state_has("sweep uid=61001 ", true, 20000),
                      "alice's sweep in its grace period is not in the state");
        ck_assert(holder_alive(&ha));
        struct h_session *a2 = h_session_open("xdalice", h_vt + 1, NULL);
        ck_assert_int_eq(a2->open_ret, PAM_SUCCESS);
        ck_assert_msg(!holder_alive(&ha),
                      "alice's new session began while her last one's processes lived");
        ck_assert_msg(state_has("sweep ", false, 0), "the ended sweep is still in the state");
        ck_assert_int_eq(h_session_close_end(a), PAM_SUCCESS);
        struct holder hn = holder_start(NULL, H_UID_ALICE, false);
        ck_assert_msg(holder_alive(&hn), "a process of alice's new session was ended");
        holder_stop(&hn);
        ck_assert_int_eq(h_session_close(a2), PAM_SUCCESS);
}
END_TEST

/* A ring padded past the old 8 KiB read, at a logout under "revoke" and
 * "kill": the holder ends (at once: it still reads the node, so it gets
 * no grace period in which to read the next user's input). */
START_TEST(test_logout_ends_a_padded_io_uring_holder) {
        static const char *policies[] = { "revoke", "kill" };
        for (size_t i = 0; i < 2; i++) {
                conf_grace(policies[i], 30000);
                struct h_session *a = h_session_open("xdalice", h_vt, NULL);
                ck_assert_int_eq(a->open_ret, PAM_SUCCESS);
                struct holder h = holder_start_uring_padded("/dev/tty0", H_UID_ALICE, 1000, true);
                if (h.pid == 0) {
                        fprintf(stderr, "test-linger: io_uring is not available here\n");
                        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
                        return;
                }
                free(h_log_take());
                ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
                char *log = h_log_take();
                ck_assert_msg(!holder_alive(&h),
                              "lingering = %s: a ring padded with 1000 files kept tty0:\n%s",
                              policies[i], log);
                ck_assert_msg(WIFSIGNALED(h.status) && WTERMSIG(h.status) == SIGKILL,
                              "lingering = %s: not ended by SIGKILL", policies[i]);
                ck_assert_msg(strstr(log, "io_uring"), "log: %s", log);
                free(log);
        }
}
END_TEST

struct step_env {
        struct xdev_ctx ctx;
        struct xdev_follow_self self;
        struct xdev_follow_result *res;
};

static void step_env_init(struct step_env *e) {
        struct xdev_proc_stat pst;
        e->self = (struct xdev_follow_self) { .pid = getpid() };
        ck_assert_int_eq(xdev_proc_stat(e->self.pid, &pst), 0);
        e->self.start = pst.start;
        e->res = calloc(1, sizeof *e->res);
        ck_assert_ptr_nonnull(e->res);
        xdev_ctx_init(&e->ctx);
        ck_assert_int_ge(xdev_config_load(&e->ctx.config, H_CONF, NULL), 0);
}

static void step_env_done(struct step_env *e) {
        ck_assert_int_eq(xdev_follow_update(&e->ctx, NULL, NULL), 0);
        xdev_ctx_done(&e->ctx);
        free(e->res);
}

/* One step of xdevicesd, with its sweeps finished as the daemon does. */
static void step(struct step_env *e) {
        ck_assert_int_eq(xdev_follow_update(&e->ctx, &e->self, e->res), 0);
        xdev_fd_bin_empty(&e->res->bin);
        xdev_linger_finish(&e->ctx, e->res->waits);
        e->res->waits = NULL;
}

/* step_env_init(), then alice on h_vt and bob on the next VT, alice's in
 * front and holding after a step. */
static void step_env_alice_in_front(struct step_env *e, struct h_session **a,
                                    struct h_session **b) {
        step_env_init(e);
        *a = h_session_open("xdalice", h_vt, NULL);
        *b = h_session_open("xdbob", h_vt + 1, NULL);
        ck_assert_int_eq((*b)->open_ret, PAM_SUCCESS);
        h_set_active_vt(h_vt);
        step(e);
        ck_assert(e->res->has_holder && e->res->holder == H_UID_ALICE);
}

/* The padded ring at a VT switch (xdevicesd's step): alice keeps her
 * session, and her process that holds tty0 in the ring past 1000 padding
 * files ends. */
START_TEST(test_switch_ends_a_padded_io_uring_holder) {
        struct step_env e;
        conf_grace("revoke", 30000);
        struct h_session *a, *b;
        step_env_alice_in_front(&e, &a, &b);
        struct holder h = holder_start_uring_padded("/dev/tty0", H_UID_ALICE, 1000, true);
        if (h.pid == 0)
                fprintf(stderr, "test-linger: io_uring is not available here\n");
        free(h_log_take());
        h_set_active_vt(h_vt + 1);
        step(&e);
        ck_assert(e.res->has_holder && e.res->holder == H_UID_BOB);
        if (h.pid != 0) {
                /* its end was waited for after the step (step() as the daemon) */
                ck_assert_msg(!holder_alive(&h),
                              "a ring padded with 1000 files kept tty0 across the switch");
                ck_assert_msg(WIFSIGNALED(h.status) && WTERMSIG(h.status) == SIGKILL,
                              "the ring's holder did not end by SIGKILL");
        }
        step_env_done(&e);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_set_active_vt(1);
}
END_TEST

/* At a VT switch a process to end (here it holds tty0 in an io_uring,
 * which cannot be revoked, and ignores SIGTERM) makes nobody wait for its
 * end: the step runs in a child, and bob has the devices and carol logs
 * in while alice's session, which keeps her processes, lives on. */
START_TEST(test_switch_waits_for_no_process_to_end) {
        struct step_env e;
        conf_grace("kill", 30000);
        struct h_session *a, *b;
        step_env_alice_in_front(&e, &a, &b);
        struct holder h = holder_start_uring_padded("/dev/tty0", H_UID_ALICE, 0, true);
        struct holder hh = holder_start_hidden("/dev/tty0", H_UID_ALICE);
        h_set_active_vt(h_vt + 1);
        pid_t stepper = fork();
        ck_assert_int_ge(stepper, 0);
        if (stepper == 0) {
                struct xdev_proc_stat pst;
                e.self.pid = getpid();
                if (xdev_proc_stat(e.self.pid, &pst) < 0)
                        _exit(2);
                e.self.start = pst.start;
                if (xdev_follow_update(&e.ctx, &e.self, e.res) < 0)
                        _exit(3);
                xdev_fd_bin_empty(&e.res->bin);
                xdev_linger_finish(&e.ctx, e.res->waits);
                _exit(0);
        }
        for (int i = 0; i < 1500 && strcmp(h_acl_of("/dev/tty0", H_UID_BOB), "rw") != 0; i++)
                (void) usleep(10 * 1000);
        ck_assert_msg(strcmp(h_acl_of("/dev/tty0", H_UID_BOB), "rw") == 0,
                      "bob did not get tty0 while alice's unrevocable holder was being ended");
        struct h_session *c = h_session_open("xdcarol", h_vt + 2, NULL);
        ck_assert_int_eq(c->open_ret, PAM_SUCCESS);
        ck_assert_msg(h_session_running(a), "alice's session did not live on");
        /* no grace period: what cannot be cut off is killed at once */
        ck_assert_int_eq(waitpid(hh.pid, &hh.status, 0), hh.pid);
        hh.reaped = true;
        ck_assert_msg(WIFSIGNALED(hh.status) && WTERMSIG(hh.status) == SIGKILL,
                      "the holder hiding tty0 in a thread did not end by SIGKILL");
        if (h.pid != 0) {
                ck_assert_int_eq(waitpid(h.pid, &h.status, 0), h.pid);
                h.reaped = true;
                ck_assert_msg(WIFSIGNALED(h.status) && WTERMSIG(h.status) == SIGKILL,
                              "the ring's holder did not end by SIGKILL");
        }
        int st;
        ck_assert_int_eq(waitpid(stepper, &st, 0), stepper);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the step failed: %#x", st);
        ck_assert_msg(!state_has("sweep ", true, 0), "a switch's kill left a sweep record");
        ck_assert_int_eq(h_session_close(c), PAM_SUCCESS);
        step_env_done(&e);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_set_active_vt(1);
}
END_TEST

/* What a step saw at the end of each phase: the phase, and the ACL
 * entries of alice and bob on tty0 (a shared node) at that moment. */
struct phase_log {
        size_t n;
        enum xdev_follow_phase phase[8];
        char alice[8][8], bob[8][8];
};

static void phase_seen(void *data, enum xdev_follow_phase phase) {
        struct phase_log *l = data;
        if (l->n >= 8)
                return;
        l->phase[l->n] = phase;
        (void) snprintf(l->alice[l->n], sizeof l->alice[0], "%s",
                        h_acl_of("/dev/tty0", H_UID_ALICE));
        (void) snprintf(l->bob[l->n], sizeof l->bob[0], "%s", h_acl_of("/dev/tty0", H_UID_BOB));
        l->n++;
}

static void phase_log_is(const struct phase_log *l, const char *what, size_t n,
                         const enum xdev_follow_phase *want) {
        static const char *const names[] = { "load", "grant", "sweep" };
        char got[128] = "";
        for (size_t i = 0; i < l->n; i++)
                (void) snprintf(got + strlen(got), sizeof got - strlen(got), " %s",
                                (unsigned) l->phase[i] < 3 ? names[l->phase[i]] : "?");
        ck_assert_msg(l->n == n, "%s: %zu phases ended (%s), want %zu", what, l->n, got, n);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(l->phase[i] == want[i], "%s: phases%s, want %s first at %zu", what,
                              got, names[want[i]], i);
}

/* A switch goes down the layers once: each node passes from the old
 * holder to the next in the one commit, then the one sweep of her
 * processes; each phase ends once. When the grant ends bob has tty0 and
 * alice nothing (one write: never both), and so while her processes are
 * swept. A switch to a VT where nobody holds takes the grants off and
 * sweeps once after. */
START_TEST(test_switch_grants_in_one_write_then_sweeps_once) {
        static const enum xdev_follow_phase handover[] = { XDEV_PHASE_LOAD, XDEV_PHASE_GRANT,
                                                           XDEV_PHASE_SWEEP };
        static const enum xdev_follow_phase to_nobody[] = { XDEV_PHASE_LOAD, XDEV_PHASE_GRANT,
                                                            XDEV_PHASE_SWEEP };
        struct phase_log l = { 0 };
        struct step_env e;
        conf_with("lingering = revoke\n");
        struct h_session *a, *b;
        step_env_alice_in_front(&e, &a, &b);
        e.self.phase_end = phase_seen;
        e.self.data = &l;

        h_set_active_vt(h_vt + 1);
        step(&e);
        ck_assert(e.res->handed_over && e.res->holder == H_UID_BOB);
        phase_log_is(&l, "alice to bob", 3, handover);
        ck_assert_msg(e.res->examined >= 1, "alice's processes were not looked at");
        ck_assert_str_eq(l.alice[0], "rw");
        ck_assert_str_eq(l.bob[0], "");
        ck_assert_msg(l.alice[1][0] == '\0' && strcmp(l.bob[1], "rw") == 0,
                      "at the end of the grant alice has \"%s\", bob \"%s\" on tty0", l.alice[1],
                      l.bob[1]);
        ck_assert_str_eq(l.alice[2], "");
        ck_assert_str_eq(l.bob[2], "rw");
        ck_assert_msg(e.res->io.acl_writes > 0 && e.res->io.acl_writes == e.res->io.mark_writes,
                      "%u ACL writes for %u nodes marked: each node is written once",
                      e.res->io.acl_writes, e.res->io.mark_writes);

        l = (struct phase_log) { 0 };
        h_set_active_vt(h_vt + 2);
        step(&e);
        ck_assert(e.res->changed && !e.res->has_holder);
        phase_log_is(&l, "bob to nobody", 3, to_nobody);
        ck_assert_str_eq(l.bob[1], "");
        ck_assert_str_eq(l.bob[2], "");

        e.self.phase_end = NULL;
        step_env_done(&e);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
        ck_assert_int_eq(h_session_close(a), PAM_SUCCESS);
        h_set_active_vt(1);
}
END_TEST

START_TEST(test_helper_status_and_revoke) {
        conf_with("lingering = kill\n");
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        struct holder ha = holder_start("/dev/tty0", H_UID_ALICE, false);
        struct holder hb = holder_start("/dev/tty0", H_UID_BOB, false);
        const char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
        const char *st[] = { helper(), "--conf=" H_CONF, "status", NULL };
        char *out = NULL, want[64];
        ck_assert_int_eq(h_run_helper(st, env, &out), 0);
        snprintf(want, sizeof want, "pid %-7d", (int) ha.pid);
        ck_assert_msg(strstr(out, "lingering holders:") && strstr(out, want), "status: %s", out);
        snprintf(want, sizeof want, "pid %-7d", (int) hb.pid);
        ck_assert_msg(!strstr(out, want), "the holder's own process is listed: %s", out);
        free(out);
        const char *sj[] = { helper(), "--conf=" H_CONF, "status", "--json", NULL };
        char json[128];
        ck_assert_int_eq(h_run_helper(sj, env, &out), 0);
        ck_assert_msg(out[0] == '{' && strstr(out, "}],\"lingering\":[{") &&
                              strcmp(out + strlen(out) - 3, "]}\n") == 0,
                      "status --json: %s", out);
        snprintf(json, sizeof json,
                 "{\"pid\":%d,\"comm\":\"test-linger\",\"uid\":%u,\"path\":\"/dev/tty0\",\"fd\":",
                 (int) ha.pid, (unsigned) H_UID_ALICE);
        ck_assert_msg(strstr(out, json), "status --json lacks %s: %s", json, out);
        ck_assert_msg(strstr(out, "\"thread\":null,\"revoked\":false}"), "status --json: %s", out);
        snprintf(json, sizeof json, "{\"pid\":%d,", (int) hb.pid);
        ck_assert_msg(!strstr(out, json), "the holder's own process is listed: %s", out);
        free(out);
        const char *rb[] = { helper(), "--conf=" H_CONF, "revoke", "xdbob", NULL };
        ck_assert_int_eq(h_run_helper(rb, env, NULL), 0);
        ck_assert(holder_alive(&hb));
        const char *ra[] = { helper(), "--conf=" H_CONF, "revoke", "--all", NULL };
        ck_assert_int_eq(h_run_helper(ra, env, &out), 0);
        ck_assert_msg(!holder_alive(&ha), "revoke --all left alice's process: %s", out);
        ck_assert(holder_alive(&hb));
        free(out);
        holder_stop(&ha);
        holder_stop(&hb);
        ck_assert_int_eq(h_session_close(b), PAM_SUCCESS);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("linger");
        TCase *tc = h_tcase(s, "sweep", 60, fresh, NULL);
        tcase_add_test(tc, test_warn_logs_holder_and_leaves_it);
        tcase_add_test(tc, test_o_path_fd_is_no_hold);
        tcase_add_test(tc, test_kill_terminates_holder_with_sigterm);
        tcase_add_test(tc, test_kill_sends_sigkill_after_grace);
        tcase_add_test(tc, test_revoke_leaves_holders_of_unrevocable_nodes);
        tcase_add_test(tc, test_root_processes_are_never_touched);
        tcase_add_test(tc, test_new_holder_is_never_touched);
        tcase_add_test(tc, test_only_uid_limits_the_sweep);
        tcase_add_test(tc, test_only_uid_matches_every_uid_of_a_process);
        tcase_add_test(tc, test_root_daemon_with_a_borrowed_fsuid_is_not_swept);
        tcase_add_test(tc, test_kill_user_ends_every_process_of_the_user);
        tcase_add_test(tc, test_io_uring_registered_file_is_found);
        tcase_add_test(tc, test_io_uring_padded_past_any_read_is_found);
        tcase_add_test(tc, test_io_uring_file_of_the_same_name_is_not_a_holder);
        tcase_add_test(tc, test_io_uring_with_its_lock_held_is_unreachable);
        tcase_add_test(tc, test_io_uring_with_no_fd_left_is_unreachable);
        tcase_add_test(tc, test_a_held_map_lock_does_not_stall_the_sweep);
        tcase_add_test(tc, test_process_over_the_scan_budget_is_terminated);
        tcase_add_test(tc, test_process_without_the_node_is_not_a_holder);
        tcase_add_test(tc, test_found_through_another_name);
        tcase_add_test(tc, test_report_only_lists_and_changes_nothing);
        tcase_add_test(tc, test_fd_in_a_thread_own_fd_table_is_found);
        tcase_add_test(tc, test_holder_of_too_many_fds_is_terminated);
        tcase_add_test(tc, test_sweep_reads_no_kernel_thread);
        tcase_add_test(tc, test_pid_2_of_a_pid_namespace_is_not_taken_for_kthreadd);
        tcase_add_test(tc, test_proc_of_another_pid_namespace_is_not_trusted);
        TCase *tm = h_tcase(s, "module", 60, NULL, NULL);
        tcase_add_test(tm, test_logout_kills_lingering_holder_with_kill);
        tcase_add_test(tm, test_logout_leaves_lingering_holder_with_warn);
        tcase_add_test(tm, test_logout_spares_other_users_and_daemons);
        tcase_add_test(tm, test_logout_finds_a_holder_that_left_the_uid);
        tcase_add_test(tm, test_logout_reads_a_process_over_the_budget_after_the_lock);
        tcase_add_test(tm, test_logout_leaves_a_crowd_of_idle_processes);
        tcase_add_test(tm, test_logout_ends_a_subuid_ring_with_no_fd);
        tcase_add_test(tm, test_handover_spares_the_new_holder);
        tcase_add_test(tm, test_session_of_holder_still_open_is_not_swept);
        tcase_add_test(tm, test_reaped_holder_is_swept_by_next_login);
        tcase_add_test(tm, test_helper_status_and_revoke);
        tcase_add_test(tm, test_logout_grace_period_keeps_nobody_waiting);
        tcase_add_test(tm, test_sweep_of_a_killed_closer_is_finished_by_the_next_transaction);
        tcase_add_test(tm, test_new_session_of_the_user_waits_for_her_sweep);
        tcase_add_test(tm, test_daemon_step_leaves_the_grace_period_to_the_caller);
        tcase_add_test(tm, test_logout_ends_a_padded_io_uring_holder);
        tcase_add_test(tm, test_switch_ends_a_padded_io_uring_holder);
        tcase_add_test(tm, test_switch_waits_for_no_process_to_end);
        tcase_add_test(tm, test_switch_grants_in_one_write_then_sweeps_once);
        return s;
}

H_SUITE(suite, H_ROOT_ONLY)
H_MAIN(H_HARNESS)
