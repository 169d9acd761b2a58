#!/bin/sh
# SPDX-License-Identifier: MIT
# Fetch Debian 12's xorg-server source, apply our patch series without fuzz,
# build only the Xorg server and install it into "$BUILDDIR/stage".
#
# Usage: build-xorg.sh [--force]
#        build-xorg.sh --print-builddir   print the build directory and exit
#   XSERVER_SUITE     another Debian suite's xorg-server (trixie): everything
#                     runs in that suite's build root (../tools/suite-chroot.sh),
#                     never with this host's apt sources
#   XSERVER_BUILDDIR  build directory, never committed; default: a cache
#                     outside the tree, $XSERVER_CACHE/SUITE-KEY, KEY a hash of
#                     what the build is made of (this script, the series, its
#                     patches and the version of xorg-server apt would fetch),
#                     so that any change to one of them builds anew and every
#                     clone of the tree shares the build (check-xserver,
#                     check-vm's image, the trixie targets)
#   XSERVER_CACHE     the cache (default /var/cache/pam_xdevices-xorg; the
#                     newest two builds of each suite are kept)
#   MAKE_JOBS         parallel make jobs (default: 2)
# Result: "$BUILDDIR/stage/usr/lib/xorg/Xorg". Must run as root (apt-get).

set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
SUITE=${XSERVER_SUITE:-}
CACHE=${XSERVER_CACHE:-/var/cache/pam_xdevices-xorg}
PATCHDIR=$HERE/patches
SERIES=$PATCHDIR/series

die() { echo "build-xorg: $*" >&2; exit 1; }
# Another apt (a lane building an image, apt's daily timer) may hold the
# locks: wait for it, up to APT_WAIT seconds, rather than fail. apt-get
# update's lock on the lists has no timeout in apt 2.6: tried again.
APT_WAIT=${APT_WAIT:-900}
apt_update() {
	waited=0
	until apt-get update -q >>"$LOG" 2>&1; do
		if ! tail -n 3 "$LOG" | grep -q 'Could not get lock' || [ "$waited" -ge "$APT_WAIT" ]; then
			die "apt-get update failed"
		fi
		sleep 5
		waited=$((waited + 5))
	done
}
patches() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$SERIES"; }

# The version of xorg-server the build would fetch: apt's candidate for its
# main binary package, asked in the suite's build root for another suite.
debian_version() {
	if [ -n "$SUITE" ]; then
		"$HERE/../tools/suite-chroot.sh" "$SUITE" run -- sh -c 'apt-cache policy xserver-xorg-core 2>/dev/null'
	else
		apt-cache policy xserver-xorg-core 2>/dev/null
	fi | sed -n 's/^ *Candidate: *//p'
}

# The cached build's directory: SUITE-KEY under $CACHE.
cache_builddir() {
	version=$(debian_version)
	case $version in
	'' | '(none)')
		echo "build-xorg: apt knows no xorg-server version (apt-get update?): key 'unknown'" >&2
		version=unknown
		;;
	esac
	key=$( {
		echo "$version"
		cat "$HERE/build-xorg.sh" "$SERIES"
		for p in $(patches); do
			echo "== $p"
			cat "$PATCHDIR/$p" 2>/dev/null || echo missing
		done
	} | sha256sum | cut -c1-16)
	echo "$CACHE/$LABEL-$key"
}
# The cache's name for the suite: this host's codename, or XSERVER_SUITE.
LABEL=${SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-host}")}
# Keeps the newest two cached builds of the suite: this one and one other.
prune_cache() {
	ls -dt "$CACHE/$LABEL"-* | grep -vx "$BUILDDIR" | tail -n +2 | xargs -r rm -rf
}

[ -f "$SERIES" ] || die "no series file at $SERIES"
if [ -z "${XSERVER_IN_SUITE_ROOT:-}" ] && [ -z "${XSERVER_BUILDDIR:-}" ]; then
	CACHED=1
	BUILDDIR=$(cache_builddir)
else
	CACHED=0
	BUILDDIR=${XSERVER_BUILDDIR:-}
fi
if [ "${1:-}" = --print-builddir ]; then
	echo "$BUILDDIR"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "must run as root (apt-get build-dep)"
# A cached build is complete when it has this file; it is never built again.
DONE=$BUILDDIR/.build-xorg-done
if [ "$CACHED" = 1 ]; then
	if [ "${1:-}" != --force ] && [ -f "$DONE" ]; then
		echo "build-xorg: cached: $BUILDDIR/stage/usr/lib/xorg/Xorg"
		exit 0
	fi
	# One build at a time in the cache (another tree may be building the
	# same key: it is then found done here).
	mkdir -p "$CACHE"
	exec 7>"$CACHE/.lock"
	flock 7
	if [ "${1:-}" != --force ] && [ -f "$DONE" ]; then
		echo "build-xorg: cached: $BUILDDIR/stage/usr/lib/xorg/Xorg"
		exit 0
	fi
	rm -f "$DONE"
fi
if [ -n "$SUITE" ] && [ -z "${XSERVER_IN_SUITE_ROOT:-}" ]; then
	mkdir -p "$BUILDDIR"
	# The same script inside the suite's root, on the same files.
	"$HERE/../tools/suite-chroot.sh" "$SUITE" run "$HERE=/xserver-patch" "$BUILDDIR=/build" -- \
		env XSERVER_IN_SUITE_ROOT="$SUITE" XSERVER_BUILDDIR=/build MAKE_JOBS="${MAKE_JOBS:-2}" \
		sh /xserver-patch/build-xorg.sh "$@"
	if [ "$CACHED" = 1 ]; then
		echo "$SUITE xorg-server $(debian_version)" >"$DONE"
		prune_cache
	fi
	exit 0
fi
JOBS=${MAKE_JOBS:-2}
FORCE=${1:-}
LOG=$BUILDDIR/build.log       # compiler output
PRISTINE=$BUILDDIR/pristine   # apt-get source + debian/patches applied
SRC=$BUILDDIR/src             # pristine + our series
OBJ=$BUILDDIR/obj             # out-of-tree build
STAGE=$BUILDDIR/stage
XORG=$STAGE/usr/lib/xorg/Xorg

now() { date +%s; }
stage_start() { STAGE_NAME=$1; STAGE_T0=$(now); echo "build-xorg: == $1"; }
stage_end() { echo "build-xorg: == $STAGE_NAME took $(( $(now) - STAGE_T0 )) s"; }

# Up to date when the staged binary is newer than the series, every patch
# and this script.
is_up_to_date() {
	[ -x "$XORG" ] || return 1
	[ "$XORG" -nt "$SERIES" ] && [ "$XORG" -nt "$0" ] || return 1
	for p in $(patches); do
		[ "$XORG" -nt "$PATCHDIR/$p" ] || return 1
		# a patch edited during the last build is newer than what was applied
		cmp -s "$PATCHDIR/$p" "$SRC/.xserver-patch/$(basename "$p")" || return 1
	done
	return 0
}

for p in $(patches); do
	[ -f "$PATCHDIR/$p" ] || die "series names missing patch $p"
done

if [ "$FORCE" != --force ] && is_up_to_date; then
	echo "build-xorg: $XORG is up to date"
	exit 0
fi
mkdir -p "$BUILDDIR"
T_ALL=$(now)

# --- deb-src and build dependencies ---------------------------------------
stage_start "apt (deb-src, build-dep)"
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	# Debian's own entry: debian.sources, else the first deb.debian.org one
	src=$(grep -lsE '^URIs:.*deb\.debian\.org' /etc/apt/sources.list.d/debian.sources \
			  /etc/apt/sources.list.d/*.sources | head -n1 || true)
	if [ -n "$src" ]; then
		sed 's/^Types:.*/Types: deb-src/' "$src" > /etc/apt/sources.list.d/xserver-patch-src.sources
	elif [ -f /etc/apt/sources.list ]; then
		sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > /etc/apt/sources.list.d/xserver-patch-src.list
	else
		die "no Debian apt source found to copy as deb-src"
	fi
	apt_update
fi
DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q -o DPkg::Lock::Timeout="$APT_WAIT" \
	xorg-server >>"$LOG" 2>&1 ||
	{ tail -n 20 "$LOG" >&2; die "apt-get build-dep xorg-server failed"; }
stage_end

# --- source ----------------------------------------------------------------
stage_start "apt-get source"
if [ ! -f "$PRISTINE/.done" ]; then
	rm -rf "$PRISTINE"
	mkdir -p "$PRISTINE"
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	if ! (cd "$PRISTINE" && { apt-get source -q xorg-server ||
			apt-get source -q "xorg-server/$codename-security"; }) >>"$LOG" 2>&1; then
		# A mirror that serves the tarball and the diff but not the .dsc
		# (seen with trixie: the diff only under debian-security, no .dsc
		# anywhere): apt has checked what it fetched against the signed
		# Sources index; a format 1.0 source is the tarball plus the diff,
		# so unpack it as dpkg-source would.
		orig=$(find "$PRISTINE" -maxdepth 1 -name 'xorg-server_*.orig.tar.gz' | head -n1)
		diff=$(find "$PRISTINE" -maxdepth 1 -name 'xorg-server_*.diff.gz' | head -n1)
		[ -n "$orig" ] && [ -n "$diff" ] && [ -z "$(find "$PRISTINE" -maxdepth 1 -type d -name 'xorg-server-*')" ] ||
			{ tail -n 20 "$LOG" >&2; die "apt-get source xorg-server failed"; }
		echo "build-xorg: no .dsc on the mirror: unpacking $(basename "$orig") + $(basename "$diff")" | tee -a "$LOG"
		tar -C "$PRISTINE" -xzf "$orig"
		dir=$(find "$PRISTINE" -mindepth 1 -maxdepth 1 -type d -name 'xorg-server-*' | head -n1)
		[ -n "$dir" ] || die "$(basename "$orig") holds no xorg-server-* directory"
		zcat "$diff" | patch -d "$dir" -p1 -s --fuzz=0 >>"$LOG" 2>&1 || die "$(basename "$diff") does not apply"
		chmod +x "$dir/debian/rules"
	fi
	dir=$(find "$PRISTINE" -mindepth 1 -maxdepth 1 -type d -name 'xorg-server-*' | head -n1)
	[ -n "$dir" ] || die "apt-get source produced no xorg-server-* directory"
	# Format 1.0 source: Debian's quilt series is applied at build time
	# (dh --with quilt); apply it here, so our series goes on top of it.
	(cd "$dir" && QUILT_PATCHES=debian/patches quilt push -a -q --fuzz=0) >>"$LOG" 2>&1 ||
		{ tail -n 20 "$LOG" >&2; die "Debian's own patches do not apply"; }
	ln -s "$(basename "$dir")" "$PRISTINE/tree"
	touch "$PRISTINE/.done"
fi
stage_end

# --- patches -----------------------------------------------------------------
# The series is applied to a copy of the pristine tree. When it changes, the
# previous one is reversed first, so that make rebuilds exactly what changed.
stage_start "patch"
if [ ! -d "$SRC" ]; then
	cp -a "$PRISTINE/tree/." "$SRC"
	mkdir -p "$SRC/.xserver-patch"
fi
APPLIED=$SRC/.xserver-patch
same=yes
(patches) > "$BUILDDIR/series.want"
cmp -s "$BUILDDIR/series.want" "$APPLIED/series" 2>/dev/null || same=no
if [ $same = yes ]; then
	for p in $(patches); do
		cmp -s "$PATCHDIR/$p" "$APPLIED/$(basename "$p")" || same=no
	done
fi
if [ $same = no ]; then
	if [ -f "$APPLIED/series" ]; then
		for p in $(tac "$APPLIED/series"); do
			echo "build-xorg: reverting $p"
			patch -d "$SRC" -p1 -R -s --fuzz=0 -i "$APPLIED/$(basename "$p")" ||
				die "cannot revert $p; remove $SRC and retry"
		done
		rm -f "$APPLIED"/*
	fi
	for p in $(patches); do
		echo "build-xorg: applying $p"
		# --fuzz=0 refuses fuzz; an offset is refused below.
		out=$(patch -d "$SRC" -p1 --fuzz=0 --no-backup-if-mismatch -i "$PATCHDIR/$p" 2>&1) ||
			{ echo "$out" >&2; die "$p does not apply"; }
		if echo "$out" | grep -qE 'offset|fuzz'; then
			die "$p applies only with an offset or fuzz; refresh it"
		fi
		cp "$PATCHDIR/$p" "$APPLIED/$(basename "$p")"
		echo "$p" >> "$APPLIED/series"
	done
	[ -f "$APPLIED/series" ] || : > "$APPLIED/series"
fi
stage_end

# --- autoreconf ----------------------------------------------------------------
stage_start "autoreconf"
if [ ! -f "$SRC/.xserver-patch-autoreconf" ]; then
	(cd "$SRC" && autoreconf -fi) >>"$LOG" 2>&1 ||
		{ tail -n 40 "$LOG" >&2; die "autoreconf failed, see $LOG"; }
	touch "$SRC/.xserver-patch-autoreconf"
fi
stage_end

# --- configure: Debian's flags (debian/rules.flags), Xorg server only -------
stage_start "configure"
# Reconfigure when this script (and so maybe a flag) changed.
script_sum=$(md5sum < "$0")
if [ ! -f "$OBJ/config.status" ] || [ "$(cat "$OBJ/.build-xorg.sum" 2>/dev/null)" != "$script_sum" ]; then
	mkdir -p "$OBJ"
	vendor=$(dpkg-vendor --query Vendor)
	version=$(cd "$SRC" && dpkg-parsechangelog -S Version)
	# Debian's choice for the main build (bookworm: libgcrypt, trixie: libnettle)
	sha1=$(sed -n 's/.*--with-sha1=\([a-z0-9]*\).*/\1/p' "$SRC/debian/rules.flags" | head -n1)
	eval "$(DEB_BUILD_MAINT_OPTIONS="hardening=+pie" \
			DEB_LDFLAGS_MAINT_APPEND="-Wl,-Bsymbolic" \
			DEB_CPPFLAGS_MAINT_APPEND="-DPRE_RELEASE=0" \
			dpkg-buildflags --export=sh)"
	(cd "$OBJ" && "$SRC/configure" -q \
		--prefix=/usr --sysconfdir=/etc --localstatedir=/var --runstatedir=/run \
		--mandir='${prefix}/share/man' \
		--libdir="\${prefix}/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)" \
		--libexecdir='${prefix}/lib/xorg' \
		--with-module-dir='${prefix}/lib/xorg/modules' \
		--with-serverconfig-path='${libexecdir}' \
		--disable-static --without-dtrace --disable-strict-compilation \
		--disable-debug --with-int10=x86emu \
		--with-os-name=linux --with-os-vendor="$vendor" \
		--with-builderstring="xorg-server $version + pam_xdevices xserver-patch" \
		--with-xkb-path=/usr/share/X11/xkb --with-xkb-output=/var/lib/xkb \
		--with-shared-memory-dir=/dev/shm \
		--enable-mitshm --enable-xres --enable-dbe --disable-xf86bigfont \
		--enable-dpms --enable-xorg --disable-linux-acpi --disable-linux-apm \
		--disable-xquartz --disable-xwayland --disable-xwin \
		--disable-install-setuid --disable-config-hal --enable-config-udev \
		--enable-xshmfence --disable-unit-tests \
		--with-default-font-path="/usr/share/fonts/X11/misc,/usr/share/fonts/X11/cyrillic,/usr/share/fonts/X11/100dpi/:unscaled,/usr/share/fonts/X11/75dpi/:unscaled,/usr/share/fonts/X11/Type1,/usr/share/fonts/X11/100dpi,/usr/share/fonts/X11/75dpi,built-ins" \
		--enable-composite --enable-record --enable-xv --enable-xvmc \
		--enable-dga --enable-screensaver --enable-xdmcp --enable-xdm-auth-1 \
		--enable-glx --enable-present --enable-xinerama --enable-xf86vidmode \
		--enable-xace --enable-xfree86-utils --enable-suid-wrapper \
		--disable-xvfb --disable-xnest --disable-kdrive --disable-xephyr \
		--with-sha1="${sha1:-libgcrypt}" --enable-xcsecurity \
		--enable-dri3 --enable-xselinux --enable-systemd-logind \
		--with-systemd-daemon --enable-dri --enable-dri2 --enable-glamor \
		--enable-libunwind --enable-libdrm \
		CFLAGS="$CFLAGS" CPPFLAGS="$CPPFLAGS" LDFLAGS="$LDFLAGS") >>"$LOG" 2>&1 ||
		{ tail -n 20 "$LOG" >&2; die "configure failed, see $LOG"; }
	echo "$script_sum" > "$OBJ/.build-xorg.sum"
fi
stage_end

# --- build and stage ------------------------------------------------------------
stage_start "make -j$JOBS"
make -C "$OBJ" -j"$JOBS" >>"$LOG" 2>&1 ||
	{ tail -n 40 "$LOG" >&2; die "make failed, see $LOG"; }
stage_end

stage_start "install into $STAGE"
# Installed aside, then moved in: whoever reads the stage meanwhile (an
# image build) finds the whole server or none.
rm -rf "$STAGE.tmp"
make -C "$OBJ" install DESTDIR="$STAGE.tmp" >>"$LOG" 2>&1 ||
	{ tail -n 40 "$LOG" >&2; die "make install failed, see $LOG"; }
[ -x "$STAGE.tmp/usr/lib/xorg/Xorg" ] || die "no $XORG after install"
touch "$STAGE.tmp/usr/lib/xorg/Xorg"
rm -rf "$STAGE"
mv "$STAGE.tmp" "$STAGE"
stage_end
if [ "$CACHED" = 1 ]; then
	echo "$LABEL xorg-server $(debian_version)" >"$DONE"
	prune_cache
fi

echo "build-xorg: done in $(( $(now) - T_ALL )) s: $XORG"
