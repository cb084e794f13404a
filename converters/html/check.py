"""The HTML converter's own output check: the security invariants of a page.

Not a validator (the test suite runs the Nu Html Checker for that); this checks what
the converter promises about every page it writes, fast enough to run on every
conversion (the CLI validates by default) and without a JVM:

- a Content-Security-Policy ``<meta>`` comes first in ``<head>`` after the charset, with
  ``default-src 'none'``, ``img-src data:`` and the hashes of the page's one
  ``<script>`` and one ``<style>``, and nothing else allowed for scripts or styles;
- in the body: no other script or style element, no ``<iframe>``, ``<object>``,
  ``<embed>``, ``<svg>``, ``<math>``, ``<form>``, ``<base>``, ``<link>``, ``<meta>``;
  no event-handler, ``style`` or ``srcdoc`` attribute; every ``href`` a fragment or an
  http(s) URL; every ``src`` a ``data:`` URL of an allow-listed image type.

The scan uses regular expressions rather than an HTML parser (which runs at a few MB/s
in pure Python). That is exact for pages this converter writes, because every ``"``
and ``<`` of session text is escaped: a double quote in the body only ever delimits an
attribute value, ``<`` only ever opens a tag and ``>`` only ever closes one.
"""

from __future__ import annotations

import base64
import hashlib
import re

from .escape import ALLOWED_IMAGE_TYPES

_HEAD = re.compile(
    r'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
    r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">'
)
_STYLE = re.compile(r"<style>(.*?)</style>", re.S)
_BAD_TAG = re.compile(
    r"<(?:script|style|iframe|object|embed|svg|math|form|base|link|meta|frame|frameset|template|noscript)\b",
    re.I,
)
_BAD_ATTR = re.compile(
    r"<[a-zA-Z][^<>]*?[\s/](?:on[a-z]+|style|srcdoc|formaction|action|background|xlink:href|http-equiv)\s*=",
    re.I,
)
_BAD_HREF = re.compile(r'\shref="(?!#|https?://[^/"])')
_BAD_SRC = re.compile(
    r'\s(?:src|poster|data)="(?!data:(?:'
    + "|".join(re.escape(t) for t in ALLOWED_IMAGE_TYPES)
    + r");base64,)"
)
_UNQUOTED = re.compile(r"<[a-zA-Z][^>]*\s[a-z-]+=[^\"\s>]")


def _sha(s: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def check_page(data: bytes) -> list[str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"line 1: not UTF-8: {exc}"]
    m = _HEAD.match(text)
    if m is None:
        return ["line 1: the page does not start with the charset and Content-Security-Policy meta elements"]
    problems: list[str] = []
    policy = {d.split()[0]: d.split()[1:] for d in m.group(1).split(";") if d.split()}
    head_end = text.find("</head><body>")
    script_at = text.rfind("<script>")
    if head_end < 0 or script_at < head_end or not text.endswith("</script></body></html>\n"):
        return [*problems, "line 1: the page does not have the expected head / body / script layout"]
    styles = _STYLE.findall(text, 0, head_end)
    script = text[script_at + len("<script>") : -len("</script></body></html>\n")]
    if policy.get("default-src") != ["'none'"]:
        problems.append("line 1: CSP default-src is not 'none'")
    if policy.get("img-src") != ["data:"]:
        problems.append("line 1: CSP img-src is not exactly data:")
    if policy.get("script-src") != [_sha(script)]:
        problems.append("line 1: CSP script-src does not allow exactly the page's own script")
    if len(styles) != 1 or policy.get("style-src") != [_sha(styles[0])]:
        problems.append("line 1: CSP style-src does not allow exactly the page's own style")
    head_rest = text[m.end() : head_end]
    if _BAD_TAG.search(_STYLE.sub("", head_rest).replace('<meta name="', "")):
        problems.append("line 1: unexpected element in <head>")
    body_start, body_end = head_end + len("</head><body>"), script_at
    for rx, what in (
        (_BAD_TAG, "forbidden element"),
        (_BAD_ATTR, "forbidden attribute"),
        (_BAD_HREF, "href that is neither a fragment nor http(s)"),
        (_BAD_SRC, "src that is not an allow-listed data: image"),
        (_UNQUOTED, "unquoted attribute value"),
    ):
        for hit in rx.finditer(text, body_start, body_end):
            problems.append(
                f"line {_line(text, hit.start())}: {what}: {text[hit.start() : hit.start() + 60]!r}"
            )
            if len(problems) >= 50:
                return problems
    return problems
