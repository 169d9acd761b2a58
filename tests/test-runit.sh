#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The runit service's finish, run as runsv runs it (in the service
# directory, with run's exit code and signal): what a restart cannot mend
# (exit 2, 3, 5, 6) marks the service down through "sv down ."; a clean
# stop, a failure and a signal do not. sv and sleep are stand-ins that
# record their arguments. Any user. As root, also run: it starts no
# daemon while the sysvinit script's supervisor runs (a private /run).
set -u
finish=${XDEV_RUNIT_FINISH:-$(dirname "$0")/../xdevicesd/init/runit/finish}
[ -f "$finish" ] || { echo "no $finish"; exit 99; }
finish=$(cd "$(dirname "$finish")" && pwd)/$(basename "$finish")
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/svc/supervise"
printf '#!/bin/sh\necho "sv $*" >>"%s/calls"\n' "$tmp" >"$tmp/bin/sv"
printf '#!/bin/sh\necho "sleep $*" >>"%s/calls"\n' "$tmp" >"$tmp/bin/sleep"
chmod +x "$tmp/bin/sv" "$tmp/bin/sleep"
fail=0

# name, run's exit code, signal, the calls expected ("" for none)
check() {
	: >"$tmp/calls"
	out=$(cd "$tmp/svc" && PATH="$tmp/bin:$PATH" sh "$finish" "$2" "$3" 2>&1)
	rc=$?
	calls=$(tr '\n' ';' <"$tmp/calls")
	if [ "$rc" = 0 ] && [ "$calls" = "$4" ]; then
		echo "PASS: $1"
	else
		echo "FAIL: $1: exit $rc, calls \"$calls\", expected \"$4\"; said: $out"
		fail=1
	fi
}

check "clean stop (0) is left to runsv" 0 0 ""
check "a failure (1) restarts after a pause" 1 0 "sleep 5;"
check "usage (2) marks it down" 2 0 "sv down .;"
check "not root (3) marks it down" 3 0 "sv down .;"
check "another daemon (5) marks it down" 5 0 "sv down .;"
check "a logind (6) marks it down" 6 0 "sv down .;"
check "a signal restarts at once" -1 9 ""

# without sv, the same through the control pipe (a file here)
rm "$tmp/bin/sv"
shell=$(command -v sh)
(cd "$tmp/svc" && PATH="$tmp/bin:/nonexistent" "$shell" "$finish" 5 0 >/dev/null 2>&1)
if [ "$(cat "$tmp/svc/supervise/control" 2>/dev/null)" = d ]; then
	echo "PASS: without sv, 'd' goes to supervise/control"
else
	echo "FAIL: without sv, supervise/control holds \"$(cat "$tmp/svc/supervise/control" 2>/dev/null)\""
	fail=1
fi

# run, with a stand-in daemon, in a mount namespace of its own (root)
run_in=${XDEV_RUNIT_RUN_IN:-$(dirname "$0")/../xdevicesd/init/runit/run.in}
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1; then
	echo "not root: run is not tried"
	exit $fail
fi
mkdir "$tmp/sbin" "$tmp/init.d"
printf '#!/bin/sh\necho "daemon started $*"\n' >"$tmp/sbin/xdevicesd"
printf '#!/bin/sh\nwhile :; do sleep 1; done\n' >"$tmp/init.d/xdevicesd"
chmod +x "$tmp/sbin/xdevicesd"
sed "s|@sbindir@|$tmp/sbin|g" "$run_in" >"$tmp/run"
unshare -m sh -s "$tmp" <<'INNER' || fail=1
tmp=$1
fail=0
mount --make-rprivate /
mount -t tmpfs xdevtest /run
out=$(sh "$tmp/run"); rc=$?
case "$rc:$out" in
"0:daemon started --stderr") echo "PASS: run starts the daemon" ;;
*) echo "FAIL: run without a sysvinit supervisor: exit $rc, said: $out"; fail=1 ;;
esac
# the sysvinit script's supervisor, as start-stop-daemon starts it
sh "$tmp/init.d/xdevicesd" supervise &
echo $! >/run/xdevicesd.supervisor.pid
# until the child has exec'd the script (under load it may not have yet:
# its cmdline is still this shell's)
i=0
while [ $i -lt 100 ] && ! tr '\0' ' ' <"/proc/$!/cmdline" | grep -q 'xdevicesd supervise $'; do
	sleep 0.05
	i=$((i + 1))
done
out=$(sh "$tmp/run"); rc=$?
case "$rc:$out" in
5:*"the sysvinit script runs it already"*) echo "PASS: run stands aside for the sysvinit supervisor (exit 5)" ;;
*) echo "FAIL: run beside the sysvinit supervisor: exit $rc, said: $out"; fail=1 ;;
esac
kill $! 2>/dev/null
# a stale pid file naming another process is no supervisor
sleep 30 &
echo $! >/run/xdevicesd.supervisor.pid
out=$(sh "$tmp/run"); rc=$?
case "$rc:$out" in
"0:daemon started --stderr") echo "PASS: a stale pid file does not stop run" ;;
*) echo "FAIL: run with a stale pid file: exit $rc, said: $out"; fail=1 ;;
esac
kill $! 2>/dev/null
exit $fail
INNER
exit $fail
