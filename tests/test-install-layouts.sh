#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# "make install DESTDIR=..." in each distribution's layout: layouts/NAME.args
# holds configure's arguments (and NAME.pam.pc, if there, is the pam.pc
# configure sees), layouts/NAME.files the files that layout expects, each
# as its mode and path. A copy of the built tree is configured again for
# each layout and installed (nothing is compiled again: config.h stays the
# same); every difference from the expected list is printed. Each script,
# rule and example that names the helper or the daemon must name it where
# that layout installed it. Any user.
set -u
srcdir=$(cd "$(dirname "$0")" && pwd)
top_builddir=$(cd "${XDEV_TOP_BUILDDIR:-..}" && pwd)
top_srcdir=$(cd "${XDEV_TOP_SRCDIR:-$srcdir/..}" && pwd)
make=${MAKE:-make}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xdev-layouts.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
build=$tmp/build
mkdir "$tmp/pc"
fail=0

[ -x "$top_builddir/xdevices/xdevices" ] || { echo "ERROR: build the tree first"; exit 99; }
# The built tree without what the tests write while this runs (tar exits 1
# when a file changed as it read it: no harm here).
mkdir "$build"
(cd "$top_builddir" && tar -cf - --exclude=./.git --exclude='./_build*' --exclude='*.log' \
	--exclude='*.trs' --exclude=./autom4te.cache .) | (cd "$build" && tar -xpf -)
[ -f "$build/config.status" ] || { echo "ERROR: copying $top_builddir"; exit 99; }
# configured in the source tree, or out of it
if [ "$top_srcdir" = "$top_builddir" ]; then
	configure=$build/configure
else
	configure=$top_srcdir/configure
	# The dependency files name the sources relative to where the tree was
	# built (make distcheck's _build/sub), which is not true of the copy:
	# emptied, as configure leaves them in a fresh tree; the copy's objects
	# are as new as ever, so nothing is rebuilt for it.
	find "$build" -path '*/.deps/*' \( -name '*.Po' -o -name '*.Plo' \) \
		-exec sh -c 'for f; do echo "# dummy" >"$f"; done' sh {} +
fi

# the compiler and flags the tree was built with (an ASan build's, in
# check-asan): configure runs again, and a relink must use them too
cc=$(sed -n 's/^CC = //p' "$build/Makefile")
cflags=$(sed -n 's/^CFLAGS = //p' "$build/Makefile")
ldflags=$(sed -n 's/^LDFLAGS = //p' "$build/Makefile")
# name: configure, make install and compare, in the one build directory
layout() {
	name=$1
	dest=$tmp/dest-$name
	set -f
	# shellcheck disable=SC2046
	set -- $(sed 's/#.*//' "$srcdir/layouts/$name.args")
	set +f
	# one PKG_CONFIG_PATH for all (configure's cache holds it), with the
	# layout's own pam.pc in it, if it has one
	rm -f "$tmp/pc/pam.pc"
	[ ! -f "$srcdir/layouts/$name.pam.pc" ] || cp "$srcdir/layouts/$name.pam.pc" "$tmp/pc/pam.pc"
	start=$(date +%s)
	if ! (cd "$build" && PKG_CONFIG_PATH=$tmp/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
		"$configure" -C --disable-tests --enable-silent-rules CC="$cc" CFLAGS="$cflags" \
		LDFLAGS="$ldflags" "$@") >"$log" 2>&1; then
		tail -n 20 "$log"
		echo "FAIL: $name: configure"
		fail=1
		return
	fi
	if ! (cd "$build" && $make install DESTDIR="$dest") >"$log" 2>&1; then
		tail -n 20 "$log"
		echo "FAIL: $name: make install"
		fail=1
		return
	fi
	(cd "$dest" && find . -mindepth 1 ! -type d -printf '%m /%P\n') | LC_ALL=C sort -k2 \
		>"$tmp/$name.got"
	[ -z "${XDEV_LAYOUTS_SAVE:-}" ] || cp "$tmp/$name.got" "$XDEV_LAYOUTS_SAVE/$name.files"
	if diff -u "$srcdir/layouts/$name.files" "$tmp/$name.got" >"$tmp/$name.diff"; then
		echo "PASS: $name: every file where the layout expects it ($(($(date +%s) - start)) s)"
	else
		echo "FAIL: $name: the installed files differ from layouts/$name.files (- expected, + installed):"
		sed -n 's/^\([-+][^-+]\)/    \1/p' "$tmp/$name.diff"
		fail=1
	fi
	# the paths to the programs in the scripts, rules and examples installed
	bad=
	for f in $(cd "$dest" && grep -rlI --exclude='*.[0-9]' -e '/xdevices\b' -e '/xdevicesd\b' . 2>/dev/null); do
		for p in $(grep -ho '/[a-z/]*bin/xdevicesd\{0,1\}\b' "$dest/$f" | sort -u); do
			[ -x "$dest$p" ] || bad="$bad ${f#.}:$p"
		done
	done
	if [ -z "$bad" ]; then
		echo "PASS: $name: scripts and rules name the programs where they are"
	else
		echo "FAIL: $name: names a program that is not installed there:$bad"
		fail=1
	fi
}

# XDEV_LAYOUTS: only these (check-asan installs one: what it adds is the
# instrumented build, which one layout relinks as well as three)
for args in "$srcdir"/layouts/*.args; do
	name=$(basename "$args" .args)
	case " ${XDEV_LAYOUTS:-$name} " in
	*" $name "*) layout "$name" ;;
	esac
done
exit $fail
