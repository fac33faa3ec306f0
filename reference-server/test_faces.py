"""Tests for the Nextcloud face (status.php, OCS, Login Flow v2, WebDAV under
remote.php, chunked upload v2), the ownCloud Infinite Scale variant and the
plain-WebDAV face, each against a real server process.

Run: .venv/bin/python -m pytest -q reference-server
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import xml.etree.ElementTree as ET
from urllib.parse import quote

import pytest
import requests

from test_server import ALICE, BOB, DAV, ServerProcess, blob, raw_patch, wait_for

OCS = {"OCS-APIRequest": "true"}
CHUNK_MIN = 1000


class Nextcloud:
    def __init__(self, srv: ServerProcess, prefix: str):
        self.srv = srv
        self.base = srv.url + prefix
        users = srv.control("GET", "users")
        self.alice_id = users["alice"]["id"]
        self.files = srv.url + users["alice"]["webdav"]
        self.uploads = srv.url + users["alice"]["uploads"]

    def dest(self, rel):
        return self.files + quote(rel)

    def req(self, method, url, auth=ALICE, **kw):
        return requests.request(method, url, auth=auth, timeout=10, **kw)

    def mkcol(self, transfer, rel, **headers):
        return self.req("MKCOL", self.uploads + transfer, headers={"Destination": self.dest(rel), **headers})

    def chunk(self, transfer, n, data, rel, total, **headers):
        return self.req("PUT", f"{self.uploads}{transfer}/{n}", data=data,
                        headers={"Destination": self.dest(rel), "OC-Total-Length": str(total), **headers})

    def move(self, transfer, rel, total, **headers):
        return self.req("MOVE", f"{self.uploads}{transfer}/.file",
                        headers={"Destination": self.dest(rel), "OC-Total-Length": str(total), **headers})

    def held(self, transfer):
        r = self.req("PROPFIND", f"{self.uploads}{transfer}/", headers={"Depth": "1"})
        if r.status_code != 207:
            return r.status_code
        out = {}
        for resp in ET.fromstring(r.content).iter(f"{DAV}response"):
            href = resp.find(f"{DAV}href").text
            size = resp.find(f".//{DAV}getcontentlength")
            if size is not None:
                out[href.rsplit("/", 1)[1]] = int(size.text)
        return out


@pytest.fixture(scope="module")
def nc(tmp_path_factory):
    s = ServerProcess(tmp_path_factory.mktemp("nc"), "--face", "nextcloud", "--path-prefix", "/nextcloud",
                      "--chunk-min", str(CHUNK_MIN))
    yield Nextcloud(s, "/nextcloud")
    s.stop()


@pytest.fixture(autouse=True)
def clean(request):
    if "nc" in request.fixturenames:
        s = request.getfixturevalue("nc").srv
        s.control("DELETE", "faults")
        s.control("POST", "maintenance", {"on": False})
        s.control("POST", "quota", {"user": "alice", "available_bytes": None})
    yield


# --- discovery endpoints -------------------------------------------------------------

def test_status_capabilities_and_a_user_id_that_is_not_the_login(nc):
    r = requests.get(nc.base + "/status.php", timeout=5)
    st = r.json()
    assert (st["productname"], st["versionstring"], st["maintenance"], st["installed"]) == ("Nextcloud", "28.0.4", False, True)
    assert requests.get(nc.srv.url + "/status.php", timeout=5).status_code == 404  # only under the prefix

    caps_url = nc.base + "/ocs/v1.php/cloud/capabilities?format=json"
    assert requests.get(caps_url, timeout=5).status_code == 412  # no OCS-APIRequest header
    caps = requests.get(caps_url, headers=OCS, timeout=5).json()["ocs"]["data"]
    assert caps["capabilities"]["dav"]["chunking"] == "1.0"
    assert caps["version"]["string"] == "28.0.4"
    assert "tus_support" not in caps["capabilities"]["files"]

    user_url = nc.base + "/ocs/v1.php/cloud/user?format=json"
    assert requests.get(user_url, headers=OCS, timeout=5).status_code == 401
    assert requests.get(user_url, headers=OCS, auth=("alice", "nope"), timeout=5).status_code == 401
    uid = requests.get(user_url, headers=OCS, auth=ALICE, timeout=5).json()["ocs"]["data"]["id"]
    assert uid == nc.alice_id and uid != "alice"
    r = nc.req("PROPFIND", nc.files, headers={"Depth": "0"})
    assert r.status_code == 207
    assert nc.req("PROPFIND", nc.srv.url + "/nextcloud/remote.php/dav/files/alice/", headers={"Depth": "0"}).status_code == 403
    assert nc.req("PROPFIND", nc.files, auth=BOB, headers={"Depth": "0"}).status_code == 403
    assert requests.get(nc.srv.url + "/files/", auth=ALICE, timeout=5).status_code == 404  # no tus here
    assert nc.req("PROPFIND", nc.srv.url + "/dav/alice/", headers={"Depth": "0"}).status_code == 404


def test_maintenance_mode(nc):
    nc.srv.control("POST", "maintenance", {"on": True})
    assert requests.get(nc.base + "/status.php", timeout=5).json()["maintenance"] is True
    assert nc.req("PROPFIND", nc.files, headers={"Depth": "0"}).status_code == 503
    assert requests.get(nc.base + "/ocs/v1.php/cloud/capabilities?format=json", headers=OCS, timeout=5).status_code == 503
    nc.srv.control("POST", "maintenance", {"on": False})
    assert requests.get(nc.base + "/status.php", timeout=5).json()["maintenance"] is False
    assert nc.req("PROPFIND", nc.files, headers={"Depth": "0"}).status_code == 207


def test_faults_apply_to_status_ocs_and_login(nc):
    nc.srv.control("POST", "faults", {"path_prefix": "/nextcloud/status.php", "status": 502})
    assert requests.get(nc.base + "/status.php", timeout=5).status_code == 502
    assert requests.get(nc.base + "/status.php", timeout=5).status_code == 200
    nc.srv.control("POST", "faults", {"path_prefix": "/nextcloud/ocs/", "reset_after_bytes": 0})
    with pytest.raises(requests.ConnectionError):
        requests.get(nc.base + "/ocs/v1.php/cloud/capabilities?format=json", headers=OCS, timeout=5)
    nc.srv.control("POST", "faults", {"method": "POST", "path_prefix": "/nextcloud/index.php/login/v2", "status": 429})
    assert requests.post(nc.base + "/index.php/login/v2", timeout=5).status_code == 429


# --- Login Flow v2 ----------------------------------------------------------------------

def test_login_flow_v2_gives_an_app_password_once(nc):
    start = requests.post(nc.base + "/index.php/login/v2", timeout=5).json()
    assert start["login"].startswith(nc.base + "/index.php/login/v2/flow/")
    assert start["poll"]["endpoint"] == nc.base + "/index.php/login/v2/poll"
    assert requests.get(start["login"], timeout=5).status_code == 200
    poll = lambda: requests.post(start["poll"]["endpoint"], data={"token": start["poll"]["token"]}, timeout=5)
    assert poll().status_code == 404  # not approved yet
    assert requests.post(start["poll"]["endpoint"], data={"token": "forged"}, timeout=5).status_code == 404
    nc.srv.control("POST", "login", {"user": "alice", "login": start["login"]})
    r = poll()
    assert r.status_code == 200
    got = r.json()
    assert got["server"] == nc.base and got["loginName"] == "alice" and got["appPassword"] != ALICE[1]
    assert poll().status_code == 404  # only once
    app = ("alice", got["appPassword"])
    assert nc.req("PROPFIND", nc.files, auth=app, headers={"Depth": "0"}).status_code == 207
    assert nc.req("PROPFIND", nc.files, auth=("bob", got["appPassword"]), headers={"Depth": "0"}).status_code == 401
    assert nc.srv.control("GET", "login")["app_passwords"]["alice"] >= 1


# --- WebDAV PUT -----------------------------------------------------------------------------

def test_put_sets_mtime_stores_checksum_and_overwrites(nc):
    srv = nc.srv
    srv.control("POST", "stats/reset")
    (srv.tree() / "Docs").mkdir(exist_ok=True)
    url = nc.dest("Docs/a #1 ü.txt")
    r = nc.req("PUT", url, data=b"one", headers={"X-OC-Mtime": "1500000000", "OC-Checksum": "SHA256:abc"})
    assert r.status_code == 201 and r.headers["X-OC-MTime"] == "accepted"
    on_disk = srv.tree() / "Docs" / "a #1 ü.txt"
    assert on_disk.read_bytes() == b"one" and on_disk.stat().st_mtime == 1500000000
    body = ('<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>'
            '<d:getcontentlength/><oc:checksums/></d:prop></d:propfind>')
    r = nc.req("PROPFIND", url, headers={"Depth": "0"}, data=body)
    assert ET.fromstring(r.content).find(".//{http://owncloud.org/ns}checksum").text == "SHA256:abc"  # as stored
    r = nc.req("PUT", url, data=b"two!")  # a duplicate overwrites, and forgets the old checksum
    assert r.status_code == 204 and "X-OC-MTime" not in r.headers and on_disk.read_bytes() == b"two!"
    r = nc.req("PROPFIND", url, headers={"Depth": "0"}, data=body)
    assert ET.fromstring(r.content).find(".//{http://owncloud.org/ns}checksum") is None
    assert nc.req("PUT", nc.dest("Missing/x.txt"), data=b"x").status_code == 409
    assert not (srv.tree() / "Missing").exists()
    assert nc.req("PUT", url, data=b"x", headers={"X-OC-Mtime": "soon"}).status_code == 400
    stats = srv.control("GET", "stats")
    assert stats["puts"]["Docs/a #1 ü.txt"] == 3 and stats["put_bytes"] == 7


def test_put_honours_if_none_match_and_if_match(nc):
    # As Nextcloud (sabre/dav) does for a client that must not replace what it did not see.
    (nc.srv.tree() / "Cond").mkdir(exist_ok=True)
    url = nc.dest("Cond/photo.jpg")
    on_disk = nc.srv.tree() / "Cond" / "photo.jpg"
    r = nc.req("PUT", url, data=b"mine", headers={"If-None-Match": "*", "OC-Checksum": "SHA256:aa", "X-OC-Mtime": "1500000000"})
    assert r.status_code == 201 and r.headers["X-OC-MTime"] == "accepted"
    assert r.headers["ETag"] == r.headers["OC-ETag"] and r.headers["OC-FileId"]
    first = r.headers["ETag"]
    assert first.strip('"') == etag_of(url).strip('"'), "the reply's ETag is the one PROPFIND shows"
    r = nc.req("PUT", url, data=b"someone else's", headers={"If-None-Match": "*"})
    assert r.status_code == 412 and on_disk.read_bytes() == b"mine"
    r = nc.req("PUT", url, data=b"v2", headers={"If-Match": '"not-this-one"'})
    assert r.status_code == 412 and on_disk.read_bytes() == b"mine"
    assert nc.req("PUT", nc.dest("Cond/nothing.jpg"), data=b"x", headers={"If-Match": first}).status_code == 412
    assert not (nc.srv.tree() / "Cond" / "nothing.jpg").exists()
    r = nc.req("PUT", url, data=b"v2", headers={"If-Match": first})
    assert r.status_code == 204 and on_disk.read_bytes() == b"v2" and r.headers["ETag"] != first
    r = nc.req("PUT", url, data=b"v3", headers={"If-Match": first})  # the version it names is gone
    assert r.status_code == 412 and on_disk.read_bytes() == b"v2"
    assert sorted(p.name for p in (nc.srv.tree() / "Cond").iterdir()) == ["photo.jpg"]


def test_a_broken_put_leaves_nothing_under_the_name(nc):
    # Nextcloud writes a PUT's body to a part file and renames it when whole.
    srv = nc.srv
    (srv.tree() / "Parts").mkdir(exist_ok=True)
    data = blob(300_000, seed=21)
    srv.control("POST", "stats/reset")
    srv.control("POST", "faults", {"method": "PUT", "path_prefix": "/nextcloud/remote.php/dav/files/",
                                   "reset_after_bytes": 100_000})
    with pytest.raises(requests.ConnectionError):
        nc.req("PUT", nc.dest("Parts/new.bin"), data=data, headers={"If-None-Match": "*"})
    assert wait_for(lambda: srv.control("GET", "stats")["put_bytes"] >= 100_000)
    assert list((srv.tree() / "Parts").iterdir()) == [], "no half file under the name, no part file in the folder"
    # A new version broken off leaves the old one whole.
    (srv.tree() / "Parts" / "old.bin").write_bytes(b"the old version")
    tag = etag_of(nc.dest("Parts/old.bin"))
    srv.control("POST", "faults", {"method": "PUT", "path_prefix": "/nextcloud/remote.php/dav/files/",
                                   "reset_after_bytes": 100_000})
    with pytest.raises(requests.ConnectionError):
        nc.req("PUT", nc.dest("Parts/old.bin"), data=data, headers={"If-Match": f'"{tag}"'})
    assert (srv.tree() / "Parts" / "old.bin").read_bytes() == b"the old version"
    assert wait_for(lambda: list((srv.data / "spool").iterdir()) == []), "the part file is removed"
    # The same PUT again arrives whole.
    assert nc.req("PUT", nc.dest("Parts/new.bin"), data=data, headers={"If-None-Match": "*"}).status_code == 201
    assert (srv.tree() / "Parts" / "new.bin").read_bytes() == data
    assert sorted(p.name for p in (srv.tree() / "Parts").iterdir()) == ["new.bin", "old.bin"]


def test_a_file_put_at_the_name_while_a_conditional_put_arrives_is_not_replaced(nc):
    srv = nc.srv
    (srv.tree() / "Race").mkdir(exist_ok=True)
    srv.control("POST", "faults", {"method": "PUT", "path_prefix": "/nextcloud/remote.php/dav/files/",
                                   "stall_seconds": 1.0, "after_bytes": 1000})
    result = {}
    mine = threading.Thread(target=lambda: result.setdefault(
        "r", nc.req("PUT", nc.dest("Race/x.jpg"), data=blob(50_000, seed=3), headers={"If-None-Match": "*"})))
    mine.start()
    time.sleep(0.3)
    (srv.tree() / "Race" / "x.jpg").write_bytes(b"theirs")  # saved another way while the body waits
    mine.join()
    assert result["r"].status_code == 412
    assert (srv.tree() / "Race" / "x.jpg").read_bytes() == b"theirs"
    assert sorted(p.name for p in (srv.tree() / "Race").iterdir()) == ["x.jpg"]


# --- chunked upload v2 -------------------------------------------------------------------

def test_chunked_upload_assembles_in_order_with_mtime_and_checksum(nc):
    srv = nc.srv
    (srv.tree() / "Up").mkdir(exist_ok=True)
    srv.control("POST", "stats/reset")
    data = blob(2500, seed=11)
    rel = "Up/big #1 é.bin"
    assert nc.mkcol("t1", rel).status_code == 201
    assert nc.mkcol("t1", rel).status_code == 405
    assert nc.held("t1") == {}
    # out of order, and chunk 2 sent twice (the second replaces the first)
    assert nc.chunk("t1", 3, data[2000:], rel, 2500).status_code == 201
    assert nc.chunk("t1", 1, data[:1000], rel, 2500).status_code == 201
    assert nc.chunk("t1", 2, b"z" * 1000, rel, 2500).status_code == 201
    assert nc.chunk("t1", 2, data[1000:2000], rel, 2500).status_code == 204
    assert nc.held("t1") == {"1": 1000, "2": 1000, "3": 500}
    assert nc.req("GET", f"{nc.uploads}t1/1").status_code == 403
    r = nc.move("t1", rel, 2500, **{"X-OC-Mtime": "1600000000", "OC-Checksum": "SHA256:" + hashlib.sha256(data).hexdigest()})
    assert r.status_code == 201 and r.headers["X-OC-MTime"] == "accepted" and r.headers["OC-ETag"]
    target = srv.tree() / "Up" / "big #1 é.bin"
    assert target.read_bytes() == data and target.stat().st_mtime == 1600000000
    assert nc.held("t1") == 404  # the folder is gone after assembly
    body = ('<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>'
            '<oc:checksums/></d:prop></d:propfind>')
    r = nc.req("PROPFIND", nc.dest(rel), headers={"Depth": "0"}, data=body)
    assert ET.fromstring(r.content).find(".//{http://owncloud.org/ns}checksum").text == "SHA256:" + hashlib.sha256(data).hexdigest()
    stats = srv.control("GET", "stats")
    assert stats["chunk_puts"] == 4 and stats["chunk_bytes"] == 3500
    assert stats["moves"] == 1 and stats["assemblies"] == {rel: 1}

    # a second upload to the same name overwrites (no "name (1)")
    assert nc.mkcol("t2", rel).status_code == 201
    assert nc.chunk("t2", 1, b"short", rel, 5).status_code == 201
    assert nc.move("t2", rel, 5).status_code == 204
    assert target.read_bytes() == b"short" and sorted(p.name for p in target.parent.iterdir()) == ["big #1 é.bin"]


def test_chunked_upload_rules(nc):
    srv = nc.srv
    (srv.tree() / "Rules").mkdir(exist_ok=True)
    rel = "Rules/r.bin"
    assert nc.req("MKCOL", nc.uploads + "nodest").status_code == 400  # v2 needs a Destination
    assert nc.mkcol("r", rel).status_code == 201
    for n in (0, 10001, "abc", "1.5"):
        assert nc.chunk("r", n, b"x" * 10, rel, 10).status_code == 400
    assert nc.req("PUT", f"{nc.uploads}r/1", data=b"x", headers={"Destination": nc.dest(rel)}).status_code == 400
    assert nc.chunk("r", 1, b"x", "Rules/other.bin", 10).status_code == 400  # another Destination
    assert nc.chunk("r", 10000, b"x", rel, 10).status_code == 201  # the highest number is fine
    assert nc.req("DELETE", f"{nc.uploads}r/10000").status_code == 204  # one chunk removed
    assert nc.req("DELETE", f"{nc.uploads}r/10000").status_code == 404
    assert nc.held("r") == {}
    assert nc.chunk("nope", 1, b"x", rel, 10).status_code == 404  # no such folder
    # a gap: 1 and 3
    assert nc.chunk("r", 1, b"a" * 1000, rel, 3000).status_code == 201
    assert nc.move("r", rel, 1010).status_code == 400
    assert nc.req("DELETE", nc.uploads + "r").status_code == 204
    assert nc.held("r") == 404 and nc.req("DELETE", nc.uploads + "r").status_code == 404
    # a middle chunk under the minimum
    assert nc.mkcol("s", rel).status_code == 201
    for n, size in ((1, 1000), (2, 999), (3, 1000)):
        assert nc.chunk("s", n, b"b" * size, rel, 2999).status_code == 201
    r = nc.move("s", rel, 2999)
    assert r.status_code == 400 and "chunk 2" in r.text
    # the sum must be OC-Total-Length
    assert nc.chunk("s", 2, b"b" * 1000, rel, 3000).status_code == 204
    r = nc.move("s", rel, 3001)
    assert r.status_code == 400 and "3000" in r.text
    assert not (srv.tree() / rel).exists() and nc.held("s") == {"1": 1000, "2": 1000, "3": 1000}
    assert nc.move("s", rel, 3000).status_code == 201


def test_assembly_never_replaces_with_overwrite_f_and_may_go_to_another_name(nc):
    srv = nc.srv
    (srv.tree() / "Taken").mkdir(exist_ok=True)
    rel = "Taken/t.bin"
    assert nc.mkcol("t", rel).status_code == 201
    assert nc.chunk("t", 1, b"ours", rel, 4).status_code == 201
    (srv.tree() / rel).write_bytes(b"theirs")  # someone saved a file there meanwhile
    r = nc.move("t", rel, 4, Overwrite="F")
    assert r.status_code == 412
    assert (srv.tree() / rel).read_bytes() == b"theirs" and nc.held("t") == {"1": 4}  # kept for another MOVE
    assert nc.move("t", "Taken/t (1).bin", 4, Overwrite="F").status_code == 201
    assert (srv.tree() / "Taken" / "t (1).bin").read_bytes() == b"ours"
    assert (srv.tree() / rel).read_bytes() == b"theirs" and nc.held("t") == 404


def test_assembly_into_a_missing_folder_is_409_and_creates_nothing(nc):
    rel = "Not/There/f.bin"
    assert nc.mkcol("m", rel).status_code == 201
    assert nc.chunk("m", 1, b"abc", rel, 3).status_code == 201
    r = nc.move("m", rel, 3)
    assert r.status_code == 409
    assert not (nc.srv.tree() / "Not").exists()
    assert nc.held("m") == {"1": 3}  # kept: the client may create the folder and MOVE again
    (nc.srv.tree() / "Not" / "There").mkdir(parents=True)
    assert nc.move("m", rel, 3).status_code == 201


def test_quota_applies_to_chunks(nc):
    (nc.srv.tree() / "Q").mkdir(exist_ok=True)
    nc.srv.control("POST", "quota", {"user": "alice", "available_bytes": 2000})
    assert nc.mkcol("q", "Q/q.bin").status_code == 201
    assert nc.chunk("q", 1, b"x" * 1000, "Q/q.bin", 5000).status_code == 507
    assert nc.chunk("q", 1, b"x" * 1000, "Q/q.bin", 1000).status_code == 201


def test_faults_apply_to_chunks(nc):
    srv = nc.srv
    (srv.tree() / "F").mkdir(exist_ok=True)
    rel = "F/f.bin"
    data = blob(200_000, seed=12)
    assert nc.mkcol("f", rel).status_code == 201
    srv.control("POST", "stats/reset")
    srv.control("POST", "faults", {"method": "PUT", "path_prefix": "/nextcloud/remote.php/dav/uploads/",
                                   "reset_after_bytes": 50_000})
    with pytest.raises(requests.ConnectionError):
        nc.chunk("f", 1, data, rel, len(data))
    assert nc.held("f") == {}  # a cut-off chunk is not held
    assert wait_for(lambda: srv.control("GET", "stats")["chunk_bytes"] >= 50_000)
    srv.control("POST", "faults", {"method": "MOVE", "status": 503, "headers": {"Retry-After": "2"}})
    assert nc.chunk("f", 1, data, rel, len(data)).status_code == 201
    r = nc.move("f", rel, len(data))
    assert r.status_code == 503 and r.headers["Retry-After"] == "2"
    assert not (srv.tree() / rel).exists()
    srv.control("POST", "faults", {"method": "PROPFIND", "path_prefix": "/nextcloud/remote.php/dav/uploads/", "status": 500})
    assert nc.held("f") == 500
    # a stall holds the chunk's body for a while, then it arrives whole
    srv.control("POST", "faults", {"method": "PUT", "path_prefix": "/nextcloud/remote.php/dav/uploads/",
                                   "stall_seconds": 0.6, "after_bytes": 1000})
    t0 = time.monotonic()
    assert nc.chunk("f", 1, data, rel, len(data)).status_code == 204
    assert time.monotonic() - t0 >= 0.6
    assert nc.move("f", rel, len(data)).status_code == 201
    assert (srv.tree() / rel).read_bytes() == data


def test_stats_count_the_most_chunk_puts_in_flight_per_upload_folder(nc):
    srv = nc.srv
    srv.control("DELETE", "faults")
    rel = "conc.bin"
    for transfer in ("c1", "c2"):
        assert nc.mkcol(transfer, rel).status_code == 201
    srv.control("POST", "stats/reset")
    # c1: chunks 1 and 2 at once, each held up by the server; c2: one chunk after another
    srv.control("POST", "faults", {"method": "PUT", "path_prefix": "/nextcloud/remote.php/dav/uploads/",
                                   "stall_seconds": 0.8, "after_bytes": 10, "count": 2})
    results = {}
    threads = [threading.Thread(target=lambda n=n: results.update({n: nc.chunk("c1", n, b"x" * 1000, rel, 2000)}))
               for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[n].status_code for n in (1, 2)] == [201, 201]
    for n in (1, 2):
        assert nc.chunk("c2", n, b"y" * 1000, rel, 2000).status_code == 201
    assert srv.control("GET", "stats")["max_concurrent_chunk_puts"] == {"c1": 2, "c2": 1}
    assert srv.control("POST", "stats/reset")["max_concurrent_chunk_puts"] == {}


def test_upload_folders_expire(nc):
    rel = "exp.bin"
    assert nc.mkcol("e", rel).status_code == 201
    assert nc.chunk("e", 1, b"abc", rel, 3).status_code == 201
    assert nc.srv.control("POST", "uploads/expire")["expired"] >= 1
    assert nc.held("e") == 404
    assert nc.chunk("e", 2, b"abc", rel, 6).status_code == 404
    assert nc.move("e", rel, 3).status_code == 404
    assert nc.mkcol("e", rel).status_code == 201  # the name is free again


def test_a_chunk_arriving_while_its_folder_expires_is_not_held(nc):
    nc.srv.control("DELETE", "faults")
    rel = "exp2.bin"
    assert nc.mkcol("e2", rel).status_code == 201
    nc.srv.control("POST", "faults", {"method": "PUT", "path_prefix": "/nextcloud/remote.php/dav/uploads/",
                                      "stall_seconds": 1, "after_bytes": 10})
    result = {}
    t = threading.Thread(target=lambda: result.update(r=nc.chunk("e2", 1, b"x" * 2000, rel, 2000)))
    t.start()
    time.sleep(0.4)
    assert nc.srv.control("POST", "uploads/expire")["expired"] >= 1
    t.join()
    assert result["r"].status_code == 404
    assert nc.held("e2") == 404  # not brought back by the chunk


def test_upload_folders_expire_with_time(tmp_path):
    s = ServerProcess(tmp_path, "--face", "nextcloud", "--upload-expire-seconds", "1")
    try:
        nc = Nextcloud(s, "")
        assert nc.mkcol("e", "x.bin").status_code == 201
        assert nc.held("e") == {}
        time.sleep(1.3)
        assert nc.held("e") == 404
    finally:
        s.stop()


def test_another_account_cannot_touch_my_uploads(nc):
    assert nc.mkcol("mine", "m.bin").status_code == 201
    assert nc.req("PROPFIND", nc.uploads + "mine/", auth=BOB, headers={"Depth": "1"}).status_code == 403
    assert nc.req("DELETE", nc.uploads + "mine", auth=BOB).status_code == 403
    other = nc.srv.control("GET", "users")["bob"]["webdav"]
    r = nc.req("MKCOL", nc.uploads + "x", headers={"Destination": nc.srv.url + other + "x.bin"})
    assert r.status_code == 403


# --- ownCloud Infinite Scale: tus at the WebDAV folders ---------------------------------

def test_ocis_tus_creation_at_the_webdav_folder(tmp_path):
    s = ServerProcess(tmp_path, "--face", "nextcloud", "--product", "ocis")
    try:
        nc = Nextcloud(s, "")
        st = requests.get(s.url + "/status.php", timeout=5).json()
        assert st["productname"] == "Infinite Scale"
        caps = requests.get(s.url + "/ocs/v1.php/cloud/capabilities?format=json", headers=OCS, auth=ALICE,
                            timeout=5).json()["ocs"]["data"]["capabilities"]
        assert caps["files"]["tus_support"]["resumable"] == "1.0.0" and "chunking" not in caps["dav"]
        assert caps["checksums"]["preferredUploadType"] == "sha1"
        r = requests.options(nc.files + "Pics/", auth=ALICE, timeout=5)
        assert r.headers["Tus-Version"] == "1.0.0" and "termination" not in r.headers["Tus-Extension"]
        (s.tree() / "Pics").mkdir()
        data = blob(3000, seed=13)
        r = requests.post(nc.files + "Pics/", auth=ALICE, timeout=5,
                          headers={"Tus-Resumable": "1.0.0", "Upload-Length": "3000", "Upload-Metadata": "filename YSBiLmpwZw=="})
        assert r.status_code == 201, r.text
        url = r.headers["Location"]
        assert s.patch(url, 0, data[:1000]).status_code == 204
        assert s.offset(url) == 1000
        assert raw_patch(url, 1000, data[1000:]).startswith(b"HTTP/1.1 204")
        assert (s.tree() / "Pics" / "a b.jpg").read_bytes() == data
        # the mtime from X-OC-Mtime at creation is the file's once it is complete
        r = requests.post(nc.files + "Pics/", auth=ALICE, timeout=5,
                          headers={"Tus-Resumable": "1.0.0", "Upload-Length": "3", "X-OC-Mtime": "1500000000",
                                   "Upload-Metadata": "filename bS5qcGc="})
        assert r.status_code == 201, r.text
        assert s.patch(r.headers["Location"], 0, b"abc").status_code == 204
        assert (s.tree() / "Pics" / "m.jpg").stat().st_mtime == 1500000000
    finally:
        s.stop()


# --- plain WebDAV -------------------------------------------------------------------------

def test_plain_webdav_face_has_no_tus_and_no_status(tmp_path):
    s = ServerProcess(tmp_path, "--face", "webdav")
    try:
        assert requests.options(s.url + "/files/", auth=ALICE, headers={"Tus-Resumable": "1.0.0"}, timeout=5).status_code == 404
        assert requests.get(s.url + "/status.php", timeout=5).status_code == 404
        root = s.url + "/dav/alice/"
        assert requests.request("PROPFIND", root, auth=ALICE, headers={"Depth": "0"}, timeout=5).status_code == 207
        assert requests.request("MKCOL", root + "D", auth=ALICE, timeout=5).status_code == 201
        assert requests.put(root + "D/.f.part", data=b"abc", auth=ALICE, timeout=5).status_code == 201
        assert requests.put(root + "Nope/f", data=b"abc", auth=ALICE, timeout=5).status_code == 409
        r = requests.request("MOVE", root + "D/.f.part", auth=ALICE, timeout=5, headers={"Destination": root + "D/f"})
        assert r.status_code == 201 and (s.tree() / "D" / "f").read_bytes() == b"abc"
        assert requests.delete(root + "D/f", auth=ALICE, timeout=5).status_code == 204
        stats = s.control("GET", "stats")
        assert stats["puts"] == {"D/.f.part": 1, "Nope/f": 1} and stats["moves"] == 1 and stats["put_bytes"] == 3  # the 409 came before the body was read
    finally:
        s.stop()


def etag_of(url):
    r = requests.request("PROPFIND", url, auth=ALICE, headers={"Depth": "0"}, timeout=5)
    return ET.fromstring(r.content).find(f".//{DAV}getetag").text


def test_a_move_replaces_only_the_version_its_if_header_names(tmp_path, nc):
    # Like sabre/dav and Apache mod_dav: an If header's list tagged with the destination
    # must hold for the file there, on a plain MOVE and on Nextcloud's chunk assembly.
    s = ServerProcess(tmp_path, "--face", "webdav")
    try:
        root = s.url + "/dav/alice/"
        requests.put(root + "doc", data=b"v1", auth=ALICE, timeout=5)
        v1 = etag_of(root + "doc")
        requests.put(root + ".new", data=b"v2", auth=ALICE, timeout=5)
        requests.put(root + "doc", data=b"someone else's", auth=ALICE, timeout=5)
        move = lambda tag: requests.request("MOVE", root + ".new", auth=ALICE, timeout=5, headers={
            "Destination": root + "doc", "Overwrite": "T", "If": f'<{root}doc> (["{tag}"])'})
        assert move(v1).status_code == 412 and (s.tree() / "doc").read_bytes() == b"someone else's"
        assert move(etag_of(root + "doc")).status_code == 204 and (s.tree() / "doc").read_bytes() == b"v2"
        r = requests.request("MOVE", root + "doc", auth=ALICE, timeout=5, headers={"Destination": root + "x", "If": "(nonsense"})
        assert r.status_code == 400
    finally:
        s.stop()
    (nc.srv.tree() / "Versions").mkdir(exist_ok=True)
    rel = "Versions/doc.bin"
    (nc.srv.tree() / rel).write_bytes(b"v1")
    assert nc.mkcol("v", rel).status_code == 201 and nc.chunk("v", 1, b"v2", rel, 2).status_code == 201
    r = nc.move("v", rel, 2, If=f'<{nc.dest(rel)}> (["not-this-one"])')
    assert r.status_code == 412 and (nc.srv.tree() / rel).read_bytes() == b"v1" and nc.held("v") == {"1": 2}
    tag = etag_of(nc.dest(rel))
    assert nc.move("v", rel, 2, If=f'<{nc.dest(rel)}> (["{tag}"])').status_code == 204
    assert (nc.srv.tree() / rel).read_bytes() == b"v2"
