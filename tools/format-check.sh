#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Lists the tracked files whose formatting differs from the tree's style:
# C sources and headers that clang-format (.clang-format) would change, with
# the number of their lines it would change, and shell scripts indented with
# spaces instead of tabs (.editorconfig). Exits 1 if any file is listed, 0 if
# none, 2 when clang-format is missing. Changes nothing.
#   tools/format-check.sh [--diff] [FILE...]
# --diff also prints what clang-format would change. Debian: apt-get install
# clang-format git.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
show_diff=no
if [ "${1:-}" = --diff ]; then
	show_diff=yes
	shift
fi
command -v "$CLANG_FORMAT" >/dev/null 2>&1 || {
	echo "format-check: $CLANG_FORMAT not found (apt-get install clang-format)" >&2
	exit 2
}

# Shell scripts: *.sh, and tracked files whose first line runs a shell.
is_shell() {
	case $1 in
	*.sh) return 0 ;;
	*.patch | *.py | *.c | *.h | *.md | *.am | *.in) return 1 ;;
	esac
	head -n 1 "$1" 2>/dev/null | grep -qE '^#! ?/(usr/)?bin/(env )?(ba|da)?sh'
}

if [ $# -gt 0 ]; then
	files=$*
else
	files=$(git ls-files)
fi
listed=0
total=0
for f in $files; do
	[ -f "$f" ] || continue
	case $f in
	*.c | *.h)
		n=$("$CLANG_FORMAT" --style=file "$f" | diff -U0 "$f" - | grep -c '^-\([^-]\|$\)')
		[ "$n" -gt 0 ] || continue
		echo "$f: clang-format would change $n lines"
		[ "$show_diff" = yes ] && "$CLANG_FORMAT" --style=file "$f" | diff -u "$f" -
		;;
	*)
		is_shell "$f" || continue
		# A line that starts with four or more spaces: indented with
		# spaces (tab indents followed by alignment spaces pass).
		n=$(grep -c '^ \{4,\}[^ ]' "$f")
		[ "$n" -gt 0 ] || continue
		echo "$f: $n lines indented with spaces, not tabs"
		;;
	esac
	listed=$((listed + 1))
	total=$((total + n))
done
if [ "$listed" -gt 0 ]; then
	echo "format-check: $listed files differ ($total lines); the style: .clang-format, .editorconfig"
	exit 1
fi
echo "format-check: clean"
