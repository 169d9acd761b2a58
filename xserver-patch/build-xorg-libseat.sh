#!/bin/sh
# SPDX-License-Identifier: MIT
# Build a display server as the distributions that run Xorg on libseat ship
# it, with libseat's seat integration (meson -Dseatd_libseat=true), for
# Debian 12, by build-xorg-upstream.sh, in its own cache.
#
# Usage: build-xorg-libseat.sh [--force]
#        build-xorg-libseat.sh --print-builddir   print the build directory
#   XORG_LIBSEAT_SERVER  which server (default xorg):
#       xorg    Xorg 21.1.24 with the libseat patch of Devuan and Chimera
#               Linux and its meson fix-up (../shared/upstream/chimera-*),
#               the same driver ABI as Debian 12's 21.1.7, so that Debian's
#               input drivers load (Xorg -modulepath OURS,/usr/lib/xorg/modules)
#       xlibre  XLibre 25.2.2, with xlibre/series (ours, for XLibre upstream),
#               and xorgproto 2024.1's headers from the trixie build root
#   XORG_LIBSEAT_CACHE   the cache (default /var/cache/pam_xdevices-xorg-libseat)
#   XDEV_UPSTREAM_DIR, MAKE_JOBS: as build-xorg-upstream.sh
# Debian 12's libseat-dev is 0.7.0. The build runs on this host when it is
# Debian 12 (as CI's), else in a bookworm build root (../tools/suite-chroot.sh).
# Result: "$BUILDDIR/stage/usr/bin/Xorg", its modules in
# "$BUILDDIR/stage/usr/lib/MULTIARCH/xorg/modules". Must run as root.

set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
SERVER=${XORG_LIBSEAT_SERVER:-xorg}

suite=bookworm
if [ -r /etc/os-release ] && grep -qx 'VERSION_CODENAME=bookworm' /etc/os-release; then
	suite=host
fi

CACHE=${XORG_LIBSEAT_CACHE:-/var/cache/pam_xdevices-xorg-libseat}
PROTO_VERSION=2024.1-1
PROTO=$CACHE/x11proto-dev-$PROTO_VERSION
meson=-Dseatd_libseat=true

# proto_headers: trixie's x11proto-dev, its files under $PROTO, its .pc
# files pointing there (made once)
proto_headers() {
	[ -f "$PROTO/.done" ] && return 0
	proot=$(sh "$HERE/../tools/suite-chroot.sh" trixie path)
	pv=$(chroot "$proot" dpkg-query -W -f='${Version}' x11proto-dev)
	[ "$pv" = "$PROTO_VERSION" ] || {
		echo "build-xorg-libseat: the trixie root has x11proto-dev $pv, not $PROTO_VERSION" >&2
		exit 1
	}
	rm -rf "$PROTO"
	chroot "$proot" dpkg-query -L x11proto-dev | while read -r f; do
		[ -f "$proot$f" ] || continue
		mkdir -p "$PROTO$(dirname "$f")"
		cp "$proot$f" "$PROTO$f"
	done
	sed -i "s|^prefix=.*|prefix=$PROTO/usr|" "$PROTO"/usr/share/pkgconfig/*.pc
	: >"$PROTO/.done"
}

case $SERVER in
xorg)
	tarball=xorg-server-21.1.24.tar.xz
	patches="chimera-0001-Support-libseat.patch chimera-libseat-dep.patch"
	builder="Chimera Linux's libseat patches"
	# no SUN-DES-1 authorisation: libtirpc is not in Debian 12's
	# xserver-xorg-core's dependencies, so not on a machine that has it
	meson="$meson -Dsecure-rpc=false"
	;;
xlibre)
	tarball=xlibre-xserver-25.2.2.tar.xz
	patches=
	for p in $(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$HERE/xlibre/series"); do
		patches="$patches $HERE/xlibre/$p"
	done
	builder="pam_xdevices xserver-patch/xlibre"
	# XLibre needs xorgproto 2024.1 (presentproto 1.4, dri3proto 1.4);
	# Debian 12 has 2022.1. Headers only (x11proto-dev is arch all), so
	# they are taken from the trixie build root's x11proto-dev into a
	# directory of the cache; the server still links Debian 12's
	# libraries alone.
	[ "$suite" = host ] || {
		echo "build-xorg-libseat: XLibre is built on a Debian 12 host only" >&2
		exit 1
	}
	[ "${1:-}" = --print-builddir ] || proto_headers
	meson="$meson --pkg-config-path=$PROTO/usr/share/pkgconfig"
	;;
*)
	echo "build-xorg-libseat: unknown server '$SERVER' (xorg, xlibre)" >&2
	exit 2
	;;
esac

# (an empty list would mean upstream/series)
[ -n "$patches" ] || { echo "build-xorg-libseat: no patches for $SERVER" >&2; exit 1; }
XORG_UPSTREAM_TARBALL=$tarball \
	XORG_UPSTREAM_PATCHES=$patches \
	XORG_UPSTREAM_MESON=$meson \
	XORG_UPSTREAM_PACKAGES=libseat-dev \
	XORG_UPSTREAM_BUILDER=$builder \
	XORG_UPSTREAM_SUITE=$suite \
	XORG_UPSTREAM_CACHE=$CACHE \
	exec sh "$HERE/build-xorg-upstream.sh" "$@"
