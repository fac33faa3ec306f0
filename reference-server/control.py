"""Control API under /_control/ (JSON, no auth, loopback clients only)."""

from __future__ import annotations

import ipaddress
import json

from faults import Fault
from state import State

HOME_PAGE = """instant-upload reference server

  /files/           tus 1.0.0 (creation, expiration, termination, checksum)
  /dav/<user>/      WebDAV, the account's own tree
  /_control/        test control API (faults, quota, stats, completed)

All /files/ and /dav/ requests need HTTP Basic auth.
"""


async def _json(send, status: int, obj) -> None:
    data = json.dumps(obj, indent=1).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


async def _read_json(receive):
    body = b""
    while True:
        msg = await receive()
        if msg["type"] != "http.request":
            break
        body += msg.get("body", b"")
        if len(body) > 1 << 20:
            raise ValueError("body too large")
        if not msg.get("more_body"):
            break
    return json.loads(body or b"null")


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


async def handle(state: State, scope, receive, send, face=None) -> None:
    client = scope.get("client")
    if client and not _is_loopback(client[0]):
        return await _json(send, 403, {"error": "control API is for loopback clients only"})
    method = scope["method"]
    path = scope["path"].rstrip("/")
    try:
        body = await _read_json(receive) if method in ("POST", "PUT") else None
    except ValueError as e:
        return await _json(send, 400, {"error": f"bad JSON: {e}"})

    if path == "/_control/faults":
        if method == "GET":
            with state.lock:
                return await _json(send, 200, [f.to_json() for f in state.faults])
        if method == "DELETE":
            state.clear_faults()
            return await _json(send, 200, [])
        if method == "POST":
            try:
                items = body if isinstance(body, list) else [body]
                faults = [Fault.from_json(item) for item in items]
            except (TypeError, ValueError) as e:
                return await _json(send, 400, {"error": str(e)})
            added = [state.add_fault(f).to_json() for f in faults]
            return await _json(send, 201, added if isinstance(body, list) else added[0])

    elif path == "/_control/quota":
        if method == "GET":
            out = {}
            for user in state.settings.users:
                used = state.used_bytes(user)
                out[user] = {"used_bytes": used, "available_bytes": state.available_bytes(user, used)}
            return await _json(send, 200, out)
        if method == "POST":
            if not isinstance(body, dict) or body.get("user") not in state.settings.users:
                return await _json(send, 400, {"error": "need {\"user\": <known account>, \"available_bytes\": int|null}"})
            avail = body.get("available_bytes")
            if avail is not None and (not isinstance(avail, int) or avail < 0):
                return await _json(send, 400, {"error": "available_bytes must be an integer >= 0 or null"})
            state.set_quota(body["user"], avail)
            return await _json(send, 200, {"user": body["user"], "available_bytes": state.available_bytes(body["user"])})

    elif path == "/_control/stats":
        if method == "GET":
            return await _json(send, 200, state.stats())

    elif path == "/_control/stats/reset":
        if method == "POST":
            state.reset_stats()
            return await _json(send, 200, state.stats())

    elif path == "/_control/completed":
        if method == "GET":
            with state.lock:
                return await _json(send, 200, list(state.completed))
        if method == "DELETE":
            with state.lock:
                state.completed.clear()
            return await _json(send, 200, [])
    elif face is not None and (answer := face.control(path, method, body)) is not None:
        return await _json(send, *answer)  # maintenance, login approval, upload expiry, user ids
    else:
        return await _json(send, 404, {"error": "unknown control endpoint"})
    return await _json(send, 405, {"error": f"{method} not allowed here"})
