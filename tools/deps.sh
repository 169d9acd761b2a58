#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs what building and testing pam_xdevices needs on Debian 12 (root).
#   tools/deps.sh          build + `make check` + `make demo`
#   tools/deps.sh all      also the slow suites: qemu, Xorg build and test,
#                          package, fuzzers, sanitizers, benchmark (so that
#                          .ci/run's lanes find them installed: no apt-get
#                          in one lane while the other runs one)
set -eu
core="autoconf automake libtool pkg-config make gcc libc6-dev
	libpam0g-dev libpam-modules libudev-dev udev libdrm-dev libacl1-dev acl check libseat-dev
	util-linux binutils busybox python3"
slow="build-essential clang libclang-rt-14-dev clang-format cppcheck valgrind strace git
	qemu-system-x86 qemu-utils mmdebstrap netpbm imagemagick e2fsprogs fakeroot
	dpkg-dev debhelper devscripts lintian equivs python3
	xserver-xorg-core xserver-xorg-video-vesa kbd perl"
set -- ${1:-core}
pkgs=$core
[ "$1" = all ] && pkgs="$core $slow"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# Another apt or dpkg (unattended-upgrades, a second deps.sh) may hold
# the locks: wait for it, up to $wait seconds, rather than fail. apt-get
# install waits by itself (DPkg::Lock::Timeout); apt-get update's lock on
# the lists has no timeout in apt 2.6, so it is tried again.
wait=${DEPS_LOCK_WAIT:-600}
update() {
	waited=0
	while ! apt-get update -qq 2>"$tmp"; do
		if ! grep -q 'Could not get lock' "$tmp" || [ "$waited" -ge "$wait" ]; then
			cat "$tmp" >&2
			return 1
		fi
		[ "$waited" = 0 ] && echo "deps: another apt holds its lock; waiting (up to $wait s)" >&2
		sleep 5
		waited=$((waited + 5))
	done
}
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	update
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout="$wait" $missing >/dev/null
fi
echo "deps: ready ($1)"
