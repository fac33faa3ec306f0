"""The Nextcloud face (`--face nextcloud`): what a Nextcloud, an ownCloud 10 or an
ownCloud Infinite Scale server shows a desktop client, under an optional path
prefix (`--path-prefix /nextcloud`):

  GET  /status.php                               anonymous; productname, version, maintenance
  GET  /ocs/v1.php/cloud/capabilities?format=json  needs `OCS-APIRequest: true`
  GET  /ocs/v1.php/cloud/user?format=json        Basic auth; the user id (differs from the login)
  /index.php/login/v2...                         Login Flow v2 (login_flow.py)
  /remote.php/dav/files/<id>/                    WebDAV (wsgidav) on the account's tree
  /remote.php/dav/uploads/<id>/                  chunked upload v2 (chunked_uploads.py)
  POST /remote.php/dav/files/<id>/<folder>/      with `--product ocis` only: tus creation as
                                                 oCIS does it (`filename` in Upload-Metadata);
                                                 the upload then lives at /files/<upload id>

Like Nextcloud: a PUT or MOVE honours `X-OC-Mtime` (answering `X-OC-MTime:
accepted`), stores `OC-Checksum` and reports the stored value as oc:checksums
(nothing is computed), and overwrites an existing file. In maintenance mode
(POST /_control/maintenance) status.php says so and everything else answers 503.

A PUT to the files URL is Nextcloud's too, not wsgidav's: `If-None-Match` and
`If-Match` are checked before the body is read (412), the body goes to a part file
that is renamed over the name only when whole (a broken PUT leaves nothing under the
name), and the reply carries ETag, OC-ETag and OC-FileId (with `--reply-etags-differ`,
an ETag of another form than the listing's, as some servers send). A PUT with
`If-None-Match: *` that finds a file put at the name while its body arrived is
refused too (412) and replaces nothing: Nextcloud's file locking refuses one of two
PUTs to one name at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import uuid
from typing import Optional
from urllib.parse import parse_qs, quote, unquote, urlsplit

import tus_app as tus
from chunked_uploads import ChunkedUploads, UploadError, chunk_number, multistatus
from counters import Counters
import conditions
from dav_app import OC_CHECKSUM, OC_CHECKSUMS, AccountFile, AccountProvider, build_dav_app
from login_flow import LoginFlows
from wsgidav.dav_error import HTTP_NOT_FOUND, DAVError
from wsgidav.util import etree

PRODUCTS = {
    # product: (status.php fields, capabilities version)
    "nextcloud": ({"installed": True, "maintenance": False, "needsDbUpgrade": False, "version": "28.0.4.1",
                   "versionstring": "28.0.4", "edition": "", "productname": "Nextcloud", "extendedSupport": False},
                  {"major": 28, "minor": 0, "micro": 4, "string": "28.0.4", "edition": "", "extendedSupport": False}),
    # ownCloud 10 writes its booleans as strings
    "owncloud": ({"installed": "true", "maintenance": "false", "needsDbUpgrade": "false", "version": "10.13.4.2",
                  "versionstring": "10.13.4", "edition": "Community", "productname": "ownCloud", "product": "ownCloud"},
                 {"major": 10, "minor": 13, "micro": 4, "string": "10.13.4", "edition": "Community"}),
    "ocis": ({"installed": True, "maintenance": False, "needsDbUpgrade": False, "version": "10.11.0.0",
              "versionstring": "10.11.0", "edition": "Community", "productname": "Infinite Scale",
              "product": "Infinite Scale", "productversion": "5.0.5"},
             {"major": 10, "minor": 11, "micro": 0, "string": "10.11.0", "edition": "Community",
              "product": "Infinite Scale", "productversion": "5.0.5"}),
}
MAINTENANCE_TEXT = "System is in maintenance mode."


def user_id(name: str) -> str:
    """The id Nextcloud puts in WebDAV paths, deliberately not the login name
    (as with LDAP accounts), and with a space, so that clients must encode it."""
    return f"{name} {hashlib.sha256(name.encode()).hexdigest()[:6]}"


async def receive_into(path, receive) -> Optional[int]:
    """Writes a request's body to `path` as it arrives: the bytes written, or None when the
    client went away before the end (the caller drops the file)."""
    got = 0
    with open(path, "wb") as f:
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return None
            body = msg.get("body", b"")
            f.write(body)
            got += len(body)
            if not msg.get("more_body"):
                return got


class StoredChecksums:
    """OC-Checksum values a client sent, valid while the file is unchanged."""

    def __init__(self):
        self._lock = threading.Lock()
        self._sums: dict[str, tuple[str, int, int, int]] = {}

    def store(self, path: str, value: str) -> None:
        st = os.stat(path)
        with self._lock:
            self._sums[path] = (value, st.st_ino, st.st_size, st.st_mtime_ns)

    def forget(self, path: str) -> None:
        with self._lock:
            self._sums.pop(path, None)

    def get(self, path: str) -> Optional[str]:
        with self._lock:
            entry = self._sums.get(path)
        if entry is None:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        return entry[0] if (st.st_ino, st.st_size, st.st_mtime_ns) == entry[1:] else None


class NextcloudFile(AccountFile):
    def get_property_names(self, *, is_allprop):
        names = [n for n in super().get_property_names(is_allprop=is_allprop) if n != OC_CHECKSUMS]
        if not is_allprop and self.provider.checksums.get(self._file_path):
            names.append(OC_CHECKSUMS)
        return names

    def get_property_value(self, name):
        if name == OC_CHECKSUMS:
            stored = self.provider.checksums.get(self._file_path)
            if not stored:
                raise DAVError(HTTP_NOT_FOUND)  # a 404 propstat, as for any property a file lacks
            el = etree.Element(OC_CHECKSUMS)
            etree.SubElement(el, OC_CHECKSUM).text = stored
            return el
        return super().get_property_value(name)


class NextcloudProvider(AccountProvider):
    def __init__(self, state, user, checksums: StoredChecksums):
        super().__init__(state, user)
        self.checksums = checksums

    def get_resource_inst(self, path, environ):
        res = super().get_resource_inst(path, environ)
        if isinstance(res, AccountFile):
            return NextcloudFile(path, environ, res._file_path)
        return res


async def json_reply(send, status: int, obj, headers: Optional[dict] = None) -> None:
    data = json.dumps(obj).encode()
    hdrs = [(k.lower().encode(), str(v).encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status,
                "headers": hdrs + [(b"content-type", b"application/json; charset=utf-8"),
                                   (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


def ocs(data, status="ok", code=100, message="OK") -> dict:
    return {"ocs": {"meta": {"status": status, "statuscode": code, "message": message,
                             "totalitems": "", "itemsperpage": ""}, "data": data}}


class NextcloudFace:
    def __init__(self, state, prefix: str = "", product: str = "nextcloud", chunk_min: int = 5 << 20,
                 upload_expire_seconds: int = 86400, reply_etags_differ: bool = False):
        self.state = state
        self.reply_etags_differ = reply_etags_differ
        self.prefix = prefix.rstrip("/")
        self.product = product
        self.maintenance = False
        self.counters: Counters = state.counters
        self.logins = LoginFlows()
        self.checksums = StoredChecksums()
        self.ids = {name: user_id(name) for name in state.settings.users}
        self.uploads = ChunkedUploads(state.settings.data / "uploads", chunk_min, upload_expire_seconds)
        self.dav_app = build_dav_app(state, {
            f"{self.prefix}/remote.php/dav/files/{uid}": NextcloudProvider(state, name, self.checksums)
            for name, uid in self.ids.items()})

    # --- helpers ----------------------------------------------------------------
    def files_root(self, user: str) -> str:
        return f"{self.prefix}/remote.php/dav/files/{self.ids[user]}"

    def uploads_root(self, user: str) -> str:
        return f"{self.prefix}/remote.php/dav/uploads/{self.ids[user]}"

    def base_url(self, scope) -> str:
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
        if host is None:
            server = scope.get("server") or ("127.0.0.1", 80)
            host = f"{server[0]}:{server[1]}"
        return f"{scope.get('scheme', 'http')}://{host}{self.prefix}"

    def destination(self, scope, user: str, required: bool = True) -> Optional[str]:
        """The Destination header as a path relative to the account's tree."""
        from gate import header
        raw = header(scope, b"destination")
        if raw is None:
            if required:
                raise UploadError(400, "a Destination header is required")
            return None
        path = unquote(urlsplit(raw).path)
        root = self.files_root(user) + "/"
        if not path.startswith(root):
            raise UploadError(403, f"Destination must be inside {root}")
        try:
            return tus.clean_rel_path(path[len(root):])
        except ValueError as e:
            raise UploadError(400, f"bad Destination: {e}")

    def check_if_destination(self, scope, user: str) -> None:
        """Like sabre/dav: a MOVE whose `If` header's lists for the destination all fail is a 412."""
        from gate import header
        raw = header(scope, b"destination")
        if raw is None:
            return
        rel = self.destination(scope, user)
        refused = conditions.destination_refused(header(scope, b"if"), unquote(urlsplit(raw).path), self.tree_path(user, rel))
        if refused:
            raise UploadError(refused, "the destination is not the version the If header names" if refused == 412 else "bad If header")

    def tree_path(self, user: str, rel: str):
        return self.state.tree_dir(user).joinpath(*rel.split("/"))

    def app_password_ok(self, name: str, password: str) -> bool:
        return self.logins.accepts(name, password)

    # --- entry ------------------------------------------------------------------
    async def route(self, gate, scope, receive, send) -> bool:
        """Serves the request if it belongs to this face; False leaves it to the
        gate (only /files/<upload id> of an oCIS tus upload)."""
        from gate import respond
        path, method = scope["path"], scope["method"]
        if self.product == "ocis" and (path == "/files" or path.startswith("/files/")):
            return False
        if not path.startswith(self.prefix + "/"):
            await respond(send, 404, "not found")
            return True
        rel = path[len(self.prefix):]
        if not rel.startswith("/remote.php/") and await self.anonymous_fault(scope, send):
            return True
        if rel == "/status.php" and method in ("GET", "HEAD"):
            fields, _ = PRODUCTS[self.product]
            on = self.maintenance
            await json_reply(send, 200, dict(fields, maintenance=(str(on).lower() if self.product == "owncloud" else on)))
            return True
        known = (rel.startswith("/remote.php/dav/") or rel.startswith("/ocs/v1.php/") or rel.startswith("/ocs/v2.php/")
                 or rel == "/index.php/login/v2" or rel.startswith("/index.php/login/v2/"))
        if not known:
            await respond(send, 404, "not found")
            return True
        if self.maintenance:
            await respond(send, 503, MAINTENANCE_TEXT)
            return True
        if rel.startswith("/index.php/login/v2"):
            await self.login(scope, receive, send, rel)
        elif rel.startswith("/ocs/"):
            await self.ocs(gate, scope, send, rel)
        else:
            await self.dav(gate, scope, receive, send, rel)
        return True

    async def anonymous_fault(self, scope, send) -> bool:
        """Fault switches for status.php, OCS and Login Flow (remote.php takes its own
        after auth). True when the fault answered (or reset) the request."""
        from faults import abort_connection, send_fault_response, stall_for
        fault = self.state.take_fault(scope["method"], scope["path"], "")
        if fault is None:
            return False
        if fault.kind == "status":
            await send_fault_response(fault, send)
            return True
        if fault.kind == "reset":
            await abort_connection(scope["iu.uvicorn_send"])
            return True
        if fault.kind == "stall":
            await stall_for(fault.stall_seconds, fault.release)  # then answer as usual
        return False

    # --- OCS --------------------------------------------------------------------
    async def ocs(self, gate, scope, send, rel):
        from gate import header
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        endpoint = rel.split("/", 3)[3] if rel.count("/") >= 3 else ""
        if header(scope, b"ocs-apirequest") != "true":
            return await json_reply(send, 412, {"message": "CSRF check failed"})
        if query.get("format") != ["json"]:
            return await json_reply(send, 400, {"message": "this server answers OCS in format=json only"})
        user = gate.authenticate(scope)
        if header(scope, b"authorization") is not None and user is None:
            return await json_reply(send, 401, ocs([], "failure", 997, "Current user is not logged in"),
                                    {"WWW-Authenticate": 'Basic realm="Nextcloud"'})
        if endpoint == "cloud/capabilities":
            _, version = PRODUCTS[self.product]
            return await json_reply(send, 200, ocs({"version": version, "capabilities": self.capabilities()}))
        if endpoint == "cloud/user":
            if user is None:
                return await json_reply(send, 401, ocs([], "failure", 997, "Current user is not logged in"),
                                        {"WWW-Authenticate": 'Basic realm="Nextcloud"'})
            return await json_reply(send, 200, ocs({"enabled": True, "id": self.ids[user], "display-name": user.title(),
                                                    "email": None, "quota": {"quota": -3}}))
        return await json_reply(send, 404, ocs([], "failure", 998, "Invalid query"))

    def capabilities(self) -> dict:
        caps = {"core": {"pollinterval": 60, "webdav-root": "remote.php/webdav"},
                "files": {"bigfilechunking": True, "undelete": True, "versioning": True}}
        if self.product in ("nextcloud", "owncloud"):
            caps["dav"] = {"chunking": "1.0", "bulkupload": "1.0"} if self.product == "nextcloud" else {"chunking": "1.0"}
        if self.product == "owncloud":
            caps["checksums"] = {"supportedTypes": ["SHA1"], "preferredUploadType": "SHA1"}
        if self.product == "ocis":
            caps["dav"] = {"reports": ["search-files"]}
            caps["checksums"] = {"supportedTypes": ["sha1", "md5"], "preferredUploadType": "sha1"}
            caps["files"]["tus_support"] = {"version": "1.0.0", "resumable": "1.0.0", "extension": "creation",
                                            "http_method_override": "", "max_chunk_size": 10000000}
        return caps

    # --- Login Flow v2 ---------------------------------------------------------------
    async def login(self, scope, receive, send, rel):
        from gate import respond
        method = scope["method"]
        base = self.base_url(scope)
        if rel == "/index.php/login/v2" and method == "POST":
            flow = self.logins.start()
            return await json_reply(send, 200, {
                "poll": {"token": flow.poll_token, "endpoint": f"{base}/index.php/login/v2/poll"},
                "login": f"{base}/index.php/login/v2/flow/{flow.login_id}"})
        if rel == "/index.php/login/v2/poll" and method == "POST":
            body = b""
            while True:
                msg = await receive()
                body += msg.get("body", b"")
                if not msg.get("more_body") or len(body) > 4096:
                    break
            token = (parse_qs(body.decode("latin-1")).get("token") or [""])[0]
            flow = self.logins.poll(token)
            if flow is None:
                return await json_reply(send, 404, [])
            return await json_reply(send, 200, {"server": base, "loginName": flow.user, "appPassword": flow.app_password})
        if rel.startswith("/index.php/login/v2/flow/") and method == "GET":
            login_id = rel.rsplit("/", 1)[1]
            if not self.logins.known_login(login_id):
                return await respond(send, 404, "this login link expired or is unknown")
            return await respond(send, 200, "Connect to your account: a person approves this login here.\n")
        return await respond(send, 405, "method not allowed")

    # --- WebDAV -------------------------------------------------------------------
    async def dav(self, gate, scope, receive, send, rel):
        from gate import REALM, respond, send_fault_response
        path, method = scope["path"], scope["method"]
        self.state.count_request(method, scope.get("client"))
        user = gate.authenticate(scope)
        if user is None:
            return await respond(send, 401, "authentication required", {"WWW-Authenticate": REALM})
        scope["iu.user"] = user
        files, uploads = self.files_root(user), self.uploads_root(user)
        in_files = path == files or path.startswith(files + "/")
        in_uploads = path == uploads or path.startswith(uploads + "/")
        if not (in_files or in_uploads):
            return await respond(send, 403, f"account {user!r} may only access {files}/ and {uploads}/")
        fault = self.state.take_fault(method, path, user)
        if fault is not None and fault.kind == "status":
            return await send_fault_response(fault, send)
        try:
            if in_uploads:
                return await self.upload_request(gate, scope, receive, send, user, path[len(uploads):], fault)
            if self.product == "ocis" and method == "POST":
                return await self.ocis_tus_create(gate, scope, receive, send, user, path[len(files):], fault)
            return await self.files_request(gate, scope, receive, send, user, path[len(files):], fault)
        except UploadError as e:
            if fault is not None:
                self.state.give_back_fault(fault)
            return await respond(send, e.status, e.message)

    async def files_request(self, gate, scope, receive, send, user, rel, fault):
        from gate import header, respond
        method = scope["method"]
        dest = self.destination(scope, user, required=False) if method in ("MOVE", "COPY") else None
        target = rel.strip("/")
        if method == "PUT":
            available = self.state.available_bytes(user)
            length = header(scope, b"content-length")
            if available is not None and length and length.isdigit() and int(length) > available:
                return await respond(send, 507, f"insufficient storage: {available} bytes available")
            self.counters.file_put(target)
        if method == "MOVE":
            self.check_if_destination(scope, user)
            self.counters.move()
        mtime = self.mtime_header(scope) if method == "PUT" else None
        checksum = header(scope, b"oc-checksum") if method == "PUT" else None
        if method == "PUT":
            return await self.put_file(gate, scope, receive, send, user, target, mtime, checksum, fault)

        def finish(status, headers):
            headers = [(k, v) for k, v in headers if k.lower() != b"date"]
            if method == "OPTIONS" and self.product == "ocis":
                # oCIS announces tus on its WebDAV folders (no termination)
                headers += [(b"tus-resumable", b"1.0.0"), (b"tus-version", b"1.0.0"),
                            (b"tus-extension", b"creation,expiration,checksum"),
                            (b"tus-checksum-algorithm", b"md5,sha1")]
            if method == "PUT" and status in (200, 201, 204):
                file_path = str(self.tree_path(user, tus.clean_rel_path(target)))
                if mtime is not None:
                    os.utime(file_path, (mtime, mtime))
                    headers.append((b"x-oc-mtime", b"accepted"))
                if checksum:
                    self.checksums.store(file_path, checksum.strip())
                else:
                    self.checksums.forget(file_path)
            return headers
        from gate import OnResponseStart
        on_bytes = self.counters.file_body if method == "PUT" else (lambda n: None)
        del dest  # checked for its place only; wsgidav moves
        await gate.run_inner(self.dav_app, scope, receive, OnResponseStart(send, finish), fault, on_bytes=on_bytes)

    async def put_file(self, gate, scope, receive, send, user, target, mtime, checksum, fault):
        """A whole file as Nextcloud takes it: conditions first, the body into a part file,
        renamed into place when whole and only then."""
        from gate import header, respond
        try:
            rel = tus.clean_rel_path(target)
        except ValueError as e:
            raise UploadError(400, f"bad path: {e}")
        final = self.tree_path(user, rel)
        if not final.parent.is_dir():
            raise UploadError(409, "the parent folder does not exist")
        if final.is_dir():
            raise UploadError(409, "PUT is not allowed on non-files")
        if_none_match, if_match = header(scope, b"if-none-match"), header(scope, b"if-match")
        refused = self.put_refused(final, if_none_match, if_match)
        if refused:
            raise UploadError(412, refused)
        length = header(scope, b"content-length")
        expected = int(length) if length is not None and length.isdigit() else None

        async def store(scope, receive, send):
            # Beside the account's tree, on the same disk, so the rename into place is atomic;
            # never under the name, so no one sees half a file there.
            part = self.state.spool_dir / f"nc-{uuid.uuid4().hex}.part"
            try:
                got = await receive_into(part, receive)
                if got is None:
                    return  # cut off: the part file is dropped
                if expected is not None and got != expected:
                    return await respond(send, 400, f"expected {expected} bytes, got {got}")
                if not final.parent.is_dir():
                    return await respond(send, 409, "the parent folder was removed while the file arrived")
                refused = self.put_refused(final, if_none_match, if_match)
                if refused:
                    return await respond(send, 412, refused + " (changed while the body arrived)")
                existed = final.exists()
                if if_none_match is not None and if_none_match.strip() == "*":
                    try:
                        os.link(part, final)  # fails, replacing nothing, if a file got there first
                    except FileExistsError:
                        return await respond(send, 412, "a file was put at the name while the body arrived")
                else:
                    os.replace(part, final)
                headers = self.file_made(final, mtime, checksum)
                await respond(send, 204 if existed else 201, "", headers)
            finally:
                part.unlink(missing_ok=True)
        await gate.run_inner(store, scope, receive, send, fault, on_bytes=self.counters.file_body)

    def file_made(self, path, mtime, checksum) -> dict:
        """What follows a file made by a PUT or an assembly, as Nextcloud does it: its mtime
        from X-OC-Mtime, its OC-Checksum kept (or an old one forgotten), and the reply's
        ETag, OC-ETag and OC-FileId."""
        headers = {}
        if mtime is not None:
            os.utime(path, (mtime, mtime))
            headers["X-OC-MTime"] = "accepted"
        if checksum:
            self.checksums.store(str(path), checksum.strip())
        else:
            self.checksums.forget(str(path))
        etag = f'"{conditions.file_etag(path)}"'
        if self.reply_etags_differ:
            etag = f'"reply-{conditions.file_etag(path)}"'
        headers.update({"ETag": etag, "OC-ETag": etag, "OC-FileId": f"{os.stat(path).st_ino:08d}ocrefsrv"})
        return headers

    @staticmethod
    def put_refused(final, if_none_match: Optional[str], if_match: Optional[str]) -> Optional[str]:
        """Why a PUT's conditions fail for the file now at `final` (RFC 9110 §13.1.1-2), or None."""
        current = conditions.file_etag(final) if final.is_file() else None
        def listed(value: str) -> list[str]:
            return [conditions.bare(t) for t in value.split(",") if t.strip()]
        if if_match is not None:
            if current is None:
                return "If-Match: nothing is at the name"
            if if_match.strip() != "*" and current not in listed(if_match):
                return "If-Match: the file at the name is another version"
        if if_none_match is not None and current is not None:
            if if_none_match.strip() == "*" or current in listed(if_none_match):
                return "If-None-Match: a file is at the name"
        return None

    def mtime_header(self, scope) -> Optional[int]:
        from gate import header
        raw = header(scope, b"x-oc-mtime")
        if raw is None:
            return None
        if not raw.strip().isdigit():
            raise UploadError(400, "X-OC-Mtime header must be an integer (unix timestamp).")
        return int(raw.strip())

    def total_length(self, scope, required: bool) -> Optional[int]:
        from gate import header
        raw = header(scope, b"oc-total-length")
        if raw is None:
            if required:
                raise UploadError(400, "an OC-Total-Length header is required")
            return None
        if not raw.strip().isdigit():
            raise UploadError(400, "OC-Total-Length must be a whole number")
        return int(raw)

    # --- chunked upload v2 ----------------------------------------------------
    async def upload_request(self, gate, scope, receive, send, user, rel, fault):
        from gate import respond
        method = scope["method"]
        parts = [p for p in rel.split("/") if p]
        if method == "PROPFIND":
            return await self.upload_propfind(scope, send, user, parts)
        if len(parts) == 1 and method == "MKCOL":
            dest = self.destination(scope, user)
            self.uploads.create(user, parts[0], dest, self.total_length(scope, required=False))
            return await respond(send, 201, "")
        if len(parts) == 1 and method == "DELETE":
            self.uploads.delete(user, parts[0])
            return await respond(send, 204, "")
        if len(parts) == 2 and method == "DELETE":
            # Nextcloud's upload folders hold ordinary files: a client may remove one chunk.
            if chunk_number(parts[1]) is None:
                raise UploadError(404, "no such chunk")
            self.uploads.delete_chunk(user, parts[0], parts[1])
            return await respond(send, 204, "")
        if len(parts) == 2 and method == "PUT":
            return await self.put_chunk(gate, scope, receive, send, user, parts[0], parts[1], fault)
        if len(parts) == 2 and parts[1] == ".file" and method == "MOVE":
            self.counters.move()
            return await self.assemble(scope, send, user, parts[0])
        if len(parts) == 2 and method in ("GET", "HEAD"):
            return await respond(send, 403, "chunks cannot be downloaded")
        return await respond(send, 405, f"{method} is not allowed here")

    async def upload_propfind(self, scope, send, user, parts):
        from gate import header
        depth = header(scope, b"depth") or "infinity"
        root = self.uploads_root(user)
        if not parts:
            entries = [(root + "/", None, 0.0, True)]
            if depth != "0":
                for t in self.uploads.transfers(user):
                    entries.append((f"{root}/{t}/", None, 0.0, True))
        elif len(parts) == 1:
            folder, meta = self.uploads.existing(user, parts[0])
            entries = [(f"{root}/{parts[0]}/", None, meta["touched"], True)]
            if depth != "0":
                entries += [(f"{root}/{parts[0]}/{name}", size, mtime, False)
                            for _, name, size, mtime in self.uploads.chunks(folder)]
        else:
            folder, _ = self.uploads.existing(user, parts[0])
            held = {name: (size, mtime) for _, name, size, mtime in self.uploads.chunks(folder)}
            if parts[1] not in held:
                raise UploadError(404, "no such chunk")
            entries = [(f"{root}/{parts[0]}/{parts[1]}", *held[parts[1]], False)]
        body = multistatus(entries)
        await send({"type": "http.response.start", "status": 207,
                    "headers": [(b"content-type", b"application/xml; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def put_chunk(self, gate, scope, receive, send, user, transfer, name, fault):
        from gate import header, respond
        number = chunk_number(name)
        if number is None:
            raise UploadError(400, "chunks are numbered from 1 to 10000")
        folder, meta = self.uploads.existing(user, transfer)
        self.uploads.check_destination(meta, self.destination(scope, user))
        total = self.total_length(scope, required=True)
        available = self.state.available_bytes(user)
        if available is not None and total > available:
            raise UploadError(507, f"insufficient storage: {available} bytes available")
        length = header(scope, b"content-length")
        if length is None or not length.isdigit():
            raise UploadError(411, "chunks need a Content-Length")
        length = int(length)
        self.counters.chunk_put(f"uploads/{transfer}/{name}")
        final = folder / name

        async def store(scope, receive, send):
            part = folder / f".{name}.part-{id(scope)}"
            try:
                got = await receive_into(part, receive)
                if got is None:
                    return  # cut off: the partial chunk is dropped
                if got != length:
                    return await respond(send, 400, f"expected {length} bytes, got {got}")
                existed = final.exists()
                os.replace(part, final)
                self.uploads.touch(folder, meta)
                await respond(send, 204 if existed else 201, "")
            except FileNotFoundError:
                # The folder was removed (expired) while the chunk arrived: it is not held.
                await respond(send, 404, "upload folder not found (expired)")
            finally:
                part.unlink(missing_ok=True)
        self.counters.chunk_started(transfer)
        try:
            await gate.run_inner(store, scope, receive, send, fault, on_bytes=self.counters.chunk_body)
        finally:
            self.counters.chunk_ended(transfer)

    async def assemble(self, scope, send, user, transfer):
        from gate import header, respond
        folder, meta = self.uploads.existing(user, transfer)
        # Like Nextcloud, the file is made where the MOVE's own Destination says, which may
        # differ from the one the folder was made with (a client moving aside from a taken name).
        dest = self.destination(scope, user)
        total = self.total_length(scope, required=False)
        mtime = self.mtime_header(scope)
        target = self.tree_path(user, dest)
        if not target.parent.is_dir():
            raise UploadError(409, "the destination's parent folder does not exist")
        if target.is_dir():
            raise UploadError(409, "the destination is a folder")
        if (header(scope, b"overwrite") or "T").upper() == "F" and target.exists():
            raise UploadError(412, "the destination exists and Overwrite is F")
        self.check_if_destination(scope, user)
        parts = self.uploads.plan(folder, total)
        available = self.state.available_bytes(user)
        size = sum(p.stat().st_size for p in parts)
        if available is not None and size > available:
            raise UploadError(507, f"insufficient storage: {available} bytes available")
        replaced = await asyncio.to_thread(self.uploads.join, parts, target)
        headers = self.file_made(target, mtime, header(scope, b"oc-checksum"))
        self.uploads.delete(user, transfer)
        self.counters.assembled(dest)
        await respond(send, 204 if replaced else 201, "", headers)

    # --- oCIS: tus creation at the WebDAV folder --------------------------------------
    async def ocis_tus_create(self, gate, scope, receive, send, user, rel, fault):
        from gate import TUS_VERSION, header, respond, with_header
        try:
            meta = tus.parse_metadata(header(scope, b"upload-metadata") or "")
        except ValueError as e:
            raise UploadError(400, str(e))
        name = meta.get("filename", "")
        if not name or "/" in name:
            return await respond(send, 400, "Upload-Metadata needs a filename", {"Tus-Resumable": TUS_VERSION})
        folder = "/".join(p for p in rel.split("/") if p)
        if not self.tree_path(user, folder).is_dir():
            # As oCIS does: no upload is created in a folder that is not there.
            return await respond(send, 412, "the folder does not exist", {"Tus-Resumable": TUS_VERSION})
        meta["path"] = f"{folder}/{name}" if folder else name
        # oCIS sets the file's mtime from X-OC-Mtime on the creation request (or `mtime`).
        mtime = (header(scope, b"x-oc-mtime") or meta.get("mtime") or "").strip()
        meta.pop("mtime", None)
        if mtime:
            if not mtime.isdigit():
                return await respond(send, 400, "X-OC-Mtime must be an integer (unix timestamp)", {"Tus-Resumable": TUS_VERSION})
            meta["mtime"] = mtime
        headers = with_header(scope["headers"], b"upload-metadata", tus.encode_metadata(meta))
        await gate.tus_create(dict(scope, path="/files/", raw_path=b"/files/", headers=headers), receive, send, user, fault)

    # --- control ----------------------------------------------------------------------
    def control(self, path: str, method: str, body) -> Optional[tuple[int, object]]:
        if path == "/_control/maintenance" and method == "POST":
            if not isinstance(body, dict) or not isinstance(body.get("on"), bool):
                return 400, {"error": "need {\"on\": true|false}"}
            self.maintenance = body["on"]
            return 200, {"maintenance": self.maintenance}
        if path == "/_control/login" and method == "GET":
            return 200, self.logins.describe()
        if path == "/_control/login" and method == "POST":
            if not isinstance(body, dict) or body.get("user") not in self.state.settings.users:
                return 400, {"error": "need {\"user\": <known account>, \"login\": <login URL, optional>}"}
            login = body.get("login")
            try:
                flow = self.logins.approve(body["user"], login.rstrip("/").rsplit("/", 1)[-1] if login else None)
            except ValueError as e:
                return 409, {"error": str(e)}
            return 200, {"login": flow.login_id, "user": flow.user}
        if path == "/_control/uploads/expire" and method == "POST":
            return 200, {"expired": self.uploads.expire_all()}
        if path == "/_control/users" and method == "GET":
            return 200, {name: {"id": uid, "webdav": quote(self.files_root(name)) + "/",
                                "uploads": quote(self.uploads_root(name)) + "/"} for name, uid in self.ids.items()}
        return None
