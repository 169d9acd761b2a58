#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The tests where / is not a mount point (a plain chroot): in a mount
# namespace of its own (nothing here reaches the host), a directory with
# /usr, /etc, /dev, /proc, /sys, /tmp and this build directory bound into
# it becomes the root of test-vt, whose private /dev needs a private mount
# namespace, made as the harness makes it (tests/mounts.c). Root only.
set -eu
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (chroot, mount)"
	exit 77
fi
command -v unshare >/dev/null || { echo "SKIP: no unshare"; exit 77; }
here=$(pwd)
if [ "${1:-}" != inside ]; then
	root=$(mktemp -d /tmp/.xdevtest-root-XXXXXX)
	rc=0
	unshare -m --propagation private sh "$0" inside "$root" || rc=$?
	# The namespace is gone, and its mounts with it: what is left are
	# empty directories and links, and nothing else is ever removed.
	find "$root" -depth \( -type l -o -type d -empty \) -delete
	exit "$rc"
fi
root=$2
for d in usr etc dev proc sys tmp; do
	mkdir -p "$root/$d"
	mount --rbind "/$d" "$root/$d"
done
for l in bin lib lib64 sbin; do
	if [ -L "/$l" ]; then ln -s "$(readlink "/$l")" "$root/$l"
	elif [ -d "/$l" ]; then mkdir -p "$root/$l" && mount --rbind "/$l" "$root/$l"
	fi
done
mkdir -p "$root/run" "$root$here"
mount --bind "$here" "$root$here"
if chroot "$root" mountpoint -q /; then
	echo "FAIL: / is a mount point in the chroot; the test would prove nothing"
	exit 1
fi
if chroot "$root" sh -c "cd '$here' && ./test-vt"; then
	echo "PASS: test-vt in a chroot whose / is not a mount point"
else
	echo "FAIL: test-vt in a chroot whose / is not a mount point"
	exit 1
fi
