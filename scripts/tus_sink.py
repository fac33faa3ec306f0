#!/usr/bin/env python3
"""A minimal tus 1.0 sink that discards what it receives, for benchmarks.

It answers just enough of tus (core, creation, termination) for a client to upload
through it, so a client's own ceiling shows rather than a real server's:

    OPTIONS  /files/      204, Tus-Version 1.0.0, Tus-Extension creation,termination
    POST     /files/      201, Location: /files/<n>   (needs Upload-Length)
    HEAD     /files/<n>   200, Upload-Offset, Upload-Length
    PATCH    /files/<n>   takes exactly Content-Length bytes off the socket and discards
                          them, 204 with the new Upload-Offset (409 on an offset mismatch)
    DELETE   /files/<n>   204
    GET      /_stats      JSON: uploads, bytes received, PATCH count (for checks)

HTTP/1.1 with keep-alive, one thread per connection, raw sockets. A body is taken with
recv(MSG_TRUNC), with which Linux drops TCP data in the kernel instead of copying it out,
so the sink takes as little as it can of the cores the client it measures needs (copying
it out, the sink took 0.25 s of CPU per GiB beside the agent, 0.20 s now, and curl's own
send of 1 GiB into it 0.71 s, 0.46 s now). Authentication is ignored. Chunked bodies are refused (400), like the
reference server. Loopback only by default.

    python3 scripts/tus_sink.py [--host 127.0.0.1] [--port 0]
    # prints: READY http://127.0.0.1:PORT   then serves until SIGTERM/SIGINT
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import threading

RECV_BUFFER = 4 * 1024 * 1024
# Linux: TCP data received with this flag is consumed, not copied into the buffer.
DISCARD = getattr(socket, "MSG_TRUNC", 0)
MAX_HEADER = 64 * 1024


class Uploads:
    """Upload lengths and offsets, shared by the connection threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.next_id = 1
        self.items: dict[str, list[int]] = {}  # id -> [length, offset]
        self.bytes_received = 0
        self.patches = 0
        self.completed = 0

    def create(self, length: int) -> str:
        with self.lock:
            uid = str(self.next_id)
            self.next_id += 1
            self.items[uid] = [length, 0]
            if length == 0:
                self.completed += 1
            return uid

    def get(self, uid: str):
        with self.lock:
            item = self.items.get(uid)
            return None if item is None else tuple(item)

    def advance(self, uid: str, start: int, count: int) -> int | None:
        with self.lock:
            item = self.items.get(uid)
            if item is None:
                return None
            item[1] = start + count
            self.bytes_received += count
            self.patches += 1
            if item[1] == item[0]:
                self.completed += 1
            return item[1]

    def delete(self, uid: str) -> bool:
        with self.lock:
            return self.items.pop(uid, None) is not None

    def stats(self) -> dict:
        with self.lock:
            return {"uploads": len(self.items), "completed": self.completed,
                    "bytes_received": self.bytes_received, "patches": self.patches}


class BadRequest(Exception):
    pass


class Connection:
    def __init__(self, sock: socket.socket, uploads: Uploads) -> None:
        self.sock = sock
        self.uploads = uploads
        self.pending = bytearray()  # bytes received past the last header block
        self.buffer = bytearray(RECV_BUFFER)
        self.view = memoryview(self.buffer)

    # -- reading -----------------------------------------------------------------

    def read_head(self):
        """Returns (method, target, headers) or None at a clean end of the connection."""
        while True:
            end = self.pending.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self.pending) > MAX_HEADER:
                raise BadRequest("header too large")
            chunk = self.sock.recv(65536)
            if not chunk:
                if self.pending:
                    raise ConnectionError("connection closed inside a header")
                return None
            self.pending += chunk
        head = bytes(self.pending[:end]).decode("latin-1")
        del self.pending[:end + 4]
        lines = head.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise BadRequest("bad request line")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise BadRequest("bad header line")
            headers[name.strip().lower()] = value.strip()
        return parts[0], parts[1], parts[2], headers

    def discard_body(self, length: int) -> int:
        """Reads and drops exactly `length` body bytes; returns how many arrived."""
        got = min(len(self.pending), length)
        if got:
            del self.pending[:got]
        view, sock, size = self.view, self.sock, len(self.buffer)
        while got < length:
            n = sock.recv_into(view, min(size, length - got), DISCARD)
            if n == 0:
                break
            got += n
        return got

    # -- writing -----------------------------------------------------------------

    def send(self, status: str, headers: list[tuple[str, str]] = (), body: bytes = b"", close: bool = False) -> None:
        lines = [f"HTTP/1.1 {status}", "Tus-Resumable: 1.0.0", f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in headers]
        if close:
            lines.append("Connection: close")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    # -- the exchange ------------------------------------------------------------

    def serve(self) -> None:
        try:
            while True:
                try:
                    request = self.read_head()
                except BadRequest as e:
                    self.send("400 Bad Request", body=str(e).encode(), close=True)
                    return
                if request is None:
                    return
                method, target, version, headers = request
                keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                if not self.handle(method, target.split("?", 1)[0], headers, keep):
                    return
                if not keep:
                    return
        except (ConnectionError, OSError):
            return
        finally:
            try:
                self.sock.close()
            except OSError:
                pass

    def handle(self, method: str, path: str, headers: dict[str, str], keep: bool) -> bool:
        """Answers one request; False when the connection must end."""
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self.send("400 Bad Request", body=b"chunked bodies are not accepted", close=True)
            return False
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            self.send("400 Bad Request", body=b"bad Content-Length", close=True)
            return False
        close = not keep
        uid = path[len("/files/"):] if path.startswith("/files/") else None

        if method == "PATCH" and uid:
            item = self.uploads.get(uid)
            try:
                offset = int(headers.get("upload-offset", ""))
            except ValueError:
                offset = -1
            ok = (item is not None and offset == item[1]
                  and headers.get("content-type", "") == "application/offset+octet-stream"
                  and offset + length <= item[0])
            if not ok:
                # Refuse before the body; the connection cannot carry on without reading it.
                status = "404 Not Found" if item is None else ("409 Conflict" if offset != item[1] else "400 Bad Request")
                self.send(status, close=True)
                return False
            if headers.get("expect", "").lower() == "100-continue":
                self.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            got = self.discard_body(length)
            new_offset = self.uploads.advance(uid, offset, got)
            if got < length:
                return False  # the client went away mid-body; it will HEAD and resume
            self.send("204 No Content", [("Upload-Offset", str(new_offset))], close=close)
            return True

        # Everything else has no body worth keeping.
        if length:
            if self.discard_body(length) < length:
                return False

        if method == "OPTIONS":
            self.send("204 No Content", [("Tus-Version", "1.0.0"), ("Tus-Extension", "creation,termination"),
                                         ("Tus-Max-Size", str(1 << 40))], close=close)
        elif method == "POST" and path.rstrip("/") == "/files":
            try:
                upload_length = int(headers.get("upload-length", ""))
                if upload_length < 0:
                    raise ValueError
            except ValueError:
                self.send("400 Bad Request", body=b"Upload-Length required", close=close)
                return keep
            if length:
                self.send("400 Bad Request", body=b"creation-with-upload is not offered", close=close)
                return keep
            new = self.uploads.create(upload_length)
            host = headers.get("host", "127.0.0.1")
            self.send("201 Created", [("Location", f"http://{host}/files/{new}")], close=close)
        elif method == "HEAD" and uid:
            item = self.uploads.get(uid)
            if item is None:
                self.send("404 Not Found", close=close)
            else:
                self.send("200 OK", [("Upload-Offset", str(item[1])), ("Upload-Length", str(item[0])),
                                     ("Cache-Control", "no-store")], close=close)
        elif method == "DELETE" and uid:
            self.send("204 No Content" if self.uploads.delete(uid) else "404 Not Found", close=close)
        elif method == "GET" and path == "/_stats":
            body = json.dumps(self.uploads.stats()).encode()
            self.send("200 OK", [("Content-Type", "application/json")], body=body, close=close)
        else:
            self.send("404 Not Found", close=close)
        return keep


def serve(host: str, port: int) -> None:
    uploads = Uploads()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(64)
    print(f"READY http://{host}:{listener.getsockname()[1]}", flush=True)

    def stop(*_):
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        sock, _ = listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=Connection(sock, uploads).serve, daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    serve(args.host, args.port)


if __name__ == "__main__":
    main()
