#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The qemu suite: build (or reuse) the patched Xorg and the test image, boot
# it once and run every scenario. Prints a line per scenario and "N passed,
# N failed, N skipped"; exits non-zero if any failed. A scenario that skips
# fails, unless VM_ALLOW_SKIP names it: then it prints "SKIP (allowed): ...".
# Screenshots and logs go to OUT.
#
# usage: check-vm.sh [--srcdir DIR] [--builddir DIR] [--out DIR] [--scenarios s1,s2,...]
# VM_SUITE=trixie: a Debian 13 guest (build-image.sh), by default the VT
# round trips first (r1, r2: the order in which a fresh boot once lost
# alice's VT and devices at her first login), then rootless-startx (s1),
# xinit-patched-xorg (s3, trixie's patched Xorg, built in its build root)
# and 20 logins in a row with xdevicesd (t1, login-repeat: util-linux
# login), then weston on xdevices-vt-run's seat (w6, roundtrip-weston:
# Debian 13's weston 14; its image has weston and foot), then a sweep
# over a process whose map lock is held (l7, lingering-mapstall, on
# Linux 6.12); OUT gets a -trixie suffix.
# VM_WAYLAND=1: the Wayland image (build-image.sh: sway, cage, foot, no
# seatd, no logind), by default only its scenarios w1 (wayland-sway), w2
# (roundtrip-sway), w3 (xorg-libseat), w4 (xlibre-libseat) and w5
# (roundtrip-cage, last: cage leaves its Xwayland display behind), with
# -vga virtio (run-vm.py); OUT gets a -wayland suffix. VM_TRIPS=N: the
# VT round trips of w2, w3, w4 and w5 (the guest's xdt.trips=N; 5 without
# it; make check-vm-servers: 20). The X servers of w3 and w4 are built
# first (xserver-patch/build-xorg-libseat.sh, cached under a
# hash of its inputs, as build-xorg.sh's); VM_ALLOW_SKIP=xorg-libseat or
# xlibre-libseat builds none of that one, and its scenario may skip.
# VM_INITS=1: the inits image (build-image.sh: openrc, runit, busybox; the
# project installed for OpenRC and runit), booted once per init, each boot
# with its scenarios (inits/xdt-inits-scenarios): OpenRC under sysvinit's
# inittab (o1, o2), then runit as PID 1 (init=/lib/runit/runit-init: u1,
# u2), then OpenRC again without udev and with busybox mdev (noinit=udev:
# m1); --scenarios takes o*/u*/m* ids, each run in the boot of its init;
# OUT gets an -inits suffix, a directory per boot.
# VM_TRIPS=N: the round trips' loops of r1, r2, r3 and w6 take N trips each
# (default 20, and 5 with VM_SUITE=trixie). r3 (roundtrip-xorg-upstream,
# VM_SUITE=trixie only, not in its default list: make check-vm-upstream)
# first builds Xorg's upstream server with the upstream series
# (xserver-patch/build-xorg-upstream.sh, cached), unless VM_ALLOW_SKIP
# names it.
# Env: VM_ALLOW_SKIP=name,... (e.g. xinit-patched-xorg: the patched Xorg is
#      then not built, and its scenario may skip); XSERVER_BUILDDIR (the
#      patched Xorg's build directory, as for make check-xserver; default
#      build-xorg.sh's cache, /var/cache/pam_xdevices-xorg/SUITE-KEY, which
#      build-image.sh finds the same way; not for VM_SUITE=trixie, which
#      always uses the cache); VM_RETRY=N: up to N scenarios that failed
#      run once more, in a second boot (run-vm.py --retry; .ci/run sets
#      2): each prints "RETRIED: name: ..." with its first failure, then
#      its second verdict, which counts (default 0: none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$here/../.. builddir= out=
scenarios=s1,s4,s8,s5,s6,s7,l1,l2,l3,l5,l6,l7,s3,s2,f1,f2,f3,x1,x2,r1,r2,l4
suite=${VM_SUITE:-bookworm}
[ "$suite" = bookworm ] || scenarios=r1,r2,r3,s1,s3,t1,w6,l7
[ "${VM_WAYLAND:-0}" = 0 ] || scenarios=w1,w2,w3,w4,w5
[ "${VM_INITS:-0}" = 0 ] || scenarios=o1,o2,u1,u2,m1
while [ $# -gt 0 ]; do
	case $1 in
	--srcdir) srcdir=$2; shift 2 ;;
	--builddir) builddir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--scenarios) scenarios=$2; shift 2 ;;
	*) echo "usage: $0 [--srcdir DIR] [--builddir DIR] [--out DIR] [--scenarios LIST]" >&2; exit 2 ;;
	esac
done
if [ -z "$out" ]; then
	if [ -n "$builddir" ]; then out=$builddir/tests/vm/out; else out=$here/out; fi
	[ "$suite" = bookworm ] || out=$out-$suite
	[ "${VM_WAYLAND:-0}" = 0 ] || out=$out-wayland
	[ "${VM_INITS:-0}" = 0 ] || out=$out-inits
fi
for tool in qemu-system-x86_64 mmdebstrap mkfs.ext4 python3; do
	command -v "$tool" >/dev/null || {
		echo "check-vm: missing $tool (apt-get install qemu-system-x86 mmdebstrap e2fsprogs python3)" >&2
		exit 1
	}
done
allow_skip=${VM_ALLOW_SKIP:-}
retry=${VM_RETRY:-0}
case $retry in
'' | *[!0-9]*) echo "check-vm: bad VM_RETRY '$retry' (a number of scenarios)" >&2; exit 2 ;;
esac
case ",$allow_skip," in
*,xinit-patched-xorg,* | *,s3,*) build_xorg=0 ;;
*) build_xorg=1 ;;
esac
for s in $(echo "$allow_skip" | tr , ' '); do
	echo "check-vm: *** VM_ALLOW_SKIP: $s may be skipped: a SKIP of it will not fail the suite ***"
done
# The patched Xorg goes into the image: build-image.sh asks build-xorg.sh
# for its directory as this script does (XSERVER_BUILDDIR, else its cache
# under a hash of its inputs, reused when it exists).
if [ "$suite" != bookworm ]; then
	# trixie's patched Xorg, built in its build root (build-xorg.sh's
	# XSERVER_SUITE), in the cache, where build-image.sh looks for it.
	export XSERVER_SUITE=$suite
	unset XSERVER_BUILDDIR
fi
xorg_builddir=$(sh "$srcdir/xserver-patch/build-xorg.sh" --print-builddir)
want_xorg=0
case ",$scenarios," in *,s3,* | *,xinit-patched-xorg,* | *,f1,* | *,follow-x-switch,* | *,r2,* | *,roundtrip-xorg-patched,*) want_xorg=1 ;; esac
t0=$SECONDS
if [ "$want_xorg" = 1 ] && [ "$build_xorg" = 1 ]; then
	echo "check-vm: patched Xorg in $xorg_builddir (built once, then cached; VM_ALLOW_SKIP=xinit-patched-xorg skips it)"
	if ! sh "$srcdir/xserver-patch/build-xorg.sh" >&2; then
		echo "check-vm: building the patched Xorg failed (see $xorg_builddir/build.log)" >&2
		echo "FAIL: xinit-patched-xorg: no patched Xorg (xserver-patch/build-xorg.sh failed)"
		exit 1
	fi
	echo "check-vm: patched Xorg ready in $((SECONDS - t0)) s"
elif [ "$want_xorg" = 1 ]; then
	echo "check-vm: *** the patched Xorg is not built (VM_ALLOW_SKIP): xinit-patched-xorg runs only if a cached one exists ***"
fi
# The X servers with libseat of the Wayland image's w3 and w4: each built
# once, then found in its cache (where build-image.sh looks for it).
if [ "${VM_WAYLAND:-0}" = 1 ]; then
	for s in xorg:w3:xorg-libseat xlibre:w4:xlibre-libseat; do
		server=${s%%:*} id=${s#*:} id=${id%%:*} name=${s##*:}
		case ",$scenarios," in *,"$id",* | *,"$name",*) ;; *) continue ;; esac
		case ",$allow_skip," in *,"$id",* | *,"$name",*) continue ;; esac
		t0=$SECONDS
		if ! XORG_LIBSEAT_SERVER=$server sh "$srcdir/xserver-patch/build-xorg-libseat.sh" >&2; then
			echo "FAIL: $name: no $server with libseat (xserver-patch/build-xorg-libseat.sh failed)"
			exit 1
		fi
		echo "check-vm: $server with libseat ready in $((SECONDS - t0)) s"
	done
fi
# Xorg's upstream server with the upstream series (r3, the Debian 13
# image): built once in the trixie build root, then found in its cache
# (xserver-patch/build-xorg-upstream.sh, where build-image.sh looks).
if [ "$suite" = trixie ]; then
	case ",$scenarios," in
	*,r3,* | *,roundtrip-xorg-upstream,*)
		case ",$allow_skip," in
		*,r3,* | *,roundtrip-xorg-upstream,*) ;;
		*)
			t0=$SECONDS
			if ! XORG_UPSTREAM_SUITE=trixie XORG_UPSTREAM_BUILDDIR='' sh "$srcdir/xserver-patch/build-xorg-upstream.sh" >&2; then
				echo "FAIL: roundtrip-xorg-upstream: no upstream Xorg (xserver-patch/build-xorg-upstream.sh failed)"
				exit 1
			fi
			echo "check-vm: upstream Xorg ready in $((SECONDS - t0)) s" ;;
		esac ;;
	esac
fi
t0=$SECONDS
img=$("$here/build-image.sh" --srcdir "$srcdir" | tail -n 1)
echo "check-vm: $suite$([ "${VM_WAYLAND:-0}" = 0 ] || echo " Wayland")$([ "${VM_INITS:-0}" = 0 ] || echo " inits") image $img ready in $((SECONDS - t0)) s"
rm -rf "$out"
if [ "${VM_INITS:-0}" = 1 ]; then
	# one boot per init, one qemu at a time; the summary adds them up
	rc=0 passed=0 failed=0
	mkdir -p "$out"
	# name:id letter:kernel command line
	for boot in openrc:o: runit:u:init=/lib/runit/runit-init mdev:m:noinit=udev; do
		init=${boot%%:*} append=${boot#*:*:} id=${boot#*:}
		id=${id%%:*}
		list=$(echo "$scenarios" | tr , '\n' | { grep -E "^(${id}[0-9]+|$init-.*)\$" || true; } | paste -sd, -)
		[ -n "$list" ] || continue
		echo "check-vm: boot $init${append:+ ($append)}: $list"
		python3 "$here/run-vm.py" --image "$img" --out "$out/$init" --scenarios "$list" \
			--allow-skip "$allow_skip" --append "$append" --retry "$retry" | tee "$out/$init.summary" || rc=1
		passed=$((passed + $(sed -n 's/^\([0-9]*\) passed.*/\1/p' "$out/$init.summary")))
		failed=$((failed + $(sed -n 's/.* \([0-9]*\) failed.*/\1/p' "$out/$init.summary")))
	done
	echo "check-vm: inits: $passed passed, $failed failed; image and boots $((SECONDS - t0)) s"
	exit $rc
fi
vga=std
[ "${VM_WAYLAND:-0}" = 0 ] || vga=virtio
# VM_TRIPS: the guest's xdt.trips. Without it r1 and r2 take 20 trips a
# loop and the Wayland lane's round trips 5 (their scenarios' defaults),
# but the Debian 13 guest takes 5: its round trips prove that its login,
# kernel and Xorg give the devices back, while the 20-trip figures and
# the device ids kept over 20 trips are the Debian 12 suite's (the same
# daemon and patch series).
trips=${VM_TRIPS:-}
[ -n "$trips" ] || [ "$suite" = bookworm ] || trips=5
case $trips in
'') ;;
*[!0-9]* | 0*) echo "check-vm: bad VM_TRIPS '$trips' (a number of round trips)" >&2; exit 2 ;;
esac
exec python3 "$here/run-vm.py" --image "$img" --out "$out" --scenarios "$scenarios" --allow-skip "$allow_skip" --vga "$vga" \
	--retry "$retry" --append "${trips:+xdt.trips=$trips}"
