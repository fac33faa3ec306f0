#!/usr/bin/env python3
"""`make bench`: how fast the machine runs just now, at the start of the bench and at its end.

Many goals are times on two cores the machine shares with others, and the same build's
figures move with the machine: on one day `queue --state failed` took 66 ms of CPU in
one `make bench` and 105 ms in the next, with nothing changed in between. A fixed piece of
work, timed here before and after, lets a reader of BENCHMARKS.md tell a slow machine from a
slow build:

- a Python loop of three million multiply-adds (the interpreter: branches, integers), its
  CPU time;
- SHA-256 of 512 MiB held in memory (OpenSSL through hashlib), MB/s of CPU time;
- the CPU time the host took from this machine so far (`steal` in /proc/stat), so that
  bench_report.py can tell how much was taken during the bench.

Each piece runs three times; the median is kept.

    .venv/bin/python scripts/bench_machine.py --json bench/out/machine-start.json
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import CLK_TCK, machine_ticks, save_json  # noqa: E402


def loop_seconds() -> float:
    started = time.process_time()
    total = 0
    for i in range(3_000_000):
        total += i * i
    return time.process_time() - started


def sha256_mb_per_s() -> float:
    block = os.urandom(16 << 20)
    digest = hashlib.sha256()
    started = time.process_time()
    for _ in range(32):
        digest.update(block)
    return 32 * len(block) / 1e6 / (time.process_time() - started)


def steal_seconds() -> float:
    """CPU time the host took from this machine since it started, all cores."""
    return machine_ticks()[7] / CLK_TCK


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write the figures to this file as well")
    args = parser.parse_args()
    figures = {"time": time.time(), "loop_s": statistics.median(loop_seconds() for _ in range(3)),
               "sha256_mb_per_s": statistics.median(sha256_mb_per_s() for _ in range(3)), "steal_s": steal_seconds()}
    print(f"machine: a fixed Python loop in {figures['loop_s']:.3f} s of CPU, SHA-256 in memory at "
          f"{figures['sha256_mb_per_s']:.0f} MB/s of CPU")
    if args.json:
        save_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
