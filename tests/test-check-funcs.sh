#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The gate tools/check-funcs.sh can fail: it passes the shipped C, then, on
# a folder of its own, passes a function of 80 lines and fails one of 81
# (its declarator on one line, then on two), naming the file and line.
# Non-root; changes nothing outside its temporary folder.
set -u
src=${srcdir:-.}/..
gate=$src/tools/check-funcs.sh
[ -f "$gate" ] || { echo "no $gate"; exit 99; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

if sh "$gate" >"$work/out" 2>&1; then
	echo "PASS: the shipped C passes ($(cat "$work/out"))"
else
	echo "FAIL: the shipped C fails the gate:"
	sed 's/^/    /' "$work/out"
	fail=1
fi

# fn LINES [SPLIT]: x.c, whose one function is LINES long, its opening
# and closing lines counted (an inner block, then one statement a line);
# SPLIT: its declarator on two lines (counted from the second)
fn() {
	rm -rf "$work/c" && mkdir -p "$work/c"
	{
		echo '/* a unit */'
		echo '#define M(x) do {'
		if [ -n "${2:-}" ]; then
			echo 'static int f(int a,'
			echo '             int b) {'
		else
			echo 'static int f(int a, int b) {'
		fi
		echo '        if (a) {'
		echo '                b++;'
		echo '        }'
		i=5
		while [ "$i" -lt "$1" ]; do
			echo '        a++;'
			i=$((i + 1))
		done
		echo '}'
	} >"$work/c/x.c"
}
case_of() { # LINES SPLIT WANT(pass|fail)
	n=$1
	fn "$1" "$2"
	if sh "$gate" "$work/c" >"$work/out" 2>&1; then got=pass; else got=fail; fi
	if [ "$got" != "$3" ]; then
		echo "FAIL: a function of $n lines${2:+ (declarator on two lines)}: the gate said $got, not $3:"
		sed 's/^/    /' "$work/out"
		fail=1
	elif [ "$got" = fail ] && ! grep -q "x.c:[0-9]*: $n lines (at most 80)" "$work/out"; then
		echo "FAIL: a function of $n lines: the gate failed without naming x.c and $n lines:"
		sed 's/^/    /' "$work/out"
		fail=1
	else
		echo "PASS: a function of $n lines${2:+ (declarator on two lines)}: $3"
	fi
}
case_of 80 '' pass
case_of 81 '' fail
case_of 80 split pass
case_of 81 split fail
exit "$fail"
