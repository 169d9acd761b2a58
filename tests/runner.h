/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The main() of every check test program: run one suite, each test in its
 * own process, and exit as automake reads it. */
#pragma once

#include <check.h>

/* Runs every test of S (forked: a crash fails that test only, and check
 * names it), frees the runner; returns 0 if all passed, else 1. */
static inline int h_suite_run(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}

/* A test program whose main() only runs the suite SUITE_FN() makes. */
#define H_CHECK_MAIN(suite_fn)                  \
        int main(void) {                        \
                return h_suite_run(suite_fn()); \
        }
