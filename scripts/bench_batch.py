#!/usr/bin/env python3
"""`make bench`: a camera card's photos, beside the tools a person would otherwise use.

A folder of N photos of one size is sent to a server three ways, each run into a folder of
its own on the same server, timed from the command to the last file on the server:

- the agent (already running; `instant-upload upload FOLDER --to DIR`, until every row is
  completed);
- `rclone copy --transfers 3 FOLDER remote:DIR`;
- curl, one `PUT` per file, three at a time in one process (`--parallel-max 3`): the floor,
  with no look at the server before or after.

Servers: Apache httpd with mod_dav on loopback (a plain WebDAV server written by others, as
the tests start it) and the reference server's Nextcloud face. Reported: files/s, requests
per file (Apache's access log; the reference server's request counts), CPU (the agent's
threads; rclone's and curl's own) and the server's CPU for the same files (Apache's
processes; the reference server's). Client and server share the machine's cores, so what
each side spends per file bounds the rate together. Timings are figures to read, not asserts.

The agent and the floor run in turns, `--rounds` times each (curl first in one round, the
agent first in the next), and each figure is their median: on these two cores the same
server spends up to twice its CPU per file from one run to the next (the kernel's share of
its writes), for curl as for the agent, so a verdict on one run of each would be a toss.
rclone, at about 30 files/s, runs once.

    .venv/bin/python scripts/bench_batch.py [--bin .build/release] [--batch 1000x300000 ...]
                                            [--server apache|nextcloud ...] [--rounds 3] [--json FILE]
                                            [--among N]

`--among N` (not in `make bench`): each run's folder on the server already holds N empty
files of other names, as a camera folder synchronised for years would: the agent lists it
once (read as it comes, remembering up to 100,000 names), and its peak RSS shows what that
costs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import in_turn, peak_rss_mb, process_cpu, process_stat, save_json, start_server  # noqa: E402
from bench_backlog import requests_so_far, start_apache  # noqa: E402
from bench_report import profile_libraries, profile_parts  # noqa: E402
from bench_watch import PASSWORD, REPO, USER, Scene, tally  # noqa: E402

RCLONE_GOAL = 1.0
FLOOR_GOAL = 1 / 1.3
REQUESTS_GOAL = 3.0
# What a batch asks once per folder rather than per file (the agent: the folder's listing, and
# making it and its parent), allowed beside the per-file goal.
PER_FOLDER_ALLOWANCE = 4


def make_photos(folder: str, count: int, size: int) -> None:
    os.makedirs(folder)
    head = bytes.fromhex("ffd8ffe0")
    for i in range(count):
        with open(f"{folder}/IMG_{i:05d}.jpg", "wb") as f:
            f.write(head + os.urandom(size - len(head)))


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Server:
    """A server the batch goes to: its process, where its files land on disk, and the
    account, rclone vendor and request count the tools need."""

    name = ""
    rclone_vendor = "other"

    def __init__(self, scene: Scene, proc: subprocess.Popen, tree: str, webdav: str, account: list[str]):
        self.scene, self.proc, self.tree, self.webdav, self.account = scene, proc, tree, webdav, account

    def requests(self) -> int:
        raise NotImplementedError

    def cpu_seconds(self) -> float:
        """The server's CPU so far."""
        return process_cpu(self.proc.pid)

    def files_in(self, folder: str) -> int:
        path = f"{self.tree}/{folder}"
        return len(os.listdir(path)) if os.path.isdir(path) else 0

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class Apache(Server):
    name = "Apache mod_dav"

    def __init__(self, scene: Scene):
        proc, url = start_apache(scene)
        super().__init__(scene, proc, f"{scene.home}/apache/www", url,
                         ["account", "add", url, "--user", USER, "--name", "apache", "--allow-insecure-http"])

    def requests(self) -> int:
        return requests_so_far(self.scene)

    def cpu_seconds(self) -> float:
        """Apache's CPU so far: the parent's, its workers' (children it starts and stops as
        the load changes), and those of the workers that ended."""
        def parent(pid: str) -> int | None:
            try:
                return int(process_stat(pid)[1])
            except OSError:
                return None  # ended meanwhile: the parent's count has it once it is waited for
        workers = [pid for pid in filter(str.isdigit, os.listdir("/proc")) if parent(pid) == self.proc.pid]
        return process_cpu(self.proc.pid, with_children=True) + sum(process_cpu(pid) for pid in workers)


class NextcloudFace(Server):
    name = "reference server, Nextcloud face"
    rclone_vendor = "nextcloud"

    def __init__(self, scene: Scene):
        proc, self.base = start_server([sys.executable, "reference-server/server.py", "--data", f"{scene.home}/server", "--port", "0",
                                        "--user", f"{USER}:{PASSWORD}", "--face", "nextcloud"], f"{scene.home}/server.log")
        webdav = self.base + self.control("GET", "users")[USER]["webdav"].rstrip("/") + "/"
        super().__init__(scene, proc, f"{scene.home}/server/tree/{USER}", webdav,
                         ["account", "add", self.base, "--user", USER, "--name", "nextcloud", "--allow-insecure-http"])

    def control(self, method: str, path: str):
        request = urllib.request.Request(f"{self.base}/_control/{path}", method=method)
        with urllib.request.urlopen(request, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def requests(self) -> int:
        return sum(self.control("GET", "stats").get("requests", {}).values())


def completed(scene: Scene) -> int:
    db = scene.queue()
    try:
        return tally(db, "completed")
    finally:
        db.close()


def reset_peak_rss(pid: int) -> None:
    """Starts the process's peak resident memory again from what it holds now (Linux's
    clear_refs, 5), so that a run's peak is its own, not an earlier run's."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def agent_run(scene: Scene, server, photos: str, count: int, folder: str) -> dict:
    reset_peak_rss(scene.agent.pid)
    requests0, cpu0, before = server.requests(), scene.cpu_seconds(), completed(scene)
    started = time.monotonic()
    scene.cli("upload", photos, "--to", f"/{folder}")
    deadline = started + 1800
    while completed(scene) < before + count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the agent completed {completed(scene) - before} of {count} in 30 minutes; see {scene.home}/agent.log")
        time.sleep(0.02)
    seconds = time.monotonic() - started
    return {"seconds": seconds, "cpu_s": scene.cpu_seconds() - cpu0, "requests": server.requests() - requests0,
            "peak_rss_mb": peak_rss_mb(scene.agent.pid)}


def agent_profile(scene: Scene, photos: str, count: int) -> dict:
    """Where the agent's CPU goes in this batch: the same photos sent again, into a folder of
    their own, with `perf record` on the agent, apart from the timed run so that the
    profiler's cost stays out of the figures. Shares by part of the agent (`PARTS`), by
    library (the kernel's work for the agent included), and the busiest functions."""
    if not shutil.which("perf"):
        return {"missing": "perf is not installed (Debian package linux-perf)"}
    data = f"{scene.home}/agent.perf"
    before = completed(scene)
    # Call stacks (unwound from a copy of each sample's stack), to tell the parts of the agent
    # apart; sampled less often than a flat profile would be, to keep the data small.
    perf = subprocess.Popen(["perf", "record", "-q", "-F", "499", "--call-graph", "dwarf,8192", "-p", str(scene.agent.pid), "-o", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(0.3)  # attached before the first file goes
    if perf.poll() is not None:
        return {"missing": f"perf record could not follow the agent: {perf.stderr.read().decode(errors='replace')[-300:]}"}
    scene.cli("upload", photos, "--to", "/profiled")
    deadline = time.monotonic() + 1800
    while completed(scene) < before + count and time.monotonic() < deadline:
        time.sleep(0.02)
    perf.send_signal(signal.SIGINT)
    perf.wait(60)

    def report(sort: str, limit: float) -> list[tuple[float, list[str]]]:
        r = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", sort, "-g", "none",
                            "--percent-limit", str(limit)], capture_output=True, text=True)
        rows = []
        for line in r.stdout.splitlines():
            words = line.split()
            if len(words) >= 2 and words[0].endswith("%") and not line.startswith("#"):
                rows.append((float(words[0].rstrip("%")), words[1:]))
        return rows

    by_library = [(pct, words[0]) for pct, words in report("dso", 0.5)]
    busiest = [(pct, words[0], " ".join(words[2:]) if len(words) > 2 else "?") for pct, words in report("dso,sym", 1.0)[:12]]
    names = demangled([symbol for _, _, symbol in busiest])
    return {"by_library": by_library, "functions": [(pct, library, names[symbol]) for pct, library, symbol in busiest],
            "by_part": parts(data)}


# The parts of the agent a sample is counted in: the first of these its stack passes through,
# from the function running outwards (so the SQLite code the queue calls, and the kernel's
# work for it, count as the queue's; the SHA-256 taken while a body is sent counts as hashing).
PARTS = [
    ("the queue's records (SQLite: commits, flushes, reads)", ("$s5Queue0A5Store", "$s5Queue8Database", "$s5Queue9Statement", "sqlite3")),
    ("hashing (SHA-256)", ("RunningSHA256", "sha256_block", "SHA256_")),
    ("HTTP (libcurl and the socket)", ("$s9Transport11HTTPSession", "$s9Transport15ExchangeContext", "curl_", "Curl_")),
    ("the scheduler", ("$s6Engine5Agent",)),
    ("the upload's own steps (engine and protocol code)", ("$s6Engine", "$s9Transport", "$s5Queue")),
]


def parts(data: str) -> list[tuple[float, str]]:
    """Shares of the agent's samples by part (`PARTS`); what none of them holds (threads
    starting and waking, the kernel's scheduling) is counted as the rest."""
    r = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"], capture_output=True, text=True)
    counts: Counter = Counter()
    for sample in r.stdout.split("\n\n"):
        # One line per frame: the address, then the function's name.
        frames = [line.split(None, 1)[-1] for line in sample.splitlines() if line.strip()]
        if frames:
            counts[next((name for frame in frames for name, prefixes in PARTS if frame.startswith(prefixes)),
                        "the rest (threads, scheduling)")] += 1
    total = sum(counts.values())
    return sorted(((100 * n / total, name) for name, n in counts.items()), reverse=True)


def demangled(symbols: list[str]) -> dict[str, str]:
    """Swift symbols as a person reads them, in one run of the toolchain's `swift demangle`;
    other names, or all of them without the toolchain, as they are."""
    names = {symbol: symbol for symbol in symbols}
    swift = sorted({symbol for symbol in symbols if symbol.startswith("$s")})
    if swift and shutil.which("swift"):
        r = subprocess.run(["swift", "demangle", "--simplified", "--compact", *swift], capture_output=True, text=True)
        lines = r.stdout.splitlines()
        if r.returncode == 0 and len(lines) == len(swift):
            names.update((symbol, line or symbol) for symbol, line in zip(swift, lines))
    return names


def rclone_run(scene: Scene, server, photos: str, count: int, folder: str) -> dict:
    obscured = subprocess.run(["rclone", "obscure", PASSWORD], capture_output=True, text=True, check=True).stdout.strip()
    env = dict(os.environ, RCLONE_CONFIG_BENCH_TYPE="webdav", RCLONE_CONFIG_BENCH_URL=server.webdav,
               RCLONE_CONFIG_BENCH_VENDOR=server.rclone_vendor, RCLONE_CONFIG_BENCH_USER=USER, RCLONE_CONFIG_BENCH_PASS=obscured,
               RCLONE_CONFIG=os.devnull)
    requests0, cpu0 = server.requests(), children_cpu()
    started = time.monotonic()
    r = subprocess.run(["rclone", "copy", "--transfers", "3", photos, f"bench:{folder}"], env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if r.returncode != 0:
        raise RuntimeError(f"rclone copy failed: {r.stderr[-2000:]}")
    return {"seconds": seconds, "cpu_s": children_cpu() - cpu0, "requests": server.requests() - requests0}


def curl_run(scene: Scene, server, photos: str, count: int, folder: str) -> dict:
    # The floor: the folder made first, then one PUT per file.
    subprocess.run(["curl", "-sS", "-o", "/dev/null", "-u", f"{USER}:{PASSWORD}", "-X", "MKCOL", server.webdav + f"{folder}/"], check=True)
    config = f"{scene.home}/curl.cfg"
    with open(config, "w") as f:
        for name in sorted(os.listdir(photos)):
            f.write(f'upload-file = "{photos}/{name}"\nurl = "{server.webdav}{folder}/{name}"\noutput = "/dev/null"\n')
    requests0, cpu0 = server.requests(), children_cpu()
    started = time.monotonic()
    r = subprocess.run(["curl", "-sS", "--fail", "--parallel", "--parallel-max", "3", "-u", f"{USER}:{PASSWORD}", "-K", config],
                       capture_output=True, text=True)
    seconds = time.monotonic() - started
    if r.returncode != 0:
        raise RuntimeError(f"curl failed: {r.stderr[-2000:]}")
    return {"seconds": seconds, "cpu_s": children_cpu() - cpu0, "requests": server.requests() - requests0}


TOOLS = {"curl": curl_run, "rclone": rclone_run, "agent": agent_run}


def turns(tools: list[str], rounds: int) -> list[tuple[str, int]]:
    """The order the tools run in: rclone once, then curl and the agent `rounds` times each,
    taking turns at going first."""
    order = [("rclone", 0)] if "rclone" in tools else []
    pair = tuple(t for t in ("curl", "agent") if t in tools)
    for n in range(rounds):
        order += [(t, n) for t in in_turn(pair, n)]
    return order


def median_of(runs: list[dict]) -> dict:
    """A tool's figures over its runs: the median of each, the most requests any run needed
    per file, and every run's own figures beside them."""
    figures = {key: statistics.median(r[key] for r in runs)
               for key in ("seconds", "cpu_s", "server_cpu_s", "files_per_s", "cpu_ms_per_file", "server_cpu_ms_per_file")}
    worst = max(runs, key=lambda r: r["requests_per_file"])
    figures.update(requests=worst["requests"], requests_per_file=worst["requests_per_file"], runs=runs)
    if all("peak_rss_mb" in r for r in runs):
        figures["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    return figures


def fill(server: Server, folder: str, among: int) -> None:
    """`among` empty files in the server's `folder`, owned as the server's own files are."""
    path = f"{server.tree}/{folder}"
    os.makedirs(path, exist_ok=True)
    for i in range(among):
        open(f"{path}/DSC_{i:07}.jpg", "w").close()
    if os.getuid() == 0 and isinstance(server, Apache):
        # Apache's workers run as nobody: the folders must be theirs to write in.
        top = f"{server.tree}/{folder.split('/')[0]}"
        for place in {top, path}:
            os.chown(place, 65534, 65534)


def run(binary: str, kind: str, count: int, size: int, tools: list[str], rounds: int, profile: bool = True,
        among: int = 0) -> dict:
    scene = Scene(binary)
    server = None
    try:
        server = Apache(scene) if kind == "apache" else NextcloudFace(scene)
        added = scene.cli(*server.account, "--password-stdin", stdin=PASSWORD + "\n", check=False)
        if added.returncode != 0:
            raise RuntimeError(f"account add failed: {added.stdout} {added.stderr}")
        photos = f"{scene.home}/Card"
        make_photos(photos, count, size)
        scene.start_agent()
        runs: dict[str, list[dict]] = {}
        for tool, n in turns(tools, rounds):
            # Every run starts with nothing waiting to be written to the disk: the photos just
            # made, or the files the server wrote for the run before, written back while a
            # tool is timed, cost Apache about twice its CPU per file on these two cores.
            os.sync()
            folder = f"{tool}{n}"
            # The agent sends the folder itself, so its photos land in a folder of that name.
            target = f"{folder}/Card" if tool == "agent" else folder
            if among:
                fill(server, target, among)
                os.sync()
            server_cpu = server.cpu_seconds()
            r = TOOLS[tool](scene, server, photos, count, folder)
            r["server_cpu_s"] = server.cpu_seconds() - server_cpu
            on_server = server.files_in(target) - among
            if on_server != count:
                raise RuntimeError(f"{tool}: {on_server} of {count} files on the server")
            r.update(files_per_s=count / r["seconds"], requests_per_file=r["requests"] / count,
                     cpu_ms_per_file=r["cpu_s"] / count * 1000, server_cpu_ms_per_file=r["server_cpu_s"] / count * 1000)
            runs.setdefault(tool, []).append(r)
        results = {tool: median_of(runs[tool]) for tool in ("curl", "rclone", "agent") if tool in runs}
        if "agent" in tools and profile:
            results["agent"]["profile"] = agent_profile(scene, photos, count)
        return {"server": server.name, "kind": kind, "files": count, "size": size, "rounds": rounds, "among": among, "tools": results}
    finally:
        if server:
            server.close()
        scene.close()


def verdicts(r: dict) -> list[tuple[str, bool]]:
    t = r["tools"]
    if len(t) < 3:
        return []
    agent, rclone, floor = t["agent"]["files_per_s"], t["rclone"]["files_per_s"], t["curl"]["files_per_s"]
    requests, files = t["agent"]["requests"], r["files"]
    return [(f"files/s >= rclone's: {agent:.1f} vs {rclone:.1f} ({agent / rclone:.2f}x)", agent >= rclone * RCLONE_GOAL),
            (f"files/s >= 1/1.3 of the curl floor's: {agent:.1f} vs {floor:.1f} ({agent / floor:.2f}x)", agent >= floor * FLOOR_GOAL),
            (f"<= {REQUESTS_GOAL:.0f} requests per new file, and {PER_FOLDER_ALLOWANCE} for the folder: "
             f"{requests:,} requests for {files:,} files", requests <= REQUESTS_GOAL * files + PER_FOLDER_ALLOWANCE)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--batch", action="append", help="COUNTxBYTES (default: 1000x300000 and 10000x30000)")
    parser.add_argument("--server", action="append", choices=("apache", "nextcloud"), help="default: both")
    parser.add_argument("--json", help="write the figures to this file as well")
    parser.add_argument("--rounds", type=int, default=3, help="runs of curl and of the agent, taking turns (default: 3)")
    parser.add_argument("--no-profile", action="store_true", help="leave out the agent's profiled second run")
    parser.add_argument("--tools", default="curl,rclone,agent",
                        help="which of curl, rclone and agent to run (default: all three; verdicts need all three)")
    parser.add_argument("--among", type=int, default=0,
                        help="each run's folder on the server already holds this many files (default: none)")
    args = parser.parse_args()
    binary = os.path.abspath(os.path.join(REPO, args.bin, "instant-upload"))
    batches = [tuple(int(x) for x in b.split("x")) for b in (args.batch or ["1000x300000", "10000x30000"])]
    runs = []
    for count, size in batches:
        for kind in args.server or ["apache", "nextcloud"]:
            r = run(binary, kind, count, size, args.tools.split(","), max(1, args.rounds),
                  profile=not args.no_profile, among=args.among)
            runs.append(r)
            print(f"batch {count:,} x {size // 1000} kB to {r['server']}"
                  + (f", into a folder of {args.among:,} files" if args.among else "") + ":")
            for tool, t in r["tools"].items():
                print(f"  {tool:6} {t['files_per_s']:7.1f} files/s  {t['seconds']:6.1f} s  {t['requests_per_file']:5.2f} requests/file  "
                      f"CPU {t['cpu_ms_per_file']:.2f} ms/file, server's {t['server_cpu_ms_per_file']:.2f}"
                      + (f", peak RSS {t['peak_rss_mb']:.1f} MB" if "peak_rss_mb" in t else "")
                      + (f"  (median of {len(t['runs'])}: " + ", ".join(f"{x['files_per_s']:.0f}" for x in t["runs"]) + " files/s)"
                         if len(t["runs"]) > 1 else ""))
            profile = r["tools"].get("agent", {}).get("profile")
            if profile:
                print(f"  agent CPU by library (perf, the same photos again): {profile_libraries(profile)}")
                if profile.get("by_part"):
                    print(f"  agent CPU by part: {profile_parts(profile)}")
            for text, ok in verdicts(r):
                print(f"  {'PASS' if ok else 'MISS'} {text}")
    if args.json:
        save_json(args.json, {"runs": runs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
