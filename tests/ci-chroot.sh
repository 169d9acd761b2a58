#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make check-ci-chroot: runs .ci/run, as CI does, from a fresh clone of one
# commit in a clean Debian 12 chroot, RUNS times in a row (default 3), each
# time in a new chroot, and stops at the first run that fails.
#
# Each run: mmdebstrap builds a bookworm root (the default variant, no cache,
# nothing of this machine's packages or caches); the commit is cloned into
# it, with ../shared/upstream beside it as CI has it (the Xorg builds'
# sources); .ci/run runs there with an empty environment (PATH, HOME,
# CI=true) under its own mount namespace, so that its mounts end with it,
# and with the host's /dev (the VTs tty2..63 the tests use) and /sys, and
# with this machine's test lock (so that its root tests and
# those of another tree here take turns on the VTs). A policy-rc.d that denies keeps the packages .ci/run installs from
# starting daemons (a second udevd would act on the host's devices), as in
# any chroot. Not in a pid namespace of its own: the kernel's process
# events (the process table, test-proctab) are for the initial one only;
# the processes left in the chroot are killed after the run instead. The
# output of each run is in $CI_CHROOT_LOGS/run-N.log; the
# chroot is removed after the run unless CI_CHROOT_KEEP=1.
#
#   CI_CHROOT_RUNS  how many runs (default 3)
#   CI_CHROOT_REV   the commit to clone (default HEAD of this tree)
#   CI_CHROOT_LOGS  where the logs go (default a new /var/tmp/xdt-ci-chroot.*)
#   CI_CHROOT_MIRROR, CI_CHROOT_SECURITY_MIRROR  Debian mirrors
# Needs root, git and mmdebstrap; exits 77 (skipped) without them.
set -u
export LC_ALL=C.UTF-8

srcdir=$(cd "$(dirname "$0")/.." && pwd)
runs=${CI_CHROOT_RUNS:-3}
rev=$(git -C "$srcdir" rev-parse "${CI_CHROOT_REV:-HEAD}") || exit 1
mirror=${CI_CHROOT_MIRROR:-http://deb.debian.org/debian}
security_mirror=${CI_CHROOT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: check-ci-chroot needs root (mmdebstrap, chroot, mounts)"
	exit 77
fi
for tool in git mmdebstrap unshare chroot; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: check-ci-chroot needs $tool"
		exit 77
	fi
done
case $runs in '' | *[!0-9]* | 0)
	echo "CI_CHROOT_RUNS must be a positive number, not '$runs'" >&2
	exit 2
	;;
esac
lock=/tmp/.pam_xdevices-tests.lock
if [ -L "$lock" ] || ! { [ -f "$lock" ] || (umask 077 && : >"$lock"); }; then
	echo "check-ci-chroot: $lock is not a regular file" >&2
	exit 1
fi
logs=${CI_CHROOT_LOGS:-$(mktemp -d /var/tmp/xdt-ci-chroot.XXXXXX)}
mkdir -p "$logs" || exit 1
summary=$logs/summary

say() { echo "ci-chroot: $*" | tee -a "$summary"; }

# the chroot of the run in progress, removed if this script is stopped
work=
# kill_chroot WORK: every process left in the run's mount namespace
# (named in WORK/mntns), killed
kill_chroot() {
	local p ns
	ns=$(cat "$1/mntns" 2>/dev/null) || return 0
	[ -n "$ns" ] || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	return 0
}
cleanup() {
	[ -z "$work" ] || kill_chroot "$work"
	if [ -n "$work" ] && [ "${CI_CHROOT_KEEP:-0}" != 1 ]; then
		rm -rf --one-file-system "$work"
	fi
}
trap cleanup EXIT
# a signal ends the run in the chroot first (wait returns at once on one);
# unshare --fork blocks SIGTERM and SIGINT while it waits, so it gets
# SIGKILL, and --kill-child takes the run inside with it
child=
trap '[ -z "$child" ] || kill -KILL "$child" 2>/dev/null; wait; exit 130' INT TERM

# One run in its own chroot; returns .ci/run's status.
one_run() { # run number
	local n=$1 root rc t0 t1
	work=$(mktemp -d /var/tmp/xdt-ci-chroot-root.XXXXXX) || return 1
	root=$work/root
	t0=$(date +%s)
	say "run $n/$runs: building a clean bookworm root in $root"
	if ! mmdebstrap --quiet --mode=root bookworm "$root" \
		"deb $mirror bookworm main" \
		"deb $mirror bookworm-updates main" \
		"deb $security_mirror bookworm-security main" \
		>"$logs/run-$n.mmdebstrap.log" 2>&1; then
		say "run $n/$runs: mmdebstrap failed, see $logs/run-$n.mmdebstrap.log"
		rm -rf --one-file-system "$work"
		return 1
	fi
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || :
	# A fresh clone of the one commit, owned by root, in a 0700 directory
	# (as a CI checkout under mktemp -d would be).
	mkdir -m 700 "$root/root/ci"
	if ! git clone -q --no-local --no-checkout "$srcdir" "$root/root/ci/p" ||
		! git -C "$root/root/ci/p" checkout -q --detach "$rev"; then
		say "run $n/$runs: cannot clone $rev"
		rm -rf --one-file-system "$work"
		return 1
	fi
	if [ -d "$srcdir/../shared/upstream" ]; then
		mkdir -p "$root/root/ci/shared" && cp -a "$srcdir/../shared/upstream" "$root/root/ci/shared/"
	fi
	say "run $n/$runs: .ci/run on $rev (clone at /root/ci/p in the chroot)"
	# shellcheck disable=SC2016
	# --kill-child: if this script is stopped, the run in the chroot ends too
	unshare --mount --fork --kill-child=SIGKILL --propagation private -- /bin/sh -ec '
		root=$1 lock=$2
		mount --bind "$root" "$root"
		mount -t proc proc "$root/proc"
		mount --rbind /sys "$root/sys"
		mount --make-rslave "$root/sys"
		mount --rbind /dev "$root/dev"
		mount --make-rslave "$root/dev"
		mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$root/run"
		mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
		# the root tests of every tree on this machine take turns on the
		# VTs through this lock (tests/harness.c): the chroot shares it
		: >"$root/tmp/.pam_xdevices-tests.lock"
		mount --bind "$lock" "$root/tmp/.pam_xdevices-tests.lock"
		readlink /proc/self/ns/mnt >"$3"
		# the root becomes the root of this mount namespace (pivot_root),
		# not a chroot inside it: the kernel refuses a user namespace
		# (unshare(CLONE_NEWUSER): the subordinate-uid holder of the
		# harness) to a process whose root is not the root of its mount
		# namespace
		cd "$root"
		mkdir -p .ci-old-root
		pivot_root . .ci-old-root
		exec chroot . /bin/sh -ec "umount -l /.ci-old-root; rmdir /.ci-old-root
			exec /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
				HOME=/root LANG=C.UTF-8 CI=true /bin/bash -c \"cd /root/ci/p && exec bash .ci/run\""
	' sh "$root" "$lock" "$work/mntns" >"$logs/run-$n.log" 2>&1 &
	child=$!
	wait "$child"
	rc=$?
	child=
	kill_chroot "$work"
	t1=$(date +%s)
	sed -n '/^stage  *| seconds/,$p' "$logs/run-$n.log" | tee -a "$summary"
	if [ "$rc" = 0 ]; then
		say "run $n/$runs: PASSED in $((t1 - t0)) s ($(tail -n 1 "$logs/run-$n.log"))"
	else
		say "run $n/$runs: FAILED (exit $rc) in $((t1 - t0)) s; log: $logs/run-$n.log"
		grep -E '^(=== stage .*FAILED|FAIL:|ERROR:|SKIP)' "$logs/run-$n.log" | head -n 20 | tee -a "$summary"
	fi
	if [ "${CI_CHROOT_KEEP:-0}" = 1 ]; then
		say "run $n/$runs: chroot kept at $root"
	else
		rm -rf --one-file-system "$work"
	fi
	work=
	return "$rc"
}

say "$runs run(s) of .ci/run on $rev, logs in $logs"
n=1
while [ "$n" -le "$runs" ]; do
	if ! one_run "$n"; then
		echo "FAIL: check-ci-chroot: run $n of $runs failed"
		exit 1
	fi
	n=$((n + 1))
done
echo "PASS: check-ci-chroot: $runs consecutive run(s) of .ci/run passed on $rev"
