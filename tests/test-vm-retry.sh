#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The qemu suite's second boot (tests/vm/run-vm.py --retry), with each boot
# replaced by its verdicts: which scenarios boot again, what is printed,
# what counts. The boots themselves are the qemu suite's.
src=${XDEV_TOP_SRCDIR:-$(dirname "$0")/..}
exec python3 -B - "$src/tests/vm/run-vm.py" <<'EOF'
import contextlib
import importlib.util
import io
import sys
import tempfile

spec = importlib.util.spec_from_file_location("run_vm", sys.argv[1])
vm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vm)
fails = 0


def run(argv, boots):
	"""main() with ARGV, each boot answered from BOOTS (a list of dicts
	name -> verdict); returns (exit, output lines, the scenarios booted)."""
	booted = []

	def boot(args, wanted, out):
		booted.append(list(wanted))
		res = boots.pop(0)
		results = {vm.NAMES[w]: (v, "why" if v != "PASS" else "", 1.0)
				   for w in wanted for v in [res.get(w)] if v}
		return results, [vm.NAMES[w] for w in wanted if w in res], [], 30.0

	vm.boot = boot
	buf = io.StringIO()
	with tempfile.TemporaryDirectory() as out, contextlib.redirect_stdout(buf), \
			contextlib.redirect_stderr(io.StringIO()):
		sys.argv = ["run-vm.py", "--image", "x", "--out", out] + argv
		rc = vm.main()
	return rc, buf.getvalue().splitlines(), booted


def check(what, cond):
	global fails
	print(("PASS: " if cond else "FAIL: ") + what)
	fails += 0 if cond else 1


rc, out, booted = run(["--scenarios", "r1,r2,t1", "--retry", "2"],
					  [{"r1": "PASS", "r2": "FAIL", "t1": "PASS"}, {"r2": "PASS"}])
check("a scenario that failed once boots again, alone", booted == [["r1", "r2", "t1"], ["r2"]])
check("its first failure is printed as RETRIED, with the second verdict",
	  any(l.startswith("RETRIED: roundtrip-xorg-patched: failed on the first boot: why")
		  and l.endswith("on a second boot: PASS") for l in out))
check("then its PASS, which counts", rc == 0 and "3 passed, 0 failed, 0 skipped" in out
	  and not any(l.startswith("FAIL: ") for l in out))

rc, out, booted = run(["--scenarios", "r1,r2", "--retry", "2"],
					  [{"r1": "PASS", "r2": "FAIL"}, {"r2": "FAIL"}])
check("failing twice fails", rc == 1 and "1 passed, 1 failed, 0 skipped" in out
	  and any(l.startswith("FAIL: roundtrip-xorg-patched: why") for l in out))

rc, out, booted = run(["--scenarios", "r1,r2,t1", "--retry", "2"],
					  [{"r1": "FAIL", "r2": "FAIL"}, {"r1": "PASS", "r2": "PASS", "t1": "PASS"}])
check("more failures than --retry: no second boot, all fail",
	  len(booted) == 1 and rc == 1 and "0 passed, 3 failed, 0 skipped" in out)

rc, out, booted = run(["--scenarios", "r1,t1", "--retry", "2"], [{"r1": "PASS"}, {"t1": "PASS"}])
check("one left unrun (a timeout ended the boot) boots again",
	  booted == [["r1", "t1"], ["t1"]] and rc == 0 and "2 passed, 0 failed, 0 skipped" in out)

rc, out, booted = run(["--scenarios", "r1,r2"], [{"r1": "PASS", "r2": "FAIL"}])
check("without --retry nothing boots again", len(booted) == 1 and rc == 1)

rc, out, booted = run(["--scenarios", "r1,s3", "--retry", "2", "--allow-skip", "s3"],
					  [{"r1": "PASS", "s3": "SKIP"}])
check("a skip does not boot again", len(booted) == 1 and rc == 0)
sys.exit(1 if fails else 0)
EOF
