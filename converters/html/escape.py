"""Escaping and URL policy: the only doors session text has into the page.

Every string from a session is untrusted. It reaches the page only through :func:`text`
(element content), :func:`attr` (a quoted attribute value), :func:`anchor` (an ``id``),
:func:`safe_href` (a link target) or :func:`image_src` (an inline image). Nothing else in
the converter writes session text, so auditing these functions audits the page.
"""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import urlsplit

from piconv.converters.common.htmlescape import escape

# Code points the HTML spec forbids in documents (C0/C1 controls other than whitespace,
# noncharacters, lone surrogates). The Nu checker reports them as errors and browsers
# may mangle them, so they become U+FFFD. U+FDD0 is among them, which frees it for the
# Markdown renderer's sentinel (see markdown.py).
_FORBIDDEN = re.compile(
    "[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff"
    "\U0001fffe\U0001ffff\U0002fffe\U0002ffff\U0003fffe\U0003ffff\U0004fffe\U0004ffff"
    "\U0005fffe\U0005ffff\U0006fffe\U0006ffff\U0007fffe\U0007ffff\U0008fffe\U0008ffff"
    "\U0009fffe\U0009ffff\U000afffe\U000affff\U000bfffe\U000bffff\U000cfffe\U000cffff"
    "\U000dfffe\U000dffff\U000efffe\U000effff\U000ffffe\U000fffff\U0010fffe\U0010ffff]"
)
# A lone CR is turned into LF by the parser anyway; normalising it here keeps line
# counts in previews equal to what the browser shows.
_CR = re.compile("\r\n?")


# Printable ASCII plus tab, LF, FF, CR: what bytes.translate deletes before the scan.
_ASCII_OK = bytes(range(0x20, 0x7F)) + b"\t\n\x0c\r"
_HIGH = bytes(range(0x80, 0x100))
# UTF-8 of the multi-byte forbidden code points: C1 controls (\xc2\x80-\x9f),
# noncharacters U+FDD0-U+FDEF (\xef\xb7\x90-\xaf) and U+xFFFE/U+xFFFF of every plane
# (ending \xbf\xbe / \xbf\xbf, false positives only take the exact path).
_SUSPECT = re.compile(rb"\xc2[\x80-\x9f]|\xef\xb7[\x90-\xaf]|\xbf[\xbe\xbf]")


def _utf8_forbidden(b: bytes) -> bool:
    # Deleting the allowed ASCII bytes (C, memory speed) leaves the forbidden ASCII bytes
    # and the non-ASCII ones, which are rare in transcripts; a multi-byte character
    # keeps its bytes adjacent, so the UTF-8 patterns can be searched in what is left.
    rest = b.translate(None, _ASCII_OK)
    if not rest:
        return False
    return bool(rest.translate(None, _HIGH)) or _SUSPECT.search(rest) is not None


def has_forbidden(s: str) -> bool:
    """Whether ``s`` may contain a forbidden code point (exact when it says no)."""
    try:
        return _utf8_forbidden(s.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate
        return True


def clean(s: str) -> str:
    """``s`` with forbidden code points replaced and newlines normalised."""
    if "\r" in s:
        s = _CR.sub("\n", s)
    return _FORBIDDEN.sub("\ufffd", s) if has_forbidden(s) else s


def to_utf8(s: str) -> bytes:
    """``clean(s)`` encoded, encoding only once when nothing needs cleaning (the page
    writer's path for every output chunk). CR is left alone: the HTML parser turns
    CR and CRLF into LF anyway."""
    try:
        b = s.encode("utf-8")
        if not _utf8_forbidden(b):
            return b
    except UnicodeEncodeError:
        pass
    return _FORBIDDEN.sub("\ufffd", s).encode("utf-8")


text = escape
"""Escape for element content (also safe inside a double-quoted attribute): the
converters' one HTML escape. Forbidden code points are not handled here: the page
writer cleans each output chunk once (page.py), which is much cheaper than cleaning
every string."""

attr = text
"""Escape for a double-quoted attribute value (the page quotes every attribute)."""


def anchor(entry_id: str) -> str:
    """A valid, unique HTML ``id`` for an entry id: ``e-`` plus the id with every
    character outside ``[A-Za-z0-9-]`` written as ``_<hex>_`` (injective, no spaces)."""
    if entry_id.isascii() and entry_id.replace("-", "").isalnum():  # the common case, no regex
        return "e-" + entry_id
    return "e-" + _ID_UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", entry_id)


_ID_UNSAFE = re.compile(r"[^A-Za-z0-9-]")

_SAFE_SCHEMES = frozenset({"http", "https"})


def safe_href(url: str) -> str | None:
    """``url`` if it is an absolute http(s) URL, else ``None``. Relative links are
    refused too: next to a saved file they would resolve to ``file:`` URLs."""
    url = url.strip()
    # Browsers drop ASCII tab/newline inside URLs ("java\tscript:"), and some control
    # characters; refuse anything containing them rather than guess.
    if not url or any(c < " " or c == "\x7f" for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in _SAFE_SCHEMES or not parts.netloc:
        return None
    return url


# Image types a browser renders without running anything; SVG is excluded on purpose
# (it is a document format that can carry script).
_IMAGE_MAGIC: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
ALLOWED_IMAGE_TYPES = tuple(sorted(_IMAGE_MAGIC))
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def image_src(media_type: str | None, data: str | None) -> tuple[str | None, str]:
    """A ``data:`` URL for an inline image, or ``(None, reason)`` when it is refused:
    the declared type must be on the allow-list, the payload strict base64 and its first
    bytes the signature of that type (a mislabelled payload is not shown)."""
    mt = (media_type or "").strip().lower()
    if mt == "image/jpg":  # common mislabel of the same format
        mt = "image/jpeg"
    if mt not in _IMAGE_MAGIC:
        return None, "image type not allowed"
    if not data or len(data) % 4 or not _BASE64.fullmatch(data):
        return None, "image data is not base64"
    try:
        head = base64.b64decode(data[:32], validate=True)
    except (binascii.Error, ValueError):
        return None, "image data is not base64"
    if not any(head.startswith(m) for m in _IMAGE_MAGIC[mt]) or (
        mt == "image/webp" and head[8:12] != b"WEBP"
    ):
        return None, "image data does not match its type"
    return f"data:{mt};base64,{data}", ""
