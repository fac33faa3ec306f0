#!/usr/bin/env python3
"""`make soak`: the agent at length, with everything that goes wrong in a day happening at once.

For SOAK_MINUTES (default 10) a watched camera folder is fed with photos and videos of mixed
sizes (some written slowly, as a stalled import; some moved in; folders moved in and renamed),
manual uploads and downloads go beside it, the agent's link is taken down and up (network
namespaces), the agent is killed at random and started again, and the reference server is
killed and started again. The agent's RSS, open descriptors and threads, and the queue
database's size, are sampled every two seconds.

Then everything stops going wrong, the queue drains, and the run passes only if:
  - every file made is on the server exactly once, with the same bytes, and nothing else is;
  - every download is in Local Drive exactly once, with the server's bytes;
  - nothing failed;
  - RSS, descriptors and threads did not grow: the first minute against the last minute of
    the run, and the first minute of the last agent's life against its last minute.

Figures (figures.txt, figures.json, samples.csv, events.csv) and a plot of RSS and
descriptors over time (soak.png) go to .build/soak/. Needs root (network namespaces), like
`make test`.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
AGENT_NS, SERVER_NS = "iu-soak-a", "iu-soak-s"
AGENT_LINK, SERVER_LINK = "iusoaka", "iusoaks"
AGENT_ADDR, SERVER_ADDR = "10.79.252.1", "10.79.252.2"
PORT = 8080
USER, PASSWORD = "alice", "wonderland"
SAMPLE_SECONDS = 2.0


def ip(*args: str, check: bool = True) -> None:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"soak: `ip {' '.join(args)}` failed: {r.stderr.strip()} (the soak needs root and iproute2)")


class Network:
    """The agent's namespace and the server's, joined by a veth pair."""

    def __init__(self) -> None:
        self.remove()
        ip("netns", "add", AGENT_NS)
        ip("netns", "add", SERVER_NS)
        ip("link", "add", AGENT_LINK, "netns", AGENT_NS, "type", "veth", "peer", "name", SERVER_LINK, "netns", SERVER_NS)
        ip("-n", AGENT_NS, "addr", "add", AGENT_ADDR + "/24", "dev", AGENT_LINK)
        ip("-n", SERVER_NS, "addr", "add", SERVER_ADDR + "/24", "dev", SERVER_LINK)
        for ns, link in ((AGENT_NS, AGENT_LINK), (SERVER_NS, SERVER_LINK)):
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "link", "set", link, "up")
        ip("-n", AGENT_NS, "route", "add", "default", "via", SERVER_ADDR)

    def down(self) -> None:
        ip("-n", AGENT_NS, "link", "set", AGENT_LINK, "down")

    def up(self) -> None:
        ip("-n", AGENT_NS, "link", "set", AGENT_LINK, "up")
        for _ in range(50):  # the route comes back once the link has its carrier again
            r = subprocess.run(["ip", "-n", AGENT_NS, "route", "replace", "default", "via", SERVER_ADDR],
                               capture_output=True)
            if r.returncode == 0:
                return
            time.sleep(0.1)
        ip("-n", AGENT_NS, "route", "replace", "default", "via", SERVER_ADDR)

    @staticmethod
    def remove() -> None:
        ip("netns", "delete", AGENT_NS, check=False)
        ip("netns", "delete", SERVER_NS, check=False)


class Server:
    """The reference server in its namespace, on a fixed port and data folder, so it can be
    killed and started again as a crashed server would be."""

    def __init__(self, data: Path, log: Path, face: str) -> None:
        self.data, self.log, self.face = data, log, face
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        args = ["ip", "netns", "exec", SERVER_NS, str(PYTHON), str(ROOT / "reference-server" / "server.py"),
                "--data", str(self.data), "--host", SERVER_ADDR, "--port", str(PORT),
                "--user", f"{USER}:{PASSWORD}", "--face", self.face]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log)
        deadline = time.monotonic() + 30
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            if line.startswith(b"READY "):
                out = self.process.stdout
                threading.Thread(target=lambda: [None for _ in iter(lambda: out.read(65536), b"")], daemon=True).start()
                return
        raise SystemExit(f"soak: the reference server did not start (see {self.log})")

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    @property
    def tree(self) -> Path:
        return self.data / "tree" / USER

    def webdav(self) -> str:
        return f"http://{SERVER_ADDR}:{PORT}/dav/{USER}/"

    def tus(self) -> str:
        return f"http://{SERVER_ADDR}:{PORT}/files/"


class Agent:
    """`instant-upload run` in the agent's namespace, in a home of its own."""

    def __init__(self, binaries: Path, home: Path, log: Path) -> None:
        self.binaries, self.home, self.log = binaries, home, log
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("XDG_") and k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
        self.env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_STATE_HOME=str(home / "state"),
                        XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"),
                        XDG_RUNTIME_DIR=str(home / "run"))
        (home / "run").mkdir(parents=True, mode=0o700, exist_ok=True)
        config = home / "config" / "instant-upload" / "config.ini"
        config.parent.mkdir(parents=True, exist_ok=True)
        # The soak starts and kills the agent itself: commands must not start one of their own.
        config.write_text("[agent]\nautostart = false\n")
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()
        self.lives: list[int] = []

    @property
    def database(self) -> Path:
        return self.home / "state" / "instant-upload" / "queue.sqlite3"

    @property
    def local_drive(self) -> Path:
        return self.home / "Downloads" / "Local Drive"

    def cli(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run(["ip", "netns", "exec", AGENT_NS, str(self.binaries / "instant-upload"), *args],
                           env=self.env, input=stdin, capture_output=True, text=True, timeout=120)
        if check and r.returncode != 0:
            raise RuntimeError(f"instant-upload {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
        return r

    def start(self) -> None:
        with self.lock:
            with open(self.log, "ab") as log:
                # `ip netns exec` execs the program: the pid is the agent's own.
                self.process = subprocess.Popen(["ip", "netns", "exec", AGENT_NS, str(self.binaries / "instant-upload"),
                                                 "run"], env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            self.lives.append(self.process.pid)

    def kill(self) -> None:
        with self.lock:
            if self.process and self.process.poll() is None:
                self.process.send_signal(signal.SIGKILL)
                self.process.wait()

    def stop(self) -> None:
        with self.lock:
            if self.process and self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()

    def pid(self) -> int | None:
        with self.lock:
            return self.process.pid if self.process and self.process.poll() is None else None


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def media_bytes(kind: str, size: int, rng: random.Random) -> bytes:
    """A file the watcher takes for a whole photo (JPEG: its end marker last) or video (MP4:
    its boxes adding up to its length, with media data and a movie box), with random
    content, so that every file's SHA-256 is its own."""
    if kind == "photo":
        head = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
        tail = b"\xff\xd9"
        return head + rng.randbytes(max(0, size - len(head) - len(tail))) + tail
    ftyp = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
    moov = b"\x00\x00\x00\x08moov"
    media = max(0, size - len(ftyp) - len(moov) - 8)
    return ftyp + (media + 8).to_bytes(4, "big") + b"mdat" + rng.randbytes(media) + moov


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out = ROOT / ".build" / "soak"
        shutil.rmtree(self.out, ignore_errors=True)
        self.work = self.out / "work"
        self.work.mkdir(parents=True)
        self.rng = random.Random(args.seed)
        self.start = time.monotonic()
        self.feeding = threading.Event()
        self.feeding.set()
        self.events: list[tuple[float, str, str]] = []
        self.samples: list[dict] = []
        self.made: dict[str, dict] = {}  # sha256 -> what was made where
        self.manual: dict[str, str] = {}
        self.seeds: dict[str, str] = {}
        self.downloads: list[str] = []
        self.counts = {"photos": 0, "videos": 0, "slow": 0, "moved_in": 0, "folders_moved_in": 0,
                       "folders_renamed": 0, "manual_uploads": 0, "downloads": 0, "downloads_refused_offline": 0,
                       "agent_kills": 0, "link_drops": 0, "server_restarts": 0}
        self.camera = self.work / "Camera"
        self.staging = self.work / "staging"
        self.camera.mkdir()
        self.staging.mkdir()
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def now(self) -> float:
        return time.monotonic() - self.start

    def event(self, kind: str, detail: str = "") -> None:
        with self.lock:
            self.events.append((self.now(), kind, detail))
        print(f"soak {self.now():7.1f}s {kind} {detail}", flush=True)

    def count(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.counts[key] += n

    # MARK: the world

    def setup(self) -> None:
        self.network = Network()
        self.server = Server(self.work / "server", self.out / "server.log", self.args.face)
        self.agent = Agent(Path(self.args.bin).resolve(), self.work / "home", self.out / "agent.log")
        self.agent.cli("account", "add", "--webdav", self.server.webdav(), "--tus", self.server.tus(), "--user", USER,
                       "--name", "home", "--password-stdin", "--allow-insecure-http", stdin=PASSWORD + "\n")
        self.agent.cli("watch", "add", str(self.camera), "--to", "/Soak/Camera", "--settle", "2")
        # Files to download, put on the server the way another client would: the folders
        # made once, then one PUT each.
        def server_curl(*args: str) -> None:
            subprocess.run(["ip", "netns", "exec", SERVER_NS, "curl", "-sf", "-o", "/dev/null", "-u", f"{USER}:{PASSWORD}",
                            *args], check=True)
        for folder in ("Soak/", "Soak/Seed/"):
            server_curl("-X", "MKCOL", self.server.webdav() + folder)
        for i in range(self.args.downloads):
            data = self.rng.randbytes(self.rng.randint(100_000, 12_000_000))
            path = self.work / f"seed-{i:03d}.bin"
            path.write_bytes(data)
            server_curl("-T", str(path), self.server.webdav() + f"Soak/Seed/seed-{i:03d}.bin")
            self.seeds[hashlib.sha256(data).hexdigest()] = f"/Soak/Seed/seed-{i:03d}.bin"
            path.unlink()
        self.agent.start()
        self.event("agent_start")

    def teardown(self) -> None:
        for stop in (lambda: self.agent.stop(), lambda: self.server.kill(), Network.remove):
            try:
                stop()
            except Exception as e:  # noqa: BLE001 - teardown goes on
                print(f"soak: teardown: {e}", file=sys.stderr)

    # MARK: what feeds it

    def new_media(self, folder: Path, name: str | None = None) -> tuple[Path, bytes, str]:
        kind = "video" if self.rng.random() < 0.12 else "photo"
        if kind == "photo":
            size = int(self.rng.lognormvariate(13.0, 0.9))  # about 450 kB, a few MB at times
            size = max(20_000, min(size, 8_000_000))
            stem, ext = f"IMG_{len(self.made):05d}", ".jpg"
        else:
            size = self.rng.randint(4_000_000, 30_000_000)
            stem, ext = f"VID_{len(self.made):05d}", ".mp4"
        if self.rng.random() < 0.1:
            stem += " copy ü"  # spaces and non-ASCII
        data = media_bytes(kind, size, self.rng)
        self.count("photos" if kind == "photo" else "videos")
        return folder / (name or stem + ext), data, kind

    def record(self, path: Path, data: bytes, how: str) -> None:
        with self.lock:
            self.made[hashlib.sha256(data).hexdigest()] = {"path": str(path), "size": len(data), "how": how}

    def write_slowly(self, path: Path, data: bytes) -> None:
        """An import that stalls: the file is open for writing for several seconds, written in
        pieces with pauses longer than the settle time."""
        pieces = self.rng.randint(3, 6)
        step = max(1, len(data) // pieces)
        with open(path, "wb") as f:
            for i in range(0, len(data), step):
                f.write(data[i:i + step])
                f.flush()
                time.sleep(self.rng.uniform(0.5, 3.0))

    def feed_camera(self) -> None:
        folders = 0
        subfolders: list[Path] = []
        while self.feeding.is_set():
            roll = self.rng.random()
            try:
                if roll < 0.50:
                    path, data, _ = self.new_media(self.rng.choice([self.camera] + subfolders[-3:]))
                    self.record(path, data, "written")
                    path.write_bytes(data)
                elif roll < 0.62:
                    path, data, _ = self.new_media(self.camera)
                    self.record(path, data, "written slowly")
                    self.count("slow")
                    threading.Thread(target=self.write_slowly, args=(path, data), daemon=True).start()
                elif roll < 0.82:
                    path, data, _ = self.new_media(self.staging)
                    path.write_bytes(data)
                    target = self.camera / path.name
                    self.record(target, data, "moved in")
                    os.rename(path, target)
                    self.count("moved_in")
                elif roll < 0.92:
                    folders += 1
                    staged = self.staging / f"trip-{folders:03d}"
                    staged.mkdir()
                    for _ in range(self.rng.randint(2, 6)):
                        path, data, _ = self.new_media(staged)
                        path.write_bytes(data)
                        self.record(self.camera / staged.name / path.name, data, "in a folder moved in")
                    target = self.camera / staged.name
                    os.rename(staged, target)
                    subfolders.append(target)
                    self.count("folders_moved_in")
                elif subfolders:
                    # A folder renamed while its photos may still be uploading.
                    i = self.rng.randrange(len(subfolders))
                    old = subfolders[i]
                    new = old.with_name(old.name.split(" ")[0] + f" renamed {self.rng.randint(0, 9999)}")
                    os.rename(old, new)
                    subfolders[i] = new
                    self.count("folders_renamed")
            except OSError as e:
                self.errors.append(f"feeding the camera folder: {e}")
            time.sleep(self.rng.uniform(0.3, 2.0))

    def feed_manual(self) -> None:
        folder = self.work / "manual"
        folder.mkdir()
        n = 0
        while not self.sleep_while_feeding(self.rng.uniform(10, 25)):
            n += 1
            data = self.rng.randbytes(self.rng.randint(50_000, 25_000_000))
            path = folder / f"document {n:03d}.bin"
            path.write_bytes(data)
            self.manual[hashlib.sha256(data).hexdigest()] = str(path)
            try:
                self.agent.cli("upload", "--to", "/Soak/Manual", str(path))
                self.count("manual_uploads")
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                self.errors.append(str(e))

    def feed_downloads(self) -> None:
        """`download` looks the file up on the server before it queues it, so while the link
        or the server is down it refuses, saying so: the person (and this feeder) tries again."""
        pending = list(self.seeds.items())
        while pending and not self.sleep_while_feeding(self.rng.uniform(8, 20)):
            digest, remote = pending[0]
            r = self.agent.cli("download", remote, check=False)
            if r.returncode == 0:
                pending.pop(0)
                self.downloads.append(digest)
                self.count("downloads")
            elif "cannot reach the server" in r.stderr or "did not answer" in r.stderr:
                self.count("downloads_refused_offline")
            else:
                self.errors.append(f"instant-upload download {remote} failed ({r.returncode}): {r.stderr.strip()}")

    def sleep_while_feeding(self, seconds: float) -> bool:
        """Sleeps; True when feeding ended meanwhile."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not self.feeding.is_set():
                return True
            time.sleep(0.2)
        return not self.feeding.is_set()

    # MARK: what goes wrong

    def chaos(self, feed_seconds: float) -> None:
        """Link drops and server restarts all along; agent kills in the first 60% of the run,
        so the last agent lives long enough to show whether it grows."""
        kills_until = self.now() + feed_seconds * 0.6
        next_kill = self.now() + self.rng.uniform(20, 50)
        next_drop = self.now() + self.rng.uniform(30, 60)
        next_restart = self.now() + self.rng.uniform(60, 100)
        while not self.sleep_while_feeding(0.5):
            t = self.now()
            if t >= next_kill and t < kills_until:
                self.agent.kill()
                self.count("agent_kills")
                self.event("agent_kill")
                time.sleep(self.rng.uniform(0.5, 3.0))
                self.agent.start()
                self.event("agent_start")
                next_kill = self.now() + self.rng.uniform(30, 70)
            if t >= next_drop:
                self.network.down()
                self.count("link_drops")
                seconds = self.rng.uniform(3, 15)
                self.event("link_down", f"{seconds:.0f}s")
                self.sleep_while_feeding(seconds)
                self.network.up()
                self.event("link_up")
                next_drop = self.now() + self.rng.uniform(40, 80)
            if t >= next_restart:
                self.server.kill()
                self.count("server_restarts")
                self.event("server_kill")
                time.sleep(self.rng.uniform(0.5, 4.0))
                self.server.start()
                self.event("server_start")
                next_restart = self.now() + self.rng.uniform(80, 140)

    def sample(self) -> None:
        while True:
            pid = self.agent.pid()
            row = {"t": round(self.now(), 1), "pid": pid, "rss_kb": None, "fds": None, "threads": None,
                   "db_bytes": sum(p.stat().st_size for p in self.agent.database.parent.glob("queue.sqlite3*"))
                   if self.agent.database.parent.exists() else 0}
            if pid:
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
                    row["rss_kb"] = int(fields["VmRSS"].split()[0])
                    row["threads"] = int(fields["Threads"])
                    row["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
                except (OSError, KeyError, ValueError):
                    pass  # it was killed between the two reads
            with self.lock:
                self.samples.append(row)
            if self.stop_sampling.wait(SAMPLE_SECONDS):
                return

    # MARK: the run

    def run(self) -> int:
        if os.geteuid() != 0:
            raise SystemExit("soak: needs root, for the network namespaces that take the link down (run it as root, like CI)")
        if not PYTHON.exists():
            raise SystemExit(f"soak: {PYTHON} is missing: run `make venv`")
        feed_seconds = self.args.minutes * 60
        self.stop_sampling = threading.Event()
        try:
            self.setup()
            sampler = threading.Thread(target=self.sample, daemon=True)
            sampler.start()
            feeders = [threading.Thread(target=f, daemon=True) for f in (self.feed_camera, self.feed_manual, self.feed_downloads)]
            for f in feeders:
                f.start()
            chaos = threading.Thread(target=self.chaos, args=(feed_seconds,), daemon=True)
            chaos.start()
            time.sleep(feed_seconds)
            self.feeding.clear()
            self.feed_end = self.now()
            self.event("feeding_ended")
            chaos.join()
            for f in feeders:
                f.join(timeout=60)
            time.sleep(5)  # the slow writers finish
            drained = self.drain()
            self.stop_sampling.set()
            sampler.join()
            self.agent.stop()
            return self.report(drained)
        finally:
            self.teardown()

    def drain(self) -> bool:
        """Waits until the queue and the watcher have had nothing left for ten seconds (up to
        --drain-minutes): nothing queued, moving or retrying, nothing pending in a rule."""
        deadline = time.monotonic() + self.args.drain_minutes * 60
        idle_since = None
        while time.monotonic() < deadline:
            try:
                status = json.loads(self.agent.cli("status", "--json", check=False).stdout or "{}")
                rules = json.loads(self.agent.cli("watch", "list", "--json", check=False).stdout or "[]")
            except (json.JSONDecodeError, subprocess.TimeoutExpired):
                status, rules = {}, []
            moving = sum(status.get(k, 0) or 0 for k in ("queued", "in_progress", "retrying"))
            pending = sum(r.get("pending", 0) or 0 for r in rules)
            if status and moving == 0 and pending == 0:
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since >= 10:
                    self.event("drained")
                    return True
            else:
                idle_since = None
            time.sleep(2)
        self.event("drain_timeout")
        return False

    # MARK: the verdict

    def server_files(self, folder: str) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        base = self.server.tree / folder
        for dirpath, _, names in os.walk(base):
            for name in names:
                p = Path(dirpath) / name
                found.setdefault(sha256(p), []).append("/" + str(p.relative_to(self.server.tree)))
        return found

    def check_once(self, label: str, expected: dict[str, str], found: dict[str, list[str]]) -> list[str]:
        problems = []
        for digest, origin in expected.items():
            places = found.get(digest, [])
            if len(places) != 1:
                problems.append(f"{label}: {origin} is there {len(places)} times {places}")
        for digest, places in found.items():
            if digest not in expected:
                problems.append(f"{label}: the server holds {places}, which is none of the files made")
        return problems

    @staticmethod
    def window(rows: list[dict], start: float, end: float, key: str) -> list[int]:
        return [r[key] for r in rows if start <= r["t"] < end and r[key] is not None]

    def growth(self, rows: list[dict], start: float, end: float, label: str) -> tuple[dict, list[str]]:
        first = {k: self.window(rows, start, start + 60, k) for k in ("rss_kb", "fds", "threads", "db_bytes")}
        last = {k: self.window(rows, end - 60, end, k) for k in ("rss_kb", "fds", "threads", "db_bytes")}
        figures, problems = {}, []
        for key in ("rss_kb", "fds", "threads", "db_bytes"):
            if not first[key] or not last[key]:
                problems.append(f"{label}: no {key} samples in the first or last minute")
                continue
            a, b = statistics.median(first[key]), statistics.median(last[key])
            figures[key] = {"first_minute_median": a, "first_minute_max": max(first[key]),
                            "last_minute_median": b, "last_minute_max": max(last[key])}
        # Grown means: the last minute's typical value above the first minute's highest by a
        # margin that a leak over the run would pass and the ordinary ebb and flow of
        # transfers (sockets, files, buffers, malloc arenas) does not.
        limits = {"rss_kb": lambda m: max(m * 1.25, m + 8 * 1024), "fds": lambda m: m + 6, "threads": lambda m: m + 4}
        for key, limit in limits.items():
            if key in figures and figures[key]["last_minute_median"] > limit(figures[key]["first_minute_max"]):
                problems.append(f"{label}: {key} grew from {figures[key]['first_minute_max']} (first minute's highest) "
                                f"to {figures[key]['last_minute_median']} (last minute's median)")
        return figures, problems

    def report(self, drained: bool) -> int:
        problems = list(self.errors)
        if not drained:
            problems.append(f"the queue did not drain within {self.args.drain_minutes} minutes after feeding ended")
        queue = json.loads(self.agent.cli("queue", "--json", check=False).stdout or "[]")
        failed = [q for q in queue if q.get("state") == "failed"]
        for q in failed:
            problems.append(f"failed: {q.get('source')} → {q.get('target')}: {q.get('reason')}")
        camera = {d: m["path"] for d, m in self.made.items()}
        problems += self.check_once("camera", camera, self.server_files("Soak/Camera"))
        problems += self.check_once("manual", self.manual, self.server_files("Soak/Manual"))
        local: dict[str, list[str]] = {}
        for dirpath, _, names in os.walk(self.agent.local_drive):
            for name in names:
                local.setdefault(sha256(Path(dirpath) / name), []).append(os.path.join(dirpath, name))
        problems += self.check_once("Local Drive", {d: self.seeds[d] for d in self.downloads}, local)

        whole, whole_problems = self.growth(self.samples, 0, self.feed_end, "the run")
        last_pid = self.agent.lives[-1]
        life = [r for r in self.samples if r["pid"] == last_pid and r["t"] <= self.feed_end]
        life_start = life[0]["t"] if life else 0
        last_life, life_problems = self.growth(life, life_start, self.feed_end, "the last agent")
        problems += whole_problems + life_problems

        figures = {"minutes": self.args.minutes, "seed": self.args.seed, "face": self.args.face,
                   "files_made": len(self.made), "counts": self.counts, "queue_rows": len(queue),
                   "completed": sum(1 for q in queue if q.get("state") == "completed"), "failed": len(failed),
                   "drain_seconds": round(self.now() - self.feed_end, 1),
                   "the_run": whole, "last_agent": {"lived_seconds": round(self.feed_end - life_start, 1), **last_life},
                   "problems": problems}
        (self.out / "figures.json").write_text(json.dumps(figures, indent=2, ensure_ascii=False))
        with open(self.out / "samples.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["t", "pid", "rss_kb", "fds", "threads", "db_bytes"])
            w.writeheader()
            w.writerows(self.samples)
        with open(self.out / "events.csv", "w", newline="") as f:
            csv.writer(f).writerows([("t", "event", "detail"), *self.events])
        text = self.describe(figures)
        (self.out / "figures.txt").write_text(text)
        print(text)
        self.plot()
        if problems:
            print("soak: FAILED", file=sys.stderr)
            for p in problems[:50]:
                print("  " + p, file=sys.stderr)
            return 1
        print(f"soak: passed; figures and soak.png in {self.out}")
        return 0

    def describe(self, f: dict) -> str:
        c = f["counts"]

        def mib(kb: float) -> str:
            return f"{kb / 1024:.1f} MB"

        lines = [f"soak: {f['minutes']} min (seed {f['seed']}, {f['face']} face), drained {f['drain_seconds']} s after",
                 f"  files: {f['files_made']} made in the camera folder ({c['photos']} photos, {c['videos']} videos; "
                 f"{c['slow']} written slowly, {c['moved_in']} moved in, {c['folders_moved_in']} folders moved in, "
                 f"{c['folders_renamed']} renamed), {c['manual_uploads']} manual uploads, {c['downloads']} downloads "
                 f"({c['downloads_refused_offline']} times refused while the server could not be reached, and asked again)",
                 f"  went wrong: {c['agent_kills']} agent kills, {c['link_drops']} link drops, "
                 f"{c['server_restarts']} server restarts",
                 f"  queue: {f['queue_rows']} rows, {f['completed']} completed, {f['failed']} failed"]
        for label, g in (("the run", f["the_run"]), (f"the last agent ({f['last_agent']['lived_seconds']} s)", f["last_agent"])):
            if "rss_kb" in g:
                lines.append(f"  {label}: RSS {mib(g['rss_kb']['first_minute_median'])} → {mib(g['rss_kb']['last_minute_median'])} "
                             f"(medians; highest {mib(g['rss_kb']['first_minute_max'])} → {mib(g['rss_kb']['last_minute_max'])}), "
                             f"descriptors {g['fds']['first_minute_median']} → {g['fds']['last_minute_median']} "
                             f"(highest {g['fds']['first_minute_max']} → {g['fds']['last_minute_max']}), "
                             f"threads {g['threads']['first_minute_median']} → {g['threads']['last_minute_median']}, "
                             f"database {g['db_bytes']['first_minute_median'] / 1024:.0f} → {g['db_bytes']['last_minute_median'] / 1024:.0f} kB")
        return "\n".join(lines) + "\n"

    def plot(self) -> None:
        # matplotlib's font cache goes into the build folder, not the caller's own cache.
        os.environ.setdefault("MPLCONFIGDIR", str(ROOT / ".build" / "matplotlib"))
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("soak: no plot (matplotlib is missing: `make soak` installs it)", file=sys.stderr)
            return
        t = [r["t"] / 60 for r in self.samples]
        rss = [r["rss_kb"] / 1024 if r["rss_kb"] else None for r in self.samples]
        fds = [r["fds"] for r in self.samples]
        fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(11, 6))
        top.plot(t, rss, lw=1, color="tab:blue")
        top.set_ylabel("agent RSS (MB)")
        bottom.plot(t, fds, lw=1, color="tab:green")
        bottom.set_ylabel("open descriptors")
        bottom.set_xlabel("minutes")
        down = None
        for at, kind, _ in self.events:
            for ax in (top, bottom):
                if kind == "agent_kill":
                    ax.axvline(at / 60, color="tab:red", lw=0.8, alpha=0.7)
                elif kind == "server_kill":
                    ax.axvline(at / 60, color="tab:purple", lw=0.8, ls="--", alpha=0.7)
            if kind == "link_down":
                down = at
            elif kind == "link_up" and down is not None:
                for ax in (top, bottom):
                    ax.axvspan(down / 60, at / 60, color="grey", alpha=0.2)
                down = None
        top.set_title("instant-upload soak: red = agent killed, purple dashed = server killed, grey = link down")
        fig.tight_layout()
        fig.savefig(self.out / "soak.png", dpi=100)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True, help="the folder holding instant-upload")
    p.add_argument("--minutes", type=float, default=float(os.environ.get("SOAK_MINUTES", "10")))
    p.add_argument("--drain-minutes", type=float, default=5)
    p.add_argument("--downloads", type=int, default=20, help="files put on the server to download during the run")
    p.add_argument("--face", choices=["tus", "nextcloud", "webdav"], default=os.environ.get("SOAK_FACE", "tus"))
    p.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", str(int(time.time())))))
    return Run(p.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
