"""The HTML converter's own output check: the security invariants of a page.

Not a validator (the test suite runs the Nu Html Checker for that); this checks what
the converter promises about every page it writes, cheaply and without a JVM:

- a Content-Security-Policy ``<meta>`` comes first in ``<head>``, with ``default-src
  'none'`` and the hashes of the page's one ``<script>`` and one ``<style>``;
- no other script or style element, no event-handler or ``style`` attribute;
- every ``href`` is an http(s) URL or a fragment; every ``src`` a ``data:`` URL of an
  allow-listed image type; no ``<iframe>``, ``<object>``, ``<embed>``, ``<svg>``,
  ``<form>``, ``<base>``, ``<link>``.
"""

from __future__ import annotations

import base64
import hashlib
from html.parser import HTMLParser

from .escape import ALLOWED_IMAGE_TYPES, safe_href

_FORBIDDEN_TAGS = {
    "iframe",
    "object",
    "embed",
    "svg",
    "math",
    "form",
    "base",
    "link",
    "frame",
    "frameset",
    "meta-refresh",
}
_IMG_PREFIXES = tuple(f"data:{t};base64," for t in ALLOWED_IMAGE_TYPES)


def _sha(s: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.csp: str | None = None
        self.first_in_head: str | None = None
        self.in_head = False
        self.raw: str | None = None  # "script" or "style" while inside one
        self.raw_text: list[str] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []

    def _p(self, msg: str) -> None:
        if len(self.problems) < 50:
            self.problems.append(f"line {self.getpos()[0]}: {msg}")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "head":
            self.in_head = True
        elif (
            self.in_head
            and self.first_in_head is None
            and not (tag == "meta" and ("charset", "utf-8") in attrs)
        ):
            self.first_in_head = (
                tag if tag != "meta" else f"meta {(dict(attrs).get('http-equiv') or '').lower()}"
            )
        if tag == "meta" and (dict(attrs).get("http-equiv") or "").lower() == "content-security-policy":
            if self.csp is not None:
                self._p("more than one CSP meta")
            self.csp = dict(attrs).get("content") or ""
        if tag in _FORBIDDEN_TAGS:
            self._p(f"<{tag}> element")
        if tag in ("script", "style"):
            self.raw = tag
            self.raw_text = []
            if attrs:
                self._p(f"<{tag}> with attributes")
        for name, value in attrs:
            v = value or ""
            if name.startswith("on"):
                self._p(f"event handler attribute {name} on <{tag}>")
            elif name in ("style", "srcdoc", "formaction", "action", "xlink:href", "background"):
                self._p(f"attribute {name} on <{tag}>")
            elif name == "href" and not v.startswith("#") and safe_href(v) is None:
                self._p(f"href not http(s) on <{tag}>: {v[:60]!r}")
            elif name in ("src", "poster", "data") and not v.startswith(_IMG_PREFIXES):
                self._p(f"{name} not an allow-listed data: image on <{tag}>: {v[:60]!r}")
            elif name == "http-equiv" and v.lower() == "refresh":
                self._p("meta refresh")

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.in_head = False
        if tag == self.raw:
            (self.scripts if tag == "script" else self.styles).append("".join(self.raw_text))
            self.raw = None

    def handle_data(self, data: str) -> None:
        if self.raw:
            self.raw_text.append(data)


def check_page(data: bytes) -> list[str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"line 1: not UTF-8: {exc}"]
    c = _Checker()
    c.feed(text)
    c.close()
    problems = c.problems
    if c.csp is None:
        return [*problems, "line 1: no Content-Security-Policy meta element"]
    if c.first_in_head != "meta content-security-policy":
        problems.append(f"line 1: the CSP meta is not first in <head> (found {c.first_in_head})")
    policy = {d.split()[0]: d.split()[1:] for d in c.csp.split(";") if d.split()}
    if policy.get("default-src") != ["'none'"]:
        problems.append("line 1: CSP default-src is not 'none'")
    if len(c.scripts) > 1 or len(c.styles) > 1:
        problems.append(f"line 1: {len(c.scripts)} scripts and {len(c.styles)} styles (at most one each)")
    for kind, bodies in (("script-src", c.scripts), ("style-src", c.styles)):
        allowed = policy.get(kind, [])
        if any(not a.startswith("'sha256-") for a in allowed):
            problems.append(f"line 1: CSP {kind} allows more than hashes: {allowed}")
        for body in bodies:
            if _sha(body) not in allowed:
                problems.append(f"line 1: CSP {kind} does not allow the page's own element")
    if policy.get("img-src", ["data:"]) != ["data:"]:
        problems.append("line 1: CSP img-src allows more than data:")
    return problems
