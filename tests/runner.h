/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one runner of every check test program: its suites register
 * themselves (H_SUITE), each says who can run it, and H_MAIN runs them all,
 * each test in its own process, and exits as automake reads it. */
#pragma once

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

/* Who can run a suite. */
enum h_needs {
        /* any user, nothing of the harness: parsers, the core on temp files */
        H_ANY_USER,
        /* the harness's namespace (its fixtures, real libpam, a syslog at
         * /dev/log): as root h_init()'s; as any other user an unprivileged
         * user and mount namespace with no device node and no VT
         * (h_init_userns): cases that must refuse before any node is
         * touched, which pass in both */
        H_USERNS,
        /* h_init()'s namespace, mknod'd nodes and real VTs: root only */
        H_ROOT_ONLY,
};

/* How a program's harness is set up before its suites run: ROOT as root
 * (h_init and the program's own fixtures), USER as any other user for its
 * H_USERNS suites (NULL: they are skipped). Returns 0, or an exit status. */
struct h_setup {
        int (*root)(void);
        int (*user)(void);
};

#define H_SUITES_MAX 8
static struct h_registered {
        Suite *(*make)(void);
        enum h_needs needs;
} h_suites_[H_SUITES_MAX];
static size_t h_n_suites_;

static inline void h_suite_register(Suite *(*make)(void), enum h_needs needs) {
        if (h_n_suites_ == H_SUITES_MAX) {
                fprintf(stderr, "runner: more than %d suites\n", H_SUITES_MAX);
                _exit(99);
        }
        h_suites_[h_n_suites_++] = (struct h_registered) { make, needs };
}

/* After the definition of MAKE, a function returning a Suite: registers it,
 * run by H_MAIN as NEEDS allows. */
#define H_SUITE(make, needs) \
        __attribute__((constructor)) static void h_register_##make(void) { \
                h_suite_register(make, needs); \
        }

/* A test case NAME added to S: TIMEOUT seconds (0: check's default), the
 * checked fixture SETUP and TEARDOWN (NULL: none). */
static inline TCase *h_tcase(Suite *s, const char *name, double timeout, SFun setup,
                             SFun teardown) {
        TCase *tc = tcase_create(name);

        if (timeout > 0)
                tcase_set_timeout(tc, timeout);
        if (setup || teardown)
                tcase_add_checked_fixture(tc, setup, teardown);
        suite_add_tcase(s, tc);
        return tc;
}

/* Runs every registered suite this user can run (SETUP NULL: H_ANY_USER
 * ones only), each test forked: a crash fails that test only, and check
 * names it. Returns 0 if all passed, 1 if one failed, 77 when none could
 * run, or SETUP's status when it failed. Says which suites it skipped. */
static inline int h_suites_run(const struct h_setup *setup) {
        bool root = geteuid() == 0, harness = false, can[H_SUITES_MAX];
        SRunner *sr = NULL;
        unsigned skipped = 0;
        int failed;

        for (size_t i = 0; i < h_n_suites_; i++) {
                enum h_needs needs = h_suites_[i].needs;
                can[i] = needs == H_ANY_USER ||
                        (setup && (root || (needs == H_USERNS && setup->user)));
                skipped += !can[i];
                harness = harness || (can[i] && needs != H_ANY_USER);
        }
        if (skipped == h_n_suites_) {
                fprintf(stderr, "not root: skipping\n");
                return 77;
        }
        if (skipped)
                fprintf(stderr, "not root: %u of %zu suites skipped (they need root)\n", skipped,
                        h_n_suites_);
        /* before the suites are made: they may depend on what it found */
        if (harness) {
                int r = root ? setup->root() : setup->user();
                if (r != 0)
                        return r;
        }
        for (size_t i = 0; i < h_n_suites_; i++)
                if (can[i]) {
                        if (!sr)
                                sr = srunner_create(h_suites_[i].make());
                        else
                                srunner_add_suite(sr, h_suites_[i].make());
                }
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}

/* The main() of a test program that needs nothing but its suites run. */
#define H_MAIN(setup) \
        int main(void) { \
                return h_suites_run(setup); \
        }
