#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The qemu suite: build (or reuse) the test image, boot it once and run every
# scenario. Prints a line per scenario and "N passed, N failed, N skipped";
# exits non-zero if any failed. Screenshots and logs go to OUT.
#
# usage: check-vm.sh [--srcdir DIR] [--builddir DIR] [--out DIR] [--scenarios s1,s2,...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$here/../.. builddir= out=
scenarios=s1,s4,s8,s5,s6,s7,l1,l2,l3,s3,s2,f1,f2,f3,l4
while [ $# -gt 0 ]; do
	case $1 in
	--srcdir) srcdir=$2; shift 2 ;;
	--builddir) builddir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--scenarios) scenarios=$2; shift 2 ;;
	*) echo "usage: $0 [--srcdir DIR] [--builddir DIR] [--out DIR] [--scenarios LIST]" >&2; exit 2 ;;
	esac
done
if [ -z "$out" ]; then
	if [ -n "$builddir" ]; then out=$builddir/tests/vm/out; else out=$here/out; fi
fi
for tool in qemu-system-x86_64 mmdebstrap mkfs.ext4 python3; do
	command -v "$tool" >/dev/null || {
		echo "check-vm: missing $tool (apt-get install qemu-system-x86 mmdebstrap e2fsprogs python3)" >&2
		exit 1
	}
done
t0=$SECONDS
img=$("$here/build-image.sh" --srcdir "$srcdir" | tail -n 1)
echo "check-vm: image $img ready in $((SECONDS - t0)) s"
rm -rf "$out"
exec python3 "$here/run-vm.py" --image "$img" --out "$out" --scenarios "$scenarios"
