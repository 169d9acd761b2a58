#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Flake hunt: every test program given runs STRESS_RUNS times, the copies
# started together, while STRESS_HOG busy loops load the CPUs. The
# copies queue on the harness's test lock (the VTs and device numbers they
# use are the machine's: two at once would test each other), so the load
# is what changes the timing. Any run that does not pass is a flake.
#
# usage: check-stress.sh TEST...   (in the tests build directory, as root,
#                                   with make check's environment)
# Env: STRESS_RUNS (default 5), STRESS_HOG (default: number of CPUs),
#      STRESS_OUT (logs; default ./stress-out).
# Prints "PASS: T (N/N runs)" or "FAIL: T (F/N runs failed)" per test, the
# failing runs' logs, then "stress: R runs, F flakes". Exit 0 only if F = 0.
set -u

runs=${STRESS_RUNS:-5}
hog=${STRESS_HOG:-$(nproc)}
out=${STRESS_OUT:-$PWD/stress-out}

[ $# -gt 0 ] || { echo "usage: $0 TEST..." >&2; exit 2; }
if [ "$(id -u)" != 0 ]; then
	echo "check-stress: must run as root (the tests it stresses are root-only)" >&2
	exit 1
fi
for t in "$@"; do
	[ -x "./$t" ] || { echo "check-stress: no ./$t (run make check first)" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out"

hog_pids=
stop_hog() {
	for p in $hog_pids; do kill "$p" 2>/dev/null; done
	for p in $hog_pids; do wait "$p" 2>/dev/null; done
	hog_pids=
}
trap 'stop_hog' EXIT
trap 'stop_hog; exit 130' INT TERM
# Loop 1 spins without a pause; the others spin and sleep in turns (about
# 0.1 s each), so the runs see a full machine and a CPU going free at any
# moment. A constant full load alone hides races that need a free CPU: a
# killed child that exits at once on the other CPU is what made
# test_kill_during_apply_and_gc write into a dead pipe.
i=0
while [ "$i" -lt "$hog" ]; do
	if [ "$i" = 0 ]; then
		sh -c 'while :; do :; done' &
	else
		sh -c 'while :; do n=0; while [ $n -lt 50000 ]; do n=$((n + 1)); done; sleep 0.1; done' &
	fi
	hog_pids="$hog_pids $!"
	i=$((i + 1))
done

t0=$(date +%s)
echo "stress: $# tests x $runs runs, $hog busy loops, logs in $out"
pids=
for t in "$@"; do
	k=1
	while [ "$k" -le "$runs" ]; do
		( "./$t" >"$out/$t.$k.log" 2>&1; echo $? >"$out/$t.$k.rc" ) &
		pids="$pids $!"
		k=$((k + 1))
	done
done
for p in $pids; do wait "$p"; done
stop_hog

total=0 flakes=0
for t in "$@"; do
	failed=0 k=1
	while [ "$k" -le "$runs" ]; do
		rc=$(cat "$out/$t.$k.rc" 2>/dev/null || echo lost)
		total=$((total + 1))
		if [ "$rc" != 0 ]; then
			failed=$((failed + 1))
			echo "--- flake: $t run $k/$runs exited $rc; $out/$t.$k.log:"
			# check's failure lines first, then the end of the log
			grep -E ':[EF]:|^harness:' "$out/$t.$k.log" | head -n 20
			tail -n 20 "$out/$t.$k.log"
		fi
		k=$((k + 1))
	done
	flakes=$((flakes + failed))
	if [ "$failed" = 0 ]; then
		echo "PASS: $t ($runs/$runs runs)"
	else
		echo "FAIL: $t ($failed/$runs runs failed)"
	fi
done
echo "stress: $total runs, $flakes flakes in $(($(date +%s) - t0)) s"
[ "$flakes" = 0 ]
