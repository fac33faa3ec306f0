#!/usr/bin/env python3
"""Writes packaging/hot-functions.txt: the program's own functions that a day's work runs,
in the order the linker lays them out first (lld `--symbol-ordering-file`, Package.swift).

The kernel maps a program's code in 64 kB blocks around each page it touches, so the code
resident in memory follows how far apart the functions a run needs are, not how many they
are: the Swift runtime, the standard library and FoundationEssentials are linked in whole,
and what the agent uses of them is spread over most of their 11 MB. Laid out together, the
functions that run fill a few blocks.

Which functions run is measured, not guessed: the agent and the commands run under
valgrind's callgrind (every function executed, however rarely), against the reference
server's tus and Nextcloud faces on loopback:

  - `--help`, `--version`, `account add`, `watch add`, `status`, `queue`, `pause`, `resume`;
  - the agent, with settings in its config file, uploading a folder of small photos and one
    file of several chunks to each face, downloading one back, and taking the photos saved
    into a watched folder into date subfolders;
  - the agent stopped by `instant-upload stop`, and `run --until-idle` uploading one file.

The agent's functions come first, then those only the commands ran: the agent, which
stays resident, then touches none of the commands' code between its own. Functions that the
run did not reach keep their place after these. A function missing from
a later build is skipped by the linker without a word, so a stale list costs memory, never
correctness. Regenerate after large changes:

    .venv/bin/python scripts/hot_functions.py --bin .build/programs
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_batch import completed  # noqa: E402
from bench_watch import PASSWORD, REPO, USER, Scene, photo  # noqa: E402

OUT = os.path.join(REPO, "packaging", "hot-functions.txt")


def wrapper(home: str, binary: str, profiles: str) -> str:
    """A program of the same name that runs `binary` under callgrind. valgrind cannot read
    the DWARF 5 the toolchain writes, so it runs a copy without it (the symbols stay)."""
    os.makedirs(f"{home}/stripped")
    stripped = f"{home}/stripped/instant-upload"
    subprocess.run(["strip", "--strip-debug", "-o", stripped, binary], check=True)
    binary = stripped
    folder = f"{home}/wrapped"
    os.makedirs(folder, exist_ok=True)
    path = f"{folder}/instant-upload"
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f"exec valgrind -q --tool=callgrind --callgrind-out-file={profiles}/cg.%p --compress-strings=no "
                f"--compress-pos=no --dump-line=no --dump-instr=no --demangle=no {binary} \"$@\"\n")
    os.chmod(path, stat.S_IRWXU)
    return path


def wait_completed(scene: Scene, count: int, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while completed(scene) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{completed(scene)} of {count} completed; see {scene.home}/agent.log")
        time.sleep(0.5)


def start_server(scene: Scene, face: str) -> str:
    log = open(f"{scene.home}/server-{face}.log", "wb")
    proc = subprocess.Popen([sys.executable, "reference-server/server.py", "--data", f"{scene.home}/server-{face}", "--port", "0",
                             "--user", f"{USER}:{PASSWORD}", "--face", face], stdout=subprocess.PIPE, stderr=log, cwd=REPO,
                            start_new_session=True)
    line = proc.stdout.readline()
    if not line.startswith(b"READY "):
        raise RuntimeError(f"the reference server did not start: {line!r}")
    scene.servers.append(proc)
    return line.split()[1].decode().rstrip("/")


def files(folder: str, sizes: list[int]) -> None:
    os.makedirs(folder, exist_ok=True)
    for i, size in enumerate(sizes):
        with open(f"{folder}/IMG_{i:04}.jpg", "wb") as f:
            f.write(os.urandom(size))


def run(binary: str) -> tuple[set[str], set[str]]:
    """The functions the agent ran, and those only the commands ran."""
    scene = Scene(binary)
    scene.servers = []
    profiles = f"{scene.home}/profiles"
    os.makedirs(profiles)
    scene.binary = wrapper(scene.home, os.path.abspath(binary), profiles)
    try:
        tus = start_server(scene, "tus")
        nextcloud = start_server(scene, "nextcloud")
        for args in (["--help"], ["--version"], ["status"], ["queue"]):
            scene.cli(*args)
        scene.cli("account", "add", "--webdav", f"{tus}/dav/{USER}/", "--tus", f"{tus}/files/", "--user", USER,
                  "--name", "tus", "--password-stdin", stdin=PASSWORD + "\n")
        scene.cli("account", "add", nextcloud, "--user", USER, "--name", "nextcloud", "--allow-insecure-http",
                  "--password-stdin", stdin=PASSWORD + "\n")
        with open(f"{scene.home}/config/instant-upload/config.ini", "a") as f:
            f.write("\n[transfers]\nchunk_size_mb = 16\n")
        files(f"{scene.home}/Card", [30_000] * 20 + [300_000] * 5 + [40 << 20])
        os.makedirs(f"{scene.home}/Camera")
        scene.cli("watch", "add", f"{scene.home}/Camera", "--to", "/Camera", "--account", "tus", "--subfolders", "month",
                  "--settle", "1")
        scene.start_agent()
        for i in range(5):
            with open(f"{scene.home}/Camera/IMG_{i:04}.jpg", "wb") as f:
                f.write(photo(f"2024:03:0{i + 1} 10:00:00", "x" * 30_000))
        scene.cli("upload", f"{scene.home}/Card", "--to", "/Photos", "--account", "tus")
        scene.cli("upload", f"{scene.home}/Card", "--to", "/Photos", "--account", "nextcloud")
        scene.cli("status")
        scene.cli("queue")
        wait_completed(scene, 57)
        scene.cli("download", "--account", "nextcloud", "/Photos/Card/IMG_0000.jpg")
        wait_completed(scene, 58)
        scene.cli("pause", "--all")
        scene.cli("resume", "--all")
        scene.cli("status")
        scene.cli("queue", "--state", "failed")
        scene.cli("stop")
        scene.agent.wait(300)
        files(f"{scene.home}/One", [20 << 20])
        scene.cli("upload", f"{scene.home}/One/IMG_0000.jpg", "--to", "/One", "--account", "tus")
        scene.cli("run", "--until-idle")
        wait_completed(scene, 59)
        agent: set[str] = set()
        commands: set[str] = set()
        for path in glob.glob(f"{profiles}/cg.*"):
            names = agent
            with open(path, errors="replace") as f:
                for line in f:
                    if line.startswith("cmd:"):
                        names = agent if line.split()[2:3] == ["run"] else commands
                    elif line.startswith(("fn=", "cfn=")):
                        names.add(line.split("=", 1)[1].strip())
        return agent, commands - agent
    finally:
        scene.close()
        for proc in scene.servers:
            proc.terminate()
            proc.wait(10)


class Layout:
    """Which names the order file can list without dragging code that does not run into the
    middle of what does. The linker moves the section a listed name is in, every copy of it.
    Our own objects give each function a section (Package.swift compiles them with
    -function-sections), so a name they define in several files (a partial-apply thunk, a
    specialization of a standard library generic) moves only those functions. The
    toolchain's libraries put many functions in one section (the standard library's `.text`
    of 1.6 MB, the runtime's, the regex parser's), which moves whole: a name is listed only
    if each such section it is in is moved anyway, for a function that ran and that the
    program defines once."""

    def __init__(self, binary: str):
        out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
        self.defined = Counter(fields[2] for fields in (line.split() for line in out.splitlines())
                               if len(fields) == 3 and fields[1] in "Tt")
        self.shared = shared_sections(set(self.defined))

    def movable(self, ran: set[str]) -> set[str]:
        once = {name for name in ran if self.defined[name] == 1}
        moved = {section for section, names in self.shared.items() if names & once}
        blocked = {name for section, names in self.shared.items() if section not in moved for name in names}
        return {name for name in ran if name in self.defined and name not in blocked}


def shared_sections(in_program: set[str]) -> dict[tuple[str, str, str], set[str]]:
    """The code sections of the toolchain's static libraries that hold several functions,
    with their functions' names, for the archive members the program links (one of whose
    global functions it defines). `objdump -t` lists each symbol's section."""
    swiftc = os.path.realpath(shutil.which("swiftc") or "/opt/swift/usr/bin/swiftc")
    folder = os.path.join(os.path.dirname(os.path.dirname(swiftc)), "lib", "swift_static", "linux")
    sections: dict[tuple[str, str, str], set[str]] = {}
    linked: set[tuple[str, str]] = set()
    archives = sorted(glob.glob(os.path.join(folder, "*.a")))
    if not archives:
        raise SystemExit(f"hot_functions: no static libraries in {folder}; is swiftc the toolchain that built the program?")
    for archive in archives:
        table = subprocess.run(["objdump", "-t", archive], capture_output=True, text=True, check=True).stdout
        member = ""
        for line in table.splitlines():
            if re.match(r"\S+:\s+file format ", line):
                member = line.split(":")[0]
                continue
            # "0000000000000000 g     F .text\t0000000000000012 NAME"
            head, _, tail = line.partition("\t")
            fields, words = head.split(), tail.split()
            if len(fields) < 3 or fields[-2] != "F" or not fields[-1].startswith(".text") or not words:
                continue
            name = words[-1]
            if fields[1] == "g" and name in in_program:
                linked.add((archive, member))
            if fields[-1] != f".text.{name}":
                sections.setdefault((archive, member, fields[-1]), set()).add(name)
    return {section: names for section, names in sections.items() if section[:2] in linked}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=".build/programs")
    args = parser.parse_args()
    binary = os.path.realpath(os.path.join(args.bin, "instant-upload"))
    if shutil.which("valgrind") is None:
        print("valgrind is missing: apt-get install valgrind", file=sys.stderr)
        return 1
    agent, commands = run(binary)

    layout = Layout(binary)

    # A name the agent ran is listed only if the sections it moves are moved for the agent
    # anyway: one moved for a command would otherwise come to sit among the agent's functions.
    def listed(ran: set[str], among: set[str]) -> list[str]:
        return sorted(name for name in layout.movable(among) & ran if not re.match(r"0x[0-9a-f]+$", name))

    agent_listed = listed(agent, agent)
    hot = agent_listed + listed(commands, agent | commands)
    with open(OUT, "w") as f:
        f.write("".join(name + "\n" for name in hot))
    print(f"{len(hot)} of the program's functions ran ({len(agent_listed)} of them in the agent); "
          f"written to {os.path.relpath(OUT, REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
