"""Cutting a Markdown body into sections the checker can parse one at a time.

A *section* runs from one top-level heading at or above the turn level (``#``, ``##``,
and ``###`` with ``layout: tree``) to the next. The cut is sound because of how
CommonMark parses blocks, line by line with a stack of open blocks:

- an ATX heading at column 0 ends a paragraph (it interrupts one), a list item or a
  block quote (it is not indented and cannot be a lazy continuation line), and an
  indented code block; only two things can swallow it: a fenced code block or an HTML
  block that is still open at the top level;
- so if a section, parsed on its own from a clean start, ends with neither a top-level
  fence nor a top-level HTML block open, the whole document's parse is in the same clean
  state at the next heading, and the section's tokens are the whole document's tokens for
  those lines. The checker verifies this on every section's tokens and, where it fails,
  parses the section together with the next one(s) instead (:meth:`Splitter.next`).

The scanner that proposes the cuts only needs to be good, not exact: it skips headings
inside fences opened at column 0 and inside our own ``<details>`` blocks (a blank line
ends CommonMark's HTML block, so their content is ordinary top-level Markdown; the
checker carries the ``<details>`` depth from section to section anyway), and a block
quote never holds a line starting with ``#``. Markdown text from sessions is escaped so
that its own headings sit below the turn level.

Fence contents are left out of the text the parser sees (only the opening and closing
lines stay): a fenced block yields one token whatever it holds, and the checker never
reads its content. That is sound when the whole document's parser opens the fence on
the same line at the top level and no line inside could close it: the scanner finds the
first line that could close it under any reading (any indentation, a run of the fence
character at least as long, any trailing white space), and the checker verifies on the
tokens that the shortened fence opens at the top level on the scanner's line and closes
on the next; else the section is parsed again in full (:func:`elide`).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .regions import More, call_block, closer, fenced_block, prose_block, risky_lines

# Line patterns come in pairs: one led by the newline before the line (a literal first
# character makes the regex engine's scan several times faster than a "^" would) and one
# for a line at the very start of the buffer.
_Lines = tuple[re.Pattern[str], re.Pattern[str]]


def _lines(pattern: str) -> _Lines:
    return re.compile("\n" + pattern, re.MULTILINE), re.compile(pattern, re.MULTILINE)


def _search(pair: _Lines, buf: str, pos: int, limit: int) -> tuple[re.Match[str] | None, int]:
    """The first line matching at or after ``pos``, and where that line starts."""
    if pos == 0:
        m = pair[1].match(buf, 0, limit)
        if m is not None:
            return m, 0
    m = pair[0].search(buf, max(pos - 1, 0), limit)
    return m, (m.start() + 1 if m is not None else -1)


def _interesting(turn_level: int) -> _Lines:
    """A heading at or above the turn level, a fence opener at column 0, one of our
    ``<details>`` / ``</details>`` lines, one of our tool-call lines, or the first line
    of a block (after a blank line) that starts at column 0 with a character that opens
    neither HTML nor a link (a candidate for :func:`.regions.prose_block`)."""
    return _lines(
        rf"(?:(#{{1,{turn_level}}})(?:[ \t]|$)|(`{{3,}}|~{{3,}})([^\n]*)$|<(/?)details>$|(\*\*Tool call\*\* )"
        r"|(?<=\n\n)([^\s<\[]))"
    )


SENTINEL = "***\n"
"""What a run of left-out blocks and headings is replaced with (see :func:`elide`): a
thematic break, the cheapest block for the parser, which it makes of this line only at
the top level with no fence or HTML block open, exactly where the run starts as it
should. Where it stands for a heading, the parser would have made the heading of that
line (both interrupt a paragraph and close any container at column 0; neither can be
swallowed but by an open fence or HTML block), whose tokens the checker then makes by
hand."""
FENCE_CONTENT, BLOCK, HEADING = 0, 1, 2
"""Kinds of region left out: the content of a fence; a block that passes every check and
leaves the top level clean after the blank line that follows it (a tool call with its
result, a result block, a prose block: :func:`.regions.prose_block`), or a run of such blocks
(:func:`elide` gives a run one sentinel); a heading line at or above the turn level."""


@dataclass(slots=True)
class Section:
    """``text[start:end]`` of the buffer, with what to leave out: ``(start, end, kind)``
    spans, fence contents (:data:`FENCE_CONTENT`), blocks no check reads (:data:`BLOCK`)
    and heading lines (:data:`HEADING`); blocks and headings become :data:`SENTINEL`."""

    start: int
    end: int
    regions: list[tuple[int, int, int]] = field(default_factory=list)


class Splitter:
    """Scans a growing buffer from a section's start to the next cut. Resumable: with
    ``final`` false it stops at the last complete line and picks up there later."""

    def __init__(self, turn_level: int, min_chars: int = 0) -> None:
        self._interesting = _interesting(turn_level)
        self._risky = risky_lines(turn_level)
        self.min_chars = min_chars  # no cut before a section is this long
        self.reset(0)

    def reset(self, start: int) -> None:
        """A new section starts at ``start`` (a line start) in a clean parser state."""
        self.start = start
        self.pos = start
        self.fence: tuple[str, int] | None = None
        self.content_start = 0
        self.depth = 0
        self.regions: list[tuple[int, int, int]] = []
        self.skip = 0  # cuts to pass over (the section failed to stand alone)
        self.waiting = -1  # the line whose block needs more text to be taken whole (More)
        self.unread: set[int] = set()  # lines whose block is read line by line, not taken whole

    def rebase(self, delta: int) -> None:
        """The buffer lost its first ``delta`` characters."""
        self.start -= delta
        self.pos -= delta
        self.content_start -= delta
        self.regions = [(a - delta, b - delta, k) for a, b, k in self.regions]
        self.waiting -= delta
        self.unread = {line - delta for line in self.unread}

    def read_by_lines(self) -> bool:
        """Gives up taking whole the block the scan waits at (as if it were not exactly
        ours): the scan goes on into it line by line instead of waiting for its end.
        False when the scan is not waiting at a block."""
        if self.waiting < 0 or self.waiting != self.pos:
            return False
        self.unread.add(self.waiting)
        self.waiting = -1
        return True

    def next(self, buf: str, final: bool) -> Section | None:
        """The section from ``start`` to the next cut, or to the end when ``final``;
        ``None`` when more text is needed. The caller then calls :meth:`reset`."""
        limit = len(buf) if final else buf.rfind("\n") + 1
        pos = max(self.pos, self.start)
        interesting = self._interesting
        search = interesting[0].search
        regions = self.regions
        while True:
            if self.fence is not None:
                char, length = self.fence
                line, end = closer(buf, pos, limit, char, length)
                if line < 0:
                    # Every whole line before ``limit`` is read: the next piece is searched
                    # from there, not from the fence again (a long block, fed a piece at
                    # a time, was read again with every piece: time quadratic in its size).
                    self.pos = limit
                    break
                if line > self.content_start:
                    regions.append((self.content_start, line, FENCE_CONTENT))
                self.fence = None
                pos = end
                continue
            if pos:
                m = search(buf, pos - 1, limit)
                if m is None:
                    break
                line = m.start() + 1
            else:
                m, line = _search(interesting, buf, pos, limit)
                if m is None:
                    break
            kind = m.lastindex
            if kind == 1:  # a heading
                if self.depth == 0 and line > self.start and line - self.start >= self.min_chars:
                    if self.skip == 0:
                        self.pos = line
                        return Section(self.start, line, regions)
                    self.skip -= 1
                if line > self.start:
                    end = buf.find("\n", line, limit)
                    regions.append((line, end if end >= 0 else limit, HEADING))
            elif kind == 3:  # a fence opener: (run)(info)
                marker = m.group(2)
                if marker[0] == "`" and "`" in m.group(3):
                    pos = m.end()
                    continue  # not an opener: a backtick fence's info has no backtick
                self.fence = (marker[0], len(marker))
                self.content_start = m.end() + 1
            elif kind == 6:  # the first line of a block, after a blank line
                if line - 2 >= self.start and line not in self.unread:
                    try:
                        end = prose_block(buf, line, limit, final, self._risky)
                    except More:
                        self.pos = self.waiting = line
                        return None
                    if end:
                        regions.append((line, end, BLOCK))
                        pos = end
                        continue
                pos = m.end()
                continue
            elif kind == 5:  # a tool-call line
                if line - 2 >= self.start and buf[line - 2] == "\n" and line not in self.unread:
                    try:
                        end = call_block(buf, line, limit, final, self._risky)
                    except More:
                        self.pos = self.waiting = line
                        return None
                    if end:
                        regions.append((line, end, BLOCK))
                        pos = end
                        continue
            elif m.group(4):
                self.depth = max(0, self.depth - 1)
            else:
                try:
                    end = fenced_block(buf, line, limit, final, self._risky) if line not in self.unread else 0
                except More:
                    self.pos = self.waiting = line
                    return None
                if end:
                    regions.append((line, end, BLOCK))
                    pos = end
                    continue
                self.depth += 1
            pos = m.end()
        self.pos = limit
        if final:
            return Section(self.start, len(buf), regions)
        return None


@dataclass(slots=True)
class Elided:
    """A section's text with parts left out, and how to map its lines back."""

    text: str
    anchors: list[int]  # elided line index from which each removal shifts line numbers
    removed: list[int]  # lines left out up to that point
    fences: list[int]  # elided line index of each shortened fence's opening line
    sentinels: set[int]  # elided line index of each sentinel
    # elided line index of a sentinel -> the headings it stands for: (section line, heading line)
    headings: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    # newlines in the section's own text: counted as its parts are, not in a pass of its own
    newlines: int = 0

    def line(self, index: int) -> int:
        """The section line of elided line ``index``."""
        k = bisect.bisect_right(self.anchors, index)
        return index + (self.removed[k - 1] if k else 0)


def whole(buf: str, section: Section) -> Elided:
    return Elided(
        buf[section.start : section.end], [], [], [], set(), {}, buf.count("\n", section.start, section.end)
    )


def elide(buf: str, section: Section) -> Elided:
    """The section's text with its regions left out. Blocks and headings one blank line
    apart share one sentinel: each leaves the top level as it found it, clean after the
    blank line that follows (a heading is one line, which nothing but an open fence or
    HTML block swallows, and the sentinel shows there is none where the run starts);
    the checker makes the tokens of the headings a sentinel stands for by hand."""
    pieces: list[str] = []
    anchors: list[int] = []
    removed: list[int] = []
    fences: list[int] = []
    sentinels: set[int] = set()
    headings: dict[int, list[tuple[int, str]]] = {}
    prev = section.start
    line = 0  # elided line index at prev
    total = 0  # lines left out before prev
    run_end = -1  # where a block or heading run could go on (the line after its blank line)
    newlines = 0  # in the section's text before prev
    count = buf.count
    for start, end, kind in section.regions:
        if start < section.start or end > section.end:
            continue
        if kind != FENCE_CONTENT and start == run_end:
            # Joins the run: its text (and the blank line before it) leaves with it.
            n = count("\n", prev, end)
            newlines += n
            if kind == HEADING:
                headings.setdefault(line - 1, []).append((line + total + n, buf[start:end]))
                newlines += end < section.end  # its newline, unless it ends the text without one
                end += 1  # its newline
                n += 1
            total += n
            anchors.append(line)
            removed.append(total)
            prev = end
            run_end = end + 1
            continue
        pieces.append(buf[prev:start])
        kept = count("\n", prev, start)
        line += kept
        newlines += kept
        if kind == FENCE_CONTENT:
            fences.append(line - 1)
            n = count("\n", start, end)
            newlines += n
            total += n
            run_end = -1
        else:
            pieces.append(SENTINEL)
            sentinels.add(line)
            if kind == HEADING:
                headings[line] = [(line + total, buf[start:end])]
                newlines += end < section.end  # as above
                end += 1  # one line for one line
            else:
                n = count("\n", start, end)
                newlines += n
                total += n - 1
            line += 1
            run_end = end + 1
        anchors.append(line)
        removed.append(total)
        prev = end
    if not pieces:
        return whole(buf, section)
    pieces.append(buf[prev : section.end])
    newlines += count("\n", prev, section.end)
    return Elided("".join(pieces), anchors, removed, fences, sentinels, headings, newlines)
