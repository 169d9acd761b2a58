#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The runit service's finish, run as runsv runs it (in the service
# directory, with run's exit code and signal): what a restart cannot mend
# (exit 2, 3, 5, 6) marks the service down through "sv down ."; a clean
# stop, a failure and a signal do not. sv and sleep are stand-ins that
# record their arguments. Any user.
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
exit $fail
