#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds (or finds in the cache) the Debian 12 test image for the qemu suite:
# a sysvinit rootfs with Xorg, the project installed into it, two users.
#
# usage: build-image.sh [--srcdir DIR] [--no-project]
# The project is always built from a copy of SRCDIR (tracked and untracked,
# not ignored files) configured for /usr, as a distribution would install it.
# Prints the image directory (rootfs.ext4, vmlinuz, initrd.img, info) on the
# last line of stdout. Cache: $XDT_CACHE, default /var/cache/pam_xdevices-vm.
# The patched Xorg (if built) goes in: from the directory build-xorg.sh
# --print-builddir names (XSERVER_BUILDDIR, else its cache under a hash of
# its inputs, /var/cache/pam_xdevices-xorg/SUITE-KEY), or XDT_PATCHED_XORG.
# VM_SUITE=trixie builds a Debian 13 image instead (same package list; its
# own cache, default /var/cache/pam_xdevices-vm-trixie, so that the Debian
# 12 images are never pruned for it; the patched Xorg is trixie's, from
# build-xorg.sh's cache: make check-xserver-trixie or check-vm-trixie
# builds it). It also gets Xorg's upstream server with the upstream series
# when ../../xserver-patch/build-xorg-upstream.sh's cache (built in the
# trixie build root, under a hash of its inputs) has it: in
# /usr/local/lib/xdt/xorg-upstream/ (Xorg, modules/ with its own
# modesetting driver), for r3 (make check-vm-upstream builds it).
# VM_INITS=1 adds inits/packages.list (openrc, runit, busybox), in a cache
# of its own (default /var/cache/pam_xdevices-vm-inits), and installs the
# project as make install does for OpenRC and runit (--with-initdir=no
# --with-openrcdir=/etc/init.d --with-runitdir=/etc/sv), each enabled by its
# one command; sysvinit's inittab runs OpenRC, and init=/lib/runit/runit-init
# boots the same image with runit as PID 1, noinit=udev with OpenRC and no
# udevd for busybox mdev (inits/, check-vm.sh).
# VM_WAYLAND=1 adds wayland/packages.list (sway, foot) to the packages, in a
# cache of its own (default /var/cache/pam_xdevices-vm-wayland), so that the
# default image stays as it is and is never pruned for it; it has no
# patched Xorg (its scenarios run none), so that it does not depend on
# whether one was built before it. It has instead the X servers built with
# libseat (../../xserver-patch/build-xorg-libseat.sh: Xorg 21.1.24 with
# Chimera's patch, XLibre 25.2.2) that are in that script's cache, each in
# /usr/local/lib/xdt/NAME-libseat/ (Xorg, modules/), for w3 and w4.
# The base rootfs (packages only, slow) and the image (base + project + test
# scripts, fast) are cached separately, each under a hash of its inputs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
with_project=1
while [ $# -gt 0 ]; do
	case $1 in
	--srcdir) srcdir=$(cd "$2" && pwd); shift 2 ;;
	--no-project) with_project=0; shift ;;
	*) echo "usage: $0 [--srcdir DIR] [--no-project]" >&2; exit 2 ;;
	esac
done

suite=${VM_SUITE:-bookworm}
case $suite in *[!a-z]*|'') echo "build-image: bad VM_SUITE '$suite'" >&2; exit 2 ;; esac
wayland=${VM_WAYLAND:-0}
libseat_stages=
upstream_stage=
case $wayland in 0|1) ;; *) echo "build-image: bad VM_WAYLAND '$wayland' (0 or 1)" >&2; exit 2 ;; esac
inits=${VM_INITS:-0}
case $inits in 0|1) ;; *) echo "build-image: bad VM_INITS '$inits' (0 or 1)" >&2; exit 2 ;; esac
if [ "$inits" = 1 ]; then
	[ "$suite" = bookworm ] && [ "$wayland" = 0 ] ||
		{ echo "build-image: VM_INITS=1 is for the Debian 12 X image only" >&2; exit 2; }
	cache=${XDT_CACHE:-/var/cache/pam_xdevices-vm-inits}
	xorg_builddir=
elif [ "$wayland" = 1 ]; then
	[ "$suite" = bookworm ] || { echo "build-image: VM_WAYLAND=1 is for the Debian 12 image only" >&2; exit 2; }
	cache=${XDT_CACHE:-/var/cache/pam_xdevices-vm-wayland}
	xorg_builddir=
	for s in xorg xlibre; do
		d=$(XORG_LIBSEAT_SERVER=$s sh "$srcdir/xserver-patch/build-xorg-libseat.sh" --print-builddir) || continue
		[ -f "$d/.build-xorg-upstream-done" ] && libseat_stages="$libseat_stages $s=$d/stage"
	done
elif [ "$suite" = bookworm ]; then
	cache=${XDT_CACHE:-/var/cache/pam_xdevices-vm}
	xorg_builddir=$(sh "$srcdir/xserver-patch/build-xorg.sh" --print-builddir)
else
	cache=${XDT_CACHE:-/var/cache/pam_xdevices-vm-$suite}
	xorg_builddir=$(XSERVER_SUITE=$suite XSERVER_BUILDDIR= sh "$srcdir/xserver-patch/build-xorg.sh" --print-builddir)
	# Xorg's upstream server with the upstream series, built in this
	# suite's build root (r3), when build-xorg-upstream.sh's cache has it
	# (XDT_UPSTREAM_STAGE: another build's stage directory instead)
	upstream_stage=${XDT_UPSTREAM_STAGE:-}
	if [ "$suite" = trixie ] && [ -z "$upstream_stage" ]; then
		d=$(XORG_UPSTREAM_SUITE=trixie XORG_UPSTREAM_BUILDDIR='' sh "$srcdir/xserver-patch/build-xorg-upstream.sh" --print-builddir)
		if [ -f "$d/.build-xorg-upstream-done" ]; then upstream_stage=$d/stage; fi
	fi
fi
mirror=${XDT_MIRROR:-http://deb.debian.org/debian}
security_mirror=${XDT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
xorg_patched=${XDT_PATCHED_XORG:-${xorg_builddir:+$xorg_builddir/stage/usr/lib/xorg/Xorg}}
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

say() { echo "build-image: $*" >&2; }
need() { command -v "$1" >/dev/null || { say "missing $1 (apt-get install $2)"; exit 1; }; }
need mmdebstrap mmdebstrap
need mkfs.ext4 e2fsprogs
[ "$(id -u)" = 0 ] || { say "must run as root (mmdebstrap, device nodes, chroot)"; exit 1; }

hash_stream() { sha256sum | cut -c1-16; }

# --- base: Debian 12 (or $suite) packages only -----------------------------------------
make_base() {
	local out=$1 pkgs
	pkgs=$(grep -v '^#' "$here/packages.list" | xargs | tr ' ' ,)
	[ "$wayland" = 0 ] || pkgs=$pkgs,$(grep -v '^#' "$here/wayland/packages.list" | xargs | tr ' ' ,)
	[ "$inits" = 0 ] || pkgs=$pkgs,$(grep -v '^#' "$here/inits/packages.list" | xargs | tr ' ' ,)
	[ "$suite" != trixie ] || pkgs=$pkgs,$(grep -v '^#' "$here/wayland/packages-trixie.list" | xargs | tr ' ' ,)
	mmdebstrap --variant=apt --include="$pkgs" \
		--aptopt='APT::Install-Recommends "false"' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-include=/usr/share/locale/locale.alias' \
		"$suite" "$out" \
		"deb $mirror $suite main" \
		"deb $mirror $suite-updates main" \
		"deb $security_mirror $suite-security main"
}
# The key of a Debian 12 base is what it was before suites existed (the
# function's text with the suite spelled out and without the Wayland line),
# so the shared cache stays valid.
base_key=$( { cat "$here/packages.list"
	declare -f make_base | grep -v -e wayland -e inits | sed -e 's/"\$suite"/bookworm/' -e 's/\$suite/bookworm/g'
	echo "$mirror $security_mirror"
	[ "$suite" = bookworm ] || echo "$suite"
	[ "$wayland" = 0 ] || cat "$here/wayland/packages.list"
	[ "$inits" = 0 ] || cat "$here/inits/packages.list"
	[ "$suite" != trixie ] || cat "$here/wayland/packages-trixie.list"; } | hash_stream)
base=$cache/base-$base_key
if [ ! -e "$base/.done" ]; then
	say "building base rootfs $base (mmdebstrap, ~2 min)"
	rm -rf "$base" "$base.tmp"
	t0=$SECONDS
	make_base "$base.tmp" >&2
	touch "$base.tmp/.done"
	mv "$base.tmp" "$base"
	say "base rootfs built in $((SECONDS - t0)) s"
	for old in "$cache"/base-*; do [ "$old" = "$base" ] || rm -rf "$old"; done
else
	say "base rootfs cached: $base"
fi

# --- project: make install DESTDIR ------------------------------------------
stage=$cache/stage
rm -rf "$stage"; mkdir -p "$stage"
project=absent
if [ "$with_project" = 1 ]; then
	if [ -e "$srcdir/configure.ac" ]; then
		# Build a copy, out of the developer's tree: cp -u keeps unchanged
		# files' mtimes so that make rebuilds only what changed.
		tree=$(echo "$srcdir" | hash_stream)
		src=$cache/src-$tree build=$cache/build-$tree
		say "building the project from $srcdir in $build"
		mkdir -p "$src" "$build"
		(cd "$srcdir" && git ls-files -z --cached --others --exclude-standard 2>/dev/null ||
			find . \( -path ./.git -o -name .libs -o -name .deps -o -name autom4te.cache \) -prune -o \
				-type f ! \( -name config.status -o -name config.log -o -name '*.o' -o -name '*.lo' \
				-o -name '*.la' -o -name Makefile -o -name libtool -o -name config.h \) -print0) |
			(cd "$srcdir" && xargs -0 cp -u -p --parents -t "$src" 2>/dev/null || true)
		[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >&2)
		# the inits image: the OpenRC service where the sysvinit
		# script would go, the runit directory where Debian's runit
		# looks (/etc/sv), as a distribution of those inits builds it
		init_args=
		[ "$inits" = 0 ] || init_args="--with-initdir=no --with-openrcdir=/etc/init.d --with-runitdir=/etc/sv --with-systemdunitdir=no"
		if [ ! -e "$build/config.status" ]; then
			# shellcheck disable=SC2086
			(cd "$build" && "$src/configure" --prefix=/usr --sysconfdir=/etc \
				--libdir=/usr/lib/x86_64-linux-gnu $init_args >&2)
		fi
		make -s -C "$build" -j2 >&2
		make -s -C "$build" install DESTDIR="$stage" >&2
		project=installed
	else
		say "no configure.ac in $srcdir: image without the project"
	fi
fi

# --- image: base + project + test harness -----------------------------------
make_layer() {
	local root=$1
	tar -C "$stage" -cf - . | tar -C "$root" -xf - --keep-directory-symlink
	install -d -m 0755 "$root/usr/local/lib/xdt"
	install -m 0755 $(ls "$here"/guest/xdt-* | grep -v '\.c$') "$root/usr/local/lib/xdt/"
	install -m 0755 "$here"/linger/xdt-* "$root/usr/local/lib/xdt/"
	install -m 0755 "$here"/follow/xdt-* "$root/usr/local/lib/xdt/"
	install -m 0755 "$here"/wayland/xdt-* "$root/usr/local/lib/xdt/"
	# The guest has no compiler: the C helpers are built here, static, so
	# that they do not depend on the host's libc version.
	local c
	for c in "$here"/guest/xdt-*.c; do
		${CC:-cc} -O2 -Wall -static -o "$root/usr/local/lib/xdt/$(basename "$c" .c)" "$c"
	done
	if [ -x "$xorg_patched" ]; then
		install -m 0755 "$xorg_patched" "$root/usr/local/lib/xdt/Xorg-patched"
	fi
	# (the modules: the directory of drivers/, XLibre's .../modules/xlibre-25)
	local sd md
	for sd in $libseat_stages; do
		install -d -m 0755 "$root/usr/local/lib/xdt/${sd%%=*}-libseat"
		install -m 0755 "${sd#*=}/usr/bin/Xorg" "$root/usr/local/lib/xdt/${sd%%=*}-libseat/Xorg"
		md=$(find "${sd#*=}" -path '*/xorg/modules*/drivers/modesetting_drv.so' | head -n 1)
		cp -a "${md%/drivers/*}" "$root/usr/local/lib/xdt/${sd%%=*}-libseat/modules"
	done
	# Xorg's upstream server (r3): its binary and its own modules (the
	# modesetting driver built for its video ABI); the input driver is
	# the suite's, loaded with -ignoreABI (xdt-user's startx-upstream)
	if [ -n "$upstream_stage" ]; then
		install -d -m 0755 "$root/usr/local/lib/xdt/xorg-upstream"
		install -m 0755 "$upstream_stage/usr/bin/Xorg" "$root/usr/local/lib/xdt/xorg-upstream/Xorg"
		md=$(find "$upstream_stage" -path '*/xorg/modules/drivers/modesetting_drv.so' | head -n 1)
		cp -a "${md%/drivers/*}" "$root/usr/local/lib/xdt/xorg-upstream/modules"
	fi
	# No logind of any kind in the Wayland image: sway's polkitd pulls in
	# elogind, whose PAM module and daemon would manage the sessions (and
	# make pam_xdevices stand down). Purged, polkitd's dependency broken.
	if [ "$wayland" = 1 ] && chroot "$root" dpkg -s elogind >/dev/null 2>&1; then
		chroot "$root" dpkg --purge --force-depends elogind libpam-elogind >&2
	fi
	# Debian 13's libseat1 depends on seatd or a logind: seatd came in,
	# and its init script would start a root seat daemon at boot. The
	# compositors here (w6) take xdevices-vt-run's seat: not started.
	if [ -e "$root/etc/init.d/seatd" ]; then
		chroot "$root" update-rc.d seatd disable >&2
	fi
	[ "$inits" = 0 ] || inits_layer "$root"
	echo xdt >"$root/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 xdt\n' >"$root/etc/hosts"
	echo '/dev/vda / ext4 rw,errors=remount-ro 0 0' >"$root/etc/fstab"
	# No password prompts anywhere: autologin only, root has no password
	# (the follow scenarios set passwords for the time they run).
	chroot "$root" passwd -d root >/dev/null
	# carol is in group input: she reads event nodes by group permission.
	for u in alice bob carol; do
		chroot "$root" id "$u" >/dev/null 2>&1 ||
			chroot "$root" useradd -m -s /bin/bash "$u"
		[ "$u" != carol ] || chroot "$root" usermod -a -G input carol
		install -m 0644 "$here/guest/profile" "$root/home/$u/.profile"
		chroot "$root" chown "$u:$u" "/home/$u/.profile"
	done
	# Enabled the way a user would: one line in /etc/pam.d/login.
	if [ -n "$(find "$root/usr/lib" "$root/lib" -name pam_xdevices.so 2>/dev/null | head -1)" ]; then
		echo 'session optional pam_xdevices.so' >>"$root/etc/pam.d/login"
	fi
	# tty1/tty2: real agetty --autologin running the real login, each
	# gated so that the test orchestrator decides when a login happens.
	# tty3: a gated agetty with a login prompt (keys typed via sendkey).
	sed -i -e '/^[1-6]:[0-9]*:respawn:/d' "$root/etc/inittab"
	cat >>"$root/etc/inittab" <<-'EOT'
	1:2345:respawn:/usr/local/lib/xdt/xdt-gate tty1 /sbin/agetty --autologin alice --noclear tty1 linux
	2:2345:respawn:/usr/local/lib/xdt/xdt-gate tty2 /sbin/agetty --autologin bob --noclear tty2 linux
	3:2345:respawn:/usr/local/lib/xdt/xdt-gate tty3 /sbin/agetty --noclear tty3 linux
	xd:2345:once:/usr/local/lib/xdt/xdt-orchestrate
	EOT
	# Quiet, fast boot.
	sed -i 's/^#\?\(VERBOSE=\).*/\1no/' "$root/etc/default/rcS" 2>/dev/null || true
	echo 'kernel.printk = 3 4 1 3' >"$root/etc/sysctl.d/10-quiet.conf"
}
# The inits image: xdevicesd enabled for OpenRC and for runit, each with
# the one command its documentation gives; the test's gettys and
# orchestrator as runit services too (inittab is not read under runit).
inits_layer() {
	local root=$1 sv=$1/etc/runit/runsvdir/default t u
	install -m 0755 "$here"/inits/xdt-* "$root/usr/local/lib/xdt/"
	chroot "$root" rc-update add xdevicesd default >&2
	# Debian's runit: /etc/service is runsvdir/current (-> default)
	chroot "$root" ln -s /etc/sv/xdevicesd /etc/service/
	for t in 1 2 3; do
		u=
		case $t in 1) u="--autologin alice" ;; 2) u="--autologin bob" ;; esac
		install -d "$root/etc/sv/xdt-tty$t"
		printf '#!/bin/sh\nexec /usr/local/lib/xdt/xdt-gate tty%s /sbin/agetty %s --noclear tty%s linux\n' \
			"$t" "$u" "$t" >"$root/etc/sv/xdt-tty$t/run"
		chmod 0755 "$root/etc/sv/xdt-tty$t/run"
		ln -sfn "/etc/sv/xdt-tty$t" "$sv/xdt-tty$t"
	done
	install -d "$root/etc/sv/xdt-orchestrate"
	printf '#!/bin/sh\n/usr/local/lib/xdt/xdt-orchestrate\nexec sleep 100000\n' >"$root/etc/sv/xdt-orchestrate/run"
	chmod 0755 "$root/etc/sv/xdt-orchestrate/run"
	ln -sfn /etc/sv/xdt-orchestrate "$sv/xdt-orchestrate"
}
xorg_hash=none
[ -x "$xorg_patched" ] && xorg_hash=$(sha256sum <"$xorg_patched" | cut -c1-16)
img_key=$( {
	echo "$base_key $xorg_hash"
	# each build directory's name holds the hash of its inputs
	echo "libseat:$libseat_stages"
	# the upstream server's build directory is named by its inputs' hash
	[ -z "$upstream_stage" ] || echo "upstream:$upstream_stage"
	declare -f make_layer
	[ "$inits" = 0 ] || { declare -f inits_layer; cat "$here"/inits/*; }
	(cd "$here" && cat guest/* linger/* follow/* wayland/* packages.list)
	(cd "$stage" && find . -printf '%p %m %l\n' | sort && find . -type f -print0 | sort -z | xargs -0r cat)
} | hash_stream)
img=$cache/img-$img_key
if [ ! -e "$img/.done" ]; then
	say "building image $img (project: $project, patched Xorg: $([ "$xorg_hash" = none ] && echo absent || echo present)${libseat_stages:+, with libseat:$libseat_stages}${upstream_stage:+, upstream Xorg: $upstream_stage})"
	t0=$SECONDS
	rm -rf "$img" "$img.tmp"
	mkdir -p "$img.tmp"
	root=$img.tmp/root
	cp -a "$base" "$root"
	rm -f "$root/.done"
	make_layer "$root"
	cp "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -1)" "$img.tmp/vmlinuz"
	cp "$(ls "$root"/boot/initrd.img-* | sort -V | tail -1)" "$img.tmp/initrd.img"
	size_mb=$(( $(du -sm "$root" | cut -f1) + 400 ))
	mkfs.ext4 -q -F -L xdt -d "$root" "$img.tmp/rootfs.ext4" "${size_mb}M"
	rm -rf "$root"
	{
		echo "project=$project"
		echo "patched_xorg=$([ "$xorg_hash" = none ] && echo absent || echo present)"
		echo "upstream_xorg=$([ -n "$upstream_stage" ] && echo present || echo absent)"
		echo "base=$base_key"
		echo "image=$img_key"
	} >"$img.tmp/info"
	touch "$img.tmp/.done"
	mv "$img.tmp" "$img"
	say "image built in $((SECONDS - t0)) s"
	# Keep the newest three images.
	ls -dt "$cache"/img-* 2>/dev/null | grep -v '\.tmp$' | tail -n +4 | xargs -r rm -rf
else
	say "image cached: $img"
fi
echo "$img"
