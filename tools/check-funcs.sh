#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A CI gate: no function of the shipped C is longer than MAX lines (80),
# from the line that opens it (outside any function, the line ending in
# ") {": the last of its declarator, in the style of tools/format-check.sh)
# to its closing "}" at the left margin. Prints each one over, with its file and line, and
# exits 1 if there is any.
#
# Usage: check-funcs.sh [DIR...]   (default: the shipped C folders)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
max=${CHECK_FUNCS_MAX:-80}
[ $# -gt 0 ] || set -- "$top/libxdev" "$top/pam_xdevices" "$top/xdevices" "$top/xdevicesd" "$top/xdevices-vt-run"
files=$(for d in "$@"; do find "$d" -maxdepth 1 -name '*.c' -type f; done | sort)
[ -n "$files" ] || { echo "check-funcs: no C file in $*" >&2; exit 2; }
# shellcheck disable=SC2086
awk -v max="$max" '
FNR == 1 { open = 0 }
!open && !/^#/ && /\) \{$/ { open = FNR; name = $0; next }
/^\}/ && open {
	n = FNR - open + 1
	if (n > max) { printf "%s:%d: %d lines (at most %d): %s\n", FILENAME, open, n, max, substr(name, 1, 70); bad = 1 }
	if (n > longest) longest = n
	open = 0
}
END {
	if (bad) exit 1
	printf "check-funcs: no function over %d lines (the longest: %d)\n", max, longest
}' $files
