/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test harness: a private mount namespace with a tmpfs /dev of mknod'd DRM,
 * input and real VT nodes, a private /run, test users, and PAM sessions run
 * by the real libpam in child processes whose controlling tty is a real VT. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>

#define H_ROOT "/run/xdevtest"
#define H_CONF H_ROOT "/xdevices.conf"
#define H_PAMDIR H_ROOT "/pam.d"
#define H_SERVICE "xdtest"

/* libpam's answer when every module of the stack returned PAM_IGNORE: the
 * test stacks hold only pam_xdevices, so this is how "ignored" shows. */
#include <security/_pam_types.h>
#define H_IGNORED PAM_PERM_DENIED

#define H_UID_ALICE 61001
#define H_UID_BOB 61002
#define H_UID_CAROL 61003

/* The shared nodes every fresh /dev has. */
extern const char *const h_shared_nodes[];
extern const size_t h_n_shared_nodes;

/* Exits 77 unless root; then enters the namespace and makes the fixtures.
 * Returns the first of H_N_VTS consecutive VTs that nobody uses. */
#define H_N_VTS 4
int h_init(void);
extern int h_vt;          /* first test VT */
extern int h_lock_waited; /* seconds h_init waited for the test lock (H_LOCK_WAIT) */

/* The two setups of runner.h's H_HARNESS. h_init_root: h_init. h_init_userns,
 * as any user: an unprivileged user and mount namespace in which this user
 * is root, with a private /run (H_ROOT, the test users, the PAM service
 * files), a tmpfs /dev with only null, zero, urandom and tty (no mknod
 * there) and a syslog at /dev/log; no VT: a session child has no
 * controlling tty, h_vt names a VT that is not there. Returns 0, or 77 when
 * user namespaces are not allowed. */
int h_init_root(void);
int h_init_userns(void);
/* Whether the tests run in h_init_userns's namespace. */
bool h_in_userns(void);
#define H_HARNESS (&(const struct h_setup) { h_init_root, h_init_userns })

/* The setup of runner.h's H_HARNESS_FAULT, as root only: h_init, then
 * h_use_fault_build, whose helper it keeps in h_fault_helper. */
int h_init_fault_build(void);
extern const char *h_fault_helper;
#define H_HARNESS_FAULT (&(const struct h_setup) { h_init_fault_build, NULL })

/* For tests of the fault-point build: the module (XDEV_TEST_MODULE) goes
 * into the service files h_fresh writes; returns the fault-point helper
 * (XDEV_TEST_HELPER). Exits 99 if either is not set. */
const char *h_use_fault_build(void);

/* Recreates /dev nodes, empties /run/xdevices, writes CONF (NULL: the
 * default test config) and the PAM service file with module ARGS. */
void h_fresh(const char *conf, const char *args);
void h_write_file(const char *path, const char *content, mode_t mode, uid_t uid);
void h_set_active_vt(int vt);
/* Writes CONTENT (NULL: the tests' default, "UID_MIN 1000") into the
 * login.defs the harness binds over /etc/login.defs, H_ROOT/login.defs,
 * mode 0644 (h_fresh puts the default back). False when the machine has no /etc/login.defs to bind
 * over: the core then reads none. */
bool h_set_login_defs(const char *content);
/* With ON, binds a symbolic link to that login.defs over /etc/login.defs,
 * as NixOS's /etc has it (the core refuses a link); without, takes it off
 * (h_fresh does). False, doing nothing, as h_set_login_defs. */
bool h_set_login_defs_link(bool on);

/* What was written to the (test) uevent file of a shared NODE since the
 * last h_fresh (xdevicesd announcing it again writes "change"). Free it. */
char *h_uevent_of(const char *node);

/* "uid gid mode acl-text" of a node (lstat; never follows links). */
char *h_node_describe(const char *path);
/* The permissions UID has through a named ACL entry: "rw", "r", "" or NULL
 * on error. */
const char *h_acl_of(const char *path, uid_t uid);

struct h_session {
        pid_t pid;
        int to_child, from_child;
        int open_ret; /* -1: the child died in open_session (only with a fault) */
        bool faulty;  /* opened with h_opts.fault */
        char xdg_vtnr[32];
        char xdg_seat[32];
        char xdg_runtime_dir[64]; /* "-": not set */
};

struct h_opts {
        const char *tty; /* PAM_TTY; default "ttyVT" */
        const char *rhost;
        const char *ruser;
        bool no_ctty;        /* do not make the VT the controlling tty */
        bool not_leader;     /* run PAM in a child of the session leader, as
                                * su or sudo started from a shell would */
        bool detach;         /* after open_session, as util-linux login: the
                                * leader gives up the VT and a child takes it
                                * as the tty of a session of its own */
        int detach_stop;     /* with detach: where that stops itself (SIGSTOP)
                                * until h_session_go (H_DETACH_AT_*; 0: nowhere) */
        const char *service; /* default H_SERVICE */
        const char **env;    /* NULL-terminated "K=V" put with pam_putenv before open */
        const char *fault;   /* XDEV_FAULT while open_session runs (the fault-point
                                * module): the child may die or stop there */
};

/* The session child: one process per login, its controlling tty the VT,
 * running the real libpam. It is SIGKILLed, stopped and closed with faults
 * by the tests; writes into its pipe after it died fail with EPIPE (h_init
 * ignores SIGPIPE), which these functions read as its death. */

/* Where a detached session (h_opts.detach) stops, as util-linux login's
 * fork_session() passes there: the leader gave up the VT and has not forked;
 * the child is forked and still in the leader's session; the child leads a
 * session of its own that has no controlling tty yet. */
enum { H_DETACH_AT_NOTTY = 1, H_DETACH_AT_FORK, H_DETACH_AT_SETSID };

/* Starts a session for USER on VT; returns after open_session returned. */
struct h_session *h_session_open(const char *user, int vt, const struct h_opts *opts);
/* The two halves of h_session_open: start forks the child and returns at
 * once (a ":stop" fault leaves it stopped at its point); opened reads
 * open_session's result into S->open_ret and returns it: -1 when the child
 * died in open_session, which only a session started with a fault may do
 * (otherwise the test program exits 99). */
struct h_session *h_session_start(const char *user, int vt, const struct h_opts *opts);
int h_session_opened(struct h_session *s);
/* Runs close_session in the child; returns its PAM code (-1: it died). */
int h_session_close(struct h_session *s);
/* Runs close_session with XDEV_FAULT=FAULT (NULL: none), or only reaps the
 * child if it is already dead; frees S and returns the child's wait status
 * (exit 0: closed; 10+code: close_session failed; 94: fds left open). */
int h_session_close_status(struct h_session *s, const char *fault);
/* h_session_close in two halves: BEGIN asks the child to close and returns
 * at once; RUNNING tells whether it is still at it; END waits for it and
 * returns what h_session_close does. */
void h_session_close_begin(struct h_session *s);
bool h_session_running(struct h_session *s);
int h_session_close_end(struct h_session *s);
/* Forks a holder: it runs SETUP(DATA) as root (a non-zero result is its
 * exit code), ignores SIGTERM with IGNORE_TERM, becomes UID (every id, no
 * supplementary groups; 0: stays root) and waits to be killed. Returns its
 * pid once it is ready, or -1 when it could not be set up (then reaped). */
pid_t h_holder_spawn(int (*setup)(void *data), void *data, uid_t uid, bool ignore_term);
/* As h_holder_spawn, but once it is UID and ready the holder runs
 * RUN(DATA) (NULL: it pauses), which does not return, instead of only
 * waiting: a display server's loop, children of its own. */
pid_t h_holder_spawn_run(int (*setup)(void *data), void (*run)(void *data), void *data, uid_t uid,
                         bool ignore_term);
/* Sends LEN bytes of DATA over the unix socket SOCK with the file FD
 * attached (SCM_RIGHTS). Returns what sendmsg does. */
ssize_t h_send_file(int sock, const void *data, size_t len, int fd);
/* A holder (h_holder_spawn) named COMM (prctl PR_SET_NAME) that runs as
 * UID: a logind to the module when COMM is one's name and UID is 0. Kill
 * and reap it as any holder. */
pid_t h_fake_logind_start(const char *comm, uid_t uid);
/* Whether a root process named systemd-logind, elogind or elogind-daemon
 * runs on this machine (the test's pid namespace is the host's). */
bool h_host_runs_logind(void);
/* Writes /run/systemd/seats/seat0 (the namespace's private /run) as a
 * logind leaves it; h_seats_remove takes the directory away again. */
void h_seats_make(void);
void h_seats_remove(void);
/* A holder (h_holder_spawn) that opens PATH N times (NULL: nothing). */
pid_t h_holder_start(const char *path, int n, uid_t uid, bool ignore_term);
/* A process that opened PATH as UID, then left UID the way a user with a
 * subordinate uid range can (useradd gives one; rootless podman needs
 * it): a user namespace of its own, one uid of the range mapped in (root
 * writes the map here, as newuidmap would), setresuid to it. None of its
 * uids is UID; its kernel uid is SUBUID. Killed when the caller dies. */
pid_t h_holder_start_subuid(const char *path, uid_t uid, uid_t subuid);
/* As h_holder_start_subuid, but the holder runs SETUP(DATA) as root first
 * (non-zero: it failed, at WHAT) instead of opening a path. */
pid_t h_holder_spawn_subuid(int (*setup)(void *data), void *data, const char *what, uid_t uid,
                            uid_t subuid);
/* A process of UID with FDS fds of /dev/null (a browser, a build, a
 * database: more than the scan budget), and with PATH (NULL: none) opened
 * after them, so that a scan stopped by the budget has not seen it. A
 * shell, so that it runs outside valgrind (which caps the fds of the
 * programs it runs). Kill and reap it. */
pid_t h_fat_start(uid_t uid, unsigned fds, const char *path);
/* Whether PID, a child of this process, ends within MS milliseconds (its
 * wait status then in *STATUS, may be NULL); if not, it is SIGKILLed and
 * reaped. Either way it is reaped when this returns. */
bool h_wait_exit(pid_t pid, int ms, int *status);
/* N processes of UID that hold nothing and wait (a build, a browser's
 * many processes), their pids in PIDS (N of them), each in the process
 * group of the first, PIDS[0], which is this process's child: kill them
 * all with h_crowd_stop. Returns 0, or -1 when they could not start. */
int h_crowd_start(uid_t uid, size_t n, pid_t *pids);
/* How many of the N processes of PIDS are alive, then ends them all. */
size_t h_crowd_stop(const pid_t *pids, size_t n);
/* A setup for a holder (h_holder_spawn and the like): a ring of the
 * holder's, mapped as liburing maps it (its SQ ring, at file offset 0),
 * holding PATH as its one registered file. With DROP_FD
 * its fd is registered in the ring itself (IORING_REGISTER_RING_FDS, Linux
 * 5.18) and closed: the holder can go on submitting by index, and only
 * PID/maps shows the ring ("anon_inode:[io_uring]"). */
struct h_ring_arg {
        const char *path;
        bool drop_fd;
};
/* Returns 0, or non-zero when io_uring (or, with DROP_FD, a registered
 * ring fd) is unavailable. */
int h_map_a_ring(void *data);
/* A setup for a holder: a ring of the holder's with PATH as its one
 * registered file and N writes of one NUL byte to it queued, one each MS
 * ms (a timeout hard-linked before each); then the ring's fd registered
 * in the ring and closed, and its mappings unmapped. The writes go on, and
 * nothing in /proc names the ring or PATH: no fd, no mapping. */
/* What the core logged through H_LOG_CAPTURE (an xdev_log_fn), one line
 * each; a test empties it first. */
extern char h_logbuf[16384];
void h_log_capture(void *userdata, int priority, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));

struct h_hidden_arg {
        const char *path;
        unsigned n, ms;
        /* > 0: a pipe's read end; each write waits for a byte of it
         * instead of MS */
        int cue;
        bool keep_path; /* an O_PATH fd of PATH kept open: no hold */
        bool keep_map;  /* the ring's mappings kept (its fd still closed) */
};
/* Returns 0, or non-zero when io_uring or a registered ring fd (Linux
 * 5.18) is unavailable. */
int h_hide_a_ring(void *data);
/* SIGKILLs the session's leader and reaps it. */
void h_session_kill(struct h_session *s);
/* The leader exits without closing its session and is not waited for: it
 * stays a zombie until h_session_reap. */
void h_session_exit(struct h_session *s);
void h_session_reap(struct h_session *s);
/* With h_opts.detach: ends the child that holds the VT (the user's shell
 * exiting); the leader stays and waits for h_session_close. */
void h_session_end_child(struct h_session *s);
/* With h_opts.detach_stop: waits (bounded) until the leader or its child
 * stopped where it was told to and returns that process's pid. */
pid_t h_session_stopped(struct h_session *s);
/* Lets the process h_session_stopped returned go on. */
void h_session_go(pid_t stopped);

/* Runs the helper binary with ARGV (NULL-terminated) and ENV; returns its
 * exit status; its stderr goes to *RET_ERR (malloc'd) when not NULL. */
int h_run_helper(const char *const *argv, const char *const *env, char **ret_err);

/* A syslog socket at /dev/log inside the namespace (made again by every
 * h_fresh), so tests can read what the module logged. h_log_take returns
 * everything logged since the last call (malloc'd, never NULL). */
char *h_log_take(void);

/* What the module said to the user through the PAM conversation since the
 * last call (or h_fresh): "info: TEXT\n" and "error: TEXT\n" lines,
 * malloc'd, never NULL. */
char *h_conv_take(void);

/* The first free VT by VT_OPENQRY on /dev/tty0, as a user of the machine
 * would find it; -1 when none. */
int h_vt_openqry(void);
/* In a new session (setsid), opens /dev/ttyVT and makes it the controlling
 * tty (STEAL: from another session too; root may). Returns the fd, which
 * the caller keeps open (the last close clears the controlling tty), or -1
 * with errno set. */
int h_vt_lead(int vt, bool steal);
/* Whether no process uses VT: h_vt_lead() succeeds on it, in a child. */
bool h_vt_is_free(int vt);

/* What tests compare before and after: every shared node, /dev/tty0 and
 * the test VTs, each as h_node_describe gives it. */
#define H_SNAP_MAX 16
struct h_snap {
        size_t n;
        const char *path[H_SNAP_MAX];
        char *desc[H_SNAP_MAX];
};
void h_snap_take(struct h_snap *s);
/* NULL when every node is as in S, else a malloc'd "WHEN: PATH was ..., is
 * ..." naming the first node that differs. */
char *h_snap_diff(const struct h_snap *s, const char *when);
void h_snap_free(struct h_snap *s);
#ifdef ck_assert_msg
#define h_snap_assert_equal(s, when) \
        do { \
                char *h_diff_ = h_snap_diff((s), (when)); \
                ck_assert_msg(h_diff_ == NULL, "%s", h_diff_ ? h_diff_ : ""); \
        } while (0)
#endif

/* "/dev/ttyN" of the I-th test VT (h_vt + I). */
const char *h_vt_path(int i);

/* Counts the fds open in this process. */
int h_count_fds(void);
