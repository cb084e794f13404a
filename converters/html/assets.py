"""The page's own style and script, and the Content-Security-Policy that allows exactly them.

The CSP sits in a ``<meta>`` tag as the first child of ``<head>`` (before any content a
browser could act on). It denies everything by default and allows the one inline script
and the one inline style by their SHA-256 hashes, and images only as ``data:`` URLs. So
even if escaping failed somewhere, an injected ``<script>``, event handler attribute,
``javascript:`` URL, style attribute or remote resource would not run or load.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os

from .highlight import stylesheet


@functools.cache
def _static(name: str) -> str:
    # A plain read beside this module: importlib.resources would import inspect and
    # tempfile, several milliseconds for two files the package always ships unzipped.
    with open(os.path.join(os.path.dirname(__file__), "static", name), encoding="utf-8") as f:
        return f.read()


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode() + "'"


@functools.lru_cache(maxsize=1)
def style() -> str:
    return _static("page.css") + stylesheet()


@functools.lru_cache(maxsize=1)
def script() -> str:
    js = _static("page.js")
    if "</" in js:  # would end the <script> element early
        raise AssertionError("page.js must not contain '</'")
    return js


@functools.lru_cache(maxsize=1)
def csp() -> str:
    return (
        "default-src 'none'; "
        f"script-src {_hash(script())}; "
        f"style-src {_hash(style())}; "
        "img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def head(title_html: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        '<meta name="generator" content="piconv">'
        f"<title>{title_html}</title>"
        f"<style>{style()}</style>"
        "</head><body>"
    )


def tail() -> str:
    return f"<script>{script()}</script></body></html>\n"
