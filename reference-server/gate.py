"""The gate: the outermost ASGI app, in front of tuspyserver and wsgidav.

Order for every /files/ and /dav/ request:
  1. Basic auth (401 before a single body byte is read or stored);
  2. WebDAV: the account may only touch /dav/<own name>/ (403);
  3. fault switches: a `status` fault answers here, before storage;
  4. tus checks the libraries lack (creation rules, quota, per-account PATCH
     bound, one PATCH per upload, Upload-Checksum);
  5. the library app, with reset/stall faults applied to the byte stream.
Uvicorn (h11) reads and discards the rest of a request body when we answer
early, so a client sending a big PATCH still reads our 401/429/503.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import logging
import tempfile
import time
from typing import Optional
from urllib.parse import unquote, urlsplit

import conditions
import control
import tus_app as tus
from faults import BodyTap, Fault, ResponseTap, ThrottledSend, abort_connection, send_fault_response
from state import ActivePatch, State

log = logging.getLogger("reference-server")

TUS_VERSION = "1.0.0"
TUS_EXTENSIONS = "creation,expiration,termination,checksum"
CHECKSUM_ALGORITHMS = {"md5": hashlib.md5, "sha1": hashlib.sha1,
                       "sha256": hashlib.sha256, "sha512": hashlib.sha512}
REALM = 'Basic realm="instant-upload"'
TAKEOVER_WAIT = 5.0  # seconds a new PATCH waits for the old one on the same upload


def header(scope, name: bytes) -> Optional[str]:
    for k, v in scope["headers"]:
        if k == name:
            return v.decode("latin-1")
    return None


def with_header(headers: list, name: bytes, value: Optional[str]) -> list:
    """Replace (or with value None remove) a header in an ASGI header list."""
    out = [(k, v) for k, v in headers if k.lower() != name]
    if value is not None:
        out.append((name, value.encode("latin-1")))
    return out


async def respond(send, status: int, body: str = "", headers: Optional[dict] = None) -> None:
    data = body.encode()
    hdrs = [(k.lower().encode(), str(v).encode("latin-1")) for k, v in (headers or {}).items()]
    hdrs += [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": data})


class Recorder:
    """Remembers the response status for the request log."""

    def __init__(self, send):
        self.send = send
        self.status = 0

    async def __call__(self, message):
        if message["type"] == "http.response.start":
            self.status = message["status"]
        await self.send(message)


class OnResponseStart:
    """Lets a callback edit the status line/headers before they go out."""

    def __init__(self, send, edit):
        self.send, self.edit = send, edit

    async def __call__(self, message):
        if message["type"] == "http.response.start":
            message = dict(message, headers=self.edit(message["status"], list(message.get("headers", []))))
        await self.send(message)


class Gate:
    def __init__(self, state: State, tus_asgi, dav_asgi, face=None):
        self.state = state
        self.tus_app = tus_asgi
        self.dav_app = dav_asgi
        self.face = face  # the Nextcloud face (nextcloud_app.py), when serving it

    # --- entry ------------------------------------------------------------------
    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        scope = dict(scope)
        scope["iu.uvicorn_send"] = send  # needed to RST the connection
        rec = Recorder(send)
        t0 = time.monotonic()
        try:
            await self.route(scope, receive, rec)
        finally:
            client = scope.get("client") or ("-", 0)
            log.info("%s %s %s %s -> %s %.3fs", client[0], scope.get("iu.user", "-"),
                     scope["method"], scope["path"], rec.status or "no response", time.monotonic() - t0)

    async def route(self, scope, receive, send):
        path, method = scope["path"], scope["method"]
        if path == "/_control" or path.startswith("/_control/"):
            return await control.handle(self.state, scope, receive, send, self.face)
        if path == "/" and method in ("GET", "HEAD"):
            return await respond(send, 200, control.HOME_PAGE)
        if self.face is not None and await self.face.route(self, scope, receive, send):
            return
        is_tus = path == "/files" or path.startswith("/files/")
        is_dav = path == "/dav" or path.startswith("/dav/")
        if is_tus and self.state.settings.face == "webdav":
            is_tus = False  # the plain-WebDAV face offers no tus
        if not (is_tus or is_dav):
            return await respond(send, 404, "not found")
        self.state.count_request(method, scope.get("client"))

        tus_headers = {"Tus-Resumable": TUS_VERSION} if is_tus else {}
        user = self.authenticate(scope)
        if user is None:
            return await respond(send, 401, "authentication required",
                                 {"WWW-Authenticate": REALM, **tus_headers})
        scope["iu.user"] = user

        if is_dav:
            denied = self.dav_access_error(scope, user)
            if denied:
                return await respond(send, 403, denied)

        fault = self.state.take_fault(method, path, user)
        if fault is not None and fault.kind == "status":
            log.info("fault: %s %s -> %s", method, path, fault.status)
            return await send_fault_response(fault, send)
        if fault is not None:
            log.info("fault: %s %s -> %s after %d bytes", method, path, fault.kind, fault.limit)

        if is_dav:
            return await self.dav(scope, receive, send, user, fault)
        return await self.tus(scope, receive, send, user, fault)

    def authenticate(self, scope) -> Optional[str]:
        value = header(scope, b"authorization")
        if not value or value[:6].lower() != "basic ":
            return None
        try:
            decoded = base64.b64decode(value[6:].strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        name, sep, password = decoded.partition(":")
        expected = self.state.settings.users.get(name)
        if not sep or expected is None:
            return None
        if self.face is not None and self.face.app_password_ok(name, password):
            return name  # an app password from Login Flow v2
        if not hmac.compare_digest(password.encode(), expected.encode()):
            return None
        return name

    # --- shared: run a library app with reset/stall faults ----------------------
    async def run_inner(self, app, scope, receive, send, fault: Optional[Fault],
                        cancel: Optional[asyncio.Event] = None, on_bytes=lambda n: None):
        raw_send = scope["iu.uvicorn_send"]
        stop = (cancel, self.state.shutting_down)
        if fault is not None and scope["method"] == "GET":
            if fault.ignore_range:
                # A server that does not do ranges: the whole file, 200, whatever was asked.
                scope = dict(scope, headers=[(k, v) for k, v in scope["headers"] if k.lower() not in (b"range", b"if-range")])
            if fault.kind == "whole-file":
                return await app(scope, receive, send)
            if fault.kind == "throttle":
                return await app(scope, receive, ThrottledSend(send, fault.bytes_per_second, lambda: abort_connection(raw_send),
                                                               stop[1:], release=fault.release))
            tap_send = ResponseTap(send, fault, lambda: abort_connection(raw_send), stop[1:])
            return await app(scope, receive, tap_send)
        tap = BodyTap(receive, on_bytes=on_bytes, fault=fault, cancels=stop)
        # A reset fault never lets an answer out, even when the body was
        # shorter than reset_after_bytes (then all of it is stored and only
        # the response is lost); nor does a PATCH stopped by a takeover.
        resetting = fault is not None and fault.kind == "reset"
        dropped = False

        async def guarded_send(message):
            nonlocal dropped
            if message["type"] == "http.response.start" and (tap.cut or resetting):
                dropped = True
            if not dropped:
                await send(message)

        await app(scope, tap, guarded_send)
        if tap.cut or dropped:
            await abort_connection(raw_send)

    # --- WebDAV -----------------------------------------------------------------
    def dav_access_error(self, scope, user: str) -> Optional[str]:
        own = f"/dav/{user}"
        path = scope["path"]
        if not (path == own or path.startswith(own + "/")):
            return f"account {user!r} may only access {own}/"
        dest = header(scope, b"destination")
        if dest is not None:
            dpath = unquote(urlsplit(dest).path)
            if not (dpath == own or dpath.startswith(own + "/")):
                return f"Destination must be inside {own}/"
        return None

    async def dav(self, scope, receive, send, user, fault):
        if scope["method"] == "PUT":
            available = self.state.available_bytes(user)
            length = header(scope, b"content-length")
            if available is not None and length and length.isdigit() and int(length) > available:
                return await respond(send, 507, f"insufficient storage: {available} bytes available")
            self.state.counters.file_put(scope["path"][len(f"/dav/{user}/"):])
        elif scope["method"] == "MOVE":
            dest = header(scope, b"destination")
            if dest is not None:
                dpath = unquote(urlsplit(dest).path)
                disk = self.state.tree_dir(user).joinpath(*dpath[len(f"/dav/{user}/"):].split("/"))
                refused = conditions.destination_refused(header(scope, b"if"), dpath, disk)
                if refused:
                    return await respond(send, refused, "the destination is not the version the If header names" if refused == 412 else "bad If header")
            self.state.counters.move()
        counted = self.state.counters.file_body if scope["method"] == "PUT" else (lambda n: None)

        def drop_second_date(status, headers):
            # uvicorn adds Date itself; wsgidav's copy would make two
            return [(k, v) for k, v in headers if k.lower() != b"date"]
        await self.run_inner(self.dav_app, scope, receive, OnResponseStart(send, drop_second_date), fault, on_bytes=counted)

    # --- tus --------------------------------------------------------------------
    async def tus(self, scope, receive, send, user, fault):
        method = scope["method"]
        rest = scope["path"][len("/files"):].strip("/")
        uid = rest or None
        if uid is not None and ("/" in uid or uid.startswith(".")):
            return await respond(send, 404, "no such upload", {"Tus-Resumable": TUS_VERSION})

        if method == "POST" and uid is None:
            return await self.tus_create(scope, receive, send, user, fault)
        if method == "PATCH" and uid is not None:
            return await self.tus_patch(scope, receive, send, user, uid, fault)
        if method == "DELETE" and uid is not None:
            await self.take_over(user, uid)  # terminate a running PATCH first
            await self.run_inner(self.tus_app, scope, receive, send, fault)
            if not (self.state.tus_dir(user) / f"{uid}.info").exists():
                tus.remove_upload_files(self.state, user, uid)
            return
        if method == "HEAD" and uid is not None:
            def add_expires(status, headers):
                if status == 200:
                    info = tus.read_info(self.state.tus_dir(user) / f"{uid}.info") or {}
                    headers = with_header(headers, b"upload-expires", info.get("expires"))
                return headers
            return await self.run_inner(self.tus_app, scope, receive, OnResponseStart(send, add_expires), fault)
        if method == "OPTIONS":
            # tuspyserver advertises creation-with-upload (which breaks it),
            # defer-length and concatenation; we offer what works end to end.
            def capabilities(status, headers):
                if not self.state.settings.checksums:
                    return with_header(headers, b"tus-extension", TUS_EXTENSIONS.replace(",checksum", ""))
                headers = with_header(headers, b"tus-extension", TUS_EXTENSIONS)
                return with_header(headers, b"tus-checksum-algorithm", ",".join(CHECKSUM_ALGORITHMS))
            return await self.run_inner(self.tus_app, scope, receive, OnResponseStart(send, capabilities), fault)
        await self.run_inner(self.tus_app, scope, receive, send, fault)

    async def tus_create(self, scope, receive, send, user, fault):
        hdr = {"Tus-Resumable": TUS_VERSION}
        if header(scope, b"upload-concat") is not None or header(scope, b"upload-defer-length") is not None:
            return await respond(send, 400, "concatenation and defer-length are not supported", hdr)
        body_len = header(scope, b"content-length")
        if (body_len not in (None, "0")) or header(scope, b"transfer-encoding") is not None:
            return await respond(send, 400, "creation-with-upload is not supported; send the data with PATCH", hdr)
        length = header(scope, b"upload-length")
        if length is None or not length.isdigit():
            return await respond(send, 400, "Upload-Length (a non-negative integer) is required", hdr)
        length = int(length)
        try:
            meta = tus.parse_metadata(header(scope, b"upload-metadata") or "")
            if not meta.get("path") or not meta.get("filename"):
                raise ValueError("Upload-Metadata must contain path and filename")
            rel = tus.clean_rel_path(meta["path"])
        except ValueError as e:
            return await respond(send, 400, str(e), hdr)
        if length > self.state.settings.max_size:
            return await respond(send, 413, f"Upload-Length exceeds Tus-Max-Size {self.state.settings.max_size}", hdr)
        if not tus.parent_is_folder(self.state, user, rel):
            return await respond(send, 409, "target folder does not exist", hdr)
        available = self.state.available_bytes(user)
        if available is not None and length > available:
            return await respond(send, 507, f"insufficient storage: {available} bytes available", hdr)
        if not meta.get("filetype"):
            # tuspyserver's HEAD answers 400 when filetype is missing
            meta["filetype"] = "application/octet-stream"
            scope = dict(scope, headers=with_header(scope["headers"], b"upload-metadata", tus.encode_metadata(meta)))

        def fix_expiry(status, headers):
            location = dict(headers).get(b"location")
            if status == 201 and location:
                new_uid = location.decode("latin-1").rstrip("/").rsplit("/", 1)[-1]
                headers = with_header(headers, b"upload-expires", tus.set_expiry(self.state, user, new_uid))
            return headers
        await self.run_inner(self.tus_app, scope, receive, OnResponseStart(send, fix_expiry), fault)

    async def take_over(self, user: str, uid: str) -> bool:
        """Stop a PATCH still running on this upload (e.g. its client vanished
        without the server noticing) and wait for it to store what it has."""
        key = (user, uid)
        while (old := self.state.active.get(key)) is not None:
            old.cancel.set()
            try:
                await asyncio.wait_for(old.done.wait(), TAKEOVER_WAIT)
            except asyncio.TimeoutError:
                return False
        return True

    async def tus_patch(self, scope, receive, send, user, uid, fault):
        hdr = {"Tus-Resumable": TUS_VERSION}
        checksum = header(scope, b"upload-checksum")
        if not self.state.settings.checksums:
            checksum = None  # not offered, so not checked (as tuspyserver alone does)
        if checksum is not None:
            algo, _, expected = checksum.strip().partition(" ")
            if algo.lower() not in CHECKSUM_ALGORITHMS or not expected:
                if fault:
                    self.state.give_back_fault(fault)
                return await respond(send, 400, f"unsupported Upload-Checksum algorithm {algo!r}", hdr)
        # tuspyserver would block the whole event loop on its file lock if two
        # PATCHes hit one upload, so we never let that happen
        if not await self.take_over(user, uid):
            if fault:
                self.state.give_back_fault(fault)
            return await respond(send, 423, "another PATCH on this upload is still running", hdr)
        if not self.state.try_enter_patch(user):
            if fault:
                self.state.give_back_fault(fault)
            return await respond(send, 429, "too many concurrent uploads for this account",
                                 {"Retry-After": "1", **hdr})
        me = ActivePatch()
        self.state.active[(user, uid)] = me
        try:
            tus.reconcile(self.state, user, uid)
            problem = self.completion_problem(scope, user, uid)
            if problem is not None:
                if fault:
                    self.state.give_back_fault(fault)
                return await respond(send, 409, problem, hdr)

            def refresh_expiry(status, headers):
                # Each PATCH moves the expiry to now + --expire-seconds (the tus
                # expiration extension: Upload-Expires on every PATCH reply).
                if status == 204:
                    headers = with_header(headers, b"upload-expires", tus.set_expiry(self.state, user, uid))
                return headers
            send = OnResponseStart(send, refresh_expiry)
            if checksum is None or (fault is not None and fault.kind == "reset"):
                # (a reset fault stores its first N bytes, checksum or not)
                return await self.run_inner(self.tus_app, scope, receive, send, fault,
                                            cancel=me.cancel, on_bytes=self.state.count_patch_bytes)
            await self.checked_patch(scope, receive, send, fault, me, algo.lower(), expected.strip())
        finally:
            self.state.leave_patch(user)
            me.done.set()
            if self.state.active.get((user, uid)) is me:
                del self.state.active[(user, uid)]

    def completion_problem(self, scope, user: str, uid: str) -> Optional[str]:
        """A PATCH that would complete the upload, while its file cannot be placed
        (parent folder gone, a folder in the way), is refused before a byte is
        stored: 409 with the reason, as a real server refuses to finish it."""
        info = tus.read_info(self.state.tus_dir(user) / f"{uid}.info")
        offset, length = header(scope, b"upload-offset"), header(scope, b"content-length")
        if info is None or info.get("size") is None or not (offset or "").isdigit() or not (length or "").isdigit():
            return None  # tuspyserver answers those itself
        if int(offset) + int(length) != info["size"] or int(offset) != info.get("offset"):
            return None
        try:
            rel = tus.clean_rel_path((info.get("metadata") or {}).get("path", ""))
        except ValueError:
            return None
        return tus.target_problem(self.state, user, rel)

    async def checked_patch(self, scope, receive, send, fault, me, algo, expected):
        """Upload-Checksum: tuspyserver ignores it, so the body is spooled to a
        temp file and hashed first; only a matching body is handed over, so a
        mismatch (460) or a broken-off body leaves the offset untouched."""
        tap = BodyTap(receive, on_bytes=self.state.count_patch_bytes, fault=fault,
                      cancels=(me.cancel, self.state.shutting_down))
        digest = CHECKSUM_ALGORITHMS[algo]()
        with tempfile.SpooledTemporaryFile(max_size=4 << 20, dir=self.state.spool_dir) as spool:
            while True:
                msg = await tap()
                if msg["type"] != "http.request":
                    if tap.cut:
                        await abort_connection(scope["iu.uvicorn_send"])
                    return  # client gone: nothing stored
                spool.write(msg["body"])
                digest.update(msg["body"])
                if not msg.get("more_body"):
                    break
            if not hmac.compare_digest(base64.b64encode(digest.digest()).decode(), expected):
                return await respond(send, 460, "checksum mismatch", {"Tus-Resumable": TUS_VERSION})
            spool.seek(0)

            async def replay():
                chunk = spool.read(1 << 20)
                if chunk:
                    return {"type": "http.request", "body": chunk, "more_body": True}
                if replay.ended:
                    return await tap()  # waits for a disconnect
                replay.ended = True
                return {"type": "http.request", "body": b"", "more_body": False}
            replay.ended = False
            await self.tus_app(scope, replay, send)
