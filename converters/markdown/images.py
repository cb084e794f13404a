"""Images: embedded as data URIs, written as files beside the Markdown, or omitted.

Only raster types a browser shows without running anything are linked (PNG, JPEG, GIF,
WebP); SVG can carry scripts and is never embedded or linked. Data that is not valid
base64 is omitted. Files are named by the SHA-256 of their bytes, so the same image is
written once and a re-run writes nothing new.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from dataclasses import dataclass, field

from piconv import Report

from .escape import inline

MODES = ("embed", "files", "omit")
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
HASH_CHARS = 16
"""Hex digits of the SHA-256 in a file name (64 bits: collisions are not a concern)."""

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def folder_name(session_id: str | None, output_path: str | None) -> str:
    """The image folder's name: the output file's stem (``a.md`` → ``a_images``), reduced
    to characters that need no escaping in a link and no quoting in a shell. Never the
    session's id or anything else from the session: a name made of the session's content
    would carry a secret past ``--redact`` (the tree's ids are not redacted)."""
    base = os.path.splitext(os.path.basename(output_path))[0] if output_path else ""
    name = _UNSAFE_NAME.sub("-", base).strip(".-") or "session"
    return f"{name[:80]}_images"


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1048576:.1f} MiB"


@dataclass
class Images:
    """Renders image parts in the mode chosen, counting what it wrote and dropped."""

    mode: str
    report: Report
    output_path: str | None = None
    session_id: str | None = None
    count: int = 0
    written: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode == "files" and not self.output_path:
            # Nowhere to put files next to stdout: fall back, and say so.
            self.mode = "omit"
            self.report.notes["images"] = "output is stdout: --images files fell back to omit"
        self.folder = folder_name(self.session_id, self.output_path)

    def render(self, data: object, media_type: object, line: int | None) -> str:
        """One image as a Markdown paragraph (no trailing newline)."""
        self.count += 1
        label = f"Image {self.count}"
        mt = media_type.lower() if isinstance(media_type, str) else ""
        raw = _decode(data)
        if raw is None:
            self.report.add("image-invalid", line, "image data is not valid base64")
            return f"*\\[{label}: invalid image data omitted\\]*"
        desc = f"{inline(mt or 'unknown type')}, {_size(len(raw))}"
        ext = EXTENSIONS.get(mt)
        if ext is None:
            self.report.add("image-type-omitted", line, mt or "no media type")
            return f"*\\[{label} omitted: {desc}; only PNG, JPEG, GIF and WebP are shown\\]*"
        if self.mode == "omit":
            self.report.add("image-omitted", line)
            return f"*\\[{label} omitted: {desc}\\]*"
        if self.mode == "embed":
            encoded = base64.b64encode(raw).decode("ascii")
            return f"![{label} ({desc})](data:{mt};base64,{encoded})"
        import hashlib  # lazy: only a session with images written as files needs it

        digest = hashlib.sha256(raw).hexdigest()[:HASH_CHARS]
        name = f"{digest}.{ext}"
        self._write(name, raw)
        return f"![{label} ({desc})]({self.folder}/{name})"

    def _write(self, name: str, raw: bytes) -> None:
        if name in self.written:
            return
        assert self.output_path is not None
        from piconv import write_into_folder  # nothing followed; temporary files a run cleans up

        directory = os.path.join(os.path.dirname(os.path.abspath(self.output_path)), self.folder)
        self.written[name] = write_into_folder(directory, name, raw)


def _decode(data: object) -> bytes | None:
    if not isinstance(data, str) or not data:
        return None
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return None
