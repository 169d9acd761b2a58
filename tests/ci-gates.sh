#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI gates: gcc and clang -Werror builds in their own build trees, the
# package's build (Debian's hardening flags from dpkg-buildflags, as
# debian/rules gets them, plus -Werror; no tests), cppcheck clean, no whitespace errors, the style (tools/format-check.sh),
# the core's includes (tools/check-includes.sh: no PAM or daemon header in libxdev/, no include up a layer),
# no function of the shipped C over 80 lines (tools/check-funcs.sh),
# make distcheck with --disable-root-tests (the tarball builds in a separate tree,
# installs, uninstalls and passes the tests that need no root; the root
# tests are built but not run: the stages tests, stress, valgrind and asan
# run them from the same sources, and make dist itself fails if the
# tarball lacks a tracked file, tools/check-dist.sh). Prints each gate's
# time and ends with "N passed, N failed". Run from anywhere in the tree.
# CI_GATES_GCC_TREE=DIR: DIR is this tree, configured with gcc and
# --enable-werror and built with its tests (what .ci/run's tests stage
# leaves): the gcc gate runs make and make check TESTS= there, which
# compile nothing that is up to date and fail on any warning, instead of
# building it all again in a copy (the same compiler, flags and files).
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

# What dpkg-buildpackage compiles, with the flags it passes (-O2,
# _FORTIFY_SOURCE=2 and its warn_unused_result, -fstack-protector-strong,
# -Werror=format-security...), each warning an error; then "make install"
# into a DESTDIR, which must put no libtool archive into the PAM directory.
# The tree CI_GATES_GCC_TREE names, if it was configured as build_with
# gcc would, brought up to date: 0, 1 when it does not qualify, 2 when
# its build fails.
built_with_gcc() {
	dir=$1
	[ -f "$dir/config.status" ] && [ -f "$dir/Makefile" ] || return 1
	grep -q -- '--enable-werror' "$dir/config.status" || return 1
	[ "$(sed -n 's/^CC = //p' "$dir/Makefile")" = gcc ] || return 1
	echo "the tree $dir, configured with gcc and --enable-werror: make, make check TESTS="
	(cd "$dir" && make -j"$jobs" && make -j"$jobs" check TESTS=) || return 2
}

build_gcc() {
	if [ -n "${CI_GATES_GCC_TREE:-}" ]; then
		built_with_gcc "$CI_GATES_GCC_TREE"
		case $? in
		0) return 0 ;;
		1) echo "CI_GATES_GCC_TREE=$CI_GATES_GCC_TREE does not qualify: built anew" ;;
		*) return 1 ;;
		esac
	fi
	build_with gcc
}

build_debian_flags() {
	dir=$work/build-debian-flags
	copy_tree "$dir" && cd "$dir" && ./autogen.sh &&
		./configure --sysconfdir=/etc --disable-tests --with-securedir=/lib/security \
			CFLAGS="$(dpkg-buildflags --get CFLAGS) -Werror" \
			CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)" \
			LDFLAGS="$(dpkg-buildflags --get LDFLAGS)" &&
		make -j"$jobs" && rm -rf "$dir/dest" && make install DESTDIR="$dir/dest" &&
		test -e "$dir/dest/lib/security/pam_xdevices.so" &&
		if ls "$dir"/dest/lib/security/*.la 2>/dev/null; then
			echo "a libtool archive in the PAM module directory" >&2
			false
		fi && cd "$top"
}

cppcheck_clean() {
	cd "$top" && cppcheck --quiet --error-exitcode=1 --inline-suppr --std=c11 \
		--enable=warning,portability,performance --suppress=missingIncludeSystem \
		--suppress=unknownMacro -D__GNUC__ -DXDEV_FAULT_POINTS -I libxdev -I xdevicesd -I xdevices-vt-run -I tests -I tests/fuzz \
		libxdev/*.c pam_xdevices/*.c xdevices/*.c xdevicesd/*.c xdevices-vt-run/*.c tests/*.c \
		tests/fuzz/*.c
}

# Whitespace errors (trailing blanks, space before tab, blank lines at EOF)
# in every tracked text file: diff against the empty tree.
whitespace_clean() {
	cd "$top" && empty=$(git hash-object -t tree /dev/null) &&
		git diff --check "$empty" HEAD -- . ':(exclude)xserver-patch/*.patch' ':(exclude)*.patch'
}

distcheck() {
	dir=$work/distcheck
	(cd "$top" && git ls-files) >"$work/tracked-files" &&
		export XDEV_TRACKED_FILES="$work/tracked-files" &&
		copy_tree "$dir" && cd "$dir" && ./autogen.sh && ./configure --sysconfdir=/etc &&
		make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--disable-root-tests && cd "$top"
}

mkdir -p "$work"
gate build-gcc build_gcc
gate build-clang build_with clang
gate build-debian-flags build_debian_flags
gate cppcheck cppcheck_clean
gate whitespace whitespace_clean
gate format sh "$top/tools/format-check.sh"
gate core-includes sh "$top/tools/check-includes.sh"
gate functions sh "$top/tools/check-funcs.sh"
gate distcheck distcheck
[ -n "$failed_names" ] && echo "failed gates:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
