"""The page's own style and script, and the Content-Security-Policy that allows exactly them.

The CSP sits in a ``<meta>`` tag as the first child of ``<head>`` (before any content a
browser could act on). It denies everything by default and allows the one inline script
and the one inline style by their SHA-256 hashes, and images only as ``data:`` URLs. So
even if escaping failed somewhere, an injected ``<script>``, event handler attribute,
``javascript:`` URL, style attribute or remote resource would not run or load.

The script is page.js, followed, on a page with code blocks that name a language, by
highlight.js with the grammars those blocks name (hljs.py); so its hash is the page's.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Iterable

from . import hljs
from .embedded import read as _static


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode() + "'"


@functools.lru_cache(maxsize=1)
def style() -> str:
    return _static("page.css")


@functools.lru_cache(maxsize=1)
def _page_js() -> str:
    js = _static("page.js")
    if "</" in js:  # would end the <script> element early
        raise AssertionError("page.js must not contain '</'")
    return js


@functools.lru_cache(maxsize=64)
def _script(languages: tuple[str, ...]) -> str:
    return _page_js() + hljs.script(languages) if languages else _page_js()


def script(languages: Iterable[str] = (), live: bool = False) -> str:
    """The page's script for code blocks naming ``languages`` (requirements included);
    ``live``: with what keeps the reader's place on a page that reloads itself while
    ``piconv watch`` keeps it current (live.js)."""
    return _script(tuple(languages)) + (_live_js() if live else "")


@functools.lru_cache(maxsize=1)
def _live_js() -> str:
    js = _static("live.js")
    if "</" in js:
        raise AssertionError("live.js must not contain '</'")
    return js


RELOAD_SECONDS = 2
"""How often a page kept current by ``piconv watch`` reloads itself."""


def csp(script_source: str, style_source: str | None = None) -> str:
    """The policy allowing exactly ``script_source`` and ``style_source`` (default: the
    session page's style)."""
    return (
        "default-src 'none'; "
        f"script-src {_hash(script_source)}; "
        f"style-src {_hash(style() if style_source is None else style_source)}; "
        "img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


GENERATOR = '<meta name="generator" content="piconv">'
"""Names piconv as a page's writer: what tells a file at a page's place as piconv's."""


def head(title_html: str, script_source: str, style_source: str | None = None, reload: bool = False) -> str:
    """The page up to ``<body>``: the CSP first, piconv named as the generator (what
    tells a page as piconv's), the title and the style (default: the session page's);
    ``reload``: a page kept current by ``piconv watch``, which reloads itself every
    :data:`RELOAD_SECONDS` (a refresh ``<meta>``: no script needed)."""
    style_source = style() if style_source is None else style_source
    refresh = f'<meta http-equiv="refresh" content="{RELOAD_SECONDS}">' if reload else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp(script_source, style_source)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"{refresh}{GENERATOR}"
        f"<title>{title_html}</title>"
        f"<style>{style_source}</style>"
        "</head><body>"
    )


def tail(script_source: str) -> str:
    return f"<script>{script_source}</script></body></html>\n"
