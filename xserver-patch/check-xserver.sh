#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the patched Xorg (built by build-xorg.sh) and, as the control, the
# stock /usr/lib/xorg/Xorg on this machine's real VTs, and checks from their
# logs and an strace what the patch series changes. Needs root; no DRM needed.
#
# Rules this script keeps, whatever happens (trap): the test user's ACL
# entries and each tty's owner, group, mode and ACL are put back as found;
# the active VT is switched back to the one active at start; every server
# started is killed by its pid; the test VTs are returned to text mode.
#
# Env: XSERVER_SUITE=trixie tests that suite's xorg-server instead: the
# patched build of build-xorg.sh (XSERVER_SUITE=trixie) and, as the control,
# the suite's stock Xorg, both run by this script inside the suite's build
# root (../tools/suite-chroot.sh) with the host's /dev (its real VTs), /proc
# and /sys; the test user is the root's. XSERVER_BUILDDIR (as build-xorg.sh: default its cache), XSERVER_TEST_USER (default
# xdtest, created if missing), XSERVER_TEST_VT (default: first unused VT
# in 20..40; the next unused one is the "other" VT), XSERVER_KEEP=1 keeps
# the work directory.
# Output: one "PASS: name" or "FAIL: name: reason" per case, then
# "N passed, N failed". Exit 0 only if all pass; 77 if not root.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SUITE=${XSERVER_SUITE:-}
# The VTs are shared with the root test programs of every tree on this
# machine (tests/harness.c): hold their lock while the servers run, so that
# none of them takes VT N or M as its own meanwhile (held by fd 8 until this
# script, or the copy of it it execs in the suite's root, ends).
take_vt_lock() {
	lock=/tmp/.pam_xdevices-tests.lock
	if [ -L "$lock" ] || ! { [ -f "$lock" ] || (umask 077 && : >"$lock"); }; then
		echo "FAIL: setup: $lock is not a regular file"
		echo "0 passed, 1 failed"
		exit 1
	fi
	exec 8<"$lock"
	flock -n 8 || { echo "check-xserver: waiting for the VT test lock ($lock)"; flock 8; }
}

if [ -n "$SUITE" ] && [ -z "${XSERVER_IN_SUITE_ROOT:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: check-xserver.sh must run as root"
		exit 77
	fi
	"$HERE/build-xorg.sh" ||
		{ echo "FAIL: build: build-xorg.sh ($SUITE) failed"; echo "0 passed, 1 failed"; exit 1; }
	BUILDDIR=$("$HERE/build-xorg.sh" --print-builddir)
	take_vt_lock
	# This script again, inside the suite's root, on the host's VTs.
	exec "$HERE/../tools/suite-chroot.sh" "$SUITE" run --dev "$HERE=/xserver-patch" "$BUILDDIR=/build" -- \
		env XSERVER_IN_SUITE_ROOT="$SUITE" XSERVER_BUILDDIR=/build \
		XSERVER_TEST_USER="${XSERVER_TEST_USER:-}" XSERVER_TEST_VT="${XSERVER_TEST_VT:-}" \
		XSERVER_KEEP="${XSERVER_KEEP:-0}" sh /xserver-patch/check-xserver.sh
fi
# XSERVER_BUILDDIR, else build-xorg.sh's cache
BUILDDIR=$("$HERE/build-xorg.sh" --print-builddir)
PATCHED=$BUILDDIR/stage/usr/lib/xorg/Xorg
STOCK=/usr/lib/xorg/Xorg
TUSER=${XSERVER_TEST_USER:-xdtest}
PACKAGES="xserver-xorg-core xserver-xorg-video-vesa strace acl kbd util-linux perl"
HINT="the server is not running on its controlling VT and has no CAP_SYS_TTY_CONFIG"

passed=0
failed=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1: $2"; failed=$((failed + 1)); }
# check NAME REASON COMMAND...: PASS if COMMAND succeeds, else FAIL with REASON
check() {
	name=$1 reason=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$reason"; fi
}
has() { grep -qF -- "$2" "$1" 2>/dev/null; }
lacks() { ! has "$1" "$2"; }

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: check-xserver.sh must run as root"
	exit 77
fi

# --- prerequisites -------------------------------------------------------------
missing=
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "check-xserver: installing$missing"
	# (waiting for dpkg's lock if another apt-get holds it)
	DEBIAN_FRONTEND=noninteractive apt-get install -o DPkg::Lock::Timeout=600 -y -q $missing >/dev/null ||
		{ echo "FAIL: prerequisites: cannot install$missing"; echo "0 passed, 1 failed"; exit 1; }
fi
"$HERE/build-xorg.sh" ||
	{ echo "FAIL: build: build-xorg.sh failed"; echo "0 passed, 1 failed"; exit 1; }

id "$TUSER" >/dev/null 2>&1 ||
	useradd --system --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$TUSER" ||
	{ echo "FAIL: setup: cannot create user $TUSER"; echo "0 passed, 1 failed"; exit 1; }

[ -n "${XSERVER_IN_SUITE_ROOT:-}" ] || take_vt_lock

# A VT nobody has open: no process has it as an fd or as controlling tty.
vt_is_unused() {
	dev=$(printf '%d' $(( (4 << 8) | $1 )))
	[ -c "/dev/tty$1" ] || return 1
	ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -q " /dev/tty$1\$" && return 1
	for s in /proc/[0-9]*/stat; do
		# tty_nr is field 7; comm (field 2) may hold spaces, so cut after ')'
		tty=$(sed 's/.*) //' "$s" 2>/dev/null | cut -d' ' -f5)
		[ "$tty" = "$dev" ] && return 1
	done
	return 0
}
VT=${XSERVER_TEST_VT:-}
VT2=
for n in $(seq 20 40); do
	if [ -n "$VT" ] && [ "$n" -le "$VT" ]; then continue; fi
	vt_is_unused "$n" || continue
	if [ -z "$VT" ]; then VT=$n; else VT2=$n; break; fi
done
if [ -z "$VT" ] || [ -z "$VT2" ]; then
	echo "FAIL: setup: no two unused VTs in 20..40"
	echo "0 passed, 1 failed"
	exit 1
fi

WORK=$(mktemp -d /tmp/check-xserver.XXXXXX)
chmod 755 "$WORK"
# The test user must be able to run the patched server wherever the build
# tree is (under a 0700 directory, say): run a copy from $WORK.
cp "$PATCHED" "$WORK/Xorg-patched"
chmod 755 "$WORK/Xorg-patched"
PATCHED=$WORK/Xorg-patched
ACTIVE0=$(fgconsole)
SERVER_PIDS=

# Save each tty's owner, group, mode, ACL and keyboard mode, to put back.
for n in "$VT" "$VT2"; do
	stat -c '%u %g %a' "/dev/tty$n" > "$WORK/tty$n.stat"
	getfacl -p "/dev/tty$n" > "$WORK/tty$n.acl" 2>/dev/null
	perl -e 'open(my $f, "<", $ARGV[0]) or die; my $m = pack("i", 0);
			 ioctl($f, 0x4B44, $m) or die; print unpack("i", $m), "\n";' \
		 "/dev/tty$n" > "$WORK/tty$n.kbmode" 2>/dev/null || echo 3 > "$WORK/tty$n.kbmode"
done

cleanup() {
	for pid in $SERVER_PIDS; do
		kill -KILL "$pid" 2>/dev/null
	done
	for n in "$VT" "$VT2"; do
		if [ -f "$WORK/tty$n.stat" ]; then
			read -r uid gid mode < "$WORK/tty$n.stat"
			setfacl -b "/dev/tty$n"
			chown "$uid:$gid" "/dev/tty$n"
			chmod "$mode" "/dev/tty$n"
			setfacl --restore="$WORK/tty$n.acl" 2>/dev/null
			# KDSETMODE KD_TEXT, KDSKBMODE as found: a killed server leaves both
			perl -e 'open(my $f, "<", $ARGV[0]) or exit; ioctl($f, 0x4B3A, 0);
					 ioctl($f, 0x4B45, $ARGV[1] + 0);' \
				 "/dev/tty$n" "$(cat "$WORK/tty$n.kbmode")" 2>/dev/null
		fi
	done
	[ "$(fgconsole 2>/dev/null)" = "$ACTIVE0" ] || chvt "$ACTIVE0"
	for d in 71 72 73 74 75 76 77; do rm -f "/tmp/.X$d-lock"; done
	if [ "${XSERVER_KEEP:-0}" = 1 ]; then
		echo "check-xserver: kept $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# Minimal config: a driver that asks for I/O ports (vesa), so xf86EnableIO()
# is reached right after the console is set up; without a VGA device it
# then stops with "no screens found".
cat > "$WORK/xorg.conf" <<'EOF'
Section "Device"
	Identifier "vesa0"
	Driver     "vesa"
EndSection
EOF

# run NAME USER XORG DISPLAY ARGS...: run XORG under strace as USER (root or
# the test user) in a new session whose controlling tty is /dev/ttyVT, with
# stdout/stderr to NAME.out. Leaves NAME.log (server log) and NAME.trace.
run() {
	name=$1 user=$2 xorg=$3 display=$4
	shift 4
	d=$WORK/$name
	mkdir -p "$d"
	if [ "$user" = root ]; then
		as=
	else
		chown "$user" "$d"
		as="setpriv --reuid=$user --regid=$user --init-groups --reset-env --"
	fi
	# The session leader opens the tty without O_NOCTTY: it becomes the
	# controlling tty; exec keeps it for strace and Xorg.
	# shellcheck disable=SC2086
	timeout -k 5 60 $as setsid -w sh -c '
		echo $$ > "$1/pid"; d=$1 tty=$2; shift 2
		exec < "$tty"
		exec strace -f -o "$d/trace" -e trace=openat,open,ioctl,ioperm,iopl,prctl,capset "$@"
	' sh "$d" "/dev/tty$VT" "$xorg" ":$display" -config "$WORK/xorg.conf" \
		-logfile "$d/log" -nolisten tcp "$@" > "$d/out" 2>&1
	echo $? > "$d/rc"
	SERVER_PIDS="$SERVER_PIDS $(cat "$d/pid" 2>/dev/null)"
	# the server itself, if it outlived strace
	[ -f "/tmp/.X$display-lock" ] &&
		SERVER_PIDS="$SERVER_PIDS $(tr -dc '0-9' < "/tmp/.X$display-lock")"
	for pid in $SERVER_PIDS; do kill -KILL "$pid" 2>/dev/null; done
	rm -f "/tmp/.X$display-lock"
	[ "$(fgconsole 2>/dev/null)" = "$ACTIVE0" ] || chvt "$ACTIVE0"
}

grant() { setfacl -m "u:$TUSER:rw" "/dev/tty$1"; }

echo "check-xserver: $(. /etc/os-release && echo "$PRETTY_NAME"), xorg-server $(dpkg-query -W -f='${Version}' xserver-xorg-core) (stock), patched $(cd "$BUILDDIR/src" 2>/dev/null && dpkg-parsechangelog -S Version)"
echo "check-xserver: test user $TUSER, controlling VT $VT, other VT $VT2, active VT $ACTIVE0"
grant "$VT"

# --- 1. unprivileged, no vtN: patched uses the controlling VT ----------------
run patched-user "$TUSER" "$PATCHED" 71
r=$WORK/patched-user
check patched-unpriv-uses-controlling-vt \
	"log lacks \"(--) using VT number $VT\" after the controlling-tty line" \
	sh -c "grep -qF 'not running as root: using the controlling tty' '$r/log' &&
		   grep -qF '(--) using VT number $VT' '$r/log'"
check patched-unpriv-never-opens-tty0 \
	"trace shows /dev/tty0 opened, or no open of /dev/tty$VT" \
	sh -c "! grep -qE 'open(at)?\\(.*\"/dev/tty0\"' '$r/trace' &&
		   grep -qE 'open(at)?\\(.*\"/dev/tty$VT\".*= [0-9]+\$' '$r/trace'"
check patched-unpriv-vt-setup-succeeds \
	"VT_ACTIVATE, VT_SETMODE, KDSETMODE KD_GRAPHICS or KDSKBMODE did not return 0, or no \"no screens found\"" \
	sh -c "grep -qE 'VT_ACTIVATE, 0x[0-9a-f]+\\) += 0\$' '$r/trace' &&
		   grep -qE 'VT_SETMODE, .*= 0\$' '$r/trace' &&
		   grep -qE 'KDSETMODE, KD_GRAPHICS\\) += 0\$' '$r/trace' &&
		   grep -qE 'KDSKBMODE, K_(OFF|RAW)\\) += 0\$' '$r/trace' &&
		   ! grep -qE 'xf86OpenConsole|parse_vt_settings' '$r/log' &&
		   grep -qF 'no screens found' '$r/log'"
check patched-unpriv-skips-io-ports \
	"no \"(II) xf86EnableIO: not enabling I/O ports (not running as root)\", or a failure line, or ioperm/iopl in trace" \
	sh -c "grep -qF '(II) xf86EnableIO: not enabling I/O ports (not running as root)' '$r/log' &&
		   ! grep -qF 'failed to enable I/O ports' '$r/log' &&
		   ! grep -qE '^[0-9]+ +(ioperm|iopl)\\(' '$r/trace'"

# --- 2. the same with the stock server: the control ---------------------------
run stock-user "$TUSER" "$STOCK" 72
r=$WORK/stock-user
check stock-unpriv-fails-on-tty0 \
	"stock log lacks \"parse_vt_settings: Cannot open /dev/tty0 (Permission denied)\"" \
	has "$r/log" "parse_vt_settings: Cannot open /dev/tty0 (Permission denied)"

run stock-user-vt "$TUSER" "$STOCK" 73 "vt$VT"
r=$WORK/stock-user-vt
check stock-unpriv-vtN-fails-io-ports \
	"stock log lacks the KeepTty line or \"xf86EnableIO: failed to enable I/O ports\"" \
	sh -c "grep -qF 'controlling tty is VT number $VT, auto-enabling KeepTty' '$r/log' &&
		   grep -qF 'xf86EnableIO: failed to enable I/O ports' '$r/log'"

# --- 3. root, -nohwaccess ----------------------------------------------------------
run patched-root "root" "$PATCHED" 74 "vt$VT" -nohwaccess
r=$WORK/patched-root
check patched-root-nohwaccess-no-io-ports \
	"no \"(II) xf86EnableIO: not enabling I/O ports (-nohwaccess)\", or ioperm/iopl in trace" \
	sh -c "grep -qF '(II) xf86EnableIO: not enabling I/O ports (-nohwaccess)' '$r/log' &&
		   ! grep -qE '^[0-9]+ +(ioperm|iopl)\\(' '$r/trace' &&
		   grep -qF 'no screens found' '$r/log'"

check patched-root-nohwaccess-drops-rawio \
	"no \"(II) -nohwaccess: CAP_SYS_RAWIO dropped\", or the trace lacks prctl(PR_CAPBSET_DROP, CAP_SYS_RAWIO) = 0 and a capset() = 0 without CAP_SYS_RAWIO" \
	sh -c "grep -qF '(II) -nohwaccess: CAP_SYS_RAWIO dropped' '$r/log' &&
		   grep -qE '^[0-9]+ +prctl\\(PR_CAPBSET_DROP, CAP_SYS_RAWIO\\) += 0\$' '$r/trace' &&
		   grep -E '^[0-9]+ +capset\\(.*\\) += 0\$' '$r/trace' | grep -v CAP_SYS_RAWIO | grep -q CAP_SYS_ADMIN"

run stock-root "root" "$STOCK" 75 "vt$VT"
r=$WORK/stock-root
# Whether ioperm() then succeeds depends on the kernel (ENOSYS without
# CONFIG_X86_IOPL_IOPERM); that the stock server calls it is what matters.
check stock-root-keeps-rawio \
	"the stock root server dropped CAP_SYS_RAWIO too: the check above would prove nothing" \
	sh -c "! grep -qE 'PR_CAPBSET_DROP|capset\\(' '$r/trace'"
check stock-root-tries-io-ports \
	"stock root trace lacks ioperm(0, 0x400, 1): the -nohwaccess check above would prove nothing" \
	grep -qE '^[0-9]+ +ioperm\(0, (0x400|1024), 1\)' "$r/trace"

# --- 4. EPERM: a VT that is not the controlling tty --------------------------
grant "$VT2"
run patched-eperm "$TUSER" "$PATCHED" 76 "vt$VT2" -keeptty
r=$WORK/patched-eperm
check patched-eperm-names-cause-and-fix \
	"log lacks \"Switching VT failed; $HINT ... pam_xdevices(8)\"" \
	sh -c "grep -qF 'VT_ACTIVATE failed: Operation not permitted' '$r/log' &&
		   grep -qF 'Switching VT failed; $HINT' '$r/log' &&
		   grep -qF 'start it from the VT you logged in on; see pam_xdevices(8)' '$r/log'"

run stock-eperm "$TUSER" "$STOCK" 77 "vt$VT2" -keeptty
r=$WORK/stock-eperm
check stock-eperm-gives-no-reason \
	"stock log lacks the bare \"Switching VT failed\"" \
	sh -c "grep -qF 'VT_ACTIVATE failed: Operation not permitted' '$r/log' &&
		   grep -qE 'xf86OpenConsole: Switching VT failed\$' '$r/log'"

check active-vt-unchanged "active VT is $(fgconsole), was $ACTIVE0" \
	test "$(fgconsole)" = "$ACTIVE0"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
