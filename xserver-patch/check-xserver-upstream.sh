#!/bin/sh
# SPDX-License-Identifier: MIT
# The upstream series (upstream/) against Xorg's upstream tarballs:
#  1. it applies to each tarball with "patch --fuzz=0" and no offset, and
#     with "git am" to a fresh "git init" of the tarball;
#  2. the Xorg DDX builds with it (build-xorg-upstream.sh, cached);
#  3. the built Xorg runs: "Xorg -help" lists -nohwaccess, "Xorg -version"
#     prints the version, and the binary holds the series' messages.
# Nothing here starts a display: running it rootless on a VT is the VM
# suite's business.
#
# Env: XDEV_UPSTREAM_DIR      the pristine sources (default ../shared/upstream
#                             beside the clone)
#      XORG_UPSTREAM_APPLY    tarballs the series must apply to (default: main
#                             867976ba and 26.0.99.901)
#      XORG_UPSTREAM_BUILD    tarballs to build and run (default: main)
#      XORG_UPSTREAM_SUITE    see build-xorg-upstream.sh (default trixie)
# Must run as root (the build uses apt-get and a chroot).

set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
PATCHDIR=$HERE/upstream
UPDIR=${XDEV_UPSTREAM_DIR:-$HERE/../../shared/upstream}
APPLY=${XORG_UPSTREAM_APPLY:-xorg-server-main-867976ba.tar.xz xorg-server-26.0.99.901.tar.xz}
BUILD=${XORG_UPSTREAM_BUILD:-xorg-server-main-867976ba.tar.xz}
SUITE=${XORG_UPSTREAM_SUITE:-trixie}
export XDEV_UPSTREAM_DIR="$UPDIR" XORG_UPSTREAM_SUITE="$SUITE"

fails=0
say() { echo "check-xserver-upstream: $*"; }
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; fails=$((fails + 1)); }
now() { date +%s; }
step_start() { STEP=$1; STEP_T0=$(now); say "== $1"; }
step_end() { say "== $STEP took $(( $(now) - STEP_T0 )) s"; }
patches() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$PATCHDIR/series"; }
path_of() { case $1 in */*) echo "$1" ;; *) echo "$UPDIR/$1" ;; esac; }

[ "$(id -u)" = 0 ] || { say "must run as root"; exit 1; }
T_ALL=$(now)
WORK=$(mktemp -d /var/tmp/check-xserver-upstream.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# --- 1. the series applies, without fuzz or offset ---------------------------
for t in $APPLY; do
	tb=$(path_of "$t")
	name=$(basename "$tb")
	name=${name%.tar.*}
	step_start "apply to $name"
	if [ ! -f "$tb" ]; then
		not_ok "$name: no tarball $tb (XDEV_UPSTREAM_DIR)"
		step_end
		continue
	fi
	tree=$WORK/$name
	mkdir -p "$tree"
	tar -C "$tree" --strip-components=1 -xJf "$tb"
	cp -a "$tree" "$tree.git"
	all=yes
	for p in $(patches); do
		if ! out=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch -i "$PATCHDIR/$p" 2>&1); then
			echo "$out" | sed 's/^/# /'
			not_ok "$name: $p does not apply with --fuzz=0"
			all=no
		elif echo "$out" | grep -qE 'offset|fuzz'; then
			echo "$out" | sed 's/^/# /'
			not_ok "$name: $p applies only with an offset or fuzz"
			all=no
		fi
	done
	[ $all = yes ] && ok "$name: the series applies with patch --fuzz=0, no offset"
	if command -v git >/dev/null 2>&1; then
		# shellcheck disable=SC2046
		if (cd "$tree.git" && git init -q && git add -A &&
			git -c user.name=check -c user.email=check@localhost commit -q -m "$name" &&
			git -c user.name=check -c user.email=check@localhost am -q \
				$(for p in $(patches); do echo "$PATCHDIR/$p"; done)) >"$WORK/am.log" 2>&1; then
			ok "$name: git am applies the series to a git init of the tarball"
		else
			sed 's/^/# /' "$WORK/am.log"
			not_ok "$name: git am fails"
		fi
	else
		say "no git: git am not tried"
	fi
	rm -rf "$tree" "$tree.git"
	step_end
done

# --- 2. and 3. build, then run the built server ------------------------------
for t in $BUILD; do
	tb=$(path_of "$t")
	name=$(basename "$tb")
	name=${name%.tar.*}
	step_start "build $name"
	if ! XORG_UPSTREAM_TARBALL=$tb "$HERE/build-xorg-upstream.sh"; then
		not_ok "$name: Xorg builds"
		step_end
		continue
	fi
	ok "$name: Xorg builds"
	step_end
	builddir=$(XORG_UPSTREAM_TARBALL=$tb "$HERE/build-xorg-upstream.sh" --print-builddir)

	step_start "run $name's Xorg"
	# The server links against the suite's libraries: run it in its root.
	bin=$builddir/stage/usr/bin/Xorg
	# run ARG...: Xorg ARG...; trace ARG...: the same under strace, for
	# prctl() and capset()
	if [ "$SUITE" = host ]; then
		run() { "$bin" "$@"; }
		trace() { strace -e trace=prctl,capset "$bin" "$@"; }
		command -v strace >/dev/null 2>&1 && has_strace=yes || has_strace=no
	else
		in_root() { "$HERE/../tools/suite-chroot.sh" "$SUITE" run "$builddir=/build" -- "$@"; }
		run() { in_root /build/stage/usr/bin/Xorg "$@"; }
		trace() { in_root strace -e trace=prctl,capset /build/stage/usr/bin/Xorg "$@"; }
		[ -x "$("$HERE/../tools/suite-chroot.sh" "$SUITE" path)/usr/bin/strace" ] &&
			has_strace=yes || has_strace=no
	fi
	if run -help >"$WORK/help" 2>&1 && grep -q -- '^-nohwaccess ' "$WORK/help"; then
		ok "$name: Xorg -help lists -nohwaccess: $(grep -- '^-nohwaccess ' "$WORK/help")"
	else
		sed 's/^/# /' "$WORK/help" | tail -n 20
		not_ok "$name: Xorg -help lists -nohwaccess"
	fi
	if run -version >"$WORK/version" 2>&1 && grep -q 'X Server' "$WORK/version"; then
		ok "$name: Xorg -version: $(grep -m1 'X Server' "$WORK/version")"
	else
		sed 's/^/# /' "$WORK/version" | tail -n 20
		not_ok "$name: Xorg -version runs"
	fi
	# -nohwaccess drops CAP_SYS_RAWIO as soon as it is read (root here):
	# out of the bounding set, and a capset() without it; never without
	# the option.
	if [ "$has_strace" = no ]; then
		say "no strace: -nohwaccess's capability drop not checked"
	else
		trace -nohwaccess -version >"$WORK/trace" 2>&1 || :
		if grep -q '^prctl(PR_CAPBSET_DROP, CAP_SYS_RAWIO) *= 0' "$WORK/trace" &&
			grep '^capset(' "$WORK/trace" | grep -v CAP_SYS_RAWIO | grep -q '= 0$'; then
			ok "$name: Xorg -nohwaccess drops CAP_SYS_RAWIO (bounding set, capset)"
		else
			grep -E '^(prctl|capset)' "$WORK/trace" | sed 's/^/# /' | tail -n 5
			not_ok "$name: Xorg -nohwaccess drops CAP_SYS_RAWIO"
		fi
		trace -version >"$WORK/trace" 2>&1 || :
		if grep -qE '^(prctl\(PR_CAPBSET_DROP|capset\()' "$WORK/trace"; then
			not_ok "$name: Xorg without -nohwaccess keeps its capabilities"
		else
			ok "$name: Xorg without -nohwaccess keeps its capabilities"
		fi
	fi
	# What the other patches print can only be seen on a VT; their
	# messages in the binary say at least that they are built in.
	for s in "not running as root: using the controlling tty" \
		"not enabling I/O ports" "CAP_SYS_TTY_CONFIG: start it from the VT"; do
		if grep -qF "$s" "$bin"; then
			ok "$name: the binary holds \"$s\""
		else
			not_ok "$name: the binary holds \"$s\""
		fi
	done
	step_end
done

say "total $(( $(now) - T_ALL )) s"
if [ "$fails" -gt 0 ]; then
	say "$fails check(s) failed"
	exit 1
fi
say "all checks passed"
