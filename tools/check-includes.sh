#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The core (libxdev/) knows none of its callers: fails, naming the line, when
# a file of libxdev/ includes a PAM header (<security/...>) or a local header
# that is not the core's own (the daemon's proctab.h, anything of
# pam_xdevices/, xdevices/, xdevicesd/ or xdevices-vt-run/). Run by
# tests/ci-gates.sh; changes nothing.
#   tools/check-includes.sh [DIR]   (DIR: the core's folder, default libxdev)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
core=${1:-$top/libxdev}
bad=0
for f in "$core"/*.c "$core"/*.h; do
	[ -e "$f" ] || continue
	name=${f#"$top"/}
	# PAM's headers, whatever the spelling of the include.
	if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](security/|pam_)' "$f" |
		sed "s|^|$name:|" | grep .; then
		echo "$name: the core includes a PAM header" >&2
		bad=1
	fi
	# Local headers: config.h or the core's own.
	grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		sed -E 's/^([0-9]+):[^"]*"([^"]*)".*/\1 \2/' >"${TMPDIR:-/tmp}/check-includes.$$"
	while read -r line hdr; do
		[ "$hdr" = config.h ] && continue
		case $hdr in
		*/*) ;;
		*) [ -e "$core/$hdr" ] && continue ;;
		esac
		echo "$name:$line: the core includes \"$hdr\", which is not the core's" >&2
		bad=1
	done <"${TMPDIR:-/tmp}/check-includes.$$"
	rm -f "${TMPDIR:-/tmp}/check-includes.$$"
done
if [ "$bad" = 0 ]; then
	echo "check-includes: ${core#"$top"/} includes no PAM header and no header of a front-end"
fi
exit "$bad"
