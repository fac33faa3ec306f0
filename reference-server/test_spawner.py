"""The spawner forks servers that behave as server.py started on its own."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))


def ask(path: str, argv: list[str]):
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    conn.sendall((json.dumps({"argv": argv}) + "\n").encode())
    lines = conn.makefile("rb")
    pid = int(lines.readline().split()[1])
    return conn, lines, pid, lines.readline().decode().strip()


def test_forked_servers_answer_stop_on_sigterm_and_end_with_the_spawner(tmp_path):
    path = str(tmp_path / "spawner")
    spawner = subprocess.Popen([sys.executable, os.path.join(HERE, "spawner.py"), path], stdout=subprocess.PIPE)
    try:
        assert spawner.stdout.readline() == b"READY\n"
        servers = []
        for i, face in enumerate(("tus", "nextcloud")):
            conn, lines, pid, ready = ask(path, ["--data", str(tmp_path / f"data{i}"), "--host", "127.0.0.1", "--port", "0",
                                                 "--user", "alice:wonderland", "--face", face])
            assert ready.startswith("READY http://127.0.0.1:"), ready
            assert requests.get(ready.split()[1] + "/_control/stats", timeout=10).status_code == 200
            servers.append((conn, lines, pid))
        # SIGTERM ends one: its connection ends, and the spawner reaps it (no zombie).
        conn, lines, pid = servers.pop(0)
        os.kill(pid, signal.SIGTERM)
        assert lines.read() == b""
        deadline = time.monotonic() + 5
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not os.path.exists(f"/proc/{pid}"), "the stopped server was not reaped"
        # The spawner's end takes the others with it.
        spawner.kill()
        spawner.wait(10)
        conn, lines, pid = servers.pop(0)
        assert lines.read() == b"", "the server outlived its spawner"
    finally:
        if spawner.poll() is None:
            spawner.kill()
