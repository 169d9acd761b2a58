#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Boot the test image in qemu and drive the scenarios of the qemu suite.

The guest's orchestrator (guest/xdt-orchestrate) runs the scenarios named on
the kernel command line and talks to us over a second serial port: it asks
for screendumps, keys and USB hotplug ("XDT-REQ n ..."), we answer
("XDT-ACK n ..."), and it reports "XDT-RESULT name PASS|FAIL|SKIP reason"
and figures ("XDT-FIGURE text", printed with the summary). The guest asks
for screendumps, keys, the USB tablet's position, and USB hotplug.
"XDT-POWEROFF name": the guest powers off through its init; the scenario
"name" passes when qemu then ends by itself (-no-reboot) in time.
Screendumps are taken through QMP, converted to PNG and checked here.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

NAMES = {
    "s1": "rootless-startx",
    "s2": "control-without-module",
    "s3": "xinit-patched-xorg",
    "s4": "hotplug",
    "s5": "two-users",
    "s6": "killed-login",
    "s7": "lingering-fds",
    "s8": "late-gpu",
    "l1": "lingering-handover",
    "l2": "lingering-kill",
    "l3": "lingering-warn",
    "l4": "lingering-yama",
    "x1": "state-lost",
    "x2": "reset-revoke",
    "l5": "lingering-uring",
    "l6": "lingering-scope",
    "l7": "lingering-mapstall",
    "f1": "follow-x-switch",
    "f2": "follow-su",
    "f3": "follow-latency",
    "t1": "login-repeat",
    "r1": "roundtrip-xorg-stock",
    "r2": "roundtrip-xorg-patched",
    "r3": "roundtrip-xorg-upstream",
    "w1": "wayland-sway",
    "w2": "roundtrip-sway",
    "o1": "openrc-service",
    "o2": "openrc-shutdown",
    "u1": "runit-service",
    "u2": "runit-shutdown",
    "m1": "mdev-hotplug",
    "w3": "xorg-libseat",
    "w4": "xlibre-libseat",
    "w5": "roundtrip-cage",
    "w6": "roundtrip-weston",
    # the logind comparison guest (logind/xdt-logind-roundtrip)
    "g1": "logind-roundtrip-xorg",
    "g2": "logind-roundtrip-sway",
}
DEFAULT = "s1,s4,s8,s5,s6,s7,l1,l2,l3,l5,l6,l7,s3,s2,f1,f2,f3,x1,x2,r1,r2,l4"


def log(*a):
    print("run-vm:", *a, file=sys.stderr, flush=True)


# --- images -----------------------------------------------------------------
def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise ValueError("not a P6/255 ppm")
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[pos + 1:pos + 1 + w * h * 3]


def write_png(path, w, h, rgb):
    raw = b"".join(b"\0" + rgb[y * w * 3:(y + 1) * w * 3] for y in range(h))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 6)))
        f.write(chunk(b"IEND", b""))


def analyse(w, h, rgb):
    """What the screen shows. The test xterm is white, 100x40 at +0+0; the
    text console and an empty X root are dark."""
    def frac(x0, y0, x1, y1, pred):
        hit = tot = 0
        for y in range(y0, min(y1, h), 4):
            row = rgb[y * w * 3:(y + 1) * w * 3]
            for x in range(x0, min(x1, w), 4):
                tot += 1
                hit += pred(row[3 * x], row[3 * x + 1], row[3 * x + 2])
        return hit / max(tot, 1)

    white = frac(20, 40, 560, 460, lambda r, g, b: r > 230 and g > 230 and b > 230)
    dark_text = frac(0, 0, 300, 100, lambda r, g, b: r < 60 and g < 60 and b < 60)
    lit = frac(0, 0, w, h, lambda r, g, b: r + g + b > 150)
    # the Wayland scenario's foot: background #2a7f62 (wayland/xdt-foot.ini)
    foot = frac(0, 0, w, h, lambda r, g, b: abs(r - 0x2a) < 16 and abs(g - 0x7f) < 16 and abs(b - 0x62) < 16)
    text = frac(0, 0, w, h, lambda r, g, b: r > 200 and g > 200 and b > 200)
    colours = len({rgb[i:i + 3] for i in range(0, len(rgb), 3 * 97)})
    return {"size": f"{w}x{h}", "xterm_white": round(white, 3),
            "dark_top_left": round(dark_text, 3), "lit": round(lit, 3), "foot_bg": round(foot, 3),
            "white_text": round(text, 4),
            "colours": colours}


def judge(kind, a):
    if kind == "x":
        good = a["xterm_white"] > 0.9 and 0 < a["dark_top_left"] and a["colours"] >= 2
        why = "white xterm with black text" if good else "no white xterm"
    elif kind == "wayland":
        # foot's green nearly everywhere, and its white text on it
        good = a["foot_bg"] > 0.8 and a["white_text"] > 0.0005
        why = "foot's window on the compositor" if good else "no foot window"
    elif kind == "console":
        good = a["xterm_white"] < 0.05 and a["lit"] > 0.0005
        why = "text console, no X window" if good else "not a text console"
    else:
        good = a["colours"] >= 2
        why = "not blank" if good else "blank"
    return good, f"{why} ({', '.join(f'{k}={v}' for k, v in a.items())})"


# --- qemu -------------------------------------------------------------------
class Qmp:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(60)
        self.s.connect(path)
        self.f = self.s.makefile("rwb")
        self.f.readline()
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        self.f.write(json.dumps({"execute": name, "arguments": args}).encode() + b"\n")
        self.f.flush()
        while True:
            r = json.loads(self.f.readline())
            if "return" in r:
                return r["return"]
            if "error" in r:
                raise RuntimeError(r["error"].get("desc", str(r["error"])))

    def hmp(self, line):
        return self.cmd("human-monitor-command", **{"command-line": line})


def connect_unix(path, deadline):
    while True:
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", required=True, help="directory from build-image.sh")
    ap.add_argument("--out", required=True, help="where PNGs and logs go")
    ap.add_argument("--scenarios", default=DEFAULT)
    # Hang guards, not assertions: on a loaded 2-core TCG host the boot took
    # 131 s and the whole run 823 s, too close to the old 240 s and 900 s.
    # .ci/run runs two guests beside its host stages: each may get half a
    # core, so the guard on the whole run is CI's own limit.
    ap.add_argument("--timeout", type=int, default=5400, help="whole run, seconds")
    ap.add_argument("--boot-timeout", type=int, default=600)
    ap.add_argument("--scenario-timeout", type=int, default=300)
    ap.add_argument("--memory", default="1536")
    # wlroots 0.15 needs PRIME import, which bochs-drm (-vga std) lacks and
    # virtio-gpu has: the Wayland image runs with -vga virtio
    ap.add_argument("--vga", default="std", choices=["std", "virtio"])
    # the inits image boots once per init: init=/lib/runit/runit-init
    ap.add_argument("--append", default="", help="more kernel command line")
    ap.add_argument("--allow-skip", default="",
                    help="comma-separated scenarios (names or ids) that may SKIP; any other SKIP fails")
    # A scenario that fails is run once more, alone with the others that
    # failed, in a boot of its own (a TCG guest beside CI's other work has
    # stalls no scenario can wait out): at most RETRY scenarios, and only
    # when the guest came up. Both verdicts are printed: "RETRIED: name:
    # ..." with the first, then its PASS or FAIL.
    ap.add_argument("--retry", type=int, default=0,
                    help="run up to N failed scenarios again in a second boot")
    args = ap.parse_args()
    wanted = [s for s in args.scenarios.split(",") if s]
    start = time.monotonic()
    results, order, figures, boot_s = boot(args, wanted, args.out)
    names = [NAMES.get(s, s) for s in wanted]
    token = {NAMES.get(s, s): s for s in wanted}
    allowed = {NAMES.get(a, a) for a in args.allow_skip.split(",") if a}
    failing = [n for n in order + [n for n in names if n not in order]
               if n in token and results.get(n, ("FAIL",))[0] not in ("PASS", "SKIP")]
    first = {}
    if boot_s is not None and 0 < len(failing) <= args.retry:
        log(f"*** {len(failing)} failed: {', '.join(failing)}; a second boot runs them again ***")
        for n in failing:
            first[n] = results.pop(n, ("FAIL", "not run (see serial.log, markers.log)", 0))
        again, _, more, _ = boot(args, [token[n] for n in failing], os.path.join(args.out, "retry"))
        results.update(again)
        figures += [f"second boot: {f}" for f in more]
    return report(args, names, allowed, results, order, figures, boot_s, first, start)


def boot(args, wanted, out):
    """One boot of the image that runs the scenarios WANTED; its logs and
    screenshots go to OUT. Returns (results, order, figures, boot_s)."""
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="xdt-vm-")
    qmp_path, ctl_path = f"{tmp}/qmp.sock", f"{tmp}/ctl.sock"
    serial_log = os.path.join(out, "serial.log")
    ctl_log = open(os.path.join(out, "markers.log"), "w")
    # /dev/kvm may exist without working (nested); TCG unless asked.
    accel = os.environ.get("XDT_ACCEL", "tcg")
    cmd = [
        "qemu-system-x86_64", "-machine", f"pc,accel={accel}", "-smp", "2",
        "-m", args.memory, "-nodefaults", "-no-user-config",
        "-kernel", f"{args.image}/vmlinuz", "-initrd", f"{args.image}/initrd.img",
        "-append", "root=/dev/vda rw console=ttyS0 quiet loglevel=3 "
                   f"xdt.run={','.join(wanted)}" + (f" {args.append}" if args.append else ""),
        "-drive", f"file={args.image}/rootfs.ext4,format=raw,if=virtio",
        "-snapshot", "-vga", args.vga, "-display", "none",
        "-device", "qemu-xhci,id=xhci", "-device", "usb-kbd,bus=xhci.0",
        "-device", "usb-tablet,bus=xhci.0",
        "-chardev", f"file,id=con,path={serial_log}", "-serial", "chardev:con",
        "-chardev", f"socket,id=ctl,path={ctl_path},server=on,wait=off",
        "-serial", "chardev:ctl",
        "-qmp", f"unix:{qmp_path},server=on,wait=off",
        "-nic", "none", "-no-reboot",
    ]
    log("qemu:", " ".join(cmd))

    def stop(signum, frame):
        raise SystemExit(f"signal {signum}")
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    start = time.monotonic()
    qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True)
    results, order, begun, current = {}, [], {}, None
    figures = []
    boot_s = None
    poweroff = None  # the scenario that waits for the guest's own poweroff
    try:
        deadline = start + 30
        qmp = None
        while qmp is None:
            try:
                qmp = Qmp(qmp_path)
            except OSError:
                if qemu.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("qemu did not start")
                time.sleep(0.1)
        ctl = connect_unix(ctl_path, deadline)
        ctl.settimeout(1)
        buf = b""
        end_all = start + args.timeout
        phase_deadline = start + args.boot_timeout
        done = False
        while not done:
            now = time.monotonic()
            if qemu.poll() is not None:
                log("qemu exited with", qemu.returncode)
                if poweroff:
                    t = now - begun[poweroff]
                    if qemu.returncode == 0:
                        results[poweroff] = ("PASS", "", t)
                        # what the console said of the daemon on the way down
                        with open(serial_log, errors="replace") as f:
                            tail = f.read().split("XDT-POWEROFF", 1)[-1].splitlines()
                        for line in tail:
                            if "xdevicesd" in line:
                                log(f"{poweroff}: console: {line.strip()}")
                    else:
                        results[poweroff] = ("FAIL", f"qemu exited with {qemu.returncode}", t)
                    current = None
                break
            if now > end_all or now > phase_deadline:
                log("timeout", "booting" if boot_s is None else f"in {current}")
                if current:
                    results[current] = ("FAIL", "timed out", now - begun[current])
                break
            try:
                chunk = ctl.recv(4096)
                if not chunk:
                    if poweroff:  # the guest is going down: qemu ends next
                        try:
                            qemu.wait(timeout=max(1, phase_deadline - time.monotonic()))
                        except subprocess.TimeoutExpired:
                            pass
                        continue
                    break
                buf += chunk
            except socket.timeout:
                continue
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode(errors="replace").strip("\r")
                i = line.find("XDT-")
                if i < 0:
                    continue
                line = line[i:]
                ctl_log.write(f"{time.monotonic() - start:7.1f} {line}\n")
                ctl_log.flush()
                word = line.split(" ", 2)
                kind = word[0]
                if kind == "XDT-READY":
                    boot_s = time.monotonic() - start
                    log(f"guest ready after {boot_s:.1f} s: {line[10:]}")
                    phase_deadline = time.monotonic() + args.scenario_timeout
                elif kind == "XDT-BEGIN":
                    current = word[1]
                    begun[current] = time.monotonic()
                    phase_deadline = time.monotonic() + args.scenario_timeout
                    order.append(current)
                elif kind in ("XDT-CHECK", "XDT-NOTE"):
                    log(line[len(kind) + 1:])
                    if kind == "XDT-CHECK":  # progress: the timeout is per stretch without one
                        phase_deadline = time.monotonic() + args.scenario_timeout
                elif kind == "XDT-FIGURE":
                    figures.append(line[len(kind) + 1:])
                    log(line[len(kind) + 1:])
                elif kind == "XDT-RESULT":
                    name, rest = word[1], (word[2] if len(word) > 2 else "")
                    verdict, _, reason = rest.partition(" ")
                    t = time.monotonic() - begun.get(name, time.monotonic())
                    results[name] = (verdict, reason, t)
                    if name not in order:
                        order.append(name)
                    current = None
                    phase_deadline = time.monotonic() + args.scenario_timeout
                elif kind == "XDT-POWEROFF":
                    poweroff = current = word[1]
                    begun[current] = time.monotonic()
                    phase_deadline = time.monotonic() + args.scenario_timeout
                    order.append(current)
                elif kind == "XDT-DONE":
                    done = True
                elif kind == "XDT-REQ":
                    n, what = word[1], word[2].split()
                    reply = handle(qmp, what, out, tmp)
                    log(f"host: {' '.join(what)} -> {reply}")
                    ctl.sendall(f"XDT-ACK {n} {reply}\n".encode())
    except (Exception, SystemExit, KeyboardInterrupt) as e:  # report; qemu dies below
        log("error:", e)
    finally:
        try:
            os.killpg(qemu.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        qemu.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        ctl_log.close()
    return results, order, figures, boot_s


def report(args, names, allowed, results, order, figures, boot_s, first, start):
    """The verdicts, the figures and the summary line; the exit status."""
    passed = failed = skipped = 0
    for name in order + [n for n in names if n not in order]:
        verdict, reason, t = results.get(name, ("FAIL", "not run (see serial.log, markers.log)", 0))
        if name in first:
            _, why, t0 = first[name]
            print(f"RETRIED: {name}: failed on the first boot: {why} ({t0:.1f} s); "
                  f"on a second boot: {verdict}")
        if verdict == "PASS":
            passed += 1
            print(f"PASS: {name} ({t:.1f} s{', on a second boot' if name in first else ''})")
        elif verdict == "SKIP" and name in allowed:
            skipped += 1
            print(f"SKIP (allowed): {name}: {reason}")
            print(f"run-vm: *** {name} WAS NOT RUN (allowed by VM_ALLOW_SKIP) ***")
        elif verdict == "SKIP":
            # A scenario that does not run proves nothing: unless the skip
            # was asked for, it fails the suite.
            failed += 1
            print(f"FAIL: {name}: skipped, not allowed: {reason} (VM_ALLOW_SKIP={name} allows it)")
        else:
            failed += 1
            print(f"FAIL: {name}: {reason} ({t:.1f} s)")
    # the serial console of the last boot
    serial_log = os.path.join(args.out, "retry" if first else "", "serial.log")
    if failed or boot_s is None:
        try:
            with open(serial_log, errors="replace") as f:
                tail = f.readlines()[-25:]
            log("last lines of the serial console:\n" + "".join(tail))
        except OSError:
            pass
    for f in figures:
        print(f)
    total = time.monotonic() - start
    print(f"boot {boot_s if boot_s is None else round(boot_s, 1)} s, total {total:.1f} s; "
          f"artefacts in {args.out}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


def handle(qmp, what, out, tmp):
    try:
        if what[0] == "screendump":
            name, kind = what[1], what[2]
            ppm = f"{tmp}/{name}.ppm"
            qmp.cmd("screendump", filename=ppm)
            w, h, rgb = read_ppm(ppm)
            png = os.path.join(out, f"{name}.png")
            write_png(png, w, h, rgb)
            good, why = judge(kind, analyse(w, h, rgb))
            return ("ok " if good else "bad ") + why
        if what[0] == "sendkey":
            for k in what[1:]:
                qmp.hmp(f"sendkey {k}")
                time.sleep(0.15)
            return "ok"
        if what[0] == "mouse":
            # the USB tablet's absolute position, 0..32767 on each axis
            qmp.cmd("input-send-event", events=[
                {"type": "abs", "data": {"axis": "x", "value": int(what[1])}},
                {"type": "abs", "data": {"axis": "y", "value": int(what[2])}}])
            return "ok"
        if what[0] == "device_add":
            opts = dict(kv.split("=", 1) for kv in what[1].split(",")[1:])
            qmp.cmd("device_add", driver=what[1].split(",")[0], **opts)
            return "ok"
        if what[0] == "device_del":
            qmp.cmd("device_del", id=what[1])
            return "ok"
        return "bad unknown request"
    except Exception as e:
        return f"bad {e}"


if __name__ == "__main__":
    sys.exit(main())
