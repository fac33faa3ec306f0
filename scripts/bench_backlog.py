#!/usr/bin/env python3
"""`make bench`: a long queue must cost nothing per file.

A folder of tiny photos is queued with `upload` while no agent runs (as a first
`--existing` on a photo library would be), then the agent is started and timed over its
first MEASURE completions: files per second, and the agent's CPU time per file (every
thread's, the ended transfers' included, from /proc/PID/stat). Done for a short backlog and a long one; the
long one's rate should be at least 0.9x the short one's, and each file should cost at most
3 ms of agent CPU either way. Then a watch rule's photos queued behind 50,000 that a
Wi-Fi-only rule holds, against the same photos alone: the held ones must cost nothing per
photo that goes meanwhile (0.9x as well). Last, 20,000 photos queued for a server that is
gone while the network is up: the agent must wait for it, not try it with each photo in
turn (at most 1% of a core); and as many for a server that answers every upload "busy, try
again in 5 s" (429 with Retry-After): the agent must sleep through each wait.

Everything runs in a private XDG home in a temporary folder, against a plain WebDAV server
on loopback (Apache httpd with mod_dav, as the tests start it; the busy server is the
reference server's tus face, whose faults answer 429). Timings are figures to read, not asserts.

    .venv/bin/python scripts/bench_backlog.py [--bin .build/release] [--small 2000]
                                              [--large 200000] [--measure 2000] [--held 50000] [--gone 20000]
                                              [--busy 20000]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_watch import PASSWORD, REPO, USER, Scene, photo, tally  # noqa: E402
from bench import in_turn, peak_rss_mb, save_json  # noqa: E402

RATE_GOAL = 0.9
CPU_GOAL_MS = 3.0
GONE_CPU_GOAL = 0.01


def start_apache(scene: Scene) -> tuple[subprocess.Popen, str]:
    """Apache httpd with mod_dav on loopback, configured in the scene's folder (as the tests
    start it): a plain WebDAV server written by others, which answers faster than the
    reference server, so the agent's own cost shows."""
    folder = f"{scene.home}/apache"
    os.chmod(scene.home, 0o711)  # Apache's children (nobody, when run as root) pass through to www/
    for sub in ("www/Backlog", "lock", "run"):
        os.makedirs(f"{folder}/{sub}", exist_ok=True)
    subprocess.run(["htpasswd", "-c", "-b", "-s", f"{folder}/htpasswd", USER, PASSWORD], check=True, capture_output=True)
    for path, mode in ((folder, 0o755), (f"{folder}/www", 0o777), (f"{folder}/www/Backlog", 0o777), (f"{folder}/lock", 0o777),
                       (f"{folder}/run", 0o777), (f"{folder}/htpasswd", 0o644)):
        os.chmod(path, mode)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    modules = "/usr/lib/apache2/modules"
    loads = "\n".join(f"LoadModule {m}_module {modules}/mod_{m}.so" for m in
                      ("mpm_event", "authz_core", "authz_user", "authn_core", "authn_file", "auth_basic", "dav", "dav_fs"))
    user = "User nobody\nGroup nogroup\n" if os.getuid() == 0 else ""
    with open(f"{folder}/httpd.conf", "w") as f:
        f.write(f"""ServerRoot "{folder}"
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile "{folder}/run/httpd.pid"
DefaultRuntimeDir "{folder}/run"
ErrorLog "{folder}/error.log"
LogLevel warn
CustomLog "{folder}/access.log" "%m %U %>s"
{user}{loads}
DavLockDB "{folder}/lock/DavLock"
DocumentRoot "{folder}/www"
<Directory "{folder}/www">
    Dav On
    AuthType Basic
    AuthName "instant-upload bench"
    AuthUserFile "{folder}/htpasswd"
    Require valid-user
</Directory>
""")
    proc = subprocess.Popen(["/usr/sbin/apache2", "-f", f"{folder}/httpd.conf", "-DFOREGROUND"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Apache did not start; see {folder}/error.log")
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}/"


@contextlib.contextmanager
def apache_scene(binary: str) -> Iterator[tuple[Scene, subprocess.Popen]]:
    """A private scene with an account on Apache; both are taken down when done, Apache
    unless it was stopped already."""
    scene = Scene(binary)
    apache = None
    try:
        apache, url = start_apache(scene)
        added = scene.cli("account", "add", url, "--user", USER, "--name", "apache", "--allow-insecure-http", "--password-stdin",
                          stdin=PASSWORD + "\n", check=False)
        if added.returncode != 0:
            raise RuntimeError(f"account add failed: {added.stdout} {added.stderr}")
        yield scene, apache
    finally:
        if apache and apache.poll() is None:
            apache.terminate()
            apache.wait(10)
        scene.close()


def make_photos(folder: str, count: int, tag: bytes = b"") -> None:
    """`count` tiny photos, a thousand per subfolder, each different (its number and `tag`)."""
    jpeg = photo("2024:03:15 10:00:00", "")
    for d in range((count + 999) // 1000):
        os.makedirs(f"{folder}/{d:03d}", exist_ok=True)
    for i in range(count):
        with open(f"{folder}/{i // 1000:03d}/IMG_{i:06d}.jpg", "wb") as f:
            f.write(jpeg + i.to_bytes(4, "big") + tag)


def requests_so_far(scene: Scene) -> int:
    """Requests Apache has answered (its access log, one line each)."""
    try:
        with open(f"{scene.home}/apache/access.log", "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def completed(db: sqlite3.Connection) -> int:
    return tally(db, "completed")


def run(binary: str, backlog: int, measure: int, profile: str | None = None) -> dict:
    with apache_scene(binary) as (scene, _):
        folder = f"{scene.home}/Library"
        made = time.monotonic()
        make_photos(folder, backlog)
        made = time.monotonic() - made
        queued = time.monotonic()
        out = scene.cli("upload", folder, "--to", "/Backlog")
        queued = time.monotonic() - queued
        # The photos and the queue on the disk before the agent starts: otherwise the kernel
        # writes back the long backlog's 200,000 new files and its queue (the short one's are
        # a hundredth of that) on the same two cores while the agent is timed.
        os.sync()
        db = scene.queue()
        rows = tally(db, "queued")
        if rows != backlog:
            raise RuntimeError(f"{rows} rows queued, expected {backlog}: {out.stdout} {out.stderr}")
        measure = min(measure, backlog)
        started = scene.start_agent()
        cpu0 = scene.cpu_seconds()
        perf = None
        if profile:
            perf = subprocess.Popen(["perf", "record", "-g", "-o", profile, "-p", str(scene.agent.pid)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        first = None
        deadline = time.monotonic() + 1800
        while True:
            done = completed(db)
            if first is None and done > 0:
                # Timed from the first completion, so the agent's start and the first
                # connections are not counted against the rate.
                first, first_done, first_cpu = time.monotonic(), done, scene.cpu_seconds()
                first_requests = requests_so_far(scene)
            if done >= measure:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {done} of {measure} completed in 30 minutes; see {scene.home}/agent.log")
            time.sleep(0.05)
        end, cpu1 = time.monotonic(), scene.cpu_seconds()
        # The most the agent held since it started: the long queue loaded, then 2,000 sent.
        peak_mb = peak_rss_mb(scene.agent.pid)
        last_requests = requests_so_far(scene)
        if perf:
            perf.send_signal(2)
            perf.wait(60)
        failed = tally(db, "failed")
        db.close()
        files = done - first_done
        return {
            "backlog": backlog, "made_s": made, "queued_s": queued, "measured_files": files,
            "files_per_s": files / (end - first), "cpu_ms_per_file": (cpu1 - first_cpu) / files * 1000,
            "requests_per_file": (last_requests - first_requests) / files,
            "start_s": first - started, "start_cpu_s": first_cpu - cpu0, "failed": failed, "peak_rss_mb": peak_mb,
        }


def run_behind_held(binary: str, held: int, measure: int) -> dict:
    """Photos of one watch rule queued behind `held` photos of a Wi-Fi-only rule, which wait
    (the scene's sysfs shows no wireless interface): files/s and agent CPU per file over the
    free rule's photos, timed from its first completion. With `held` 0, the same rule alone."""
    with apache_scene(binary) as (scene, _):
        os.makedirs(f"{scene.home}/sysfs/class/net")
        with open(f"{scene.home}/config/instant-upload/config.ini", "a") as f:
            f.write(f"\n[network]\nsysfs_root = {scene.home}/sysfs\n")
        for name, count in (("Held", held), ("Free", measure)):
            make_photos(f"{scene.home}/{name}", count, name.encode())
        os.sync()
        scene.start_agent()
        db = scene.queue()
        deadline = time.monotonic() + 600
        if held:
            scene.cli("watch", "add", f"{scene.home}/Held", "--to", "/Backlog/Held", "--existing", "--wifi-only", "--name", "held")
            while tally(db, "queued") < held:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"only {tally(db, 'queued')} of {held} queued by the held rule; see {scene.home}/agent.log")
                time.sleep(0.2)
        if completed(db):
            raise RuntimeError(f"the Wi-Fi-only rule's photos went; see {scene.home}/agent.log")
        scene.cli("watch", "add", f"{scene.home}/Free", "--to", "/Backlog/Free", "--existing", "--name", "free")
        first = None
        while (done := completed(db)) < measure:
            if first is None and done > 0:
                first, first_done, first_cpu = time.monotonic(), done, scene.cpu_seconds()
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {done} of {measure} completed; see {scene.home}/agent.log")
            time.sleep(0.05)
        end, cpu = time.monotonic(), scene.cpu_seconds()
        db.close()
        files = done - first_done
        return {"held": held, "measured_files": files, "files_per_s": files / (end - first),
                "cpu_ms_per_file": (cpu - first_cpu) / files * 1000}


def at_rest(scene: Scene, backlog: int, seconds: float, to: str) -> dict:
    """`backlog` photos queued to `to` on the scene's account, whose server cannot take them:
    the agent's CPU over `seconds` once it started and made its first tries, and how many
    photos tried the server meanwhile."""
    folder = f"{scene.home}/Library"
    make_photos(folder, backlog)
    scene.cli("upload", folder, "--to", to)
    os.sync()
    scene.start_agent()
    time.sleep(2)  # its start, and the first tries
    cpu = scene.cpu_seconds()
    time.sleep(seconds)
    cpu = scene.cpu_seconds() - cpu
    db = scene.queue()
    tried = db.execute("SELECT count(*) FROM transfers WHERE attempts > 0").fetchone()[0]
    db.close()
    return {"backlog": backlog, "seconds": seconds, "cpu_share": cpu / seconds, "tried": tried}


def run_server_gone(binary: str, backlog: int, seconds: float) -> dict:
    """`backlog` photos queued for a server that is gone (Apache stopped after the account was
    added, so every connection is refused) while the network is up. The failed ones try again
    with their backoff; the rest must wait without trying it in turn."""
    with apache_scene(binary) as (scene, apache):
        apache.terminate()
        apache.wait(10)
        return at_rest(scene, backlog, seconds, "/Backlog")


def run_server_busy(binary: str, backlog: int, seconds: float) -> dict:
    """`backlog` photos queued for a server that answers every upload 429 with `Retry-After:
    5`. Its files wait out each Retry-After; none of it is the agent's work."""
    scene = Scene(binary)
    try:
        scene.start_server()
        for method in ("POST", "PATCH"):
            fault = {"method": method, "status": 429, "headers": {"Retry-After": "5"}, "body": "slow down", "count": 10**9}
            urllib.request.urlopen(urllib.request.Request(f"{scene.server_url}/_control/faults", data=json.dumps(fault).encode(),
                                                          method="POST", headers={"Content-Type": "application/json"}), timeout=10).read()
        return at_rest(scene, backlog, seconds, "/Photos")
    finally:
        scene.close()


def median_round(pair: tuple[int, int], rounds: int, run_one) -> tuple[float, list[float], dict, dict]:
    """`run_one` of both of `pair` in each of `rounds`, taking turns at going first (`in_turn`),
    and the ratio of the second's files/s to the first's in each round: the median ratio, every
    round's ratio, and the two results of the round that gave the median."""
    measured = []
    for n in range(rounds):
        results = {x: run_one(x) for x in in_turn(pair, n)}
        first, second = results[pair[0]], results[pair[1]]
        measured.append((second["files_per_s"] / first["files_per_s"], first, second))
    ratio, first, second = sorted(measured, key=lambda m: m[0])[len(measured) // 2]
    return ratio, [m[0] for m in measured], first, second


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--small", type=int, default=2000)
    parser.add_argument("--large", type=int, default=200_000)
    parser.add_argument("--measure", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3,
                        help="pairs of runs (short and long backlog; alone and behind held photos); the median ratio is reported")
    parser.add_argument("--gone", type=int, default=20_000,
                        help="photos queued for a server that is gone, the agent's CPU measured over 30 s (0: not measured)")
    parser.add_argument("--busy", type=int, default=20_000,
                        help="photos queued for a server that answers 429, the agent's CPU measured over 30 s (0: not measured)")
    parser.add_argument("--held", type=int, default=50_000,
                        help="photos a Wi-Fi-only rule holds ahead of another rule's --measure photos (0: not measured)")
    parser.add_argument("--json", help="write the figures to this file as well")
    parser.add_argument("--profile", help="record the agent with `perf record -g` into this file (the long backlog's run)")
    args = parser.parse_args()
    binary = os.path.abspath(os.path.join(REPO, args.bin, "instant-upload"))
    # Each rate is measured over a couple of seconds, so one pair of runs on a shared machine
    # can land on either side of the goal: the pairs are run `--rounds` times, and the round
    # with the median ratio is the one reported. The two runs of a pair take turns at going
    # first: a machine that slows down over the bench (one did, from 729 to 537 files/s for
    # the short backlog over three rounds) would otherwise count against the second each time.
    def run_backlog(backlog: int) -> dict:
        r = run(binary, backlog, args.measure, profile=args.profile if backlog == args.large else None)
        print(f"backlog {backlog:>7,}: {r['files_per_s']:6.1f} files/s, agent CPU {r['cpu_ms_per_file']:.2f} ms per file, "
              f"{r['requests_per_file']:.2f} requests per file, agent peak RSS {r['peak_rss_mb']:.1f} MB "
              f"(first {r['measured_files']:,} completions; files made in {r['made_s']:.1f} s, queued by `upload` in "
              f"{r['queued_s']:.1f} s, agent start to first completion {r['start_s']:.2f} s and {r['start_cpu_s']:.2f} s CPU; "
              f"{r['failed']} failed)")
        return r

    ratio, ratios, small, large = median_round((args.small, args.large), args.rounds, run_backlog)
    cpu = max(small["cpu_ms_per_file"], large["cpu_ms_per_file"])
    print(f"backlog: {large['backlog']:,} queued runs at {ratio:.2f}x the rate of {small['backlog']:,} queued "
          f"(median of {len(ratios)} rounds: {', '.join(f'{x:.2f}x' for x in ratios)}; goal >= {RATE_GOAL}): "
          f"{'PASS' if ratio >= RATE_GOAL else 'MISS'}")
    print(f"backlog: at most {cpu:.2f} ms of agent CPU per small file (goal <= {CPU_GOAL_MS} ms): "
          f"{'PASS' if cpu <= CPU_GOAL_MS else 'MISS'}")
    figures = {"runs": [small, large], "rate_ratio": ratio, "rate_ratios": ratios, "cpu_ms_per_file": cpu}
    if args.held:
        # Photos waiting for Wi-Fi ahead of another rule's: the scheduler must not read past
        # them for each photo that goes meanwhile. In rounds as above: the same rule alone did
        # 414 to 546 files/s in three runs in a row.
        def run_held(held: int) -> dict:
            r = run_behind_held(binary, held, args.measure)
            print(f"behind {r['held']:>6,} held: {r['files_per_s']:6.1f} files/s, agent CPU {r['cpu_ms_per_file']:.2f} ms per file "
                  f"(a watch rule's {r['measured_files']:,} photos)")
            return r

        held_ratio, held_ratios, alone, behind = median_round((0, args.held), args.rounds, run_held)
        figures["behind_held"] = {"alone": alone, "behind": behind, "rate_ratio": held_ratio, "rate_ratios": held_ratios}
        print(f"backlog: a rule's photos behind {args.held:,} a Wi-Fi-only rule holds go at {held_ratio:.2f}x their rate alone "
              f"(median of {len(held_ratios)} rounds: {', '.join(f'{x:.2f}x' for x in held_ratios)}; goal >= {RATE_GOAL}): "
              f"{'PASS' if held_ratio >= RATE_GOAL else 'MISS'}")
    for key, count, run_scene, server in (("server_gone", args.gone, run_server_gone, "a server that is gone"),
                                          ("server_busy", args.busy, run_server_busy, "a server that answers 429 (Retry-After: 5)")):
        if not count:
            continue
        r = figures[key] = run_scene(binary, count, 30)
        print(f"backlog: {r['backlog']:,} queued for {server}: the agent uses {r['cpu_share'] * 100:.2f}% of a core "
              f"over {r['seconds']:.0f} s, {r['tried']:,} photos tried it (goal <= {GONE_CPU_GOAL * 100:.0f}% of a core): "
              f"{'PASS' if r['cpu_share'] <= GONE_CPU_GOAL else 'MISS'}")
    if args.json:
        save_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
