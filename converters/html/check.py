"""The HTML converter's own output check: the security invariants of a page.

Not a validator (the test suite runs the Nu Html Checker for that); this checks what
the converter promises about every page it writes, fast enough to run on every
conversion (the CLI validates by default) and without a JVM:

- a Content-Security-Policy ``<meta>`` comes first in ``<head>`` after the charset, with
  ``default-src 'none'``, ``img-src data:`` and exactly the hashes of the page's one
  ``<script>`` (last in the body) and one ``<style>`` (in the head);
- in the body, every ``<`` opens a tag written the converter's way: element and
  attribute names from the converter's vocabulary (so no script, style, iframe, svg,
  object, form, base, link or meta element, no event-handler or style attribute), all
  values quoted; every ``href`` is a fragment or an http(s) URL and every ``src`` a
  ``data:`` URL of an allow-listed image type.

It scans bytes with regular expressions that have literal prefixes rather than running an
HTML parser (a few MB/s in pure Python): three passes, well under a second for a 100 MB
page. That is exact for
pages this converter writes, because every ``"``, ``<`` and ``>`` of session text is
escaped: in the body a double quote only ever delimits an attribute value, ``<`` only
ever opens a tag and ``>`` only ever closes one.
"""

from __future__ import annotations

import base64
import hashlib
import re

from .escape import ALLOWED_IMAGE_TYPES

_HEAD = re.compile(
    rb'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
    rb'<meta http-equiv="Content-Security-Policy" content="([^"]*)">'
)
# A page kept current by piconv watch reloads itself: a refresh of a number of seconds,
# never a refresh to a URL (that would be a redirect).
_HEAD_REST = re.compile(
    rb'(?:<meta (?:name="[a-z-]+" content="[^"<>]*"|http-equiv="refresh" content="[0-9]{1,4}")>)*'
    rb"<title>[^<]*</title><style>(.*?)</style>",
    re.S,
)
# The converter's vocabulary: what it writes itself and what cmark-gfm writes for Markdown.
ALLOWED_TAGS = tuple(
    [
        "a",
        "article",
        "blockquote",
        "body",
        "br",
        "button",
        "code",
        "dd",
        "del",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "img",
        "input",
        "li",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "span",
        "strong",
        "summary",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "time",
        "tr",
        "ul",
        "wbr",
    ]
)
ALLOWED_ATTRS = tuple(
    [
        "alt",
        "aria-label",
        "checked",
        "class",
        "data-act",
        "datetime",
        "disabled",
        "href",
        "id",
        "loading",
        "placeholder",
        "rel",
        "src",
        "start",
        "title",
        "type",
    ]
)
VALUELESS_ATTRS = ("hidden", "open")


def _alternation(words: tuple[str, ...]) -> bytes:
    # Longest first, so that "a" does not shadow "article" when the engine backtracks.
    return b"|".join(re.escape(w).encode() for w in sorted(words, key=len, reverse=True))


# A "<" that does not open a tag written the converter's way: an allowed element name,
# allowed attributes as name="value" (value free of quotes and angle brackets), then at
# most one allowed valueless attribute. Session text can never produce a "<" at all (it
# is escaped), so this one pass proves there is no foreign element (script, style,
# iframe, svg, object, form, base, link, meta...) and no foreign attribute (event
# handlers, style, srcdoc...) and that every attribute is quoted.
_NOT_OURS = re.compile(
    rb"<(?!/?(?:"
    + _alternation(ALLOWED_TAGS)
    + rb")(?: (?:"
    + _alternation(ALLOWED_ATTRS)
    + rb')="[^"<>]*")*'
    rb"(?: (?:" + _alternation(VALUELESS_ATTRS) + rb"))?>)"
)
_BAD_HREF = re.compile(rb'href="(?!#|https?://[^/"])')
_BAD_SRC = re.compile(
    rb'src="(?!data:(?:' + b"|".join(t.encode() for t in ALLOWED_IMAGE_TYPES) + rb");base64,)"
)


# The three scans above in one pass, for the common case of a page without problems:
# every "<" opens a tag of the vocabulary whose href values are fragments or http(s)
# URLs and whose src values are allow-listed data: images. It finds a problem whenever
# one of the three finds one in a tag (only then are they run, to name the problem). An
# href=" or src=" outside any tag (text, which only a page not written by this converter
# can hold unescaped) is inert and no longer reported.
_ALL_OK = re.compile(
    rb"<(?!/?(?:"
    + _alternation(ALLOWED_TAGS)
    + rb')(?: (?:href="(?:#|https?://[^/"<>])|src="data:(?:'
    + b"|".join(t.encode() for t in ALLOWED_IMAGE_TYPES)
    + rb");base64,|(?:"
    + _alternation(tuple(a for a in ALLOWED_ATTRS if a not in ("href", "src")))
    + rb')=")[^"<>]*")*'
    rb"(?: (?:" + _alternation(VALUELESS_ATTRS) + rb"))?>)"
)


def _sha(s: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(s).digest()).decode() + "'"


def _line(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def check_page(data: bytes) -> list[str]:
    m = _HEAD.match(data)
    if m is None:
        return ["line 1: the page does not start with the charset and Content-Security-Policy meta elements"]
    tail = b"</script></body></html>\n"
    head_end = data.find(b"</head><body>")
    script_at = data.rfind(b"<script>")
    rest = _HEAD_REST.fullmatch(data, m.end(), head_end) if head_end > 0 else None
    if rest is None or script_at < head_end or not data.endswith(tail):
        return ["line 1: the page does not have the expected head / body / script layout"]
    problems: list[str] = []
    try:
        policy = {d.split()[0]: d.split()[1:] for d in m.group(1).decode("ascii").split(";") if d.split()}
    except UnicodeDecodeError:
        return ["line 1: the Content-Security-Policy is not ASCII"]
    script = data[script_at + len(b"<script>") : -len(tail)]
    if policy.get("default-src") != ["'none'"]:
        problems.append("line 1: CSP default-src is not 'none'")
    if policy.get("img-src") != ["data:"]:
        problems.append("line 1: CSP img-src is not exactly data:")
    if policy.get("script-src") != [_sha(script)]:
        problems.append("line 1: CSP script-src does not allow exactly the page's own script")
    if policy.get("style-src") != [_sha(rest.group(1))]:
        problems.append("line 1: CSP style-src does not allow exactly the page's own style")
    if b"</script" in script.lower():
        problems.append("line 1: the script ends early")

    start = head_end + len(b"</head><body>")
    return problems + check_body(data, start, script_at)


def check_body(data: bytes, start: int = 0, end: int | None = None) -> list[str]:
    """The body invariants over ``data[start:end]`` (no copy of the slice): one pass in
    the common case, the three named scans only when it finds something."""
    end = len(data) if end is None else end
    if _ALL_OK.search(data, start, end) is None:
        return []
    problems: list[str] = []
    bad = _NOT_OURS.search(data, start, end)
    if bad is not None:
        at = bad.start()
        problems.append(
            f"line {_line(data, at)}: markup not in the converter's vocabulary: {data[at : min(at + 60, end)]!r}"
        )
    for rx, what in (
        (_BAD_HREF, "href that is neither a fragment nor http(s)"),
        (_BAD_SRC, "src that is not an allow-listed data: image"),
    ):
        hit = rx.search(data, start, end)
        if hit is not None:
            at = hit.start()
            problems.append(f"line {_line(data, at)}: {what}: {data[at : min(at + 60, end)]!r}")
    return problems
