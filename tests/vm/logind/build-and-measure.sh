#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# For comparison with f3 (follow-latency): systemd-logind's switch-to-ACL
# latency. Builds (or finds in its cache) a Debian 12 guest booting systemd
# with logind, dbus and pam_systemd, where getty@tty1 and getty@tty2 log in
# alice and bob; the guest (xdt-logind-measure, a unit at boot) waits until
# both sessions are on seat0, times COUNT switches tty1 <-> tty2 with
# "xdt-vtlatency --acl-only" on /dev/dri/card0 (uaccess-tagged: logind moves
# its ACL; it moves no input node and revokes no plain fd, so only the ACL
# is timed), prints the results on the serial console and powers off.
# The project is not installed in this guest.
# Then, for a like-for-like figure, the same measurement with xdevicesd: the
# qemu suite's image (build-image.sh, the project built from SRCDIR, in a
# cache of its own) booted with xdt-ours-measure in place of the
# orchestrator, on the same virtual hardware, right after (--no-ours: not).
# Each guest first starts N idle processes of nobody (--idle, default 1000),
# as a busy machine has: logind's switch does not look at them, ours reads
# the departing user's processes only (its table of process events).
#
# usage: build-and-measure.sh [--srcdir DIR] [--out DIR] [--count N]
#                             [--timeout SECONDS] [--no-ours] [--idle N]
#        build-and-measure.sh --roundtrip [--trips N] [--srcdir DIR] [--out DIR]
# --roundtrip (make bench-vm-logind-roundtrip): the same guest, booted by
# run-vm.py as the qemu suite's, runs xdt-logind-roundtrip instead: r1's
# round trips with stock Xorg on logind (g1, -vga std as r1) and w2's with
# sway on libseat's logind backend (g2, -vga virtio as w2), N trips each
# (default 20), and prints run-vm.py's summary with their first-key
# figures; exits non-zero when a scenario fails. OUT/g1 and OUT/g2 get
# each boot's logs and screenshots.
# Prints "logind switch-to-ACL latency (qemu TCG, /dev/dri/card0): median
# X ms, max Y ms over N switches", then the same line for xdevicesd, and
# exits 0; non-zero only if a figure could not be made (image, boot,
# sessions, or switches whose ACL did not move within 5 s). OUT (default
# tests/vm/out-logind) gets each guest's serial console.
# Cache: $XDT_LOGIND_CACHE, default /var/cache/pam_xdevices-vm-logind; the
# base rootfs and the image are cached apart, each under a hash of its
# inputs; ours/ there is build-image.sh's cache (seeded with the qemu
# suite's base rootfs, hard-linked, when that one is complete).
# Env: XDT_MIRROR, XDT_SECURITY_MIRROR (as build-image.sh), XDT_ACCEL (tcg).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../../.." && pwd)
out=$here/../out-logind count=100 timeout=900 ours=1 idle=1000 roundtrip=0 trips=20
while [ $# -gt 0 ]; do
	case $1 in
	--srcdir) srcdir=$(cd "$2" && pwd); shift 2 ;;
	--no-ours) ours=0; shift ;;
	--roundtrip) roundtrip=1; shift ;;
	--trips) trips=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--idle) idle=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	*) echo "usage: $0 [--srcdir DIR] [--out DIR] [--count N] [--timeout SECONDS] [--no-ours] [--idle N] | --roundtrip [--trips N]" >&2; exit 2 ;;
	esac
done
case $count in '' | *[!0-9]*) echo "bench-vm-logind: bad --count" >&2; exit 2 ;; esac
case $idle in '' | *[!0-9]*) echo "bench-vm-logind: bad --idle" >&2; exit 2 ;; esac
case $trips in '' | 0 | *[!0-9]*) echo "bench-vm-logind: bad --trips" >&2; exit 2 ;; esac

say() { echo "bench-vm-logind: $*" >&2; }
for tool in mmdebstrap mkfs.ext4 debugfs qemu-system-x86_64 "${CC:-cc}"; do
	command -v "$tool" >/dev/null || {
		say "missing $tool (apt-get install mmdebstrap e2fsprogs qemu-system-x86 gcc)"
		exit 1
	}
done
[ "$(id -u)" = 0 ] || { say "must run as root (mmdebstrap, chroot)"; exit 1; }

cache=${XDT_LOGIND_CACHE:-/var/cache/pam_xdevices-vm-logind}
mirror=${XDT_MIRROR:-http://deb.debian.org/debian}
security_mirror=${XDT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
mkdir -p "$cache" "$out"
exec 9>"$cache/.lock"
flock 9
hash_stream() { sha256sum | cut -c1-16; }

# --- base: Debian 12 with systemd, packages only ----------------------------
make_base() {
	local root=$1 pkgs
	pkgs=$(grep -v '^#' "$here/packages.list" | xargs | tr ' ' ,)
	nice mmdebstrap --variant=apt --include="$pkgs" \
		--aptopt='APT::Install-Recommends "false"' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		bookworm "$root" \
		"deb $mirror bookworm main" \
		"deb $mirror bookworm-updates main" \
		"deb $security_mirror bookworm-security main"
}
base_key=$( { cat "$here/packages.list"; declare -f make_base; echo "$mirror $security_mirror"; } | hash_stream)
base=$cache/base-$base_key
if [ ! -e "$base/.done" ]; then
	say "building base rootfs $base (mmdebstrap, a few minutes)"
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

# --- image: base + the measurement ------------------------------------------
make_layer() {
	local root=$1 u n
	install -d -m 0755 "$root/usr/local/lib/xdt"
	# the guest has no compiler: static, independent of the host's libc
	${CC:-cc} -O2 -Wall -static -o "$root/usr/local/lib/xdt/xdt-vtlatency" "$here/../guest/xdt-vtlatency.c"
	install -m 0755 "$here/xdt-logind-measure" "$root/usr/local/lib/xdt/"
	install -m 0644 "$here/xdt-logind-measure.service" "$root/etc/systemd/system/"
	ln -sf ../xdt-logind-measure.service "$root/etc/systemd/system/multi-user.target.wants/"
	# --roundtrip: r1's and w2's trips on logind, with the qemu suite's
	# own functions and clients (the project itself is not installed)
	${CC:-cc} -O2 -Wall -static -o "$root/usr/local/lib/xdt/xdt-nodewatch" "$here/../guest/xdt-nodewatch.c"
	install -m 0755 "$here/xdt-logind-roundtrip" "$here/xdt-logind-user" "$here/../guest/xdt-lib" \
		"$here/../guest/xdt-typed" "$here/../guest/xdt-xinitrc" "$here/../guest/xdt-xinput" \
		"$here/../follow/xdt-roundtrip-scenarios" "$here/../wayland/xdt-wayland-scenarios" \
		"$here/../wayland/xdt-foot-client" "$root/usr/local/lib/xdt/"
	install -m 0644 "$here/../wayland/xdt-foot.ini" "$here/../wayland/xdt-sway-seat.config" "$root/usr/local/lib/xdt/"
	install -m 0644 "$here/xdt-logind-roundtrip.service" "$root/etc/systemd/system/"
	ln -sf ../xdt-logind-roundtrip.service "$root/etc/systemd/system/multi-user.target.wants/"
	echo xdt-logind >"$root/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 xdt-logind\n' >"$root/etc/hosts"
	echo '/dev/vda / ext4 rw,errors=remount-ro 0 0' >"$root/etc/fstab"
	chroot "$root" passwd -d root >/dev/null
	# the serial console carries the results only: no getty there
	ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
	# tty1: alice, tty2: bob, logged in by the distribution's agetty and
	# login at boot (pam_systemd registers each as a session of seat0)
	n=1
	for u in alice bob; do
		chroot "$root" id "$u" >/dev/null 2>&1 || chroot "$root" useradd -m -s /bin/bash "$u"
		printf 'case $(tty) in /dev/tty[12]) exec /usr/local/lib/xdt/xdt-logind-user ;; esac\n' \
			>"$root/home/$u/.bash_profile"
		chroot "$root" chown "$u:$u" "/home/$u/.bash_profile"
		install -d "$root/etc/systemd/system/getty@tty$n.service.d"
		printf '[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin %s --noclear %%I $TERM\n' "$u" \
			>"$root/etc/systemd/system/getty@tty$n.service.d/autologin.conf"
		ln -sf /lib/systemd/system/getty@.service "$root/etc/systemd/system/getty.target.wants/getty@tty$n.service"
		n=$((n + 1))
	done
	echo 'kernel.printk = 3 4 1 3' >"$root/etc/sysctl.d/10-quiet.conf"
}
img_key=$( {
	echo "$base_key"
	declare -f make_layer
	cat "$here/xdt-logind-measure" "$here/xdt-logind-measure.service" "$here/../guest/xdt-vtlatency.c" \
		"$here/xdt-logind-roundtrip" "$here/xdt-logind-user" "$here/xdt-logind-roundtrip.service" \
		"$here"/../guest/xdt-{nodewatch.c,lib,typed,xinitrc,xinput} "$here/../follow/xdt-roundtrip-scenarios" \
		"$here"/../wayland/{xdt-wayland-scenarios,xdt-foot-client,xdt-foot.ini,xdt-sway-seat.config}
	"${CC:-cc}" --version | head -1
} | hash_stream)
img=$cache/img-$img_key
if [ ! -e "$img/.done" ]; then
	say "building image $img"
	t0=$SECONDS
	rm -rf "$img" "$img.tmp"
	mkdir -p "$img.tmp"
	root=$img.tmp/root
	cp -a "$base" "$root"
	rm -f "$root/.done"
	make_layer "$root"
	cp "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -1)" "$img.tmp/vmlinuz"
	cp "$(ls "$root"/boot/initrd.img-* | sort -V | tail -1)" "$img.tmp/initrd.img"
	size_mb=$(($(du -sm "$root" | cut -f1) + 300))
	mkfs.ext4 -q -F -L xdt-logind -d "$root" "$img.tmp/rootfs.ext4" "${size_mb}M"
	rm -rf "$root"
	touch "$img.tmp/.done"
	mv "$img.tmp" "$img"
	say "image built in $((SECONDS - t0)) s"
	ls -dt "$cache"/img-* 2>/dev/null | grep -v '\.tmp$' | tail -n +3 | xargs -r rm -rf
else
	say "image cached: $img"
fi

# --- the project's own image, with xdt-ours-measure in place of the orchestrator
# make_ours IMG FILE: FILE is IMG's rootfs whose inittab runs xdt-ours-measure
make_ours() {
	local img=$1 f=$2 t
	t=$(mktemp -d)
	cp --sparse=always "$img/rootfs.ext4" "$f"
	debugfs -R 'cat /etc/inittab' "$f" 2>/dev/null |
		sed 's|^xd:2345:once:.*|xd:2345:once:/usr/local/lib/xdt/xdt-ours-measure|' >"$t/inittab"
	grep -q '^xd:2345:once:/usr/local/lib/xdt/xdt-ours-measure$' "$t/inittab" || {
		say "no orchestrator line in $img's inittab"
		rm -rf "$t"
		return 1
	}
	cp "$here/xdt-ours-measure" "$t/"
	debugfs -w -f - "$f" >/dev/null 2>&1 <<-EOT
	cd /etc
	rm inittab
	write $t/inittab inittab
	sif inittab mode 0100644
	sif inittab uid 0
	sif inittab gid 0
	cd /usr/local/lib/xdt
	write $t/xdt-ours-measure xdt-ours-measure
	sif xdt-ours-measure mode 0100755
	sif xdt-ours-measure uid 0
	sif xdt-ours-measure gid 0
	EOT
	rm -rf "$t"
	debugfs -R 'cat /usr/local/lib/xdt/xdt-ours-measure' "$f" 2>/dev/null | cmp -s - "$here/xdt-ours-measure" || {
		say "could not write xdt-ours-measure into $f"
		return 1
	}
}
# --- --roundtrip: run-vm.py boots the image, once per scenario ------------
if [ "$roundtrip" = 1 ]; then
	status=0
	for sv in g1:std g2:virtio; do
		say "${sv%:*}: $trips round trips (run-vm.py, -vga ${sv#*:}; host load $(cut -d' ' -f1-3 /proc/loadavg))"
		python3 "$here/../run-vm.py" --image "$img" --out "$out/${sv%:*}" --scenarios "${sv%:*}" \
			--vga "${sv#*:}" --append "xdt.trips=$trips" --scenario-timeout 600 || status=1
	done
	exit $status
fi

ours_rootfs=
if [ "$ours" = 1 ]; then
	ocache=$cache/ours
	mkdir -p "$ocache"
	# the qemu suite's base rootfs (packages only, slow to build), if complete
	if exec 8>>/var/cache/pam_xdevices-vm/.lock && flock -w 300 8; then
		for b in /var/cache/pam_xdevices-vm/base-*; do
			[ -e "$b/.done" ] && [ ! -e "$ocache/${b##*/}" ] || continue
			cp -al "$b" "$ocache/${b##*/}.tmp" 2>/dev/null || cp -a "$b" "$ocache/${b##*/}.tmp"
			mv "$ocache/${b##*/}.tmp" "$ocache/${b##*/}"
		done
		exec 8>&-
	fi 2>/dev/null
	say "building the project's test image (build-image.sh, cache $ocache)"
	oimg=$(env -u VM_SUITE XDT_CACHE="$ocache" bash "$here/../build-image.sh" --srcdir "$srcdir" | tail -n 1)
	okey=$( { echo "$oimg"; cat "$oimg/info" "$here/xdt-ours-measure"; declare -f make_ours; } | hash_stream)
	ours_rootfs=$ocache/run-$okey.ext4
	if [ ! -e "$ours_rootfs" ]; then
		rm -f "$ocache"/run-*.ext4
		make_ours "$oimg" "$ours_rootfs.tmp"
		mv "$ours_rootfs.tmp" "$ours_rootfs"
	fi
fi

# --- run: boot, wait for the guest's result, kill qemu ----------------------
accel=${XDT_ACCEL:-tcg}
# run_guest NAME KERNEL INITRD ROOTFS: boots it (the same virtual hardware
# as run-vm.py's, -vga std: bochs-drm card0), waits for XDT-BENCH-DONE on the
# serial console ($out/NAME-serial.log), kills qemu. Sets FIGURE to the
# guest's summary (without its label); returns the guest's rc, 1 if none.
FIGURE=
run_guest() {
	local name=$1 serial=$out/$1-serial.log t0 done_line qemu rc
	: >"$serial"
	say "$name: booting the guest (accel $accel; results within $timeout s; host load $(cut -d' ' -f1-3 /proc/loadavg))"
	t0=$SECONDS
	nice qemu-system-x86_64 -machine "pc,accel=$accel" -smp 2 -m 1536 \
		-nodefaults -no-user-config \
		-kernel "$2" -initrd "$3" \
		-append "root=/dev/vda rw console=ttyS0 quiet loglevel=3 xdt.count=$count xdt.idle=$idle" \
		-drive "file=$4,format=raw,if=virtio" -snapshot \
		-vga std -display none \
		-device qemu-xhci,id=xhci -device usb-kbd,bus=xhci.0 -device usb-tablet,bus=xhci.0 \
		-chardev "file,id=con,path=$serial" -serial chardev:con \
		-nic none -no-reboot </dev/null >"$out/$name-qemu.log" 2>&1 &
	qemu=$!
	done_line=
	while [ $((SECONDS - t0)) -lt "$timeout" ]; do
		done_line=$(grep -a -m1 '^XDT-BENCH-DONE' "$serial" | tr -d '\r' || true)
		[ -n "$done_line" ] && break
		kill -0 "$qemu" 2>/dev/null || break
		sleep 2
	done
	sleep 1
	kill "$qemu" 2>/dev/null || true
	wait "$qemu" 2>/dev/null || true
	tr -d '\r' <"$serial" | grep -a '^XDT-BENCH ' | sed 's/^XDT-BENCH /  /' >&2 || true
	if [ -z "$done_line" ]; then
		say "$name: no result from the guest after $((SECONDS - t0)) s (see $serial); last lines:"
		tail -n 20 "$serial" | tr -d '\r' >&2
		return 1
	fi
	say "$name: guest ran for $((SECONDS - t0)) s"
	FIGURE=$(tr -d '\r' <"$serial" | sed -n 's/^XDT-BENCH-FIGURE switch-to-ACL latency: //p' | head -1)
	rc=${done_line#*rc=}
	[ -n "$FIGURE" ] || rc=1
	[ "$rc" = 0 ] || say "$name: the measurement could not be made (guest rc=$rc; see $serial)"
	return "$rc"
}
status=0
run_guest logind "$img/vmlinuz" "$img/initrd.img" "$img/rootfs.ext4" || status=1
figure_logind=$FIGURE
FIGURE=
if [ -n "$ours_rootfs" ]; then
	run_guest ours "$oimg/vmlinuz" "$oimg/initrd.img" "$ours_rootfs" || status=1
fi
label="(qemu ${accel^^}, /dev/dri/card0, $idle idle processes)"
[ -z "$figure_logind" ] || echo "logind switch-to-ACL latency $label: $figure_logind"
[ -z "$FIGURE" ] || echo "xdevicesd switch-to-ACL latency $label: $FIGURE"
[ -z "$ours_rootfs" ] || tr -d '\r' <"$out/ours-serial.log" | sed -n 's/^XDT-BENCH-ALSO /xdevicesd /p'
exit $status
