#!/usr/bin/env python3
"""`make bench`: instant upload's own figures, from the real agent with one watch rule.

  latency    the time from a photo's IN_CLOSE_WRITE (its writer's close) to its row in the
             queue, less the rule's settle window: inotify, the settle timer's wake-up,
             reading the file's kind and date, the memory check and the committed insert.
             Photos are written one at a time, each after the last one was queued, so each
             is measured alone; the median is reported.
  reconcile  a folder of 50,000 files the rule already knows (its baseline): how long the
             agent takes from its start to `watch list` saying the folder is watched (its
             memory loaded from the queue, every file looked at, nothing new), the agent's
             memory then, and the same for the rule alone, paused and resumed in a running
             agent.
  import     a library of 3,000 photos added with `--existing`: the agent's memory once
             they are all uploaded, beside the same agent started again (what an import
             leaves behind in a running agent).
  idle       the agent's CPU time (every thread's, from /proc/PID/stat) over 60 s
             with the rules watching and nothing happening, and how often the watch threads woke.

Everything runs in a private XDG home in a temporary folder, against the reference server
on loopback. Timings are figures to read, not asserts.

    .venv/bin/python scripts/bench_watch.py [--bin .build/release] [--photos 30]
                                            [--files 50000] [--library 3000] [--idle 60]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import kib, process_cpu, process_status  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USER, PASSWORD = "bench", "bench"
SETTLE = 1


def photo(date: str, comment: str) -> bytes:
    """A small JPEG whose EXIF says it was taken at `date` (EXIF form)."""
    dt = date.encode() + b"\0"
    ifd0 = struct.pack("<H", 1) + struct.pack("<HHII", 0x8769, 4, 1, 26) + struct.pack("<I", 0)
    exif_ifd = struct.pack("<H", 1) + struct.pack("<HHII", 0x9003, 2, len(dt), 44) + struct.pack("<I", 0)
    tiff = b"II*\0" + struct.pack("<I", 8) + ifd0 + exif_ifd + dt
    app1 = b"Exif\0\0" + tiff
    text = comment.encode()
    body = bytes.fromhex(
        "ffdb004300100b0c0e0c0a100e0d0e1211101318281a181616183123251d283a333d3c3933383740485c4e404457453738506d51575f6267"
        "68673e4d71797064785c656763ffc0000b080008000801011100ffc4001400010000000000000000000000000000000000ffc40014100100"
        "00000000000000000000000000000000ffda0008010100003f003fffd9")
    return (b"\xff\xd8\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1
            + b"\xff\xfe" + struct.pack(">H", len(text) + 2) + text + body)


def tally(db: sqlite3.Connection, state: str) -> int:
    """Rows in `state`, from the queue's running tally: counting the rows of a 200,000-row
    table at every poll would cost the machine more than the agent does."""
    return db.execute("SELECT coalesce(sum(files), 0) FROM transfer_tally WHERE state = ?", (state,)).fetchone()[0]


class Scene:
    def __init__(self, binary: str):
        self.binary = binary
        self.home = tempfile.mkdtemp(prefix="iu-bench-watch-")
        self.env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "XDG_DOWNLOAD_DIR")}
        self.env.update(HOME=self.home, XDG_CONFIG_HOME=f"{self.home}/config", XDG_STATE_HOME=f"{self.home}/state",
                        XDG_RUNTIME_DIR=f"{self.home}/run")
        os.makedirs(f"{self.home}/run", mode=0o700)
        os.makedirs(f"{self.home}/config/instant-upload", mode=0o700)
        with open(f"{self.home}/config/instant-upload/config.ini", "w") as f:
            f.write("[agent]\nautostart = false\n")
        self.server = None
        self.server_url = None
        self.agent = None

    def start_server(self) -> None:
        log = open(f"{self.home}/server.log", "wb")
        self.server = subprocess.Popen([sys.executable, "reference-server/server.py", "--data", f"{self.home}/server", "--port", "0",
                                        "--user", f"{USER}:{PASSWORD}"], stdout=subprocess.PIPE, stderr=log, cwd=REPO,
                                       start_new_session=True)
        line = self.server.stdout.readline()
        if not line.startswith(b"READY "):
            raise RuntimeError(f"the reference server did not start: {line!r}")
        threading.Thread(target=lambda: [None for _ in self.server.stdout], daemon=True).start()
        base = line.split()[1].decode().rstrip("/")
        self.server_url = base
        os.makedirs(f"{self.home}/server/tree/{USER}/Photos", exist_ok=True)
        self.cli("account", "add", "--webdav", f"{base}/dav/{USER}/", "--tus", f"{base}/files/", "--user", USER,
                 "--name", "bench", "--password-stdin", stdin=PASSWORD + "\n")

    def cli(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run([self.binary, *args], env=self.env, input=stdin, capture_output=True, text=True)
        if check and r.returncode not in (0, 1):
            raise RuntimeError(f"instant-upload {' '.join(args)} exited {r.returncode}: {r.stderr}")
        return r

    def start_agent(self) -> float:
        started = time.monotonic()
        self.agent = subprocess.Popen([self.binary, "run"], env=self.env, stdout=subprocess.DEVNULL,
                                      stderr=open(f"{self.home}/agent.log", "ab"))
        while not os.path.exists(f"{self.home}/run/instant-upload/agent.sock"):
            if self.agent.poll() is not None:
                raise RuntimeError("the agent did not start; see " + f"{self.home}/agent.log")
            time.sleep(0.005)
        return started

    def stop_agent(self) -> None:
        if self.agent and self.agent.poll() is None:
            self.agent.terminate()
            self.agent.wait(30)

    def queue(self) -> sqlite3.Connection:
        """The agent's queue, read-only."""
        return sqlite3.connect(f"file:{self.home}/state/instant-upload/queue.sqlite3?mode=ro", uri=True)

    def rule(self, rule_id: str) -> dict:
        rules = json.loads(self.cli("watch", "list", "--json").stdout)
        return next((r for r in rules if r["id"] == rule_id), {})

    def wait_watching(self, rule_id: str, timeout: float = 600, scans_above: int = 0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.rule(rule_id)
            if r.get("state") == "watching" and r.get("scans", 0) > scans_above:
                return time.monotonic()
            time.sleep(0.01)
        raise RuntimeError(f"rule {rule_id} is not watching after {timeout} s")

    def cpu_seconds(self) -> float:
        """The agent's CPU time so far: every thread's, including the threads that ended (a
        transfer runs on a thread of its own), as /proc/PID/stat counts it, in clock ticks
        (10 ms). Summing the live threads' schedstat instead, to the nanosecond, left out
        each ended transfer's time and showed a card's photos at a third of their cost."""
        return process_cpu(self.agent.pid)

    def memory(self) -> str:
        """The agent's resident memory now, and how much of it is its own (anonymous)."""
        status = process_status(self.agent.pid)
        return f"RSS {kib(status['VmRSS']) / 1024:.1f} MB ({kib(status['RssAnon']) / 1024:.1f} MB anonymous)"

    def wakeups(self) -> dict[str, int]:
        """Context switches per thread name: how often each thread was woken."""
        counts: dict[str, int] = {}
        for task in os.listdir(f"/proc/{self.agent.pid}/task"):
            try:
                with open(f"/proc/{self.agent.pid}/task/{task}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/{self.agent.pid}/task/{task}/status") as f:
                    switches = sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
            except FileNotFoundError:
                continue
            counts[name] = counts.get(name, 0) + switches
        return counts

    def close(self) -> None:
        self.stop_agent()
        if self.server and self.server.poll() is None:
            self.server.terminate()
            self.server.wait(10)
        shutil.rmtree(self.home, ignore_errors=True)


def latency(scene: Scene, photos: int) -> None:
    folder = f"{scene.home}/Camera"
    os.makedirs(folder)
    scene.cli("watch", "add", folder, "--to", "/Photos", "--settle", str(SETTLE))
    scene.wait_watching("camera", timeout=60)
    db = scene.queue()
    samples = []
    for i in range(photos):
        path = f"{folder}/IMG_{i:04d}.jpg"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, photo("2024:03:15 10:00:00", f"bench {i}"))
        os.close(fd)
        closed = time.time()
        deadline = time.monotonic() + 30
        while True:
            row = db.execute("SELECT created_at FROM transfers WHERE local_path = ?", (path.encode(),)).fetchone()
            if row:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{path} was not queued within 30 s")
            time.sleep(0.005)
        samples.append(row[0] / 1000 - closed - SETTLE)
    db.close()
    samples.sort()
    print(f"latency: IN_CLOSE_WRITE to queued, settle window ({SETTLE} s) excluded, {photos} photos one at a time: "
          f"median {statistics.median(samples) * 1000:.1f} ms (min {samples[0] * 1000:.1f}, max {samples[-1] * 1000:.1f})")


def fill(folder: str, count: int, content) -> None:
    """`count` files IMG_000000.jpg... in subfolders of 1,000, file i holding content(i)."""
    for d in range(count // 1000 + 1):
        os.makedirs(f"{folder}/{d:03d}", exist_ok=True)
    for i in range(count):
        with open(f"{folder}/{i // 1000:03d}/IMG_{i:06d}.jpg", "wb") as f:
            f.write(content(i))


def reconcile(scene: Scene, files: int) -> None:
    folder = f"{scene.home}/Archive"
    made = time.monotonic()
    fill(folder, files, lambda i: b"\xff\xd8" + i.to_bytes(4, "big"))
    print(f"reconcile: made {files} files in {files // 1000 + 1} folders in {time.monotonic() - made:.1f} s")
    added = time.monotonic()
    out = scene.cli("watch", "add", folder, "--to", "/Photos", "--name", "archive", "--settle", str(SETTLE)).stdout.strip()
    print(f"reconcile: `watch add` recorded the baseline in {time.monotonic() - added:.2f} s ({out.splitlines()[-1]})")
    scene.stop_agent()
    started = scene.start_agent()
    watching = scene.wait_watching("archive")
    before = scene.rule("archive")
    print(f"reconcile: agent start to {files} known files watched (memory loaded, every file looked at): "
          f"{watching - started:.2f} s; agent CPU so far {scene.cpu_seconds():.2f} s")
    print(f"reconcile: the agent's memory with the rule remembering {files} files: {scene.memory()}")
    rounds = []
    for _ in range(3):
        scene.cli("watch", "pause", "archive")
        while scene.rule("archive").get("state") != "paused":
            time.sleep(0.01)
        resumed = time.monotonic()
        scene.cli("watch", "resume", "archive")
        rounds.append(scene.wait_watching("archive", scans_above=0) - resumed)
    after = scene.rule("archive")
    new = after.get("pending", 0) + after.get("taken", 0) - before.get("pending", 0) - before.get("taken", 0)
    print(f"reconcile: the rule paused and resumed in the running agent (memory loaded, {files} files looked at): "
          f"median {statistics.median(rounds):.2f} s over {len(rounds)}; new files found: {new}")


def library_import(scene: Scene, photos: int) -> None:
    folder = f"{scene.home}/Library"
    fill(folder, photos, lambda i: photo("2024:05:01 12:00:00", f"library {i}"))
    db = scene.queue()
    before = tally(db, "completed")
    started = time.monotonic()
    scene.cli("watch", "add", folder, "--to", "/Library", "--name", "library", "--existing", "--settle", str(SETTLE))
    while tally(db, "completed") < before + photos:
        if time.monotonic() - started > 900:
            raise RuntimeError(f"the library's {photos} photos were not uploaded within 900 s")
        time.sleep(0.5)
    db.close()
    took = time.monotonic() - started
    time.sleep(2)
    after = scene.memory()
    scene.stop_agent()
    scene.start_agent()
    scene.wait_watching("library")
    time.sleep(2)
    print(f"import: {photos} photos added with --existing, all uploaded in {took:.0f} s; the agent's memory then: {after}; "
          f"the same agent started again: {scene.memory()}")


def idle(scene: Scene, seconds: int) -> None:
    time.sleep(3)  # whatever was still settling or uploading
    rules = len(json.loads(scene.cli("watch", "list", "--json").stdout))
    cpu0, woken0, t0 = scene.cpu_seconds(), scene.wakeups(), time.monotonic()
    time.sleep(seconds)
    cpu1, woken1, t1 = scene.cpu_seconds(), scene.wakeups(), time.monotonic()
    watchers = {name: woken1.get(name, 0) - woken0.get(name, 0) for name in ("iu-watch", "iu-watcher")}
    print(f"idle: agent CPU over {t1 - t0:.0f} s with {rules} rules watching and nothing happening: "
          f"{(cpu1 - cpu0) * 1000:.1f} ms ({(cpu1 - cpu0) / (t1 - t0) * 100:.4f} % of one core); "
          f"wake-ups of the watch threads: {watchers} (the scheduler's own pass every 5 s is the rest)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--photos", type=int, default=30)
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--library", type=int, default=3000)
    parser.add_argument("--idle", type=int, default=60)
    args = parser.parse_args()
    scene = Scene(os.path.abspath(os.path.join(REPO, args.bin, "instant-upload")))
    try:
        scene.start_server()
        scene.start_agent()
        latency(scene, args.photos)
        reconcile(scene, args.files)
        library_import(scene, args.library)
        idle(scene, args.idle)
    finally:
        scene.close()


if __name__ == "__main__":
    main()
