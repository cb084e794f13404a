"""The page's highlighting script: highlight.js's core, the grammars the page names, and
the lazy colouring (static/highlight-lazy.js), in one function so nothing leaks into
the page's global scope.

The vendored core is highlight.js's ES module build (static/highlightjs/README.md); its
one ``export`` becomes the function's return value. Each grammar file registers itself
on the ``hljs`` the function defines. The script goes inline, allowed by the page's CSP
through its hash, so it must not end its ``<script>`` element early: no ``</script``
and no ``<script`` opening a tag (which would make the parser ignore the real end tag
after a ``<!--``) anywhere in it. highlight.js's files do hold ``</`` (``"</span>"``,
``/</g``), which the HTML parser passes over; rewriting them could break a regular
expression literal, so they are checked, not escaped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from .embedded import read as static

_EXPORT = re.compile(r"export\s*\{\s*([A-Za-z_$][\w$]*)\s+as\s+default\s*\}\s*;?\s*$")
_ENDS_EARLY = re.compile(r"</script|<script[\t\n\f\r />]", re.I)


def _checked(name: str, source: str) -> str:
    if _ENDS_EARLY.search(source):
        raise AssertionError(f"{name} would end the page's <script> element early")
    return source


@functools.cache
def _core() -> str:
    src = static("highlightjs/core.min.js")
    m = _EXPORT.search(src)
    if m is None:
        raise AssertionError("highlightjs/core.min.js is not the ES module core build (see its README)")
    body = src[: m.start()]
    return _checked("core", f'var hljs=(function(){{"use strict";\n{body}\nreturn {m.group(1)};}})();\n')


@functools.cache
def _grammar(name: str) -> str:
    return _checked(name, static(f"highlightjs/languages/{name}.min.js")) + "\n;\n"


def script(languages: Iterable[str]) -> str:
    """The script colouring a page whose code blocks name ``languages`` (highlight.js
    names, from highlight.py's tables, requirements included)."""
    parts = ["(function(){\n", _core()]
    parts.extend(_grammar(name) for name in languages)
    parts.append(_checked("highlight-lazy.js", static("highlight-lazy.js")))
    parts.append("\n})();\n")
    return "".join(parts)
