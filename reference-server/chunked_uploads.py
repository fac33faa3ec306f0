"""Nextcloud chunked upload v2: upload folders under /remote.php/dav/uploads/<id>/.

Semantics, as Nextcloud documents and does them:
  * MKCOL <transfer> with `Destination` (the target file's URL under
    /remote.php/dav/files/<id>/) creates the folder; 405 if it exists;
    400 without a Destination (only v2 is offered).
  * PUT <transfer>/<n>, n from 1 to 10000, with the same `Destination` and
    `OC-Total-Length` (507 when the account cannot hold that much). The chunk is
    written to a hidden part file and renamed into place only when its body is
    whole: a chunk cut off by a reset is not held. A second PUT of a number
    replaces it. 404 when the folder does not exist (or expired).
  * PROPFIND Depth 0/1 lists the chunks held with `getcontentlength`.
  * MOVE <transfer>/.file with the same `Destination`, `OC-Total-Length` and
    optionally `X-OC-Mtime` and `OC-Checksum` assembles the chunks in number
    order: 1..N without gaps, every chunk but the last at least `chunk_min`
    bytes (5 MiB on Nextcloud; smaller for tests), the sum equal to
    OC-Total-Length. 409 when the destination's folder does not exist (never
    created for the client); an existing file there is overwritten. Answers
    201/204 with `X-OC-MTime: accepted` when the mtime was set. The upload
    folder is removed afterwards.
  * DELETE <transfer> removes the folder; DELETE <transfer>/<n> one chunk.
  * A folder untouched for `upload_expire_seconds` is gone (404), as
    Nextcloud's background job removes them after 24 h of inactivity.
Chunks cannot be downloaded (GET: 403).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from email.utils import formatdate
from pathlib import Path
from typing import Optional
from xml.sax.saxutils import escape
from urllib.parse import quote

META = ".upload.json"
PART_SUFFIX = ".part"
MAX_CHUNK_NUMBER = 10000
CHUNK_NAME = re.compile(r"^[0-9]{1,5}$")
TRANSFER_NAME = re.compile(r"^[A-Za-z0-9._~-]{1,200}$")


class UploadError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def chunk_number(name: str) -> Optional[int]:
    if not CHUNK_NAME.match(name):
        return None
    n = int(name)
    return n if 1 <= n <= MAX_CHUNK_NUMBER else None


class ChunkedUploads:
    def __init__(self, root: Path, chunk_min: int, expire_seconds: int):
        self.root = root
        self.chunk_min = chunk_min
        self.expire_seconds = expire_seconds
        self.lock = threading.Lock()

    # --- folders ---------------------------------------------------------------
    def folder(self, user: str, transfer: str) -> Path:
        if not TRANSFER_NAME.match(transfer) or transfer.startswith("."):
            raise UploadError(400, "upload folder names are letters, digits and ._~-")
        return self.root / user / transfer

    def _meta(self, folder: Path) -> Optional[dict]:
        try:
            return json.loads((folder / META).read_text())
        except (OSError, ValueError):
            return None

    def existing(self, user: str, transfer: str) -> tuple[Path, dict]:
        """The folder and its metadata; 404 when it is missing or expired (then removed)."""
        folder = self.folder(user, transfer)
        meta = self._meta(folder)
        if meta is None:
            raise UploadError(404, "upload folder not found")
        if time.time() - meta["touched"] > self.expire_seconds:
            self._remove(folder)
            raise UploadError(404, "upload folder not found (expired)")
        return folder, meta

    def touch(self, folder: Path, meta: dict) -> None:
        meta["touched"] = time.time()
        tmp = folder / (META + ".tmp")
        tmp.write_text(json.dumps(meta))
        os.replace(tmp, folder / META)

    def create(self, user: str, transfer: str, destination: str, total: Optional[int]) -> None:
        folder = self.folder(user, transfer)
        with self.lock:
            try:
                self.existing(user, transfer)
                raise UploadError(405, "the upload folder already exists")
            except UploadError as e:
                if e.status != 404:
                    raise
            folder.mkdir(parents=True, exist_ok=True)
            self.touch(folder, {"destination": destination, "total": total, "created": time.time()})

    def delete(self, user: str, transfer: str) -> None:
        folder, _ = self.existing(user, transfer)
        self._remove(folder)

    def delete_chunk(self, user: str, transfer: str, name: str) -> None:
        folder, meta = self.existing(user, transfer)
        chunk = folder / name
        if not chunk.is_file():
            raise UploadError(404, "no such chunk")
        chunk.unlink()
        self.touch(folder, meta)

    def expire_all(self) -> int:
        """Every upload folder expires now and is removed, as Nextcloud's clean-up job
        does (for tests): a chunk still arriving then finds its folder gone. Returns how many."""
        n = 0
        with self.lock:
            for meta_path in self.root.glob(f"*/*/{META}"):
                if not meta_path.parent.name.startswith("."):
                    n += self._remove(meta_path.parent)
        return n

    @staticmethod
    def _remove(folder: Path) -> bool:
        """Removes an upload folder, renamed away first, in one step: removed in place, a
        chunk finishing meanwhile would write its file and the metadata into the folder
        being emptied, which would then stay, without its first chunks."""
        gone = folder.with_name(f".gone-{folder.name}-{time.monotonic_ns()}")
        try:
            os.rename(folder, gone)
        except FileNotFoundError:
            return False
        shutil.rmtree(gone, ignore_errors=True)
        return True

    def transfers(self, user: str) -> list[str]:
        d = self.root / user
        return sorted(p.name for p in d.iterdir() if not p.name.startswith(".") and (p / META).exists()) if d.is_dir() else []

    def chunks(self, folder: Path) -> list[tuple[int, str, int, float]]:
        """(number, name, size, mtime) of the chunks held, in number order."""
        out = []
        for p in folder.iterdir():
            n = chunk_number(p.name)
            if n is not None and p.is_file():
                st = p.stat()
                out.append((n, p.name, st.st_size, st.st_mtime))
        return sorted(out)

    def check_destination(self, meta: dict, destination: str) -> None:
        if destination != meta["destination"]:
            raise UploadError(400, "Destination differs from the one the upload folder was created with")

    # --- assembly --------------------------------------------------------------
    def plan(self, folder: Path, total: Optional[int]) -> list[Path]:
        """The chunk files to join, after checking numbering, sizes and total."""
        held = self.chunks(folder)
        if not held:
            raise UploadError(400, "the upload folder holds no chunks")
        for expected, (n, _, _, _) in enumerate(held, start=1):
            if n != expected:
                raise UploadError(400, f"chunk {expected} is missing")
        for n, _, size, _ in held[:-1]:
            if size < self.chunk_min:
                raise UploadError(400, f"chunk {n} has {size} bytes; every chunk but the last needs at least {self.chunk_min}")
        got = sum(size for _, _, size, _ in held)
        if total is not None and got != total:
            raise UploadError(400, f"Chunks on server do not sum up to {total} but to {got} bytes")
        return [folder / name for _, name, _, _ in held]

    @staticmethod
    def join(parts: list[Path], target: Path) -> bool:
        """Concatenate into a hidden file beside `target`, then rename over it.
        Returns True when a file was replaced."""
        tmp = target.with_name(f".{target.name}.assembling-{os.getpid()}-{threading.get_ident()}")
        try:
            with open(tmp, "wb") as out:
                for part in parts:
                    with open(part, "rb") as src:
                        shutil.copyfileobj(src, out, 1 << 20)
            existed = target.exists()
            os.replace(tmp, target)
            return existed
        finally:
            tmp.unlink(missing_ok=True)


def multistatus(entries: list[tuple[str, Optional[int], float, bool]]) -> bytes:
    """A DAV:multistatus for (href, size, mtime, is_folder) entries, with d:
    prefixes as Nextcloud writes them."""
    out = ['<?xml version="1.0" encoding="utf-8"?>\n'
           '<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" '
           'xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">']
    for href, size, mtime, is_folder in entries:
        props = [f"<d:getlastmodified>{formatdate(mtime, usegmt=True)}</d:getlastmodified>"]
        if is_folder:
            props.append("<d:resourcetype><d:collection/></d:resourcetype>")
        else:
            props.append("<d:resourcetype/>")
            props.append(f"<d:getcontentlength>{size}</d:getcontentlength>")
            props.append(f'<d:getetag>"{int(mtime * 1e6):x}-{size:x}"</d:getetag>')
        out.append(f"<d:response><d:href>{escape(quote(href))}</d:href><d:propstat><d:prop>{''.join(props)}"
                   "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>")
    out.append("</d:multistatus>")
    return "".join(out).encode()
