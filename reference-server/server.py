#!/usr/bin/env python3
"""instant-upload reference server: a real tus server (tuspyserver) and a real
WebDAV server (wsgidav) in one uvicorn process, with per-account Basic auth,
a completion hook, a per-account PATCH bound and fault switches for tests.

  python reference-server/server.py --data DIR [--host 127.0.0.1] [--port 8080]
      [--user NAME:PASSWORD ...] [--max-uploads-per-account 3]
      [--expire-seconds 86400] [--max-size BYTES]
      [--face tus|nextcloud|webdav] [--product nextcloud|owncloud|ocis]
      [--path-prefix /nextcloud] [--chunk-min BYTES] [--upload-expire-seconds N]

Prints `READY http://HOST:PORT` on stdout once it listens. See README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import uvicorn  # noqa: E402

import tus_app  # noqa: E402
from dav_app import build_dav_app  # noqa: E402
from gate import Gate  # noqa: E402
from state import USER_RE, Settings, State  # noqa: E402

log = logging.getLogger("reference-server")
GC_INTERVAL = 30.0


def parse_args(argv=None) -> Settings:
    p = argparse.ArgumentParser(description="tus + WebDAV reference server for tests")
    p.add_argument("--data", required=True, type=Path, help="data directory (tree/, tus/, spool/)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    p.add_argument("--user", action="append", default=[], metavar="NAME:PASSWORD",
                   help="account (repeatable); default demo:demo")
    p.add_argument("--max-uploads-per-account", type=int, default=3)
    p.add_argument("--expire-seconds", type=int, default=86400)
    p.add_argument("--max-size", type=int, default=1 << 40, help="Tus-Max-Size (default 1 TiB)")
    p.add_argument("--no-checksums", action="store_true",
                   help="offer neither the tus checksum extension nor file checksums over WebDAV")
    p.add_argument("--tls-cert", type=Path, help="serve https with this certificate (PEM)")
    p.add_argument("--tls-key", type=Path, help="the certificate's private key (PEM)")
    faces = p.add_argument_group("faces", "what the server looks like (see README.md)")
    faces.add_argument("--face", choices=["tus", "nextcloud", "webdav"], default="tus",
                       help="tus: /files/ + /dav/<user>/; nextcloud: status.php, OCS, Login Flow v2, "
                            "remote.php/dav with chunked upload v2; webdav: /dav/<user>/ only")
    faces.add_argument("--product", choices=["nextcloud", "owncloud", "ocis"], default="nextcloud",
                       help="with --face nextcloud: which server to pretend to be (ocis adds tus at the WebDAV folders)")
    faces.add_argument("--path-prefix", default="", help="with --face nextcloud: serve under this path, e.g. /nextcloud")
    faces.add_argument("--chunk-min", type=int, default=5 << 20,
                       help="with --face nextcloud: smallest chunk but the last (Nextcloud: 5 MiB)")
    faces.add_argument("--upload-expire-seconds", type=int, default=86400,
                       help="with --face nextcloud: an upload folder untouched this long is gone")
    faces.add_argument("--reply-etags-differ", action="store_true",
                       help="with --face nextcloud: the reply to a PUT or an assembly names the file by "
                            "another ETag than its listing does (as some servers do)")
    a = p.parse_args(argv)
    if (a.tls_cert is None) != (a.tls_key is None):
        p.error("--tls-cert and --tls-key go together")
    users = {}
    for spec in a.user or ["demo:demo"]:
        name, sep, password = spec.partition(":")
        if not sep or not USER_RE.match(name):
            p.error(f"--user wants NAME:PASSWORD with NAME of [A-Za-z0-9._-], got {name!r}")
        users[name] = password
    if a.max_uploads_per_account < 1 or a.expire_seconds < 1 or a.max_size < 0:
        p.error("--max-uploads-per-account and --expire-seconds must be >= 1")
    prefix = a.path_prefix.rstrip("/")
    if prefix and (not prefix.startswith("/") or prefix.startswith(("/_control", "/files", "/dav"))):
        p.error("--path-prefix wants a path like /nextcloud")
    if a.chunk_min < 1 or a.upload_expire_seconds < 1:
        p.error("--chunk-min and --upload-expire-seconds must be >= 1")
    settings = Settings(data=a.data.resolve(), users=users, host=a.host, port=a.port,
                        max_uploads_per_account=a.max_uploads_per_account,
                        expire_seconds=a.expire_seconds, max_size=a.max_size, checksums=not a.no_checksums,
                        face=a.face, tls_cert=a.tls_cert, tls_key=a.tls_key)
    settings.nextcloud = {"prefix": prefix, "product": a.product, "chunk_min": a.chunk_min,
                          "upload_expire_seconds": a.upload_expire_seconds, "reply_etags_differ": a.reply_etags_differ}
    return settings


class Server(uvicorn.Server):
    def __init__(self, config, state: State):
        super().__init__(config)
        self.state = state

    async def startup(self, sockets=None):
        await super().startup(sockets=sockets)
        if self.should_exit or not self.servers:
            return
        host, port = self.servers[0].sockets[0].getsockname()[:2]
        if ":" in host:
            host = f"[{host}]"
        scheme = "https" if self.config.ssl_certfile else "http"
        print(f"READY {scheme}://{host}:{port}", flush=True)

    async def shutdown(self, sockets=None):
        self.state.shutting_down.set()
        await super().shutdown(sockets=sockets)

    def handle_exit(self, sig, frame):
        super().handle_exit(sig, frame)
        # uvicorn re-raises the signal after shutting down; we want exit code 0
        self._captured_signals.clear()


async def collect_garbage(state: State) -> None:
    while True:
        await asyncio.sleep(GC_INTERVAL)
        try:
            tus_app.gc_expired(state)
        except Exception:  # keep serving whatever happens here
            log.exception("expiry collection failed")


async def main_async(settings: Settings) -> None:
    import dav_app
    dav_app.CHECKSUMS_ENABLED = settings.checksums
    state = State(settings)
    state.prepare_dirs()
    tus_app.reconcile_all(state)  # uploads cut off by a kill -9
    tus_app.gc_expired(state)
    face = None
    if settings.face == "nextcloud":
        from nextcloud_app import NextcloudFace
        face = NextcloudFace(state, **settings.nextcloud)
    app = Gate(state, tus_app.build_tus_app(state), build_dav_app(state), face)
    config = uvicorn.Config(
        app, host=settings.host, port=settings.port,
        http="h11",  # faults.abort_connection relies on uvicorn's protocol objects
        lifespan="off", access_log=False, log_level="warning",
        timeout_graceful_shutdown=2,
        ssl_certfile=settings.tls_cert, ssl_keyfile=settings.tls_key,
    )
    gc = asyncio.create_task(collect_garbage(state))
    try:
        await Server(config, state).serve()
    finally:
        gc.cancel()


def main(argv=None) -> int:
    # A parent that spawned us from a thread with signals blocked (Foundation's Process
    # does) passes that mask on; SIGTERM would then never arrive.
    import signal
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    settings = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    # tuspyserver logs whole .info contents at INFO on every HEAD
    logging.getLogger("tuspyserver").setLevel(logging.WARNING)
    asyncio.run(main_async(settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
