#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The demo: build what is needed (the project, a cached Debian 12 image),
# boot it in qemu, let agetty log alice in on tty1 through the real login
# and PAM stack with pam_xdevices, run startx as alice, type into the xterm
# through the qemu monitor, save the screenshot and say what was verified.
#
# usage: demo.sh [--srcdir DIR] [--out DIR]      (as root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$here/../.. out=$here/out/demo
while [ $# -gt 0 ]; do
	case $1 in
	--srcdir) srcdir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: $0 [--srcdir DIR] [--out DIR]" >&2; exit 2 ;;
	esac
done
t0=$SECONDS
echo "demo: building the image (cached after the first run)..."
mkdir -p "$(dirname "$out")"
img=$("$here/build-image.sh" --srcdir "$srcdir" 2>"$out.build.log" | tail -n 1) || {
	echo "demo: image build failed, see $out.build.log" >&2
	exit 1
}
echo "demo: image ready in $((SECONDS - t0)) s: $img"
echo "demo: booting qemu; alice logs in on tty1 and runs startx..."
rm -rf "$out"
rc=0
python3 "$here/run-vm.py" --image "$img" --out "$out" --scenarios s1 >"$out.summary" 2>"$out.log" || rc=$?
echo "demo: what was verified inside the VM and on the screen:"
sed -n 's/^ *[0-9.]* XDT-CHECK [^ ]* /  /p' "$out/markers.log" 2>/dev/null
cat "$out.summary"
if [ -e "$out/s1-typed.png" ]; then
	cp "$out/s1-typed.png" "$out/startx-as-alice.png"
	echo "demo: screenshot of X running as alice: $out/startx-as-alice.png"
fi
echo "demo: serial console log: $out/serial.log; runner log: $out.log"
exit $rc
