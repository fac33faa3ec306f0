"""The `If` header's tagged lists (RFC 4918 §10.4) for a MOVE's destination.

wsgidav evaluates `If` only for the resource a request names, so a client that asks
"replace the destination only while it is still this version" with
`If: <destination> (["etag"])` would replace any version. Nextcloud (sabre/dav) and
Apache mod_dav refuse such a MOVE with 412; so does the reference server, through this
check made before wsgidav (or the chunk assembly) sees the request.
"""

from __future__ import annotations

import os
import re
from typing import Optional
from urllib.parse import unquote, urlsplit

_TOKEN = re.compile(r'\s*(<[^>]*>|\(|\)|Not\b|\[[^\]]*\])', re.IGNORECASE)


def parse(value: str) -> Optional[list[tuple[Optional[str], list[tuple[bool, str, str]]]]]:
    """The lists of an If header: (tagged resource path or None, [(negated, kind, text)]),
    kind "etag" or "token". None when the header cannot be read (a 400 on real servers)."""
    lists: list = []
    tag: Optional[str] = None
    conditions: Optional[list] = None
    negate = False
    pos = 0
    while pos < len(value):
        if value[pos:].strip() == "":
            break
        m = _TOKEN.match(value, pos)
        if m is None:
            return None
        token = m.group(1)
        pos = m.end()
        if token.startswith("<") and conditions is None:
            tag = unquote(urlsplit(token[1:-1]).path)
        elif token.startswith("<"):
            conditions.append((negate, "token", token[1:-1]))
            negate = False
        elif token == "(":
            if conditions is not None:
                return None
            conditions = []
        elif token == ")":
            if conditions is None:
                return None
            lists.append((tag, conditions))
            conditions = None
        elif token.lower() == "not":
            negate = True
        else:  # [etag]
            if conditions is None:
                return None
            conditions.append((negate, "etag", token[1:-1]))
            negate = False
    return lists if conditions is None else None


def bare(etag: str) -> str:
    etag = etag.strip()
    if etag.startswith("W/"):
        etag = etag[2:]
    return etag.strip('"')


def file_etag(path) -> Optional[str]:
    """The ETag the WebDAV face gives the file at `path` (see dav_app.AccountFile)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_ino:x}-{st.st_mtime_ns:x}-{st.st_size:x}"


def destination_refused(if_header: Optional[str], destination_path: str, disk_path) -> Optional[int]:
    """412 when the lists tagged with the destination all fail for the file now at
    `disk_path` (a list holds when each of its conditions does); 400 when the header cannot
    be read; None when nothing constrains the destination."""
    if not if_header:
        return None
    lists = parse(if_header)
    if lists is None:
        return 400
    mine = [conds for tag, conds in lists if tag is not None and tag.rstrip("/") == destination_path.rstrip("/")]
    if not mine:
        return None
    current = file_etag(disk_path)

    def holds(negated: bool, kind: str, text: str) -> bool:
        # No locks are held here, so a state token never matches.
        matched = kind == "etag" and current is not None and bare(text) == current
        return matched != negated

    return None if any(all(holds(*c) for c in conds) for conds in mine) else 412
