"""The WebDAV side: wsgidav with one FilesystemProvider per account, mounted
at /dav/<user>/ through a2wsgi. Authentication and the "own root only" rule
are enforced by the gate in front; wsgidav itself runs without auth.

Additions to the stock FilesystemProvider:
  * {DAV:}quota-available-bytes / quota-used-bytes on every collection: the
    control-API quota when one is set, else the disk's free bytes; used bytes
    are the account's own files.
  * {http://owncloud.org/ns}checksums on files, `SHA256:<hex>` (computed on
    request, cached by inode/size/mtime; not part of allprop).
  * ETags include the mtime in nanoseconds (wsgidav's are whole seconds, so a
    same-size rewrite within a second kept the ETag and fooled If-Range).
"""

from __future__ import annotations

import hashlib
import os
import threading

from a2wsgi import WSGIMiddleware
from wsgidav.dav_error import HTTP_FORBIDDEN, DAVError
from wsgidav.error_printer import ErrorPrinter
from wsgidav.fs_dav_provider import FileResource, FilesystemProvider, FolderResource
from wsgidav.request_resolver import RequestResolver
from wsgidav.util import etree
from wsgidav.wsgidav_app import WsgiDAVApp

from state import State

OC_CHECKSUMS = "{http://owncloud.org/ns}checksums"
# Set from --no-checksums at start: files then report no checksum property.
CHECKSUMS_ENABLED = True
OC_CHECKSUM = "{http://owncloud.org/ns}checksum"

_sha_cache: dict[tuple, str] = {}
_sha_lock = threading.Lock()


def file_sha256(path: str) -> str:
    st = os.stat(path)
    key = (path, st.st_ino, st.st_size, st.st_mtime_ns)
    with _sha_lock:
        if key in _sha_cache:
            return _sha_cache[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    with _sha_lock:
        if len(_sha_cache) > 10000:
            _sha_cache.clear()
        _sha_cache[key] = h.hexdigest()
    return _sha_cache[key]


class AccountFile(FileResource):
    def get_etag(self):
        st = self.file_stat
        return f"{st.st_ino:x}-{st.st_mtime_ns:x}-{st.st_size:x}"

    def get_property_names(self, *, is_allprop):
        names = super().get_property_names(is_allprop=is_allprop)
        if not is_allprop and CHECKSUMS_ENABLED:
            names.append(OC_CHECKSUMS)
        return names

    def get_property_value(self, name):
        if name == OC_CHECKSUMS and CHECKSUMS_ENABLED:
            el = etree.Element(OC_CHECKSUMS)
            etree.SubElement(el, OC_CHECKSUM).text = "SHA256:" + file_sha256(self._file_path)
            return el
        return super().get_property_value(name)


class AccountFolder(FolderResource):
    def _quota(self) -> tuple[int, int]:
        # one tree walk per request, however many collections it lists
        cache = self.environ.setdefault("iu.quota", {})
        if "used" not in cache:
            p = self.provider
            cache["used"] = p.state.used_bytes(p.user)
            avail = p.state.available_bytes(p.user, used=cache["used"])
            cache["available"] = avail if avail is not None else p.state.disk_free(p.user)
        return cache["used"], cache["available"]

    def get_used_bytes(self):
        return str(self._quota()[0])

    def get_available_bytes(self):
        return str(self._quota()[1])


class AccountProvider(FilesystemProvider):
    def __init__(self, state: State, user: str):
        super().__init__(str(state.tree_dir(user)), readonly=False,
                         fs_opts={"follow_symlinks": False})
        self.state = state
        self.user = user

    def get_resource_inst(self, path, environ):
        self._count_get_resource_inst += 1
        fp = self._loc_to_file_path(path, environ)
        if not os.path.exists(fp):
            return None
        if os.path.islink(fp):
            raise DAVError(HTTP_FORBIDDEN, "symlinks are not served")
        if os.path.isdir(fp):
            return AccountFolder(path, environ, fp)
        return AccountFile(path, environ, fp)


def build_dav_app(state: State, providers: dict | None = None):
    """wsgidav for every account at /dav/<user>, or at the share paths given."""
    if providers is None:
        providers = {f"/dav/{u}": AccountProvider(state, u) for u in state.settings.users}
    config = {
        # TRAP: with "mount_path": "/dav" wsgidav builds hrefs right but then
        # cannot resolve a MOVE/COPY Destination (502 "inter-realm"). So no
        # mount path: each account is a share named "/dav/<user>" and gets
        # the full request path as PATH_INFO.
        "provider_mapping": providers,
        # No HTTPAuthenticator and no directory browser: the gate authenticates.
        "middleware_stack": [ErrorPrinter, RequestResolver],
        "block_size": 256 << 10,  # GET/PUT copy size; the 8 KiB default crawls
        "lock_storage": True,
        "property_manager": True,  # in-memory dead properties (PROPPATCH)
        "verbose": 1,
        "logging": {"enable": False},
        "suppress_version_info": True,
        "add_header_MS_Author_Via": True,
    }
    return WSGIMiddleware(WsgiDAVApp(config), workers=16)



