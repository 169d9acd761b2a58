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
	util-linux binutils"
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
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
echo "deps: ready ($1)"
