/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xdbench: what a console login costs per device node. Runs open+close
 * session through the real libpam with pam_xdevices, a one-setfacl-per-node
 * baseline, an in-process syscall floor and the udev helper, for N mknod'd
 * nodes, inside the test harness's private mount namespace; prints one
 * markdown table. Root only; exits 77 otherwise. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/acl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <acl/libacl.h>
#include <linux/io_uring.h>
#include <security/pam_appl.h>

#include "core.h"
#include "follow.h"
#include "others.h"
#include "procfs.h"
#include "harness.h"
#include "inflight.h"
#include "sweep.h"
#include "proctab.h"
#include "step.h"
#include "uring.h"
#include "watch.h"

#define UID H_UID_ALICE
#define USER "xdalice"
#define EV_MINOR0 64u
#define MAX_RUNS 64
#define HANDOVER_RUNS 100

extern char **environ;

static char self_exe[4096];
static const char *helper_path;
static bool quick;
static bool locks_only;      /* only the state lock figures */
static bool switch_only;     /* --switch: the switch-step lines only */
static long last_maxrss_kib; /* ru_maxrss of the last child run_on_vt or spawn_wait waited for */

/* Markers the strace parser looks for: every syscall between them was made
 * inside the measured calls. */
static void marker(const char *name) {
        (void) access(name, F_OK);
}
#define MARK_BEGIN "/xdbench-mark-begin"
#define MARK_END "/xdbench-mark-end"

static void die(const char *what) {
        fprintf(stderr, "xdbench: %s: %s\n", what, strerror(errno));
        exit(99);
}

static uint64_t now_ns(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void ev_path(char *buf, size_t size, unsigned k) {
        (void) snprintf(buf, size, "/dev/input/event%u", k);
}

/* /dev/input holds exactly event0..event{N-1} (13:64..), root:input 0660;
 * /dev/dri is emptied so the grant set is exactly these N nodes (plus the
 * login VT). */
static void make_nodes(unsigned n) {
        struct group *g = getgrnam("input");
        gid_t input = g ? g->gr_gid : 105;
        char p[64];

        (void) system("rm -f /dev/input/* /dev/dri/*");
        for (unsigned k = 0; k < n; k++) {
                ev_path(p, sizeof p, k);
                if (mknod(p, S_IFCHR | 0660, makedev(13, EV_MINOR0 + k)) < 0 ||
                    chown(p, 0, input) < 0 || chmod(p, 0660) < 0)
                        die(p);
        }
}

static void add_node(unsigned k) {
        struct group *g = getgrnam("input");
        char p[64];

        ev_path(p, sizeof p, k);
        (void) unlink(p);
        if (mknod(p, S_IFCHR | 0660, makedev(13, EV_MINOR0 + k)) < 0 ||
            chown(p, 0, g ? g->gr_gid : 105) < 0 || chmod(p, 0660) < 0)
                die(p);
}

static const char bench_conf[] =
        "# xdbench: input nodes only, found by glob\n"
        "devices = glob\n"
        "glob = input:/dev/input/event*\n"
        "logind = ignore\n";

static void fresh(unsigned n) {
        h_fresh(bench_conf, NULL);
        make_nodes(n);
        /* Newer harnesses bind a syslog socket at /dev/log that only their
         * tests drain; left full, it would block the module's next log
         * line. Without it, syslog(3) drops messages. */
        (void) unlink("/dev/log");
}

/* ---- children: run inside the namespace, maybe under strace/valgrind ---- */

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
        (void) n, (void) msg, (void) data;
        *resp = NULL;
        return PAM_CONV_ERR;
}

/* The measured unit: one session, open then close. Not inlined, so
 * callgrind can collect exactly this function. */
static __attribute__((noinline)) int xdb_pam_session(pam_handle_t *pamh, uint64_t *ret_open,
                                                     uint64_t *ret_close, int n_check) {
        uint64_t t0, t1, t2, t3;
        int r;

        marker(MARK_BEGIN);
        t0 = now_ns();
        r = pam_open_session(pamh, 0);
        t1 = now_ns();
        if (r == PAM_SUCCESS && n_check > 0) {
                /* not timed: did the grant happen on the first and last node? */
                char p[64];
                const char *a;
                for (int k = 0; k < n_check; k += (n_check > 1 ? n_check - 1 : 1)) {
                        ev_path(p, sizeof p, (unsigned) k);
                        a = h_acl_of(p, UID);
                        if (!a || strcmp(a, "rw") != 0) {
                                fprintf(stderr, "xdbench: %s not granted (\"%s\")\n", p,
                                        a ? a : "?");
                                return -1;
                        }
                }
        }
        t2 = now_ns();
        if (r == PAM_SUCCESS)
                r = pam_close_session(pamh, 0);
        t3 = now_ns();
        marker(MARK_END);
        *ret_open = t1 - t0;
        *ret_close = t3 - t2;
        return r;
}

/* "--pam N RUNS CHECK": RUNS sessions, one line "open_ns close_ns" each. */
static int child_pam(unsigned n, int runs, bool check) {
        struct pam_conv c = { conv, NULL };
        char tty[32];

        /* The module counts a login only from the leader of the VT's
         * session: under strace this process is strace's child, so it
         * becomes a leader itself and takes the VT over (root may). */
        if (getsid(0) != getpid()) {
                int fd = h_vt_lead(h_vt, true);
                if (fd < 0)
                        return 98;
                (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
        }

        (void) snprintf(tty, sizeof tty, "tty%d", h_vt);
        for (int i = 0; i < runs; i++) {
                pam_handle_t *pamh = NULL;
                uint64_t to = 0, tc = 0;
                int r = pam_start_confdir(H_SERVICE, USER, &c, H_PAMDIR, &pamh);
                if (r != PAM_SUCCESS)
                        return 97;
                (void) pam_set_item(pamh, PAM_TTY, tty);
                r = xdb_pam_session(pamh, &to, &tc, check ? (int) n : 0);
                pam_end(pamh, r);
                if (r != PAM_SUCCESS) {
                        fprintf(stderr, "xdbench: session failed: %d\n", r);
                        return 96;
                }
                printf("%" PRIu64 " %" PRIu64 "\n", to, tc);
        }
        return 0;
}

/* The floor: per node only openat(O_PATH|O_NOFOLLOW) + fstat + set the ACL
 * on /proc/self/fd/N + close; grant, then restore to the mode's ACL. */
static __attribute__((noinline)) int xdb_floor(unsigned n, acl_t acl) {
        char p[64], proc[64];
        struct stat st;
        int r = 0;

        marker(MARK_BEGIN);
        for (unsigned k = 0; k < n && r == 0; k++) {
                int fd;
                ev_path(p, sizeof p, k);
                fd = openat(AT_FDCWD, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
                        r = -EIO;
                (void) snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
                if (r == 0 && acl_set_file(proc, ACL_TYPE_ACCESS, acl) < 0)
                        r = -errno;
                (void) close(fd);
        }
        marker(MARK_END);
        return r;
}

static acl_t grant_acl(void) {
        acl_t acl = acl_from_text(
                "u::rw-,u:"
                "61001"
                ":rw-,g::rw-,m::rw-,o::---");
        if (!acl)
                die("acl_from_text");
        return acl;
}

/* "--floor N RUNS": one line "grant_ns restore_ns" per run. */
static int child_floor(unsigned n, int runs) {
        acl_t grant = grant_acl(), restore = acl_from_mode(0660);

        for (int i = 0; i < runs; i++) {
                uint64_t t0 = now_ns(), t1, t2;
                if (xdb_floor(n, grant) < 0)
                        return 96;
                t1 = now_ns();
                if (xdb_floor(n, restore) < 0)
                        return 96;
                t2 = now_ns();
                printf("%" PRIu64 " %" PRIu64 "\n", t1 - t0, t2 - t1);
        }
        acl_free(grant);
        acl_free(restore);
        return 0;
}

/* ---- the driver ---- */

/* Waits for PID; notes its peak RSS in last_maxrss_kib. */
static int wait_child(pid_t pid) {
        struct rusage ru;
        int status;

        if (wait4(pid, &status, 0, &ru) < 0)
                die("wait4");
        last_maxrss_kib = ru.ru_maxrss;
        return status;
}

/* Runs ARGV in a child that has the first test VT as controlling tty (as a
 * login's process has); its stdout is returned (malloc'd). */
static char *run_on_vt(char *const argv[]) {
        int out[2], status;
        pid_t pid;
        size_t cap = 65536, len = 0;
        char *buf = malloc(cap);
        ssize_t r;

        if (!buf || pipe2(out, O_CLOEXEC) < 0)
                die("pipe");
        fflush(NULL);
        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                if (h_vt_lead(h_vt, false) < 0)
                        _exit(98);
                (void) dup2(out[1], STDOUT_FILENO);
                execvp(argv[0], argv);
                _exit(127);
        }
        (void) close(out[1]);
        while ((r = read(out[0], buf + len, cap - len - 1)) > 0) {
                len += (size_t) r;
                if (cap - len < 2 && !(buf = realloc(buf, cap *= 2)))
                        die("realloc");
        }
        buf[len] = '\0';
        (void) close(out[0]);
        status = wait_child(pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "xdbench: %s %s failed (status %d)\n", argv[0], argv[1], status);
                exit(99);
        }
        return buf;
}

/* posix_spawn + wait, output discarded; returns exit status. */
static int spawn_wait(char *const argv[], char *const env[]) {
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int status;

        (void) posix_spawn_file_actions_init(&fa);
        (void) posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        (void) posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        if (posix_spawn(&pid, argv[0], &fa, NULL, argv, env ? env : environ) != 0)
                die("posix_spawn");
        (void) posix_spawn_file_actions_destroy(&fa);
        status = wait_child(pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

struct stats {
        double min, med, max; /* ms */
};

static struct stats stats_of(uint64_t *v, int n) {
        qsort(v, (size_t) n, sizeof *v, cmp_u64);
        return (struct stats) { v[0] / 1e6,
                                (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) / 1e6,
                                v[n - 1] / 1e6 };
}

/* Parses "a b" lines into sums. */
static int parse_pairs(const char *text, uint64_t *sum, uint64_t *first, uint64_t *second) {
        int n = 0;
        const char *p = text;
        while (*p && n < MAX_RUNS) {
                uint64_t a, b;
                if (sscanf(p, "%" SCNu64 " %" SCNu64, &a, &b) != 2)
                        break;
                sum[n] = a + b;
                if (first)
                        first[n] = a;
                if (second)
                        second[n] = b;
                n++;
                p = strchr(p, '\n');
                if (!p)
                        break;
                p++;
        }
        return n;
}

struct trace_count {
        long syscalls, forks, execs, pids;
};

/* The call of one line of an strace -f log ("PID call..."), *RET_PID set
 * (0: no pid); NULL for a line that is no call of its own: the end of a
 * call resumed ("<..."), an exit ("+++"), a signal ("---"). */
static const char *trace_call(char *line, pid_t *ret_pid) {
        char *s = line;

        *ret_pid = 0;
        if (sscanf(line, "%d ", ret_pid) == 1) {
                s = strchr(line, ' ');
                s = s ? s + 1 : line;
                while (*s == ' ')
                        s++;
        }
        if (strncmp(s, "<...", 4) == 0 || strncmp(s, "+++", 3) == 0 || strncmp(s, "---", 3) == 0)
                return NULL;
        return s;
}

/* Counts syscalls in an strace -f log between the markers (across every
 * pid), and fork/exec-family calls among them. */
static struct trace_count trace_parse(const char *log, int pairs) {
        struct trace_count c = { 0 };
        FILE *f = fopen(log, "re");
        char line[8192];
        bool in = false;
        int seen = 0;
        pid_t main_pid = 0;

        if (!f)
                die(log);
        while (fgets(line, sizeof line, f)) {
                pid_t pid;
                const char *s = trace_call(line, &pid);
                /* the markers are calls: access() */
                if (!s)
                        continue;
                if (strstr(s, MARK_BEGIN)) {
                        in = true;
                        main_pid = pid;
                        continue;
                }
                if (strstr(s, MARK_END)) {
                        in = false;
                        if (++seen == pairs)
                                break;
                        continue;
                }
                if (!in)
                        continue;
                c.syscalls++;
                if (pid != main_pid)
                        c.pids++;
                if (!strncmp(s, "clone", 5) || !strncmp(s, "fork", 4) || !strncmp(s, "vfork", 5))
                        c.forks++;
                if (!strncmp(s, "execve", 6) || !strncmp(s, "execveat", 8))
                        c.execs++;
        }
        (void) fclose(f);
        return c;
}

static long trace_total(const char *log) {
        FILE *f = fopen(log, "re");
        char line[8192];
        long n = 0;

        if (!f)
                die(log);
        while (fgets(line, sizeof line, f)) {
                pid_t pid;
                if (trace_call(line, &pid))
                        n++;
        }
        (void) fclose(f);
        return n;
}

/* Total instructions ("summary:" / "totals:" of a callgrind out file). */
static uint64_t callgrind_total(const char *file) {
        FILE *f = fopen(file, "re");
        char line[4096];
        uint64_t v = 0;

        if (!f)
                die(file);
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "totals: %" SCNu64, &v) != 1)
                        (void) sscanf(line, "summary: %" SCNu64, &v);
        (void) fclose(f);
        return v;
}

/* Instructions of function NAME in a callgrind out file: the largest
 * inclusive cost of a symbol ending in ":NAME" (INCLUSIVE), or the summed
 * self cost of symbols containing NAME (e.g. every strcmp variant). */
static uint64_t callgrind_fn(const char *file, const char *name, bool inclusive) {
        char cmd[4096], line[4096], want[128];
        uint64_t best = 0, sum = 0;
        FILE *p;

        (void) snprintf(cmd, sizeof cmd,
                        "callgrind_annotate --threshold=100 --inclusive=%s '%s' 2>/dev/null",
                        inclusive ? "yes" : "no", file);
        (void) snprintf(want, sizeof want, ":%s", name);
        p = popen(cmd, "re");
        if (!p)
                return 0;
        while (fgets(line, sizeof line, p)) {
                char num[64], *m;
                uint64_t v = 0;
                if (sscanf(line, " %63[0-9,]", num) != 1)
                        continue;
                for (char *q = num; *q; q++)
                        if (*q != ',')
                                v = v * 10 + (uint64_t) (*q - '0');
                if (!inclusive) {
                        if (strstr(line, name))
                                sum += v;
                        continue;
                }
                m = strstr(line, want);
                if (m && strchr(" \n[", m[strlen(want)]) && v > best)
                        best = v;
        }
        (void) pclose(p);
        return inclusive ? best : sum;
}

/* Peak of mem_heap_B + mem_heap_extra_B over the snapshots of a massif
 * out file: the most heap the process ever had, allocator overhead
 * included. */
static uint64_t massif_peak(const char *file) {
        FILE *f = fopen(file, "re");
        char line[256];
        uint64_t heap = 0, peak = 0, v;

        if (!f)
                return 0;
        while (fgets(line, sizeof line, f)) {
                if (sscanf(line, "mem_heap_B=%" SCNu64, &v) == 1)
                        heap = v;
                else if (sscanf(line, "mem_heap_extra_B=%" SCNu64, &v) == 1 && heap + v > peak)
                        peak = heap + v;
        }
        (void) fclose(f);
        return peak;
}

struct row {
        unsigned n;
        struct stats pam, pam_open, pam_close, floor, base, helper, handover;
        bool handover_ok;
        long pam_sys, floor_sys, base_sys, helper_sys;
        uint64_t pam_ir, floor_ir, helper_ir, pam_strcmp_ir, pam_list_add_ir, pam_find_node_ir;
        long forks, execs, pids;
        uint64_t pam_heap;        /* bytes, massif peak of one --pam process */
        long pam_rss, helper_rss; /* KiB, ru_maxrss */
};

static void measure_pam(struct row *row, int runs) {
        char n_s[16], r_s[16], log[] = H_ROOT "/strace.pam", cg[] = H_ROOT "/callgrind.pam";
        uint64_t sum[MAX_RUNS], o[MAX_RUNS], c[MAX_RUNS];
        char *out;
        int got;

        (void) snprintf(n_s, sizeof n_s, "%u", row->n);
        (void) snprintf(r_s, sizeof r_s, "%d", runs);
        /* warm-up (module load, page cache), then timed runs */
        fresh(row->n);
        free(run_on_vt((char *[]) { self_exe, "--pam", n_s, "1", "1", NULL }));
        out = run_on_vt((char *[]) { self_exe, "--pam", n_s, r_s, "1", NULL });
        row->pam_rss = last_maxrss_kib;
        got = parse_pairs(out, sum, o, c);
        free(out);
        if (got != runs) {
                fprintf(stderr, "xdbench: pam: %d of %d runs\n", got, runs);
                exit(99);
        }
        row->pam = stats_of(sum, got);
        row->pam_open = stats_of(o, got);
        row->pam_close = stats_of(c, got);

        /* syscalls, and fork/exec inside the PAM calls */
        free(run_on_vt((char *[]) { "strace", "-f", "-qq", "-o", log, self_exe, "--pam", n_s, "1",
                                    "0", NULL }));
        struct trace_count tc = trace_parse(log, 1);
        row->pam_sys = tc.syscalls;
        row->forks = tc.forks;
        row->execs = tc.execs;
        row->pids = tc.pids;
        if (getenv("XDBENCH_KEEP")) {
                char cmd[256];
                (void) snprintf(cmd, sizeof cmd, "cp %s %s.%u", log, getenv("XDBENCH_KEEP"),
                                row->n);
                (void) system(cmd);
        }
        (void) unlink(log);

        /* instructions in xdb_pam_session only */
        free(run_on_vt((char *[]) {
                "valgrind", "--tool=callgrind", "-q", "--toggle-collect=xdb_pam_session*",
                "--callgrind-out-file=" H_ROOT "/callgrind.pam", "--log-file=/dev/null", self_exe,
                "--pam", n_s, "1", "0", NULL }));
        row->pam_ir = callgrind_total(cg);
        row->pam_strcmp_ir = callgrind_fn(cg, "strcmp", false);
        row->pam_list_add_ir = callgrind_fn(cg, "list_add", true);
        row->pam_find_node_ir = callgrind_fn(cg, "xdev_state_find_node", true);
        if (getenv("XDBENCH_KEEP")) {
                char cmd[256];
                (void) snprintf(cmd, sizeof cmd, "cp %s %s.callgrind.%u", cg,
                                getenv("XDBENCH_KEEP"), row->n);
                (void) system(cmd);
        }
        (void) unlink(cg);

        /* memory: the heap at its peak, whole process (libpam, the module) */
        free(run_on_vt((char *[]) {
                "valgrind", "--tool=massif", "-q", "--massif-out-file=" H_ROOT "/massif.pam",
                "--log-file=/dev/null", self_exe, "--pam", n_s, "1", "0", NULL }));
        row->pam_heap = massif_peak(H_ROOT "/massif.pam");
        (void) unlink(H_ROOT "/massif.pam");
}

static void measure_floor(struct row *row, int runs) {
        char n_s[16], r_s[16], log[] = H_ROOT "/strace.floor", cg[] = H_ROOT "/callgrind.floor";
        uint64_t sum[MAX_RUNS];
        char *out;
        int got;

        (void) snprintf(n_s, sizeof n_s, "%u", row->n);
        (void) snprintf(r_s, sizeof r_s, "%d", runs);
        fresh(row->n);
        free(run_on_vt((char *[]) { self_exe, "--floor", n_s, "1", NULL }));
        out = run_on_vt((char *[]) { self_exe, "--floor", n_s, r_s, NULL });
        got = parse_pairs(out, sum, NULL, NULL);
        free(out);
        if (got != runs)
                exit(99);
        row->floor = stats_of(sum, got);
        free(run_on_vt((char *[]) { "strace", "-f", "-qq", "-o", log, self_exe, "--floor", n_s, "1",
                                    NULL }));
        row->floor_sys = trace_parse(log, 2).syscalls;
        (void) unlink(log);
        free(run_on_vt((char *[]) { "valgrind", "--tool=callgrind", "-q",
                                    "--toggle-collect=xdb_floor*",
                                    "--callgrind-out-file=" H_ROOT "/callgrind.floor",
                                    "--log-file=/dev/null", self_exe, "--floor", n_s, "1", NULL }));
        row->floor_ir = callgrind_total(cg);
        (void) unlink(cg);
}

/* One setfacl process per node to grant, one per node to restore. */
static uint64_t baseline_once(unsigned n) {
        char p[64];
        uint64_t t0 = now_ns();

        for (int pass = 0; pass < 2; pass++)
                for (unsigned k = 0; k < n; k++) {
                        ev_path(p, sizeof p, k);
                        char *grant[] = { "/usr/bin/setfacl", "-m", "u:61001:rw", p, NULL };
                        char *restore[] = { "/usr/bin/setfacl", "-x", "u:61001", p, NULL };
                        if (spawn_wait(pass ? restore : grant, NULL) != 0) {
                                fprintf(stderr, "xdbench: setfacl failed on %s\n", p);
                                exit(99);
                        }
                }
        return now_ns() - t0;
}

static void measure_baseline(struct row *row, int runs) {
        uint64_t v[MAX_RUNS];
        char log[] = H_ROOT "/strace.setfacl";

        fresh(row->n);
        for (int i = 0; i < runs; i++)
                v[i] = baseline_once(row->n);
        row->base = stats_of(v, runs);
        /* syscalls of one grant + one restore process (constant per node) */
        char *argv[] = {
                "/usr/bin/strace",   "-f", "-qq", "-o", log, "/usr/bin/setfacl", "-m", "u:61001:rw",
                "/dev/input/event0", NULL
        };
        (void) spawn_wait(argv, NULL);
        row->base_sys = trace_total(log);
        argv[6] = "-x";
        argv[7] = "u:61001";
        (void) spawn_wait(argv, NULL);
        row->base_sys += trace_total(log);
        (void) unlink(log);
}

/* The helper as udev runs it, while a live session holds the N nodes:
 * "xdevices apply /dev/input/eventK" for a node just added. */
static void measure_helper(struct row *row, int runs) {
        uint64_t v[MAX_RUNS];
        char p[64], e_dev[96], e_min[32];
        char *env[] = { "ACTION=add",
                        e_dev,
                        "MAJOR=13",
                        e_min,
                        "XDEVICES_CLASS=input",
                        "SUBSYSTEM=input",
                        "TAGS=:xdevices:",
                        "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                        NULL };
        char *argv[] = { (char *) helper_path, "--conf=" H_CONF, "apply", p, NULL };
        struct h_session *s;
        unsigned k = row->n;

        fresh(row->n);
        s = h_session_open(USER, h_vt, NULL);
        if (s->open_ret != PAM_SUCCESS) {
                fprintf(stderr, "xdbench: holder session: %d\n", s->open_ret);
                exit(99);
        }
        for (int i = 0; i < runs + 2; i++, k++) {
                add_node(k);
                ev_path(p, sizeof p, k);
                (void) snprintf(e_dev, sizeof e_dev, "DEVNAME=%s", p);
                (void) snprintf(e_min, sizeof e_min, "MINOR=%u", EV_MINOR0 + k);
                if (i == runs) {
                        /* syscalls: whole process */
                        char log[] = H_ROOT "/strace.helper";
                        char *sargv[] = { "/usr/bin/strace", "-f",    "-qq",   "-o",    log,
                                          argv[0],           argv[1], argv[2], argv[3], NULL };
                        (void) spawn_wait(sargv, env);
                        row->helper_sys = trace_total(log);
                        (void) unlink(log);
                } else if (i == runs + 1) {
                        char cg[] = H_ROOT "/callgrind.helper";
                        char *vargv[] = { "/usr/bin/valgrind",
                                          "--tool=callgrind",
                                          "-q",
                                          "--callgrind-out-file=" H_ROOT "/callgrind.helper",
                                          argv[0],
                                          argv[1],
                                          argv[2],
                                          argv[3],
                                          NULL };
                        (void) spawn_wait(vargv, env);
                        row->helper_ir = callgrind_total(cg);
                        (void) unlink(cg);
                } else {
                        uint64_t t0 = now_ns();
                        int r = spawn_wait(argv, env);
                        v[i] = now_ns() - t0;
                        if (last_maxrss_kib > row->helper_rss)
                                row->helper_rss = last_maxrss_kib;
                        if (r != 0) {
                                fprintf(stderr, "xdbench: helper apply %s: exit %d\n", p, r);
                                exit(99);
                        }
                }
                const char *a = h_acl_of(p, UID);
                if (!a || strcmp(a, "rw") != 0) {
                        fprintf(stderr, "xdbench: helper did not grant %s\n", p);
                        exit(99);
                }
        }
        row->helper = stats_of(v, runs);
        if (h_session_close(s) != PAM_SUCCESS) {
                fprintf(stderr, "xdbench: holder close failed\n");
                exit(99);
        }
        ev_path(p, sizeof p, row->n);
        if (h_acl_of(p, UID) && *h_acl_of(p, UID)) {
                fprintf(stderr, "xdbench: %s not restored after the holder left\n", p);
                exit(99);
        }
}

/* xdevicesd's step at a VT switch, called in this process as the daemon
 * calls it: alice on one VT and bob on the next, the active VT flips, and
 * each call takes the N nodes (and the VT-less wait) from one to the other:
 * old grants off, a /proc sweep for the old holder's fds, new grants on.
 * What it does not include: the kernel's wake-up of the daemon's poll, and
 * the enumeration the daemon runs once idle (xdev_follow_enumerate). */
static void measure_handover(struct row *row, int runs) {
        struct xdev_follow_result *res = calloc(1, sizeof *res);
        struct xdev_follow_self self = { .pid = getpid() };
        struct xdev_proc_stat pst;
        uint64_t v[HANDOVER_RUNS];
        struct xdev_ctx ctx;
        int r;

        if (!res || xdev_proc_stat(self.pid, &pst) < 0)
                die("handover setup");
        self.start = pst.start;
        fresh(row->n);
        h_set_active_vt(h_vt);
        struct h_session *a = h_session_open(USER, h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        xdev_ctx_init(&ctx);
        if (xdev_config_load(&ctx.config, H_CONF, NULL) < 0)
                die("handover config");
        row->handover_ok = a->open_ret == PAM_SUCCESS && b->open_ret == PAM_SUCCESS &&
                xdev_follow_update(&ctx, &self, res) == 0;
        xdev_fd_bin_empty(&res->bin);
        xdev_linger_finish(&ctx, res->waits);
        if (runs > HANDOVER_RUNS)
                runs = HANDOVER_RUNS;
        for (int i = 0; i < runs && row->handover_ok; i++) {
                bool to_bob = i % 2 == 0;
                h_set_active_vt(to_bob ? h_vt + 1 : h_vt);
                uint64_t t0 = now_ns();
                r = xdev_follow_update(&ctx, &self, res);
                v[i] = now_ns() - t0;
                xdev_fd_bin_empty(&res->bin); /* as the daemon, apart */
                xdev_linger_finish(&ctx, res->waits);
                /* not timed, as the daemon runs it when idle */
                if (r == 0 && res->enumerate && xdev_follow_enumerate(&ctx, &self) < 0)
                        r = -EIO;
                /* not timed: did the devices move? */
                char p[64];
                ev_path(p, sizeof p, row->n - 1);
                const char *acl = h_acl_of(p, to_bob ? H_UID_BOB : UID);
                if (r < 0 || !res->changed || !res->has_holder ||
                    res->holder != (to_bob ? H_UID_BOB : UID) || !acl || strcmp(acl, "rw") != 0) {
                        fprintf(stderr, "xdbench: handover %d did not move the devices (r=%d)\n", i,
                                r);
                        row->handover_ok = false;
                }
        }
        if (row->handover_ok)
                row->handover = stats_of(v, runs);
        (void) xdev_follow_update(&ctx, NULL, NULL);
        xdev_ctx_done(&ctx);
        (void) h_session_close(b);
        (void) h_session_close(a);
        h_set_active_vt(1);
        free(res);
}

/* ---- how long the state lock is held when the departing user has a
 * costly or stubborn process (figures, never a pass/fail) ---- */

#define LOCK_THREADS 400
#define LOCK_FDS 1000
#define LOCK_GRACE_MS 2000
#define STR_(x) #x
#define STR(x) STR_(x)

static const char lock_conf[] =
        "# xdbench: the shared node that opens on the host\n"
        "devices = glob\nglob = console:/dev/tty0\nconsole = rw\nlogind = ignore\n"
        "lingering = kill\nlinger_grace = 2000\n";

/* The threads of a holder (its setup, in h_holder_spawn's child): with
 * OWN, each gets a table of its own (unshare(CLONE_FILES)) and opens FDS
 * files of /dev/null in it; without, they share the process's table. */
struct fd_threads {
        unsigned fds;
        bool own;
        int ready; /* each thread writes 'r' (ready) or 'x' (failed) */
};

static void *fd_thread(void *data) {
        const struct fd_threads *a = data;
        char c = 'r';

        if (a->own && unshare(CLONE_FILES) < 0)
                c = 'x';
        for (unsigned i = 0; c == 'r' && a->own && i < a->fds; i++)
                if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0)
                        c = 'x';
        (void) write(a->ready, &c, 1);
        for (;;)
                pause();
        return NULL;
}

/* Starts THREADS fd_thread()s, one at a time, each ready before the next;
 * 0, or -1 when one could not be started or set up. */
static int fd_threads_start(unsigned threads, unsigned fds, bool own) {
        struct fd_threads a = { .fds = fds, .own = own };
        pthread_attr_t at;
        int ready[2];
        char c = 'x';

        if (pipe(ready) < 0)
                return -1;
        a.ready = ready[1];
        (void) pthread_attr_init(&at);
        (void) pthread_attr_setstacksize(&at, 64 * 1024);
        for (unsigned i = 0; i < threads; i++) {
                pthread_t t;
                if (pthread_create(&t, &at, fd_thread, &a) != 0 || read(ready[0], &c, 1) != 1 ||
                    c != 'r')
                        return -1;
        }
        return 0;
}

/* KIND 0: LOCK_THREADS threads each with a table of its own of LOCK_FDS
 * files; KIND 1: tty0 as an io_uring registered file. */
static int lock_holder_setup(void *data) {
        int kind = *(const int *) data;
        struct rlimit rl = { 4096, 4096 };
        int fd = open("/dev/tty0", O_RDONLY | O_NOCTTY | O_CLOEXEC);

        if (fd < 0 || setrlimit(RLIMIT_NOFILE, &rl) < 0)
                return 10;
        if (kind == 0)
                return fd_threads_start(LOCK_THREADS, LOCK_FDS, true) < 0 ? 11 : 0;
        struct io_uring_params params = { 0 };
        int ring = (int) syscall(SYS_io_uring_setup, 4, &params);
        if (ring < 0 || syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1) < 0)
                return 12;
        (void) close(fd);
        return 0;
}

/* KIND 0: a process of the user holding tty0, with LOCK_THREADS threads
 * each with a table of its own of LOCK_FDS files. KIND 1: one that holds
 * tty0 as an io_uring registered file (which nothing revokes) and ignores
 * SIGTERM. KIND 2: LOCK_CROWD processes of the user holding nothing (a
 * build's), more than the sweep's list of processes left to the pass
 * after the lock holds. Returns its pid (the crowd's first) once it is set
 * up (0: it could not be). */
#define LOCK_CROWD 900
static pid_t lock_crowd[LOCK_CROWD];
static bool lock_crowd_up;
static pid_t lock_holder_start(int kind, uid_t uid) {
        if (kind == 2) {
                lock_crowd_up = h_crowd_start(uid, LOCK_CROWD, lock_crowd) == 0;
                return lock_crowd_up ? lock_crowd[0] : 0;
        }
        pid_t pid = h_holder_spawn(lock_holder_setup, &kind, uid, kind == 1);

        return pid < 0 ? 0 : pid;
}

static void lock_holder_stop(pid_t pid) {
        if (lock_crowd_up && pid == lock_crowd[0]) {
                (void) h_crowd_stop(lock_crowd, LOCK_CROWD);
                lock_crowd_up = false;
                return;
        }
        if (pid <= 0)
                return;
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
}

/* The longest stretch, in ms, during which the state lock could not be
 * taken while the session S closes (sampled every 0.1 ms). */
static double lock_held_while_closing(struct h_session *s) {
        int fd = open("/run/xdevices/lock", O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        double longest = 0, since = 0;
        bool held = false;

        if (fd < 0)
                die("/run/xdevices/lock");
        h_session_close_begin(s);
        for (;;) {
                bool running = h_session_running(s);
                double now = now_ns() / 1e6;
                if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
                        (void) flock(fd, LOCK_UN);
                        if (held && now - since > longest)
                                longest = now - since;
                        held = false;
                } else if (!held) {
                        held = true;
                        since = now;
                }
                if (!running)
                        break;
                (void) usleep(100);
        }
        (void) close(fd);
        (void) h_session_close_end(s);
        return longest;
}

struct lock_figures {
        bool ok;
        double switch_ms, switch_sweep_ms, logout_ms;
        unsigned procs;
};

static void measure_lock(int kind, struct lock_figures *f) {
        struct xdev_follow_result *res = calloc(1, sizeof *res);
        struct xdev_follow_self self = { .pid = getpid() };
        struct xdev_step_watch watch = { .state_watch_fd = -1 };
        struct xdev_proc_stat pst;
        struct xdev_ctx ctx;
        pid_t holder;

        *f = (struct lock_figures) { 0 };
        xdev_step_watch_attach(&watch, &self);
        if (!res || xdev_proc_stat(self.pid, &pst) < 0)
                die("lock setup");
        self.start = pst.start;
        /* a switch, as xdevicesd makes it: alice's VT to bob's */
        h_fresh(lock_conf, NULL);
        (void) unlink("/dev/log");
        xdev_ctx_init(&ctx);
        if (xdev_config_load(&ctx.config, H_CONF, NULL) < 0)
                die("lock config");
        struct h_session *a = h_session_open(USER, h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        h_set_active_vt(h_vt);
        f->ok = a->open_ret == PAM_SUCCESS && b->open_ret == PAM_SUCCESS &&
                xdev_follow_update(&ctx, &self, res) == 0 && res->holder == UID;
        xdev_fd_bin_empty(&res->bin);
        xdev_linger_finish(&ctx, res->waits);
        holder = f->ok ? lock_holder_start(kind, UID) : 0;
        f->ok = f->ok && holder > 0;
        if (f->ok) {
                h_set_active_vt(h_vt + 1);
                xdev_step_watch_start(&watch);
                uint64_t t0 = now_ns();
                f->ok = xdev_follow_update(&ctx, &self, res) == 0 && res->holder == H_UID_BOB;
                f->switch_ms = (now_ns() - t0) / 1e6;
                f->switch_sweep_ms = watch.sweep;
                f->procs = res->examined;
                xdev_fd_bin_empty(&res->bin); /* after the lock, as the daemon */
                xdev_linger_finish(&ctx, res->waits);
        }
        lock_holder_stop(holder);
        (void) xdev_follow_update(&ctx, NULL, NULL);
        xdev_ctx_done(&ctx);
        (void) h_session_close(b);
        (void) h_session_close(a);
        /* a logout: alice's login closes while bob's VT is in front */
        h_fresh(lock_conf, NULL);
        (void) unlink("/dev/log");
        a = h_session_open(USER, h_vt, NULL);
        b = h_session_open("xdbob", h_vt + 1, NULL);
        holder = f->ok ? lock_holder_start(kind, UID) : 0;
        if (f->ok && holder > 0 && a->open_ret == PAM_SUCCESS) {
                h_set_active_vt(h_vt + 1);
                f->logout_ms = lock_held_while_closing(a);
        } else {
                f->ok = false;
                (void) h_session_close(a);
        }
        lock_holder_stop(holder);
        (void) h_session_close(b);
        h_set_active_vt(1);
        free(res);
}

static void print_locks(void) {
        static const char *kinds[] = {
                "a process with " STR(LOCK_THREADS) " threads x " STR(
                        LOCK_FDS) " fds, each thread with its own table (and tty0)",
                "a process holding tty0 in an io_uring (no revoke), ignoring SIGTERM",
                STR(LOCK_CROWD) " idle processes (a build's), none holding",
        };
        printf("\n### State lock held at a switch and a logout\n\n"
               "The departing user (alice, lingering = kill, linger_grace = %d ms) has one "
               "process of the kind below. switch: xdevicesd's step from alice's VT to bob's, "
               "called in this process (the sweep phase and processes read in brackets); "
               "logout: the longest stretch the state lock could not be taken (sampled every "
               "0.1 ms) while alice's login closed her session, bob's VT in front. Scan "
               "budget: %u per process.\n\n",
               LOCK_GRACE_MS, (unsigned) XDEV_SWEEP_SCAN_BUDGET);
        printf("| departing user has | switch: lock held | logout: lock held |\n|---|---|---|\n");
        for (int k = 0; k < 3; k++) {
                struct lock_figures f;
                fprintf(stderr, "xdbench: state lock, %s ...\n", kinds[k]);
                measure_lock(k, &f);
                if (!f.ok) {
                        printf("| %s | (could not set up) | |\n", kinds[k]);
                        continue;
                }
                printf("| %s | %.1f ms (sweep %.1f ms, %u processes) | %.1f ms |\n", kinds[k],
                       f.switch_ms, f.switch_sweep_ms, f.procs, f.logout_ms);
        }
}

/* ---- the switch step against the machine's process count ---- */

#define STEP_RUNS 21
#define STEP_NODES 8

/* Idle processes of a uid with no session: what a busy machine has. */
static pid_t *idle_start(pid_t *v, size_t from, size_t to) {
        for (size_t i = from; i < to; i++) {
                v[i] = fork();
                if (v[i] < 0)
                        die("fork");
                if (v[i] == 0) {
                        if (setresgid(H_UID_CAROL, H_UID_CAROL, H_UID_CAROL) < 0 ||
                            setresuid(H_UID_CAROL, H_UID_CAROL, H_UID_CAROL) < 0)
                                _exit(1);
                        for (;;)
                                pause();
                }
        }
        return v;
}

static void procs_end(pid_t *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                (void) kill(v[i], SIGKILL);
        for (size_t i = 0; i < n; i++)
                (void) waitpid(v[i], NULL, 0);
}

/* One switch, timed: the VT in front flips to TO and xdevicesd's step runs
 * as the daemon runs it (its fd copies closed and its waits finished
 * after, untimed). */
static uint64_t step_once(struct xdev_ctx *ctx, const struct xdev_follow_self *self,
                          struct xdev_follow_result *res, int to) {
        h_set_active_vt(to);
        if (self->data) /* the phases of this step (xdevicesd's watch) */
                xdev_step_watch_start(self->data);
        uint64_t t0 = now_ns();
        int r = xdev_follow_update(ctx, self, res);
        uint64_t t = now_ns() - t0;
        xdev_fd_bin_empty(&res->bin);
        xdev_linger_finish(ctx, res->waits);
        res->waits = NULL;
        if (r < 0 || !res->changed)
                die("switch step");
        if (res->enumerate && xdev_follow_enumerate(ctx, self) < 0)
                die("switch enumerate");
        return t;
}

/* The phases of the timed switches of one row, each a median over them
 * (ms): the grant is where each node passes to the next holder. */
struct step_phases {
        double load, grant, sweep;
        struct xdev_node_io io; /* of the last switch away */
};

static double median_ms(double *v, int n) {
        uint64_t ns[STEP_RUNS];
        for (int i = 0; i < n; i++)
                ns[i] = (uint64_t) (v[i] * 1e6);
        return stats_of(ns, n).med;
}

/* RUNS switches away from alice (each followed by one back, untimed);
 * PH (may be NULL) gets the medians of their phases, as the watch of
 * xdevicesd (SELF->data) timed them. */
static struct stats steps(struct xdev_ctx *ctx, const struct xdev_follow_self *self,
                          struct xdev_follow_result *res, int runs, struct step_phases *ph) {
        const struct xdev_step_watch *w = self->data;
        uint64_t v[STEP_RUNS];
        double load[STEP_RUNS], sw[STEP_RUNS], gr[STEP_RUNS];
        for (int i = 0; i < runs; i++) {
                v[i] = step_once(ctx, self, res, h_vt + 1);
                load[i] = w ? w->load : 0;
                sw[i] = w ? w->sweep : 0;
                gr[i] = w ? w->grant : 0;
                if (ph)
                        ph->io = res->io;
                (void) step_once(ctx, self, res, h_vt);
        }
        if (ph) {
                ph->load = median_ms(load, runs);
                ph->sweep = median_ms(sw, runs);
                ph->grant = median_ms(gr, runs);
        }
        return stats_of(v, runs);
}

/* Closes what an exec would: the fds of xdbench marked close-on-exec, so
 * that a forked holder holds only what it opens (and the pipes without the
 * flag, as an exec'd one did). */
static void close_cloexec_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;

        while (d && (e = readdir(d))) {
                int fd = atoi(e->d_name), flags;
                if (e->d_name[0] == '.' || fd <= STDERR_FILENO || fd == dirfd(d))
                        continue;
                flags = fcntl(fd, F_GETFD);
                if (flags >= 0 && (flags & FD_CLOEXEC))
                        (void) close(fd);
        }
        if (d)
                (void) closedir(d);
}

struct fd_holder {
        unsigned threads, fds;
        bool own;
};

/* The setup of fd_holder_start()'s holder, as root before it becomes
 * alice: the fds, then the threads. */
static int fd_holder_setup(void *data) {
        const struct fd_holder *h = data;
        struct rlimit rl = { 1u << 20, 1u << 20 };

        close_cloexec_fds();
        (void) setrlimit(RLIMIT_NOFILE, &rl);
        for (unsigned i = 0; !h->own && i < h->fds; i++)
                if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0)
                        return 10;
        return fd_threads_start(h->threads, h->fds, h->own) < 0 ? 11 : 0;
}

/* A process of alice's with THREADS threads and FDS fds of /dev/null, in
 * one shared fd table or, with OWN, one table per thread. Returns its pid
 * once it is set up. */
static pid_t fd_holder_start(unsigned threads, unsigned fds, bool own) {
        struct fd_holder h = { threads, fds, own };
        pid_t pid = h_holder_spawn(fd_holder_setup, &h, UID, false);

        if (pid < 0)
                die("fd holder");
        return pid;
}

/* Prints the switch-step lines: the step with the daemon's process table
 * and with the walk of /proc, against 0, 1000 and 5000 extra idle
 * processes, with the ACL floor of the same nodes; then against a holder
 * of alice's with threads x fds. */
/* A sweep reads each candidate's maps through a task that a stuck map
 * lock cannot hold (xdev_uring_maps_read_within): the cost of one read of
 * this process's maps that way, against a read in place. */
#define MAPS_READS 2000
static void measure_maps_reads(void) {
        static uint64_t task[MAPS_READS], inplace[MAPS_READS];
        struct xdev_uring_maps_reader mr = { 0 };
        int got = 0;

        for (int i = 0; i < MAPS_READS; i++) {
                struct xdev_uring_mapped m;
                size_t lines = 0;
                int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
                uint64_t t0 = now_ns();
                if (fd < 0 || xdev_uring_maps_read_within(&mr, fd, 100000, 1000, &lines, &m) < 0)
                        break;
                task[i] = now_ns() - t0;
                fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
                t0 = now_ns();
                if (fd < 0 || xdev_uring_maps_read(fd, 100000, &lines, &m) < 0) {
                        if (fd >= 0)
                                (void) close(fd);
                        break;
                }
                inplace[i] = now_ns() - t0;
                (void) close(fd);
                got++;
        }
        xdev_uring_maps_reader_done(&mr);
        if (got < MAPS_READS) {
                printf("maps-read: a read failed after %d: not measured\n", got);
                return;
        }
        struct stats a = stats_of(task, got), b = stats_of(inplace, got);
        printf("maps-read reads=%d task_median_us=%.1f task_max_us=%.1f in_place_median_us=%.1f\n",
               got, a.med * 1e3, a.max * 1e3, b.med * 1e3);
}

/* A process of the holder's that writes one NUL byte to /dev/tty0 WATCH_WRITES
 * times, as fast as it can: its ns a write in *RET (through the pipe
 * FD), with or without the watch reading the events meanwhile. */
#define WATCH_WRITES 20000
static pid_t watch_writer(int out) {
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        int fd = open("/dev/tty0", O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || setresgid(UID, UID, UID) < 0 || setresuid(UID, UID, UID) < 0)
                _exit(12);
        uint64_t t0 = now_ns();
        for (int i = 0; i < WATCH_WRITES; i++)
                if (write(fd, "", 1) != 1)
                        _exit(13);
        uint64_t per = (now_ns() - t0) / WATCH_WRITES;
        _exit(write(out, &per, sizeof per) == sizeof per ? 0 : 14);
}

static uint64_t thread_cpu_ns(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

#define PEEK_RUNS 21

/* The look into a socket's queue that the pass after the lock makes for
 * a socket whose queue holds files (doc/DESIGN.md §3.5.12): its process
 * forked, the queue walked, the answer read, the process reaped. A queue
 * of 1 message and one of 200 (a datagram socket, each carrying a file of
 * /dev/null, one of them the node looked for). */
static void measure_inflight(void) {
        struct stat st;
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        if (null < 0 || fstat(null, &st) < 0)
                die("inflight: /dev/null");
        struct xdev_inflight_node node = { st.st_rdev, XDEV_INFLIGHT_OTHER };
        for (int msgs = 1; msgs <= 200; msgs += 199) {
                uint64_t ns[PEEK_RUNS];
                struct xdev_inflight f = { 0 };
                int sp[2];
                if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) < 0)
                        die("inflight socketpair");
                for (int i = 0; i < msgs; i++)
                        if (h_send_file(sp[0], "m", 1, null) != 1)
                                die("inflight send");
                for (int i = 0; i < PEEK_RUNS; i++) {
                        uint64_t t0 = now_ns();
                        if (xdev_inflight_peek(sp[1], &node, 1, false, 5000, &f) < 0 || f.unknown ||
                            f.n != 1 || f.messages != (unsigned) msgs)
                                die("inflight peek");
                        ns[i] = now_ns() - t0;
                }
                struct stats st_ = stats_of(ns, PEEK_RUNS);
                printf("inflight-peek messages=%d median_ms=%.2f max_ms=%.2f (a look into a "
                       "socket's queue: its process forked, the queue walked, reaped)\n",
                       msgs, st_.med, st_.max);
                (void) close(sp[0]);
                (void) close(sp[1]);
        }
        (void) close(null);
}

/* The watch on the nodes (xdevicesd's, doc/DESIGN.md §3.5.11) against a
 * holder's process that writes /dev/tty0 as fast as it can (the host has
 * no evdev: tty0 is watched as the daemon's test knob watches it), more
 * than a display server's reads of its input could be: what each write costs the writer, and
 * what the watch spends a write (its CPU time over the writes). */
static void measure_watch(void) {
        static const char conf[] =
                "devices = glob\nglob = console:/dev/tty0\nconsole = rw\n"
                "logind = ignore\n";
        struct xdev_watch *w = NULL;
        struct xdev_ctx ctx;
        uint64_t plain = 0, watched = 0, cpu;
        int p[2], r;
        FILE *f = fopen(H_ROOT "/watch.conf", "w");

        if (!f || fputs(conf, f) < 0 || fclose(f) != 0)
                die("watch.conf");
        xdev_ctx_init(&ctx);
        if (xdev_config_load(&ctx.config, H_ROOT "/watch.conf", NULL) < 0)
                die("watch config");
        if (pipe(p) < 0)
                die("pipe");
        uint64_t unmarked = 0;
        pid_t pid = watch_writer(p[1]);
        if (wait_child(pid) != 0 || read(p[0], &unmarked, sizeof unmarked) != sizeof unmarked)
                die("watch writer");
        r = xdev_watch_open(&w, true);
        if (r < 0 || xdev_watch_nodes(w, &ctx) != 1) {
                printf("watch: no fanotify watch here (%s): not measured\n",
                       strerror(r < 0 ? -r : ENOENT));
                xdev_watch_free(w);
                xdev_ctx_done(&ctx);
                return;
        }
        xdev_watch_holder(w, true, UID);
        /* without the watch reading: the mark alone, the queue overflowing */
        pid = watch_writer(p[1]);
        if (wait_child(pid) != 0 || read(p[0], &plain, sizeof plain) != sizeof plain)
                die("watch writer");
        struct pollfd pfd = { .fd = xdev_watch_fd(w), .events = POLLIN };
        while (poll(&pfd, 1, 0) > 0) /* each call reads a bounded share */
                xdev_watch_read(w, &ctx);
        struct xdev_watch_counts c0 = xdev_watch_counts(w);
        cpu = thread_cpu_ns();
        pid = watch_writer(p[1]);
        while (waitpid(pid, &r, WNOHANG) == 0)
                if (poll(&pfd, 1, 10) > 0)
                        xdev_watch_read(w, &ctx);
        while (poll(&pfd, 1, 0) > 0)
                xdev_watch_read(w, &ctx);
        cpu = thread_cpu_ns() - cpu;
        if (!WIFEXITED(r) || WEXITSTATUS(r) != 0 ||
            read(p[0], &watched, sizeof watched) != sizeof watched)
                die("watch writer");
        struct xdev_watch_counts c1 = xdev_watch_counts(w);
        unsigned events = c1.events - c0.events;
        printf("watch writes=%d events=%u write_ns_unmarked=%" PRIu64 " write_ns_marked=%" PRIu64
               " write_ns_read=%" PRIu64
               " watch_cpu_ns_per_write=%.0f watch_cpu_us_per_event=%.1f checked=%u\n",
               WATCH_WRITES, events, unmarked, plain, watched, (double) cpu / WATCH_WRITES,
               events ? cpu / 1e3 / events : 0.0, c1.checked - c0.checked);
        (void) close(p[0]);
        (void) close(p[1]);
        xdev_watch_free(w);
        xdev_ctx_done(&ctx);
}

static void measure_switch_steps(void) {
        static const size_t extra[] = { 0, 1000, 5000 };
        struct xdev_follow_result *res = calloc(1, sizeof *res);
        struct xdev_follow_self self = { .pid = getpid() };
        struct xdev_step_watch watch = { .state_watch_fd = -1 };
        struct xdev_proctab *table = NULL;
        struct xdev_procsrc src;
        struct xdev_proc_stat pst;
        pid_t *idle = calloc(5000, sizeof *idle);
        size_t n_idle = 0;
        struct xdev_ctx ctx;
        int runs = quick ? 7 : STEP_RUNS;

        measure_maps_reads();
        measure_watch();
        measure_inflight();
        if (!res || !idle || xdev_proc_stat(self.pid, &pst) < 0)
                die("switch-step setup");
        self.start = pst.start;
        xdev_step_watch_attach(&watch, &self);
        int r = xdev_proctab_open(&table, 0, NULL);
        if (r < 0) {
                printf("switch-step: no process table here (%s): not measured\n", strerror(-r));
                free(res);
                free(idle);
                return;
        }
        xdev_proctab_source(table, &src);
        fresh(STEP_NODES);
        h_set_active_vt(h_vt);
        struct h_session *a = h_session_open(USER, h_vt, NULL);
        struct h_session *b = h_session_open("xdbob", h_vt + 1, NULL);
        xdev_ctx_init(&ctx);
        if (xdev_config_load(&ctx.config, H_CONF, NULL) < 0 || a->open_ret != PAM_SUCCESS ||
            b->open_ret != PAM_SUCCESS)
                die("switch-step sessions");
        /* the daemon's mark, once */
        if (xdev_follow_update(&ctx, &self, res) < 0)
                die("switch-step follow");
        xdev_fd_bin_empty(&res->bin);
        xdev_linger_finish(&ctx, res->waits);

        acl_t grant = grant_acl(), restore = acl_from_mode(0660);
        for (size_t k = 0; k < sizeof extra / sizeof *extra; k++) {
                if (quick && extra[k] > 1000)
                        break;
                idle_start(idle, n_idle, extra[k]);
                n_idle = extra[k];
                /* as the daemon does while idle (at most once a second) */
                (void) xdev_proctab_drain(table);
                ctx.procs = &src;
                struct step_phases ph = { 0 };
                struct stats fed = steps(&ctx, &self, res, runs, &ph);
                unsigned fed_procs = res->examined;
                ctx.procs = NULL;
                struct stats full = steps(&ctx, &self, res, runs, NULL);
                uint64_t fv[STEP_RUNS];
                for (int i = 0; i < runs; i++) {
                        uint64_t t0 = now_ns();
                        /* one ACL write per node, as a switch makes */
                        if (xdb_floor(STEP_NODES, i % 2 ? restore : grant) < 0)
                                die("floor");
                        fv[i] = now_ns() - t0;
                }
                struct stats floor = stats_of(fv, runs);
                /* the pass after the lock, which reads these idle
                 * processes (a uid with no session) to their end */
                uint64_t ov[STEP_RUNS];
                struct xdev_sweep_counts oc = { 0 };
                for (int i = 0; i < runs; i++) {
                        uint64_t t0 = now_ns();
                        if (xdev_sweep_others(&ctx, NULL, &oc) < 0)
                                die("others pass");
                        ov[i] = now_ns() - t0;
                }
                struct stats others = stats_of(ov, runs);
                printf("others-pass extra_procs=%zu median_ms=%.2f max_ms=%.2f procs_read=%u "
                       "(after the lock, the time from a switch's grant to the end of the pass)\n",
                       extra[k], others.med, others.max, oc.examined);
                printf("switch-step extra_procs=%zu median_ms=%.2f max_ms=%.2f full_sweep_median_ms=%.2f "
                       "acl_floor_median_ms=%.2f nodes=%d procs_read=%u\n",
                       extra[k], fed.med, fed.max, full.med, floor.med, STEP_NODES, fed_procs);
                printf("switch-step-phases extra_procs=%zu load_ms=%.3f grant_ms=%.3f sweep_ms=%.3f "
                       "acl_floor_ms=%.3f vs_floor=%.1f acl_reads=%u acl_writes=%u mark_writes=%u "
                       "(medians over the switches away; the counts of one)\n",
                       extra[k], ph.load, ph.grant, ph.sweep, floor.med,
                       floor.med > 0 ? ph.grant / floor.med : 0.0, ph.io.acl_reads,
                       ph.io.acl_writes, ph.io.mark_writes);
        }
        procs_end(idle, n_idle);
        acl_free(grant);
        acl_free(restore);

        /* holders: what the table cannot spare, the departing user's own */
        static const struct {
                unsigned threads, fds;
                bool own;
        } holders[] = { { 100, 1000, false }, { 10, 1000, true } };
        for (size_t k = 0; k < sizeof holders / sizeof *holders; k++) {
                uint64_t v[STEP_RUNS];
                int n = quick ? 3 : 7;
                ctx.procs = &src;
                for (int i = 0; i < n; i++) {
                        pid_t h =
                                fd_holder_start(holders[k].threads, holders[k].fds, holders[k].own);
                        v[i] = step_once(&ctx, &self, res, h_vt + 1);
                        (void) step_once(&ctx, &self, res, h_vt);
                        procs_end(&h, 1);
                }
                struct stats st = stats_of(v, n);
                printf("switch-step holder_threads=%u holder_fds=%u tables=%s median_ms=%.2f max_ms=%.2f\n",
                       holders[k].threads, holders[k].fds, holders[k].own ? "own" : "shared",
                       st.med, st.max);
        }
        /* 16 processes of alice's with 8000 fds each, holding nothing: the
         * lock is held for XDEV_SWEEP_LOCKED_BUDGET entries at most, the
         * rest read after it (as xdevicesd does) */
        {
                enum { FAT = 16 };
                pid_t fat[FAT];
                uint64_t v[STEP_RUNS], after[STEP_RUNS];
                int n = quick ? 3 : 7;
                struct xdev_sweep_counts oc;
                ctx.procs = &src;
                for (int k = 0; k < FAT; k++)
                        fat[k] = fd_holder_start(1, 8000, false);
                for (int i = 0; i < n; i++) {
                        v[i] = step_once(&ctx, &self, res, h_vt + 1);
                        uint64_t t0 = now_ns();
                        if (xdev_sweep_others(&ctx, &res->defer, &oc) < 0)
                                die("others pass");
                        after[i] = now_ns() - t0;
                        (void) step_once(&ctx, &self, res, h_vt);
                }
                for (int k = 0; k < FAT; k++)
                        if (kill(fat[k], 0) < 0)
                                die("a 16 x 8000-fd process was killed at a switch");
                procs_end(fat, FAT);
                struct stats st = stats_of(v, n), at = stats_of(after, n);
                printf("switch-step holders=%d holder_fds=8000 lock_median_ms=%.2f lock_max_ms=%.2f "
                       "after_lock_median_ms=%.2f after_lock_max_ms=%.2f (none killed)\n",
                       FAT, st.med, st.max, at.med, at.max);
        }
        ctx.procs = NULL;
        (void) xdev_follow_update(&ctx, NULL, NULL);
        xdev_ctx_done(&ctx);
        (void) h_session_close(b);
        (void) h_session_close(a);
        h_set_active_vt(1);
        xdev_proctab_free(table);
        free(idle);
        free(res);
}

static void print_machine(void) {
        FILE *f = fopen("/proc/cpuinfo", "re");
        char line[512], model[256] = "?";
        struct utsname u;

        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "model name", 10) == 0) {
                        char *c = strchr(line, ':');
                        if (c) {
                                (void) snprintf(model, sizeof model, "%s", c + 2);
                                model[strcspn(model, "\n")] = '\0';
                        }
                        break;
                }
        if (f)
                (void) fclose(f);
        (void) uname(&u);
        printf("Machine: %ld CPUs (nproc), %s; kernel %s %s; %s\n\n", sysconf(_SC_NPROCESSORS_ONLN),
               model, u.release, u.machine, u.version);
}

static int runs_for(unsigned n, bool baseline) {
        int r = n <= 64 ? 15 : n <= 512 ? 9 : 5;
        if (baseline)
                r = n <= 64 ? 5 : n <= 512 ? 3 : 1;
        return quick ? (r > 3 ? 3 : r) : r;
}

/* One table: a row per figure, a column per N. */
#define ROW_BEGIN(label) printf("| %s |", label)
#define ROW_END() printf("\n")

static void cell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cell(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        putchar(' ');
        vprintf(fmt, ap);
        printf(" |");
        va_end(ap);
}

static double ratio(double a, double b) {
        return b > 0 ? a / b : 0;
}

/* Cost per node added since the previous N: flat along the row = linear. */
static double marginal(const struct row *rows, size_t i, double (*f)(const struct row *)) {
        if (i == 0)
                return f(&rows[0]) / rows[0].n;
        return (f(&rows[i]) - f(&rows[i - 1])) / (double) (rows[i].n - rows[i - 1].n);
}
static double f_pam_us(const struct row *r) {
        return r->pam.med * 1e3;
}
static double f_pam_ir(const struct row *r) {
        return (double) r->pam_ir;
}
static double f_pam_sys(const struct row *r) {
        return (double) r->pam_sys;
}
static double f_floor_us(const struct row *r) {
        return r->floor.med * 1e3;
}
static double f_helper_us(const struct row *r) {
        return r->helper.med * 1e3;
}
static double f_helper_ir(const struct row *r) {
        return (double) r->helper_ir;
}
static double f_pam_heap(const struct row *r) {
        return (double) r->pam_heap;
}

/* Returns false when a fork or exec was seen inside the PAM calls. */
static bool print_table(const struct row *rows, size_t n_rows) {
        size_t i;
        bool fail = false;

        printf("| figure |");
        for (i = 0; i < n_rows; i++)
                printf(" N=%u |", rows[i].n);
        printf("\n|---|");
        for (i = 0; i < n_rows; i++)
                printf("---:|");
        printf("\n");
#define ROW(label, ...) \
        do { \
                ROW_BEGIN(label); \
                for (i = 0; i < n_rows; i++) { \
                        const struct row *r = &rows[i]; \
                        (void) r; \
                        cell(__VA_ARGS__); \
                } \
                ROW_END(); \
        } while (0)
        ROW("**pam** open+close, ms min / med / max", "%.2f / %.2f / %.2f", r->pam.min, r->pam.med,
            r->pam.max);
        ROW("pam open / close, ms (median)", "%.2f / %.2f", r->pam_open.med, r->pam_close.med);
        ROW("pam µs per node (median ÷ N)", "%.1f", r->pam.med * 1e3 / r->n);
        ROW("pam µs per added node (Δ from previous N)", "%.1f", marginal(rows, i, f_pam_us));
        ROW("pam syscalls: total / per node", "%ld / %.1f", r->pam_sys, (double) r->pam_sys / r->n);
        ROW("pam syscalls per added node", "%.1f", marginal(rows, i, f_pam_sys));
        ROW("pam instructions: total / per node", "%.2fM / %.0fk", r->pam_ir / 1e6,
            (double) r->pam_ir / r->n / 1e3);
        ROW("pam instructions per added node", "%.0fk", marginal(rows, i, f_pam_ir) / 1e3);
        ROW("… of which in strcmp (linear searches by path)", "%.0f%%",
            100.0 * ratio((double) r->pam_strcmp_ir, (double) r->pam_ir));
        ROW("… in list_add (device list dedup) / xdev_state_find_node (ledger lookup), inclusive",
            "%.0f%% / %.0f%%", 100.0 * ratio((double) r->pam_list_add_ir, (double) r->pam_ir),
            100.0 * ratio((double) r->pam_find_node_ir, (double) r->pam_ir));
        ROW("pam peak heap (massif, whole process): KiB / bytes per added node", "%.0f / %.0f",
            (double) r->pam_heap / 1024, marginal(rows, i, f_pam_heap));
        ROW("pam max RSS (whole process, with libpam and libc), MiB", "%.1f", r->pam_rss / 1024.0);
        ROW("fork / exec inside the PAM calls", "%s",
            r->forks || r->execs || r->pids ? "**FAIL**" : "none");
        ROW("**handover** at a VT switch (xdevicesd's step), ms min / med / max",
            "%.2f / %.2f / %.2f%s", r->handover.min, r->handover.med, r->handover.max,
            r->handover_ok ? "" : " **FAIL**");
        ROW("**floor** grant+restore, ms min / med / max", "%.2f / %.2f / %.2f", r->floor.min,
            r->floor.med, r->floor.max);
        ROW("floor µs per node", "%.1f", r->floor.med * 1e3 / r->n);
        ROW("floor µs per added node", "%.1f", marginal(rows, i, f_floor_us));
        ROW("floor syscalls / instructions per node", "%.1f / %.1fk", (double) r->floor_sys / r->n,
            (double) r->floor_ir / r->n / 1e3);
        ROW("**baseline** setfacl ×2N, ms min / med / max", "%.0f / %.0f / %.0f", r->base.min,
            r->base.med, r->base.max);
        ROW("baseline µs per node / syscalls per node", "%.0f / %ld", r->base.med * 1e3 / r->n,
            r->base_sys);
        ROW("**pam / floor**: wall / syscalls / instructions", "%.1f× / %.1f× / %.1f×",
            ratio(r->pam.med, r->floor.med), ratio((double) r->pam_sys, (double) r->floor_sys),
            ratio((double) r->pam_ir, (double) r->floor_ir));
        ROW("**baseline / pam**: wall", "%.0f×", ratio(r->base.med, r->pam.med));
        ROW("**helper** `apply` (spawn to exit), ms min / med / max", "%.2f / %.2f / %.2f",
            r->helper.min, r->helper.med, r->helper.max);
        ROW("helper syscalls / instructions", "%ld / %.2fM", r->helper_sys, r->helper_ir / 1e6);
        ROW("helper max RSS, MiB", "%.1f", r->helper_rss / 1024.0);
        ROW("helper µs / instructions per node already held (Δ)", "%.1f / %.0fk",
            i ? marginal(rows, i, f_helper_us) : 0.0,
            i ? marginal(rows, i, f_helper_ir) / 1e3 : 0.0);
#undef ROW
        for (i = 0; i < n_rows; i++)
                fail = fail || rows[i].forks || rows[i].execs || rows[i].pids ||
                        !rows[i].handover_ok;
        if (n_rows > 1) {
                const struct row *a = &rows[0], *b = &rows[n_rows - 1];
                printf("\nGrowth N=%u → N=%u, per-node cost at N=%u ÷ per-node cost at N=%u (1.0 = linear; the fixed "
                       "per-session cost makes small N look dear): pam wall %.2f, pam instructions %.2f, pam syscalls "
                       "%.2f; floor wall %.2f; baseline wall %.2f. Instructions per added node, pam: ",
                       a->n, b->n, b->n, a->n, ratio(b->pam.med / b->n, a->pam.med / a->n),
                       ratio((double) b->pam_ir / b->n, (double) a->pam_ir / a->n),
                       ratio((double) b->pam_sys / b->n, (double) a->pam_sys / a->n),
                       ratio(b->floor.med / b->n, a->floor.med / a->n),
                       ratio(b->base.med / b->n, a->base.med / a->n));
                for (i = 1; i < n_rows; i++)
                        printf("%s%.0fk (%u→%u)", i > 1 ? ", " : "",
                               marginal(rows, i, f_pam_ir) / 1e3, rows[i - 1].n, rows[i].n);
                printf("; a flat series is linear, a rising one is superlinear.\n");
        }
        printf("\nNo fork or exec inside pam_open_session/pam_close_session: %s.\n",
               fail ? "**FAILED** (see the table)" : "checked, none (strace -f between markers)");
        return !fail;
}

int main(int argc, char **argv) {
        static const unsigned sizes[] = { 8, 64, 512, 4096 };
        struct row rows[4] = { 0 };
        size_t n_rows = 0;
        uint64_t t_start;

        if (argc >= 4 && strcmp(argv[1], "--pam") == 0) {
                h_vt = 0;
                const char *vt = getenv("XDBENCH_VT");
                h_vt = vt ? atoi(vt) : 0;
                return child_pam((unsigned) atoi(argv[2]), atoi(argv[3]),
                                 argc > 4 && atoi(argv[4]));
        }
        if (argc >= 4 && strcmp(argv[1], "--floor") == 0)
                return child_floor((unsigned) atoi(argv[2]), atoi(argv[3]));
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--quick") == 0)
                        quick = true;
                else if (strcmp(argv[i], "--locks") == 0)
                        locks_only = true;
                else if (strcmp(argv[i], "--switch") == 0)
                        switch_only = true;
                else if (strtoul(argv[i], NULL, 10) > 0 && n_rows < 4)
                        rows[n_rows++].n = (unsigned) strtoul(argv[i], NULL, 10);
                else {
                        fprintf(stderr, "usage: xdbench [--quick] [--locks] [--switch] [N...]\n");
                        return 2;
                }
        }
        if (n_rows == 0)
                for (; n_rows < 4; n_rows++)
                        rows[n_rows].n = sizes[n_rows];

        ssize_t l = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        if (l <= 0)
                die("/proc/self/exe");
        self_exe[l] = '\0';
        helper_path = getenv("XDEV_HELPER") ? getenv("XDEV_HELPER") : "../xdevices/xdevices";
        if (access("/usr/bin/strace", X_OK) || access("/usr/bin/valgrind", X_OK) ||
            access("/usr/bin/setfacl", X_OK)) {
                fprintf(stderr,
                        "xdbench: needs strace, valgrind and setfacl (apt-get install strace valgrind acl)\n");
                return 77;
        }
        t_start = now_ns();
        if (geteuid() != 0) {
                fprintf(stderr, "xdbench: not root: skipping\n");
                return 77;
        }
        /* The test lock: wait for a running test, but not forever (a stuck
         * one would block the benchmark); see h_init(). */
        (void) setenv("H_LOCK_WAIT",
                      getenv("XDBENCH_LOCK_WAIT") ? getenv("XDBENCH_LOCK_WAIT") : "90", 1);
        h_init();
        t_start = now_ns();
        char vt_s[16];
        (void) snprintf(vt_s, sizeof vt_s, "%d", h_vt);
        (void) setenv("XDBENCH_VT", vt_s, 1);

        if (switch_only) {
                measure_switch_steps();
                return 0;
        }
        if (locks_only) {
                printf("## pam_xdevices benchmark: the state lock\n\n");
                print_machine();
                print_locks();
                return 0;
        }
        for (size_t i = 0; i < n_rows; i++) {
                fprintf(stderr, "xdbench: N=%u ...\n", rows[i].n);
                measure_pam(&rows[i], runs_for(rows[i].n, false));
                measure_floor(&rows[i], runs_for(rows[i].n, false));
                measure_baseline(&rows[i], runs_for(rows[i].n, true));
                measure_helper(&rows[i], runs_for(rows[i].n, false));
                measure_handover(&rows[i], quick ? 10 : rows[i].n <= 512 ? HANDOVER_RUNS : 20);
        }
        printf("## pam_xdevices benchmark\n\n");
        print_machine();
        bool clean = print_table(rows, n_rows);
        print_locks();
        printf("\nNodes: N input nodes 13:64.. mknod'd on tmpfs /dev in a private mount namespace, root:input 0660, "
               "granted rw by ACL to one user; pam also grants the login VT (+1 node). Wall times are CLOCK_MONOTONIC; "
               "pam = pam_open_session + pam_close_session (module loaded, config %s); floor = openat(O_PATH|O_NOFOLLOW) "
               "+ fstat + acl_set_file(/proc/self/fd/N) + close per node, grant then restore; baseline = one "
               "`setfacl -m` then one `setfacl -x` process per node; helper = posix_spawn to exit of `xdevices apply` "
               "for one new node while a live session holds the N nodes. Syscalls: strace -f between markers; "
               "instructions: callgrind (--toggle-collect on the measured function; helper: whole process).\n",
               "devices=glob");
        printf("\n## switch step (xdevicesd, %d nodes)\n\n", STEP_NODES);
        measure_switch_steps();
        printf("\nswitch-step: xdevicesd's step (xdev_follow_update) for a switch away from alice, median of %d; "
               "median_ms with the daemon's process table, full_sweep_median_ms walking /proc, in the same run; "
               "extra_procs idle processes of a uid with no session; acl_floor = grant + restore of the same "
               "nodes at one ACL write each; holder_* a process of alice's with threads x fds of /dev/null.\n",
               quick ? 7 : STEP_RUNS);
        printf("\nBench time: %.0f s", (now_ns() - t_start) / 1e9);
        if (h_lock_waited > 0)
                printf(" (plus %d s waiting for the test lock)", h_lock_waited);
        printf("\n");
        return clean ? 0 : 1;
}
