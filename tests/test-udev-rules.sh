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

# xdevicesd's announcement (doc/DESIGN.md §3.10): a synthetic "change" with
# the argument XDEVICES=announce, which the kernel passes as
# SYNTH_ARG_XDEVICES. udev reads the event's properties from the uevent
# file, so one bound over tty0's gives the rules what such an event carries.
synth() { # action argument output
	{ cat /sys/class/tty/tty0/uevent
	  echo SYNTH_UUID=4e1c0a52-7d39-4b6e-9f08-3a5d2c1b7e64
	  echo "SYNTH_ARG_XDEVICES=$2"; } >/run/synth.uevent
	mount --bind /run/synth.uevent /sys/class/tty/tty0/uevent
	udevadm test --action="$1" /sys/class/tty/tty0 >"$3" 2>&1
	umount /sys/class/tty/tty0/uevent
}
udevadm test --action=change /sys/class/tty/tty0 >/run/change.out 2>&1
check "a change runs xdevices apply" /run/change.out "^run: '.*/xdevices apply /dev/tty0'" 1
synth change announce /run/announce.out
check "the announcement reaches the rules" /run/announce.out "^SYNTH_ARG_XDEVICES=announce" 1
check "the daemon's announcement runs no helper" /run/announce.out "xdevices apply" 0
check "the announcement keeps the tag" /run/announce.out "^TAGS=.*:xdevices:" 1
check "the announcement keeps the class" /run/announce.out "^XDEVICES_CLASS=console" 1
synth change other /run/other.out
check "a change with another argument runs apply" /run/other.out "^run: '.*/xdevices apply /dev/tty0'" 1
synth add announce /run/addannounce.out
check "an add with the argument runs apply" /run/addannounce.out "^run: '.*/xdevices apply /dev/tty0'" 1

# The check above can fail: a broken copy of the file is reported.
sed 's/^ACTION!=/ACTON!=/' "$rules" > /run/udev/rules.d/72-xdevices.rules
udevadm test --action=add /sys/class/tty/tty0 >/run/bad.out 2>&1
check "a broken rule is reported by the parser" /run/bad.out "72-xdevices.rules:[0-9]*.*\(nvalid\|rror\|nknown\)" 1

[ "$fail" = 0 ]
INNER
