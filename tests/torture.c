/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Torture: TORTURE_WORKERS processes (default 8) each run TORTURE_CYCLES
 * (default 500) real-PAM login/logout cycles on several VTs, some logins
 * killed instead of closed, interleaved with udev-style "xdevices apply"
 * events, gc and VT switches. Afterwards every invariant must hold: no
 * grant without a live holder, every node equal to its original, the state
 * readable. Run by "make check-torture"; prints counts and elapsed time. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <acl/libacl.h>
#include <security/pam_appl.h>

#include "harness.h"

#define WORKERS_MAX 64
#define VTS_MAX 16

struct counts {
        unsigned long opened, closed, killed, open_failed, close_failed, applies, apply_failed, gcs,
                gc_failed, switches, checks, violations;
};

static struct counts *counts; /* shared between the workers */
static int vts[VTS_MAX];
static int n_vts;
static const char *helper;

static const struct {
        const char *path, *maj, *min, *class;
} nodes[] = {
        { "/dev/dri/card0", "226", "0", "drm" },
        { "/dev/dri/renderD128", "226", "128", "drm" },
        { "/dev/input/event0", "13", "64", "input" },
        { "/dev/input/event1", "13", "65", "input" },
        { "/dev/input/mouse0", "13", "32", "input" },
        { "/dev/input/mice", "13", "63", "input" },
        { "/dev/input/js0", "13", "0", "input" },
};
#define N_NODES (sizeof nodes / sizeof nodes[0])

static void add(unsigned long *c) {
        __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static unsigned long env_count(const char *name, unsigned long def, unsigned long max) {
        const char *v = getenv(name);
        unsigned long n = v ? strtoul(v, NULL, 10) : def;
        return n < 1 ? 1 : n > max ? max : n;
}

static void find_vts(int want) {
        for (int i = 0; i < H_N_VTS && n_vts < want; i++)
                vts[n_vts++] = h_vt + i;
        for (int vt = h_vt + H_N_VTS; vt <= 63 && n_vts < want && n_vts < VTS_MAX; vt++)
                if (h_vt_is_free(vt))
                        vts[n_vts++] = vt;
}

static int helper_run(const char *const *argv_tail, const char *const *env) {
        const char *argv[8] = { helper, "--conf=" H_CONF };
        size_t n = 2;
        for (; argv_tail && *argv_tail && n < 7; argv_tail++)
                argv[n++] = *argv_tail;
        argv[n] = NULL;
        return h_run_helper(argv, env, NULL);
}

static void worker(int w, unsigned long cycles) {
        static const char *const users[] = { "xdalice", "xdbob", "xdcarol" };
        unsigned seed = (unsigned) (w * 7919 + getpid());

        for (unsigned long c = 0; c < cycles; c++) {
                int vt = vts[(w + (int) c) % n_vts], lock;
                char lockpath[64];
                unsigned r = (unsigned) rand_r(&seed);

                /* two sessions cannot share a controlling tty: one per VT */
                snprintf(lockpath, sizeof lockpath, H_ROOT "/vt%d.lock", vt);
                lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
                if (lock < 0 || flock(lock, LOCK_EX) < 0) {
                        perror("torture: vt lock");
                        _exit(99);
                }
                struct h_session *s = h_session_open(users[(w + (int) c) % 3], vt, NULL);
                if (s->open_ret == PAM_SUCCESS)
                        add(&counts->opened);
                else
                        add(&counts->open_failed);
                if (r % 5 == 0) {
                        const char *argv[] = { "apply", nodes[r % N_NODES].path, NULL };
                        char devname[64], maj[16], min[16], cls[32];
                        snprintf(devname, sizeof devname, "DEVNAME=%s", nodes[r % N_NODES].path);
                        snprintf(maj, sizeof maj, "MAJOR=%s", nodes[r % N_NODES].maj);
                        snprintf(min, sizeof min, "MINOR=%s", nodes[r % N_NODES].min);
                        snprintf(cls, sizeof cls, "XDEVICES_CLASS=%s", nodes[r % N_NODES].class);
                        const char *env[] = { "ACTION=add", devname, maj, min, cls, NULL };
                        add(&counts->applies);
                        if (helper_run(argv, env) != 0)
                                add(&counts->apply_failed);
                }
                if (r % 7 == 0) {
                        h_set_active_vt(vt);
                        add(&counts->switches);
                }
                if (r % 10 == 3) {
                        h_session_kill(s);
                        add(&counts->killed);
                } else if (h_session_close(s) == PAM_SUCCESS)
                        add(&counts->closed);
                else
                        add(&counts->close_failed);
                (void) close(lock);
                if (r % 13 == 0) {
                        const char *argv[] = { "gc", NULL };
                        const char *env[] = { NULL };
                        add(&counts->gcs);
                        if (helper_run(argv, env) != 0)
                                add(&counts->gc_failed);
                }
        }
        _exit(0);
}

/* Every named-user ACL entry on PATH belongs to a uid in ALLOWED. */
static bool acl_users_within(const char *path, const uid_t *allowed, size_t n_allowed) {
        acl_t acl = acl_get_file(path, ACL_TYPE_ACCESS);
        acl_entry_t e;
        bool ok = true;

        if (!acl)
                return true; /* gone or replaced mid-check: nothing granted there */
        for (int id = ACL_FIRST_ENTRY; acl_get_entry(acl, id, &e) == 1; id = ACL_NEXT_ENTRY) {
                acl_tag_t tag;
                if (acl_get_tag_type(e, &tag) < 0 || tag != ACL_USER)
                        continue;
                uid_t *q = acl_get_qualifier(e);
                bool found = false;
                for (size_t i = 0; q && i < n_allowed; i++)
                        found = found || allowed[i] == *q;
                if (!found) {
                        fprintf(stderr, "torture: %s grants uid %u, which holds nothing\n", path,
                                q ? *q : 0);
                        ok = false;
                }
                if (q)
                        acl_free(q);
        }
        acl_free(acl);
        return ok;
}

/* While the workers run: under the module's own state lock, every grant on
 * disk must be explained by the state (shared nodes: the holder; a VT: a
 * session on it). Sessions whose leader was killed count until reaped. */
static void checker(volatile int *stop) {
        while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {
                uid_t holder[1], vt_uids[64][8];
                size_t n_holder = 0, n_vt[64] = { 0 };
                char line[4096];
                int lock = open("/run/xdevices/lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
                if (lock < 0 || flock(lock, LOCK_EX) < 0) {
                        if (lock >= 0)
                                close(lock);
                        usleep(1000);
                        continue;
                }
                FILE *f = fopen("/run/xdevices/state", "re");
                while (f && fgets(line, sizeof line, f)) {
                        unsigned u, vt;
                        const char *p;
                        if (sscanf(line, "holder %u", &u) == 1)
                                holder[n_holder++] = u;
                        else if (sscanf(line, "session uid=%u", &u) == 1 &&
                                 (p = strstr(line, " vt=")) && sscanf(p, " vt=%u", &vt) == 1 &&
                                 vt < 64 && n_vt[vt] < 8)
                                vt_uids[vt][n_vt[vt]++] = u;
                }
                if (f)
                        fclose(f);
                bool ok = true;
                for (size_t i = 0; i < N_NODES; i++)
                        ok = acl_users_within(nodes[i].path, holder, n_holder) && ok;
                for (int i = 0; i < n_vts; i++) {
                        char p[32];
                        snprintf(p, sizeof p, "/dev/tty%d", vts[i]);
                        ok = acl_users_within(p, vt_uids[vts[i]], n_vt[vts[i]]) && ok;
                }
                close(lock);
                add(&counts->checks);
                if (!ok)
                        add(&counts->violations);
                usleep(2000);
        }
        _exit(0);
}

int main(void) {
        unsigned long workers = env_count("TORTURE_WORKERS", 8, WORKERS_MAX);
        unsigned long cycles = env_count("TORTURE_CYCLES", 500, 1000000);
        char *before[N_NODES + VTS_MAX + 1], *out = NULL;
        struct timespec t0, t1;
        int failed = 0;

        h_init();
        helper = getenv("XDEV_HELPER");
        if (!helper) {
                fprintf(stderr, "XDEV_HELPER must be set\n");
                return 99;
        }
        h_fresh(NULL, NULL);
        find_vts((int) workers);
        counts = mmap(NULL, sizeof *counts, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                      0);
        if (counts == MAP_FAILED)
                return 99;
        memset(counts, 0, sizeof *counts);
        for (size_t i = 0; i < N_NODES; i++)
                before[i] = h_node_describe(nodes[i].path);
        for (int i = 0; i < n_vts; i++) {
                char p[32];
                snprintf(p, sizeof p, "/dev/tty%d", vts[i]);
                before[N_NODES + (size_t) i] = h_node_describe(p);
        }
        before[N_NODES + (size_t) n_vts] = h_node_describe("/dev/tty0");

        printf("torture: %lu workers x %lu cycles on %d VTs (tty%d..), pid %d\n", workers, cycles,
               n_vts, vts[0], (int) getpid());
        fflush(stdout);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        volatile int *stop =
                mmap(NULL, sizeof *stop, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (stop == MAP_FAILED)
                return 99;
        *stop = 0;
        fflush(NULL);
        pid_t checker_pid = fork();
        if (checker_pid < 0)
                return 99;
        if (checker_pid == 0)
                checker(stop);
        pid_t pids[WORKERS_MAX];
        for (unsigned long w = 0; w < workers; w++) {
                fflush(NULL);
                pids[w] = fork();
                if (pids[w] < 0)
                        return 99;
                if (pids[w] == 0)
                        worker((int) w, cycles);
        }
        for (unsigned long w = 0; w < workers; w++) {
                int status;
                if (waitpid(pids[w], &status, 0) != pids[w] || !WIFEXITED(status) ||
                    WEXITSTATUS(status) != 0) {
                        fprintf(stderr, "torture: worker %lu failed (status %#x)\n", w, status);
                        failed++;
                }
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        __atomic_store_n(stop, 1, __ATOMIC_RELAXED);
        (void) waitpid(checker_pid, NULL, 0);
        double secs = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;

        /* Every leader is gone now: one gc must leave nothing behind. */
        {
                const char *argv[] = { "gc", NULL };
                const char *env[] = { NULL };
                if (helper_run(argv, env) != 0) {
                        fprintf(stderr, "torture: final gc failed\n");
                        failed++;
                }
                const char *sargv[] = { helper, "--conf=" H_CONF, "status", "--json", NULL };
                int r = h_run_helper(sargv, env, &out);
                if (r != 0) {
                        fprintf(stderr, "torture: the state is not readable (status exit %d): %s\n",
                                r, out);
                        failed++;
                } else if (!strstr(out, "\"holder\":null") || !strstr(out, "\"sessions\":[]") ||
                           !strstr(out, "\"nodes\":[]")) {
                        fprintf(stderr, "torture: state not empty after the last logout: %s\n",
                                out);
                        failed++;
                }
                free(out);
        }
        for (size_t i = 0; i < N_NODES + (size_t) n_vts + 1; i++) {
                char p[32];
                const char *path = i < N_NODES ? nodes[i].path : p;
                if (i >= N_NODES && i < N_NODES + (size_t) n_vts)
                        snprintf(p, sizeof p, "/dev/tty%d", vts[i - N_NODES]);
                else if (i == N_NODES + (size_t) n_vts)
                        snprintf(p, sizeof p, "/dev/tty0");
                char *now = h_node_describe(path);
                if (strcmp(now, before[i]) != 0) {
                        fprintf(stderr, "torture: %s was \"%s\", is \"%s\"\n", path, before[i],
                                now);
                        failed++;
                }
                free(now);
                free(before[i]);
        }
        unsigned long logins = counts->opened + counts->open_failed;
        printf("torture: %lu logins (%lu refused), %lu logouts (%lu failed), %lu killed, %lu applies (%lu failed), "
               "%lu gc (%lu failed), %lu VT switches in %.1f s (%.0f logins/s); %lu locked invariant checks "
               "during the run, %lu violations\n",
               logins, counts->open_failed, counts->closed, counts->close_failed, counts->killed,
               counts->applies, counts->apply_failed, counts->gcs, counts->gc_failed,
               counts->switches, secs, (double) logins / secs, counts->checks, counts->violations);
        failed += counts->violations > 0 || counts->open_failed > 0 || counts->close_failed > 0 ||
                counts->apply_failed > 0 || counts->gc_failed > 0;
        printf("torture: %s\n", failed ? "FAILED" : "every invariant holds");
        return failed ? 1 : 0;
}
