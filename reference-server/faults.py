"""Fault switches and the ASGI plumbing that carries them out.

A fault is one of three kinds:
  status  -- answer `status` (+ headers, body) without touching storage;
  reset   -- pass the first `reset_after_bytes` body bytes on, then kill the
             TCP connection with an RST and no HTTP response (a shorter body
             is passed on whole and processed; only the response is lost);
  stall   -- pass `after_bytes` body bytes on, then stop reading for
             `stall_seconds`, then carry on normally.
For GET the byte counts of reset/stall apply to the *response* body (to test
download resume); for every other method to the request body.

A fourth kind is for GET only:
  throttle -- send the response body at about `bytes_per_second`, as over a
             slow link, so a test can act while a download runs; clearing the
             faults lets the rest go at full speed.

A GET fault may also carry `ignore_range: true`: the request's `Range` and
`If-Range` are dropped before the WebDAV server sees them, so the answer is a
`200` with the whole file, as from a server (or a proxy) that does not do
ranges. Alone, that is the whole fault; with reset/stall, the whole-file body
breaks off or stalls at the byte count.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Optional

DISCONNECT = {"type": "http.disconnect"}


@dataclass
class Fault:
    method: str = "*"
    count: int = 1
    path_prefix: Optional[str] = None
    user: Optional[str] = None
    status: Optional[int] = None
    headers: dict = field(default_factory=dict)
    body: str = ""
    reset_after_bytes: Optional[int] = None
    stall_seconds: Optional[float] = None
    after_bytes: int = 0
    ignore_range: bool = False
    bytes_per_second: Optional[int] = None
    id: int = 0
    # Set when a request takes the fault: the event that clearing the faults sets then
    # (`State.take_fault`). Bound at that moment, not when the stall begins, so a test that
    # saw the fault taken and cleared the faults is never left with a stall nobody ends.
    release: Optional[asyncio.Event] = field(default=None, compare=False, repr=False)

    @classmethod
    def from_json(cls, obj: dict) -> "Fault":
        if not isinstance(obj, dict):
            raise ValueError("fault must be a JSON object")
        known = set(cls.__dataclass_fields__) - {"id", "release"}
        unknown = set(obj) - known
        if unknown:
            raise ValueError(f"unknown fault fields: {sorted(unknown)}")
        f = cls(**obj)
        f.method = str(f.method).upper()
        kinds = [k for k in ("status", "reset_after_bytes", "stall_seconds", "bytes_per_second")
                 if getattr(f, k) is not None]
        if not isinstance(f.ignore_range, bool):
            raise ValueError("ignore_range must be true or false")
        if f.ignore_range and (f.method != "GET" or f.status is not None):
            raise ValueError("ignore_range applies to GET, alone or with reset_after_bytes or stall_seconds")
        if len(kinds) != 1 and not (f.ignore_range and not kinds):
            raise ValueError("give exactly one of status, reset_after_bytes, stall_seconds, bytes_per_second"
                             " (or ignore_range alone)")
        if f.bytes_per_second is not None and (f.method != "GET" or not isinstance(f.bytes_per_second, int)
                                               or f.bytes_per_second < 1):
            raise ValueError("bytes_per_second applies to GET and must be an integer >= 1")
        if not isinstance(f.count, int) or f.count < 1:
            raise ValueError("count must be an integer >= 1")
        if f.status is not None and not (isinstance(f.status, int) and 100 <= f.status <= 599):
            raise ValueError("status must be an HTTP status code")
        if f.reset_after_bytes is not None and (not isinstance(f.reset_after_bytes, int) or f.reset_after_bytes < 0):
            raise ValueError("reset_after_bytes must be an integer >= 0")
        if f.stall_seconds is not None and (not isinstance(f.stall_seconds, (int, float)) or f.stall_seconds < 0):
            raise ValueError("stall_seconds must be a number >= 0")
        if not isinstance(f.after_bytes, int) or f.after_bytes < 0:
            raise ValueError("after_bytes must be an integer >= 0")
        if not isinstance(f.headers, dict) or not isinstance(f.body, str):
            raise ValueError("headers must be an object and body a string")
        return f

    @property
    def kind(self) -> str:
        if self.status is not None:
            return "status"
        if self.reset_after_bytes is not None:
            return "reset"
        if self.bytes_per_second is not None:
            return "throttle"
        return "stall" if self.stall_seconds is not None else "whole-file"

    @property
    def limit(self) -> int:
        """Body bytes let through before the reset / stall happens."""
        return self.reset_after_bytes if self.kind == "reset" else self.after_bytes

    def matches(self, method: str, path: str, user: str) -> bool:
        return ((self.method == "*" or self.method == method)
                and (self.path_prefix is None or path.startswith(self.path_prefix))
                and (self.user is None or self.user == user))

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "release"}
        return {k: v for k, v in d.items() if v is not None}


async def send_fault_response(fault: Fault, send) -> None:
    body = fault.body.encode()
    headers = [(k.lower().encode("latin-1"), str(v).encode("latin-1"))
               for k, v in fault.headers.items()]
    names = {k for k, _ in headers}
    if b"content-type" not in names:
        headers.append((b"content-type", b"text/plain; charset=utf-8"))
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": fault.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def abort_connection(uvicorn_send) -> None:
    """Close the client's TCP connection with an RST, sending no response.

    ASGI has no way to do this, so we reach for uvicorn's transport: the `send`
    uvicorn hands the app is a bound method of its RequestResponseCycle, which
    holds the asyncio transport. SO_LINGER(on, 0) + abort() makes the kernel
    send an RST instead of a FIN. Pass the `send` exactly as uvicorn gave it
    to the outermost app (the gate keeps it in scope["iu.uvicorn_send"])."""
    transport = getattr(getattr(uvicorn_send, "__self__", None), "transport", None)
    if transport is None:
        raise RuntimeError("cannot reach the uvicorn transport to reset the connection")
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    # let connection_lost() run, so uvicorn marks the cycle disconnected and
    # does not try to answer "500 ASGI callable returned without response"
    await asyncio.sleep(0)
    await asyncio.sleep(0)


async def stall_for(seconds: float, release: Optional[asyncio.Event]) -> bool:
    """Sleep `seconds`, or less when `release` gets set (clearing the faults ends a
    stall in progress, so a test can hold a transfer exactly as long as it needs)."""
    if release is None:
        await asyncio.sleep(seconds)
        return True
    sleeper = asyncio.ensure_future(asyncio.sleep(seconds))
    waiter = asyncio.ensure_future(release.wait())
    try:
        await asyncio.wait({sleeper, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        sleeper.cancel()
        waiter.cancel()
    return True


async def _wait_or_cancel(aw: Awaitable, cancels: tuple[asyncio.Event, ...]):
    """Await `aw`; return None instead if one of the `cancels` gets set first."""
    if not cancels:
        return await aw
    task = asyncio.ensure_future(aw)
    stoppers = [asyncio.ensure_future(c.wait()) for c in cancels]
    try:
        await asyncio.wait({task, *stoppers}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        for s in stoppers:
            s.cancel()
    if task.done():
        return task.result()
    task.cancel()
    return None


class BodyTap:
    """Wraps an ASGI `receive`: counts request body bytes, applies a stall or
    reset fault at a byte position, and can be cancelled (takeover, shutdown).

    After `cut` (reset position reached, or cancelled) the wrapped app sees
    `http.disconnect`, which makes tuspyserver store the bytes it got; the
    caller must then drop the app's response and RST the connection."""

    def __init__(self, receive, *, on_bytes: Callable[[int], None] = lambda n: None,
                 fault: Optional[Fault] = None, cancels: tuple[asyncio.Event, ...] = ()):
        self._receive = receive
        self._on_bytes = on_bytes
        self._fault = fault
        self._cancel = tuple(c for c in cancels if c is not None)
        self._limit = fault.limit if fault else None  # None: no fault pending
        self._delivered = 0
        self._leftover: Optional[tuple[bytes, bool]] = None
        self.cut = False
        self.finished = False  # the whole body was passed on

    async def _stall(self) -> None:
        if await _wait_or_cancel(stall_for(self._fault.stall_seconds, self._fault.release), self._cancel) is None:
            self.cut = True

    async def __call__(self):
        if self.cut or self.finished:
            if self.cut:
                return DISCONNECT
            # body done: wait for the client to go away (or cancel)
            msg = await _wait_or_cancel(self._receive(), self._cancel)
            return msg if msg is not None else DISCONNECT
        if self._limit is not None and self._delivered >= self._limit:
            # fault position reached before reading more
            if self._fault.kind == "reset":
                self.cut = True
                return DISCONNECT
            self._limit = None
            await self._stall()
            if self.cut:
                return DISCONNECT
        if self._leftover is not None:
            body, more = self._leftover
            self._leftover = None
        else:
            msg = await _wait_or_cancel(self._receive(), self._cancel)
            if msg is None:
                self.cut = True
                return DISCONNECT
            if msg["type"] != "http.request":
                return msg
            body, more = msg.get("body", b""), msg.get("more_body", False)
            self._on_bytes(len(body))
        if self._limit is not None:
            room = self._limit - self._delivered
            if len(body) > room:
                body, rest = body[:room], body[room:]
                self._leftover = (rest, more)
                more = True
            elif not more and self._fault.kind == "stall":
                # body shorter than after_bytes: stall before its end instead
                self._limit = None
                await self._stall()
                if self.cut:
                    return DISCONNECT
        self._delivered += len(body)
        if not more:
            self.finished = True
        return {"type": "http.request", "body": body, "more_body": more}


class ResponseTap:
    """Wraps an ASGI `send` to apply a stall or reset fault to the response
    body after `fault.limit` bytes (used for GET downloads)."""

    def __init__(self, send, fault: Fault, abort: Callable[[], Awaitable[None]],
                 cancels: tuple[asyncio.Event, ...] = ()):
        self._send = send
        self._fault = fault
        self._abort = abort
        self._cancel = cancels
        self._sent = 0
        self._armed = True
        self.cut = False

    async def __call__(self, message):
        if self.cut:
            return
        if message["type"] != "http.response.body" or not self._armed:
            return await self._send(message)
        body = message.get("body", b"")
        room = self._fault.limit - self._sent
        if len(body) < room:
            self._sent += len(body)
            return await self._send(message)
        head, tail = body[:room], body[room:]
        if head:
            await self._send({"type": "http.response.body", "body": head, "more_body": True})
        self._sent += len(head)
        self._armed = False
        if self._fault.kind == "reset":
            self.cut = True
            await self._abort()
            return
        if await _wait_or_cancel(stall_for(self._fault.stall_seconds, self._fault.release), self._cancel) is None:
            self.cut = True  # shutting down
            await self._abort()
            return
        await self._send({"type": "http.response.body", "body": tail,
                          "more_body": message.get("more_body", False)})


class ThrottledSend:
    """Wraps an ASGI `send`: the response body goes out at about `rate` bytes a second,
    in tenths of that. `release` set (the faults cleared) sends the rest at once; shutting
    down drops the connection."""

    def __init__(self, send, rate: int, abort: Callable[[], Awaitable[None]],
                 cancels: tuple[asyncio.Event, ...] = (), release: Optional[asyncio.Event] = None):
        self._send = send
        self._rate = rate
        self._abort = abort
        self._cancel = cancels
        self._release = release
        self.cut = False

    async def __call__(self, message):
        if self.cut:
            return
        if message["type"] != "http.response.body":
            return await self._send(message)
        body = message.get("body", b"")
        more = message.get("more_body", False)
        step = max(1, self._rate // 10)
        start = 0
        while True:
            released = self._release is not None and self._release.is_set()
            piece = body[start:] if released else body[start:start + step]
            start += len(piece)
            await self._send({"type": "http.response.body", "body": piece, "more_body": more or start < len(body)})
            if not released and piece:
                if await _wait_or_cancel(stall_for(len(piece) / self._rate, self._release), self._cancel) is None:
                    self.cut = True  # shutting down
                    await self._abort()
                    return
            if start >= len(body):
                return
