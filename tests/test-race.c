/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Races: sessions opening and closing on several VTs while udev-style apply
 * events hit hundreds of nodes and gc runs. While it runs, a checker holding
 * the state lock verifies that every grant on a node is explained by a live
 * session; at the end every node equals what it was and the state is empty. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <security/pam_appl.h>

#include "harness.h"
#include "procfs.h"
#include "state.h"
#include "runner.h"

#define N_EXTRA 300
#define ROUNDS 25
#define N_SESSION_WORKERS 3

static char extra[N_EXTRA][40];
static const char *nodes[N_EXTRA + 16];
static size_t n_nodes;
static const uid_t uids[] = { H_UID_ALICE, H_UID_BOB, H_UID_CAROL };
static const char *const users[] = { "xdalice", "xdbob", "xdcarol" };

static const char *helper(void) {
        const char *h = getenv("XDEV_HELPER");
        return h ? h : "../xdevices/xdevices";
}

static int apply(const char *path) {
        struct stat st;
        char e_devname[64], e_major[32], e_minor[32];
        if (lstat(path, &st) < 0)
                return -1;
        const char *argv[] = { helper(), "--conf=" H_CONF, "apply", path, NULL };
        const char *env[] = { "ACTION=add",
                              e_devname,
                              e_major,
                              e_minor,
                              strncmp(path, "/dev/dri/", 9) == 0 ? "XDEVICES_CLASS=drm"
                                                                 : "XDEVICES_CLASS=input",
                              NULL };
        snprintf(e_devname, sizeof e_devname, "DEVNAME=%s", path);
        snprintf(e_major, sizeof e_major, "MAJOR=%u", major(st.st_rdev));
        snprintf(e_minor, sizeof e_minor, "MINOR=%u", minor(st.st_rdev));
        return h_run_helper(argv, env, NULL);
}

static pid_t spawn_session_worker(int i) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        for (int r = 0; r < ROUNDS; r++) {
                struct h_session *s = h_session_open(users[i], h_vt + i, NULL);
                if (s->open_ret != PAM_SUCCESS) {
                        fprintf(stderr, "worker %d round %d: open_session returned %d\n", i, r,
                                s->open_ret);
                        _exit(1);
                }
                usleep((useconds_t) (1000 * (rand() % 5)));
                int c = h_session_close(s);
                if (c != PAM_SUCCESS) {
                        fprintf(stderr, "worker %d round %d: close_session returned %d\n", i, r, c);
                        _exit(1);
                }
        }
        _exit(0);
}

static pid_t spawn_apply_worker(int seed) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        srand((unsigned) seed);
        for (int pass = 0; pass < 2; pass++)
                for (size_t k = 0; k < n_nodes; k++) {
                        int r = apply(nodes[(k * 7 + (size_t) seed) % n_nodes]);
                        if (r != 0) {
                                fprintf(stderr, "apply worker: exit %d\n", r);
                                _exit(1);
                        }
                }
        _exit(0);
}

static pid_t spawn_gc_worker(void) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        for (int k = 0; k < 20; k++) {
                const char *argv[] = { helper(), "--conf=" H_CONF, "gc", NULL };
                const char *env[] = { NULL };
                if (h_run_helper(argv, env, NULL) != 0)
                        _exit(1);
                usleep(20000);
        }
        _exit(0);
}

/* Under the state lock: every named-user entry of a test uid on any node is
 * a ledger grant to that uid, and that uid has a live session. */
static int check_invariant(void) {
        struct xdev_state st = { 0 };
        char *buf = NULL;
        int lock = open("/run/xdevices/lock", O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (lock < 0)
                return 0;
        ck_assert_int_eq(flock(lock, LOCK_EX), 0);
        int fd = open("/run/xdevices/state", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        size_t len = 0;
        if (fd >= 0) {
                buf = malloc(XDEV_STATE_FILE_MAX);
                ssize_t n;
                while ((n = read(fd, buf + len, XDEV_STATE_FILE_MAX - len)) > 0)
                        len += (size_t) n;
                close(fd);
                ck_assert_msg(xdev_state_parse(&st, buf, len, NULL) == 0,
                              "state unparseable under the lock");
        }
        for (size_t k = 0; k < n_nodes; k++)
                for (size_t u = 0; u < 3; u++) {
                        const char *p = h_acl_of(nodes[k], uids[u]);
                        ck_assert_ptr_nonnull(p);
                        if (!*p)
                                continue;
                        ssize_t idx = xdev_state_find_node(&st, nodes[k]);
                        ck_assert_msg(idx >= 0 && st.nodes[idx].granted &&
                                              st.nodes[idx].grantee == uids[u],
                                      "%s grants uid %u but the ledger does not", nodes[k],
                                      (unsigned) uids[u]);
                        bool live = false;
                        for (size_t j = 0; j < st.n_sessions; j++)
                                if (st.sessions[j].uid == uids[u] &&
                                    xdev_pid_is_alive(st.sessions[j].pid, st.sessions[j].start))
                                        live = true;
                        ck_assert_msg(live, "%s grants uid %u, which has no live session", nodes[k],
                                      (unsigned) uids[u]);
                }
        xdev_state_free(&st);
        free(buf);
        close(lock);
        return 1;
}

START_TEST(test_sessions_apply_and_gc_race) {
        char *before[N_EXTRA + 16];
        int n_pids = 0, checks = 0;

        for (size_t k = 0; k < n_nodes; k++)
                before[k] = h_node_describe(nodes[k]);
        for (int i = 0; i < N_SESSION_WORKERS; i++) {
                (void) spawn_session_worker(i);
                n_pids++;
        }
        (void) spawn_apply_worker(1);
        n_pids++;
        (void) spawn_apply_worker(2);
        n_pids++;
        (void) spawn_gc_worker();
        n_pids++;

        for (int running = n_pids; running > 0;) {
                int status;
                pid_t p = waitpid(-1, &status, WNOHANG);
                if (p > 0) {
                        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                                      "worker %d failed (status %d)", (int) p, status);
                        running--;
                        continue;
                }
                checks += check_invariant();
                usleep(30000);
        }
        checks += check_invariant();
        printf("race: %d session workers x %d rounds, 2 apply workers x %zu events, 20 gc; %d invariant checks\n",
               N_SESSION_WORKERS, ROUNDS, 2 * n_nodes, checks);
        ck_assert_int_gt(checks, 3);
        for (size_t k = 0; k < n_nodes; k++) {
                char *now = h_node_describe(nodes[k]);
                ck_assert_msg(strcmp(now, before[k]) == 0, "%s was \"%s\", is \"%s\"", nodes[k],
                              before[k], now);
                free(now);
                free(before[k]);
        }
        struct xdev_state st = { 0 };
        FILE *f = fopen("/run/xdevices/state", "r");
        ck_assert_ptr_nonnull(f);
        char *buf = malloc(1 << 20);
        size_t len = fread(buf, 1, 1 << 20, f);
        fclose(f);
        ck_assert_int_eq(xdev_state_parse(&st, buf, len, NULL), 0);
        ck_assert_uint_eq(st.n_sessions, 0);
        ck_assert_uint_eq(st.n_nodes, 0);
        ck_assert(!st.has_holder);
        xdev_state_free(&st);
        free(buf);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("race");
        TCase *tc = h_tcase(s, "race", 240, NULL, NULL);
        tcase_add_test(tc, test_sessions_apply_and_gc_race);
        return s;
}

/* the namespace, and extra input nodes beside the shared ones */
static int setup_root(void) {
        h_init();
        h_fresh(NULL, NULL);
        for (size_t i = 0; i < h_n_shared_nodes; i++)
                nodes[n_nodes++] = h_shared_nodes[i];
        for (int i = 0; i < N_EXTRA; i++) {
                snprintf(extra[i], sizeof extra[i], "/dev/input/event%d", 100 + i);
                if (mknod(extra[i], S_IFCHR | 0660, makedev(13, (unsigned) (164 + i))) < 0) {
                        perror("mknod");
                        return 99;
                }
                nodes[n_nodes++] = extra[i];
        }
        return 0;
}

H_SUITE(suite, H_ROOT_ONLY)
H_MAIN((&(const struct h_setup) { setup_root, NULL }))
