#!/usr/bin/env python3
"""`status` and `queue` on a queue of 100,000 rows: how long the CLI takes to answer.

`status` should answer in under 25 ms, and `queue` (also `--state failed`) in under 100 ms,
on a database of 100,000 rows, with the time not growing with the table's history. This
script measures it; it is not a test (timings belong in notes, not in asserts).

What it does:

  1. makes a private XDG home in a temporary folder (nothing of yours is touched);
  2. runs `instant-upload status` once, so the binary itself creates the queue database
     with its own schema (Sources/Queue/Storage/Schema.swift);
  3. adds one account and ROWS transfers straight into it with Python's sqlite3, in a mix
     of states like a busy queue: mostly completed and queued, some failed with reasons,
     a few in_progress and retrying (uploads and downloads, manual/share/auto origins);
  4. copies the database into a second home, pauses its queue there and starts an agent on
     it (`instant-upload run`), so every command is also timed with an agent running: that
     is where `status` asks the agent what holds the queue and reads the watch rules'
     troubles;
  5. times each command RUNS times (after one warm-up run) as a child process, reading
     all of its output, alternating between the two homes, and prints median / min / max
     wall time and the median CPU time (user + sys) of the child, which a busy machine
     disturbs less than wall time; then each command's peak RSS, from one more run under
     GNU time (a command that lists every row should hold what it prints, not every row);
     and the idle agent's resident memory on that queue;
  6. prints SQLite's query plan of every statement `status` and `queue` run, as the
     binary reports them with INSTANT_UPLOAD_EXPLAIN set.

With --index SQL (repeatable) it also copies the database, runs each SQL statement on the
copy (e.g. an extra index), and times the same commands against the copy, alternating runs
with the original, so a proposed index can be judged by before/after figures.

`queue --json` prints every row and is expected to be slow; it is reported, but not held
to a target.

    python3 scripts/bench_queue.py [--bin .build/release] [--rows 100000] [--runs 10]
                                   [--index "CREATE INDEX ..."] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import kib, process_status, save_json, stop_process  # noqa: E402

# (label, arguments, target in ms on the median, or None where the command is not held to one)
COMMANDS = [
    ("--help (no database)", ["--help"], 10.0),
    ("status", ["status"], 25.0),
    ("status --json", ["status", "--json"], 25.0),
    ("queue", ["queue"], 100.0),
    ("queue --state failed", ["queue", "--state", "failed"], 100.0),
    ("queue --state queued", ["queue", "--state", "queued"], None),
    ("queue --json", ["queue", "--json"], None),
]

# The state mix, in per-mille: a long-lived queue is mostly history.
STATE_MIX = [
    ("completed", 600),
    ("queued", 300),
    ("failed", 80),
    ("in_progress", 10),
    ("retrying", 10),
]

FAILURES = [
    ("quota", "no quota left on server (507)", "free space on the server, then `instant-upload retry ID`"),
    ("target_missing", "the folder /Photos/2019 does not exist on the server", "`instant-upload retry ID --to DIR`"),
    ("source_missing", "the file is gone from your disk", "`instant-upload cancel ID`"),
    ("auth", "the server refused the password (401)", "log in again with `instant-upload account add`"),
    ("rejected_by_server", "the server refused the file (403): blocked by antivirus", "`instant-upload cancel ID`"),
]
TRANSIENT = [
    ("connection_reset", "connection reset by peer", "retried by itself"),
    ("server_busy", "the server is busy (429)", "retried by itself"),
    ("timeout", "no progress for 30 s", "retried by itself"),
]

def parse_arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=".build/release", help="folder with the instant-upload binary (default .build/release)")
    p.add_argument("--rows", type=int, default=100_000, help="transfer rows to add (default 100000)")
    p.add_argument("--runs", type=int, default=10, help="timed runs per command (default 10)")
    p.add_argument("--index", action="append", default=[], metavar="SQL",
                   help="SQL to run on a copy of the database before timing it again (repeatable)")
    p.add_argument("--seed", type=int, default=1, help="random seed for the row mix")
    p.add_argument("--keep", action="store_true", help="keep the temporary home and print where it is")
    p.add_argument("--json", metavar="PATH", help="also write the figures (as the schema is) to PATH")
    return p.parse_args()


def make_home() -> tuple[str, dict[str, str]]:
    home = tempfile.mkdtemp(prefix="iu-bench-queue-")
    env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "XDG_DOWNLOAD_DIR")}
    env.update(HOME=home, XDG_CONFIG_HOME=f"{home}/config", XDG_STATE_HOME=f"{home}/state",
               XDG_RUNTIME_DIR=f"{home}/run", COLUMNS="120")
    os.makedirs(f"{home}/run", mode=0o700)
    os.makedirs(f"{home}/config/instant-upload")
    with open(f"{home}/config/instant-upload/config.ini", "w") as f:
        f.write("[agent]\nautostart = false\n")
    return home, env


def copy_home_with(db_path: str) -> tuple[str, dict[str, str]]:
    """A second home holding a copy of the database."""
    home, env = make_home()
    os.makedirs(f"{home}/state/instant-upload", mode=0o700)
    shutil.copyfile(db_path, f"{home}/state/instant-upload/queue.sqlite3")
    return home, env


def start_agent(binary: str, env: dict[str, str]) -> subprocess.Popen:
    """An agent on the home's queue, paused first so that it starts nothing: it holds the
    database open and answers on its control socket, as a person's agent does."""
    paused = subprocess.run([binary, "pause", "--all"], env=env, capture_output=True, text=True)
    if paused.returncode != 0:
        sys.exit(f"`instant-upload pause --all` failed ({paused.returncode}): {paused.stderr}")
    agent = subprocess.Popen([binary, "run"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if agent.poll() is not None:
            sys.exit(f"the agent exited ({agent.returncode}) before it was up: {agent.stderr.read().decode(errors='replace')[-500:]}")
        r = subprocess.run([binary, "status", "--json"], env=env, capture_output=True, text=True)
        try:
            if json.loads(r.stdout).get("agent_pid"):
                return agent
        except json.JSONDecodeError:
            pass
        time.sleep(0.2)
    stop_process(agent)
    sys.exit("the agent did not come up within 30 s (status --json never named it)")


def resident_kib(pid: int) -> dict[str, int]:
    """VmRSS, RssAnon and VmHWM of a running process, in KiB."""
    status = process_status(pid)
    return {key: kib(status[key]) for key in ("VmRSS", "RssAnon", "VmHWM")}


def fill(db_path: str, rows: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA foreign_keys=ON")
    now = int(time.time() * 1000)
    db.execute("INSERT INTO accounts (name, webdav_url, tus_url, username, wifi_only, created_at) VALUES (?, ?, ?, ?, 0, ?)",
               ("home", "https://cloud.example.org/dav/alice/", "https://cloud.example.org/files/", "alice", now))
    account = db.execute("SELECT id FROM accounts WHERE name = 'home'").fetchone()[0]
    states = [s for s, n in STATE_MIX for _ in range(n)]
    counts: dict[str, int] = {}
    batch = []
    start = now - rows * 1000
    for i in range(rows):
        state = rng.choice(states)
        counts[state] = counts.get(state, 0) + 1
        direction = "download" if rng.random() < 0.1 else "upload"
        origin = rng.choice(["auto", "auto", "auto", "manual", "share"]) if direction == "upload" else "manual"
        lane = 1 if origin == "auto" else 0
        size = rng.randint(100_000, 12_000_000)
        created = start + i * 1000
        name = f"IMG_{i:06d}.jpg"
        local = f"/home/alice/Pictures/{2015 + i % 10}/{name}".encode()
        remote = f"/Photos/{2015 + i % 10}/{name}"
        reason = (None, None, None)
        attempts, next_at, started, completed, sha, done, url = 0, None, None, None, None, 0, None
        if state == "completed":
            started, completed, done = created + 500, created + 900, size
            sha = f"{rng.getrandbits(256):064x}"
        elif state == "failed":
            reason = rng.choice(FAILURES)
            started, done = created + 500, rng.randint(0, size)
        elif state == "in_progress":
            started, done = now - 5_000, rng.randint(0, size)
            url = f"https://cloud.example.org/files/{rng.getrandbits(64):016x}"
        elif state == "retrying":
            reason = rng.choice(TRANSIENT)
            attempts, next_at, started, done = rng.randint(1, 6), now + rng.randint(1_000, 60_000), now - 60_000, rng.randint(0, size)
            url = f"https://cloud.example.org/files/{rng.getrandbits(64):016x}"
        batch.append((direction, origin, lane, account, local if direction == "upload" else f"/home/alice/Downloads/Local Drive/{name}".encode(),
                      remote, state, reason[0], reason[1], reason[2], attempts, next_at, done, size, url,
                      2049, 1_000_000 + i, size, created * 1_000_000, done, sha, created, started, completed))
    db.executemany("""
        INSERT INTO transfers (direction, origin, lane, account_id, local_path, remote_path, state, reason_code, reason_message,
            reason_action, attempts, next_attempt_at, bytes_done, bytes_total, upload_url, fp_device, fp_inode, fp_size,
            fp_mtime_ns, checkpoint_offset, sha256, created_at, started_at, completed_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", batch)
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return counts


def run_once(binary: str, args: list[str], env: dict[str, str]) -> tuple[float, float, int, int]:
    """Wall ms, CPU ms (user + sys of the child), exit status, bytes on stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([binary, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} exited {p.returncode}: {p.stderr.decode(errors='replace')[:500]}")
    return wall, cpu, p.returncode, len(p.stdout)


def command_peak_rss_mb(binary: str, args: list[str], env: dict[str, str]) -> float:
    """The command's peak RSS, in a run of its own under GNU time (`%M`): the kernel's count
    for a process started from this one would begin at this script's own size, which a
    child keeps across exec, and the timed runs are left as they are."""
    r = subprocess.run(["/usr/bin/time", "-f", "%M", binary, *args], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return int(r.stderr.strip().splitlines()[-1]) / 1024


def measure(binary: str, variants: list[tuple[str, dict[str, str]]], runs: int) -> dict[str, dict[str, dict]]:
    """Times every command on every variant; the variants' runs alternate, so a burst of load
    elsewhere on the machine hits both alike."""
    results: dict[str, dict[str, dict]] = {name: {} for name, _ in variants}
    for label, args, _ in COMMANDS:
        samples = {name: ([], []) for name, _ in variants}
        status = {name: (0, 0) for name, _ in variants}
        for name, env in variants:
            run_once(binary, args, env)  # warm-up: page cache, dynamic loader
        # `queue --json` prints every row and takes seconds: three runs tell enough.
        for _ in range(min(runs, 3) if label == "queue --json" else runs):
            for name, env in variants:
                wall, cpu, code, size = run_once(binary, args, env)
                samples[name][0].append(wall)
                samples[name][1].append(cpu)
                status[name] = (code, size)
        for name, _ in variants:
            walls, cpus = samples[name]
            results[name][label] = {"median": statistics.median(walls), "min": min(walls), "max": max(walls),
                                    "cpu": statistics.median(cpus), "peak_rss_mb": command_peak_rss_mb(binary, args, dict(variants)[name]),
                                    "status": status[name][0], "bytes": status[name][1]}
    return results


def print_table(title: str, results: dict[str, dict]) -> None:
    print(f"\n{title}")
    header = (f"{'command':<24} {'exit':>4} {'output B':>11} {'median ms':>10} {'min ms':>8} {'max ms':>8} "
              f"{'cpu ms':>8} {'peak MB':>8}  target (on the median)")
    print(header)
    print("-" * len(header))
    for label, _, target in COMMANDS:
        r = results[label]
        verdict = (f"< {target:.0f} ms: " + ("PASS" if r["median"] < target else "MISS")) if target else "(not held)"
        print(f"{label:<24} {r['status']:>4} {r['bytes']:>11,} {r['median']:>10.1f} {r['min']:>8.1f} {r['max']:>8.1f} "
              f"{r['cpu']:>8.1f} {r['peak_rss_mb']:>8.1f}  {verdict}")


def explain(binary: str, env: dict) -> None:
    """The plan of every query the held commands run, as the binary itself reports them
    (INSTANT_UPLOAD_EXPLAIN: each statement's plan on standard error when first prepared)."""
    seen = set()
    for label, args, target in COMMANDS:
        if not target:
            continue
        r = subprocess.run([binary, *args], env={**env, "INSTANT_UPLOAD_EXPLAIN": "1"}, capture_output=True, text=True)
        plans = [p for p in r.stderr.split("query plan: ")[1:]]
        print(f"\n  {label}: {len(plans)} statements" + (", those not shown above:" if seen else ":"))
        for plan in plans:
            sql, _, steps = plan.partition("\n")
            if sql in seen:
                continue
            seen.add(sql)
            print(f"    {sql}")
            for step in steps.strip("\n").split("\n"):
                print(f"      {step.strip()}")


def main() -> int:
    a = parse_arguments()
    binary = os.path.join(a.bin, "instant-upload")
    if not os.access(binary, os.X_OK):
        sys.exit(f"no instant-upload in {a.bin}: build it with `swift build -c release` or pass --bin")
    home, env = make_home()
    try:
        made = subprocess.run([binary, "status"], env=env, capture_output=True, text=True)
        if made.returncode != 0:
            sys.exit(f"`instant-upload status` on an empty home failed ({made.returncode}): {made.stderr}")
        db_path = f"{home}/state/instant-upload/queue.sqlite3"
        t0 = time.perf_counter()
        counts = fill(db_path, a.rows, a.seed)
        print(f"instant-upload: {os.path.realpath(binary)}")
        print(f"database: {a.rows:,} rows ({', '.join(f'{s} {n:,}' for s, n in sorted(counts.items()))}), "
              f"{os.path.getsize(db_path) / 1e6:.1f} MB, filled in {time.perf_counter() - t0:.1f} s")
        print(f"sqlite {sqlite3.sqlite_version} (Python's); {a.runs} runs per command after one warm-up")

        variants = [("as is", env)]
        agent_home, agent_env = copy_home_with(db_path)
        agent = start_agent(binary, agent_env)
        variants.append(("agent running", agent_env))
        copy_home = None
        if a.index:
            copy_home, copy_env = copy_home_with(db_path)
            db = sqlite3.connect(f"{copy_home}/state/instant-upload/queue.sqlite3")
            for sql in a.index:
                db.execute(sql)
            db.commit()
            db.close()
            variants.append(("with index", copy_env))
        try:
            results = measure(binary, variants, a.runs)
            memory = resident_kib(agent.pid)
            print_table("As the schema is:", results["as is"])
            print_table("With an agent running (the queue paused):", results["agent running"])
            print(f"\nthe idle agent on this queue: {memory['VmRSS'] / 1024:.1f} MB resident "
                  f"({memory['RssAnon'] / 1024:.1f} MB anonymous), at most {memory['VmHWM'] / 1024:.1f} MB since it started")
            if a.json:
                save_json(a.json, {"rows": a.rows, "agent_memory_kib": memory, "commands": [
                    {"label": label, "args": args, "target_ms": target, **results["as is"][label],
                     "agent_running": results["agent running"][label]}
                    for label, args, target in COMMANDS]})
            if a.index:
                print_table("On a copy, with " + "; ".join(a.index) + ":", results["with index"])
            print("\nQuery plans, as the schema is:")
            explain(binary, env)
            print("\nQuery plans, with an agent running:")
            explain(binary, agent_env)
            if a.index:
                print("\nQuery plans, with the index:")
                explain(binary, copy_env)
        finally:
            stop_process(agent)
            shutil.rmtree(agent_home, ignore_errors=True)
            if copy_home:
                shutil.rmtree(copy_home, ignore_errors=True)
    finally:
        if a.keep:
            print(f"\nkept {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
