#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The gate tools/check-includes.sh can fail: it passes the real libxdev/,
# then fails on copies of it with one fault each (a PAM header, a header of
# the daemon, a call back up a layer, a unit with no layer), naming it.
# Non-root; changes nothing outside its temporary folder.
set -u
src=${srcdir:-.}/..
gate=$src/tools/check-includes.sh
[ -f "$gate" ] || { echo "no $gate"; exit 99; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

if sh "$gate" "$src/libxdev" >"$work/out" 2>&1; then
	echo "PASS: the real libxdev/ passes"
else
	echo "FAIL: the real libxdev/ fails the gate:"
	sed 's/^/    /' "$work/out"
	fail=1
fi

# faulty name, file to change, line appended, what the failure must say
faulty() {
	rm -rf "$work/libxdev" && cp -R "$src/libxdev" "$work/libxdev" || exit 99
	rm -f "$work/libxdev"/*.o "$work/libxdev"/*.lo
	printf '%s\n' "$3" >>"$work/libxdev/$2"
	if sh "$gate" "$work/libxdev" >"$work/out" 2>&1; then
		echo "FAIL: $1: the gate passed"
		fail=1
	elif grep -q -- "$4" "$work/out"; then
		echo "PASS: $1"
	else
		echo "FAIL: $1: the gate failed without saying \"$4\":"
		sed 's/^/    /' "$work/out"
		fail=1
	fi
}

faulty "a PAM header in the core" util.h '#include <security/pam_modules.h>' "util.h.*PAM header"
faulty "the daemon's header in the core" sweep.c '#include "proctab.h"' '"proctab.h", which is not the core'
faulty "a front-end's header by path" core.c '#include "../xdevicesd/step.h"' 'not the core'
faulty "the node layer calling back up to the core" node.c '#include "core.h"' \
	'"core.h" is a layer above "node"'
faulty "the sweeper calling up to the lingering unit" sweep.h '#include "linger.h"' \
	'"linger.h" is a layer above "sweep"'
faulty "a new unit with no layer" extra.c '#include "util.h"' 'unit "extra" has no layer'
exit "$fail"
