#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# 72-xdevices.rules through udev's own parser (udevadm test) on this
# machine's real tty devices, in a private mount namespace so only a private
# /run/udev is touched. DRM and input hotplug are proven in the qemu suite.
set -u
[ "$(id -u)" = 0 ] || { echo "not root: skipping"; exit 77; }
command -v udevadm >/dev/null 2>&1 || { echo "no udevadm: skipping"; exit 77; }
rules=${XDEV_RULES:-../udev-rules/72-xdevices.rules}
[ -f "$rules" ] || { echo "no $rules"; exit 99; }

exec unshare -m sh -s "$rules" <<'INNER'
set -u
rules=$1
fail=0
mount --make-rprivate /
mount -t tmpfs xdevtest /run
mkdir -p /run/udev/rules.d
cp "$rules" /run/udev/rules.d/72-xdevices.rules

check() { # name, command output file, grep pattern, expect (1 found / 0 absent)
	if grep -q -- "$3" "$2"; then got=1; else got=0; fi
	if [ "$got" = "$4" ]; then echo "PASS: $1"; else echo "FAIL: $1"; sed 's/^/    /' "$2"; fail=1; fi
}

udevadm test --action=add /sys/class/tty/tty0 >/run/add.out 2>&1
check "rules file is read" /run/add.out "Reading rules file: /run/udev/rules.d/72-xdevices.rules" 1
check "no parse error in our file" /run/add.out "72-xdevices.rules:[0-9]*.*\(nvalid\|rror\|gnor\)" 0
check "tty0 gets the console class" /run/add.out "^XDEVICES_CLASS=console" 1
check "tty0 gets the xdevices tag" /run/add.out "^TAGS=.*:xdevices:" 1
check "add runs xdevices apply" /run/add.out "^run: '.*/xdevices apply /dev/tty0'" 1

udevadm test --action=remove /sys/class/tty/tty0 >/run/rm.out 2>&1
check "remove runs xdevices forget" /run/rm.out "^run: '.*/xdevices forget /dev/tty0'" 1
check "remove does not run apply" /run/rm.out "xdevices apply" 0

udevadm test --action=add /sys/class/tty/tty5 >/run/tty5.out 2>&1
check "a VT is not tagged" /run/tty5.out "^XDEVICES_CLASS" 0
check "a VT runs no helper" /run/tty5.out "xdevices apply" 0

udevadm test --action=bind /sys/class/tty/tty0 >/run/bind.out 2>&1
check "other actions run no helper" /run/bind.out "xdevices apply" 0

# The check above can fail: a broken copy of the file is reported.
sed 's/^ACTION!=/ACTON!=/' "$rules" > /run/udev/rules.d/72-xdevices.rules
udevadm test --action=add /sys/class/tty/tty0 >/run/bad.out 2>&1
check "a broken rule is reported by the parser" /run/bad.out "72-xdevices.rules:[0-9]*.*\(nvalid\|rror\|nknown\)" 1

[ "$fail" = 0 ]
INNER
