"""Nextcloud's Login Flow v2, as the desktop clients use it.

  POST /index.php/login/v2            -> {"poll": {"token", "endpoint"}, "login"}
  POST /index.php/login/v2/poll       token=<token>: 404 until the login is
                                      approved, then once 200 {"server",
                                      "loginName", "appPassword"}, then 404
  GET  /index.php/login/v2/flow/<id>  the page a person would open

A person approves in a browser; tests approve with POST /_control/login
{"user": "alice", "login": <login URL or its last part, optional>}. An
approved login makes a new app password for that account, which then works
for Basic auth like the real password. Flows expire after 20 minutes.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import Optional

FLOW_LIFETIME = 20 * 60


@dataclass
class Flow:
    poll_token: str
    login_id: str
    created: float
    user: Optional[str] = None
    app_password: Optional[str] = None


def new_app_password() -> str:
    # Nextcloud's look: five groups of five letters and digits
    alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "-".join("".join(secrets.choice(alphabet) for _ in range(5)) for _ in range(5))


class LoginFlows:
    def __init__(self):
        self._lock = threading.Lock()
        self._flows: dict[str, Flow] = {}  # poll token -> flow
        self.app_passwords: dict[str, set[str]] = {}  # login name -> app passwords

    def _expire(self) -> None:
        now = time.time()
        for token in [t for t, f in self._flows.items() if now - f.created > FLOW_LIFETIME]:
            del self._flows[token]

    def start(self) -> Flow:
        with self._lock:
            self._expire()
            flow = Flow(poll_token=secrets.token_urlsafe(48), login_id=secrets.token_urlsafe(24), created=time.time())
            self._flows[flow.poll_token] = flow
            return flow

    def poll(self, token: str) -> Optional[Flow]:
        """The approved flow, once; None while pending or unknown."""
        with self._lock:
            self._expire()
            flow = self._flows.get(token)
            if flow is None or flow.app_password is None:
                return None
            del self._flows[token]
            return flow

    def known_login(self, login_id: str) -> bool:
        with self._lock:
            self._expire()
            return any(f.login_id == login_id for f in self._flows.values())

    def approve(self, user: str, login_id: Optional[str]) -> Flow:
        """Approve one pending flow (the one named, else the only one pending)."""
        with self._lock:
            self._expire()
            pending = [f for f in self._flows.values() if f.app_password is None
                       and (login_id is None or f.login_id == login_id)]
            if len(pending) != 1:
                raise ValueError(f"{len(pending)} pending logins match; name one with \"login\"")
            flow = pending[0]
            flow.user = user
            flow.app_password = new_app_password()
            self.app_passwords.setdefault(user, set()).add(flow.app_password)
            return flow

    def accepts(self, user: str, password: str) -> bool:
        with self._lock:
            return any(secrets.compare_digest(password, p) for p in self.app_passwords.get(user, ()))

    def describe(self) -> dict:
        with self._lock:
            self._expire()
            return {
                "pending": [f.login_id for f in self._flows.values() if f.app_password is None],
                "approved_unpolled": [f.login_id for f in self._flows.values() if f.app_password is not None],
                "app_passwords": {u: len(p) for u, p in self.app_passwords.items()},
            }
