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

  - `--help`, `--version`, `account add`, `status`, `queue`, `pause`, `resume`;
  - the agent uploading a folder of small photos and one file of several chunks to each
    face, and downloading one back;
  - the agent stopped by `instant-upload stop`.

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
from bench_watch import PASSWORD, REPO, USER, Scene  # noqa: E402

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
        files(f"{scene.home}/Card", [30_000] * 20 + [300_000] * 5 + [40 << 20])
        scene.start_agent()
        scene.cli("upload", f"{scene.home}/Card", "--to", "/Photos", "--account", "tus")
        scene.cli("upload", f"{scene.home}/Card", "--to", "/Photos", "--account", "nextcloud")
        scene.cli("status")
        scene.cli("queue")
        wait_completed(scene, 52)
        scene.cli("download", "--account", "nextcloud", "/Photos/Card/IMG_0000.jpg")
        wait_completed(scene, 53)
        scene.cli("pause", "--all")
        scene.cli("resume", "--all")
        scene.cli("status")
        scene.cli("queue", "--state", "failed")
        scene.cli("stop")
        scene.agent.wait(300)
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


def own_functions(binary: str) -> set[str]:
    """The function symbols the linker can move one by one: those the program defines once,
    and those it defines several times only from its own objects, where each copy (a
    partial-apply thunk the compiler made in two files) has a section of its own
    (Package.swift compiles them with -function-sections). A name that the libraries define
    again for themselves (a value witness, a thunk) is left out: the linker would move every
    copy, and with each the whole section it sits in (the Swift runtime's `.text` of a
    megabyte, the regex parser's) to the front, between the functions that run."""
    def names(paths: list[str]) -> Counter:
        out = subprocess.run(["nm", "--defined-only", *paths], capture_output=True, text=True, check=True).stdout
        return Counter(fields[2] for fields in (line.split() for line in out.splitlines())
                       if len(fields) == 3 and fields[1] in "Tt")

    in_program = names([binary])
    # The program's own objects, beside it in the build folder: Sources/<Target> compiled.
    targets = os.listdir(os.path.join(REPO, "Sources"))
    objects = [path for target in targets
               for path in glob.glob(os.path.join(os.path.dirname(binary), f"{target.replace('-', '_')}.build", "*.o"))]
    in_objects = names(objects) if objects else Counter()
    return {name for name, count in in_program.items() if count == 1 or in_objects[name] == count}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=".build/programs")
    args = parser.parse_args()
    binary = os.path.realpath(os.path.join(args.bin, "instant-upload"))
    if shutil.which("valgrind") is None:
        print("valgrind is missing: apt-get install valgrind", file=sys.stderr)
        return 1
    agent, commands = run(binary)
    own = own_functions(binary)

    def listed(ran: set[str]) -> list[str]:
        return sorted(name for name in ran if name in own and not re.match(r"0x[0-9a-f]+$", name))

    hot = listed(agent) + listed(commands)
    with open(OUT, "w") as f:
        f.write("".join(name + "\n" for name in hot))
    print(f"{len(hot)} of the program's {len(own)} functions ran ({len(listed(agent))} of them in the agent); "
          f"written to {os.path.relpath(OUT, REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
