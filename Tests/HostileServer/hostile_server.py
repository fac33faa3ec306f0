#!/usr/bin/env python3
"""A tus + WebDAV server that misbehaves on purpose, for the hostile-server tests.

It speaks just enough tus (OPTIONS, POST, HEAD, PATCH, DELETE) and WebDAV (PROPFIND, GET
with Range) for the agent to get going, and answers sanely until a test picks a
*scenario* (on the command line or through POST /_control/scenario): then one kind of
reply turns absurd, e.g. `Retry-After: inf`, an `Upload-Offset` beyond the length, a
`Location` on another host, a billion-laughs PROPFIND, an overflowing `Content-Range`,
a `Content-Length` that is no number or not the body's. `no-tus` hides the tus server, so
that an account added by its address uploads with one WebDAV PUT per file.

A second listener (the *decoy*, on another loopback address such as 127.0.0.2) stands for
"another host": it answers nothing useful and records every request and every
`Authorization` header it receives, so a test can prove no credential went there.

Standard library only. Prints `READY <base URL> <decoy URL>` once both listen.
"""

import argparse
import base64
import hashlib
import json
import signal
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE_LOCK = threading.Lock()
STATE = {
    "scenario": {"name": "sane"},
    "requests": [],          # (method, path, Range, If-Range) on the main listener
    "decoy_requests": [],    # (method, path, authorization or None) on the decoy
    "uploads": {},           # id -> {"length": int, "data": bytearray}
    "gets": 0,
}
FILE_BYTES = bytes((i * 7 + 3) % 251 for i in range(100_000))
FILE_ETAG = '"' + hashlib.sha256(FILE_BYTES).hexdigest()[:16] + '"'
FILE_MODIFIED = "Sun, 06 Nov 1994 08:49:37 GMT"
USERS = {}
DECOY_URL = ""


def scenario():
    with STATE_LOCK:
        return dict(STATE["scenario"])


def billion_laughs():
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">' for i in range(1, 10)
    ]
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE d:multistatus [' + "".join(entities) + "]>\n"
        '<d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/alice/data.bin</d:href><d:propstat><d:prop>'
        "<d:getcontentlength>&lol9;</d:getcontentlength></d:prop><d:status>HTTP/1.1 200 OK</d:status>"
        "</d:propstat></d:response></d:multistatus>"
    ).encode()


def deeply_nested(depth=200_000):
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:"><d:response>'
        "<d:href>/dav/alice/data.bin</d:href><d:propstat><d:prop><d:getcontenttype>"
        + "<d:x>" * depth + "</d:x>" * depth
        + "</d:getcontenttype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
    ).encode()


def complete_uploads():
    with STATE_LOCK:
        return [u for u in STATE["uploads"].values() if u["length"] and len(u["data"]) == u["length"]]


def sane_propfind(href):
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:"><d:response>'
        f"<d:href>{href}</d:href><d:propstat><d:prop><d:resourcetype/>"
        f"<d:getcontentlength>{len(FILE_BYTES)}</d:getcontentlength><d:getetag>{FILE_ETAG}</d:getetag>"
        f"<d:getlastmodified>{FILE_MODIFIED}</d:getlastmodified><d:getcontenttype>application/octet-stream</d:getcontenttype>"
        "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
    ).encode()


def checksummed_propfind(href, content, etag):
    """The file's listing as Nextcloud gives it: `content`'s SHA-256 as oc:checksums, `etag`."""
    checksum = f"<oc:checksums><oc:checksum>SHA256:{hashlib.sha256(content).hexdigest()}</oc:checksum></oc:checksums>"
    return (sane_propfind(href).replace(b'xmlns:d="DAV:"', b'xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"')
            .replace(b"<d:resourcetype/>", b"<d:resourcetype/>" + checksum.encode())
            .replace(FILE_ETAG.encode(), etag.encode()))


def folder_propfind(href):
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:"><d:response>'
        f"<d:href>{href}</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop>"
        "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
    ).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hostile/1"

    def log_message(self, fmt, *args):
        pass

    # -- plumbing --------------------------------------------------------------------

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def answer(self, status, headers=(), body=b""):
        self.send_response(status)
        has_length = False
        for name, value in headers:
            self.send_header(name, value)
            has_length |= name.lower() == "content-length"
        if not has_length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def cut_off(self, validator, length, sent):
        """A 200 announcing `length` bytes of the file under `validator` (a header), the
        first `sent` of them, then the line drops."""
        self.send_response(200)
        self.send_header("Content-Length", str(length))
        self.send_header(*validator)
        self.end_headers()
        self.wfile.write(FILE_BYTES[:sent])
        self.hang_up()

    def hang_up(self):
        """Ends the connection without any answer: the client sees a reset."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(2)
        except OSError:
            pass

    def authorized(self):
        header = self.headers.get("Authorization") or ""
        if not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except Exception:
            return False
        return USERS.get(user) == password

    # -- dispatch ----------------------------------------------------------------------

    def handle_any(self):
        if self.server.is_decoy:
            with STATE_LOCK:
                STATE["decoy_requests"].append([self.command, self.path, self.headers.get("Authorization")])
            self.body()
            self.answer(404, body=b"nothing here")
            return
        if self.path.startswith("/_control/"):
            return self.control()
        with STATE_LOCK:
            STATE["requests"].append([self.command, self.path, self.headers.get("Range"), self.headers.get("If-Range")])
        if not self.authorized():
            self.body()
            return self.answer(401, [("WWW-Authenticate", 'Basic realm="hostile"')])
        s = scenario()
        if self.path.startswith("/files/"):
            return self.tus(s)
        if self.path.startswith("/dav/"):
            return self.dav(s)
        self.body()
        self.answer(404)

    def control(self):
        data = self.body()
        if self.path == "/_control/scenario" and self.command == "POST":
            with STATE_LOCK:
                STATE["scenario"] = json.loads(data or b"{}")
            return self.answer(204)
        if self.path == "/_control/stats":
            with STATE_LOCK:
                stats = {"requests": STATE["requests"], "decoy_requests": STATE["decoy_requests"], "scenario": STATE["scenario"]}
            return self.answer(200, [("Content-Type", "application/json")], json.dumps(stats).encode())
        self.answer(404)

    # -- tus ---------------------------------------------------------------------------

    def tus(self, s):
        name, value = s.get("name"), s.get("value", "")
        data = self.body()
        if name == "retry-after":
            return self.answer(int(s.get("status", 503)), [("Retry-After", value)], b"come back later")
        common = [("Tus-Resumable", "1.0.0")]
        if self.command == "OPTIONS":
            if name == "no-tus":
                return self.answer(404)
            headers = common + [("Tus-Version", "1.0.0"), ("Tus-Extension", "creation,termination,expiration")]
            headers.append(("Tus-Max-Size", value if name == "max-size" else "1073741824"))
            return self.answer(204, headers)
        if self.command == "POST" and self.path == "/files/":
            length = int(self.headers.get("Upload-Length") or 0)
            uid = uuid.uuid4().hex
            with STATE_LOCK:
                STATE["uploads"][uid] = {"length": length, "data": bytearray(), "patches": 0}
            location = f"/files/{uid}"
            if name == "location":
                location = value.replace("{decoy}", DECOY_URL).replace("{port}", str(self.server.server_address[1]))
            headers = common + [("Location", location)]
            if name == "expires":
                headers.append(("Upload-Expires", value))
            return self.answer(201, headers)
        uid = self.path[len("/files/"):]
        with STATE_LOCK:
            upload = STATE["uploads"].get(uid)
        if upload is None:
            return self.answer(404, common)
        if self.command == "HEAD":
            offset = value if name in ("head-offset", "head-behind") else str(len(upload["data"]))
            return self.answer(200, common + [("Upload-Offset", offset), ("Upload-Length", str(upload["length"])),
                                              ("Cache-Control", "no-store")])
        if self.command == "PATCH":
            upload["patches"] += 1
            if (name == "head-offset" and upload["patches"] == 1) or (name == "head-behind" and upload["patches"] == 2):
                # Keep the bytes, never confirm them: the next attempt must ask with HEAD.
                upload["data"] += data
                return self.hang_up()
            upload["data"] += data
            offset = value if name == "patch-offset" else str(len(upload["data"]))
            return self.answer(204, common + [("Upload-Offset", offset)])
        if self.command == "DELETE":
            return self.answer(204, common)
        self.answer(405, common)

    # -- WebDAV ------------------------------------------------------------------------

    def dav(self, s):
        name, value = s.get("name"), s.get("value", "")
        self.body()
        if name == "retry-after" and self.command in ("GET", "PUT"):
            return self.answer(int(s.get("status", 503)), [("Retry-After", value)], b"come back later")
        if self.command == "PROPFIND":
            if name == "propfind" and value == "billion-laughs":
                body = billion_laughs()
            elif name == "propfind" and value == "deep":
                body = deeply_nested()
            elif self.path.rstrip("/") == "/dav/alice/data.bin" and name == "unknown-total":
                # No ETag: a resume can only name the file's date.
                body = sane_propfind(self.path).replace(f"<d:getetag>{FILE_ETAG}</d:getetag>".encode(), b"")
            elif self.path.rstrip("/") == "/dav/alice/data.bin" and name == "etag-forms":
                # The file as listed, with its checksum; its GET names it another way.
                body = checksummed_propfind(self.path, FILE_BYTES, FILE_ETAG)
            elif self.path.rstrip("/") == "/dav/alice/data.bin" and name == "changed-after-listing":
                # The file with its checksum, as Nextcloud lists one: first as it was, then as
                # it is once saved again (under the ETag `value`).
                with STATE_LOCK:
                    STATE["listings"] = STATE.get("listings", 0) + 1
                    again = STATE["listings"] > 1
                body = checksummed_propfind(self.path, *((bytes(reversed(FILE_BYTES)), value) if again else (FILE_BYTES, FILE_ETAG)))
            elif self.path.rstrip("/") == "/dav/alice/data.bin":
                body = sane_propfind(self.path)
            elif self.path.rstrip("/") in ("/dav/alice", "/dav/alice/In"):
                body = folder_propfind(self.path)
            elif name == "stored-size" and self.path == "/dav/alice/In/IMG_0001.jpg" and complete_uploads():
                # The upload completed, but the file the server says it made has another size.
                body = sane_propfind(self.path).replace(f"<d:getcontentlength>{len(FILE_BYTES)}".encode(),
                                                        f"<d:getcontentlength>{value}".encode())
            else:
                return self.answer(404)
            return self.answer(207, [("Content-Type", "application/xml; charset=utf-8")], body)
        if self.command == "GET" and self.path == "/dav/alice/data.bin":
            with STATE_LOCK:
                STATE["gets"] += 1
                first = STATE["gets"] == 1
            if name in ("content-range", "other-version"):
                if first or "Range" not in self.headers:
                    # Half the file, then the line drops: the next attempt resumes with Range.
                    return self.cut_off(("ETag", FILE_ETAG), length=len(FILE_BYTES), sent=len(FILE_BYTES) // 2)
                start = int(self.headers["Range"].split("=")[1].rstrip("-"))
                if name == "other-version":
                    # Range honoured, If-Range not: the rest of another version of the file,
                    # under that version's ETag (`value`).
                    other = bytes(reversed(FILE_BYTES))
                    return self.answer(206, [("Content-Range", f"bytes {start}-{len(other) - 1}/{len(other)}"), ("ETag", value)],
                                       other[start:])
                return self.answer(206, [("Content-Range", value), ("ETag", FILE_ETAG)], FILE_BYTES[start:])
            if name == "etag-forms":
                # The listed version under another ETag, damaged on the way: one byte flipped.
                damaged = bytearray(FILE_BYTES)
                damaged[1000] ^= 0xFF
                return self.answer(200, [("ETag", value)], bytes(damaged))
            if name == "changed-after-listing":
                # Saved again by someone between the listing and this GET: another version.
                return self.answer(200, [("ETag", value), ("Last-Modified", FILE_MODIFIED)], bytes(reversed(FILE_BYTES)))
            if name == "unknown-total":
                if "Range" not in self.headers:
                    # Half the file, under its date only, then the line drops.
                    return self.cut_off(("Last-Modified", FILE_MODIFIED), length=len(FILE_BYTES), sent=len(FILE_BYTES) // 2)
                # A quarter of the file at a time, its whole size left unsaid (`/*`).
                start = int(self.headers["Range"].split("=")[1].rstrip("-"))
                end = min(start + len(FILE_BYTES) // 4, len(FILE_BYTES))
                return self.answer(206, [("Content-Range", f"bytes {start}-{end - 1}/*"), ("Last-Modified", FILE_MODIFIED)],
                                   FILE_BYTES[start:end])
            if name == "content-length":
                # The file's own ETag with a length no sane server sends, or one that does
                # not match the body (`sent` bytes of it); the line then drops.
                return self.cut_off(("ETag", FILE_ETAG), length=value, sent=int(s.get("sent", len(FILE_BYTES))))
            return self.answer(200, [("ETag", FILE_ETAG), ("Last-Modified", FILE_MODIFIED)], FILE_BYTES)
        self.answer(404)

    do_GET = do_HEAD = do_POST = do_PATCH = do_DELETE = do_OPTIONS = do_PROPFIND = do_PUT = do_MKCOL = handle_any


def main():
    global DECOY_URL
    # A parent that spawned us from a thread with signals blocked (Foundation's Process
    # does) passes that mask on; SIGTERM would then never arrive.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--decoy-host", default="127.0.0.2")
    parser.add_argument("--user", action="append", default=[], help="USER:PASSWORD (repeatable)")
    args = parser.parse_args()
    for spec in args.user or ["alice:wonderland"]:
        user, _, password = spec.partition(":")
        USERS[user] = password

    main_server = ThreadingHTTPServer((args.host, args.port), Handler)
    main_server.is_decoy = False
    main_server.daemon_threads = True
    decoy = ThreadingHTTPServer((args.decoy_host, 0), Handler)
    decoy.is_decoy = True
    decoy.daemon_threads = True
    DECOY_URL = f"http://{args.decoy_host}:{decoy.server_address[1]}"
    threading.Thread(target=decoy.serve_forever, daemon=True).start()
    print(f"READY http://{args.host}:{main_server.server_address[1]} {DECOY_URL}", flush=True)
    try:
        main_server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
