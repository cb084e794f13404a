"""The structural checks of a Markdown body, over markdown-it's tokens in document order.

- one level-1 title; one heading per turn at the turn level, numbered 1, 2, 3... and as
  many as the front matter's ``turns`` (with ``layout: tree``, one level-2 heading per
  segment, ``segments`` of them); no other heading at or above the turn level;
- the only raw HTML is our own ``<details>``/``<summary>`` lines, balanced and at the top
  level; the only inline HTML is the turn anchors, ``<a id="turn-N"></a>``;
- no fenced code block runs unterminated to the end;
- every link goes to http(s) or to a turn anchor (``#turn-N``); every image is http(s), a
  data URI of a raster type, or a file in the images folder.

:class:`Body` is fed one section at a time (or the whole body at once); counts, the
``<details>`` depth and problems carry over, so the verdict is the same however the body
is cut (see :mod:`.checker`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .tokens import Token, atx, heading_tokens, inline_text, parser, walk

MAX_PROBLEMS = 50

_DETAILS_OPEN = re.compile(r"^<details>\n<summary>[^<>\n]*</summary>\n?$")
_DETAILS_CLOSE = "</details>"
# An unescaped "[": only text holding one can use a link reference definition.
_BRACKET = re.compile(r"(?:^|[^\\])(?:\\\\)*\[")
_HTTP = re.compile(r"^(?:https?://|#turn-[1-9][0-9]*$)", re.IGNORECASE)
# The anchor a turn's line starts with: an element with no attribute but an id (inert).
_ANCHOR = re.compile(r'<a id="turn-[1-9][0-9]*">|</a>')
_IMAGE_SRC = re.compile(
    r"^(?:https?://|data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$"
    r"|[A-Za-z0-9][A-Za-z0-9._-]*_images/[0-9a-f]{16}\.(?:png|jpg|gif|webp)$)",
    re.IGNORECASE,
)

Placement = tuple[Callable[[int], int], int, int]
"""What places a section's tokens: the map from a token line to a section line, the
section's first body line and the parser's line count of the section."""


def _closed(fence: Any) -> bool:
    """Whether a fence token has its closing line: its lines are the opening line, the
    content's lines and, if it was closed, the closing one. Read from the token, not the
    source line, so a fence inside a container (``> `````) is read as the parser read it."""
    content = fence.content
    content_lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return fence.map[1] - fence.map[0] - 1 - content_lines >= 1


class Body:
    """The checks over the body's tokens, with the state that carries between sections:
    counts, ``<details>`` depth, problems and the link reference definitions seen."""

    def __init__(self, fm: dict[str, Any], offset: int, references: dict[str, Any] | None = None) -> None:
        self.fm = fm
        self.offset = offset  # lines before the body
        self.tree = fm.get("layout") == "tree"
        self.turn_level = 3 if self.tree else 2
        self.turns = self.segments = self.titles = self.depth = 0
        self.problems: list[str] = []
        self.env: dict[str, Any] = {"references": dict(references)} if references else {}
        self.brackets = False  # some inline text so far could use a link reference
        self.late_references = False  # ... and a definition came after it

    def problem(self, line: int, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"line {line}: {message}")

    def parse(self, text: str) -> list[Any]:
        """Block tokens of ``text``; link reference definitions go to the shared env (see
        :meth:`rollback`)."""
        refs = self.env.get("references")
        before = len(refs) if refs is not None else 0
        md = parser()
        if "\r" in text or "\0" in text:
            tokens = md.parse(text, self.env)
        else:
            # The block parser alone: the core chain's other rules would only normalise
            # line ends and NULs (there are none) and join the children of inline tokens
            # (not parsed yet: see tokens()).
            tokens = []
            md.block.parse(text, md, self.env, tokens)
        refs = self.env.get("references")
        if refs is not None and len(refs) > before and self.brackets:
            # Inline text already checked could have used one of these definitions (the
            # whole document's parse collects them all before any inline parse).
            self.late_references = True
        return tokens

    def snapshot(self) -> tuple[int, int, bool]:
        refs = self.env.get("references") or {}
        return len(refs), len(self.env.get("duplicate_refs") or ()), self.late_references

    def rollback(self, snap: tuple[int, int, bool]) -> None:
        """Forgets what a parse that is thrown away added to the env."""
        nrefs, ndups, late = snap
        refs = self.env.get("references")
        if refs is not None and len(refs) > nrefs:
            for key in list(refs)[nrefs:]:
                del refs[key]
        dups = self.env.get("duplicate_refs")
        if dups is not None:
            del dups[ndups:]
        self.late_references = late

    def tokens(
        self,
        tokens: list[Any],
        place: Placement,
        final: bool,
        headings: dict[int, list[tuple[int, str]]] | None = None,
        skip: int = 0,
    ) -> None:
        """Checks one section's tokens, placed by ``place``; ``final``: the section ends
        the body. Blocks left out were replaced by sentinels the tokens hold as thematic
        breaks, which no check reads (what they stand for is known to pass).
        ``headings``: the headings a sentinel stands for, by its line (+ ``skip``) in the
        parsed text (:class:`.sections.Elided`), checked where the sentinel is."""
        line_of, first, lines = place
        md = parser()
        env = self.env
        offset = self.offset + first + 1
        problem = self.problem
        pending_heading: tuple[int, int] | None = None  # (level, line) of the heading being read

        def where(tok: Any) -> int:
            if type(tok) is Token and tok.section_line is not None:
                return tok.section_line + offset  # a heading a sentinel stood for
            return line_of(tok.map[0]) + offset if tok.map else self.offset + 1

        for tok in tokens:
            kind = tok.type
            if kind == "inline":
                content = tok.content
                parsed = "<" in content or "[" in content
                if parsed:
                    # Only these can hold raw HTML, autolinks, links or images: skipping
                    # the inline parse of the rest gives the same verdict.
                    tok.children = []
                    md.inline.parse(content, md, env, tok.children)
                    if not self.brackets and "[" in content and _BRACKET.search(content):
                        self.brackets = True
                if pending_heading is not None:
                    children = self._heading(pending_heading, content, tok.children if parsed else None)
                    if not parsed:
                        tok.children = children
                    pending_heading = None
                if tok.children:
                    for child in walk(tok.children):
                        if child.type == "html_inline":
                            if _ANCHOR.fullmatch(child.content):
                                continue
                            problem(where(tok), f"raw inline HTML {child.content[:40]!r}")
                        elif child.type == "link_open":
                            href = child.attrGet("href") or ""
                            if not _HTTP.match(href):
                                problem(where(tok), f"link to a non-http(s) target {href[:60]!r}")
                        elif child.type == "image":
                            src = child.attrGet("src") or ""
                            if not _IMAGE_SRC.match(src):
                                problem(where(tok), f"image from a disallowed source {src[:60]!r}")
            elif kind == "heading_open":
                if tok.level == 0:
                    pending_heading = (int(tok.tag[1]), where(tok))
            elif kind == "hr":
                if headings and tok.level == 0 and tok.map and tok.map[0] + skip in headings:
                    for section_line, text in headings[tok.map[0] + skip]:
                        self._sentinel_heading(section_line, text, offset, place)
            elif kind == "html_block":
                content = tok.content.rstrip("\n")
                if tok.level != 0:
                    problem(where(tok), f"raw HTML inside a container: {content[:40]!r}")
                elif _DETAILS_OPEN.match(content):
                    self.depth += 1
                elif content == _DETAILS_CLOSE:
                    self.depth -= 1
                    if self.depth < 0:
                        problem(where(tok), "</details> without an open <details>")
                        self.depth = 0
                else:
                    problem(where(tok), f"raw HTML block {content[:40]!r}")
            elif kind == "fence" and final and tok.map and tok.map[1] >= lines and not _closed(tok):
                problem(where(tok), "fenced code block runs unterminated to the end")

    def _sentinel_heading(self, section_line: int, text: str, offset: int, place: Placement) -> None:
        """A heading a sentinel stood for, from its line: checked as the parser's tokens of
        it would be (:func:`.tokens.heading_tokens`), without making them where its text
        holds no ``<`` or ``[`` (the inline checks find nothing in it then)."""
        level, content = atx(text)
        if "<" in content or "[" in content:
            tokens = heading_tokens(text)
            for tok in tokens:
                tok.section_line = section_line
            self.tokens(tokens, place, False)
        else:
            self._heading((level, section_line + offset), content, None)

    def _heading(
        self, heading: tuple[int, int], content: str, children: list[Any] | None
    ) -> list[Any] | None:
        """The checks of a top-level heading; ``children``: its inline tokens, if parsed.
        Its text (inline parsed) is read only where the check cannot be decided on its
        source: source that starts with digits, ". ", letters or spaces (none of which
        starts an inline construct) starts the same parsed, and a source of letters and
        spaces only is its text. The children, parsed here if they were not."""
        level, line = heading
        if level == 1:
            self.titles += 1
            if self.titles > 1 or self.turns or self.segments:
                self.problem(line, "a second level-1 heading (only the title may be one)")
            return children
        if level == self.turn_level:
            self.turns += 1
            if content.startswith(f"{self.turns}. "):
                return children
        elif self.tree and level == 2:
            self.segments += 1
            if content == "Shared history" or content.startswith("Branch "):
                return children
        elif level > self.turn_level:
            return children
        if children is None:
            md = parser()
            children = []
            md.inline.parse(content, md, self.env, children)
        text = inline_text(children)
        if level == self.turn_level:
            if not text.startswith(f"{self.turns}. "):
                self.problem(
                    line, f"turn heading out of sequence (expected number {self.turns}): {text[:60]!r}"
                )
        elif self.tree and level == 2:
            if not (text == "Shared history" or text.startswith("Branch ")):
                self.problem(
                    line, f"segment heading that is neither shared history nor a branch: {text[:60]!r}"
                )
        else:
            self.problem(line, f"level-{level} heading above the turn level: {text[:60]!r}")
        return children

    def finish(self, lines: int) -> list[str]:
        """The problems, with those only the whole body shows; ``lines``: its line count."""
        problems = self.problems
        fm, offset = self.fm, self.offset
        if self.depth:
            problems.append(f"line {offset + lines}: {self.depth} <details> block(s) not closed")
        if self.titles != 1:
            problems.append(f"line {offset + 1}: expected one level-1 title, found {self.titles}")
        if self.turns != fm.get("turns"):
            problems.append(
                f"line {offset + 1}: front matter says {fm.get('turns')} turns, found {self.turns} turn headings"
            )
        if self.tree and self.segments != fm.get("segments"):
            problems.append(
                f"line {offset + 1}: front matter says {fm.get('segments')} segments, found {self.segments}"
            )
        return problems
