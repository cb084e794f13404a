"""The Markdown checker: parses an output as CommonMark and checks its structure.

- the front matter is in the subset :mod:`.frontmatter` writes and validates against
  ``schema/front-matter.schema.json``;
- the body parses (markdown-it-py, CommonMark) into: one level-1 title; one heading per
  turn at the turn level, numbered 1, 2, 3... and as many as the front matter's ``turns``
  (with ``layout: tree``, one level-2 heading per segment, ``segments`` of them); no other
  heading at or above the turn level;
- the only raw HTML is our own ``<details>``/``<summary>`` lines, balanced and at the top
  level; no inline HTML at all;
- no fenced code block runs unterminated to the end;
- every link goes to http(s); every image is http(s), a data URI of a raster type, or a
  file in the images folder.

Links are collected with markdown-it's own link validation switched off, so a
``javascript:`` target that a stricter renderer would drop still counts as a failure.

:func:`check` (and :class:`Stream`, which the writer feeds as it writes) parses the body a
section at a time (see :mod:`.sections`), so memory holds the largest turn, not the
document; :func:`check_whole` parses it in one piece and is what tests hold it to.
"""

from __future__ import annotations

import functools
import gc
import re
from dataclasses import dataclass
from typing import Any

from piconv.validation import load_schema

from . import frontmatter
from .sections import Elided, Section, Splitter, elide, whole

MAX_PROBLEMS = 50
FEED_CHARS = 1 << 16
"""The stream reads its input in pieces of at least this many characters."""
SECTION_CHARS = 1 << 16
"""Sections are cut at the first heading after this many characters: several turns are
parsed at once, which costs the parser less than one turn at a time (each parse has a
fixed cost) and keeps memory small all the same."""
SCHEMA = ("piconv.converters.markdown", "schema/front-matter.schema.json")

_DETAILS_OPEN = re.compile(r"^<details>\n<summary>[^<>\n]*</summary>\n?$")
_DETAILS_CLOSE = "</details>"
# An unescaped "[": only text holding one can use a link reference definition.
_BRACKET = re.compile(r"(?:^|[^\\])(?:\\\\)*\[")
_HTTP = re.compile(r"^https?://", re.IGNORECASE)
_IMAGE_SRC = re.compile(
    r"^(?:https?://|data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$"
    r"|[A-Za-z0-9][A-Za-z0-9._-]*_images/[0-9a-f]{16}\.(?:png|jpg|gif|webp)$)",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt  # lazy: only the checker needs the full parser

    md = MarkdownIt("commonmark")
    md.validateLink = lambda url: True  # see every link, even those markdown-it would drop
    # Inline parsing is run by hand, only where it can find something (see _Body.tokens).
    md.disable("inline")
    return md


@functools.lru_cache(maxsize=1)
def _front_matter_valid() -> Any:
    """The yes/no predicate compiled from the front-matter schema (piconv.schemacheck): a
    valid front matter never pays for importing jsonschema, which words the problems."""
    from piconv.schemacheck import compile_schema

    return compile_schema(load_schema(*SCHEMA))


def _front_matter_problems(fm: dict[str, Any]) -> list[str]:
    if _front_matter_valid()(fm):
        return []
    problems = []
    for err in _validator().iter_errors(fm):
        path = "/".join(str(p) for p in err.absolute_path) or "(root)"
        problems.append(f"line 1: front matter {path}: {err.message}")
    return problems


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    schema = load_schema(*SCHEMA)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)



def _inline_text(children: list[Any]) -> str:
    return "".join(c.content for c in children if c.type in ("text", "code_inline"))


def _walk(children: Any) -> Any:
    for child in children:
        yield child
        if child.children:
            yield from _walk(child.children)


def _line_count(text: str) -> int:
    """Lines as the parser counts them: a final newline ends the last line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _last_line(text: str) -> str:
    end = len(text) - 1 if text.endswith("\n") else len(text)
    return text[text.rfind("\n", 0, end) + 1 : end] if end > 0 else ""


def _identity(index: int) -> int:
    return index


# -- the body's checks, fed with tokens section by section ------------------------------


class _Body:
    """The structural checks over the body's tokens, in document order. Fed one section at
    a time (or the whole body at once); counts, ``<details>`` depth and problems carry
    over, so the result is the same however the body is cut."""

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
        if "\r" in text or "\0" in text:
            tokens = _parser().parse(text, self.env)
        else:
            # The block parser alone: the core chain's other rules would only normalise
            # line ends and NULs (there are none) and join the children of inline tokens
            # (not parsed yet: see tokens()).
            md = _parser()
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
        line_of: Any,
        first: int,
        lines: int,
        last: str,
        final: bool,
        headings: dict[int, list[tuple[int, str]]] | None = None,
        skip: int = 0,
    ) -> None:
        """Checks one section's tokens. ``line_of`` maps a token line to a section line,
        ``first`` is the section's first body line, ``lines`` the parser's line count of
        the section and ``last`` its last line; ``final``: the section ends the body;
        blocks left out were replaced by sentinels the tokens hold as thematic breaks,
        which no check reads (what they stand for is known to pass). ``headings``: the
        headings a sentinel stands for, by its line (+ ``skip``) in the parsed text
        (:class:`.sections.Elided`), checked where the sentinel is."""
        md = _parser()
        env = self.env
        offset = self.offset + first + 1
        problem = self.problem
        pending_heading: tuple[int, int] | None = None  # (level, line) of the heading being read

        def where(tok: Any) -> int:
            if type(tok) is _Token and tok.section_line is not None:
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
                    for child in _walk(tok.children):
                        if child.type == "html_inline":
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
                        self._sentinel_heading(section_line, text, offset, (line_of, first, lines, last))
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
            elif kind == "fence" and final and tok.map and tok.map[1] >= lines:
                closer = (last if tok.map[1] - tok.map[0] >= 2 else "").strip()
                indent = len(last) - len(last.lstrip(" ")) if tok.map[1] - tok.map[0] >= 2 else 0
                if not (indent <= 3 and len(closer) >= len(tok.markup) and closer == tok.markup[0] * len(closer)):
                    problem(where(tok), "fenced code block runs unterminated to the end")

    def _sentinel_heading(self, section_line: int, text: str, offset: int, where: tuple[Any, int, int, str]) -> None:
        """A heading a sentinel stood for, from its line: checked as the parser's tokens of
        it would be (:func:`_heading_tokens`), without making them where its text holds no
        ``<`` or ``[`` (the inline checks find nothing in it then). ``where``: the
        arguments of :meth:`tokens` that place a token."""
        level, content = _atx(text)
        if "<" in content or "[" in content:
            tokens = _heading_tokens(text)
            for tok in tokens:
                tok.section_line = section_line
            self.tokens(tokens, *where, False)
        else:
            self._heading((level, section_line + offset), content, None)

    def _heading(self, heading: tuple[int, int], content: str, children: list[Any] | None) -> list[Any] | None:
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
            md = _parser()
            children = []
            md.inline.parse(content, md, self.env, children)
        text = _inline_text(children)
        if level == self.turn_level:
            if not text.startswith(f"{self.turns}. "):
                self.problem(line, f"turn heading out of sequence (expected number {self.turns}): {text[:60]!r}")
        elif self.tree and level == 2:
            if not (text == "Shared history" or text.startswith("Branch ")):
                self.problem(line, f"segment heading that is neither shared history nor a branch: {text[:60]!r}")
        else:
            self.problem(line, f"level-{level} heading above the turn level: {text[:60]!r}")
        return children

    def finish(self, lines: int) -> list[str]:
        """``lines``: the body's line count."""
        problems = self.problems
        fm, offset = self.fm, self.offset
        if self.depth:
            problems.append(f"line {offset + lines}: {self.depth} <details> block(s) not closed")
        if self.titles != 1:
            problems.append(f"line {offset + 1}: expected one level-1 title, found {self.titles}")
        if self.turns != fm.get("turns"):
            problems.append(f"line {offset + 1}: front matter says {fm.get('turns')} turns, found {self.turns} turn headings")
        if self.tree and self.segments != fm.get("segments"):
            problems.append(f"line {offset + 1}: front matter says {fm.get('segments')} segments, found {self.segments}")
        return problems


def _open_tail(tokens: list[Any], lines: int) -> bool:
    """Whether the last top-level block runs to the end of the section as a fence or an
    HTML block, which the next line (a heading) would continue in the whole document."""
    for tok in reversed(tokens):
        if tok.level == 0 and tok.map is not None:
            return tok.map[1] >= lines and tok.type in ("fence", "html_block")
    return False


def _elisions_hold(tokens: list[Any], elided: Elided, skip: int = 0) -> bool:
    """Every fence whose content was left out opens at the top level on its own line and
    closes on the next; every sentinel, of a block or of a heading, is a thematic break
    of one line at the top level (see :mod:`.sections`)."""
    fences = set()
    breaks = set()
    for tok in tokens:
        if tok.level == 0 and tok.map:
            kind = tok.type
            if kind == "fence" and tok.map[1] == tok.map[0] + 2:
                fences.add(tok.map[0] + skip)
            elif kind == "hr" and tok.map[1] == tok.map[0] + 1:
                breaks.add(tok.map[0] + skip)
    return fences.issuperset(elided.fences) and breaks.issuperset(elided.sentinels)  # headings sit on sentinels


# -- whole documents and streams -----------------------------------------------------------


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
        self.body: _Body | None = None
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
        self.ends_at_cut = False  # see part()
        self.resumed = False  # see resume()
        self.heading_first: re.Pattern[str] | None = None  # the line it must open with

    @classmethod
    def resume(cls, turn_level: int, turns: int, section: int = 0) -> Stream:
        """A stream over the rest of a body from a turn heading on, the part before it
        checked elsewhere (:func:`part`): ``turns`` turn headings and the title came
        before, and the parse starts clean at this heading. What the part before and this
        one find is put together by :func:`join`."""
        stream = cls(section=section)
        body = stream.body = _Body({"layout": "tree" if turn_level == 3 else "path"}, 0)
        body.turns, body.titles = turns, 1
        stream.resumed = True
        stream.splitter = Splitter(turn_level, section)
        stream.at_cut = True
        # The text must open with a heading at or above the turn level, as at a cut.
        stream.heading_first = re.compile(rf"#{{1,{turn_level}}}(?:[ \t]|$)", re.MULTILINE)
        return stream

    def part(self) -> Part | None:
        """After :meth:`close` of a stream given the text up to a cut, ending in the blank
        line before a turn heading (``ends_at_cut`` set before), or of one made by
        :meth:`resume`: what :func:`join` needs; ``None`` when this part alone cannot
        tell (a CR, a section that did not end clean, a link reference definition, a
        verdict reached early)."""
        body = self.body
        if self.incomplete or body is None or self.result is None:
            return None
        if self.heading_first is not None:
            return None  # the text never reached its first heading
        return Part(body.turns, body.titles, body.depth, body.problems, bool(body.env.get("references")), body.fm)

    def feed(self, text: str) -> None:
        if self.result is not None or self.incomplete:
            return
        if "\r" in text:
            # CommonMark reads a CR as a line end: our line arithmetic would not match.
            self.incomplete = True
            return
        if self.heading_first is not None and text:
            if not self.heading_first.match(text):
                self.incomplete = True
                return
            self.heading_first = None
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
        self._run(final=False)

    def close(self) -> list[str]:
        if self.result is None and not self.incomplete:
            if self.pending:
                self.buf += "".join(self.pending)
                self.pending = []
            self._run(final=True)
        if self.incomplete:
            return []
        assert self.result is not None
        return self.result

    def _run(self, final: bool) -> None:
        # The cyclic GC paused: parsing allocates tokens by the hundred thousand (none in
        # cycles), and each collection would walk the caller's whole document too.
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._drain(final)
        finally:
            if collecting:
                gc.enable()

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
            lines = self._section(buf, section, at_end and not self.ends_at_cut)
            if lines < 0 and at_end:
                self.incomplete = True  # the text ends at a cut with a block left open
                return
            if lines < 0:
                # The section does not stand alone: read it with the next 1, 2, 4... cuts.
                self.retries += 1
                self.merged += 1
                splitter.skip = 1 << (self.retries - 1)
                continue
            self.retries = 0
            if at_end:
                if self.ends_at_cut or self.resumed:
                    self.result = list(body.problems)  # join() sums up the parts
                else:
                    self.result = body.finish(self.line + lines)[:MAX_PROBLEMS]
                if body.late_references:
                    self.incomplete = True
                self.buf = ""
                return
            self.line += lines
            splitter.reset(section.end)
        start = splitter.start
        if start:
            self.buf = buf[start:]
            splitter.rebase(start)

    def _head(self, final: bool) -> bool:
        """Reads and validates the front matter once it is complete."""
        buf = self.buf
        try:
            # Only complete lines: "---" at the end of a piece may be the start of "----".
            fm_lines, body_start, body_offset = frontmatter.locate(buf, len(buf) if final else buf.rfind("\n") + 1)
        except frontmatter.FrontMatterError as exc:
            if final or (len(buf) >= 4 and not buf.startswith("---\n")):
                self.result = [f"front matter: {exc}"]
            return False  # else: not closed yet
        try:
            fm = frontmatter.parse(fm_lines)
        except frontmatter.FrontMatterError as exc:
            self.result = [f"front matter: {exc}"]
            return False
        problems = _front_matter_problems(fm)
        if problems:
            self.result = problems
            return False
        self.body = _Body(fm, body_start, self.references)
        self.splitter = Splitter(self.body.turn_level, self.section)
        self.splitter.reset(body_offset)
        return True

    def _section(self, buf: str, section: Section, at_end: bool) -> int:
        """Parses and checks one section; its line count, or -1 when it does not stand
        alone (nothing is checked then)."""
        body = self.body
        assert body is not None
        snap = body.snapshot()
        elided = elide(buf, section)
        text = elided.text
        # A section after a cut starts with its heading, which opens and closes on that
        # line in a clean state: its tokens are made here, the parse starts below it.
        head = _heading_tokens(text) if self.at_cut else None
        skip = 1 if head is not None else 0
        rest = _below_first_line(text) if head is not None else text
        tokens = body.parse(rest)
        if elided.anchors and not _elisions_hold(tokens, elided, skip):  # every region leaves an anchor
            body.rollback(snap)
            self.reparsed += 1
            elided = whole(buf, section)
            text = elided.text
            rest = _below_first_line(text) if head is not None else text
            tokens = body.parse(rest)
        lines = _line_count(text)
        if not at_end and _open_tail(tokens, lines - skip):
            body.rollback(snap)
            return -1
        if head is not None:
            body.tokens(head, _identity, self.line, lines, "", False)
        line_of = elided.line if elided.anchors else _identity
        if skip:
            base = line_of
            line_of = lambda index: base(index + 1)  # noqa: E731
        body.tokens(tokens, line_of, self.line, lines - skip, _last_line(text), at_end, elided.headings, skip)
        self.at_cut = True
        end = section.end
        return elided.newlines + (1 if end > section.start and buf[end - 1] != "\n" else 0)


@dataclass(frozen=True, slots=True)
class Part:
    """What checking one part of a body found (:meth:`Stream.part`): the counts it ends
    with, its problems, whether it defined a link reference, and the front matter it
    read (the part after a cut reads none: only its layout)."""

    turns: int
    titles: int
    depth: int
    problems: list[str]
    references: bool
    fm: dict[str, Any]


def join(first: Part | None, second: Part | None, turns_at_cut: int) -> list[str] | None:
    """The verdict on a body checked in two parts, the second from a turn heading on
    (:meth:`Stream.resume` with ``turns_at_cut``): no problems when the parts pass every
    check the whole body's stream makes; ``None`` when only the whole check can tell
    (either part found a problem or could not tell, its counts do not meet, or a link
    reference definition could reach across the cut). Problems are never worded here:
    :func:`check` over the whole output words them, with their line numbers."""
    if first is None or second is None or first.problems or second.problems:
        return None
    if first.references or second.references:
        return None  # a definition in one part could serve a link in the other
    if first.fm.get("layout") != "path" or second.fm.get("layout") != "path":
        return None
    if first.titles != 1 or first.depth != 0 or first.turns != turns_at_cut:
        return None
    if second.titles != 1 or second.depth != 0 or second.turns != first.fm.get("turns"):
        return None
    return []


def _below_first_line(text: str) -> str:
    end = text.find("\n")
    return text[end + 1 :] if end >= 0 else ""


class _Token:
    """What the checks read of a token, for the tokens made here."""

    __slots__ = ("children", "content", "level", "map", "section_line", "tag", "type")

    def __init__(self, type: str, tag: str, level: int, content: str = "") -> None:
        self.type = type
        self.tag = tag
        self.level = level
        self.map = [0, 1]
        self.content = content
        self.children: list[Any] | None = None
        self.section_line: int | None = None  # the line of the heading a sentinel stood for


def _heading_tokens(text: str) -> list[Any]:
    """The tokens markdown-it makes of an ATX heading on the first line of ``text``, as
    far as the checks read them (a test compares them)."""
    level, content = _atx(text)
    return [_Token("heading_open", f"h{level}", 0), _Token("inline", "", 1, content)]


def _atx(text: str) -> tuple[int, str]:
    """Level and content of the ATX heading on the first line of ``text``: markdown-it's
    heading rule step by step."""
    end = text.find("\n")
    line = text if end < 0 else text[:end]
    if "\0" in line:
        line = line.replace("\0", "\ufffd")  # as the parser's normalisation does
    pos = len(line) - len(line.lstrip("#"))
    maximum = len(line)
    while maximum > pos and line[maximum - 1] in " \t":
        maximum -= 1
    tmp = maximum
    while tmp > pos and line[tmp - 1] == "#":
        tmp -= 1
    if tmp > pos and line[tmp - 1] in " \t":
        maximum = tmp
    return pos, line[pos:maximum].strip(_trim_chars())


@functools.lru_cache(maxsize=1)
def _trim_chars() -> str:
    from markdown_it.common.utils import MD_TRIM_CHARS  # what its heading rule strips

    return MD_TRIM_CHARS


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
    problems = _front_matter_problems(fm)
    if problems:
        return problems
    lines = text.split("\n")[body_start:]
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it starts no new one
    body_text = "\n".join(text.split("\n")[body_start:])
    body = _Body(fm, body_start)
    tokens = body.parse(body_text)
    body.tokens(tokens, _identity, 0, len(lines), lines[-1] if lines else "", True)
    return body.finish(len(lines))[:MAX_PROBLEMS]
