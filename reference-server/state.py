"""Process-wide state of the reference server: settings, accounts, quotas,
fault switches, statistics and the registry of PATCH requests in flight.

WebDAV requests run in a2wsgi's worker threads, so everything that both sides
touch is guarded by one threading.Lock. Everything else runs on the event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import shutil
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from counters import Counters
from faults import Fault

USER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass
class Settings:
    data: Path
    users: dict[str, str]  # name -> password
    host: str = "127.0.0.1"
    port: int = 8080
    max_uploads_per_account: int = 3
    expire_seconds: int = 86400
    max_size: int = 1 << 40  # 1 TiB
    checksums: bool = True  # tus checksum extension and oc:checksums on files
    tls_cert: Path | None = None  # serve https with this certificate and key
    tls_key: Path | None = None
    face: str = "tus"  # tus | nextcloud | webdav (see server.py --face)


@dataclass
class ActivePatch:
    """One PATCH in flight on one upload; a newer PATCH or a DELETE on the same
    upload sets `cancel` and waits for `done` (takeover, as tusd does)."""

    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)


class State:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.lock = threading.Lock()
        self.faults: list[Fault] = []
        self._next_fault_id = 1
        # quota: user -> total bytes the account may hold (see set_quota)
        self.quota_limit: dict[str, int] = {}
        self.requests: Counter = Counter()
        # The client ends (address, port) requests came from: each is one TCP connection, so a
        # test can see whether a client reuses its connections or opens one per request.
        self.connections: set = set()
        self.patch_bytes = 0
        self.current_patches: Counter = Counter()
        self.max_concurrent_patches: dict[str, int] = {}
        # uploads refused because the account already had its bound running (429)
        self.busy_refusals: Counter = Counter()
        self.completed: list[dict] = []
        # (user, path) -> finished uploads placed there; more than one is a duplicate
        self.completions: Counter = Counter()
        self.active: dict[tuple[str, str], ActivePatch] = {}
        # what the Nextcloud and plain-WebDAV faces received (counters.py)
        self.counters = Counters()
        # set on SIGTERM/SIGINT: stalled and running transfers stop at once
        # (storing what they have) instead of holding up the shutdown
        self.shutting_down = asyncio.Event()
        # set (and replaced) when the faults are cleared: stalls in progress end at once
        self.stall_release = asyncio.Event()

    # --- layout -------------------------------------------------------------
    def tree_dir(self, user: str) -> Path:
        return self.settings.data / "tree" / user

    def tus_dir(self, user: str) -> Path:
        return self.settings.data / "tus" / user

    @property
    def spool_dir(self) -> Path:
        return self.settings.data / "spool"

    def prepare_dirs(self) -> None:
        for user in self.settings.users:
            self.tree_dir(user).mkdir(parents=True, exist_ok=True)
            self.tus_dir(user).mkdir(parents=True, exist_ok=True)
        self.spool_dir.mkdir(parents=True, exist_ok=True)
        for leftover in self.spool_dir.iterdir():  # bodies of a killed run
            leftover.unlink(missing_ok=True)

    # --- quota --------------------------------------------------------------
    def used_bytes(self, user: str) -> int:
        total = 0
        for root, _dirs, files in os.walk(self.tree_dir(user)):
            for name in files:
                try:
                    total += os.lstat(os.path.join(root, name)).st_size
                except OSError:
                    pass
        return total

    def set_quota(self, user: str, available: Optional[int]) -> None:
        """`available` is the free space *now*; files stored later (tus or
        WebDAV) use it up and deletions give it back."""
        with self.lock:
            if available is None:
                self.quota_limit.pop(user, None)
            else:
                self.quota_limit[user] = self.used_bytes(user) + available

    def available_bytes(self, user: str, used: Optional[int] = None) -> Optional[int]:
        """Free bytes under the quota, or None when the account has none."""
        limit = self.quota_limit.get(user)
        if limit is None:
            return None
        if used is None:
            used = self.used_bytes(user)
        return max(0, limit - used)

    def disk_free(self, user: str) -> int:
        return shutil.disk_usage(self.tree_dir(user)).free

    # --- faults -------------------------------------------------------------
    def add_fault(self, fault: Fault) -> Fault:
        with self.lock:
            fault.id = self._next_fault_id
            self._next_fault_id += 1
            self.faults.append(fault)
        return fault

    def take_fault(self, method: str, path: str, user: str) -> Optional[Fault]:
        """Consume one use of the first matching fault (count > 0): the request's own copy,
        with the event that clearing the faults sets from now on (`clear_faults`)."""
        with self.lock:
            for fault in self.faults:
                if fault.count > 0 and fault.matches(method, path, user):
                    fault.count -= 1
                    if fault.count == 0:
                        self.faults.remove(fault)
                    return dataclasses.replace(fault, count=1, release=self.stall_release)
        return None

    def give_back_fault(self, fault: Fault) -> None:
        """Undo take_fault (the request was refused before the fault acted)."""
        with self.lock:
            kept = next((f for f in self.faults if f.id == fault.id), None)
            if kept is not None:
                kept.count += 1
            else:
                self.faults.insert(0, dataclasses.replace(fault, count=1, release=None))

    def clear_faults(self) -> None:
        """No fault is taken any more, and the stalls of those taken so far end at once,
        whenever they begin."""
        with self.lock:
            self.faults.clear()
            self.stall_release.set()
            self.stall_release = asyncio.Event()

    # --- PATCH concurrency bound and stats ----------------------------------
    def try_enter_patch(self, user: str) -> bool:
        with self.lock:
            if self.current_patches[user] >= self.settings.max_uploads_per_account:
                self.busy_refusals[user] += 1
                return False
            self.current_patches[user] += 1
            now = self.current_patches[user]
            if now > self.max_concurrent_patches.get(user, 0):
                self.max_concurrent_patches[user] = now
            return True

    def leave_patch(self, user: str) -> None:
        with self.lock:
            self.current_patches[user] -= 1

    def count_request(self, method: str, client=None) -> None:
        with self.lock:
            self.requests[method] += 1
            if client:
                self.connections.add(tuple(client))

    def count_patch_bytes(self, n: int) -> None:
        self.patch_bytes += n  # event loop only

    def stats(self) -> dict:
        with self.lock:
            return {
                "max_concurrent_patches": dict(self.max_concurrent_patches),
                "current_patches": {u: n for u, n in self.current_patches.items() if n},
                "busy_refusals": dict(self.busy_refusals),
                "requests": dict(self.requests),
                "connections": len(self.connections),
                "patch_bytes": self.patch_bytes,
                **self.counters.snapshot(),
                "completions": self._completions_by_user(),
            }

    def _completions_by_user(self) -> dict:
        out: dict[str, dict[str, int]] = {}
        for (user, path), n in sorted(self.completions.items()):
            out.setdefault(user, {})[path] = n
        return out

    def reset_stats(self) -> None:
        with self.lock:
            self.requests.clear()
            self.connections.clear()
            self.patch_bytes = 0
            self.busy_refusals.clear()
            self.counters.reset()
            self.completions.clear()
            # still-running PATCHes stay counted; the maximum restarts from them
            self.max_concurrent_patches = {
                u: n for u, n in self.current_patches.items() if n
            }

    def record_completion(self, entry: dict) -> None:
        entry["time"] = time.time()
        with self.lock:
            self.completed.append(entry)
            self.completions[(entry["user"], entry["path"])] += 1
