"""The tus side: tuspyserver's FastAPI router plus what it lacks.

tuspyserver keeps, per account, DIR/tus/<user>/<id> (data) and <id>.info
(JSON sidecar); we add <id>.done once the completion hook has placed the file.
The gate (gate.py) sits in front and does auth, validation, checksums, faults.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import time
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from typing import Optional

from fastapi import Depends, FastAPI, HTTPException, Request
from tuspyserver import create_tus_router

from state import State

log = logging.getLogger("reference-server")


# --- Upload-Metadata and target paths ---------------------------------------

def parse_metadata(header: str) -> dict[str, str]:
    """tus Upload-Metadata: comma separated `key base64value` (value optional)."""
    meta: dict[str, str] = {}
    for pair in header.split(","):
        pair = pair.strip()
        if not pair:
            continue
        parts = pair.split(" ")
        if len(parts) > 2 or not parts[0]:
            raise ValueError(f"malformed Upload-Metadata pair {pair!r}")
        try:
            value = base64.b64decode(parts[1], validate=True).decode("utf-8") if len(parts) == 2 else ""
        except (binascii.Error, UnicodeDecodeError):
            raise ValueError(f"Upload-Metadata value of {parts[0]!r} is not base64 UTF-8")
        meta[parts[0]] = value
    return meta


def encode_metadata(meta: dict[str, str]) -> str:
    return ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in meta.items())


def clean_rel_path(raw: str) -> str:
    """'Photos/IMG 1.jpg' or '/Photos/IMG 1.jpg' -> 'Photos/IMG 1.jpg'.
    Raises ValueError for '..' / '.' components, NUL, backslashes, or empty."""
    if "\x00" in raw or "\\" in raw:
        raise ValueError("path contains NUL or backslash")
    parts = [p for p in raw.split("/") if p != ""]
    if not parts:
        raise ValueError("path is empty")
    if any(p in (".", "..") for p in parts):
        raise ValueError("path contains '.' or '..' components")
    return "/".join(parts)


def target_parent(state: State, user: str, rel: str) -> Path:
    return state.tree_dir(user).joinpath(*rel.split("/")[:-1])


def parent_is_folder(state: State, user: str, rel: str) -> bool:
    parent = target_parent(state, user, rel)
    root = state.tree_dir(user).resolve()
    real = parent.resolve()
    return parent.is_dir() and (real == root or root in real.parents)


# --- the .info sidecar --------------------------------------------------------

def read_info(info_path: Path) -> Optional[dict]:
    try:
        return json.loads(info_path.read_text())
    except (OSError, ValueError):
        return None


def write_info(info_path: Path, info: dict) -> None:
    tmp = info_path.with_name(info_path.name + ".tmp")
    tmp.write_text(json.dumps(info, indent=4))
    os.replace(tmp, info_path)  # atomic, like tuspyserver's own writer


def http_date(ts: float) -> str:
    return formatdate(ts, usegmt=True)


def set_expiry(state: State, user: str, uid: str) -> Optional[str]:
    """tuspyserver only knows whole days (days_to_keep); give the fresh upload
    the configured --expire-seconds instead. Returns the new header value."""
    info_path = state.tus_dir(user) / f"{uid}.info"
    info = read_info(info_path)
    if info is None:
        return None
    info["expires"] = http_date(time.time() + state.settings.expire_seconds)
    write_info(info_path, info)
    return info["expires"]


def is_expired(info: dict) -> bool:
    try:
        return parsedate_to_datetime(info["expires"]).timestamp() < time.time()
    except (KeyError, TypeError, ValueError):
        return False


def reconcile(state: State, user: str, uid: str) -> None:
    """Make the stored offset equal the bytes really on disk.

    tuspyserver appends chunks to the data file as they arrive but writes the
    offset to .info only at the end of a PATCH. After a kill -9 mid-PATCH (or a
    PATCH that died on an error) the data file holds more bytes than .info
    says, and the next PATCH would append after them: a corrupt file. Like
    tusd, we treat the data file's size as the truth (the bytes were written
    in order, and checksummed bodies are verified before they reach it).
    Called at start-up and before every PATCH, while no other PATCH runs on
    this upload."""
    data = state.tus_dir(user) / uid
    info_path = data.with_name(uid + ".info")
    if data.with_name(uid + ".done").exists() or not data.exists():
        return
    info = read_info(info_path)
    if info is None or info.get("size") is None:
        return
    size = data.stat().st_size
    if size > info["size"]:
        os.truncate(data, info["size"])
        size = info["size"]
    if size != info.get("offset"):
        log.info("reconcile %s/%s: offset %s -> %s", user, uid, info.get("offset"), size)
        info["offset"] = size
        write_info(info_path, info)


def upload_ids(state: State, user: str) -> list[str]:
    d = state.tus_dir(user)
    return [p.stem for p in d.glob("*.info")] if d.is_dir() else []


def reconcile_all(state: State) -> None:
    for user in state.settings.users:
        for uid in upload_ids(state, user):
            reconcile(state, user, uid)


def remove_upload_files(state: State, user: str, uid: str) -> None:
    d = state.tus_dir(user)
    for p in (d / uid, d / f"{uid}.info", d / f"{uid}.done", d / ".locks" / f"{uid}.lock"):
        p.unlink(missing_ok=True)


def gc_expired(state: State) -> None:
    """Drop expired uploads (tuspyserver's own gc_files cannot parse the RFC
    7231 dates it writes). Until collected they answer 410, then 404."""
    for user in state.settings.users:
        for uid in upload_ids(state, user):
            if (user, uid) in state.active:
                continue
            info = read_info(state.tus_dir(user) / f"{uid}.info")
            if info is not None and is_expired(info):
                log.info("expired upload %s/%s removed", user, uid)
                remove_upload_files(state, user, uid)
        # sidecars whose upload is gone (e.g. terminated)
        for done in state.tus_dir(user).glob("*.done"):
            if not done.with_suffix(".info").exists():
                done.unlink(missing_ok=True)


# --- completion hook ------------------------------------------------------------

def target_problem(state: State, user: str, rel: str) -> Optional[str]:
    """Why a finished upload cannot be placed at `rel` now, or None. Like real
    servers, nothing is created for the client: a missing parent is its error."""
    if not parent_is_folder(state, user, rel):
        return "target folder does not exist"
    target = state.tree_dir(user).joinpath(*rel.split("/"))
    if target.is_dir() and not target.is_symlink():
        return "a folder has the target's name"
    return None


def place_file(src: Path, target: Path) -> bool:
    """Put `src` at `target`, replacing a file already there (as Nextcloud and
    oCIS do: the client decides about names, the server never renames or
    merges). Returns True when a file was replaced. The rename is atomic."""
    replaced = target.is_file()
    os.replace(src, target)
    return replaced


def finish_upload(state: State, user: str, data_path: str, metadata: dict) -> None:
    data = Path(data_path)
    uid = data.name
    done = data.with_name(uid + ".done")
    if done.exists():  # an empty PATCH at offset == length after completion
        return
    rel = clean_rel_path(metadata["path"])  # validated at creation already
    problem = target_problem(state, user, rel)
    if problem is not None:
        # The gate refuses the completing PATCH before storing it in this case; this
        # is the race where the folder vanished while that PATCH ran. The bytes stay.
        log.info("completion of %s/%s refused: %s", user, uid, problem)
        raise HTTPException(status_code=409, detail=problem)
    target = state.tree_dir(user).joinpath(*rel.split("/"))
    replaced = place_file(data, target)
    mtime = metadata.get("mtime", "")
    if mtime.isdigit():  # set by the oCIS face from X-OC-Mtime at creation
        os.utime(target, (int(mtime), int(mtime)))
    # keep an empty placeholder + .info, so that HEAD on the upload URL still
    # answers Upload-Offset == Upload-Length until the upload expires
    data.touch()
    entry = {"id": uid, "user": user, "path": rel, "size": target.stat().st_size, "replaced": replaced}
    done.write_text(json.dumps(entry))
    state.record_completion(entry)
    log.info("completed %s/%s -> %s%s", user, uid, rel, " (replaced the file there)" if replaced else "")


# --- the FastAPI app ------------------------------------------------------------

def build_tus_app(state: State) -> FastAPI:
    async def current_user(request: Request) -> str:
        # The gate authenticated the request and put the account in the scope.
        # This dependency is only a second line of defence.
        user = request.scope.get("iu.user")
        if not user:
            raise HTTPException(status_code=401, headers={"WWW-Authenticate": 'Basic realm="instant-upload"'})
        return user

    # TRAP: tuspyserver's PATCH route lists its body-writing dependency before
    # `auth=`, so auth= alone would run after the body is stored. file_dep is a
    # dependency of the body writer, so making it depend on the account runs
    # the check first. It also gives every account its own upload directory,
    # which is what makes another account's upload URL answer 404.
    async def file_dep(user: str = Depends(current_user)):
        files_dir = str(state.tus_dir(user))
        return lambda metadata: {"files_dir": files_dir}

    async def upload_complete_dep(user: str = Depends(current_user)):
        return lambda path, metadata: finish_upload(state, user, path, metadata)

    router = create_tus_router(
        prefix="files",
        files_dir=str(state.settings.data / "tus"),
        max_size=state.settings.max_size,
        auth=current_user,
        days_to_keep=max(1, -(-state.settings.expire_seconds // 86400)),  # overridden per upload
        file_dep=file_dep,
        upload_complete_dep=upload_complete_dep,
    )
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.include_router(router)
    return app
