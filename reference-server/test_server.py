"""Tests for the reference server, each against a real server process.

Run: .venv/bin/python -m pytest -q reference-server
"""

from __future__ import annotations

import base64
import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import requests

HERE = Path(__file__).resolve().parent
ALICE = ("alice", "pw-a")
BOB = ("bob", "pw-b")
TUS = {"Tus-Resumable": "1.0.0"}
PATCH_HDRS = {**TUS, "Content-Type": "application/offset+octet-stream"}
DAV = "{DAV:}"


class ServerProcess:
    def __init__(self, data: Path, *extra: str):
        self.data = data
        self.args = [sys.executable, str(HERE / "server.py"), "--data", str(data), "--port", "0",
                     "--user", "alice:pw-a", "--user", "bob:pw-b", *extra]
        self.proc = None
        self.url = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()  # blocks until READY (or exit)
        assert line.startswith("READY http://127.0.0.1:"), f"no READY line: {line!r}"
        self.url = line.split()[1]

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(5)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            assert self.proc.wait(10) == 0

    # --- small clients ---
    def control(self, method, path, json=None):
        r = requests.request(method, f"{self.url}/_control/{path}", json=json, timeout=5)
        assert r.status_code < 300, r.text
        return r.json()

    def create(self, path, length, auth=ALICE, **meta):
        meta = {"path": path, "filename": os.path.basename(path), **meta}
        enc = ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in meta.items())
        return requests.post(f"{self.url}/files/", auth=auth, timeout=5,
                             headers={**TUS, "Upload-Length": str(length), "Upload-Metadata": enc})

    def upload_url(self, path, length, auth=ALICE):
        r = self.create(path, length, auth)
        assert r.status_code == 201, r.text
        return r.headers["Location"]

    @staticmethod
    def patch(url, offset, data, auth=ALICE, timeout=10, **headers):
        return requests.patch(url, data=data, auth=auth, timeout=timeout,
                              headers={**PATCH_HDRS, "Upload-Offset": str(offset), **headers})

    @staticmethod
    def offset(url, auth=ALICE):
        r = requests.head(url, auth=auth, headers=TUS, timeout=5)
        return int(r.headers["Upload-Offset"]) if r.status_code == 200 else r.status_code

    def tree(self, user="alice"):
        return self.data / "tree" / user


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    s = ServerProcess(tmp_path_factory.mktemp("data"))
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def clean_state(request):
    if "srv" in request.fixturenames:
        s = request.getfixturevalue("srv")
        s.control("DELETE", "faults")
        for user in ("alice", "bob"):
            s.control("POST", "quota", {"user": user, "available_bytes": None})
    yield


def blob(n, seed=0):
    return hashlib.sha256(str(seed).encode()).digest() * (n // 32) + b"x" * (n % 32)


def wait_for(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def raw_patch(url, offset, data, auth=ALICE):
    """PATCH over a bare socket; returns the reply bytes, or 'reset'."""
    host, port = url.split("/")[2].split(":")
    path = "/" + url.split("/", 3)[3]
    cred = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    head = (f"PATCH {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Basic {cred}\r\n"
            f"Tus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\n"
            f"Upload-Offset: {offset}\r\nContent-Length: {len(data)}\r\n\r\n").encode()
    with socket.create_connection((host, int(port)), timeout=5) as s:
        try:
            s.sendall(head + data)
            reply = s.recv(65536)
        except ConnectionError:  # reset, or broken pipe while still sending
            return "reset"
        return reply or "closed (FIN)"


# --- tus ------------------------------------------------------------------------

def test_options_advertises_supported_extensions(srv):
    r = requests.options(f"{srv.url}/files/", auth=ALICE, headers=TUS, timeout=5)
    assert r.status_code == 204
    assert r.headers["Tus-Version"] == "1.0.0"
    assert r.headers["Tus-Extension"] == "creation,expiration,termination,checksum"
    assert "sha256" in r.headers["Tus-Checksum-Algorithm"].split(",")
    assert r.headers["Tus-Max-Size"] == str(1 << 40)


def test_auth_is_checked_before_any_byte_is_stored(srv):
    tus_dir = srv.data / "tus" / "alice"
    before = set(os.listdir(tus_dir))
    for auth in (None, ("alice", "wrong"), ("nobody", "pw-a")):
        r = requests.post(f"{srv.url}/files/", auth=auth, timeout=5,
                          headers={**TUS, "Upload-Length": "5", "Upload-Metadata": "path L2E=,filename YQ=="})
        assert r.status_code == 401
        assert r.headers["WWW-Authenticate"] == 'Basic realm="instant-upload"'
    assert set(os.listdir(tus_dir)) == before

    url = srv.upload_url("auth.bin", 1 << 20)
    uid = url.rsplit("/", 1)[1]
    assert srv.patch(url, 0, blob(1 << 20), auth=("alice", "wrong")).status_code == 401
    assert srv.patch(url, 0, blob(1 << 20), auth=None).status_code == 401
    assert (tus_dir / uid).stat().st_size == 0
    assert srv.offset(url) == 0
    # another account does not see the upload at all
    assert srv.patch(url, 0, blob(1 << 20), auth=BOB).status_code == 404
    assert srv.offset(url, auth=BOB) == 404
    assert (tus_dir / uid).stat().st_size == 0 and srv.offset(url) == 0


def test_upload_completes_into_the_tree(srv):
    (srv.tree() / "Photos").mkdir(exist_ok=True)
    data = blob(300_000, seed=1)
    url = srv.upload_url("/Photos/IMG 1.jpg", len(data))  # leading / is ignored
    r = srv.patch(url, 0, data[:100_000])
    assert r.status_code == 204 and r.headers["Upload-Offset"] == "100000"
    assert "Upload-Expires" in r.headers
    assert srv.offset(url) == 100_000
    assert srv.patch(url, 100_000, data[100_000:]).status_code == 204
    assert (srv.tree() / "Photos" / "IMG 1.jpg").read_bytes() == data
    # the upload URL still answers, complete, after the temp data is gone
    assert srv.offset(url) == len(data)
    uid = url.rsplit("/", 1)[1]
    assert (srv.data / "tus" / "alice" / uid).stat().st_size == 0
    done = [c for c in srv.control("GET", "completed") if c["id"] == uid]
    assert done[0]["path"] == "Photos/IMG 1.jpg" and not done[0]["replaced"]


def completions(srv, path, user="alice"):
    return srv.control("GET", "stats")["completions"].get(user, {}).get(path, 0)


def test_every_completion_is_placed_and_counted_identical_or_not(srv):
    def put(data):
        url = srv.upload_url("dup.txt", len(data))
        assert srv.patch(url, 0, data).status_code == 204
    before = completions(srv, "dup.txt")
    put(b"first version")
    put(b"first version")  # identical bytes are not merged away: a second completion
    assert sorted(p.name for p in srv.tree().glob("dup*")) == ["dup.txt"]
    assert completions(srv, "dup.txt") == before + 2
    put(b"second version")  # a different file replaces it, as Nextcloud and oCIS do
    assert (srv.tree() / "dup.txt").read_bytes() == b"second version"
    assert sorted(p.name for p in srv.tree().glob("dup*")) == ["dup.txt"]
    assert completions(srv, "dup.txt") == before + 3
    last = [c for c in srv.control("GET", "completed") if c["path"] == "dup.txt"][-1]
    assert last["replaced"] is True


def test_a_missing_parent_at_completion_is_refused_not_recreated(srv):
    (srv.tree() / "Vanishing").mkdir()
    data = blob(3000, seed=8)
    url = srv.upload_url("Vanishing/a.bin", len(data))
    assert srv.patch(url, 0, data[:1000]).status_code == 204
    (srv.tree() / "Vanishing").rmdir()
    srv.control("POST", "stats/reset")
    r = srv.patch(url, 1000, data[1000:])
    assert (r.status_code, r.text) == (409, "target folder does not exist")
    assert not (srv.tree() / "Vanishing").exists()
    assert srv.offset(url) == 1000  # nothing of the refused chunk was stored
    assert completions(srv, "Vanishing/a.bin") == 0
    (srv.tree() / "Vanishing").mkdir()
    assert srv.patch(url, 1000, data[1000:]).status_code == 204
    assert (srv.tree() / "Vanishing" / "a.bin").read_bytes() == data
    assert completions(srv, "Vanishing/a.bin") == 1


def test_a_folder_at_the_target_refuses_completion(srv):
    url = srv.upload_url("Clash", 4)
    (srv.tree() / "Clash").mkdir()
    r = srv.patch(url, 0, b"abcd")
    assert (r.status_code, r.text) == (409, "a folder has the target's name")
    assert (srv.tree() / "Clash").is_dir()


def test_every_patch_moves_the_expiry(srv):
    url = srv.upload_url("sliding.bin", 10)
    created = requests.head(url, auth=ALICE, headers=TUS, timeout=5).headers["Upload-Expires"]
    time.sleep(1.1)  # HTTP dates count whole seconds
    r = srv.patch(url, 0, b"01234")
    assert r.status_code == 204 and r.headers["Upload-Expires"] != created
    assert requests.head(url, auth=ALICE, headers=TUS, timeout=5).headers["Upload-Expires"] == r.headers["Upload-Expires"]


def test_creation_is_validated(srv):
    r = srv.create("Missing/Folder/a.jpg", 10)
    assert r.status_code == 409 and r.text == "target folder does not exist"
    assert srv.create("../escape.jpg", 10).status_code == 400
    assert srv.create("a/../../b.jpg", 10).status_code == 400
    r = requests.post(f"{srv.url}/files/", auth=ALICE, timeout=5,
                      headers={**TUS, "Upload-Length": "3", "Upload-Metadata": "filename YQ=="})
    assert r.status_code == 400  # no path
    assert srv.create("big.bin", (1 << 40) + 1).status_code == 413
    r = srv.create("empty.txt", 0)  # zero bytes: complete on creation
    assert r.status_code == 201 and (srv.tree() / "empty.txt").read_bytes() == b""


def test_quota_gives_507_and_is_reported(srv):
    srv.control("POST", "quota", {"user": "alice", "available_bytes": 1000})
    assert srv.create("q.bin", 1001).status_code == 507
    url = srv.upload_url("q.bin", 600)
    assert srv.patch(url, 0, blob(600)).status_code == 204
    assert srv.create("q2.bin", 600).status_code == 507  # 400 left
    r = requests.request("PROPFIND", f"{srv.url}/dav/alice/", auth=ALICE, timeout=5,
                         headers={"Depth": "0"}, data='<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop>'
                         '<d:quota-available-bytes/><d:quota-used-bytes/></d:prop></d:propfind>')
    assert r.status_code == 207
    root = ET.fromstring(r.content)
    assert root.find(f".//{DAV}quota-available-bytes").text == "400"
    assert int(root.find(f".//{DAV}quota-used-bytes").text) >= 600
    r = requests.put(f"{srv.url}/dav/alice/toobig.bin", data=blob(401), auth=ALICE, timeout=5)
    assert r.status_code == 507


def test_per_account_bound_answers_429(srv):
    srv.control("POST", "stats/reset")
    srv.control("POST", "faults", {"method": "PATCH", "count": 3, "stall_seconds": 1.5, "after_bytes": 0})
    urls = [srv.upload_url(f"par{i}.bin", 1000) for i in range(4)]
    results = {}
    threads = [threading.Thread(target=lambda u=u: results.__setitem__(u, srv.patch(u, 0, blob(1000)).status_code))
               for u in urls[:3]]
    for t in threads:
        t.start()
    assert wait_for(lambda: srv.control("GET", "stats")["current_patches"].get("alice") == 3)
    r = srv.patch(urls[3], 0, blob(1000))
    assert r.status_code == 429 and r.headers["Retry-After"] == "1"
    assert srv.patch(urls[3], 0, blob(1000), auth=BOB).status_code == 404  # bob has his own bound
    for t in threads:
        t.join()
    assert list(results.values()) == [204, 204, 204]
    assert srv.patch(urls[3], 0, blob(1000)).status_code == 204
    stats = srv.control("GET", "stats")
    assert stats["max_concurrent_patches"]["alice"] == 3
    assert stats["requests"]["PATCH"] >= 5 and stats["patch_bytes"] >= 4000
    assert stats["busy_refusals"] == {"alice": 1}  # bob's 404 was no refusal


def test_status_fault(srv):
    url = srv.upload_url("fault.bin", 10)
    srv.control("POST", "faults", {"method": "PATCH", "count": 2, "status": 503,
                                   "headers": {"Retry-After": "3"}, "body": "maintenance"})
    srv.control("POST", "faults", {"method": "*", "path_prefix": "/dav/", "user": "bob", "status": 500})
    assert len(srv.control("GET", "faults")) == 2
    for _ in range(2):
        r = srv.patch(url, 0, b"0123456789")
        assert (r.status_code, r.headers["Retry-After"], r.text) == (503, "3", "maintenance")
    assert srv.offset(url) == 0
    assert requests.get(f"{srv.url}/dav/alice/fault.bin", auth=ALICE, timeout=5).status_code == 404  # not bob
    assert srv.patch(url, 0, b"0123456789").status_code == 204
    assert srv.control("GET", "faults")[0]["user"] == "bob"
    srv.control("DELETE", "faults")
    assert srv.control("GET", "faults") == []


def test_reset_fault_stores_prefix_and_sends_no_reply(srv):
    data = blob(300_000, seed=2)
    url = srv.upload_url("reset.bin", len(data))
    srv.control("POST", "faults", {"method": "PATCH", "reset_after_bytes": 100_000, "count": 1})
    assert raw_patch(url, 0, data) == "reset"  # an RST, no HTTP reply at all
    assert srv.offset(url) == 100_000
    # again through requests, with a checksum: the prefix is stored all the same
    srv.control("POST", "faults", {"method": "PATCH", "reset_after_bytes": 50_000, "count": 1})
    sha = base64.b64encode(hashlib.sha1(data[100_000:]).digest()).decode()
    with pytest.raises(requests.ConnectionError):
        srv.patch(url, 100_000, data[100_000:], **{"Upload-Checksum": f"sha1 {sha}"})
    assert srv.offset(url) == 150_000
    assert srv.patch(url, 150_000, data[150_000:]).status_code == 204
    assert (srv.tree() / "reset.bin").read_bytes() == data
    # a body shorter than reset_after_bytes is stored whole; only the reply is lost
    url = srv.upload_url("lost-reply.bin", 1000)
    srv.control("POST", "faults", {"method": "PATCH", "reset_after_bytes": 5000})
    assert raw_patch(url, 0, data[:1000]) == "reset"
    assert srv.offset(url) == 1000 and (srv.tree() / "lost-reply.bin").read_bytes() == data[:1000]


def test_stall_fault_stops_reading(srv):
    data = blob(32 << 20, seed=3)
    url = srv.upload_url("stall.bin", len(data))
    srv.control("POST", "stats/reset")
    srv.control("POST", "faults", {"method": "PATCH", "stall_seconds": 1.5, "after_bytes": 1 << 20})
    box = {}
    t0 = time.monotonic()
    t = threading.Thread(target=lambda: box.setdefault("r", srv.patch(url, 0, data)))
    t.start()
    assert wait_for(lambda: srv.control("GET", "stats")["patch_bytes"] >= 1 << 20)
    time.sleep(0.3)
    seen = srv.control("GET", "stats")["patch_bytes"]
    time.sleep(0.5)
    assert srv.control("GET", "stats")["patch_bytes"] == seen < len(data)  # no progress
    t.join()
    assert box["r"].status_code == 204 and time.monotonic() - t0 >= 1.5
    assert srv.offset(url) == len(data)


def test_clearing_the_faults_ends_a_stall_in_progress(srv):
    data = blob(2 << 20, seed=5)
    url = srv.upload_url("released.bin", len(data))
    srv.control("POST", "stats/reset")
    srv.control("POST", "faults", {"method": "PATCH", "stall_seconds": 120, "after_bytes": 1 << 20})
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", srv.patch(url, 0, data)))
    t.start()
    assert wait_for(lambda: srv.control("GET", "stats")["patch_bytes"] >= 1 << 20)
    t0 = time.monotonic()
    srv.control("DELETE", "faults")
    t.join(timeout=30)
    assert not t.is_alive() and time.monotonic() - t0 < 30  # not the 120 s
    assert box["r"].status_code == 204 and srv.offset(url) == len(data)


def test_a_fault_taken_before_the_faults_are_cleared_is_released_whenever_its_stall_begins(tmp_path):
    # A PATCH takes its fault when it arrives and may stall only later (after a takeover, or
    # once its body reaches after_bytes); a test that saw the fault taken and cleared the
    # faults meanwhile must not leave that stall to run its full time.
    from faults import Fault
    from state import Settings, State
    state = State(Settings(data=tmp_path, users={"alice": "a"}))
    state.add_fault(Fault.from_json({"method": "PATCH", "count": 2, "stall_seconds": 120, "after_bytes": 10}))
    taken = state.take_fault("PATCH", "/files/1", "alice")
    assert taken is not None and not taken.release.is_set()
    state.give_back_fault(state.take_fault("PATCH", "/files/1", "alice"))  # refused before it acted
    assert [f.count for f in state.faults] == [1]
    state.clear_faults()
    assert taken.release.is_set() and state.faults == []
    state.add_fault(Fault.from_json({"method": "PATCH", "stall_seconds": 120, "after_bytes": 10}))
    later = state.take_fault("PATCH", "/files/1", "alice")
    assert not later.release.is_set() and "release" not in later.to_json()


def test_new_patch_takes_over_a_stuck_one(srv):
    data = blob(5000, seed=4)
    url = srv.upload_url("takeover.bin", len(data))
    srv.control("POST", "faults", {"method": "PATCH", "stall_seconds": 30, "after_bytes": 1000})
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", raw_patch(url, 0, data)))
    t.start()
    assert wait_for(lambda: srv.control("GET", "stats")["current_patches"].get("alice") == 1)
    t0 = time.monotonic()
    assert srv.patch(url, 0, data).status_code == 409  # old one stopped, kept 1000 bytes
    assert time.monotonic() - t0 < 5
    t.join()
    assert box["r"] == "reset"
    assert srv.offset(url) == 1000
    assert srv.patch(url, 1000, data[1000:]).status_code == 204


def test_checksum_mismatch_leaves_offset(srv):
    url = srv.upload_url("sum.bin", 8)

    def b64(algo, data):
        return base64.b64encode(hashlib.new(algo, data).digest()).decode()
    r = srv.patch(url, 0, b"abcd", **{"Upload-Checksum": f"sha256 {b64('sha256', b'abcX')}"})
    assert r.status_code == 460 and srv.offset(url) == 0
    r = srv.patch(url, 0, b"abcd", **{"Upload-Checksum": "crc32 AAAA"})
    assert r.status_code == 400 and srv.offset(url) == 0
    assert srv.patch(url, 0, b"abcd", **{"Upload-Checksum": f"sha256 {b64('sha256', b'abcd')}"}).status_code == 204
    assert srv.patch(url, 4, b"efgh", **{"Upload-Checksum": f"md5 {b64('md5', b'efgh')}"}).status_code == 204
    assert (srv.tree() / "sum.bin").read_bytes() == b"abcdefgh"


def test_termination(srv):
    url = srv.upload_url("gone.bin", 10)
    assert srv.patch(url, 0, b"01234").status_code == 204
    assert requests.delete(url, auth=BOB, headers=TUS, timeout=5).status_code == 404
    assert requests.delete(url, auth=ALICE, headers=TUS, timeout=5).status_code == 204
    assert srv.offset(url) == 404
    assert srv.patch(url, 5, b"56789").status_code == 404
    assert not (srv.tree() / "gone.bin").exists()


def test_tuspy_uploads_8_mib(srv, tmp_path):
    from tusclient import client

    src = tmp_path / "video.mp4"
    src.write_bytes(os.urandom(8 << 20))
    (srv.tree() / "Videos").mkdir(exist_ok=True)
    cred = base64.b64encode(b"alice:pw-a").decode()
    tc = client.TusClient(f"{srv.url}/files/", headers={"Authorization": f"Basic {cred}"})
    up = tc.uploader(file_path=str(src), chunk_size=3 << 20, upload_checksum=True,
                     metadata={"path": "Videos/video.mp4", "filename": "video.mp4", "filetype": "video/mp4"})
    up.upload()
    assert (srv.tree() / "Videos" / "video.mp4").read_bytes() == src.read_bytes()


# --- WebDAV -----------------------------------------------------------------------

def propfind(srv, path, depth, auth=ALICE, body=None):
    r = requests.request("PROPFIND", f"{srv.url}/dav/alice/{path}", auth=auth, timeout=5,
                         headers={"Depth": str(depth)}, data=body)
    return r.status_code, (ET.fromstring(r.content) if r.status_code == 207 else None)


def test_webdav_basics(srv):
    base = f"{srv.url}/dav/alice"
    assert requests.request("MKCOL", f"{base}/Docs", auth=ALICE, timeout=5).status_code == 201
    data = blob(10_000, seed=5)
    assert requests.put(f"{base}/Docs/a.bin", data=data, auth=ALICE, timeout=5).status_code in (201, 204)
    status, root = propfind(srv, "Docs/", 1)
    assert status == 207
    hrefs = [e.text for e in root.iter(f"{DAV}href")]
    assert hrefs == ["/dav/alice/Docs/", "/dav/alice/Docs/a.bin"]
    status, root = propfind(srv, "Docs/a.bin", 0, body='<?xml version="1.0"?><d:propfind xmlns:d="DAV:" '
                            'xmlns:oc="http://owncloud.org/ns"><d:prop><d:getcontentlength/><d:getetag/>'
                            '<oc:checksums/></d:prop></d:propfind>')
    assert root.find(f".//{DAV}getcontentlength").text == "10000"
    etag = root.find(f".//{DAV}getetag").text
    sums = root.find(".//{http://owncloud.org/ns}checksum").text
    assert sums == "SHA256:" + hashlib.sha256(data).hexdigest()

    r = requests.get(f"{base}/Docs/a.bin", auth=ALICE, headers={"Range": "bytes=100-199"}, timeout=5)
    assert r.status_code == 206 and r.content == data[100:200]
    assert r.headers["ETag"].strip('"') == etag
    r = requests.get(f"{base}/Docs/a.bin", auth=ALICE, timeout=5,
                     headers={"Range": "bytes=9000-", "If-Range": f'"{etag}"'})
    assert r.status_code == 206 and r.content == data[9000:]
    r = requests.get(f"{base}/Docs/a.bin", auth=ALICE, timeout=5,
                     headers={"Range": "bytes=9000-", "If-Range": '"stale"'})
    assert r.status_code == 200 and r.content == data

    r = requests.request("MOVE", f"{base}/Docs/a.bin", auth=ALICE, timeout=5,
                         headers={"Destination": f"{base}/Docs/b%20c.bin"})
    assert r.status_code in (201, 204)
    assert (srv.tree() / "Docs" / "b c.bin").read_bytes() == data
    assert requests.delete(f"{base}/Docs/b%20c.bin", auth=ALICE, timeout=5).status_code == 204
    assert propfind(srv, "Docs/b%20c.bin", 0)[0] == 404


def test_webdav_access_is_per_account(srv):
    assert propfind(srv, "", 0, auth=None)[0] == 401
    assert propfind(srv, "", 0, auth=("alice", "nope"))[0] == 401
    assert propfind(srv, "", 0, auth=BOB)[0] == 403
    r = requests.request("PROPFIND", f"{srv.url}/dav/bob/", auth=BOB, headers={"Depth": "0"}, timeout=5)
    assert r.status_code == 207
    r = requests.request("MOVE", f"{srv.url}/dav/bob/x", auth=BOB, timeout=5,
                         headers={"Destination": f"{srv.url}/dav/alice/x"})
    assert r.status_code == 403


def test_download_reset_fault_then_range_resume(srv):
    data = blob(200_000, seed=6)
    url = f"{srv.url}/dav/alice/dl.bin"
    assert requests.put(url, data=data, auth=ALICE, timeout=5).status_code in (201, 204)
    srv.control("POST", "faults", {"method": "GET", "path_prefix": "/dav/", "reset_after_bytes": 70_000})
    got = b""
    with pytest.raises(requests.exceptions.RequestException):
        with requests.get(url, auth=ALICE, stream=True, timeout=5) as r:
            etag = r.headers["ETag"]
            for chunk in r.iter_content(8192):
                got += chunk
    assert 0 < len(got) <= 70_000
    r = requests.get(url, auth=ALICE, timeout=5, headers={"Range": f"bytes={len(got)}-", "If-Range": etag})
    assert r.status_code == 206 and got + r.content == data


def test_ignore_range_fault_answers_200_with_the_whole_file_and_can_break_it_off(srv):
    data = blob(200_000, seed=7)
    url = f"{srv.url}/dav/alice/whole.bin"
    assert requests.put(url, data=data, auth=ALICE, timeout=5).status_code in (201, 204)
    etag = requests.head(url, auth=ALICE, timeout=5).headers["ETag"]
    ranged = {"Range": "bytes=100000-", "If-Range": etag}

    # alone: a server that does not do ranges
    srv.control("POST", "faults", {"method": "GET", "path_prefix": "/dav/", "ignore_range": True})
    r = requests.get(url, auth=ALICE, timeout=5, headers=ranged)
    assert r.status_code == 200 and r.content == data and "Content-Range" not in r.headers

    # with a reset: the whole file from byte 0, broken off after 70 000 bytes
    srv.control("POST", "faults", {"method": "GET", "path_prefix": "/dav/", "ignore_range": True,
                                   "reset_after_bytes": 70_000})
    got = b""
    with pytest.raises(requests.exceptions.RequestException):
        with requests.get(url, auth=ALICE, stream=True, timeout=5, headers=ranged) as r:
            assert r.status_code == 200
            for chunk in r.iter_content(8192):
                got += chunk
    assert 0 < len(got) <= 70_000 and got == data[:len(got)]

    # used up: the range is honoured again
    r = requests.get(url, auth=ALICE, timeout=5, headers=ranged)
    assert r.status_code == 206 and r.content == data[100_000:]


def test_throttle_fault_slows_a_download_until_the_faults_are_cleared(srv):
    data = blob(300_000, seed=8)
    url = f"{srv.url}/dav/alice/slow.bin"
    assert requests.put(url, data=data, auth=ALICE, timeout=5).status_code in (201, 204)
    srv.control("POST", "faults", {"method": "GET", "path_prefix": "/dav/", "bytes_per_second": 100_000})
    got = b""
    with requests.get(url, auth=ALICE, stream=True, timeout=10) as r:
        for chunk in r.iter_content(8192):
            got += chunk
            if len(got) >= 50_000:
                break
        # 50 000 bytes in, the rest is still on its way at 100 000 a second
        assert len(got) < len(data)
        srv.control("DELETE", "faults")
        for chunk in r.iter_content(8192):
            got += chunk
    assert got == data


def test_ignore_range_and_throttle_are_for_get_only(srv):
    for bad in ({"method": "PUT", "ignore_range": True}, {"method": "GET", "ignore_range": True, "status": 503},
                {"method": "GET", "ignore_range": "yes"}, {"method": "PUT", "bytes_per_second": 1000},
                {"method": "GET", "bytes_per_second": 0}, {"method": "GET", "bytes_per_second": 1000, "stall_seconds": 1}):
        r = requests.post(f"{srv.url}/_control/faults", json=bad, timeout=5)
        assert r.status_code == 400, bad
    assert srv.control("GET", "faults") == []


# --- restarts and expiry ----------------------------------------------------------------

def test_kill9_and_restart_resume(tmp_path):
    s = ServerProcess(tmp_path)
    try:
        data = blob(3 << 20, seed=7)
        url = s.upload_url("resume.bin", len(data))
        assert s.patch(url, 0, data[: 1 << 20]).status_code == 204
        # a second PATCH is stalled half-way when the server is killed
        s.control("POST", "faults", {"method": "PATCH", "stall_seconds": 30, "after_bytes": 512 << 10})
        t = threading.Thread(target=lambda: raw_patch(url, 1 << 20, data[1 << 20:]))
        t.start()
        assert wait_for(lambda: s.control("GET", "stats")["patch_bytes"] >= (1 << 20) + (512 << 10))
        time.sleep(0.2)
        s.kill9()
        t.join()
        s.start()
        url = url.replace(url.split("/")[2], s.url.split("/")[2])  # new port
        offset = s.offset(url)
        assert offset == (1 << 20) + (512 << 10)  # bytes written before the kill count
        assert s.patch(url, offset, data[offset:]).status_code == 204
        assert (s.tree() / "resume.bin").read_bytes() == data
    finally:
        s.stop()


def test_expiration(tmp_path):
    s = ServerProcess(tmp_path, "--expire-seconds", "1")
    try:
        url = s.upload_url("exp.bin", 10)
        r = requests.head(url, auth=ALICE, headers=TUS, timeout=5)
        assert r.status_code == 200 and r.headers["Upload-Expires"].endswith("GMT")
        time.sleep(2.1)
        assert s.offset(url) in (404, 410)
        assert s.patch(url, 0, b"0123456789").status_code in (404, 410)
    finally:
        s.stop()


def test_stats_count_the_connections_requests_came_on(srv):
    srv.control("POST", "stats/reset")
    with requests.Session() as kept:  # one connection, kept alive between its requests
        for _ in range(3):
            assert kept.request("PROPFIND", f"{srv.url}/dav/alice/", auth=ALICE, headers={"Depth": "0"}, timeout=5).status_code == 207
    for _ in range(2):  # a new connection each
        with requests.Session() as once:
            assert once.request("PROPFIND", f"{srv.url}/dav/alice/", auth=ALICE, headers={"Depth": "0"}, timeout=5).status_code == 207
    stats = srv.control("GET", "stats")
    assert stats["requests"]["PROPFIND"] == 5
    assert stats["connections"] == 3
