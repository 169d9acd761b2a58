#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make check-deb: build libpam-xdevices as Debian would, from the upstream
# tarball "make dist" writes (the .orig.tar.gz) and debian/: the source
# package (dpkg-source -b) and the binary one (dpkg-buildpackage); run
# lintian on both, then install, reinstall, remove and purge it in a clean
# Debian 12 (or 13) chroot and check what pam-auth-update did to the PAM stack. A
# console login through login's real stack (pamtester, with a free VT of the
# host, 40..63, as controlling tty) must get ACLs on the chroot's mknod'd
# VT/DRM/input nodes, and removing the package must put them back exactly.
# xdevicesd is started and stopped through its init script in the chroot (a
# policy-rc.d that denies, as in any chroot, keeps the postinst from doing
# it): while it runs, the devices follow the VT in front of the host, and a
# daemon killed with SIGKILL and started again takes over.
#
# Needs root (chroot, mmdebstrap), dpkg-dev, debhelper, lintian, mmdebstrap
# and the build dependencies; exits 77 (skipped) when not root. The minbase
# tarball is cached in $XDEV_DEB_CACHE (default /var/cache/pam_xdevices) and
# rebuilt when older than a week. The package is built from the working tree
# (tracked and untracked, not ignored files), or from the last commit with
# XDEV_DEB_TREE=head. XDEV_DEB_KEEP=1 keeps the scratch directory.
# XDEV_DEB_SUITE=trixie (make check-deb-trixie) does it all for Debian 13:
# the package is built and lintian'd in a trixie build root
# (tools/suite-chroot.sh) and tested in a trixie minbase chroot; the host's
# own apt sources are never touched.

# shellcheck disable=SC2012,SC2016,SC2317
# (ls of build outputs with known names; '...' bodies of bash -c; functions
# called through check)
set -u
export LC_ALL=C.UTF-8

srcdir=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDEV_DEB_CACHE:-/var/cache/pam_xdevices}
mirror=${XDEV_DEB_MIRROR:-http://deb.debian.org/debian}
security_mirror=${XDEV_DEB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# minbase has libpam-runtime and login; udev for the postinst's udevadm,
# pamtester to run login's real PAM stack, libdrm2 for the package's
# Depends (the core drops DRM master through libdrm; dpkg -i installs no
# dependency).
includes=udev,pamtester,libdrm2
suite=${XDEV_DEB_SUITE:-bookworm}
base="$cache/$suite-minbase-${includes//,/-}.tar"
pkg=libpam-xdevices
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
# Where the suite's own PAM modules and udev rules are (its pam.pc's libdir
# and udev.pc's udevdir): bookworm /lib, trixie under /usr.
case $suite in
bookworm) libprefix= ;;
*) libprefix=/usr ;;
esac
# Build and lintian on the host (Debian 12), or in the suite's build root.
inbuild() {
	if [ "$suite" = bookworm ]; then
		(cd "$work/src" && bash -c "$1")
	else
		"$srcdir/tools/suite-chroot.sh" "$suite" run "$work/src=/src" -- \
			bash -c "cd /src && $1"
	fi
}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: check-deb needs root (chroot and mmdebstrap)"
	exit 77
fi

# debian/ is not part of the release tarball: this runs in a git checkout.
if ! git -C "$srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "SKIP: check-deb needs a git checkout of pam_xdevices (debian/ is not distributed)"
	exit 77
fi

# Run in a private mount namespace: the chroot's /proc goes away with us.
if [ -z "${XDEV_DEB_IN_NS:-}" ]; then
	XDEV_DEB_IN_NS=1 exec unshare --mount --propagation private -- bash "$0" "$@"
fi

for tool in dpkg-buildpackage dh lintian mmdebstrap git; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "FAIL: $tool is not installed (apt-get install dpkg-dev debhelper lintian mmdebstrap git)"
		echo "0 passed, 1 failed"
		exit 1
	fi
done

passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
check() { # check NAME COMMAND...: PASS if COMMAND succeeds
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}

work=$(mktemp -d /tmp/check-deb.XXXXXX)
root="$work/root"
cleanup() {
	daemon_kill
	if mountpoint -q "$root/sys" 2>/dev/null; then umount "$root/sys"; fi
	if mountpoint -q "$root/proc" 2>/dev/null; then umount "$root/proc"; fi
	if [ -n "${XDEV_DEB_KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

started=$(date +%s)
finish() {
	echo "== total time: $(( $(date +%s) - started ))s"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

stage_start=0
stage() { stage_start=$(date +%s); echo "== stage: $*"; }
stage_end() { echo "== stage time: $1 $(( $(date +%s) - stage_start ))s"; }

inroot() { chroot "$root" "$@"; }

# alive PID: PID runs (a daemon that start-stop-daemon put in the background
# is nobody's child here, and may stay a zombie if pid 1 does not reap it).
alive() {
	local state
	state=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ]
}
# The pid in the chroot's pid file of xdevicesd, if that process is an
# xdevicesd (not a pid reused since) and alive.
daemon_pid() {
	local pid
	pid=$(cat "$root/run/xdevicesd.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = xdevicesd ] &&
		alive "$pid" && echo "$pid"
}
# The xdevicesd processes alive in the chroot (others may run on the host).
chroot_daemons() {
	local pid
	for pid in $(pgrep -x xdevicesd); do
		[ "$(readlink "/proc/$pid/root")" = "$root" ] && alive "$pid" && echo "$pid"
	done
}
# The init script's supervisor of the daemon, if alive.
supervisor_pid() {
	local pid
	pid=$(cat "$root/run/xdevicesd.supervisor.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ "$(readlink "/proc/$pid/root")" = "$root" ] && alive "$pid" && echo "$pid"
}
# On the way out: never leave a daemon this test started running (its
# supervisor first, which would start it again).
daemon_kill() {
	local pid
	pid=$(supervisor_pid) && kill -KILL "$pid"
	for pid in $(chroot_daemons); do kill -KILL "$pid"; done
}
# The "follow:" line of xdevices status in the chroot.
follow_line() { inroot /usr/sbin/xdevices status 2>/dev/null | grep -m 1 '^follow:'; }
# wait_follow LINE: up to 10 s for the follow line to read LINE.
wait_follow() {
	for _ in $(seq 50); do
		[ "$(follow_line)" = "$1" ] && return 0
		sleep 0.2
	done
	echo "follow line: '$(follow_line)', expected '$1'"
	return 1
}
# lacks_acl NODE UID: NODE has no ACL entry for UID (the daemon has taken the
# grant off; up to 10 s for it to act).
lacks_acl() {
	for _ in $(seq 50); do
		getfacl -n -p --omit-header "$1" | grep -q "^user:$2:" || return 0
		sleep 0.2
	done
	getfacl -n -p --omit-header "$1"
	return 1
}

# The PAM stack of a service, with @include lines expanded (one level of
# nesting is all Debian uses, but follow them all).
pam_stack() {
	local file="$root/etc/pam.d/$1" line
	[ -r "$file" ] || return 0
	while IFS= read -r line; do
		case "$line" in
		@include*) pam_stack "${line#@include }" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done <"$file"
}
has_stanza() { grep -Eq '^session[[:space:]]+optional[[:space:]]+pam_xdevices\.so([[:space:]]|$)' "$@"; }
# lacks FILE: FILE exists and does not mention the module.
lacks() { test -f "$1" && ! grep -q pam_xdevices "$1"; }

# A VT nobody has as controlling tty, from the top: the session below takes
# it as its controlling tty (the kernel's test for a console login). Only
# the chroot's own node of it gets an ACL; nothing is written to it.
free_vt() {
	local n used
	used=$(sed -n 's/.*) //p' /proc/[0-9]*/stat 2>/dev/null | awk '{ print $5 }' | sort -u)
	for n in $(seq 63 -1 40); do
		grep -qx "$((1024 + n))" <<<"$used" || { echo "$n"; return 0; }
	done
	return 1
}

# Owner, group, mode and full ACL of the test session's nodes in the chroot.
nodes_state() {
	local n
	for n in "tty$vt" dri/card0 input/event0; do
		echo "/dev/$n $(stat -c '%u:%g %a' "$root/dev/$n")"
		getfacl -n -p --omit-header "$root/dev/$n" 2>&1
	done
}

# Every path in the chroot with its type, mode, owner and (for files) hash,
# minus dpkg's and apt's own bookkeeping, which any dpkg run changes.
snapshot() {
	(cd "$root" && find . -xdev \
		\( -path ./proc -o -path ./tmp/debs -o -path ./var/lib/dpkg \
		   -o -path ./var/log -o -path ./var/cache/debconf \) -prune -o \
		-printf '%p %y %m %U:%G\n' | sort) >"$1"
	(cd "$root" && find ./etc ./usr ./var/lib -xdev \
		-path ./var/lib/dpkg -prune -o -type f -print0 |
		sort -z | xargs -0 sha256sum) >>"$1"
}

# --- build ----------------------------------------------------------------
stage "build (make dist, the .orig.tar.gz, dpkg-source -b, dpkg-buildpackage -us -uc -b)"
version=$(dpkg-parsechangelog -l "$srcdir/debian/changelog" -SVersion)
upstream=${version%-*}
check "debian/changelog's upstream version is configure.ac's ($upstream)" \
	grep -Eq "^AC_INIT\(\[pam_xdevices\], \[$upstream\]" "$srcdir/configure.ac"
git_tree="$work/src/git"
mkdir -p "$git_tree"
if [ "${XDEV_DEB_TREE:-worktree}" = head ]; then
	# Exactly the last commit, as CI's fresh clone sees it.
	git -C "$srcdir" archive --format=tar HEAD | tar -C "$git_tree" -xf -
else
	# The working tree as git sees it (tracked and new files, nothing
	# ignored): what the developer is about to commit, without their
	# build artefacts.
	(cd "$srcdir" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf -) | tar -C "$git_tree" -xf -
fi
echo "building on $(inbuild '. /etc/os-release && echo "$PRETTY_NAME", dpkg-dev $(dpkg-query -W -f="\${Version}" dpkg-dev), debhelper $(dpkg-query -W -f="\${Version}" debhelper)')"
# The upstream release: "make dist" in a scratch copy of the git tree. It
# has no debian/; the source package adds it as its debian.tar.xz.
dist=pam_xdevices-$upstream.tar.gz
if inbuild "cd git && ./autogen.sh && ./configure --disable-tests && make dist" \
	>"$work/dist.log" 2>&1 && [ -s "$git_tree/$dist" ]; then
	pass "make dist wrote $dist"
else
	fail "make dist wrote $dist (last lines of the log follow)"
	tail -n 20 "$work/dist.log"
	finish
fi
check "the release tarball has no debian/" \
	bash -c '! tar -tzf "$1" | grep -q "^[^/]*/debian/"' _ "$git_tree/$dist"
# debian/watch finds releases by this name (its last field is the regex
# uscan matches against the links of the release page).
watch_re=$(awk 'NF && !/^#/ && !/^version=/ && !/^opts=/ { print $NF }' "$git_tree/debian/watch")
watch_version=$(perl -e 'print $1 if $ARGV[1] =~ m{^(?:$ARGV[0])$}' -- "$watch_re" "$dist")
check "debian/watch's pattern ($watch_re) matches $dist and gives $upstream" \
	test "$watch_version" = "$upstream"
tree="$work/src/pam-xdevices-$upstream"
cp "$git_tree/$dist" "$work/src/pam-xdevices_$upstream.orig.tar.gz"
mkdir -p "$tree"
tar -C "$tree" --strip-components=1 -xzf "$work/src/pam-xdevices_$upstream.orig.tar.gz"
cp -a "$git_tree/debian" "$tree/"
rm -rf "$git_tree"
if inbuild "cd pam-xdevices-$upstream && dpkg-source -b ." >"$work/source.log" 2>&1; then
	pass "dpkg-source -b (3.0 quilt, on the make dist tarball)"
else
	fail "dpkg-source -b (3.0 quilt, on the make dist tarball)"
	tail -n 20 "$work/source.log"
fi
if inbuild "cd pam-xdevices-$upstream && dpkg-buildpackage -us -uc -b -j$(nproc)" >"$work/build.log" 2>&1; then
	pass "dpkg-buildpackage -us -uc -b"
else
	fail "dpkg-buildpackage -us -uc -b (last lines of the log follow)"
	tail -n 40 "$work/build.log"
	stage_end build
	finish
fi
deb=$(ls "$work/src/${pkg}"_*.deb 2>/dev/null | head -n 1)
changes=$(ls "$work/src"/*.changes 2>/dev/null | head -n 1)
dsc=$(ls "$work/src"/*.dsc 2>/dev/null | head -n 1)
check "built ${pkg}_*.deb" test -f "$deb"
check "the package ships README.md and NEWS as docs" \
	bash -c 'l=$(dpkg-deb -c "$1") && grep -q "/usr/share/doc/libpam-xdevices/README.md" <<<"$l" &&
		grep -Eq "/usr/share/doc/libpam-xdevices/NEWS(\.gz)?$" <<<"$l"' _ "$deb"
# README's source-package recipe as README.md writes it (its lines from
# "./autogen.sh && ./configure --disable-tests && make dist" to the one
# with dpkg-buildpackage), run in a copy of the same tree: README must not
# name steps or files that do not work.
recipe=$(awk '/^    \.\/autogen\.sh && \.\/configure --disable-tests && make dist$/ { on = 1 }
	on { sub(/^    /, ""); print }
	on && /dpkg-buildpackage/ { exit }' "$srcdir/README.md")
check "README.md has the source-package recipe" test -n "$recipe"
mkdir -p "$work/src/readme/git"
(cd "$srcdir" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -C "$work/src/readme/git" -xf -
if inbuild "cd readme/git && set -e
$recipe" >"$work/readme-recipe.log" 2>&1 &&
	[ -f "$work/src/readme/deb/pam-xdevices_$version.dsc" ] &&
	ls "$work/src/readme/deb/${pkg}_${version}_"*.deb >/dev/null 2>&1; then
	pass "README's source-package recipe, run as written, gives the .dsc and the .deb"
else
	fail "README's source-package recipe, run as written (last lines of its log follow)"
	tail -n 20 "$work/readme-recipe.log"
fi
rm -rf "$work/src/readme"
# The root-only tests must not be compiled (nor run) by a package build.
check "the package build compiled no test (no tests/*.o, no tests/test-*)" \
	test -z "$(find "$tree/tests" \( -name '*.o' -o -name 'test-*' ! -name '*.*' -perm -u+x \) 2>/dev/null)"
check "the package build ran its own check (the programs' --version)" \
	grep -q 'xdevicesd --version' "$work/build.log"
# Others may be building in the source tree: look only for what a package
# build would leave there (debian/ artefacts, ../*.deb, ../*.changes).
check "no package build artefacts in the source tree" \
	test -z "$(cd "$srcdir" && git status --porcelain --ignored -- debian | grep '^!!';
		ls "$srcdir"/../pam-xdevices_* "$srcdir"/../${pkg}_* 2>/dev/null)"
echo "--- dpkg -c $(basename "$deb")"
dpkg -c "$deb" | awk '{ print $1, $2, $6 }'
stage_end build

# --- lintian --------------------------------------------------------------
stage "lintian"
# Lintian warns when run as root; it reads only the files it is given.
echo "--- lintian $(inbuild 'dpkg-query -W -f="\${Version}" lintian') -I --show-overrides $(basename "$changes") ${dsc:+$(basename "$dsc")}"
inbuild "lintian -I --show-overrides $(basename "$changes") ${dsc:+$(basename "$dsc")}" 2>&1 |
	grep -v '^running with root privileges' >"$work/lintian.log"
cat "$work/lintian.log"
check "lintian: no errors, no warnings" \
	bash -c '! grep -Eq "^[EW]: " "$1"' _ "$work/lintian.log"
stage_end lintian

# --- chroot ---------------------------------------------------------------
stage "chroot (cached minbase + $includes)"
mkdir -p "$cache"
if [ ! -s "$base" ] || [ -n "$(find "$base" -mtime +7)" ]; then
	echo "building $base"
	# The .tar suffix tells mmdebstrap which format to write.
	if mmdebstrap --quiet --variant=minbase --include="$includes" "$suite" "$base.tmp.tar" \
		"deb $mirror $suite main" \
		"deb $mirror $suite-updates main" \
		"deb $security_mirror $suite-security main" >"$work/mmdebstrap.log" 2>&1; then
		mv "$base.tmp.tar" "$base"
	else
		rm -rf "$base.tmp.tar"
		tail -n 20 "$work/mmdebstrap.log"
	fi
fi
if [ ! -s "$base" ]; then
	fail "minbase tarball $base"
	stage_end chroot
	finish
fi
mkdir -p "$root"
if ! tar -C "$root" -xf "$base" || ! mount -t proc proc "$root/proc" ||
	! inroot dpkg-query -W libpam-runtime login >/dev/null; then
	fail "usable chroot from $base"
	stage_end chroot
	finish
fi
mkdir -p "$root/tmp/debs"
cp "$deb" "$root/tmp/debs/"
debname=/tmp/debs/$(basename "$deb")
# The fixture of the grant test, part of the baseline: a user, a VT node,
# DRM and input nodes (mknod'd in the chroot's /dev, which is not devtmpfs),
# and a config that finds them by glob as on a machine without udevd.
vt=$(free_vt) || vt=63
mkdir -p "$root/dev/dri" "$root/dev/input" "$root/etc/security/xdevices.d"
mknod -m 620 "$root/dev/tty$vt" c 4 "$vt" && chown 0:5 "$root/dev/tty$vt"
mknod -m 660 "$root/dev/dri/card0" c 226 0
mknod -m 660 "$root/dev/input/event0" c 13 64
inroot useradd --create-home alice
alice=$(inroot id -u alice)
printf '%s\n' "devices = glob" "glob = drm:/dev/dri/card*" "glob = input:/dev/input/event*" \
	>"$root/etc/security/xdevices.d/check-deb.conf"
nodes_state >"$work/nodes.before"
# As in any chroot, services are not to be started by maintainer scripts:
# a policy-rc.d that denies, and notes what it was asked (in /tmp/debs,
# which the snapshots leave out).
printf '%s\n' '#!/bin/sh' 'echo "$*" >>/tmp/debs/policy-rc.d.log' 'exit 101' \
	>"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
# One login session first, so that what login's own stack leaves behind
# (/run/motd.dynamic, lastlog) is part of the baseline.
inroot pamtester login root open_session close_session >/dev/null 2>&1
snapshot "$work/before"
cp "$root/etc/pam.d/common-session" "$work/common-session.before"
stage_end chroot

# --- install --------------------------------------------------------------
stage "install"
module=$libprefix/lib/$multiarch/security/pam_xdevices.so
if inroot dpkg -i "$debname"; then
	pass "dpkg -i $(basename "$deb")"
else
	fail "dpkg -i $(basename "$deb")"
	stage_end install
	finish
fi
check "package is installed" \
	test "$(inroot dpkg-query -W -f='${db:Status-Abbrev}' $pkg)" = "ii "
check "the module is in $suite's multiarch security dir ($module)" \
	bash -c 'dpkg -c "$1" | grep -q " \\.$2\$"' _ "$deb" "$module"
for f in "$module" /usr/sbin/xdevices $libprefix/lib/udev/rules.d/72-xdevices.rules \
	/etc/security/xdevices.conf /usr/share/pam-configs/xdevices \
	/usr/share/man/man8/pam_xdevices.8.gz /usr/share/man/man8/xdevices.8.gz \
	/usr/share/man/man5/xdevices.conf.5.gz \
	/usr/sbin/xdevicesd /etc/init.d/xdevicesd $libprefix/lib/systemd/system/xdevicesd.service \
	/usr/share/man/man8/xdevicesd.8.gz /etc/default/xdevicesd \
	/usr/share/doc/$pkg/examples/openrc/xdevicesd \
	/usr/share/doc/$pkg/examples/runit/xdevicesd/run \
	/usr/share/doc/$pkg/examples/runit/xdevicesd/finish \
	/usr/share/doc/$pkg/examples/runit/xdevicesd/log/run; do
	check "ships $f" test -f "$root$f"
done
check "no libtool archive in the package" \
	bash -c '! dpkg -c "$1" | grep -q "\\.la$"' _ "$deb"
check "the init script reads /etc/default/xdevicesd, which sets DAEMON_ARGS" \
	bash -c 'grep -q "/etc/default/xdevicesd" "$1/etc/init.d/xdevicesd" &&
		grep -q "^DAEMON_ARGS=" "$1/etc/default/xdevicesd"' _ "$root"
check "the OpenRC example is supervised (supervise-daemon) and runs /usr/sbin/xdevicesd" \
	bash -c 'grep -qx "supervisor=supervise-daemon" "$1" && grep -qx "command=/usr/sbin/xdevicesd" "$1"' \
	_ "$root/usr/share/doc/$pkg/examples/openrc/xdevicesd"
check "xdevices --version and xdevicesd --version say $upstream" \
	bash -c '[ "$(chroot "$1" xdevices --version)" = "xdevices $2" ] &&
		[ "$(chroot "$1" xdevicesd --version)" = "xdevicesd $2" ]' _ "$root" "$upstream"
check "xdevices check passes the shipped configuration" inroot xdevices check
inroot dpkg-query -W -f='${Conffiles}\n' $pkg | awk 'NF { print $1 }' >"$work/conffiles"
for f in /etc/security/xdevices.conf /etc/init.d/xdevicesd /etc/default/xdevicesd; do
	check "$f is a conffile" grep -qx "$f" "$work/conffiles"
done
check "/usr/sbin/xdevicesd and /etc/init.d/xdevicesd are executable" \
	test -x "$root/usr/sbin/xdevicesd" -a -x "$root/etc/init.d/xdevicesd"
check "the init script and the unit run /usr/sbin/xdevicesd" \
	bash -c 'grep -qx "DAEMON=/usr/sbin/xdevicesd" "$1/etc/init.d/xdevicesd" &&
		grep -qx "ExecStart=/usr/sbin/xdevicesd" "$1$2/lib/systemd/system/xdevicesd.service"' _ "$root" "$libprefix"
check "update-rc.d enabled xdevicesd in runlevels 2-5" \
	bash -c 'for l in 2 3 4 5; do ls "$1"/etc/rc$l.d/S??xdevicesd >/dev/null 2>&1 || exit 1; done' _ "$root"
check "deb-systemd-helper enabled xdevicesd.service for multi-user.target" \
	test -L "$root/etc/systemd/system/multi-user.target.wants/xdevicesd.service"
# "(start)": invoke-rc.d would not start it anyway, with no runlevel.
check "the postinst asked policy-rc.d to start xdevicesd (invoke-rc.d)" \
	grep -Eq '(^| )xdevicesd \(?start\)?( |$)' "$root/tmp/debs/policy-rc.d.log"
check "... and, denied, did not start it" \
	test ! -e "$root/run/xdevicesd.pid" -a -z "$(chroot_daemons)"
check "module's libraries resolve in the chroot" \
	bash -c 'out=$(chroot "$1" ldd "$2") && ! grep -q "not found" <<<"$out"' _ "$root" "$module"
# login's real stack, through libpam: LD_DEBUG shows the module loaded. The
# tty is not pamtester's controlling tty, so open_session must ignore the
# session and touch nothing.
inroot env LD_DEBUG=files pamtester -v -I tty=/dev/tty5 login root \
	open_session >"$work/pamtester-open.log" 2>&1
check "libpam loads pam_xdevices.so from login's stack" \
	grep -q 'calling init: .*/security/pam_xdevices\.so' "$work/pamtester-open.log"
check "open_session on a VT that is not the caller's tty touches nothing" \
	test ! -e "$root/run/xdevices"
inroot pamtester -v -I tty=/dev/tty5 login root \
	open_session close_session >"$work/pamtester.log" 2>&1
check "a login session opens and closes with the module in the stack" \
	grep -q 'session has successfully been closed' "$work/pamtester.log"
check "xdevices status runs" inroot /usr/sbin/xdevices status
check "pam-auth-update put the stanza into common-session" \
	has_stanza "$root/etc/pam.d/common-session"
check "common-session-noninteractive has no stanza (interactive only)" \
	lacks "$root/etc/pam.d/common-session-noninteractive"
check "login's session stack includes pam_xdevices.so" \
	bash -c 'grep -Eq "^session[[:space:]]+optional[[:space:]]+pam_xdevices\.so" <<<"$1"' \
	_ "$(pam_stack login)"
check "pam_xdevices.so comes after login's pam_env.so" \
	bash -c 'awk "/pam_env\\.so/ { env = NR } /pam_xdevices\\.so/ { x = NR } END { exit !(env && x > env) }" <<<"$1"' \
	_ "$(pam_stack login)"
inroot pam-auth-update --disable xdevices
check "pam-auth-update --disable xdevices takes the stanza out" \
	lacks "$root/etc/pam.d/common-session"
inroot pam-auth-update --enable xdevices
check "pam-auth-update --enable xdevices puts it back" \
	has_stanza "$root/etc/pam.d/common-session"
inroot dpkg -L $pkg | sort >"$work/files"
stage_end install

# --- reinstall (upgrade path) ---------------------------------------------
stage "reinstall"
check "dpkg -i again (upgrade path)" inroot dpkg -i "$debname"
check "stanza kept once across the upgrade" \
	test "$(grep -c pam_xdevices "$root/etc/pam.d/common-session")" = 1
inroot pam-auth-update --disable xdevices
inroot dpkg -i "$debname" >/dev/null
check "an administrator's --disable survives an upgrade" \
	lacks "$root/etc/pam.d/common-session"
inroot pam-auth-update --enable xdevices
stage_end reinstall

# --- grant ----------------------------------------------------------------
stage "grant (console login of alice on tty$vt, login's real stack)"
# pamtester exits without close_session, as a login killed with SIGKILL
# would: the grant outlives it until something restores the nodes.
setsid --wait --ctty chroot "$root" pamtester -v -I "tty=/dev/tty$vt" login alice \
	open_session <"$root/dev/tty$vt" >"$work/grant.log" 2>&1
check "alice's console session opens" grep -q 'successfully opened a session' "$work/grant.log"
for n in "tty$vt" dri/card0 input/event0; do
	check "/dev/$n has an ACL entry for alice (uid $alice)" \
		bash -c 'getfacl -n -p --omit-header "$1" | grep -qx "user:$2:rw-"' _ "$root/dev/$n" "$alice"
done
inroot /usr/sbin/xdevices status
# What alice herself sees, as a user, without the state.
chroot --userspec=alice:alice "$root" /usr/sbin/xdevices status >"$work/status-alice.log" 2>&1
cat "$work/status-alice.log"
check "xdevices status as alice lists her VT and card0" \
	bash -c 'grep -q "^console VTs: tty$2\$" "$1" && grep -q "^  /dev/dri/card0 .* rw (ACL entry)" "$1"' \
	_ "$work/status-alice.log" "$vt"
stage_end grant


# --- xdevicesd ------------------------------------------------------------
stage "xdevicesd (the init script's start, crash and restart, stop)"
# The daemon watches the host's VT in front in /sys/class/tty/tty0/active.
mount -t sysfs -o ro sysfs "$root/sys"
front=$(cat /sys/class/tty/tty0/active 2>/dev/null)
check "the follow line is off before the daemon runs" wait_follow "follow: no"
inroot /etc/init.d/xdevicesd start >"$work/daemon-start.log" 2>&1; rc=$?
cat "$work/daemon-start.log"
check "/etc/init.d/xdevicesd start" test "$rc" = 0
sleep 0.5
pid=$(daemon_pid)
check "xdevicesd runs with the pid of /run/xdevicesd.pid (${pid:-none})" test -n "$pid"
check "xdevices status: follow: yes (xdevicesd pid ${pid:-none})" \
	wait_follow "follow: yes (xdevicesd pid ${pid:-none})"
check "/etc/init.d/xdevicesd status says it runs" inroot /etc/init.d/xdevicesd status
inroot /usr/sbin/xdevicesd >/dev/null 2>&1; rc=$?
check "a second xdevicesd exits 5 (the lock is held), not $rc" test "$rc" = 5
# alice's session is on tty$vt (its leader, pamtester, is gone) and the
# host's VT in front is another one: nothing stays granted to her.
if [ -n "$front" ] && [ "$front" != "tty$vt" ]; then
	for n in dri/card0 input/event0; do
		check "/dev/$n: the daemon took alice's grant off ($front is in front, not tty$vt)" \
			lacks_acl "$root/dev/$n" "$alice"
	done
else
	echo "the host's VT in front is '${front:-unknown}': no check of the follow rule's grants"
fi
inroot /usr/sbin/xdevices status
# A crash: the follow line stays and says the daemon is gone; the init
# script's start runs a new one, which takes over.
if [ -n "$pid" ]; then
	kill -KILL "$pid"
	for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
fi
# The init script's supervisor starts it again, a second later.
pid2=
for _ in $(seq 50); do
	pid2=$(daemon_pid) && [ "$pid2" != "$pid" ] && break
	sleep 0.2
done
check "after SIGKILL the supervisor started a new daemon (${pid2:-none}, was ${pid:-none})" \
	test -n "$pid2" -a "$pid2" != "$pid"
check "xdevices status: follow: yes (xdevicesd pid ${pid2:-none})" \
	wait_follow "follow: yes (xdevicesd pid ${pid2:-none})"
inroot /etc/init.d/xdevicesd status >/dev/null 2>&1; rc=$?
check "after the restart the init script's status is 0, not $rc" test "$rc" = 0
# RESPAWN=no: the daemon alone, as before the supervisor; dead stays dead.
inroot /etc/init.d/xdevicesd stop >/dev/null 2>&1
cp "$root/etc/default/xdevicesd" "$work/default.saved"
echo "RESPAWN=no" >>"$root/etc/default/xdevicesd"
inroot /etc/init.d/xdevicesd start >/dev/null 2>&1; rc=$?
pid=$(daemon_pid)
check "RESPAWN=no: start runs the daemon without a supervisor (${pid:-none})" \
	bash -c '[ "$1" = 0 ] && [ -n "$2" ] && ! [ -e "$3/run/xdevicesd.supervisor.pid" ]' _ "$rc" "$pid" "$root"
[ -n "$pid" ] && kill -KILL "$pid"
# (up to 10 s: a killed daemon is nobody's child here, and stays a zombie,
# which the status takes for running, until pid 1 reaps it)
for _ in $(seq 50); do
	inroot /etc/init.d/xdevicesd status >/dev/null 2>&1; rc=$?
	[ "$rc" = 0 ] || break
	sleep 0.2
done
check "RESPAWN=no: after SIGKILL the status is 1 (dead, pid file left), not $rc" test "$rc" = 1
cp "$work/default.saved" "$root/etc/default/xdevicesd"
# A daemon that exits at once (a usage error here) is a failed start.
echo 'DAEMON_ARGS="--no-such-option"' >>"$root/etc/default/xdevicesd"
inroot /etc/init.d/xdevicesd start >"$work/daemon-fail.log" 2>&1; rc=$?
cat "$work/daemon-fail.log"
check "start of a daemon that exits at once fails (exit $rc) and says so" \
	bash -c '[ "$1" != 0 ] && grep -q "failed" "$2"' _ "$rc" "$work/daemon-fail.log"
left=$(chroot_daemons; supervisor_pid)
check "... and leaves no daemon and no supervisor${left:+ (left: $left)}" test -z "$left"
cp "$work/default.saved" "$root/etc/default/xdevicesd"
inroot /etc/init.d/xdevicesd start >/dev/null 2>&1; rc=$?
sleep 0.5
pid2=$(daemon_pid)
sup=$(supervisor_pid)
check "/etc/init.d/xdevicesd start runs a supervised daemon again (${pid2:-none}, supervisor ${sup:-none})" \
	test "$rc" = 0 -a -n "$pid2" -a -n "$sup"
check "xdevices status: follow: yes (xdevicesd pid ${pid2:-none})" \
	wait_follow "follow: yes (xdevicesd pid ${pid2:-none})"
inroot /etc/init.d/xdevicesd stop >"$work/daemon-stop.log" 2>&1; rc=$?
cat "$work/daemon-stop.log"
check "/etc/init.d/xdevicesd stop" test "$rc" = 0
check "xdevicesd and its supervisor are gone, and their pid files too" \
	test -z "$(chroot_daemons)" -a ! -e "$root/run/xdevicesd.pid" \
	-a ! -e "$root/run/xdevicesd.supervisor.pid"
check "xdevices status: follow: no" wait_follow "follow: no"
inroot /etc/init.d/xdevicesd status >/dev/null 2>&1; rc=$?
check "after stop the init script's status is 3 (not running), not $rc" test "$rc" = 3
inroot /usr/sbin/xdevices status
umount "$root/sys"
stage_end xdevicesd

# --- a broken configuration, through pamtester's conversation -------------
stage "broken configuration (alice on tty$vt, pamtester)"
# pamtester's conversation (libpam_misc) prints what the module tells the
# user: the first error, with the file and line; nothing is granted.
echo "mode = sideways" >"$root/etc/security/xdevices.d/zz-broken.conf"
inroot xdevices check >"$work/check-broken.log" 2>&1; rc=$?
cat "$work/check-broken.log"
check "xdevices check fails (exit 1, not $rc) with FILE:LINE" \
	bash -c '[ "$2" = 1 ] && grep -qx "/etc/security/xdevices.d/zz-broken.conf:1: bad value \"sideways\" for \"mode\" (acl, chown)" "$1"' \
	_ "$work/check-broken.log" "$rc"
nodes_state >"$work/nodes.broken-before"
setsid --wait --ctty chroot "$root" pamtester -v -I "tty=/dev/tty$vt" login alice \
	open_session <"$root/dev/tty$vt" >"$work/broken.log" 2>&1
cat "$work/broken.log"
check "pamtester shows alice the module's one-line error" \
	grep -q 'pam_xdevices: the configuration is broken (/etc/security/xdevices.d/zz-broken.conf:1: bad value "sideways" for "mode" (acl, chown))' \
	"$work/broken.log"
nodes_state >"$work/nodes.broken-after"
check "a broken configuration grants nothing" \
	cmp -s "$work/nodes.broken-before" "$work/nodes.broken-after"
rm -f "$root/etc/security/xdevices.d/zz-broken.conf"
stage_end broken

# --- remove ---------------------------------------------------------------
stage "remove"
inroot dpkg -r $pkg >"$work/remove.log" 2>&1; rc=$?
cat "$work/remove.log"
check "dpkg -r $pkg" test "$rc" = 0
check "prerm's xdevices reset --revoke succeeded" \
	bash -c 'test -f "$1" && ! grep -q "reset --revoke. failed" "$1"' _ "$work/remove.log"
nodes_state >"$work/nodes.after"
if cmp -s "$work/nodes.before" "$work/nodes.after"; then
	pass "removal restored every node exactly (owner, group, mode, ACL)"
else
	fail "removal restored every node exactly; differences:"
	diff -u "$work/nodes.before" "$work/nodes.after"
fi
check "package state is config-files" \
	test "$(inroot dpkg-query -W -f='${db:Status-Abbrev}' $pkg)" = "rc "
check "removal took the stanza out of common-session" \
	lacks "$root/etc/pam.d/common-session"
pam_stack login >"$work/login-stack"
check "login's stack no longer includes the module" \
	bash -c 'grep -q "^session" "$1" && ! grep -q pam_xdevices "$1"' _ "$work/login-stack"
inroot env LD_DEBUG=files pamtester -v login root \
	open_session close_session >"$work/pamtester-removed.log" 2>&1
check "login sessions still open and close after removal" \
	grep -q 'session has successfully been closed' "$work/pamtester-removed.log"
check "libpam no longer loads pam_xdevices.so" \
	bash -c 'grep -q "calling init" "$1" && ! grep -q pam_xdevices "$1"' _ "$work/pamtester-removed.log"
check "removal keeps /etc/security/xdevices.conf" test -f "$root/etc/security/xdevices.conf"
check "removal keeps /etc/init.d/xdevicesd, no longer executable" \
	test -f "$root/etc/init.d/xdevicesd" -a ! -x "$root/etc/init.d/xdevicesd"
check "the prerm asked policy-rc.d to stop xdevicesd (invoke-rc.d)" \
	grep -Eq '(^| )xdevicesd stop( |$)' "$root/tmp/debs/policy-rc.d.log"
left=$(while read -r f; do
	grep -qx "$f" "$work/conffiles" && continue
	[ -d "$root$f" ] && continue
	[ -f "$root$f" ] || [ -L "$root$f" ] && echo "$f"
done <"$work/files")
check "removal leaves no other packaged file${left:+ (left: $left)}" test -z "$left"
stage_end remove

# --- purge ----------------------------------------------------------------
stage "purge"
check "dpkg -P $pkg" inroot dpkg -P $pkg
check "package is gone from dpkg's database" \
	bash -c 'chroot "$1" dpkg-query -W login >/dev/null &&
		! chroot "$1" dpkg-query -W libpam-xdevices >/dev/null 2>&1' _ "$root"
check "purge removed /etc/security/xdevices.conf" test ! -e "$root/etc/security/xdevices.conf"
check "purge removed /etc/init.d/xdevicesd and its rc.d links" \
	bash -c '! ls "$1"/etc/init.d/xdevicesd "$1"/etc/rc?.d/[SK]??xdevicesd 2>/dev/null | grep -q .' _ "$root"
check "common-session is byte-identical to before install" \
	cmp -s "$work/common-session.before" "$root/etc/pam.d/common-session"
snapshot "$work/after"
if diff -u "$work/before" "$work/after" >"$work/snapshot.diff"; then
	pass "purge leaves the chroot as it was (paths, modes, owners, file hashes)"
else
	fail "purge leaves the chroot as it was; differences:"
	cat "$work/snapshot.diff"
fi
stage_end purge

finish
