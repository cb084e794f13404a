"""The structural checks of a Markdown body, over the parser's records in document order.

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

from .tokens import Token, atx, heading_text, heading_tokens, may_define, parser

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
"""What places a section's records: the map from a record's line to a section line, the
section's first body line and the parser's line count of the section."""


def _closed(fence: Token) -> bool:
    """Whether a fence has its closing line: its lines are the opening line, the content's
    lines and, if it was closed, the closing one. Read from the record, not the source
    line, so a fence inside a container (``> `````) is read as the parser read it."""
    content = fence.content
    content_lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return fence.map[1] - fence.map[0] - 1 - content_lines >= 1


class Body:
    """The checks over the body's records, with the state that carries between sections:
    counts, ``<details>`` depth and problems.

    Link reference definitions: the parser resolves those of the text it is given, which
    for a section is not the whole document. Where one text given to the parser could
    define a reference (:func:`.tokens.may_define`) and another could use one (an unescaped
    ``[``), the sections' verdict may not be the document's: ``late_references`` is set
    and the caller checks the whole document in one parse instead."""

    def __init__(self, fm: dict[str, Any], offset: int, references: dict[str, Any] | None = None) -> None:
        self.fm = fm
        self.offset = offset  # lines before the body
        self.tree = fm.get("layout") == "tree"
        self.turn_level = 3 if self.tree else 2
        self.turns = self.segments = self.titles = self.depth = 0
        self.problems: list[str] = []
        # No definition is kept here (the parser keeps them within one text), so where the
        # caller would check again with the definitions found, it checks the whole
        # document; definitions given in advance cannot reach the parser either.
        self.env: dict[str, Any] = {}
        self.defines = False  # some text parsed so far could define a link reference
        self.brackets = False  # ... could use one
        self.late_references = bool(references)  # ... in a text other than the definition's

    def problem(self, line: int, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"line {line}: {message}")

    def _unit(self, defines: bool, brackets: bool) -> None:
        """One text given to the parser on its own: notes whether a link reference
        definition in one such text could serve a link in another."""
        if (defines and self.brackets) or (brackets and self.defines):
            self.late_references = True
        self.defines = self.defines or defines
        self.brackets = self.brackets or brackets

    def parse(self, text: str) -> list[Token]:
        """The records of ``text`` (:meth:`.tokens.Cmark.parse`)."""
        if "[" in text:
            self._unit(may_define(text), _BRACKET.search(text) is not None)
        return parser().parse(text)

    def snapshot(self) -> tuple[bool, bool, bool]:
        return self.defines, self.brackets, self.late_references

    def rollback(self, snap: tuple[bool, bool, bool]) -> None:
        """Forgets what a parse that is thrown away noted."""
        self.defines, self.brackets, self.late_references = snap

    def tokens(
        self,
        tokens: list[Token],
        place: Placement,
        final: bool,
        headings: dict[int, list[tuple[int, str]]] | None = None,
        skip: int = 0,
    ) -> None:
        """Checks one section's records, placed by ``place``; ``final``: the section ends
        the body. Blocks left out were replaced by sentinels the records hold as thematic
        breaks, which no check reads (what they stand for is known to pass).
        ``headings``: the headings a sentinel stands for, by its line (+ ``skip``) in the
        parsed text (:class:`.sections.Elided`), checked where the sentinel is."""
        line_of, first, lines = place
        offset = self.offset + first + 1
        problem = self.problem

        def where(tok: Token) -> int:
            if tok.section_line is not None:
                return tok.section_line + offset  # a heading a sentinel stood for
            return line_of(tok.map[0]) + offset

        for tok in tokens:
            kind = tok.type
            if kind == "html_inline":
                if not _ANCHOR.fullmatch(tok.content):
                    problem(where(tok), f"raw inline HTML {tok.content[:40]!r}")
            elif kind == "link":
                if not _HTTP.match(tok.content):
                    problem(where(tok), f"link to a non-http(s) target {tok.content[:60]!r}")
            elif kind == "image":
                if not _IMAGE_SRC.match(tok.content):
                    problem(where(tok), f"image from a disallowed source {tok.content[:60]!r}")
            elif kind == "heading":
                if tok.alone:  # its line was given to the parser on its own
                    self._unit(False, _BRACKET.search(tok.content) is not None)
                if tok.level == 0:
                    self._heading((tok.heading, where(tok)), tok.content, tok.text)
            elif kind == "hr":
                if headings and tok.level == 0 and tok.map[0] + skip in headings:
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
            elif kind == "fence" and final and tok.map[1] >= lines and not _closed(tok):
                problem(where(tok), "fenced code block runs unterminated to the end")

    def _sentinel_heading(self, section_line: int, text: str, offset: int, place: Placement) -> None:
        """A heading a sentinel stood for, from its line: checked as the parser's records
        of it would be (:func:`.tokens.heading_tokens`), parsed only where its text holds
        a ``<`` or ``[`` (the inline checks find nothing in it then)."""
        level, content = atx(text)
        if "<" in content or "[" in content:
            tokens = heading_tokens(text)
            for tok in tokens:
                tok.section_line = section_line
            self.tokens(tokens, place, False)
        else:
            self._heading((level, section_line + offset), content, None)

    def _heading(self, heading: tuple[int, int], content: str, text: str | None) -> None:
        """The checks of a top-level heading; ``content``: its raw text; ``text``: its text
        as the parser read it (:func:`.tokens.inline_text`), if it was parsed. The text is
        read only where the check cannot be decided on the raw text: raw text that starts
        with digits, ". ", letters or spaces (none of which starts an inline construct)
        starts the same parsed, and a raw text of letters and spaces only is its text.
        A problem quotes the raw text."""
        level, line = heading
        if level == 1:
            self.titles += 1
            if self.titles > 1 or self.turns or self.segments:
                self.problem(line, "a second level-1 heading (only the title may be one)")
            return
        if level == self.turn_level:
            self.turns += 1
            if content.startswith(f"{self.turns}. "):
                return
        elif self.tree and level == 2:
            self.segments += 1
            if content == "Shared history" or content.startswith("Branch "):
                return
        elif level > self.turn_level:
            return
        if text is None:
            text = heading_text(content)
        if level == self.turn_level:
            if not text.startswith(f"{self.turns}. "):
                self.problem(
                    line, f"turn heading out of sequence (expected number {self.turns}): {content[:60]!r}"
                )
        elif self.tree and level == 2:
            if not (text == "Shared history" or text.startswith("Branch ")):
                self.problem(
                    line, f"segment heading that is neither shared history nor a branch: {content[:60]!r}"
                )
        else:
            self.problem(line, f"level-{level} heading above the turn level: {content[:60]!r}")

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
