#!/usr/bin/env python3
"""Writes BENCHMARKS.md from the figures `make bench` just measured.

It reads what each benchmark wrote into bench/out/ (bench.py: latest.json,
bench_queue.py: queue.json, bench_backlog.py: backlog.json, bench_batch.py: batch.json and
batch-among.json, bench_tray.py: tray.json) and the programs `make dist` and `make deb`
left, and lists every goal with PASS, MISS, or "not measured" when the figure is missing
(a benchmark that was not run, or a measurement not written yet).

    .venv/bin/python scripts/bench_report.py [--out BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import glob
import json
import lzma
import os
import platform
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "bench", "out")


def load(name: str) -> dict | None:
    try:
        with open(os.path.join(OUT, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def machine() -> list[str]:
    model, flags = "?", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "?":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    memory = "?"
    try:
        with open("/proc/meminfo") as f:
            memory = f"{int(f.readline().split()[1]) / 1e6:.1f} GB"
    except (OSError, ValueError, IndexError):
        pass
    return [f"- {os.cpu_count()} cores: {model}",
            f"- SHA-256 instructions (sha_ni): {'present' if 'sha_ni' in flags else 'absent'}",
            f"- memory {memory}; Linux {platform.release()} ({platform.machine()})"] + machine_speed()


def machine_speed() -> list[str]:
    """The machine's speed at the start of the bench and at its end (bench_machine.py), when
    both were measured in this run; the cores are shared, and every timed goal moves with it."""
    start, end = load("machine-start.json"), load("machine-end.json")
    if not start or not end or not start["time"] < end["time"] < start["time"] + 6 * 3600:
        return ["- its speed during the run: not measured (scripts/bench_machine.py at the start and the end of make bench)"]
    return [f"- its speed, the same fixed work timed at the start of the run and at its end (scripts/bench_machine.py): "
            f"a Python loop in {start['loop_s']:.3f} and {end['loop_s']:.3f} s of CPU, SHA-256 in memory at "
            f"{start['sha256_mb_per_s']:.0f} and {end['sha256_mb_per_s']:.0f} MB/s; the host took "
            f"{end['steal_s'] - start['steal_s']:.1f} s of CPU time from it over the "
            f"{(end['time'] - start['time']) / 60:.0f} minutes between (steal)"]


class Goals:
    def __init__(self):
        self.rows: list[tuple[str, str, str, str]] = []
        # What this run measured about a goal (a memory map, a profile), told beside a MISS.
        self.found: dict[str, str] = {}

    def add(self, goal: str, measured: str | None, ok: bool | None, command: str, found: str | None = None):
        verdict = "not measured" if measured is None else ("PASS" if ok else "MISS")
        self.rows.append((goal, measured or "-", verdict, f"`{command}`"))
        if found:
            self.found[goal] = found

    def table(self) -> list[str]:
        lines = ["| goal | measured | verdict | command |", "|---|---|---|---|"]
        lines += [f"| {g} | {m} | {v} | {c} |" for g, m, v, c in self.rows]
        return lines


def bench_goals(goals: Goals, bench: dict | None) -> list[str]:
    """Goals from bench.py's figures: memory, the sink, downloads."""
    command = "make bench (scripts/bench.py)"
    if not bench:
        for goal in ("agent peak RSS < 20 MB while uploading 1 and 4 GiB", "download <= 1.2x `curl -o` + `sync`",
                     "upload into the sink >= 0.95x the lower of curl's and `openssl dgst -sha256`'s rate"):
            goals.add(goal, None, None, command)
        return []
    medians = {c["key"]: c.get("median") for c in bench["clients"] if c.get("median")}
    sinks = [m for k, m in medians.items() if k.startswith("sink-agent")]
    if sinks:
        worst = max(m["rss_mb_max"] for m in sinks)
        goals.add("agent peak RSS < 20 MB while uploading 1 and 4 GiB", f"{worst:.1f} MB", worst < 20, command,
                  found=memory_words(bench))
    else:
        goals.add("agent peak RSS < 20 MB while uploading 1 and 4 GiB", None, None, command)
    da, dc, ds = medians.get("dl-agent"), medians.get("dl-curl"), medians.get("dl-curl-sync")
    if da and ds:
        ratio = da["wall_s"] / ds["wall_s"]
        plain = f"; {da['wall_s'] / dc['wall_s']:.2f}x plain `curl -o`" if dc else ""
        goals.add("download <= 1.2x `curl -o` + `sync`", f"{ratio:.2f}x{plain}", ratio <= 1.2, command)
    elif da and dc:
        ratio = da["wall_s"] / dc["wall_s"]
        goals.add("download <= 1.2x `curl -o` + `sync` (here: against `curl -o` alone)", f"{ratio:.2f}x", ratio <= 1.2, command)
    else:
        goals.add("download <= 1.2x `curl -o` + `sync`", None, None, command)
    sa, sc, sha = medians.get("sink-agent-16") or medians.get("sink-agent-64"), medians.get("sink-curl"), medians.get("sha-openssl")
    if sa and sc and sha and sa.get("mb_per_s") and sc.get("mb_per_s") and sha.get("mb_per_s"):
        floor = min(sc["mb_per_s"], sha["mb_per_s"])
        goals.add("upload into the sink >= 0.95x the lower of curl's and `openssl dgst -sha256`'s rate",
                  f"{sa['mb_per_s']:.0f} MB/s vs {floor:.0f} MB/s ({sa['mb_per_s'] / floor:.2f}x)", sa["mb_per_s"] >= 0.95 * floor, command,
                  found=sink_rounds_words(bench))
    else:
        goals.add("upload into the sink >= 0.95x the lower of curl's and `openssl dgst -sha256`'s rate", None, None, command)
    return [f"- {'no target:' if t['status'] == '-' else t['status']} {t['text']}" for t in bench.get("targets", [])] + [f"- note: {n}" for n in bench.get("notes", [])]


def queue_goals(goals: Goals, queue: dict | None) -> list[str]:
    command = "make bench (scripts/bench_queue.py)"
    wanted = [("--help (no database)", "`--help` < 10 ms", False),
              ("status", "`status` < 25 ms at 100,000 rows, with an agent running and without", True),
              ("queue --state failed", "`queue --state failed` < 100 ms at 100,000 rows, with an agent running and without", True)]
    by_label = {c["label"]: c for c in (queue or {}).get("commands", [])}
    for label, goal, both in wanted:
        c = by_label.get(label)
        target = (c or {}).get("target_ms")
        running = (c or {}).get("agent_running")
        if c and target and (running or not both):
            text = f"{c['median']:.1f} ms (median; CPU {c['cpu']:.1f} ms)"
            met = c["median"] < target
            if both:
                text = (f"{c['median']:.1f} ms without an agent, {running['median']:.1f} ms with one running "
                        f"(medians; CPU {c['cpu']:.1f} and {running['cpu']:.1f} ms)")
                met = met and running["median"] < target
            goals.add(goal, text, met, command)
        else:
            goals.add(goal, None, None, command)
    def peak(c: dict) -> str:
        return f", peak RSS {c['peak_rss_mb']:.1f} MB" if "peak_rss_mb" in c else ""
    lines = [f"- {c['label']}: median {c['median']:.1f} ms, CPU {c['cpu']:.1f} ms{peak(c)}, {c['bytes']:,} bytes out"
             + (f"; with an agent running: median {c['agent_running']['median']:.1f} ms, CPU {c['agent_running']['cpu']:.1f} ms"
                + peak(c["agent_running"]) if c.get("agent_running") else "")
             for c in by_label.values()]
    memory = (queue or {}).get("agent_memory_kib")
    if memory:
        lines.append(f"- the idle agent on this queue (paused): {memory['VmRSS'] / 1024:.1f} MB resident "
                     f"({memory['RssAnon'] / 1024:.1f} MB anonymous), at most {memory['VmHWM'] / 1024:.1f} MB since it started")
    return lines


def backlog_goals(goals: Goals, backlog: dict | None) -> list[str]:
    command = "make bench (scripts/bench_backlog.py)"
    if not backlog:
        goals.add("200,000 queued: >= 0.9x the files/s of 2,000 queued", None, None, command)
        goals.add("<= 3 ms of agent CPU per small file", None, None, command)
        return []
    small, large = backlog["runs"]
    goals.add(f"{large['backlog']:,} queued: >= 0.9x the files/s of {small['backlog']:,} queued",
              f"{backlog['rate_ratio']:.2f}x ({large['files_per_s']:.0f} vs {small['files_per_s']:.0f} files/s"
              + (f"; median of {', '.join(f'{x:.2f}x' for x in backlog['rate_ratios'])}" if backlog.get("rate_ratios") else "") + ")",
              backlog["rate_ratio"] >= 0.9, command)
    goals.add("<= 3 ms of agent CPU per small file", f"{backlog['cpu_ms_per_file']:.2f} ms", backlog["cpu_ms_per_file"] <= 3, command)
    per_file = [r["requests_per_file"] for r in backlog["runs"] if "requests_per_file" in r]
    if per_file:
        goals.add("<= 3 requests per new file (Apache mod_dav, tiny photos)", f"{max(per_file):.2f}", max(per_file) <= 3, command)
    held = backlog.get("behind_held")
    lines = []
    if held:
        alone, behind = held["alone"], held["behind"]
        goals.add(f"a rule's photos behind {behind['held']:,} held for Wi-Fi: >= 0.9x their files/s alone",
                  f"{held['rate_ratio']:.2f}x ({behind['files_per_s']:.0f} vs {alone['files_per_s']:.0f} files/s"
                  + (f"; median of {', '.join(f'{x:.2f}x' for x in held['rate_ratios'])}" if held.get("rate_ratios") else "") + ")",
                  held["rate_ratio"] >= 0.9, command)
        lines = [f"- a watch rule's {r['measured_files']:,} photos " + (f"behind {r['held']:,} a Wi-Fi-only rule holds" if r["held"] else "alone")
                 + f": {r['files_per_s']:.1f} files/s, {r['cpu_ms_per_file']:.2f} ms agent CPU per file" for r in (alone, behind)]
    gone = backlog.get("server_gone")
    if gone:
        goals.add(f"{gone['backlog']:,} queued for a server that is gone: <= 1% of a core",
                  f"{gone['cpu_share'] * 100:.2f}% over {gone['seconds']:.0f} s; {gone['tried']:,} photos tried it",
                  gone["cpu_share"] <= 0.01, command)
    busy = backlog.get("server_busy")
    if busy:
        goals.add(f"{busy['backlog']:,} queued for a server that answers 429 (Retry-After: 5): <= 1% of a core",
                  f"{busy['cpu_share'] * 100:.2f}% over {busy['seconds']:.0f} s; {busy['tried']:,} photos tried it",
                  busy["cpu_share"] <= 0.01, command)
    return [f"- {r['backlog']:,} queued: {r['files_per_s']:.1f} files/s, {r['cpu_ms_per_file']:.2f} ms agent CPU per file"
            + (f", {r['requests_per_file']:.2f} requests per file" if "requests_per_file" in r else "")
            + (f", the agent's peak RSS {r['peak_rss_mb']:.1f} MB" if "peak_rss_mb" in r else "")
            + f" over {r['measured_files']:,} completions (Apache mod_dav on loopback)"
            + (f"; from the agent's start to its first completion {r['start_s']:.2f} s and {r['start_cpu_s']:.2f} s of CPU"
               if "start_cpu_s" in r else "") for r in backlog["runs"]] + lines


def sink_rounds_words(bench: dict) -> str | None:
    """Each round's rate of the agent into the sink and of openssl, in the order run, with
    what the rest of the machine took meanwhile: the goal compares medians of runs that
    each last under a second."""
    clients = {c["key"]: c for c in bench["clients"]}
    runs = {}
    for key in ("sink-agent-16", "sink-agent-64", "sha-openssl", "sink-curl"):
        client = clients.get(key)
        if client and client.get("runs"):
            runs[key] = [(client["size"] / r["wall_s"] / 1e6, r.get("other_load_cores", 0.0)) for r in client["runs"] if r.get("wall_s")]
    agent = runs.get("sink-agent-16") or runs.get("sink-agent-64")
    if not agent or not runs.get("sha-openssl"):
        return None
    def listed(figures):
        return ", ".join(f"{rate:.0f} ({load:.2f})" for rate, load in figures)
    words = (f"Each round in this run, MB/s (and the cores the rest of the machine took meanwhile): the agent "
             f"{listed(agent)}; openssl {listed(runs['sha-openssl'])}")
    if runs.get("sink-curl"):
        words += f"; curl {listed(runs['sink-curl'])}"
    words += "."
    large, openssl = clients.get("sink-agent-large"), clients.get("sha-openssl")
    if large and large.get("median") and openssl and openssl.get("median"):
        rate, floor = large["median"]["mb_per_s"], openssl["median"]["mb_per_s"]
        words += (f" The same upload of the {large['size'] / 2**30:.0f} GiB file, which lasts long enough to even "
                  f"out what the rest of the machine does: {rate:.0f} MB/s, {rate / floor:.2f}x openssl's rate over the smaller one.")
        # The large upload is sent with the default chunks, as this one.
        small = clients.get("sink-agent-16")
        if small and small.get("median") and large["size"] > small["size"]:
            # Each run times the whole `run --until-idle`: a part the same for any size, and one per byte.
            per_byte = (large["median"]["wall_s"] - small["median"]["wall_s"]) / (large["size"] - small["size"])
            fixed = small["median"]["wall_s"] - per_byte * small["size"]
            if per_byte > 0 and fixed > 0:
                words += (f" Taken apart from the two sizes, each of the agent's runs spends about {fixed * 1000:.0f} ms on what "
                          f"any upload costs once (starting the agent, opening the queue, creating the upload on the "
                          f"server, recording its end, exiting), and sends at {1 / per_byte / 1e6:.0f} MB/s, "
                          f"{1 / per_byte / 1e6 / floor:.2f}x openssl's rate (whose own start, a few ms, stays in "
                          f"its figure), between.")
    return words


def memory_words(bench: dict) -> str | None:
    """Where the agent's memory was at the peak of its largest upload into the sink, from the
    map bench.py kept (/proc/PID/smaps when the RSS sampled was highest)."""
    for key in ("sink-agent-large", "sink-agent-16", "sink-agent-64"):
        client = next((c for c in bench["clients"] if c["key"] == key), None)
        maps = [r["peak_map"] for r in (client or {}).get("runs", []) if r.get("peak_map")]
        if maps:
            peak = max(maps, key=lambda m: m["rss_kib"])
            parts = ", ".join(f"{what} {kib / 1000:.1f} MB" for what, kib in peak["groups"].items())
            largest = ", ".join(f"{name} {kib / 1000:.1f}" for name, kib in peak["largest"])
            return (f"Measured in this run, at the highest RSS sampled during the agent's {size_words(client['size'])} "
                    f"upload ({peak['rss_kib'] / 1000:.1f} MB, /proc/PID/smaps): {parts}. Largest (MB): {largest}.")
    return None


def size_words(size: int) -> str:
    return f"{size / 2**30:.0f} GiB" if size >= 2**30 else f"{size / 2**20:.0f} MiB"


def profile_libraries(profile: dict) -> str:
    """A batch's profile (bench_batch.py, perf record) in one line: the agent's CPU by library,
    the busiest first; or why there is none."""
    if "missing" in profile:
        return f"no profile in this run: {profile['missing']}"
    return ", ".join(f"{name} {pct:.0f}%" for pct, name in profile["by_library"])


def profile_parts(profile: dict) -> str:
    """The agent's CPU by part (bench_batch.py's PARTS), the largest first."""
    return ", ".join(f"{name} {pct:.0f}%" for pct, name in profile.get("by_part", [])) or "not measured"


def profile_words(profile: dict | None) -> str | None:
    """The agent's profile of a batch, for a missed goal: shares by library, busiest functions."""
    if not profile:
        return None
    if "missing" in profile:
        return profile_libraries(profile).capitalize() + "."
    functions = "; ".join(f"{symbol} ({library}) {pct:.1f}%" for pct, library, symbol in profile["functions"][:8])
    return (f"Measured in this run (perf record on the agent, the same photos sent again): the agent's CPU by part: {profile_parts(profile)}. "
            f"By library: {profile_libraries(profile)}. Busiest functions: {functions}.")


def cpu_words(tools: dict) -> str | None:
    """A batch's CPU per file on each side, agent against the floor: the client and the server
    share the machine's cores, so the rate follows the sum."""
    agent, floor = tools["agent"], tools["curl"]
    if "server_cpu_ms_per_file" not in agent or "server_cpu_ms_per_file" not in floor:
        return None
    a, sa, c, sc = agent["cpu_ms_per_file"], agent["server_cpu_ms_per_file"], floor["cpu_ms_per_file"], floor["server_cpu_ms_per_file"]
    return (f"CPU per file in this run (medians): the agent {a:.2f} ms and the server {sa:.2f} ms for its requests "
            f"({agent['requests_per_file']:.0f} per file), against curl {c:.2f} ms and the server {sc:.2f} ms for the floor's "
            f"one; client and server share the "
            f"machine's cores, so the rate follows the sums ({a + sa:.2f} against {c + sc:.2f} ms).{server_bound(sa, c, c + sc)}")


# A batch's goal: the agent within this factor of the curl floor's files/s.
BATCH_FLOOR_FACTOR = 1.3


def server_bound(server: float, curl: float, floor: float) -> str:
    """Where the server's own work for the agent's requests, with no more CPU on the agent's
    side than curl spends, is more than the goal allows the whole of each file: then no agent
    sending those requests could meet it, however lean (curl keeps no record and takes no hash)."""
    if server + curl <= floor * BATCH_FLOOR_FACTOR:
        return ""
    return (f" Even an agent that spent no more CPU than curl would stay short: the server's CPU for its requests "
            f"and curl's own come to {server + curl:.2f} ms, more than {BATCH_FLOOR_FACTOR} times the floor's "
            f"{floor:.2f} ms, so at most about {floor / (server + curl):.2f}x of the floor.")


def batch_goals(goals: Goals, batch: dict | None) -> list[str]:
    command = "make bench (scripts/bench_batch.py)"
    runs = (batch or {}).get("runs", [])
    if not runs:
        goals.add(f"a card's photos: files/s >= rclone's and >= 1/{BATCH_FLOOR_FACTOR} of the curl floor; <= 3 requests per new file",
                  None, None, command)
        return []
    lines = []
    for r in runs:
        t = r["tools"]
        agent, rclone, floor = t["agent"], t["rclone"], t["curl"]
        what = f"{r['files']:,} x {r['size'] // 1000} kB to {r['server']}"
        goals.add(f"{what}: files/s >= rclone's and >= 1/{BATCH_FLOOR_FACTOR} of the curl floor",
                  f"{agent['files_per_s']:.0f} vs rclone {rclone['files_per_s']:.0f} ({agent['files_per_s'] / rclone['files_per_s']:.2f}x), "
                  f"floor {floor['files_per_s']:.0f} ({agent['files_per_s'] / floor['files_per_s']:.2f}x)"
                  + (f", medians of {r['rounds']} runs each" if r.get("rounds", 1) > 1 else ""),
                  agent["files_per_s"] >= rclone["files_per_s"] and agent["files_per_s"] >= floor["files_per_s"] / BATCH_FLOOR_FACTOR, command,
                  found=" ".join(w for w in (cpu_words(t), profile_words(agent.get("profile"))) if w) or None)
        goals.add(f"{what}: <= 3 requests per new file (and up to 4 per folder)",
                  f"{agent['requests_per_file']:.3f} ({agent['requests']:,} for {r['files']:,} files)",
                  agent["requests"] <= 3 * r["files"] + 4, command)
        for tool, f in t.items():
            server = f", the server's CPU {f['server_cpu_ms_per_file']:.2f} ms per file" if "server_cpu_ms_per_file" in f else ""
            each = f.get("runs", [])
            runs = (f"; medians of {len(each)} runs, which did " + ", ".join(f"{x['files_per_s']:.0f}" for x in each)
                    + " files/s (the server's CPU " + ", ".join(f"{x['server_cpu_ms_per_file']:.2f}" for x in each) + " ms per file)"
                    if len(each) > 1 else "")
            rss = f", peak RSS {f['peak_rss_mb']:.1f} MB" if "peak_rss_mb" in f else ""
            lines.append(f"- {what}, {tool}: {f['files_per_s']:.1f} files/s ({f['seconds']:.1f} s), {f['requests_per_file']:.2f} requests "
                         f"per file, CPU {f['cpu_ms_per_file']:.2f} ms per file{rss}{server}{runs}")
    return lines


def among_lines(batch: dict | None) -> list[str]:
    """Photos into a folder that already holds many files (bench_batch.py --among): what the
    agent's listing of it costs. No goal of the issue is set on it."""
    lines = []
    for r in (batch or {}).get("runs", []):
        for tool, f in r["tools"].items():
            lines.append(f"- {r['files']:,} x {r['size'] // 1000} kB to {r['server']}, into a folder of {r['among']:,} files, {tool}: "
                         f"{f['files_per_s']:.1f} files/s ({f['seconds']:.1f} s), {f['requests_per_file']:.2f} requests per file, "
                         f"CPU {f['cpu_ms_per_file']:.2f} ms per file (most of it the folder's listing), peak RSS {f['peak_rss_mb']:.1f} MB")
    return lines


def tray_goals(goals: Goals, tray: dict | None) -> list[str]:
    command = "make bench (scripts/bench_tray.py)"
    goal = "the status icon at rest for 60 s: no wake-ups, < 10 ms CPU"
    if not tray:
        goals.add(goal, None, None, command)
        return []
    goals.add(goal, f"{tray['wakeups']} wake-ups, {tray['cpu_ms']:.1f} ms CPU over {tray['seconds']:.0f} s",
              tray["wakeups"] == 0 and tray["cpu_ms"] < 10, command)
    return [f"- `instant-upload tray` shown by a panel stand-in beside an idle agent, {tray['seconds']:.0f} s with nothing changing: "
            f"{tray['cpu_ms']:.1f} ms CPU, {tray['wakeups']} wake-ups, RSS {tray['rss_kb'] / 1024:.1f} MB"]


def package_goals(goals: Goals) -> list[str]:
    debs = sorted(glob.glob(os.path.join(REPO, ".build", "deb", "*.deb")), key=os.path.getmtime)
    if not debs:
        goals.add("the package < 10 MB", None, None, "make deb")
        goals.add("the package < 30 MB installed", None, None, "make deb")
        return []
    size = os.path.getsize(debs[-1])
    goals.add("the package < 10 MB", f"{size / 1e6:.1f} MB", size < 10e6, "make deb")
    installed = subprocess.run(["dpkg-deb", "-f", debs[-1], "Installed-Size"], capture_output=True, text=True).stdout.strip()
    if installed.isdigit():
        goals.add("the package < 30 MB installed", f"{int(installed) * 1024 / 1e6:.1f} MB", int(installed) * 1024 < 30e6, "make deb")
    lines = [f"- {os.path.basename(debs[-1])}: {size / 1e6:.1f} MB"]
    # What the program is made of: ICU's data comes with Foundation.
    program = os.path.join(REPO, ".build", "dist", "release", "instant-upload")
    symbols = subprocess.run(["nm", "-S", "--size-sort", program], capture_output=True, text=True).stdout.splitlines()
    icu = [line.split() for line in symbols if line.split()[-1].startswith("icudt")]
    if icu:
        name, address, length = icu[-1][-1], int(icu[-1][0], 16), int(icu[-1][1], 16)
        packed = icu_packed_size(program, address, length)
        lines.append(f"- of the program, ICU's data (`{name}`, linked in with Foundation): {length / 1e6:.1f} MB installed"
                     + (f", {packed / 1e6:.1f} MB of the package (xz, as `dpkg-deb` packs it)" if packed else ""))
    return lines


def icu_packed_size(program: str, address: int, length: int) -> int | None:
    """The ICU data's size once xz has packed it: its bytes found through the section that holds them."""
    sections = subprocess.run(["readelf", "-SW", program], capture_output=True, text=True).stdout
    for line in sections.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) < 6 or not parts[0].startswith("["):
            continue
        try:
            start, offset, size = int(parts[3], 16), int(parts[4], 16), int(parts[5], 16)
        except ValueError:
            continue
        if start <= address < start + size:
            with open(program, "rb") as f:
                f.seek(offset + address - start)
                return len(lzma.compress(f.read(length), preset=6))
    return None


# Where a goal is missed, what the time or the memory goes to, from profiles of this machine
# (perf record --call-graph dwarf; /proc/PID/smaps). Printed only beside a MISS.
WHY_MISSED = {
    "agent peak RSS": (
        "The program's own pages are mostly the Swift runtime, standard library and FoundationEssentials, linked in "
        "statically; the kernel keeps code resident in 64 kB blocks around each page touched, so they follow how "
        "scattered the code that runs is. The functions a profile saw the agent run are laid out first, together, then "
        "those only the commands ran (packaging/hot-functions.txt); our own code has a section per function, but the "
        "standard library keeps much of its code (1.6 MB of it) in one section that moves only as a whole. libcrypto's "
        "share is its relocations and the tables OpenSSL sets up when it starts, whoever starts it (the SHA-256 or "
        "libcurl). libcurl's own libraries (GnuTLS, p11-kit, Kerberos, LDAP, SSH, RTMP) are loaded with it and never "
        "used. Done: packed relocations, 256 KiB hash stages, a 128 KiB upload buffer, GnuTLS's load-time setup "
        "skipped, the hot code laid out together, no symbols exported, libstdc++ linked in, libexif loaded on first "
        "use, OpenSSL's error texts left unloaded, the code start-up ran released once the agent has started, no "
        "library clean-up at exit (30.6 to about 18.5 MB). What is left would take a libcurl built without the "
        "protocols it never uses, or an HTTP/1.1 client of our own on OpenSSL."),
    "upload into the sink": (
        "The agent hashes every byte it sends (the running SHA-256 kept between chunks), on a thread beside the one "
        "that sends, and reads the file once; curl only sends, and openssl only hashes. The agent's figure is the "
        "whole `run --until-idle` process, its start and exit included, which an agent that is already running "
        "does not pay; the sink drops what it receives in the kernel (recv with MSG_TRUNC), so that it takes as "
        "little as it can of the cores it shares with the client it measures. Rounds on this shared "
        "two-core machine spread widely, for curl as for the agent; the agent needs both cores (hashing on one, "
        "sending on the other, beside the sink's receiving), openssl one, so what the rest of the machine takes "
        "slows the agent first."),
    "200,000 queued: >= 0.9x": (
        "Both queues' rates follow the machine's speed in the moment, and they are measured in turns; its speed at "
        "the start and the end of the run is in the header. The agent's CPU per file (the next goal) is the steadier "
        "figure of what a longer queue costs it."),
    "download <= 1.2x": (
        "Runs on this shared two-core machine spread by about 0.15x. The download gathers libcurl's 16 kB pieces into "
        "256 KiB writes, starts each towards the disk behind the write position, and hashes it on the same thread."),
    "to Apache mod_dav: files/s": (
        "Two costs add up on the same two cores. The larger is the agent's own CPU per photo, several times curl's: "
        "the largest part of it is the queue's records that let a photo survive a kill or a power cut (the row taken, its name "
        "claimed, the temporary's name, the bytes the server confirmed, the file about to be made, flushed to the "
        "disk, and the end), which curl does not keep. Then the second request: a PUT to a hidden temporary name and "
        "a MOVE with `Overwrite: F`, so that half a file is never seen under the real name and a file someone saves "
        "there meanwhile is never replaced. The floor sends one unconditional PUT straight to the name, which Apache "
        "would overwrite. A conditional PUT (If-None-Match: *) would be one request, but Apache checks the condition "
        "before the body and renames its temporary file over the name after it, so a file saved during the body "
        "would be replaced; servers that write into the final name (rclone's, wsgidav) would show half a file. "
        "Without checksums from the server, a photo whose record of being made a power cut took back could not be "
        "told from someone else's at its name, so that record is flushed before the MOVE (several commits share one "
        "flush); leaving the flush out did not make 1,000 photos of 300 kB go faster (595-658 against 597-644 "
        "files/s, alternating runs of scripts/bench_batch.py)."),
    "to reference server, Nextcloud face: files/s": (
        "One conditional PUT per file, as Nextcloud's desktop client sends it, on the same two cores as the server. "
        "Per file the agent commits two transactions to its queue (the transfer's record of the file about to be "
        "made, with its name claimed; the scheduler's pass, which records one file's end and the next one's start "
        "together), on one connection whose page cache stays warm, "
        "and hands the transfer to a kept thread and back: the kernel's share is mostly those (the queue's writes and "
        "locks, threads waking) and the socket. No flush to the disk is left on this path: the server keeps each "
        "file's SHA-256, so a file whose record a power cut took back is recognised at its name. The floor is curl "
        "with nothing to record, and the server does less for its PUT: the agent's carries the photo's time "
        "(X-OC-Mtime) and SHA-256 (OC-Checksum), which the server sets and keeps, and a condition it checks. "
        "The server's own CPU per file moves from run to run by up to twice (its kernel time for the files it "
        "writes), for curl's runs as for the agent's, which is why each side is the median of runs taken in turns; "
        "the agent's rounds beside curl's are listed below."),
    "`--help` < 10 ms": (
        "Most of the start is the dynamic loader: relocating and mapping the C libraries (libcurl, whose thirty "
        "libraries were the largest part, is now loaded at the first request)."),
}


def why_missed(goals: Goals) -> list[str]:
    lines = []
    for goal, _, verdict, _ in goals.rows:
        if verdict != "MISS":
            continue
        why = next((text for key, text in WHY_MISSED.items() if key in goal), None)
        said = " ".join(text for text in (goals.found.get(goal), why) if text)
        if said:
            lines.append(f"- **{goal}**: {said}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(REPO, "BENCHMARKS.md"))
    args = parser.parse_args()
    goals = Goals()
    bench = load("latest.json")
    sections = [
        ("Transfers against curl and tuspy (`scripts/bench.py`)", bench_goals(goals, bench)),
        ("`status` and `queue` on 100,000 rows (`scripts/bench_queue.py`)", queue_goals(goals, load("queue.json"))),
        ("A long backlog (`scripts/bench_backlog.py`)", backlog_goals(goals, load("backlog.json"))),
        ("A card's photos beside rclone and curl (`scripts/bench_batch.py`)", batch_goals(goals, load("batch.json"))),
        ("Photos into a folder of many files (`scripts/bench_batch.py --among`)", among_lines(load("batch-among.json"))),
        ("The status icon at rest (`scripts/bench_tray.py`)", tray_goals(goals, load("tray.json"))),
        ("Size", package_goals(goals)),
    ]
    lines = ["# Benchmarks", "",
             "Written by `make bench` (scripts/bench_report.py) from the figures each benchmark last wrote to bench/out/",
             "and the package `make deb` last built; do not edit by hand.",
             f"Measured {(bench or {}).get('time') or time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} on:", ""] + machine()
    lines += ["", "## Goals", ""] + goals.table()
    missed = why_missed(goals)
    if missed:
        lines += ["", "## Where the misses come from", ""] + missed
    for title, body in sections:
        if body:
            lines += ["", f"## {title}", ""] + body
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {os.path.relpath(args.out)}: " + ", ".join(f"{v} {sum(1 for r in goals.rows if r[2] == v)}"
                                                           for v in ("PASS", "MISS", "not measured")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
