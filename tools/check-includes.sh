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
layers="util cli vt drmdev evdev procfs access logind rundir uring inflight logindefs conf tty state sweep node devices ctx linger txn ledger handover others watch follow core"
bad=0

rank() { # unit: its place in $layers into $r, or -1 (no subshell: fast)
	r=-1
	i=0
	for l in $layers; do
		[ "$l" = "$1" ] && { r=$i; return; }
		i=$((i + 1))
	done
}

# Every include of every file, read in one pass (a fork a file is slow):
# "FILE LINE HEADER", the header as written, <> kept for system ones.
includes=$(awk '/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]/ {
	h = $0; sub(/^[^<"]*/, "", h); q = substr(h, 1, 1)
	e = index(substr(h, 2), q == "<" ? ">" : "\"")
	print FILENAME, FNR, (q == "<" ? "<" : "") substr(h, 2, e - 1)
}' "$core"/*.c "$core"/*.h)
for f in "$core"/*.c "$core"/*.h; do
	[ -e "$f" ] || continue
	unit=${f##*/}
	unit=${unit%.[ch]}
	rank "$unit"
	[ "$r" -ge 0 ] || {
		echo "${f#"$top"/}: unit \"$unit\" has no layer in tools/check-includes.sh" >&2
		bad=1
	}
done
while read -r f line hdr; do
	[ -n "$f" ] || continue
	name=${f#"$top"/}
	unit=${f##*/}
	unit=${unit%.[ch]}
	rank "$unit"
	own=$r
	case $hdr in
	"<security/"* | "<pam_"* | pam_*)
		echo "$name:$line: the core includes a PAM header ($hdr)" >&2
		bad=1
		continue
		;;
	"<"* | config.h) continue ;;
	*/*) ;;
	*.h)
		if [ -e "$core/$hdr" ]; then
			rank "${hdr%.h}"
			[ "$r" -ge 0 ] && [ "$r" -le "$own" ] && continue
			[ "$own" -lt 0 ] && continue # said above
			echo "$name:$line: \"$hdr\" is a layer above \"$unit\": the core calls down, never up" >&2
			bad=1
			continue
		fi
		;;
	esac
	echo "$name:$line: the core includes \"$hdr\", which is not the core's" >&2
	bad=1
done <<EOF2
$includes
EOF2
if [ "$bad" = 0 ]; then
	echo "check-includes: ${core#"$top"/} includes no PAM header, no header of a front-end, and none of a higher layer"
fi
exit "$bad"
