#!/usr/bin/env python3
"""The status icon at rest: what `instant-upload tray` costs over 60 s while nothing changes.

The tray is shown by a stand-in panel (Tests/DesktopTests/sni-watcher.py, a
StatusNotifierWatcher that reads the item as panels do) on a private session bus, beside an
idle agent, in a private XDG home (nothing of yours is touched). Once the icon is shown,
the script waits SECONDS and reads the tray's CPU time, its wake-ups (context switches) and
its resident memory from /proc. It is not a test: figures belong in BENCHMARKS.md.

    python3 scripts/bench_tray.py [--bin .build/programs] [--seconds 60] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import kib, process_cpu, process_status, save_json  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WATCHER = os.path.join(REPO, "Tests", "DesktopTests", "sni-watcher.py")
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
"""


def proc_figures(pid: int) -> dict:
    """CPU seconds (user + system), context switches and RSS of one process."""
    status = process_status(pid)
    return {"cpu_s": process_cpu(pid),
            "switches": int(status["voluntary_ctxt_switches"]) + int(status["nonvoluntary_ctxt_switches"]),
            "rss_kb": kib(status["VmRSS"]), "peak_rss_kb": kib(status["VmHWM"])}


def wait_for(what: str, condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise SystemExit(f"bench_tray: timed out waiting for {what}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(REPO, ".build", "programs"))
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--json")
    args = p.parse_args()
    program = os.path.join(os.path.abspath(args.bin), "instant-upload")
    for tool in ("/usr/bin/dbus-daemon", "/usr/bin/python3", program):
        if not os.access(tool, os.X_OK):
            raise SystemExit(f"bench_tray: {tool} is missing (`make bench` builds the programs and installs dbus)")
    home = tempfile.mkdtemp(prefix="iu-bench-tray-")
    procs: list[subprocess.Popen] = []
    try:
        socket = f"{home}/bus"
        with open(f"{home}/bus.conf", "w") as f:
            f.write(BUS_CONFIG.format(socket=socket))
        procs.append(subprocess.Popen(["/usr/bin/dbus-daemon", f"--config-file={home}/bus.conf", "--nofork", "--nopidfile"],
                                      stderr=subprocess.DEVNULL))
        wait_for("the session bus", lambda: os.path.exists(socket))
        env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        env.update(HOME=home, XDG_CONFIG_HOME=f"{home}/config", XDG_STATE_HOME=f"{home}/state", XDG_RUNTIME_DIR=f"{home}/run",
                   XDG_DATA_HOME=f"{home}/data", DBUS_SESSION_BUS_ADDRESS=f"unix:path={socket}")
        os.makedirs(f"{home}/run", mode=0o700)
        os.makedirs(f"{home}/config/instant-upload")
        with open(f"{home}/config/instant-upload/config.ini", "w") as f:
            f.write("[agent]\nautostart = false\n")
        record = f"{home}/panel.jsonl"
        procs.append(subprocess.Popen(["/usr/bin/python3", WATCHER, "--record", record], env=env))
        wait_for("the panel stand-in", lambda: os.path.exists(record))
        log = open(f"{home}/agent.log", "w")
        procs.append(subprocess.Popen([program, "run"], env=env, stdout=log, stderr=log))
        tray = subprocess.Popen([program, "tray"], env=env, stdout=log, stderr=log)
        procs.append(tray)
        try:
            wait_for("the icon to be shown", lambda: os.path.getsize(record) > 0)
        except SystemExit:
            # What the tray and the agent said, for whoever reads why.
            log.flush()
            with open(f"{home}/agent.log", errors="replace") as said:
                sys.stderr.write("bench_tray: the tray's and the agent's log:\n" + said.read()[-3000:] + "\n")
            sys.stderr.write(f"bench_tray: the tray {'ended with ' + str(tray.returncode) if tray.poll() is not None else 'still runs'}\n")
            raise
        time.sleep(2)  # the first second's redraws (the agent starting) are not rest
        before = proc_figures(tray.pid)
        time.sleep(args.seconds)
        after = proc_figures(tray.pid)
        result = {"seconds": args.seconds, "cpu_ms": (after["cpu_s"] - before["cpu_s"]) * 1000,
                  "wakeups": after["switches"] - before["switches"], "rss_kb": after["rss_kb"], "peak_rss_kb": after["peak_rss_kb"],
                  "command": "make bench (scripts/bench_tray.py)"}
        print(f"tray at rest over {args.seconds:.0f} s beside an idle agent: {result['cpu_ms']:.1f} ms CPU, "
              f"{result['wakeups']} wake-ups, RSS {result['rss_kb'] / 1024:.1f} MB (peak {result['peak_rss_kb'] / 1024:.1f} MB)")
        if args.json:
            save_json(args.json, result)
        return 0
    finally:
        for proc in reversed(procs):
            proc.kill()
            proc.wait()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
