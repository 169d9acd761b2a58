/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A table of processes by uid, kept from the proc connector's events. See
 * proctab.h and doc/DESIGN.md §3.5.3. */
#include "config.h"

#include "proctab.h"
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define RCVBUF_DEFAULT (4u << 20)
#define SELF_TEST_MS 10000     /* the start-up test's bound, whatever the load */
#define SELF_TEST_IDLE_MS 1000 /* no event for this long: none come */
#define SELF_TEST_PAST_NS 50000000u
#define CAP_SETUID_BIT 7
#define KTHREADD_PID 2

enum {
        E_USED = 1u << 0,
        E_KERNEL = 1u << 1,   /* a kernel thread: never listed */
        E_SETID = 1u << 2,    /* CAP_SETUID permitted: may take any fsuid silently */
        E_EXITING = 1u << 3,  /* its leader exited: gone, or a zombie with threads */
        E_UNREAD = 1u << 5,   /* its status could not be parsed: listed for every uid */
        E_MIXED = 1u << 6,    /* may have a child of other uids: its children are read */
        E_TOMBSTONE = 1u << 4 /* a removed slot (open addressing) */
};

struct entry {
        pid_t pid;
        pid_t ppid; /* its parent's tgid, as last known */
        unsigned flags;
        unsigned children; /* forks filed under it (at least: an estimate) */
        uid_t uid[4];      /* real, effective, saved, fs */
        uint64_t read_ns;  /* CLOCK_MONOTONIC before its status was read, 0: copied */
};

struct xdev_proctab {
        int sock;
        int procfd;
        const struct xdev_log *log;
        struct entry *slots;
        size_t cap;  /* a power of two */
        size_t used; /* slots in use or tombstoned */
        size_t live;
        bool fsuid_events; /* setfsuid() sends an event (self_test) */
        bool filtered;     /* the kernel took the event filter (self_test) */
        struct xdev_proctab_stats stats;
};

/* --- the hash table: open addressing on the pid --------------------------- */

static size_t slot_of(const struct xdev_proctab *t, pid_t pid) {
        return ((size_t) (uint32_t) pid * 2654435761u) & (t->cap - 1);
}

static struct entry *find(struct xdev_proctab *t, pid_t pid) {
        for (size_t i = slot_of(t, pid), k = 0; k < t->cap; i = (i + 1) & (t->cap - 1), k++) {
                struct entry *e = &t->slots[i];
                if (!(e->flags & (E_USED | E_TOMBSTONE)))
                        return NULL;
                if ((e->flags & E_USED) && e->pid == pid)
                        return e;
        }
        return NULL;
}

static int grow(struct xdev_proctab *t, size_t cap) {
        struct entry *old = t->slots, *nw = calloc(cap, sizeof *nw);
        size_t old_cap = t->cap;

        if (!nw)
                return -ENOMEM;
        t->slots = nw;
        t->cap = cap;
        t->used = t->live = 0;
        for (size_t i = 0; i < old_cap; i++)
                if (old[i].flags & E_USED) {
                        size_t j = slot_of(t, old[i].pid);
                        while (t->slots[j].flags & E_USED)
                                j = (j + 1) & (t->cap - 1);
                        t->slots[j] = old[i];
                        t->used++;
                        t->live++;
                }
        free(old);
        return 0;
}

/* The entry of PID, made when absent (flags 0 but E_USED). NULL: no memory. */
static struct entry *upsert(struct xdev_proctab *t, pid_t pid) {
        struct entry *e = find(t, pid), *tomb = NULL;

        if (e)
                return e;
        if ((t->used + 1) * 4 > t->cap * 3 &&
            grow(t, t->live * 4 > t->cap ? t->cap * 2 : t->cap) < 0)
                return NULL;
        for (size_t i = slot_of(t, pid);; i = (i + 1) & (t->cap - 1)) {
                e = &t->slots[i];
                if (e->flags & E_TOMBSTONE) {
                        if (!tomb)
                                tomb = e;
                        continue;
                }
                if (!(e->flags & E_USED))
                        break;
        }
        if (tomb)
                e = tomb;
        else
                t->used++;
        *e = (struct entry) { .pid = pid, .flags = E_USED };
        t->live++;
        return e;
}

static void drop(struct xdev_proctab *t, struct entry *e) {
        e->flags = E_TOMBSTONE;
        t->live--;
}

/* --- reading a process ---------------------------------------------------- */

/* The clock of the events' timestamps (ktime_get_ns). */
static uint64_t now_ns(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* Fills E's uids and flags from /proc/PID/status. -ESRCH: gone. */
static int read_proc(struct xdev_proctab *t, struct entry *e) {
        struct xdev_proc_status st;
        int r;

        e->read_ns = now_ns();
        r = xdev_proc_status_read(t->procfd, e->pid, &st);
        if (r == -ESRCH)
                return r;
        if (r < 0 || !st.has_ppid || !st.has_cap_prm) {
                e->flags |= E_UNREAD; /* unknown uids: the sweep reads it */
                return -EIO;
        }
        e->flags &= ~(E_KERNEL | E_SETID | E_UNREAD);
        e->ppid = st.ppid;
        /* kthreadd's children are kernel threads; pid 2 itself */
        if (e->pid == KTHREADD_PID || st.ppid == KTHREADD_PID)
                e->flags |= E_KERNEL;
        else if (st.cap_prm & (1ull << CAP_SETUID_BIT))
                e->flags |= E_SETID;
        for (int i = 0; i < 4; i++)
                e->uid[i] = st.uid[i];
        return 0;
}

static bool uids_differ(const struct entry *a, const struct entry *b) {
        return memcmp(a->uid, b->uid, sizeof a->uid) != 0;
}

/* A fork names the creator's parent, not the creator, under CLONE_PARENT
 * (and an orphan's new parent is init or a subreaper): the child has the
 * creator's uids, which are its named parent's only when every child of
 * that parent has the parent's uids. A parent with a child of other uids
 * is marked, and the children it is named for are read, not copied. */
static void mixed_note(struct xdev_proctab *t, const struct entry *e) {
        struct entry *parent = e->ppid > 0 ? find(t, e->ppid) : NULL;
        if (parent && (uids_differ(parent, e) || (e->flags & (E_MIXED | E_UNREAD))))
                parent->flags |= E_MIXED;
}

/* Reads PID again, after its exec or its change of uids (which its parent
 * then may not share), or to seed the table. */
static void reread(struct xdev_proctab *t, pid_t pid) {
        struct entry *e = find(t, pid), before = { 0 }, *parent;
        bool known = e && !(e->flags & E_UNREAD);

        if (e)
                before = *e;
        else if (!(e = upsert(t, pid)))
                return;
        if (read_proc(t, e) == -ESRCH) {
                /* gone before it was read, at a change of uids or an exec
                 * (of a set-user-ID program, or of one that changed uids
                 * after: its later events find no entry): a child it made
                 * meanwhile under CLONE_PARENT names its parent, whose
                 * children are read */
                if (before.ppid > 0 && (parent = find(t, before.ppid)))
                        parent->flags |= E_MIXED;
                drop(t, e);
                return;
        }
        /* its children forked before the change keep its old uids */
        if (known && before.children > 0 && uids_differ(&before, e))
                e->flags |= E_MIXED;
        mixed_note(t, e);
}

/* Its leader exited: its children went to init or a subreaper, whose
 * uids may not be theirs. Read them again (their new parent is known by
 * now: the kernel reparents before it sends the exit). */
static void orphans_note(struct xdev_proctab *t, pid_t pid) {
        for (size_t i = 0; i < t->cap; i++) {
                struct entry *e = &t->slots[i];
                if (!(e->flags & E_USED) || e->ppid != pid || (e->flags & E_EXITING))
                        continue;
                if (read_proc(t, e) == -ESRCH) {
                        drop(t, e);
                        continue;
                }
                struct entry *parent = e->ppid > 0 ? find(t, e->ppid) : NULL;
                if (parent)
                        parent->children++;
                mixed_note(t, e);
        }
}

/* Empties the table and reads every process of /proc. */
static int seed(struct xdev_proctab *t) {
        uint64_t num;
        DIR *d;
        int r;

        for (size_t i = 0; i < t->cap; i++)
                t->slots[i].flags = 0;
        t->used = t->live = 0;
        r = xdev_numdir_open(t->procfd, ".", &d);
        if (r < 0)
                return r;
        while (xdev_numdir_next(d, &num, NULL))
                if (num != 0)
                        reread(t, (pid_t) num);
        (void) closedir(d);
        /* a parent read after its child is marked here */
        for (size_t i = 0; i < t->cap; i++) {
                struct entry *e = &t->slots[i], *parent;
                if (!(e->flags & E_USED) || e->ppid <= 0 || !(parent = find(t, e->ppid)))
                        continue;
                parent->children++;
                mixed_note(t, e);
        }
        return 0;
}

/* --- the connector -------------------------------------------------------- */

/* The subscription with an event filter (Linux 6.6, struct proc_input of
 * its linux/cn_proc.h, not in older headers): an older kernel ignores a
 * message of this length and keeps the plain subscription. */
struct mcast_filtered {
        uint32_t op;     /* enum proc_cn_mcast_op */
        uint32_t events; /* enum proc_cn_event: a mask of PROC_EVENT_* */
};

/* The events the table uses: a PR_SET_NAME loop (PROC_EVENT_COMM) or a
 * ptrace then wakes the daemon no more. */
#define EVENTS_USED (PROC_EVENT_FORK | PROC_EVENT_EXEC | PROC_EVENT_UID | PROC_EVENT_EXIT)

static int mcast_send(int sock, const void *data, size_t len) {
        /* nlmsghdr, cn_msg (whose data[] is DATA): one buffer */
        char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(struct mcast_filtered))]
                __attribute__((aligned(8)));
        struct nlmsghdr *nl = (struct nlmsghdr *) buf;
        struct cn_msg *cn = NLMSG_DATA(nl);

        memset(buf, 0, sizeof buf);
        nl->nlmsg_len = NLMSG_LENGTH(sizeof *cn + len);
        nl->nlmsg_type = NLMSG_DONE;
        cn->id.idx = CN_IDX_PROC;
        cn->id.val = CN_VAL_PROC;
        cn->len = (uint16_t) len;
        memcpy(cn->data, data, len);
        return send(sock, buf, nl->nlmsg_len, 0) == (ssize_t) nl->nlmsg_len ? 0 : -errno;
}

static int mcast(int sock, enum proc_cn_mcast_op op) {
        uint32_t v = (uint32_t) op;
        return mcast_send(sock, &v, sizeof v);
}

/* Subscribes to every event, then narrows it to the events used where the
 * kernel can (a second LISTEN only replaces the filter). */
static int mcast_listen(int sock) {
        struct mcast_filtered f = { .op = PROC_CN_MCAST_LISTEN, .events = EVENTS_USED };
        int r = mcast(sock, PROC_CN_MCAST_LISTEN);
        if (r == 0)
                (void) mcast_send(sock, &f, sizeof f);
        return r;
}

/* Whether a child of PARENT forked at WHEN has PARENT's uids as the table
 * has them: forked by its leader (a thread may have uids of its own), not
 * under CLONE_PARENT by a child of other uids (E_MIXED), and PARENT read
 * before the fork (its uids may be newer than the child's). */
static bool fork_may_copy(const struct entry *parent, pid_t by, uint64_t when) {
        return parent && by == parent->pid &&
                !(parent->flags & (E_EXITING | E_KERNEL | E_MIXED | E_UNREAD)) &&
                parent->read_ns <= when;
}

static void fork_apply(struct xdev_proctab *t, const struct fork_proc_event *f, uint64_t when) {
        struct entry *e, *parent;

        /* a thread is its group's: only a new group is a process */
        if (f->child_pid != f->child_tgid)
                return;
        e = find(t, f->child_tgid);
        if (e && !(e->flags & E_EXITING) && e->read_ns > when)
                return; /* read after the fork (the seed): newer than a copy */
        e = upsert(t, f->child_tgid);
        if (!e)
                return;
        parent = find(t, f->parent_tgid);
        if (parent)
                parent->children++;
        if (f->parent_tgid == KTHREADD_PID) {
                *e = (struct entry) { .pid = e->pid, .flags = E_USED | E_KERNEL };
        } else if (fork_may_copy(parent, f->parent_pid, when)) {
                /* the child has its parent's credentials of that moment; a
                 * change after it comes as an event */
                *e = (struct entry) { .pid = e->pid,
                                      .ppid = parent->pid,
                                      .flags = E_USED | (parent->flags & E_SETID) };
                memcpy(e->uid, parent->uid, sizeof e->uid);
        } else {
                *e = (struct entry) { .pid = e->pid, .ppid = f->parent_tgid, .flags = E_USED };
                t->stats.fork_reads++;
                if (read_proc(t, e) == -ESRCH)
                        drop(t, e);
                else
                        mixed_note(t, e);
        }
}

/* A thread that changed its uids alone (the raw syscall, not glibc's
 * change of every thread) forks children of its uids, whose named parent
 * is its group's, or under CLONE_PARENT its group's parent. */
static void thread_uid_note(struct xdev_proctab *t, const struct proc_event *ev) {
        struct entry *e = find(t, ev->event_data.id.process_tgid), *parent;
        if (!e || ev->event_data.id.process_pid == ev->event_data.id.process_tgid)
                return;
        if (ev->event_data.id.r.ruid == e->uid[0] && ev->event_data.id.e.euid == e->uid[1])
                return;
        e->flags |= E_MIXED;
        parent = e->ppid > 0 ? find(t, e->ppid) : NULL;
        if (parent)
                parent->flags |= E_MIXED;
}

static void exit_apply(struct xdev_proctab *t, pid_t pid) {
        struct entry *e = find(t, pid), *parent;
        if (!e)
                return;
        /* its other threads may live on: checked when listed */
        e->flags |= E_EXITING;
        parent = e->ppid > 0 ? find(t, e->ppid) : NULL;
        if (parent && parent->children > 0)
                parent->children--;
        if (e->children > 0)
                orphans_note(t, pid);
}

static void apply(struct xdev_proctab *t, const struct proc_event *ev) {
        if (ev->what != PROC_EVENT_FORK && ev->what != PROC_EVENT_EXEC &&
            ev->what != PROC_EVENT_UID && ev->what != PROC_EVENT_EXIT)
                t->stats.unused++;
        switch (ev->what) {
        case PROC_EVENT_FORK:
                fork_apply(t, &ev->event_data.fork, ev->timestamp_ns);
                break;
        case PROC_EVENT_EXEC:
                reread(t, ev->event_data.exec.process_tgid);
                break;
        case PROC_EVENT_UID:
                reread(t, ev->event_data.id.process_tgid);
                thread_uid_note(t, ev);
                break;
        case PROC_EVENT_EXIT:
                if (ev->event_data.exit.process_pid == ev->event_data.exit.process_tgid)
                        exit_apply(t, ev->event_data.exit.process_tgid);
                break;
        default:
                break;
        }
}

#define BATCH 64
#define MSG_MAX 256 /* one event: nlmsghdr + cn_msg + proc_event, 76 bytes */

/* Applies the events of one datagram. */
static int apply_msg(struct xdev_proctab *t, const char *buf, size_t len) {
        int events = 0;
        for (const struct nlmsghdr *h = (const struct nlmsghdr *) buf; NLMSG_OK(h, len);
             h = NLMSG_NEXT(h, len)) {
                const struct cn_msg *cn = NLMSG_DATA(h);
                if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_NOOP)
                        continue;
                if (h->nlmsg_len < NLMSG_LENGTH(sizeof *cn + sizeof(struct proc_event)) ||
                    cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC)
                        continue;
                /* the event sits at a 4-byte offset; it holds a u64 */
                struct proc_event ev;
                memcpy(&ev, cn->data, sizeof ev);
                apply(t, &ev);
                events++;
        }
        return events;
}

int xdev_proctab_drain(struct xdev_proctab *t) {
        char bufs[BATCH][MSG_MAX] __attribute__((aligned(NLMSG_ALIGNTO)));
        struct mmsghdr msgs[BATCH];
        struct iovec iov[BATCH];
        int events = 0;
        bool lost = false;

        for (;;) {
                for (size_t i = 0; i < BATCH; i++) {
                        iov[i] = (struct iovec) { .iov_base = bufs[i], .iov_len = MSG_MAX };
                        msgs[i] = (struct mmsghdr) { .msg_hdr = { .msg_iov = &iov[i],
                                                                  .msg_iovlen = 1 } };
                }
                int n = recvmmsg(t->sock, msgs, BATCH, MSG_DONTWAIT, NULL);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == ENOBUFS) {
                                lost = true;
                                t->stats.overflow++;
                                continue;
                        }
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                                break;
                        return -errno;
                }
                for (int i = 0; i < n; i++)
                        events += apply_msg(t, bufs[i], msgs[i].msg_len);
                if (n < BATCH)
                        break;
        }
        t->stats.events += (uint64_t) events;
        if (lost) {
                /* what changed while the events were lost is unknown: start
                 * again from /proc (the queue is empty now, and what comes
                 * after the scan's start is applied on top of it) */
                t->stats.reseeds++;
                if (t->log)
                        xdev_log(
                                t->log, LOG_WARNING,
                                "process events were lost (the queue overflowed); the process table is read again from /proc");
                int r = seed(t);
                if (r < 0)
                        return r;
        }
        return events;
}

struct self_test {
        pid_t child;
        bool forked, exited, uid, comm;
        uint64_t reaped_ns; /* when waitpid() returned: its exit event came before */
        bool past;          /* an event from well after that was read */
};

static void self_test_see(struct self_test *st, const char *buf, size_t n) {
        for (const struct nlmsghdr *h = (const struct nlmsghdr *) buf; NLMSG_OK(h, n);
             h = NLMSG_NEXT(h, n)) {
                const struct cn_msg *cn = NLMSG_DATA(h);
                struct proc_event ev;
                if (h->nlmsg_len < NLMSG_LENGTH(sizeof *cn + sizeof ev))
                        continue;
                memcpy(&ev, cn->data, sizeof ev); /* a 4-byte offset: copied */
                if (ev.what == PROC_EVENT_FORK && ev.event_data.fork.child_tgid == st->child)
                        st->forked = true;
                else if (ev.what == PROC_EVENT_UID && ev.event_data.id.process_tgid == st->child)
                        st->uid = true;
                else if (ev.what == PROC_EVENT_COMM && ev.event_data.comm.process_tgid == st->child)
                        st->comm = true;
                else if (ev.what == PROC_EVENT_EXIT && ev.event_data.exit.process_tgid == st->child)
                        st->exited = true;
                /* the queue is in the order the events came, give or take
                 * the moment between an event's time and its queueing */
                if (ev.timestamp_ns > st->reaped_ns + SELF_TEST_PAST_NS)
                        st->past = true;
        }
}

/* Forks a child that changes its fsuid and its name and exits, and reads
 * every event until its exit, however many others come (a boot, a build):
 * the kernel sends none outside the initial pid and user namespaces, and
 * says nothing of it. It gives up when it read an event from well after
 * the child was reaped without having seen the child's (events come, but
 * not of this pid namespace's processes), when none came for
 * SELF_TEST_IDLE_MS, or after SELF_TEST_MS: a load that keeps it from
 * catching up with the queue that long overflows the queue first, which
 * ends the test with success (ENOBUFS, below). Whether setfsuid() sends one
 * (PROC_EVENT_UID; Linux 6.18 does) decides whether a process that may
 * take any fsuid (CAP_SETUID) must be read at every sweep; a name change
 * seen says the kernel did not take the event filter. */
static int self_test(struct xdev_proctab *t) {
        char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
        struct self_test st = { .child = fork() };
        uint64_t end = now_ns() + (uint64_t) SELF_TEST_MS * 1000000u;

        if (st.child < 0)
                return -errno;
        if (st.child == 0) {
                (void) setfsuid(65534);
                (void) prctl(PR_SET_NAME, "xdevicesd-test");
                _exit(0);
        }
        (void) waitpid(st.child, NULL, 0);
        st.reaped_ns = now_ns();
        for (uint64_t now = st.reaped_ns; !st.exited && !st.past && now < end; now = now_ns()) {
                struct pollfd pfd = { .fd = t->sock, .events = POLLIN };
                if (poll(&pfd, 1, SELF_TEST_IDLE_MS) <= 0)
                        break;
                ssize_t n = recv(t->sock, buf, sizeof buf, MSG_DONTWAIT);
                if (n < 0 && errno == ENOBUFS) {
                        /* events come, faster than read: whether setfsuid
                         * sends one is not known, so take it that it does not */
                        t->fsuid_events = false;
                        t->filtered = false;
                        return 0;
                }
                if (n > 0)
                        self_test_see(&st, buf, (size_t) n);
        }
        t->fsuid_events = st.uid;
        t->filtered = !st.comm;
        return st.forked && st.exited ? 0 : -EOPNOTSUPP;
}

/* FORCE passes rmem_max (root). */
static void rcvbuf_set(int sock, size_t bytes) {
        int size = (int) bytes;
        if (setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
                (void) setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

int xdev_proctab_open(struct xdev_proctab **ret, size_t rcvbuf, const struct xdev_log *log) {
        struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
        struct xdev_proctab *t = calloc(1, sizeof *t);
        int r;

        *ret = NULL;
        if (!t)
                return -ENOMEM;
        t->log = log;
        t->sock = t->procfd = -1;
        t->cap = 1024;
        t->slots = calloc(t->cap, sizeof *t->slots);
        if (!t->slots) {
                r = -ENOMEM;
                goto fail;
        }
        t->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        t->sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
        if (t->procfd < 0 || t->sock < 0) {
                r = -errno;
                goto fail;
        }
        rcvbuf_set(t->sock, RCVBUF_DEFAULT);
        if (bind(t->sock, (struct sockaddr *) &addr, sizeof addr) < 0 ||
            (r = mcast_listen(t->sock)) < 0) {
                r = -errno;
                goto fail;
        }
        /* subscribed first, then seeded: nothing falls between the two */
        r = self_test(t);
        if (r < 0)
                goto fail;
        r = seed(t);
        if (r < 0)
                goto fail;
        (void) xdev_proctab_drain(t);
        if (rcvbuf) /* a small queue, for the tests */
                rcvbuf_set(t->sock, rcvbuf);
        *ret = t;
        return 0;
fail:
        xdev_proctab_free(t);
        return r < 0 ? r : -EIO;
}

void xdev_proctab_free(struct xdev_proctab *t) {
        if (!t)
                return;
        if (t->sock >= 0) {
                (void) mcast(t->sock, PROC_CN_MCAST_IGNORE);
                (void) close(t->sock);
        }
        if (t->procfd >= 0)
                (void) close(t->procfd);
        free(t->slots);
        free(t);
}

int xdev_proctab_fd(const struct xdev_proctab *t) {
        return t->sock;
}

static bool may_be(struct xdev_proctab *t, struct entry *e, uid_t uid) {
        bool match;

        if (e->flags & E_KERNEL)
                return false;
        match = ((e->flags & E_SETID) && !t->fsuid_events) || (e->flags & E_UNREAD) ||
                e->uid[0] == uid || e->uid[1] == uid || e->uid[2] == uid || e->uid[3] == uid;
        /* a leader that exited: kept while its pid is taken (a zombie, or
         * a group whose other threads run on, holding their fd table) */
        if ((e->flags & E_EXITING) && kill(e->pid, 0) < 0 && errno == ESRCH) {
                drop(t, e);
                return false;
        }
        return match;
}

int xdev_proctab_pids(struct xdev_proctab *t, uid_t uid, pid_t **ret, size_t *n) {
        pid_t *v;
        size_t k = 0, cap = 64;
        int r;

        *ret = NULL;
        *n = 0;
        r = xdev_proctab_drain(t);
        if (r < 0)
                return r;
        v = malloc(cap * sizeof *v);
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < t->cap; i++) {
                struct entry *e = &t->slots[i];
                if (!(e->flags & E_USED) || !may_be(t, e, uid))
                        continue;
                if (k == cap) {
                        pid_t *nv = realloc(v, cap * 2 * sizeof *v);
                        if (!nv) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = nv;
                        cap *= 2;
                }
                v[k++] = e->pid;
        }
        *ret = v;
        *n = k;
        return 0;
}

void xdev_proctab_stats(const struct xdev_proctab *t, struct xdev_proctab_stats *ret) {
        *ret = t->stats;
        ret->fsuid_events = t->fsuid_events;
        ret->filtered = t->filtered;
        ret->procs = 0;
        for (size_t i = 0; i < t->cap; i++)
                if ((t->slots[i].flags & E_USED) && !(t->slots[i].flags & E_KERNEL))
                        ret->procs++;
}

static int source_pids(void *data, uid_t uid, pid_t **ret, size_t *n) {
        return xdev_proctab_pids(data, uid, ret, n);
}

void xdev_proctab_source(struct xdev_proctab *t, struct xdev_procsrc *ret) {
        *ret = (struct xdev_procsrc) { .pids_of = source_pids, .data = t };
}
