#!/usr/bin/env python3
"""share-to with 500 files selected: how long until it has queued them and exited.

The desktop promise is that share-to returns within a second of the person choosing a
folder. This script measures it; it is not a test (timings belong in notes, not in asserts).

Two cases, each RUNS times after one warm-up, in a private XDG home (nothing of yours is
touched), with the agent not running and autostart off (starting it never waits anyway):

  1. `share-to --to /Photos FILE x 500`: from start to exit (checks the files, one
     transaction, notification attempt, doorbell);
  2. the terminal picker on a pseudo-terminal: from the moment the person answers
     "Send here" to exit. The account's server is unreachable, so the listing fails at once
     and the measurement is share-to's own work, not a server's.

Between runs the queue is emptied. Prints median / min / max wall time in milliseconds.

    python3 scripts/bench_share_to.py [--bin .build/release] [--files 500] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time


def environment(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    env.update(HOME=home, XDG_CONFIG_HOME=f"{home}/config", XDG_STATE_HOME=f"{home}/state", XDG_RUNTIME_DIR=f"{home}/run")
    return env


def prepare(binary: str, home: str, count: int) -> tuple[dict[str, str], list[str]]:
    env = environment(home)
    os.makedirs(f"{home}/run", mode=0o700)
    os.makedirs(f"{home}/config/instant-upload")
    with open(f"{home}/config/instant-upload/config.ini", "w") as f:
        f.write("[agent]\nautostart = false\n")
    subprocess.run([f"{binary}/instant-upload", "status"], env=env, check=True, capture_output=True)
    db = sqlite3.connect(f"{home}/state/instant-upload/queue.sqlite3")
    db.execute("INSERT INTO accounts (name, webdav_url, tus_url, username, wifi_only, created_at) VALUES (?, ?, ?, ?, 0, 0)",
               ("home", "http://127.0.0.1:1/dav/alice/", "http://127.0.0.1:1/files/", "alice"))
    db.commit()
    db.close()
    files = []
    os.makedirs(f"{home}/Pictures")
    for i in range(count):
        path = f"{home}/Pictures/IMG_{i:04d}.jpg"
        with open(path, "wb") as f:
            f.write(os.urandom(4096))
        files.append(path)
    return env, files


def empty_queue(home: str) -> int:
    db = sqlite3.connect(f"{home}/state/instant-upload/queue.sqlite3")
    n = db.execute("SELECT count(*) FROM transfers").fetchone()[0]
    db.execute("DELETE FROM transfers")
    db.commit()
    db.close()
    return n


def with_to(binary: str, env: dict[str, str], files: list[str]) -> float:
    start = time.monotonic()
    subprocess.run([f"{binary}/share-to", "--to", "/Photos", *files], env=env, check=True, capture_output=True)
    return time.monotonic() - start


def with_prompt(binary: str, env: dict[str, str], files: list[str]) -> float:
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(f"{binary}/share-to", [f"{binary}/share-to", *files], env)
    screen = b""
    deadline = time.monotonic() + 60
    while b"Number (q to cancel):" not in screen:
        if time.monotonic() > deadline:
            raise SystemExit(f"the prompt never came: {screen[-500:]!r}")
        ready, _, _ = select.select([fd], [], [], 1)
        if ready:
            screen += os.read(fd, 65536)
    # Without recent folders the first row is "Send here: /".
    start = time.monotonic()
    os.write(fd, b"1\n")
    while True:
        try:
            if not os.read(fd, 65536):
                break
        except OSError:
            break
    _, status = os.waitpid(pid, 0)
    elapsed = time.monotonic() - start
    os.close(fd)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"share-to exited {os.waitstatus_to_exitcode(status)}: {screen[-500:]!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    home = tempfile.mkdtemp(prefix="iu-bench-share-")
    try:
        env, files = prepare(binary, home, args.files)
        for label, case in (("share-to --to DIR, start to exit", with_to), ("picker on a terminal, answer to exit", with_prompt)):
            case(binary, env, files)
            empty_queue(home)
            times = []
            for _ in range(args.runs):
                times.append(case(binary, env, files) * 1000)
                queued = empty_queue(home)
                if queued != args.files:
                    raise SystemExit(f"{label}: {queued} rows queued, expected {args.files}")
            print(f"share-to, {args.files} files, {label}: median {statistics.median(times):.0f} ms "
                  f"(min {min(times):.0f}, max {max(times):.0f}, {args.runs} runs; target under 1000 ms)")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
