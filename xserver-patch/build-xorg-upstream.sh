#!/bin/sh
# SPDX-License-Identifier: MIT
# Build Xorg's upstream server (a pristine tarball of ../shared/upstream/)
# with the upstream series (upstream/series), for the Xorg DDX only, with
# meson, and install it into "$BUILDDIR/stage".
#
# Usage: build-xorg-upstream.sh [--force]
#        build-xorg-upstream.sh --print-builddir   print the build directory
#   XORG_UPSTREAM_TARBALL  the tarball: a path, or a file name in
#                     XDEV_UPSTREAM_DIR (default xorg-server-main-867976ba.tar.xz)
#   XDEV_UPSTREAM_DIR the directory of pristine upstream sources; default
#                     ../shared/upstream beside the clone (where CI has it)
#   XORG_UPSTREAM_SUITE  the Debian suite whose packages build it (default
#                     trixie: Xorg's main needs xorgproto 2024.1 and libdrm
#                     2.4.116, newer than Debian 12's), in that suite's build
#                     root (../tools/suite-chroot.sh); "host": on this host
#   XORG_UPSTREAM_BUILDDIR  build directory, never committed; default: a
#                     cache outside the tree, $XORG_UPSTREAM_CACHE/NAME-KEY,
#                     NAME the tarball's, KEY a hash of this script, the
#                     series, its patches, the tarball and the suite
#   XORG_UPSTREAM_CACHE  the cache (default
#                     /var/cache/pam_xdevices-xorg-upstream; the newest two
#                     builds of each tarball are kept)
#   XORG_UPSTREAM_PATCHES  patches to apply instead of the series, in
#                     order: paths, or file names in XDEV_UPSTREAM_DIR (a
#                     distribution's patches, applied as it applies them:
#                     an offset is accepted, fuzz is not)
#   XORG_UPSTREAM_MESON  more meson options (-Dseatd_libseat=true)
#   XORG_UPSTREAM_PACKAGES  more packages the build needs (libseat-dev)
#   XORG_UPSTREAM_BUILDER  what the build adds, for Xorg -version
#   MAKE_JOBS         parallel jobs (default: 2)
# Result: "$BUILDDIR/stage/usr/bin/Xorg". Must run as root (apt-get, chroot).

set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
PATCHDIR=$HERE/upstream
SERIES=$PATCHDIR/series
SUITE=${XORG_UPSTREAM_SUITE:-trixie}
CACHE=${XORG_UPSTREAM_CACHE:-/var/cache/pam_xdevices-xorg-upstream}
UPDIR=${XDEV_UPSTREAM_DIR:-$HERE/../../shared/upstream}
TARBALL=${XORG_UPSTREAM_TARBALL:-xorg-server-main-867976ba.tar.xz}
case $TARBALL in */*) ;; *) TARBALL=$UPDIR/$TARBALL ;; esac
JOBS=${MAKE_JOBS:-2}

die() { echo "build-xorg-upstream: $*" >&2; exit 1; }
say() { echo "build-xorg-upstream: $*"; }
# The patches, one path a line: the series, or XORG_UPSTREAM_PATCHES.
patches() {
	if [ -n "${XORG_UPSTREAM_PATCHES:-}" ]; then
		for p in $XORG_UPSTREAM_PATCHES; do
			case $p in */*) echo "$p" ;; *) echo "$UPDIR/$p" ;; esac
		done
	else
		sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e "s|^|$PATCHDIR/|" "$SERIES"
	fi
}
now() { date +%s; }
stage_start() { STAGE_NAME=$1; STAGE_T0=$(now); say "== $1"; }
stage_end() { say "== $STAGE_NAME took $(( $(now) - STAGE_T0 )) s"; }

[ -f "$SERIES" ] || die "no series file at $SERIES"
[ -f "$TARBALL" ] || die "no tarball $TARBALL (XDEV_UPSTREAM_DIR, XORG_UPSTREAM_TARBALL)"
for p in $(patches); do
	[ -f "$p" ] || die "no patch $p"
done
NAME=$(basename "$TARBALL")
NAME=${NAME%.tar.*}

if [ -n "${XORG_UPSTREAM_IN_ROOT:-}" ] || [ -n "${XORG_UPSTREAM_BUILDDIR:-}" ]; then
	CACHED=0
	BUILDDIR=${XORG_UPSTREAM_BUILDDIR:?}
else
	CACHED=1
	key=$( {
		echo "suite $SUITE"
		echo "meson ${XORG_UPSTREAM_MESON:-}"
		echo "packages ${XORG_UPSTREAM_PACKAGES:-}"
		echo "builder ${XORG_UPSTREAM_BUILDER:-}"
		cat "$HERE/build-xorg-upstream.sh"
		for p in $(patches); do
			echo "== $(basename "$p")"
			cat "$p"
		done
		sha256sum <"$TARBALL"
	} | sha256sum | cut -c1-16)
	BUILDDIR=$CACHE/$NAME-$key
fi
if [ "${1:-}" = --print-builddir ]; then
	echo "$BUILDDIR"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "must run as root (apt-get, chroot)"
FORCE=${1:-}
XORG=$BUILDDIR/stage/usr/bin/Xorg
DONE=$BUILDDIR/.build-xorg-upstream-done

# --- outside: the cache, its lock, and the suite's build root ------------------
if [ -z "${XORG_UPSTREAM_IN_ROOT:-}" ]; then
	T_ALL=$(now)
	if [ "$CACHED" = 1 ]; then
		if [ "$FORCE" != --force ] && [ -f "$DONE" ]; then
			say "cached: $XORG"
			exit 0
		fi
		# One build at a time (another tree may be building the same key:
		# it is then found done here).
		mkdir -p "$CACHE"
		exec 7>"$CACHE/.lock"
		flock 7
		if [ "$FORCE" != --force ] && [ -f "$DONE" ]; then
			say "cached: $XORG"
			exit 0
		fi
		rm -f "$DONE"
	fi
	# The patches go with the build (the build root sees only it): numbered
	# in their order, and whether an offset is accepted.
	rm -rf "$BUILDDIR/patches"
	mkdir -p "$BUILDDIR/patches"
	n=0
	for p in $(patches); do
		n=$((n + 1))
		cp "$p" "$BUILDDIR/patches/$(printf %02d "$n")-$(basename "$p")"
	done
	[ -z "${XORG_UPSTREAM_PATCHES:-}" ] || : >"$BUILDDIR/patches/.offset-ok"
	if [ "$SUITE" = host ]; then
		XORG_UPSTREAM_IN_ROOT=host XORG_UPSTREAM_BUILDDIR=$BUILDDIR \
			XORG_UPSTREAM_TARBALL=$TARBALL MAKE_JOBS=$JOBS \
			XORG_UPSTREAM_MESON="${XORG_UPSTREAM_MESON:-}" \
			XORG_UPSTREAM_PACKAGES="${XORG_UPSTREAM_PACKAGES:-}" \
			XORG_UPSTREAM_BUILDER="${XORG_UPSTREAM_BUILDER:-}" \
			nice -n 10 sh "$HERE/build-xorg-upstream.sh" "$@"
	else
		tdir=$(cd "$(dirname "$TARBALL")" && pwd)
		nice -n 10 "$HERE/../tools/suite-chroot.sh" "$SUITE" run \
			"$HERE=/xserver-patch" "$BUILDDIR=/build" "$tdir=/upstream" -- \
			env XORG_UPSTREAM_IN_ROOT="$SUITE" XORG_UPSTREAM_BUILDDIR=/build \
			XORG_UPSTREAM_TARBALL="/upstream/$(basename "$TARBALL")" MAKE_JOBS="$JOBS" \
			XORG_UPSTREAM_MESON="${XORG_UPSTREAM_MESON:-}" \
			XORG_UPSTREAM_PACKAGES="${XORG_UPSTREAM_PACKAGES:-}" \
			XORG_UPSTREAM_BUILDER="${XORG_UPSTREAM_BUILDER:-}" \
			sh /xserver-patch/build-xorg-upstream.sh "$@"
	fi
	if [ "$CACHED" = 1 ]; then
		echo "$NAME ($SUITE) $(sha256sum <"$TARBALL" | cut -c1-16)" >"$DONE"
		# the newest two builds of this tarball: this one and one other
		# shellcheck disable=SC2010
		ls -dt "$CACHE/$NAME"-* | grep -vx "$BUILDDIR" | tail -n +2 | xargs -r rm -rf
	fi
	say "done in $(( $(now) - T_ALL )) s: $XORG"
	exit 0
fi

# --- inside the build root (or on the host): the build itself -----------------
LOG=$BUILDDIR/build.log
SRC=$BUILDDIR/src
OBJ=$BUILDDIR/obj
STAGE=$BUILDDIR/stage
export DEBIAN_FRONTEND=noninteractive

stage_start "apt (build-dep xorg-server, meson, ninja)"
missing=
for pkg in meson ninja-build xz-utils patch python3 ${XORG_UPSTREAM_PACKAGES:-}; do
	dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $pkg"
done
if [ -n "$missing" ]; then
	say "installing$missing"
	# shellcheck disable=SC2086
	apt-get install -y -q -o DPkg::Lock::Timeout=900 $missing >>"$LOG" 2>&1 ||
		{ tail -n 20 "$LOG" >&2; die "apt-get install$missing failed"; }
fi
# Nothing to do (and nothing fetched) when the build root already has them.
if apt-get build-dep -s -q xorg-server 2>/dev/null | grep -q '^Inst '; then
	apt-get build-dep -y -q -o DPkg::Lock::Timeout=900 xorg-server >>"$LOG" 2>&1 ||
		{ tail -n 20 "$LOG" >&2; die "apt-get build-dep xorg-server failed"; }
fi
stage_end

# A new tree each time: the cache key changes with every input, so a tree
# left here is from an interrupted build.
stage_start "unpack $(basename "$TARBALL")"
rm -rf "$SRC" "$OBJ" "$STAGE" "$STAGE.tmp"
mkdir -p "$SRC"
tar -C "$SRC" --strip-components=1 -xJf "$TARBALL"
[ -f "$SRC/meson.build" ] || die "$(basename "$TARBALL") holds no meson.build"
stage_end

stage_start "patch"
for p in "$BUILDDIR"/patches/*.patch; do
	[ -f "$p" ] || continue
	say "applying $(basename "$p")"
	# --fuzz=0 refuses fuzz; an offset is refused below (but for a
	# distribution's patches, which it applies so).
	out=$(patch -d "$SRC" -p1 --fuzz=0 --no-backup-if-mismatch -i "$p" 2>&1) ||
		{ echo "$out" >&2; die "$p does not apply"; }
	if [ ! -f "$BUILDDIR/patches/.offset-ok" ] && echo "$out" | grep -qE 'offset|fuzz'; then
		echo "$out" >&2
		die "$p applies only with an offset or fuzz; refresh it"
	fi
done
stage_end

# Only the Xorg DDX: every other server, the docs and the input test driver
# off. An option the tree does not have (26.1 has no Xwayland) is left out.
stage_start "meson setup"
opts=
for o in xorg=true xwayland=false xnest=false xvfb=false xephyr=false \
	xwin=false xquartz=false docs=false devel-docs=false docs-pdf=false \
	xf86-input-inputtest=false; do
	grep -q "option('${o%%=*}'" "$SRC/meson_options.txt" && opts="$opts -D$o"
done
# (XLibre has no builder_string)
builder=
grep -q "option('builder_string'" "$SRC/meson_options.txt" && builder=yes
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
# Modules go to /usr/lib/MULTIARCH/xorg/modules, not Debian's
# /usr/lib/xorg/modules, whose drivers are built for another ABI.
# shellcheck disable=SC2086
meson setup "$OBJ" "$SRC" $opts \
	--prefix=/usr --sysconfdir=/etc --localstatedir=/var \
	--libdir="lib/$multiarch" --buildtype=debugoptimized \
	-Dxkb_dir=/usr/share/X11/xkb -Dxkb_output_dir=/var/lib/xkb \
	${builder:+"-Dbuilder_string=$NAME + ${XORG_UPSTREAM_BUILDER:-pam_xdevices xserver-patch/upstream}"} \
	${XORG_UPSTREAM_MESON:-} \
	>>"$LOG" 2>&1 || { tail -n 30 "$LOG" >&2; die "meson setup failed, see $LOG"; }
stage_end

# What gets installed (the server, its modules, its tools), not the unit
# tests.
stage_start "ninja -j$JOBS"
targets=$(meson introspect --targets "$OBJ" | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
	if t["installed"]:
		for f in t["filename"]:
			print(os.path.relpath(f, sys.argv[1]))
' "$OBJ")
[ -n "$targets" ] || die "meson lists no installed targets"
# shellcheck disable=SC2086
ninja -C "$OBJ" -j"$JOBS" $targets >>"$LOG" 2>&1 ||
	{ tail -n 40 "$LOG" >&2; die "ninja failed, see $LOG"; }
stage_end

stage_start "install into $STAGE"
# Installed aside, then moved in: a reader finds the whole server or none.
DESTDIR=$STAGE.tmp meson install -C "$OBJ" --no-rebuild >>"$LOG" 2>&1 ||
	{ tail -n 40 "$LOG" >&2; die "meson install failed, see $LOG"; }
[ -x "$STAGE.tmp/usr/bin/Xorg" ] || die "no usr/bin/Xorg after install"
mv "$STAGE.tmp" "$STAGE"
stage_end
