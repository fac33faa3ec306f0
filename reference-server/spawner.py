#!/usr/bin/env python3
"""Starts reference servers by forking a process that has already imported everything.

A test suite starts a few hundred servers; each would spend half a second of CPU importing
uvicorn, FastAPI, wsgidav and the rest before answering. This process pays that once:

  python reference-server/spawner.py SOCKET

listens on the Unix socket SOCKET and prints `READY` on stdout. Each connection sends one
line of JSON, `{"argv": [...]}` (server.py's arguments), and becomes the new server's
standard output: the server writes `PID <n>` on it, then what server.py prints
(`READY http://HOST:PORT`). The server is stopped with signals to that PID, as if it had
been started on its own; the connection ends when it exits. The spawner ends when the
process that started it does, and its servers with it (SIGTERM).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# What server.py and the modules it imports lazily load, so that each server finds it loaded.
import server  # noqa: E402
import dav_app  # noqa: E402,F401
import nextcloud_app  # noqa: E402,F401
import uvicorn.lifespan.off  # noqa: E402,F401
import uvicorn.loops.asyncio  # noqa: E402,F401
import uvicorn.protocols.http.h11_impl  # noqa: E402,F401

PR_SET_PDEATHSIG = 1


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve_one(conn: socket.socket, listener: socket.socket) -> None:
    """In the forked child: become the server the request asks for."""
    try:
        listener.close()
        request = json.loads(conn.makefile("rb").readline())
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        # Ends with the spawner (whose only thread forked it).
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(conn.fileno(), 1)
        os.close(null)
        conn.close()
        sys.stdout = os.fdopen(1, "w", buffering=1)
        print(f"PID {os.getpid()}", flush=True)
        gc.enable()
        code = server.main(request["argv"])
    except BaseException as e:  # noqa: BLE001 - the child must never return to the accept loop
        print(f"spawner: the server failed: {e!r}", file=sys.stderr, flush=True)
        code = 1
    finally:
        sys.stdout.flush()
    os._exit(code or 0)


def main() -> int:
    path = sys.argv[1]
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    signal.signal(signal.SIGCHLD, lambda *_: reap())
    # What was imported stays: the children share it and the collector leaves it alone.
    gc.collect()
    gc.freeze()
    print("READY", flush=True)
    while os.getppid() == parent:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        conn.settimeout(None)
        if os.fork() == 0:
            serve_one(conn, listener)
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
