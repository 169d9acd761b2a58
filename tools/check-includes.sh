#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The core (libxdev/) knows none of its callers, and its units stand in
# layers that only include downwards. Fails, naming the line, when a file
# of libxdev/:
#  - includes a PAM header (<security/...>, <pam_...>);
#  - includes a local header that is not the core's own (the daemon's
#    proctab.h, anything of pam_xdevices/, xdevices/, xdevicesd/ or
#    xdevices-vt-run/);
#  - includes the header of a unit in a higher layer than its own (a call
#    back up: node.c including core.h), or belongs to a unit that is not
#    in the list below (a new unit gets its place in it).
# Run by tests/ci-gates.sh and, on copies with a fault put in, by
# tests/test-check-includes.sh; changes nothing.
#   tools/check-includes.sh [DIR]   (DIR: the core's folder, default libxdev)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
core=${1:-$top/libxdev}
# The units, lowest first: each may include its own header and those of
# the units before it. HACKING.md's layout table describes them.
layers="util cli vt procfs uring conf tty state sweep node devices policy core"
bad=0

rank() { # unit: its place in $layers, or -1
	i=0
	for l in $layers; do
		[ "$l" = "$1" ] && { echo "$i"; return; }
		i=$((i + 1))
	done
	echo -1
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for f in "$core"/*.c "$core"/*.h; do
	[ -e "$f" ] || continue
	name=${f#"$top"/}
	unit=$(basename "$f")
	unit=${unit%.[ch]}
	own=$(rank "$unit")
	if [ "$own" -lt 0 ]; then
		echo "$name: unit \"$unit\" has no layer in tools/check-includes.sh" >&2
		bad=1
	fi
	# PAM's headers, whatever the spelling of the include.
	if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](security/|pam_)' "$f" |
		sed "s|^|$name:|" | grep .; then
		echo "$name: the core includes a PAM header" >&2
		bad=1
	fi
	# Local headers: config.h, or the core's own from this layer or below.
	grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		sed -E 's/^([0-9]+):[^"]*"([^"]*)".*/\1 \2/' >"$tmp"
	while read -r line hdr; do
		[ "$hdr" = config.h ] && continue
		case $hdr in
		*/*) ;;
		*.h)
			if [ -e "$core/$hdr" ]; then
				theirs=$(rank "${hdr%.h}")
				[ "$theirs" -ge 0 ] && [ "$theirs" -le "$own" ] && continue
				[ "$own" -lt 0 ] && continue # said above
				echo "$name:$line: \"$hdr\" is a layer above \"$unit\": the core calls down, never up" >&2
				bad=1
				continue
			fi
			;;
		esac
		echo "$name:$line: the core includes \"$hdr\", which is not the core's" >&2
		bad=1
	done <"$tmp"
done
if [ "$bad" = 0 ]; then
	echo "check-includes: ${core#"$top"/} includes no PAM header, no header of a front-end, and none of a higher layer"
fi
exit "$bad"
