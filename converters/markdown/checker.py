"""The Markdown checker: parses an output as CommonMark and checks its structure.

The front matter must be in the subset :mod:`.frontmatter` writes and valid against its
schema (:mod:`.frontmatter_schema`); the body must pass the checks of :mod:`.body`.

:func:`check` (and :class:`Stream`, which the writer feeds as it writes) parses the body a
section at a time (see :mod:`.sections`), so memory holds the largest section, not the
document; :func:`check_whole` parses it in one piece and is what tests hold it to.
"""

from __future__ import annotations

from typing import Any

from . import frontmatter, frontmatter_schema
from .body import MAX_PROBLEMS, Body
from .regions import closer
from .sections import FENCE_CONTENT, Section, Splitter, elide, whole
from .tokens import elisions_hold, heading_tokens, open_tail

FEED_CHARS = 1 << 16
"""The stream reads its input in pieces of at least this many characters."""
STAND_IN_CHARS = 1 << 20
"""A piece this long, fed while a fence is open, that cannot close it (the content of a
huge fenced block), is read as its newlines alone (see :meth:`Stream.feed`)."""
SECTION_CHARS = 1 << 16
"""Sections are cut at the first heading after this many characters: several turns are
parsed at once, which costs the parser less than one turn at a time (each parse has a
fixed cost) and keeps memory small all the same."""


def _line_count(text: str) -> int:
    """Lines as the parser counts them: a final newline ends the last line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _below_first_line(text: str) -> str:
    end = text.find("\n")
    return text[end + 1 :] if end >= 0 else ""


def _identity(index: int) -> int:
    return index


class Stream:
    """The checker over a document given in pieces (:meth:`feed`, then :meth:`close`).
    Memory holds the section being read, not the document: the body is cut at top-level
    headings (:mod:`.sections`) and each section is parsed on its own.

    ``incomplete`` after :meth:`close`: the stream cannot give the whole document's
    verdict (a CR in the text, or a link reference definition after inline text that
    could use it); the caller runs :func:`check` over the whole output instead."""

    def __init__(
        self, references: dict[str, Any] | None = None, piece: int = FEED_CHARS, section: int = 0
    ) -> None:
        self.references = references  # link reference definitions known in advance
        self.piece = piece
        self.section = section  # the least characters of a section (0: cut at every heading)
        self.buf = ""
        self.body: Body | None = None
        self.splitter: Splitter | None = None
        self.result: list[str] | None = None  # set once the verdict is known
        self.incomplete = False
        self.line = 0  # body lines before the buffer
        self.retries = 0
        self.at_cut = False  # the next section starts at a cut (with its heading)
        self.pending: list[str] = []  # small pieces, read once they add up to FEED_CHARS
        self.pending_size = 0
        self.reparsed = 0  # sections parsed again in full (a shortened fence did not hold)
        self.merged = 0  # cuts refused (a section did not stand alone)
        self.stand_ins: list[tuple[int, int]] = []  # spans of the buffer that stand in for fence content
        self.stood_in = 0  # pieces read as their newlines (see _stand_in)

    def feed(self, text: str) -> None:
        if self.result is not None or self.incomplete:
            return
        if "\r" in text:
            # CommonMark reads a CR as a line end: our line arithmetic would not match.
            self.incomplete = True
            return
        if len(text) >= STAND_IN_CHARS and self._stand_in(text):
            return
        if self.pending:
            self.pending.append(text)
            self.pending_size += len(text)
            if self.pending_size < self.piece:
                return
            text = "".join(self.pending)
            self.pending, self.pending_size = [], 0
        elif len(text) < self.piece:
            self.pending, self.pending_size = [text], len(text)
            return
        self.buf = self.buf + text if self.buf else text
        self._drain(final=False)

    def _stand_in(self, text: str) -> bool:
        """Reads ``text`` as its newlines alone if it is wholly the content of the fence
        open at the end of the buffer: the checker leaves fence content out of what it
        parses (:func:`.sections.elide`) and counts only its lines, so the huge text is
        neither copied into the buffer nor held by it. Sound because the fence is then
        verified to open at the top level and close after the text, as for any elided
        fence (:meth:`_section`); where that does not hold, the verdict is left to the
        whole check (``incomplete``)."""
        if self.pending:
            self.buf += "".join(self.pending)
            self.pending, self.pending_size = [], 0
            self._drain(final=False)
            if self.result is not None or self.incomplete:
                return True
        splitter = self.splitter
        if splitter is None:
            return False
        # A block the scan would take whole (a collapsed result, a tool call with its
        # result) waits for its end, which is past the huge text: read line by line
        # instead, as a block that is not exactly ours is, so the fence it holds is seen.
        while splitter.fence is None and splitter.read_by_lines():
            self._drain(final=False)
            if self.result is not None or self.incomplete:
                return True
        buf = self.buf
        if splitter.fence is None or splitter.pos != len(buf) or not buf.endswith("\n"):
            return False
        lines = text.count("\n")
        if not text.endswith("\n") or lines * 2 > len(text):
            return False
        char, length = splitter.fence
        if closer(text, 0, len(text), char, length)[0] >= 0:
            return False
        self.stand_ins.append((len(buf), len(buf) + lines))
        self.stood_in += 1
        self.buf = buf + "\n" * lines
        self._drain(final=False)
        return True

    def _stood_in(self, section: Section) -> bool:
        """Whether a stand-in lies in ``section``."""
        return any(a < section.end and b > section.start for a, b in self.stand_ins)

    def close(self) -> list[str]:
        if self.result is None and not self.incomplete:
            if self.pending:
                self.buf += "".join(self.pending)
                self.pending = []
            self._drain(final=True)
        if self.incomplete:
            return []
        assert self.result is not None
        return self.result

    def _drain(self, final: bool) -> None:
        if self.body is None and not self._head(final):
            return
        assert self.body is not None and self.splitter is not None
        body, splitter, buf = self.body, self.splitter, self.buf
        while True:
            section = splitter.next(buf, final)
            if section is None:
                break
            at_end = final and section.end == len(buf)
            lines = self._section(buf, section, at_end)
            if self.incomplete:
                return
            if lines < 0:
                # The section does not stand alone: read it with the next 1, 2, 4... cuts.
                self.retries += 1
                self.merged += 1
                splitter.skip = 1 << (self.retries - 1)
                continue
            self.retries = 0
            if at_end:
                self.result = body.finish(self.line + lines)[:MAX_PROBLEMS]
                if body.late_references:
                    self.incomplete = True
                self.buf = ""
                return
            self.line += lines
            splitter.reset(section.end)
        start = splitter.start
        if start and start * 2 >= len(buf):
            # What was read is dropped once it is at least half the buffer: a copy of the
            # rest now and then, not after every section (a copy of a large block each
            # time it did not end a section).
            self.buf = buf[start:]
            splitter.rebase(start)
            self.stand_ins = [(a - start, b - start) for a, b in self.stand_ins if b > start]

    def _head(self, final: bool) -> bool:
        """Reads and validates the front matter once it is complete."""
        buf = self.buf
        try:
            # Only complete lines: "---" at the end of a piece may be the start of "----".
            fm_lines, body_start, body_offset = frontmatter.locate(
                buf, len(buf) if final else buf.rfind("\n") + 1
            )
        except frontmatter.FrontMatterError as exc:
            if final or (len(buf) >= 4 and not buf.startswith("---\n")):
                self.result = [f"front matter: {exc}"]
            return False  # else: not closed yet
        try:
            fm = frontmatter.parse(fm_lines)
        except frontmatter.FrontMatterError as exc:
            self.result = [f"front matter: {exc}"]
            return False
        problems = frontmatter_schema.problems(fm)
        if problems:
            self.result = problems
            return False
        self.body = Body(fm, body_start, self.references)
        self.splitter = Splitter(self.body.turn_level, self.section)
        self.splitter.reset(body_offset)
        return True

    def _section(self, buf: str, section: Section, at_end: bool) -> int:
        """Parses and checks one section; its line count, or -1 when it does not stand
        alone (nothing is checked then)."""
        body = self.body
        assert body is not None
        stood_in = self._stood_in(section)
        if stood_in and not all(
            any(s <= a and b <= e and k == FENCE_CONTENT for s, e, k in section.regions)
            for a, b in self.stand_ins
            if a < section.end and b > section.start
        ):
            self.incomplete = True  # (a fence the text stood in for did not close)
            return 0
        snap = body.snapshot()
        elided = elide(buf, section)
        text = elided.text
        # A section after a cut starts with its heading, which opens and closes on that
        # line in a clean state: its tokens are made here, the parse starts below it.
        head = heading_tokens(text) if self.at_cut else None
        skip = 1 if head is not None else 0
        rest = _below_first_line(text) if head is not None else text
        tokens = body.parse(rest)
        # Every region left out leaves an anchor.
        if elided.anchors and not elisions_hold(tokens, elided.fences, elided.sentinels, skip):
            body.rollback(snap)
            if stood_in:
                self.incomplete = True  # a full parse would need the text stood in for
                return 0
            self.reparsed += 1
            elided = whole(buf, section)
            text = elided.text
            rest = _below_first_line(text) if head is not None else text
            tokens = body.parse(rest)
        lines = _line_count(text)
        if not at_end and open_tail(tokens, lines - skip):
            body.rollback(snap)
            return -1
        if head is not None:
            body.tokens(head, (_identity, self.line, lines), False)
        line_of = elided.line if elided.anchors else _identity
        if skip:
            base = line_of
            line_of = lambda index: base(index + 1)  # noqa: E731
        body.tokens(tokens, (line_of, self.line, lines - skip), at_end, elided.headings, skip)
        self.at_cut = True
        end = section.end
        return elided.newlines + (1 if end > section.start and buf[end - 1] != "\n" else 0)


def _decode(data: bytes) -> str | list[str]:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"line 1: not UTF-8: {exc}"]


def check(data: bytes) -> list[str]:
    """The checker, section by section (memory: the largest section, not the document)."""
    text = _decode(data)
    if isinstance(text, list):
        return text
    stream = Stream(section=SECTION_CHARS)
    stream.feed(text)
    problems = stream.close()
    if not stream.incomplete:
        return problems
    refs = stream.body.env.get("references") if stream.body is not None else None
    if "\r" in text or not refs:
        return check_whole(data)
    # A definition came after text that could use it: again, knowing every definition.
    stream = Stream(dict(refs), section=SECTION_CHARS)
    stream.feed(text)
    problems = stream.close()
    return check_whole(data) if stream.incomplete else problems


def check_whole(data: bytes) -> list[str]:
    """The same checks with one parse of the whole body: the reference the sectioned
    checker is tested against (and its fallback for text with CRs)."""
    text = _decode(data)
    if isinstance(text, list):
        return text
    try:
        fm_lines, body_start = frontmatter.split(text)
        fm = frontmatter.parse(fm_lines)
    except frontmatter.FrontMatterError as exc:
        return [f"front matter: {exc}"]
    problems = frontmatter_schema.problems(fm)
    if problems:
        return problems
    lines = text.split("\n")[body_start:]
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it starts no new one
    body_text = "\n".join(text.split("\n")[body_start:])
    body = Body(fm, body_start)
    tokens = body.parse(body_text)
    body.tokens(tokens, (_identity, 0, len(lines)), True)
    return body.finish(len(lines))[:MAX_PROBLEMS]
