/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The module loads with every symbol resolved and exports only the two
 * session entry points (Linux-PAM's tst-dlopen, plus the export check). */
#include "config.h"

#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static const char *module(void) {
        const char *m = getenv("XDEV_MODULE");
        return m ? m : "../pam_xdevices/.libs/pam_xdevices.so";
}

START_TEST(test_loads_with_now) {
        void *h = dlopen(module(), RTLD_NOW | RTLD_LOCAL);
        ck_assert_msg(h != NULL, "dlopen: %s", dlerror());
        ck_assert_ptr_nonnull(dlsym(h, "pam_sm_open_session"));
        ck_assert_ptr_nonnull(dlsym(h, "pam_sm_close_session"));
        ck_assert_ptr_null(dlsym(h, "pam_sm_authenticate"));
        ck_assert_ptr_null(dlsym(h, "xdev_session_open"));
        ck_assert_ptr_null(dlsym(h, "xdev_config_parse"));
        dlclose(h);
}
END_TEST

START_TEST(test_exports_only_entry_points) {
        char cmd[1024], line[512];
        int n = 0;
        snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", module());
        FILE *p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        while (fgets(line, sizeof line, p)) {
                char addr[64], type[8], name[256];
                if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3)
                        continue;
                if (strchr("TtDdBbRrVvWw", type[0]) == NULL)
                        continue;
                ck_assert_msg(strcmp(name, "pam_sm_open_session") == 0 ||
                                      strcmp(name, "pam_sm_close_session") == 0,
                              "unexpected export \"%s\"", name);
                n++;
        }
        ck_assert_int_eq(pclose(p), 0);
        ck_assert_int_eq(n, 2);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("dlopen");
        /* a hang guard, not a timing: nm under make check-stress's load
         * (busy loops beside two guests) passed check's default 4 s */
        TCase *tc = h_tcase(s, "module", 60, NULL, NULL);
        tcase_add_test(tc, test_loads_with_now);
        tcase_add_test(tc, test_exports_only_entry_points);
        return s;
}

H_SUITE(suite, H_ANY_USER)
H_MAIN(NULL)
