/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdevicesd's process table (proctab.c) against the real proc connector:
 * it follows forks, uid changes and exits; a lost event reseeds it; a pid
 * namespace of its own gets no events and the table says so; and a sweep
 * fed by the table finds what the walk of /proc finds. Root (the connector
 * needs CAP_NET_ADMIN); no VT is used. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "procfs.h"
#include "sweep.h"
#include "proctab.h"
#include "runner.h"

/* uids of this test alone: a sweep or a listing must not meet the
 * processes of the other test programs (they use the harness's uids) */
#define PT_UID_A 61071
#define PT_UID_B 61072

/* A child that takes the uids given, tells the parent, and waits for its
 * pipe to close (or to be killed). */
struct kid {
        pid_t pid;
        int hold; /* the write end: closing it ends the child */
};

static struct kid kid_start(uid_t ruid, uid_t euid, uid_t suid, bool fork_again) {
        int ready[2], hold[2];
        struct kid k;
        char c;

        ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(hold, O_CLOEXEC), 0);
        k.pid = fork();
        ck_assert_int_ge(k.pid, 0);
        if (k.pid == 0) {
                (void) close(ready[0]);
                (void) close(hold[1]);
                if (setresuid(ruid, euid, suid) < 0)
                        _exit(1);
                if (fork_again && fork() == 0) {
                        /* the grandchild: waits as its parent does */
                        (void) read(hold[0], &c, 1);
                        _exit(0);
                }
                (void) write(ready[1], "x", 1);
                (void) read(hold[0], &c, 1);
                _exit(0);
        }
        (void) close(ready[1]);
        (void) close(hold[0]);
        ck_assert_int_eq(read(ready[0], &c, 1), 1);
        (void) close(ready[0]);
        k.hold = hold[1];
        return k;
}

static void kid_end(struct kid *k) {
        (void) close(k->hold);
        (void) kill(k->pid, SIGKILL);
        (void) waitpid(k->pid, NULL, 0);
}

static bool listed(struct xdev_proctab *t, uid_t uid, pid_t pid, size_t *ret_n) {
        pid_t *v;
        size_t n;
        bool found = false;

        ck_assert_int_eq(xdev_proctab_pids(t, uid, &v, &n), 0);
        for (size_t i = 0; i < n; i++)
                found = found || v[i] == pid;
        if (ret_n)
                *ret_n = n;
        free(v);
        return found;
}

static bool any_kernel_thread(struct xdev_proctab *t, uid_t uid) {
        struct xdev_proc_stat st;
        pid_t *v;
        size_t n;
        bool kernel = false;

        ck_assert_int_eq(xdev_proctab_pids(t, uid, &v, &n), 0);
        for (size_t i = 0; i < n; i++)
                if (xdev_proc_stat(v[i], &st) == 0 && (st.flags & 0x00200000u /* PF_KTHREAD */))
                        kernel = true;
        free(v);
        return kernel;
}

static struct xdev_proctab *table_open(size_t rcvbuf) {
        struct xdev_proctab *t = NULL;
        int r = xdev_proctab_open(&t, rcvbuf, NULL);
        ck_assert_msg(r == 0, "cannot open the process table: %s", strerror(-r));
        return t;
}

START_TEST(test_table_follows_fork_uid_changes_and_exit) {
        struct xdev_proctab *t = table_open(0);
        struct xdev_proctab_stats st;

        /* alice's child, and the grandchild it forks; bob's child; a root
         * child that only borrows alice's fsuid */
        struct kid a = kid_start(PT_UID_A, PT_UID_A, PT_UID_A, true);
        struct kid b = kid_start(PT_UID_B, PT_UID_B, PT_UID_B, false);
        ck_assert(listed(t, PT_UID_A, a.pid, NULL));
        ck_assert(!listed(t, PT_UID_A, b.pid, NULL));
        ck_assert(listed(t, PT_UID_B, b.pid, NULL));
        ck_assert(!listed(t, PT_UID_B, a.pid, NULL));
        ck_assert_msg(!listed(t, PT_UID_A, getpid(), NULL), "root's own process was listed");
        ck_assert_msg(!any_kernel_thread(t, 0), "a kernel thread was listed");

        /* the grandchild: found by its parent's uids, copied at the fork */
        pid_t *v;
        size_t n, grandchildren = 0;
        ck_assert_int_eq(xdev_proctab_pids(t, PT_UID_A, &v, &n), 0);
        for (size_t i = 0; i < n; i++) {
                struct xdev_proc_stat ps;
                char path[64], buf[256];
                (void) snprintf(path, sizeof path, "/proc/%d/stat", (int) v[i]);
                FILE *f = fopen(path, "re");
                if (f && fgets(buf, sizeof buf, f)) {
                        const char *rp = strrchr(buf, ')');
                        int ppid = 0;
                        if (rp && sscanf(rp + 2, "%*c %d", &ppid) == 1 && ppid == a.pid &&
                            xdev_proc_stat(v[i], &ps) == 0)
                                grandchildren++;
                }
                if (f)
                        fclose(f);
        }
        free(v);
        ck_assert_uint_eq(grandchildren, 1);

        /* a root process that takes alice's fsuid (setfsuid) or her saved
         * uid (setresuid) is hers from then on */
        int go[2], done[2];
        char c;
        ck_assert_int_eq(pipe(go), 0);
        ck_assert_int_eq(pipe(done), 0);
        pid_t r = fork();
        ck_assert_int_ge(r, 0);
        if (r == 0) {
                (void) close(go[1]);
                (void) close(done[0]);
                (void) read(go[0], &c, 1);
                (void) setfsuid(PT_UID_A);
                (void) write(done[1], "x", 1);
                (void) read(go[0], &c, 1);
                _exit(0);
        }
        xdev_proctab_stats(t, &st);
        ck_assert_msg(st.fsuid_events || listed(t, PT_UID_A, r, NULL),
                      "no setfsuid event on this kernel, and CAP_SETUID processes were not listed");
        if (st.fsuid_events)
                ck_assert(!listed(t, PT_UID_A, r, NULL));
        ck_assert_int_eq(write(go[1], "x", 1), 1);
        ck_assert_int_eq(read(done[0], &c, 1), 1);
        ck_assert_msg(listed(t, PT_UID_A, r, NULL), "a setfsuid(alice) was missed");
        (void) close(go[1]);
        (void) waitpid(r, NULL, 0);

        /* exits: gone from the table once reaped */
        kid_end(&a);
        ck_assert(!listed(t, PT_UID_A, a.pid, NULL));
        kid_end(&b);
        ck_assert(!listed(t, PT_UID_B, b.pid, NULL));
        xdev_proctab_stats(t, &st);
        ck_assert_uint_gt(st.events, 0);
        ck_assert_uint_eq(st.reseeds, 0);
        xdev_proctab_free(t);
}
END_TEST

/* A queue too small for what happens between two reads: the lost events
 * are noticed (ENOBUFS) and the table is read again from /proc, so the
 * process forked during the storm is still found. */
START_TEST(test_lost_events_reseed_the_table) {
        struct xdev_proctab *t = table_open(4096);
        struct xdev_proctab_stats st;
        pid_t storm[300];

        for (size_t i = 0; i < 300; i++) {
                storm[i] = fork();
                ck_assert_int_ge(storm[i], 0);
                if (storm[i] == 0)
                        _exit(0);
        }
        for (size_t i = 0; i < 300; i++)
                (void) waitpid(storm[i], NULL, 0);
        struct kid a = kid_start(PT_UID_A, PT_UID_A, PT_UID_A, false);
        for (size_t i = 0; i < 300; i++) {
                storm[i] = fork();
                ck_assert_int_ge(storm[i], 0);
                if (storm[i] == 0)
                        _exit(0);
        }
        for (size_t i = 0; i < 300; i++)
                (void) waitpid(storm[i], NULL, 0);
        ck_assert_msg(listed(t, PT_UID_A, a.pid, NULL), "alice's process was lost with the events");
        xdev_proctab_stats(t, &st);
        ck_assert_msg(st.overflow > 0 && st.reseeds > 0,
                      "the queue did not overflow (%u) or the table was not reseeded (%u)",
                      st.overflow, st.reseeds);
        kid_end(&a);
        ck_assert(!listed(t, PT_UID_A, a.pid, NULL));
        xdev_proctab_free(t);
}
END_TEST

static int open_in_pid_namespace(void) {
        struct xdev_proctab *t = NULL;
        int r = xdev_proctab_open(&t, 0, NULL);
        xdev_proctab_free(t);
        return r == -EOPNOTSUPP ? 0 : r == 0 ? 30 : 31;
}

/* The kernel sends no process event to a listener in a pid namespace of
 * its own, and says nothing: the table must notice, so that the daemon
 * walks /proc instead. */
START_TEST(test_no_events_in_a_pid_namespace) {
        int st;
        pid_t outer = fork();

        ck_assert_int_ge(outer, 0);
        if (outer == 0) {
                if (unshare(CLONE_NEWPID) < 0)
                        _exit(20);
                pid_t inner = fork();
                if (inner == 0)
                        _exit(open_in_pid_namespace());
                if (inner < 0 || waitpid(inner, &st, 0) != inner || !WIFEXITED(st))
                        _exit(21);
                _exit(WEXITSTATUS(st));
        }
        ck_assert_int_eq(waitpid(outer, &st, 0), outer);
        ck_assert(WIFEXITED(st));
        ck_assert_msg(WEXITSTATUS(st) != 30, "a table was opened where no event comes");
        ck_assert_int_eq(WEXITSTATUS(st), 0);
}
END_TEST

/* The sweep of one uid, fed by the table, finds and treats the holder the
 * walk of /proc finds, and reads far fewer processes (report only: it acts
 * on nothing). */
START_TEST(test_sweep_fed_by_the_table_finds_what_the_walk_finds) {
        struct xdev_proctab *t = table_open(0);
        struct xdev_sweep_target tgt = { 0 };
        struct xdev_sweep_counts full, fed;
        struct xdev_sweep_report rep_full = { 0 }, rep_fed = { 0 };
        struct xdev_procsrc src;
        struct stat st;
        int pfd[2];
        char c;

        /* a holder of alice's: /dev/tty0, the one shared node this host's
         * kernel can open (no evdev, no DRM here) */
        ck_assert_int_eq(stat("/dev/tty0", &st), 0);
        tgt.class = XDEV_CLASS_CONSOLE;
        tgt.rdev = st.st_rdev;
        (void) snprintf(tgt.path, sizeof tgt.path, "/dev/tty0");
        ck_assert_int_eq(pipe(pfd), 0);
        pid_t holder = fork();
        ck_assert_int_ge(holder, 0);
        if (holder == 0) {
                int fd = open("/dev/tty0", O_RDONLY | O_NOCTTY | O_NONBLOCK);
                (void) fd;
                (void) close(pfd[1]);
                if (setresuid(PT_UID_A, PT_UID_A, PT_UID_A) < 0)
                        _exit(1);
                (void) read(pfd[0], &c, 1);
                _exit(0);
        }
        (void) close(pfd[0]);
        /* let it open and drop its uids */
        for (int i = 0; i < 200 && !listed(t, PT_UID_A, holder, NULL); i++)
                usleep(5000);

        struct xdev_sweep_opts opts = { .policy = XDEV_LINGER_REVOKE,
                                        .report_only = true,
                                        .report = &rep_full,
                                        .has_only = true,
                                        .only_uid = PT_UID_A };
        ck_assert_int_eq(xdev_sweep_run(&tgt, 1, &opts, NULL, &full), 0);
        xdev_proctab_source(t, &src);
        opts.procs = &src;
        opts.report = &rep_fed;
        ck_assert_int_eq(xdev_sweep_run(&tgt, 1, &opts, NULL, &fed), 0);
        /* the holder, found by both and reported the same (a count could
         * differ by a process of that uid born or gone between the two) */
        int fd_full = -2, fd_fed = -2;
        for (size_t i = 0; i < rep_full.n; i++)
                if (rep_full.items[i].pid == holder)
                        fd_full = rep_full.items[i].fd;
        for (size_t i = 0; i < rep_fed.n; i++)
                if (rep_fed.items[i].pid == holder)
                        fd_fed = rep_fed.items[i].fd;
        ck_assert_msg(fd_full >= 0, "the walk did not find the holder");
        ck_assert_msg(fd_fed == fd_full,
                      "the table's sweep reported the holder's fd %d, the walk %d", fd_fed,
                      fd_full);
        ck_assert_msg(fed.examined < full.examined,
                      "the table's sweep read %u processes, the walk %u", fed.examined,
                      full.examined);
        xdev_sweep_report_free(&rep_full);
        xdev_sweep_report_free(&rep_fed);
        (void) close(pfd[1]);
        (void) waitpid(holder, NULL, 0);
        xdev_proctab_free(t);
}
END_TEST

/* A fork loop on each core until killed: the load of a parallel build or
 * a boot, as far as the proc connector sees it. */
static size_t storm_start(pid_t *pids, size_t max) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        size_t n = cores > 0 && (size_t) cores * 4 < max ? (size_t) cores * 4 : max;

        for (size_t i = 0; i < n; i++) {
                pids[i] = fork();
                ck_assert_int_ge(pids[i], 0);
                if (pids[i] == 0) {
                        /* a test that fails or times out leaves no storm */
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        (void) signal(SIGTERM, SIG_DFL);
                        (void) signal(SIGCHLD, SIG_IGN); /* reaped by the kernel */
                        for (;;)
                                if (fork() == 0)
                                        _exit(0);
                }
        }
        return n;
}

static void storm_stop(const pid_t *pids, size_t n) {
        for (size_t i = 0; i < n; i++) {
                (void) kill(pids[i], SIGKILL);
                (void) waitpid(pids[i], NULL, 0);
        }
}

/* The table opens under any fork load: its start-up test of the events
 * finds its own child's among any number of others, within its time. */
START_TEST(test_table_opens_under_a_fork_storm) {
        pid_t storm[16];
        /* one storm at a time on the machine: copies of this test run side
         * by side (make check-stress), and their storms would multiply */
        int lock = open("/tmp/.pam_xdevices-storm.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                        0600);
        ck_assert_int_ge(lock, 0);
        ck_assert_int_eq(flock(lock, LOCK_EX), 0);
        size_t n = storm_start(storm, 16);
        int failed = 0, first_error = 0;

        usleep(100 * 1000); /* the storm under way */
        for (int i = 0; i < 20; i++) {
                struct xdev_proctab *t = NULL;
                int r = xdev_proctab_open(&t, 0, NULL);
                if (r < 0 && !failed++)
                        first_error = r;
                xdev_proctab_free(t);
        }
        storm_stop(storm, n);
        (void) close(lock);
        ck_assert_msg(failed == 0,
                      "the table failed to open %d of 20 times under %zu fork loops (4 a core): "
                      "%s",
                      failed, n, strerror(-first_error));
}
END_TEST

/* Whether the running kernel is at least MAJOR.MINOR. */
static bool kernel_at_least(int major, int minor) {
        struct utsname u;
        int ma = 0, mi = 0;
        ck_assert_int_eq(uname(&u), 0);
        ck_assert_int_eq(sscanf(u.release, "%d.%d", &ma, &mi), 2);
        return ma > major || (ma == major && mi >= minor);
}

/* Only the events the table uses come where the kernel filters them
 * (Linux 6.6): a process renaming itself in a loop (PROC_EVENT_COMM) is
 * not read event by event. */
START_TEST(test_table_subscribes_only_to_the_events_it_uses) {
        struct xdev_proctab *t = table_open(0);
        struct xdev_proctab_stats before, after;

        ck_assert_int_ge(xdev_proctab_drain(t), 0);
        xdev_proctab_stats(t, &before);
        if (!kernel_at_least(6, 6)) {
                fprintf(stderr, "test-proctab: no event filter before Linux 6.6\n");
                xdev_proctab_free(t);
                return;
        }
        ck_assert_msg(before.filtered, "the kernel sends events the table does not use");
        pid_t r = fork();
        ck_assert_int_ge(r, 0);
        if (r == 0) {
                for (int i = 0; i < 5000; i++)
                        (void) prctl(PR_SET_NAME, i % 2 ? "renamed-a" : "renamed-b");
                _exit(0);
        }
        ck_assert_int_eq(waitpid(r, NULL, 0), r);
        ck_assert_int_ge(xdev_proctab_drain(t), 0);
        xdev_proctab_stats(t, &after);
        /* whatever else runs on the machine (a build, a guest) sends the
         * events the table uses: only the others are counted */
        ck_assert_msg(after.unused - before.unused < 1000,
                      "%llu events of a kind the table does not use read for 5000 renames",
                      (unsigned long long) (after.unused - before.unused));
        xdev_proctab_free(t);
}
END_TEST

/* A child made with clone(CLONE_PARENT) names its creator's parent in
 * its fork event: here this root process, while the creator took alice's
 * uids and is gone before the table reads it. The child is alice's. */
START_TEST(test_clone_parent_child_of_a_gone_creator_is_filed_under_its_uids) {
        struct xdev_proctab *t = table_open(0);
        int cp[2], hold[2];
        pid_t c = 0;
        char x;

        ck_assert_int_ge(xdev_proctab_drain(t), 0);
        ck_assert_int_eq(pipe(cp), 0);
        ck_assert_int_eq(pipe(hold), 0);
        pid_t p = fork();
        ck_assert_int_ge(p, 0);
        if (p == 0) {
                if (setresuid(PT_UID_A, PT_UID_A, PT_UID_A) < 0)
                        _exit(1);
                c = (pid_t) syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
                if (c == 0) {
                        (void) close(hold[1]);
                        (void) read(hold[0], &x, 1);
                        _exit(0);
                }
                (void) write(cp[1], &c, sizeof c);
                _exit(0);
        }
        (void) close(hold[0]);
        ck_assert_int_eq(read(cp[0], &c, sizeof c), (ssize_t) sizeof c);
        ck_assert_int_eq(waitpid(p, NULL, 0), p);
        bool found = listed(t, PT_UID_A, c, NULL);
        (void) close(hold[1]);
        (void) waitpid(c, NULL, 0);
        ck_assert_msg(found, "alice's CLONE_PARENT child was not filed under her uid");
        xdev_proctab_free(t);
}
END_TEST

/* The creator of the test below, after its exec: takes alice's uids,
 * makes a CLONE_PARENT child that waits for EOF on fd 3, writes the
 * child's pid to fd 4 and exits. */
static int creator_main(void) {
        char x;
        if (setresuid(PT_UID_A, PT_UID_A, PT_UID_A) < 0)
                return 1;
        pid_t c = (pid_t) syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
        if (c == 0) {
                (void) close(4);
                (void) !read(3, &x, 1);
                _exit(0);
        }
        return write(4, &c, sizeof c) == (ssize_t) sizeof c ? 0 : 1;
}

/* The same when the creator exec'd first (as a shell's "prog &" does) and
 * is gone before the table reads it: its exec, read late, found nothing,
 * and the table lost which parent its later fork names. */
START_TEST(test_clone_parent_child_of_a_gone_exec_creator_is_filed_under_its_uids) {
        struct xdev_proctab *t = table_open(0);
        int cp[2], hold[2];
        pid_t c = 0;

        ck_assert_int_ge(xdev_proctab_drain(t), 0);
        ck_assert_int_eq(pipe(cp), 0);
        ck_assert_int_eq(pipe(hold), 0);
        pid_t p = fork();
        ck_assert_int_ge(p, 0);
        if (p == 0) {
                /* the child waits for EOF: no copy of the write end */
                (void) close(hold[1]);
                (void) close(cp[0]);
                if (dup2(hold[0], 3) < 0 || dup2(cp[1], 4) < 0)
                        _exit(1);
                execl("/proc/self/exe", "test-proctab", "--creator", (char *) NULL);
                _exit(1);
        }
        (void) close(hold[0]);
        (void) close(cp[1]);
        ck_assert_int_eq(read(cp[0], &c, sizeof c), (ssize_t) sizeof c);
        ck_assert_int_eq(waitpid(p, NULL, 0), p);
        bool found = listed(t, PT_UID_A, c, NULL);
        (void) close(hold[1]);
        (void) waitpid(c, NULL, 0);
        ck_assert_msg(
                found,
                "alice's CLONE_PARENT child of an exec'd creator was not filed under her uid");
        xdev_proctab_free(t);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("proctab");
        /* a hang guard: the storm test may wait for the storms of other
         * copies of this program (make check-stress runs five at once) */
        TCase *tc = h_tcase(s, "proctab", 300, NULL, NULL);
        tcase_add_test(tc, test_table_follows_fork_uid_changes_and_exit);
        tcase_add_test(tc, test_clone_parent_child_of_a_gone_creator_is_filed_under_its_uids);
        tcase_add_test(tc, test_lost_events_reseed_the_table);
        tcase_add_test(tc, test_table_opens_under_a_fork_storm);
        tcase_add_test(tc, test_table_subscribes_only_to_the_events_it_uses);
        tcase_add_test(tc, test_no_events_in_a_pid_namespace);
        tcase_add_test(tc, test_sweep_fed_by_the_table_finds_what_the_walk_finds);
        tcase_add_test(tc, test_clone_parent_child_of_a_gone_exec_creator_is_filed_under_its_uids);
        return s;
}

/* no harness: the table is read as root, in the host's namespaces */
static int setup_root(void) {
        return 0;
}

H_SUITE(suite, H_ROOT_ONLY)

int main(int argc, char **argv) {
        if (argc == 2 && strcmp(argv[1], "--creator") == 0)
                return creator_main();
        return h_suites_run(&(const struct h_setup) { setup_root, NULL });
}
