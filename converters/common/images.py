"""Image files beside an output: the folder they go in and the names they take.

Formats that write a session's images as files beside their output (Markdown, ATIF) name
them alike, so a directory run writing both shares the files: the folder is named by the
session id (``ID_images``), each file by the SHA-256 of its bytes, so the same image is
written once and a re-run writes nothing new. Only the raster types a browser shows
without running anything get a file (PNG, JPEG, GIF, WebP); SVG can carry scripts.
"""

from __future__ import annotations

import os
import re

EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
HASH_CHARS = 16
"""Hex digits of the SHA-256 in a file name (64 bits: collisions are not a concern)."""

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def folder_name(session_id: str | None, output_path: str | None) -> str:
    """The image folder's name: the output file's stem (``a.md`` → ``a_images``), else the
    session id (a format whose outputs are named by it, as ATIF's are), reduced to
    characters that need no escaping in a link and no quoting in a shell. A Markdown
    transcript's folder is never named from the session's content: that would carry a
    secret past ``--redact`` (the tree's ids are not redacted)."""
    base = (os.path.splitext(os.path.basename(output_path))[0] if output_path else "") or session_id or ""
    name = _UNSAFE_NAME.sub("-", base).strip(".-") or "session"
    return f"{name[:80]}_images"


def decode(data: object) -> bytes | None:
    """The bytes of base64 ``data`` (white space ignored), or None when it is not base64."""
    if not isinstance(data, str) or not data:
        return None
    import base64  # lazy: only a session with images needs these
    import binascii

    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def file_name(raw: bytes, extension: str) -> str:
    """The name of the file holding ``raw``: a hash of its bytes and the extension."""
    import hashlib  # lazy: only a session with images written as files needs it

    return f"{hashlib.sha256(raw).hexdigest()[:HASH_CHARS]}.{extension}"
