#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI gates: gcc and clang -Werror builds in their own build trees,
# cppcheck clean, no whitespace errors, the style (tools/format-check.sh),
# make distcheck. Prints each gate's
# time and ends with "N passed, N failed". Run from anywhere in the tree.
# Debian: apt-get install gcc clang cppcheck (plus the build dependencies).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
work=${CI_GATES_DIR:-$top/_build-gates}
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
failed_names=

gate() {
	name=$1
	shift
	start=$(date +%s)
	if "$@" >"$work/$name.log" 2>&1; then
		result=PASS
		passed=$((passed + 1))
	else
		result=FAIL
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		tail -n 40 "$work/$name.log"
	fi
	echo "$result: $name ($(($(date +%s) - start)) s, log $work/$name.log)"
}

# A pristine copy of the tracked and new (not ignored) files, so that an
# in-place configured tree does not get in the way of separate builds.
copy_tree() {
	rm -rf "$1" && mkdir -p "$1" &&
		(cd "$top" && git ls-files -z --cached --others --exclude-standard |
			xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
			tar --null -T - -cf -) | (cd "$1" && tar xf -)
}

build_with() {
	cc=$1
	dir=$work/build-$cc
	copy_tree "$dir" &&
		cd "$dir" && ./autogen.sh && ./configure --enable-werror --sysconfdir=/etc CC="$cc" &&
		make -j"$jobs" && make -j"$jobs" check TESTS= && cd "$top"
}

cppcheck_clean() {
	cd "$top" && cppcheck --quiet --error-exitcode=1 --inline-suppr --std=c11 \
		--enable=warning,portability,performance --suppress=missingIncludeSystem \
		--suppress=unknownMacro -D__GNUC__ -DXDEV_FAULT_POINTS -I pam_xdevices -I tests -I tests/fuzz \
		pam_xdevices/*.c tests/*.c tests/fuzz/*.c
}

# Whitespace errors (trailing blanks, space before tab, blank lines at EOF)
# in every tracked text file: diff against the empty tree.
whitespace_clean() {
	cd "$top" && empty=$(git hash-object -t tree /dev/null) &&
		git diff --check "$empty" HEAD -- . ':(exclude)xserver-patch/*.patch' ':(exclude)*.patch'
}

distcheck() {
	dir=$work/distcheck
	copy_tree "$dir" && cd "$dir" && ./autogen.sh && ./configure --sysconfdir=/etc &&
		make -j"$jobs" distcheck && cd "$top"
}

mkdir -p "$work"
gate build-gcc build_with gcc
gate build-clang build_with clang
gate cppcheck cppcheck_clean
gate whitespace whitespace_clean
gate format sh "$top/tools/format-check.sh"
gate distcheck distcheck
[ -n "$failed_names" ] && echo "failed gates:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
