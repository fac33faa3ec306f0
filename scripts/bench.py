#!/usr/bin/env python3
"""`make bench`: the agent against curl and tuspy, in one run, interleaved, on loopback.

What runs (each client once per round, in a rotating order; medians are reported):

  ref    a SMALL (1 GiB) upload to the reference server (tus) by the agent, by curl doing
         the tus flow with one PATCH, and by tuspy with 8 MiB chunks;
  sink   the same agent and curl uploads into scripts/tus_sink.py, a minimal tus server
         that discards what it gets (the client's own ceiling, not the server's); the
         agent with 16 and 64 MiB chunks, and with a LARGE (4 GiB) file for its peak RSS;
  faces  a SMALL upload to the reference server's Nextcloud face by chunked upload v2 (the
         agent; curl doing the same requests: MKCOL, 16 MiB chunk PUTs from pieces cut
         beforehand, MOVE .file) and to its plain-WebDAV face by one PUT to a temporary
         name and a MOVE (the agent; curl doing the same two requests);
  dl     a SMALL download from the reference server (WebDAV GET) by the agent and `curl -o`;
  sha    `openssl dgst -sha256` over the SMALL file, as a reference: the agent hashes with
         a running SHA-256 while it sends.

The sink and sha clients take about a second each and are compared with one another on two
cores that the rest of the machine shares, so they run --sink-rounds times (default 5), the
others --rounds times.

Every client runs as a child process measured with wait4: wall time, CPU (user+sys) and
peak RSS. Every transfer is checked (SHA-256 of what arrived, or the agent's recorded
SHA-256) before its figures count. Targets print as PASS/MISS; the exit status is 0
unless something failed outright (a client error, a wrong file, a crash).

    .venv/bin/python scripts/bench.py [--bin .build/release] [--rounds 2] [--sink-rounds 5] [--quick]
                                      [--sizes 1G,4G] [--only ref,sink,faces,dl,sha]

Results also go to bench/out/latest.json. Units: MB = 10^6 bytes, GiB = 2^30 bytes.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USER, PASSWORD = "bench", "bench"
MB = 1_000_000
MiB = 1 << 20
GiB = 1 << 30
TUSPY_CHUNK = 8 * MiB
AGENT_DEFAULT_CHUNK_MB = 16
CURL_NEXTCLOUD_CHUNK = 16 * MiB

# tuspy as a child process, so it is measured like every other client.
TUSPY_CHILD = r"""
import base64, sys
from tusclient import client
url, path, name, remote, user, password, chunk = sys.argv[1:8]
auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
c = client.TusClient(url, headers={"Authorization": auth})
u = c.uploader(file_path=path, chunk_size=int(chunk), metadata={"filename": name, "path": remote})
u.upload()
print(u.url)
"""

# A plain chunked tus client (diagnostics, `--only ...,diag`): the reference server's own
# cost per PATCH and per Upload-Checksum, apart from any client's.
CHUNKED_CHILD = r"""
import base64, hashlib, http.client, os, sys, urllib.parse
url, path, name, remote, user, password, chunk, checksum = sys.argv[1:9]
chunk, checksum = int(chunk), checksum == "1"
u = urllib.parse.urlparse(url)
auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
size = os.path.getsize(path)
c = http.client.HTTPConnection(u.hostname, u.port)
meta = ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in (("filename", name), ("path", remote)))
c.request("POST", u.path, headers={"Authorization": auth, "Tus-Resumable": "1.0.0", "Upload-Length": str(size),
                                   "Upload-Metadata": meta})
r = c.getresponse(); r.read()
assert r.status == 201, r.status
location = urllib.parse.urlparse(r.getheader("Location")).path
offset = 0
with open(path, "rb") as f:
    while offset < size:
        body = f.read(chunk)
        h = {"Authorization": auth, "Tus-Resumable": "1.0.0", "Upload-Offset": str(offset),
             "Content-Type": "application/offset+octet-stream", "Content-Length": str(len(body))}
        if checksum:
            h["Upload-Checksum"] = "sha256 " + base64.b64encode(hashlib.sha256(body).digest()).decode()
        c.request("PATCH", location, body=body, headers=h)
        r = c.getresponse(); r.read()
        assert r.status == 204, (r.status, offset)
        offset = int(r.getheader("Upload-Offset"))
"""


# -- small helpers -------------------------------------------------------------------

def parse_size(text: str) -> int:
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    units = {"K": 1 << 10, "M": MiB, "G": GiB, "T": 1 << 40}
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def size_label(n: int) -> str:
    for unit, label in ((GiB, "GiB"), (MiB, "MiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {label}"
    return f"{n} B"


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    buf = bytearray(8 * MiB)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(view[:n])
    return h.hexdigest()


def make_file(path: str, size: int, block: bytes) -> None:
    """`size` bytes: a random 64 MiB block repeated, each copy stamped with its index."""
    stamped = bytearray(block)
    with open(path, "wb") as f:
        written, index = 0, 0
        while written < size:
            stamped[:16] = index.to_bytes(8, "little") * 2
            n = min(len(stamped), size - written)
            f.write(memoryview(stamped)[:n])
            written += n
            index += 1


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def fmt(x, spec=".2f", none="-"):
    return none if x is None else format(x, spec)


class BenchFailure(Exception):
    """A client failed or delivered wrong bytes: this measurement does not count."""


@dataclass
class Sample:
    wall: float
    user: float
    sys: float
    maxrss_kib: int
    status: int
    stdout: str = ""
    stderr: str = ""
    server_cpu: float = 0.0     # CPU the servers (reference, sink) used meanwhile
    other_cores: float = 0.0    # everything else on the machine meanwhile, in cores

    @property
    def cpu(self) -> float:
        return self.user + self.sys


# A tiny launcher: fork, exec, wait4, write the child's rusage. The bench's own Python
# process is big (it makes and hashes the test files), and a child started straight from
# it inherits its RSS high-water mark in ru_maxrss (exec after vfork/fork keeps the old
# mm's peak). Forking from this 1 MB launcher gives every client a clean peak RSS.
LAUNCHER_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
int main(int argc, char **argv) {
    if (argc < 3) return 127;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) return 126;
    if (pid == 0) { execvp(argv[2], argv + 2); _exit(127); }
    int status = 0; struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return 126;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    FILE *f = fopen(argv[1], "w");
    if (!f) return 126;
    fprintf(f, "%d %.6f %ld.%06ld %ld.%06ld %ld\n", status,
            (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
            (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec,
            ru.ru_maxrss);
    fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
"""
LAUNCHER: str | None = None
SERVER_PIDS: list[int] = []   # the servers' CPU is told apart from the rest of the machine
CLK_TCK = os.sysconf("SC_CLK_TCK")


def machine_ticks() -> list[int]:
    """The whole machine's CPU time so far by kind, in ticks, as /proc/stat's first line has
    it: user, nice, system, idle, iowait, irq, softirq, steal, ..."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (not idle, not iowait, not stolen)."""
    user, nice, system, _idle, _iowait, irq, softirq = machine_ticks()[:7]
    return (user + nice + system + irq + softirq) / CLK_TCK


def process_stat(pid: int | str) -> list[str]:
    """/proc/PID/stat after the command's name: the state is [0], the parent [1]."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def in_turn(pair: tuple, round_number: int) -> tuple:
    """The two runs of a pair in the order of this round: as given in even rounds, the other
    way round in odd ones, so that neither is always the one that goes first."""
    return pair if round_number % 2 == 0 else pair[::-1]


def save_json(path: str, figures) -> None:
    """A benchmark's figures, written where its --json asked (the folder made if need be)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(figures, f, indent=2)


def process_status(pid: int | str) -> dict[str, str]:
    """/proc/PID/status by field: "VmRSS" -> "18944 kB", "Threads" -> "7"."""
    with open(f"/proc/{pid}/status") as f:
        return {key: value.strip() for key, _, value in (line.partition(":") for line in f)}


def kib(value: str) -> int:
    """A /proc/PID/status size ("18944 kB") in KiB."""
    return int(value.split()[0])


def peak_rss_mb(pid: int | str) -> float:
    """A process's peak resident memory (VmHWM) since it started, or since its peak was reset
    through /proc/PID/clear_refs."""
    return kib(process_status(pid)["VmHWM"]) / 1024


def process_cpu(pid: int | str, with_children: bool = False) -> float:
    """A process's CPU seconds so far (every thread's, the ended ones' included), and with
    `with_children` those of its children that ended and were waited for; 0 once it is gone."""
    try:
        fields = process_stat(pid)
    except (OSError, IndexError):
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if with_children else 0)
    return ticks / CLK_TCK


def load_snapshot() -> tuple[float, float]:
    return machine_busy(), sum(process_cpu(p) for p in SERVER_PIDS)


def build_launcher(folder: str) -> str | None:
    global LAUNCHER
    source = os.path.join(folder, "wait4run.c")
    exe = os.path.join(folder, "wait4run")
    with open(source, "w") as f:
        f.write(LAUNCHER_C)
    for cc in ("cc", "gcc", "clang"):
        if shutil.which(cc) and subprocess.run([cc, "-O2", "-o", exe, source], capture_output=True).returncode == 0:
            LAUNCHER = exe
            return exe
    return None


def measure(argv: list[str], env: dict | None = None, stdin: bytes | None = None, timeout: float = 600,
            cwd: str | None = None) -> Sample:
    """Runs argv as a child and measures it with wait4: through the launcher when there is
    one (clean peak RSS), else straight from here."""
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    inp = None
    if stdin is not None:
        inp = tempfile.TemporaryFile()
        inp.write(stdin)
        inp.seek(0)
    result_file = None
    command = argv
    if LAUNCHER:
        fd, result_file = tempfile.mkstemp(prefix="wait4-")
        os.close(fd)
        command = [LAUNCHER, result_file] + argv
    busy0, servers0 = load_snapshot()
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdin=inp if inp else subprocess.DEVNULL, stdout=out, stderr=err,
                            cwd=cwd, start_new_session=True)
    timed_out = threading.Event()

    def kill():
        timed_out.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, ru = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    wall = time.perf_counter() - t0
    busy1, servers1 = load_snapshot()
    proc.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    sample = Sample(wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, proc.returncode,
                    out.read().decode(errors="replace"), err.read().decode(errors="replace"))
    for f in (out, err, inp):
        if f:
            f.close()
    if result_file:
        with open(result_file) as f:
            fields = f.read().split()
        os.remove(result_file)
        if len(fields) == 5:
            child_status = int(fields[0])
            sample.status = os.waitstatus_to_exitcode(child_status)
            sample.wall, sample.user, sample.sys, sample.maxrss_kib = (float(fields[1]), float(fields[2]),
                                                                       float(fields[3]), int(fields[4]))
        elif not timed_out.is_set():
            raise BenchFailure(f"the launcher failed ({proc.returncode}) for {argv[0]}")
    sample.server_cpu = servers1 - servers0
    # Whatever else ran: other people's work on a shared machine makes figures noisy.
    sample.other_cores = max(0.0, (busy1 - busy0) - sample.cpu - sample.server_cpu) / max(wall, 1e-3)
    if timed_out.is_set():
        raise BenchFailure(f"{os.path.basename(argv[0])} timed out after {timeout:.0f} s; stderr: {sample.stderr[-500:]}")
    return sample


class PeakMap:
    """Where a program's resident memory is at its peak: polls the process running `argv`
    and keeps /proc/PID/smaps from the moment its RSS was highest, summed per mapping.

    Used on the agent's own upload (`run --until-idle`), so a missed memory goal is reported
    with what the memory is, measured in the same run rather than written down once."""

    def __init__(self, argv: list[str]):
        self.argv = [a.encode() for a in argv]
        self.best_kib = 0
        self.smaps = ""
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()

    def find(self) -> int | None:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if f.read().split(b"\0")[:-1] == self.argv:
                        return int(entry)
            except OSError:
                continue
        return None

    def poll(self):
        pid = None
        while not self.stop.is_set():
            pid = pid or self.find()
            if pid:
                try:
                    rss = kib(process_status(pid)["VmRSS"])
                    if rss > self.best_kib:
                        with open(f"/proc/{pid}/smaps") as f:
                            self.smaps = f.read()
                        self.best_kib = rss
                except (OSError, KeyError):
                    pid = None
            time.sleep(0.002)

    def finish(self, program: str) -> dict | None:
        """Resident kB at the sampled peak: the program's own file, the libraries it is linked
        with, what was loaded later (libcurl and its libraries), anonymous memory; and the
        largest mappings by file."""
        self.stop.set()
        self.thread.join(5)
        if not self.smaps:
            return None
        linked = set()
        r = subprocess.run(["ldd", program], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            words = line.split()
            # "libsqlite3.so.0 => /lib/x86_64-linux-gnu/libsqlite3.so.0 (0x...)", or the loader's own line
            path = words[2] if len(words) >= 3 and words[1] == "=>" else (words[0] if words else "")
            if path.startswith("/"):
                linked.add(os.path.realpath(path))
        by_file: dict[str, int] = {}
        name = ""
        for line in self.smaps.splitlines():
            head = line.split(maxsplit=5)
            if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
                name = head[5].strip() if len(head) == 6 else "[anonymous]"
                if not name.startswith("/") and name not in ("[heap]", "[stack]"):
                    name = "[anonymous]"
            elif line.startswith("Rss:"):
                by_file[name] = by_file.get(name, 0) + int(line.split()[1])
        real_program = os.path.realpath(program)
        groups = {"the program": 0, "libraries linked at start": 0, "libraries loaded later (libcurl and its own)": 0,
                  "anonymous, heap and stacks": 0}
        for path, kib in by_file.items():
            if os.path.realpath(path) == real_program:
                groups["the program"] += kib
            elif not path.startswith("/"):
                groups["anonymous, heap and stacks"] += kib
            elif os.path.realpath(path) in linked:
                groups["libraries linked at start"] += kib
            else:
                groups["libraries loaded later (libcurl and its own)"] += kib
        largest = sorted(((os.path.basename(p) if p.startswith("/") else p, k) for p, k in by_file.items()),
                         key=lambda x: -x[1])[:8]
        return {"rss_kib": self.best_kib, "groups": groups, "largest": largest}


def start_server(argv: list[str], log_path: str, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    log = open(log_path, "wb")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, env=env, cwd=REPO, start_new_session=True)
    log.close()
    deadline = time.time() + 30
    line = b""
    while time.time() < deadline:
        line = proc.stdout.readline()
        if line.startswith(b"READY "):
            # Keep reading whatever else it prints, so it never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, line.split()[1].decode().rstrip("/")
        if not line and proc.poll() is not None:
            break
    proc.kill()
    with open(log_path, "rb") as f:
        tail = f.read()[-2000:].decode(errors="replace")
    raise RuntimeError(f"{' '.join(argv[:3])} did not start: {line!r}\n{tail}")


def stop_process(proc: subprocess.Popen | None) -> None:
    """SIGTERM, and SIGKILL if it has not ended 10 s later."""
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- the bench -----------------------------------------------------------------------

@dataclass
class Client:
    key: str            # e.g. "ref-agent"
    label: str          # e.g. "agent (16 MiB chunks)"
    group: str          # ref | sink | dl | sha
    size: int
    run: object         # callable(round) -> (Sample, extra dict)
    curl_key: str | None = None
    samples: list = field(default_factory=list)
    extras: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    unavailable: str | None = None


class Bench:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin)
        self.agent = os.path.join(self.bin, "instant-upload")
        self.python = sys.executable
        self.work = tempfile.mkdtemp(prefix="iu-bench-", dir=args.tmp)
        self.ref_proc = self.sink_proc = None
        self.files: dict[str, tuple[str, int, str]] = {}  # role -> (path, size, sha256)
        self.agent_env: dict[str, str] = {}
        self.clients: list[Client] = []
        self.notes: list[str] = []

    # -- set-up ----------------------------------------------------------------------

    def check_prerequisites(self):
        for tool in ("curl", "openssl"):
            if not shutil.which(tool):
                raise SystemExit(f"bench: `{tool}` is needed")
        if not os.access(self.agent, os.X_OK):
            raise SystemExit(f"bench: no executable {self.agent}; build it with `swift build -c release` "
                             f"or pass --bin DIR")
        small, large = self.args.small, self.args.large
        # Test files, one copy on the server and one download at a time, plus slack.
        need = small + large + 2 * small + 256 * MiB
        if "faces" in self.args.only:
            need += small  # curl's chunk pieces
        free = shutil.disk_usage(self.work).free
        if free < need:
            raise SystemExit(f"bench: {self.work} has {free / GiB:.1f} GiB free; this run needs about "
                             f"{need / GiB:.1f} GiB (try --quick or --sizes)")

    def make_test_files(self):
        block = os.urandom(64 * MiB)
        roles = [("small", self.args.small)]
        if "sink" in self.args.only and self.args.large:
            roles.append(("large", self.args.large))
        for role, size in roles:
            path = os.path.join(self.work, f"bench-{role}.bin")
            t = time.perf_counter()
            make_file(path, size, block)
            digest = sha256_file(path)
            self.files[role] = (path, size, digest)
            print(f"  {os.path.basename(path)}: {size_label(size)}, sha256 {digest[:16]}..., "
                  f"made and hashed in {time.perf_counter() - t:.1f} s", flush=True)

    def start_servers(self):
        data = os.path.join(self.work, "server")
        self.ref_data = data
        self.ref_folder = os.path.join(data, "tree", USER, "Bench")
        os.makedirs(self.ref_folder)
        # The main comparison: the server offers no checksums, so the agent, curl and tuspy
        # all do the same tus work. A second server verifies chunk checksums (the agent sends
        # them whenever a server offers them) and reports file checksums over WebDAV.
        self.ref_proc, self.ref_url = start_server(
            [self.python, os.path.join(REPO, "reference-server", "server.py"), "--data", data, "--port", "0",
             "--no-checksums", "--user", f"{USER}:{PASSWORD}"], os.path.join(self.work, "reference-server.log"))
        data_sum = os.path.join(self.work, "server-sum")
        self.refsum_folder = os.path.join(data_sum, "tree", USER, "Bench")
        os.makedirs(self.refsum_folder)
        self.refsum_proc, self.refsum_url = start_server(
            [self.python, os.path.join(REPO, "reference-server", "server.py"), "--data", data_sum, "--port", "0",
             "--user", f"{USER}:{PASSWORD}"], os.path.join(self.work, "reference-server-sum.log"))
        self.sink_proc, self.sink_url = start_server(
            [self.python, os.path.join(REPO, "scripts", "tus_sink.py"), "--port", "0"],
            os.path.join(self.work, "sink.log"))
        SERVER_PIDS[:] = [self.ref_proc.pid, self.refsum_proc.pid, self.sink_proc.pid]
        print(f"  reference server {self.ref_url}, sink {self.sink_url}", flush=True)
        if "faces" in self.args.only:
            self.start_face_servers()

    def start_face_servers(self):
        """The reference server as a Nextcloud and as a plain WebDAV server, each with a
        Bench folder for the account."""
        self.face_procs = {}
        self.face_urls = {}
        self.face_folders = {}
        for face in ("nextcloud", "webdav"):
            data = os.path.join(self.work, f"server-{face}")
            self.face_folders[face] = os.path.join(data, "tree", USER, "Bench")
            os.makedirs(self.face_folders[face])
            # A plain WebDAV server computes no checksums (Apache, rclone do not): the
            # reference server's would hash the whole file when the agent looks at it.
            extra = ["--no-checksums"] if face == "webdav" else []
            self.face_procs[face], self.face_urls[face] = start_server(
                [self.python, os.path.join(REPO, "reference-server", "server.py"), "--data", data, "--port", "0",
                 "--face", face, "--user", f"{USER}:{PASSWORD}"] + extra, os.path.join(self.work, f"reference-server-{face}.log"))
            SERVER_PIDS.append(self.face_procs[face].pid)
        users = json.loads(subprocess.run(["curl", "-s", "--fail", f"{self.face_urls['nextcloud']}/_control/users"],
                                          capture_output=True, text=True, timeout=30).stdout)
        self.nc_paths = users[USER]
        print(f"  Nextcloud face {self.face_urls['nextcloud']}, WebDAV face {self.face_urls['webdav']}", flush=True)

    def install_agent(self):
        """Measures the program as `make install` puts it (stripped, written afresh): the kernel
        maps a program's code as the page cache holds it, in pieces whose size follows how the
        file was written, so the linker's own output could show a resident size nobody runs."""
        prefix = os.path.join(self.work, "prefix")
        # A home of its own too: install.sh puts the file managers' "Send to" scripts under it.
        home = os.path.join(self.work, "install-home")
        env = {**os.environ, "PREFIX": prefix, "HOME": home, "XDG_DATA_HOME": f"{home}/.local/share",
               "XDG_CONFIG_HOME": f"{home}/.config"}
        r = subprocess.run(["sh", os.path.join(REPO, "packaging", "install.sh"), "install", self.bin, "--no-tray"],
                           env=env, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise SystemExit(f"bench: installing {self.bin} into {prefix} failed: {r.stderr.strip()}")
        self.agent = os.path.join(prefix, "bin", "instant-upload")
        self.notes.append(f"the agent measured is {self.bin}/instant-upload as `make install` writes it (stripped, "
                          f"into a prefix of the bench's own)")

    def set_up_agent(self):
        home = os.path.join(self.work, "home")
        env = {k: v for k, v in os.environ.items()
               if k not in ("DBUS_SESSION_BUS_ADDRESS", "XDG_DOWNLOAD_DIR", "JOURNAL_STREAM", "INVOCATION_ID",
                            "NOTIFY_SOCKET")}
        env.update(HOME=home, XDG_CONFIG_HOME=f"{home}/config", XDG_STATE_HOME=f"{home}/state",
                   XDG_RUNTIME_DIR=f"{home}/run", XDG_DOWNLOAD_DIR=f"{home}/Downloads")
        os.makedirs(f"{home}/run", mode=0o700)
        os.makedirs(f"{home}/config/instant-upload")
        self.agent_home = home
        self.agent_env = env
        self.local_drive = f"{home}/Downloads/Local Drive"
        self.write_agent_config(AGENT_DEFAULT_CHUNK_MB)
        for name, tus, dav in (("b", f"{self.ref_url}/files/", self.ref_url), ("s", f"{self.sink_url}/files/", self.ref_url),
                               ("c", f"{self.refsum_url}/files/", self.refsum_url)):
            r = self.cli(["account", "add", "--webdav", f"{dav}/dav/{USER}/", "--tus", tus, "--user", USER,
                          "--name", name, "--password-stdin"], stdin=PASSWORD + "\n")
            if r.returncode != 0:
                raise RuntimeError(f"account add {name} failed ({r.returncode}): {r.stderr}{r.stdout}")
        if "faces" in self.args.only:
            # As a person adds them: the address alone, the protocol found by discovery.
            for name, address, protocol in (("nc", self.face_urls["nextcloud"], "nextcloud-chunking"),
                                            ("dav", f"{self.face_urls['webdav']}/dav/{USER}/", "webdav-put")):
                r = self.cli(["account", "add", address, "--user", USER, "--name", name, "--password-stdin"],
                             stdin=PASSWORD + "\n")
                if r.returncode != 0 or protocol not in r.stdout:
                    raise RuntimeError(f"account add {address} ({name}) failed ({r.returncode}) or found no {protocol}: "
                                       f"{r.stderr}{r.stdout}")

    def write_agent_config(self, chunk_mb: int):
        with open(f"{self.agent_home}/config/instant-upload/config.ini", "w") as f:
            f.write(f"[agent]\nautostart = false\n\n[transfers]\nchunk_size_mb = {chunk_mb}\n")

    def cli(self, args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([self.agent] + args, env=self.agent_env, input=stdin, capture_output=True, text=True,
                              timeout=60)

    def queue(self) -> list[dict]:
        r = self.cli(["queue", "--json"])
        try:
            return json.loads(r.stdout)
        except json.JSONDecodeError:
            raise BenchFailure(f"queue --json ({r.returncode}) is not JSON: {r.stdout[:300]} {r.stderr[:300]}")

    def timeout_for(self, size: int) -> float:
        return max(120.0, size / (5 * MB))  # far beyond any sane speed on loopback

    # -- the clients -----------------------------------------------------------------

    def remote_name(self, role: str) -> str:
        return os.path.basename(self.files[role][0])

    def clear_remote(self, name: str, folder: str | None = None):
        folder = folder or self.ref_folder
        for entry in os.listdir(folder):
            if entry == name or (entry.startswith(name.rsplit(".", 1)[0] + " (")):
                os.remove(os.path.join(folder, entry))

    def check_remote(self, role: str, who: str):
        path, size, digest = self.files[role]
        name = os.path.basename(path)
        stored = os.path.join(self.ref_folder, name)
        extra = sorted(e for e in os.listdir(self.ref_folder) if e != name and not e.startswith("dl-"))
        if not os.path.exists(stored):
            raise BenchFailure(f"{who}: {name} is not on the server (folder holds {extra})")
        if extra:
            raise BenchFailure(f"{who}: unexpected files on the server: {extra}")
        got = os.path.getsize(stored)
        if got != size:
            raise BenchFailure(f"{who}: the server holds {got} bytes, not {size}")
        if self.args.verify == "full" and sha256_file(stored) != digest:
            raise BenchFailure(f"{who}: the server's copy has a different SHA-256")

    def account_folder(self, account: str) -> str | None:
        return {"b": self.ref_folder, "c": getattr(self, "refsum_folder", None),
                "nc": getattr(self, "face_folders", {}).get("nextcloud"),
                "dav": getattr(self, "face_folders", {}).get("webdav")}.get(account)

    def agent_upload(self, account: str, role: str, chunk_mb: int) -> tuple[Sample, dict]:
        path, size, digest = self.files[role]
        if self.account_folder(account):
            self.clear_remote(os.path.basename(path), self.account_folder(account))
        self.cli(["clear", "all"])
        self.write_agent_config(chunk_mb)
        t = time.perf_counter()
        r = self.cli(["upload", "--account", account, "--to", "/Bench", path])
        enqueue_s = time.perf_counter() - t
        if r.returncode != 0:
            raise BenchFailure(f"upload failed ({r.returncode}): {r.stderr.strip()}")
        sink_before = self.sink_stats() if account == "s" else None
        peak = PeakMap([self.agent, "run", "--until-idle"]) if account == "s" else None
        s = measure([self.agent, "run", "--until-idle"], env=self.agent_env, timeout=self.timeout_for(size))
        items = self.queue()
        extra = {"chunk_mb": chunk_mb, "enqueue_s": enqueue_s}
        if peak:
            extra["peak_map"] = peak.finish(self.agent)
        try:
            if s.status != 0:
                raise BenchFailure(f"run --until-idle exited {s.status}: {s.stderr.strip()[-800:]}")
            if len(items) != 1:
                raise BenchFailure(f"the queue holds {len(items)} items, not 1")
            item = items[0]
            extra["counters"] = item.get("counters")
            if item.get("state") != "completed":
                reason = item.get("reason") or {}
                raise BenchFailure(f"the upload is {item.get('state')}: {reason.get('code')}: {reason.get('message')}")
            if item.get("sha256") != digest:
                raise BenchFailure(f"the agent recorded sha256 {item.get('sha256')}, the file has {digest}")
            if account == "b":
                self.check_remote(role, "agent")
            elif account == "c":
                stored = os.path.join(self.refsum_folder, os.path.basename(path))
                if not os.path.exists(stored) or os.path.getsize(stored) != size:
                    raise BenchFailure("agent (checksums): the server's copy is missing or has the wrong size")
            elif account in ("nc", "dav"):
                self.check_stored(self.account_folder(account), role, f"agent ({account})")
            else:
                after = self.sink_stats()
                got = after["bytes_received"] - sink_before["bytes_received"]
                if got != size:
                    raise BenchFailure(f"the sink received {got} bytes, not {size}")
                extra["patches"] = after["patches"] - sink_before["patches"]
        finally:
            self.cli(["clear", "all"])
            if self.account_folder(account):
                self.clear_remote(os.path.basename(path), self.account_folder(account))
        return s, extra

    def check_stored(self, folder: str, role: str, who: str):
        """The file and nothing else (no temporary, no chunk) in `folder`, whole."""
        path, size, digest = self.files[role]
        name = os.path.basename(path)
        stored = os.path.join(folder, name)
        extra = sorted(e for e in os.listdir(folder) if e != name)
        if not os.path.exists(stored) or extra:
            raise BenchFailure(f"{who}: the server's folder holds {sorted(os.listdir(folder))}, not just {name}")
        if os.path.getsize(stored) != size:
            raise BenchFailure(f"{who}: the server holds {os.path.getsize(stored)} bytes, not {size}")
        if self.args.verify == "full" and sha256_file(stored) != digest:
            raise BenchFailure(f"{who}: the server's copy has a different SHA-256")

    def curl_pieces(self, role: str) -> list[str]:
        """The file cut into numbered 16 MiB pieces (00001, 00002, ...) once, outside the
        measurement, so that one curl process can PUT them in turn."""
        folder = os.path.join(self.work, f"pieces-{role}")
        if not os.path.isdir(folder):
            os.makedirs(folder)
            path, _, _ = self.files[role]
            with open(path, "rb") as f:
                n = 1
                while True:
                    piece = f.read(CURL_NEXTCLOUD_CHUNK)
                    if not piece:
                        break
                    with open(os.path.join(folder, f"{n:05d}"), "wb") as out:
                        out.write(piece)
                    n += 1
        return sorted(os.path.join(folder, p) for p in os.listdir(folder))

    def curl_nextcloud(self, role: str) -> tuple[Sample, dict]:
        """What the agent does against Nextcloud, by curl: MKCOL, the chunk PUTs (one
        process, one connection), MOVE .file."""
        path, size, _ = self.files[role]
        name = os.path.basename(path)
        folder = self.face_folders["nextcloud"]
        self.clear_remote(name, folder)
        pieces = self.curl_pieces(role)
        base = self.face_urls["nextcloud"]
        transfer = f"bench-{time.monotonic_ns()}"
        uploads = f"{base}{self.nc_paths['uploads']}{transfer}/"
        destination = ["-H", f"Destination: {base}{self.nc_paths['webdav']}Bench/{name}", "-H", f"OC-Total-Length: {size}"]
        auth = ["-s", "-u", f"{USER}:{PASSWORD}", "-o", "/dev/null", "-w", "%{http_code}\n"]
        t0 = time.perf_counter()
        steps = [
            measure(["curl"] + auth + ["-X", "MKCOL"] + destination + [uploads], timeout=60),
            measure(["curl"] + auth + ["-H", "Expect:"] + destination + ["-T", "{" + ",".join(pieces) + "}", uploads],
                    timeout=self.timeout_for(size)),
            measure(["curl"] + auth + ["-X", "MOVE", "-H", "X-OC-Mtime: 1500000000"] + destination + [uploads + ".file"],
                    timeout=self.timeout_for(size)),
        ]
        wall = time.perf_counter() - t0
        try:
            codes = [s.stdout.split() for s in steps]
            if any(s.status != 0 for s in steps) or codes[0] != ["201"] or any(c not in ("201", "204") for c in codes[1]) \
                    or codes[2] not in (["201"], ["204"]):
                raise BenchFailure(f"curl's chunked upload failed: HTTP {codes}; {[s.stderr[:200] for s in steps]}")
            self.check_stored(folder, role, "curl (chunked)")
        finally:
            self.clear_remote(name, folder)
        return self.combined(steps, wall), {"pieces": len(pieces)}

    def curl_webdav(self, role: str) -> tuple[Sample, dict]:
        """What the agent does against a plain WebDAV server, by curl: PUT to a temporary
        name in the folder, MOVE over the real one."""
        path, size, _ = self.files[role]
        name = os.path.basename(path)
        folder = self.face_folders["webdav"]
        self.clear_remote(name, folder)
        root = f"{self.face_urls['webdav']}/dav/{USER}/Bench/"
        auth = ["-s", "-u", f"{USER}:{PASSWORD}", "-o", "/dev/null", "-w", "%{http_code}"]
        t0 = time.perf_counter()
        steps = [
            measure(["curl"] + auth + ["-H", "Expect:", "-T", path, root + f".{name}.bench.part"], timeout=self.timeout_for(size)),
            measure(["curl"] + auth + ["-X", "MOVE", "-H", f"Destination: {root}{name}", "-H", "Overwrite: T",
                     root + f".{name}.bench.part"], timeout=60),
        ]
        wall = time.perf_counter() - t0
        try:
            if any(s.status != 0 or s.stdout.strip() not in ("201", "204") for s in steps):
                raise BenchFailure(f"curl's PUT + MOVE failed: HTTP {[s.stdout for s in steps]}")
            self.check_stored(folder, role, "curl (PUT)")
        finally:
            self.clear_remote(name, folder)
        return self.combined(steps, wall), {}

    @staticmethod
    def combined(steps: list[Sample], wall: float) -> Sample:
        """Several curl processes as one client: their CPU summed, the larger RSS, wall from first to last."""
        return Sample(wall, sum(s.user for s in steps), sum(s.sys for s in steps), max(s.maxrss_kib for s in steps), 0,
                      server_cpu=sum(s.server_cpu for s in steps),
                      other_cores=sum(s.other_cores * s.wall for s in steps) / max(wall, 1e-3))

    def sink_stats(self) -> dict:
        r = subprocess.run(["curl", "-s", "--fail", f"{self.sink_url}/_stats"], capture_output=True, text=True,
                           timeout=30)
        return json.loads(r.stdout)

    def curl_upload(self, target: str, role: str) -> tuple[Sample, dict]:
        path, size, _ = self.files[role]
        name = os.path.basename(path)
        base = self.ref_url if target == "ref" else self.sink_url
        if target == "ref":
            self.clear_remote(name)
        sink_before = self.sink_stats() if target == "sink" else None
        t0 = time.perf_counter()
        post = measure(["curl", "-s", "-u", f"{USER}:{PASSWORD}", "-X", "POST", "-H", "Tus-Resumable: 1.0.0",
                        "-H", f"Upload-Length: {size}",
                        "-H", f"Upload-Metadata: filename {b64(name)},path {b64('Bench/' + name)}",
                        "-D", "-", "-o", "/dev/null", f"{base}/files/"], timeout=60)
        location = None
        for line in post.stdout.splitlines():
            if line.lower().startswith("location:"):
                location = line.split(":", 1)[1].strip()
        if post.status != 0 or not location or " 201" not in post.stdout.splitlines()[0]:
            raise BenchFailure(f"curl POST failed ({post.status}): {post.stdout[:300]} {post.stderr[:300]}")
        patch = measure(["curl", "-s", "-u", f"{USER}:{PASSWORD}", "-X", "PATCH", "-H", "Tus-Resumable: 1.0.0",
                         "-H", "Upload-Offset: 0", "-H", "Content-Type: application/offset+octet-stream",
                         "-H", "Expect:", "-T", path, "-o", "/dev/null", "-w", "%{http_code}", location],
                        timeout=self.timeout_for(size))
        wall = time.perf_counter() - t0
        try:
            if patch.status != 0 or patch.stdout.strip() != "204":
                raise BenchFailure(f"curl PATCH failed ({patch.status}, HTTP {patch.stdout.strip()}): {patch.stderr[:300]}")
            if target == "ref":
                self.check_remote(role, "curl")
            else:
                got = self.sink_stats()["bytes_received"] - sink_before["bytes_received"]
                if got != size:
                    raise BenchFailure(f"the sink received {got} bytes, not {size}")
        finally:
            if target == "ref":
                self.clear_remote(name)
        # The flow: both processes' CPU, the larger RSS, wall from the POST to the PATCH's end.
        s = Sample(wall, post.user + patch.user, post.sys + patch.sys, max(post.maxrss_kib, patch.maxrss_kib), 0,
                   server_cpu=post.server_cpu + patch.server_cpu,
                   other_cores=(post.other_cores * post.wall + patch.other_cores * patch.wall) / wall)
        return s, {"patch_wall": patch.wall, "patch_cpu": patch.cpu}

    def tuspy_upload(self, role: str) -> tuple[Sample, dict]:
        path, size, _ = self.files[role]
        name = os.path.basename(path)
        self.clear_remote(name)
        s = measure([self.python, "-c", TUSPY_CHILD, f"{self.ref_url}/files/", path, name, f"Bench/{name}", USER,
                     PASSWORD, str(TUSPY_CHUNK)], timeout=self.timeout_for(size))
        try:
            if s.status != 0:
                raise BenchFailure(f"tuspy exited {s.status}: {s.stderr.strip()[-800:]}")
            self.check_remote(role, "tuspy")
        finally:
            self.clear_remote(name)
        return s, {"chunk_mb": TUSPY_CHUNK // MiB}

    def chunked_upload(self, role: str, chunk_mb: int, checksum: bool) -> tuple[Sample, dict]:
        path, size, _ = self.files[role]
        name = os.path.basename(path)
        self.clear_remote(name)
        s = measure([self.python, "-c", CHUNKED_CHILD, f"{self.ref_url}/files/", path, name, f"Bench/{name}", USER,
                     PASSWORD, str(chunk_mb * MiB), "1" if checksum else "0"], timeout=self.timeout_for(size))
        try:
            if s.status != 0:
                raise BenchFailure(f"the chunked client exited {s.status}: {s.stderr.strip()[-800:]}")
            self.check_remote(role, "chunked client")
        finally:
            self.clear_remote(name)
        return s, {"chunk_mb": chunk_mb, "checksum": checksum}

    def place_download_source(self) -> str:
        path, _, _ = self.files["small"]
        name = "dl-" + os.path.basename(path)
        target = os.path.join(self.ref_folder, name)
        if not os.path.exists(target):
            try:
                os.link(path, target)
            except OSError:
                shutil.copyfile(path, target)
        return name

    def agent_download(self) -> tuple[Sample, dict]:
        _, size, digest = self.files["small"]
        name = self.place_download_source()
        self.cli(["clear", "all"])
        shutil.rmtree(self.local_drive, ignore_errors=True)
        t = time.perf_counter()
        r = self.cli(["download", "--account", "b", f"/Bench/{name}"])
        enqueue_s = time.perf_counter() - t
        if r.returncode != 0:
            raise Unavailable(f"`download` exited {r.returncode}: {(r.stderr or r.stdout).strip()[:300]}")
        try:
            s = measure([self.agent, "run", "--until-idle"], env=self.agent_env, timeout=self.timeout_for(size))
            items = self.queue()
            if s.status != 0:
                raise BenchFailure(f"run --until-idle exited {s.status}: {s.stderr.strip()[-800:]}")
            if len(items) != 1:
                raise BenchFailure(f"the queue holds {len(items)} items, not 1")
            item = items[0]
            if item.get("state") != "completed":
                reason = item.get("reason") or {}
                message = f"{item.get('state')}: {reason.get('code')}: {reason.get('message')}"
                if item.get("state") == "failed" and reason.get("message", "").find("not available") >= 0:
                    raise Unavailable(message)
                raise BenchFailure(f"the download is {message}")
            local = os.path.join(self.local_drive, name)
            if not os.path.exists(local):
                raise BenchFailure(f"{local} is missing (queue says {item.get('local_path')!r}); "
                                   f"Local Drive holds {os.listdir(self.local_drive) if os.path.isdir(self.local_drive) else 'nothing'}")
            if os.path.getsize(local) != size or sha256_file(local) != digest:
                raise BenchFailure("the downloaded file differs from the source")
            if item.get("sha256") not in (None, digest):
                raise BenchFailure(f"the agent recorded sha256 {item.get('sha256')}, the file has {digest}")
            return s, {"counters": item.get("counters"), "enqueue_s": enqueue_s}
        finally:
            self.cli(["clear", "all"])
            shutil.rmtree(self.local_drive, ignore_errors=True)

    def curl_download(self, sync: bool = False) -> tuple[Sample, dict]:
        """`curl -o`; with `sync`, followed by `sync FILE`: the durability the agent gives."""
        _, size, digest = self.files["small"]
        name = self.place_download_source()
        out = os.path.join(self.work, "curl-download.bin")
        command = ["curl", "-s", "-u", f"{USER}:{PASSWORD}", "-o", out, "-w", "%{http_code}", f"{self.ref_url}/dav/{USER}/Bench/{name}"]
        if sync:
            command = ["sh", "-c", '"$@" && sync "$0"', out] + command
        try:
            s = measure(command, timeout=self.timeout_for(size))
            if s.status != 0 or s.stdout.strip() != "200":
                raise BenchFailure(f"curl GET failed ({s.status}, HTTP {s.stdout.strip()}): {s.stderr[:300]}")
            if os.path.getsize(out) != size or sha256_file(out) != digest:
                raise BenchFailure("curl's download differs from the source")
        finally:
            if os.path.exists(out):
                os.remove(out)
        return s, {}

    def openssl_sha(self) -> tuple[Sample, dict]:
        path, _, digest = self.files["small"]
        s = measure(["openssl", "dgst", "-sha256", path], timeout=600)
        if s.status != 0 or digest not in s.stdout:
            raise BenchFailure(f"openssl dgst failed ({s.status}): {s.stdout[:200]} {s.stderr[:200]}")
        return s, {}

    # -- the plan --------------------------------------------------------------------

    def plan(self):
        small, large = self.args.small, self.args.large
        only = self.args.only
        add = self.clients.append
        if "ref" in only:
            add(Client("ref-agent", f"agent ({AGENT_DEFAULT_CHUNK_MB} MiB chunks)", "ref", small,
                       lambda r: self.agent_upload("b", "small", AGENT_DEFAULT_CHUNK_MB), "ref-curl"))
            add(Client("ref-curl", "curl (1 PATCH)", "ref", small, lambda r: self.curl_upload("ref", "small"), "ref-curl"))
            add(Client("ref-tuspy", f"tuspy ({TUSPY_CHUNK // MiB} MiB chunks)", "ref", small,
                       lambda r: self.tuspy_upload("small"), "ref-curl"))
            add(Client("ref-agent-sum", "agent, server checking checksums", "ref", small,
                       lambda r: self.agent_upload("c", "small", AGENT_DEFAULT_CHUNK_MB), "ref-curl"))
        if "diag" in only:
            for checksum in (False, True):
                add(Client(f"ref-chunked{'-sum' if checksum else ''}",
                           f"http.client ({AGENT_DEFAULT_CHUNK_MB} MiB chunks{', checksum' if checksum else ''})", "ref",
                           small, lambda r, k=checksum: self.chunked_upload("small", AGENT_DEFAULT_CHUNK_MB, k),
                           "ref-curl"))
        if "sink" in only:
            for chunk in self.args.sink_chunks:
                add(Client(f"sink-agent-{chunk}", f"agent ({chunk} MiB chunks)", "sink", small,
                           lambda r, c=chunk: self.agent_upload("s", "small", c), "sink-curl"))
            add(Client("sink-curl", "curl (1 PATCH)", "sink", small, lambda r: self.curl_upload("sink", "small"),
                       "sink-curl"))
            if large:
                add(Client("sink-agent-large", f"agent ({AGENT_DEFAULT_CHUNK_MB} MiB chunks)", "sink", large,
                           lambda r: self.agent_upload("s", "large", AGENT_DEFAULT_CHUNK_MB), None))
        if "faces" in only:
            add(Client("nc-agent", f"agent, chunked v2 ({AGENT_DEFAULT_CHUNK_MB} MiB first chunk)", "nc", small,
                       lambda r: self.agent_upload("nc", "small", AGENT_DEFAULT_CHUNK_MB), "nc-curl"))
            add(Client("nc-curl", f"curl (MKCOL, {CURL_NEXTCLOUD_CHUNK // MiB} MiB PUTs, MOVE)", "nc", small,
                       lambda r: self.curl_nextcloud("small"), "nc-curl"))
            add(Client("dav-agent", "agent, PUT + MOVE", "dav", small,
                       lambda r: self.agent_upload("dav", "small", AGENT_DEFAULT_CHUNK_MB), "dav-curl"))
            add(Client("dav-curl", "curl (PUT + MOVE)", "dav", small, lambda r: self.curl_webdav("small"), "dav-curl"))
        if "dl" in only:
            add(Client("dl-agent", "agent", "dl", small, lambda r: self.agent_download(), "dl-curl"))
            add(Client("dl-curl", "curl -o", "dl", small, lambda r: self.curl_download(), "dl-curl"))
            add(Client("dl-curl-sync", "curl -o, then sync FILE", "dl", small, lambda r: self.curl_download(sync=True), "dl-curl"))
        if "sha" in only:
            add(Client("sha-openssl", "openssl dgst -sha256", "sha", small, lambda r: self.openssl_sha(), None))

    def rounds_for(self, c: Client) -> int:
        """The sink's and openssl's runs take a second each and the goal between them rests
        on two cores shared with whatever else the machine does: they get more rounds."""
        return self.args.sink_rounds if c.group in ("sink", "sha") else self.args.rounds

    def run_rounds(self):
        n = len(self.clients)
        total = max(self.rounds_for(c) for c in self.clients)
        for rnd in range(total):
            order = [c for c in (self.clients[(i + rnd) % n] for i in range(n)) if rnd < self.rounds_for(c)]
            print(f"round {rnd + 1}/{total}: {', '.join(c.key for c in order)}", flush=True)
            for c in order:
                if c.unavailable:
                    continue
                os.sync()  # no writeback of earlier files during the measurement
                self.wait_for_quiet()
                try:
                    sample, extra = c.run(rnd)
                except Unavailable as e:
                    c.unavailable = str(e)
                    print(f"  {c.key:17} not available ({e})", flush=True)
                    continue
                except BenchFailure as e:
                    c.errors.append(str(e))
                    print(f"  {c.key:17} FAILED: {e}", flush=True)
                    continue
                c.samples.append(sample)
                c.extras.append(extra)
                print(f"  {c.key:17} {sample.wall:7.2f} s  {c.size / sample.wall / MB:8.1f} MB/s  "
                      f"cpu {sample.cpu:6.2f} s  rss {sample.maxrss_kib * 1024 / MB:6.1f} MB  "
                      f"server cpu {sample.server_cpu:5.2f} s  other load {sample.other_cores:4.2f} cores", flush=True)

    def wait_for_quiet(self):
        """With --quiet-wait, waits (up to that many seconds) until the rest of the machine
        uses less than --quiet-load cores, so other people's work disturbs less."""
        deadline = time.monotonic() + self.args.quiet_wait
        while self.args.quiet_wait > 0:
            busy0, servers0 = load_snapshot()
            time.sleep(0.5)
            busy1, servers1 = load_snapshot()
            other = max(0.0, (busy1 - busy0) - (servers1 - servers0)) / 0.5
            if other <= self.args.quiet_load or time.monotonic() >= deadline:
                return

    # -- the report ------------------------------------------------------------------

    def summary(self, c: Client) -> dict | None:
        if not c.samples:
            return None
        wall = statistics.median(s.wall for s in c.samples)
        cpu = statistics.median(s.cpu for s in c.samples)
        return {
            "wall_s": wall,
            "mb_per_s": c.size / wall / MB,
            "cpu_s": cpu,
            "user_s": statistics.median(s.user for s in c.samples),
            "sys_s": statistics.median(s.sys for s in c.samples),
            "cpu_s_per_gib": cpu / (c.size / GiB),
            "rss_mb": statistics.median(s.maxrss_kib for s in c.samples) * 1024 / MB,
            "rss_mb_max": max(s.maxrss_kib for s in c.samples) * 1024 / MB,
            "server_cpu_s": statistics.median(s.server_cpu for s in c.samples),
            "other_load_cores": statistics.median(s.other_cores for s in c.samples),
            "runs": len(c.samples),
        }

    def report(self) -> dict:
        by_key = {c.key: c for c in self.clients}
        sums = {c.key: self.summary(c) for c in self.clients}
        target_names = {"ref": "reference server", "sink": "tus sink", "dl": "reference server (GET)",
                        "sha": "local file", "nc": "Nextcloud face", "dav": "WebDAV face"}
        header = ["client", "target", "size", "wall s", "MB/s", "CPU s", "peak RSS MB", "wall/curl", "CPU/curl",
                  "server CPU s", "other load"]
        rows = []
        for c in self.clients:
            s = sums[c.key]
            curl = sums.get(c.curl_key) if c.curl_key else None
            if s is None:
                why = c.unavailable and f"not available ({c.unavailable})" or "; ".join(c.errors)[:80] or "no runs"
                rows.append([c.label, target_names[c.group], size_label(c.size), why])
                continue
            wall_ratio = s["wall_s"] / curl["wall_s"] if curl and c.key != c.curl_key else None
            cpu_ratio = s["cpu_s"] / curl["cpu_s"] if curl and c.key != c.curl_key and curl["cpu_s"] > 0 else None
            s["wall_vs_curl"], s["cpu_vs_curl"] = wall_ratio, cpu_ratio
            rows.append([c.label, target_names[c.group], size_label(c.size), fmt(s["wall_s"]), fmt(s["mb_per_s"], ".0f"),
                         fmt(s["cpu_s"]), fmt(s["rss_mb"], ".1f"),
                         "1.00" if c.key == c.curl_key else fmt(wall_ratio),
                         "1.00" if c.key == c.curl_key else fmt(cpu_ratio),
                         fmt(s["server_cpu_s"]) if c.group != "sha" else "-", fmt(s["other_load_cores"])])
        print()
        print(f"instant-upload bench: {self.args.rounds} round(s) ({self.args.sink_rounds} for the "
              f"sink and openssl), medians; MB = 10^6 bytes; "
              f"CPU = user+sys of the client process(es); binaries {self.bin}")
        print("server CPU = the servers' CPU meanwhile; other load = cores busy with anything else meanwhile "
              "(on a 2-core machine, more than ~0.3 makes wall times noisy)")
        full = [header] + [r for r in rows if len(r) == len(header)]
        widths = [max(len(str(r[i])) for r in full + [r for r in rows if len(r) > i and i < 3])
                  for i in range(len(header))]
        for r in [header] + rows:
            if len(r) == len(header):
                print("  ".join(str(v).ljust(widths[i]) if i < 3 else str(v).rjust(widths[i]) for i, v in enumerate(r)))
            else:
                print("  ".join(str(v).ljust(widths[i]) for i, v in enumerate(r[:3])) + "  " + r[3])

        targets = self.targets(sums, by_key)
        print()
        print("targets:")
        for t in targets:
            print(f"  {t['status']:4}  {t['text']}")
        if self.notes:
            print()
            print("notes:")
            for n in self.notes:
                print(f"  - {n}")
        return {"sums": sums, "targets": targets}

    def default_sink_agent(self, sums: dict) -> dict | None:
        """The agent into the sink with its default chunk size, else the first one measured."""
        keys = [f"sink-agent-{AGENT_DEFAULT_CHUNK_MB}"] + [f"sink-agent-{c}" for c in self.args.sink_chunks]
        return next((sums[k] for k in keys if sums.get(k)), None)

    def targets(self, sums: dict, by_key: dict) -> list[dict]:
        out = []

        def add(ok, text, **data):
            out.append({"status": "-" if ok is None else ("PASS" if ok else "MISS"), "text": text, **data})

        ra, rc, rt = sums.get("ref-agent"), sums.get("ref-curl"), sums.get("ref-tuspy")
        if ra and rc:
            ratio = ra["wall_s"] / rc["wall_s"]
            add(ratio <= 1.1, f"reference server: agent wall <= 1.1x curl: {ra['wall_s']:.2f} s vs {rc['wall_s']:.2f} s "
                              f"({ratio:.2f}x)", ratio=ratio)
        if ra and rt:
            add(ra["wall_s"] < rt["wall_s"], f"reference server: agent faster than tuspy: {ra['wall_s']:.2f} s vs "
                                             f"{rt['wall_s']:.2f} s")
        for chunk in self.args.sink_chunks:
            sa = sums.get(f"sink-agent-{chunk}")
            if sa:
                add(sa["mb_per_s"] >= 800, f"sink: agent ({chunk} MiB chunks) >= 800 MB/s: {sa['mb_per_s']:.0f} MB/s",
                    chunk_mb=chunk)
        sha = sums.get("sha-openssl")
        sc = sums.get("sink-curl")
        if sha:
            for a, curl_s, where in ((self.default_sink_agent(sums), sc, "sink"), (ra, rc, "reference server")):
                if a and curl_s:
                    budget = curl_s["cpu_s_per_gib"] + sha["cpu_s_per_gib"]
                    add(a["cpu_s_per_gib"] <= budget,
                        f"{where}: agent CPU/GiB <= curl's + one openssl sha256 pass: {a['cpu_s_per_gib']:.2f} s vs "
                        f"{curl_s['cpu_s_per_gib']:.2f} + {sha['cpu_s_per_gib']:.2f} = {budget:.2f} s")
        small = self.default_sink_agent(sums)
        large = sums.get("sink-agent-large")
        if small:
            rss = [("small", small)] + ([("large", large)] if large else [])
            worst = max(s["rss_mb_max"] for _, s in rss)
            text = ", ".join(f"{s['rss_mb_max']:.1f} MB at {size_label(self.files[role][1])}" for role, s in rss)
            add(worst < 40, f"agent peak RSS < 40 MB (sink, max over rounds): {text}")
            if large:
                growth = large["rss_mb_max"] - small["rss_mb_max"]
                allowed = max(4.0, 0.1 * small["rss_mb_max"])
                add(growth <= allowed, f"agent peak RSS does not grow with file size: {size_label(self.args.large)} "
                                       f"minus {size_label(self.args.small)} = {growth:+.1f} MB (allowed {allowed:.1f} MB)")
        summed = sums.get("ref-agent-sum")
        if summed:
            # The sink asks for no checksums; a tus server that asks for one per chunk has each
            # chunk (up to 8 MiB) read twice, once to digest it and again as it is sent.
            add(None, f"agent peak RSS uploading to the reference server that asks for a checksum per chunk (each chunk read "
                      f"twice: digested, then sent): {summed['rss_mb_max']:.1f} MB, no target set")
        for key, what in (("nc", "Nextcloud chunked v2"), ("dav", "plain WebDAV PUT")):
            a, c = sums.get(f"{key}-agent"), sums.get(f"{key}-curl")
            if a and c:
                add(None, f"{what}: agent {a['wall_s']:.2f} s vs curl {c['wall_s']:.2f} s "
                          f"({a['wall_s'] / c['wall_s']:.2f}x), CPU {a['cpu_s']:.2f} s vs {c['cpu_s']:.2f} s, no target set")
        da, dc, ds = sums.get("dl-agent"), sums.get("dl-curl"), sums.get("dl-curl-sync")
        if da and ds:
            add(da["wall_s"] <= 1.2 * ds["wall_s"], f"download: agent <= 1.2x curl -o + sync FILE: {da['wall_s']:.2f} s vs "
                                                    f"{ds['wall_s']:.2f} s ({da['wall_s'] / ds['wall_s']:.2f}x)")
        if da and dc:
            add(None, f"download: agent {da['wall_s']:.2f} s vs plain curl -o {dc['wall_s']:.2f} s "
                      f"({da['wall_s'] / dc['wall_s']:.2f}x), CPU {da['cpu_s']:.2f} s vs {dc['cpu_s']:.2f} s")
        elif by_key.get("dl-agent") and by_key["dl-agent"].unavailable:
            add(None, f"agent download: not available ({by_key['dl-agent'].unavailable})")
        for c in self.clients:
            if c.errors:
                add(False, f"{c.key} failed {len(c.errors)} time(s): {c.errors[0]}")
        return out

    def agent_notes(self):
        """Evidence worth a line: reads and hashes beyond one pass over the file."""
        for c in self.clients:
            if not c.key.startswith(("ref-agent", "sink-agent", "dl-agent", "nc-agent", "dav-agent")) or not c.extras:
                continue
            slow = [e.get("enqueue_s", 0) for e in c.extras if e.get("enqueue_s", 0) > 0.5]
            if slow:
                self.notes.append(f"{c.key}: the enqueue command took up to {max(slow):.2f} s (not in the figures)")
            counters = c.extras[-1].get("counters") or {}
            read, hashed = counters.get("bytes_read"), counters.get("bytes_hashed")
            if read:
                self.notes.append(f"{c.key}: the agent read the file {read / c.size:.2f}x and hashed it "
                                  f"{(hashed or 0) / c.size:.2f}x (queue counters)")

    # -- main ------------------------------------------------------------------------

    def main(self) -> int:
        print(f"instant-upload bench in {self.work}", flush=True)
        failed = False
        try:
            self.check_prerequisites()
            if not build_launcher(self.work):
                self.notes.append("no C compiler: clients were measured straight from the bench's Python process, "
                                  "so peak RSS is at least that process's own peak")
            self.make_test_files()
            t = time.perf_counter()
            os.sync()
            print(f"  sync: {time.perf_counter() - t:.1f} s", flush=True)
            self.start_servers()
            self.install_agent()
            self.set_up_agent()
            self.plan()
            self.run_rounds()
            self.agent_notes()
            result = self.report()
            failed = any(c.errors for c in self.clients)
            self.write_json(result)
        finally:
            stop_process(self.ref_proc)
            stop_process(getattr(self, "refsum_proc", None))
            stop_process(self.sink_proc)
            for proc in getattr(self, "face_procs", {}).values():
                stop_process(proc)
            if self.args.keep:
                print(f"kept {self.work}")
            else:
                shutil.rmtree(self.work, ignore_errors=True)
        return 1 if failed else 0

    def write_json(self, result: dict):
        out_dir = os.path.join(REPO, "bench", "out")
        os.makedirs(out_dir, exist_ok=True)
        doc = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": {"cpus": os.cpu_count(), "machine": platform.machine(), "kernel": platform.release()},
            "binaries": self.bin,
            "rounds": self.args.rounds,
            "sink_rounds": self.args.sink_rounds,
            "sizes": {"small": self.args.small, "large": self.args.large},
            "units": {"mb": MB, "rss": "MB (10^6 bytes) from ru_maxrss", "cpu": "user+sys seconds"},
            "clients": [
                {"key": c.key, "label": c.label, "target": c.group, "size": c.size,
                 "chunk_mb": (c.extras[0].get("chunk_mb") if c.extras else None),
                 "median": result["sums"].get(c.key), "unavailable": c.unavailable, "errors": c.errors,
                 "runs": [{"wall_s": s.wall, "user_s": s.user, "sys_s": s.sys, "maxrss_kib": s.maxrss_kib,
                           "server_cpu_s": s.server_cpu, "other_load_cores": s.other_cores, **e}
                          for s, e in zip(c.samples, c.extras)]}
                for c in self.clients],
            "targets": result["targets"],
            "notes": self.notes,
        }
        path = os.path.join(out_dir, "latest.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
        print(f"\nwrote {os.path.relpath(path, os.getcwd())}")


class Unavailable(Exception):
    """The agent does not offer this yet; reported, not counted as a failure."""


def main() -> int:
    p = argparse.ArgumentParser(description="Benchmarks the agent against curl and tuspy on loopback.")
    p.add_argument("--bin", default=os.path.join(REPO, ".build", "release"),
                   help="folder with the instant-upload binary (default: .build/release)")
    p.add_argument("--rounds", type=int, default=2, help="rounds; medians are reported (default 2)")
    p.add_argument("--sink-rounds", type=int, default=5,
                   help="rounds for the sink and openssl, a second each (default 5, or --rounds if more)")
    p.add_argument("--sizes", default="1G,4G",
                   help="SMALL,LARGE: the file for every client, and the agent's second file for peak RSS "
                        "(default 1G,4G; LARGE 0 skips it)")
    p.add_argument("--quick", action="store_true", help="same as --sizes 64M,256M")
    p.add_argument("--only", default="ref,sink,faces,dl,sha",
                   help="comma-separated groups: ref,sink,faces,dl,sha, and diag (a plain Python tus client with "
                        "16 MiB chunks, with and without Upload-Checksum, against the reference server)")
    p.add_argument("--sink-chunks", default="16,64", help="agent chunk sizes (MiB) into the sink (default 16,64)")
    p.add_argument("--verify", choices=["full", "size"], default="full",
                   help="check the server's copy by SHA-256 (full) or by size only")
    p.add_argument("--quiet-wait", type=float, default=0, metavar="S",
                   help="before each measurement wait up to S seconds for the rest of the machine to go "
                        "quiet (default 0: don't wait)")
    p.add_argument("--quiet-load", type=float, default=0.3, metavar="CORES",
                   help="what counts as quiet for --quiet-wait (default 0.3 cores)")
    p.add_argument("--tmp", default="/tmp", help="where the temporary folder goes (default /tmp)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (files, logs)")
    args = p.parse_args()
    sizes = "64M,256M" if args.quick else args.sizes
    parts = [parse_size(x) for x in sizes.split(",")]
    args.small, args.large = parts[0], (parts[1] if len(parts) > 1 else 0)
    args.only = {x.strip() for x in args.only.split(",") if x.strip()}
    args.sink_chunks = [int(x) for x in args.sink_chunks.split(",") if x.strip()]
    args.sink_rounds = max(args.rounds, args.sink_rounds)
    if args.rounds < 1 or args.small <= 0:
        p.error("--rounds and the sizes must be positive")
    return Bench(args).main()


if __name__ == "__main__":
    sys.exit(main())
