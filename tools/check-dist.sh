#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-dist.sh SRCDIR DISTDIR: every file git tracks in SRCDIR is in
# DISTDIR (the tree "make dist" is packing), but for those the upstream
# tarball leaves out on purpose: the Debian packaging (debian/, and
# tests/check-deb.sh, which builds from the tarball and debian/) and the
# .gitignore files. Run by "make dist" (dist-hook). A file a test or a
# build needs and EXTRA_DIST forgot fails the dist here, whether or not
# the tests that use it run in distcheck. The list of tracked files is
# XDEV_TRACKED_FILES (a file, one path a line: a copy of the tree without
# .git, as the CI gates build in) or git's; with neither (a tarball's own
# "make dist") there is nothing to compare.
set -u
src=$1
dist=$2
if [ -n "${XDEV_TRACKED_FILES:-}" ]; then
	list=$(cat "$XDEV_TRACKED_FILES") || exit 1
else
	top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) || top=
	if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(cd "$src" && pwd -P)" ]; then
		echo "check-dist: $src is not a git checkout; the tarball's file list is not checked"
		exit 0
	fi
	list=$(git -C "$src" ls-files) || exit 1
fi
missing=$(printf '%s\n' "$list" | while IFS= read -r f; do
	case $f in
	'' | debian/* | tests/check-deb.sh | .gitignore | */.gitignore) continue ;;
	esac
	[ -e "$dist/$f" ] || [ -L "$dist/$f" ] || printf '%s\n' "$f"
done)
if [ -n "$missing" ]; then
	echo "check-dist: tracked files missing from the tarball (add them to EXTRA_DIST):" >&2
	printf '  %s\n' $missing >&2
	exit 1
fi
echo "check-dist: every tracked file but debian/, tests/check-deb.sh and .gitignore is in the tarball"
