#!/bin/sh
# SPDX-License-Identifier: MIT
# A Debian build root of another suite (trixie: Debian 13) for the opt-in
# targets that prove the tree there (make check-xserver-trixie,
# check-deb-trixie), so that nothing of that suite is ever added to this
# host's own /etc/apt. Made once with mmdebstrap (variant buildd, deb and
# deb-src of SUITE, SUITE-updates and SUITE-security), with the build
# dependencies of xorg-server and of the package, and the test tools.
#
# Usage: suite-chroot.sh SUITE path
#            print the root directory (made first if missing)
#        suite-chroot.sh SUITE run [--dev] [HOSTDIR=DIR]... -- COMMAND [ARG]...
#            run COMMAND chrooted, in a private mount namespace with /proc
#            mounted and each HOSTDIR bind-mounted on DIR of the root;
#            --dev also binds the host's /dev (real VTs) and /sys
# Env: XDEV_SUITE_CACHE (default /var/cache/pam_xdevices-SUITE; the root is
# its "root" subdirectory), XDEV_DEB_MIRROR, XDEV_DEB_SECURITY_MIRROR.
# apt's lists are refreshed when older than a day. Needs root.

set -eu

die() { echo "suite-chroot: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: suite-chroot.sh SUITE path|run ..."
SUITE=$1 CMD=$2
shift 2
case $SUITE in *[!a-z]*|'') die "bad suite name '$SUITE'" ;; esac
[ "$(id -u)" = 0 ] || die "must run as root"
CACHE=${XDEV_SUITE_CACHE:-/var/cache/pam_xdevices-$SUITE}
ROOT=$CACHE/root
M=${XDEV_DEB_MIRROR:-http://deb.debian.org/debian}
S=${XDEV_DEB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# xorg-server's build-deps come from the hook; these are the rest: the
# xserver test's tools (check-xserver.sh) and the package's build-deps and
# lintian (tests/check-deb.sh).
INCLUDE=quilt,dpkg-dev,ca-certificates,xserver-xorg-core,xserver-xorg-video-vesa
INCLUDE=$INCLUDE,strace,acl,kbd,perl,util-linux,git,lintian,debhelper,libpam0g-dev
INCLUDE=$INCLUDE,libudev-dev,libdrm-dev,libacl1-dev,check,pkg-config,udev

make_root() {
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.lock"
	flock 9
	[ -f "$ROOT/.suite-chroot-done" ] && return 0
	echo "suite-chroot: making the $SUITE build root $ROOT (mmdebstrap, minutes)" >&2
	rm -rf "$ROOT.tmp"
	nice -n 10 mmdebstrap --variant=buildd --include="$INCLUDE" \
		--customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get build-dep -y xorg-server' \
		"$SUITE" "$ROOT.tmp" \
		"deb $M $SUITE main" "deb-src $M $SUITE main" \
		"deb $M $SUITE-updates main" "deb-src $M $SUITE-updates main" \
		"deb $S $SUITE-security main" "deb-src $S $SUITE-security main" \
		>"$CACHE/mmdebstrap.log" 2>&1 ||
		{ tail -n 20 "$CACHE/mmdebstrap.log" >&2; die "mmdebstrap $SUITE failed"; }
	rm -rf "$ROOT"
	mv "$ROOT.tmp" "$ROOT"
	touch "$ROOT/.suite-chroot-done"
	exec 9>&-
}

[ -f "$ROOT/.suite-chroot-done" ] || make_root
# mmdebstrap leaves no lists behind; apt-get source needs them.
if [ -z "$(find "$ROOT/var/lib/apt/lists" -maxdepth 1 -name '*Sources*' -mtime -1 2>/dev/null)" ]; then
	cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || :
	chroot "$ROOT" apt-get update -q >/dev/null 2>&1 || die "apt-get update in $ROOT failed"
fi

case $CMD in
path)
	echo "$ROOT"
	;;
run)
	dev=
	binds=
	while [ $# -gt 0 ]; do
		case $1 in
		--dev) dev=1 ;;
		--) shift; break ;;
		*=*) binds="$binds $1" ;;
		*) die "run: expected --dev, HOSTDIR=DIR or --, got '$1'" ;;
		esac
		shift
	done
	[ $# -gt 0 ] || die "run: no command"
	cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || :
	# The mounts live in a private namespace: they go away with it.
	# shellcheck disable=SC2016
	exec unshare --mount --propagation private -- sh -c '
		set -e
		root=$1 dev=$2 binds=$3
		shift 3
		mount -t proc proc "$root/proc"
		if [ -n "$dev" ]; then
			mount --rbind /dev "$root/dev"
			mount --rbind /sys "$root/sys"
		fi
		for b in $binds; do
			mkdir -p "$root/${b#*=}"
			mount --bind "${b%%=*}" "$root/${b#*=}"
		done
		exec chroot "$root" "$@"
	' sh "$ROOT" "$dev" "$binds" "$@"
	;;
*)
	die "unknown command '$CMD'"
	;;
esac
