"""The CommonMark parser the checker uses (cmark-gfm, C) and what it reads of its tree.

cmark-gfm is the reference implementation of CommonMark, reached through the shared
object of ``cmarkgfm`` (also the HTML converter's renderer). Its cffi module exports
only what rendering needs, so the tree is read through ``ctypes`` from the same object.
Parsed as plain CommonMark (no GFM extension: the Markdown we write is CommonMark), with
source positions and with raw HTML kept as nodes to be checked. A link's target is read
from the tree as written, whatever a renderer's filter would later make of it, so a
``javascript:`` target is seen.

:meth:`Cmark.parse` reads what the checks need off the tree in document order into
:class:`Token` records and frees the tree: one per block (``level`` 0 at the top level;
``map``: its first line, from 0, and the line after its last, for the blocks whose end
is read) and one per inline raw HTML, link and image (``level`` -1, placed on the block
holding it). A heading's record carries its text as the checks read it
(:func:`inline_text`). The writer reads the same records to find the code in text
holding a fence in a container (:mod:`.escape`).

A section that starts at a cut opens with an ATX heading in a clean parser state; its
record is made here from its line (:func:`heading_tokens`), and the line is given to the
parser alone only where its text could hold something a check reads; a test compares
both with the parser's.
"""

from __future__ import annotations

import ctypes
import functools
import re
from collections.abc import Iterator
from typing import Any

# cmark's options (cmark-gfm.h): source positions; raw HTML kept as it is.
_OPT_SOURCEPOS = 1 << 1
_OPT_UNSAFE = 1 << 17
_OPTIONS = _OPT_SOURCEPOS | _OPT_UNSAFE

# A document holding every node type the checks tell apart: the parser's numbers for
# them are read off its tree once, not copied from a header.
_SAMPLE = b"# h\n\n> q\n\n- i\n\n```\nc\n```\n\n<div>\n\n***\n\n    i\n\nt *e* **s** `c` <b> [l](u) ![i](u)\\\nx\ny\n"


class Token:
    """What the checks read of a block, or of a raw HTML, link or image inline."""

    __slots__ = ("alone", "content", "heading", "level", "map", "markup", "section_line", "text", "type")

    def __init__(
        self, type: str, level: int, map: tuple[int, int], content: str = "", heading: int = 0
    ) -> None:
        self.type = type
        self.level = level
        self.map = map
        self.content = content  # literal (HTML, code), target (link, image), raw text (heading)
        self.heading = heading  # a heading's level
        self.text: str | None = None  # a heading's text as the checks read it; None: not parsed
        self.section_line: int | None = None  # the line of the heading a sentinel stood for
        self.alone = False  # a heading whose line was parsed on its own (:func:`heading_tokens`)
        self.markup = ""  # a fence's run of backticks or tildes


class Cmark:
    """cmark-gfm's parser and tree accessors, bound once per process."""

    def __init__(self) -> None:
        from cmarkgfm import _cmark  # type: ignore[import-untyped]  # its shared object holds cmark-gfm

        so = ctypes.CDLL(_cmark.__file__)
        ptr, num, text = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p

        def fn(name: str, res: Any, *args: Any) -> Any:
            f = getattr(so, name)
            f.restype, f.argtypes = res, list(args)
            return f

        self.parser_new = fn("cmark_parser_new", ptr, num)
        self.parser_feed = fn("cmark_parser_feed", None, ptr, text, ctypes.c_size_t)
        self.parser_finish = fn("cmark_parser_finish", ptr, ptr)
        self.parser_free = fn("cmark_parser_free", None, ptr)
        self.node_free = fn("cmark_node_free", None, ptr)
        self.first_child = fn("cmark_node_first_child", ptr, ptr)
        self.next = fn("cmark_node_next", ptr, ptr)
        self.parent = fn("cmark_node_parent", ptr, ptr)
        self.type = fn("cmark_node_get_type", num, ptr)
        self.type_string = fn("cmark_node_get_type_string", text, ptr)
        self.start_line = fn("cmark_node_get_start_line", num, ptr)
        self.end_line = fn("cmark_node_get_end_line", num, ptr)
        self.start_column = fn("cmark_node_get_start_column", num, ptr)
        self.end_column = fn("cmark_node_get_end_column", num, ptr)
        self.literal = fn("cmark_node_get_literal", text, ptr)
        self.string_content = fn("cmark_node_get_string_content", text, ptr)
        self.url = fn("cmark_node_get_url", text, ptr)
        self.heading_level = fn("cmark_node_get_heading_level", num, ptr)
        self.fenced = fn(
            "cmark_node_get_fenced", num, ptr, ctypes.POINTER(num), ctypes.POINTER(num), ctypes.c_char_p
        )
        self.types = self._types()

    def _types(self) -> dict[str, int]:
        """The parser's number of each node type, by name."""
        root = self.parse_tree(_SAMPLE)
        found: dict[str, int] = {}
        try:
            for node in walk(self, root):
                found[self.type_string(node).decode()] = self.type(node)
        finally:
            self.node_free(root)
        return found

    def parse_tree(self, data: bytes) -> int:
        """The document's tree; the caller frees it (``node_free``)."""
        parser = self.parser_new(_OPTIONS)
        try:
            self.parser_feed(parser, data, len(data))
            root: int = self.parser_finish(parser)
            return root
        finally:
            self.parser_free(parser)

    def parse(self, text: str) -> list[Token]:
        """The records of ``text`` (see the module's docstring)."""
        root = self.parse_tree(text.encode("utf-8", "surrogatepass"))
        try:
            out: list[Token] = []
            _Reader(self, out).blocks(root)
            return out
        finally:
            self.node_free(root)

    def fence(self, node: int) -> str:
        """A code block's fence (its run of backticks or tildes), or "" if it is indented."""
        # Out-parameters of this call only: the parser may be used from several threads.
        length, offset, char = ctypes.c_int(), ctypes.c_int(), ctypes.create_string_buffer(2)
        if not self.fenced(node, ctypes.byref(length), ctypes.byref(offset), char):
            return ""
        return char.value.decode("ascii", "replace") * length.value


def _str(value: bytes | None) -> str:
    return value.decode("utf-8", "replace") if value else ""


class _Reader:
    """One walk of a tree into records (see :meth:`Cmark.parse`). A record's end line is
    read only for the blocks whose end a check reads (code, HTML, headings); for the
    others it is the line after their first."""

    def __init__(self, cm: Cmark, out: list[Token]) -> None:
        self.cm = cm
        self.out = out
        t = cm.types
        self.paragraph, self.heading = t["paragraph"], t["heading"]
        self.html_block, self.code_block, self.hr = t["html_block"], t["code_block"], t["thematic_break"]
        self.text, self.code, self.html_inline = t["text"], t["code"], t["html_inline"]
        self.link, self.image = t["link"], t["image"]
        self.names = {number: name for name, number in t.items()}

    def blocks(self, root: int) -> None:
        """Every block below ``root``, depth first. A loop, not a recursion: quotes and
        lists nest as deep as the text says."""
        cm, out = self.cm, self.out
        first_child, next_node, parent, node_type = cm.first_child, cm.next, cm.parent, cm.type
        start_line = cm.start_line
        level = 0
        node = first_child(root)
        while node:
            kind = node_type(node)
            start = start_line(node) - 1
            if kind == self.paragraph:
                where = (start, start + 1)
                out.append(Token("paragraph", level, where))
                raw = cm.string_content(node) or b""
                if b"<" in raw or b"[" in raw:
                    # Only these can hold raw HTML, autolinks, links or images.
                    self.inlines(node, where, None)
            elif kind == self.heading:
                where = (start, cm.end_line(node))
                # The raw text is read only where there is some: an empty one is a buffer
                # the parser never wrote to, with no terminating NUL.
                raw = cm.string_content(node) if first_child(node) else b""
                tok = Token("heading", level, where, _str(raw), cm.heading_level(node))
                out.append(tok)
                if level:
                    self.inlines(node, where, None)
                else:
                    parts: list[str] = []
                    self.inlines(node, where, parts)
                    tok.text = "".join(parts)
            elif kind == self.html_block:
                out.append(Token("html_block", level, (start, cm.end_line(node)), _str(cm.literal(node))))
            elif kind == self.code_block:
                fence = cm.fence(node)
                where = (start, cm.end_line(node))
                tok = Token("fence" if fence else "code_block", level, where, _str(cm.literal(node)))
                tok.markup = fence
                out.append(tok)
            elif kind == self.hr:
                out.append(Token("hr", level, (start, start + 1)))
            else:  # a container (quote, list, item) or a block of an extension
                name = self.names.get(kind) or _str(cm.type_string(node))
                out.append(Token(name, level, (start, start + 1)))
                child = first_child(node)
                if child:
                    node, level = child, level + 1
                    continue
            while True:  # the next block: a sibling, or the next of an enclosing block
                following = next_node(node)
                if following:
                    node = following
                    break
                level -= 1
                if level < 0:
                    return
                node = parent(node)

    def inlines(self, block: int, where: tuple[int, int], text: list[str] | None) -> None:
        """The raw HTML, links and images below ``block``, depth first (a loop, as for
        blocks: emphasis nests as deep as the text says); ``text``: where a heading's text
        is gathered (:func:`inline_text`), None where it is not. An image's description
        is not part of it."""
        cm, out = self.cm, self.out
        first_child, next_node, parent, node_type = cm.first_child, cm.next, cm.parent, cm.type
        text_kind, code_kind, image = self.text, self.code, self.image
        collect = text is not None
        outer: list[bool] = []  # ``collect`` of each enclosing node
        node = first_child(block)
        while node:
            kind = node_type(node)
            if kind in (text_kind, code_kind):
                if collect and text is not None:
                    piece = inline_text(cm, node, kind)
                    if piece:
                        text.append(piece)
            else:
                if kind == self.html_inline:
                    out.append(Token("html_inline", -1, where, _str(cm.literal(node))))
                elif kind == self.link:
                    out.append(Token("link", -1, where, _str(cm.url(node))))
                elif kind == image:
                    out.append(Token("image", -1, where, _str(cm.url(node))))
                child = first_child(node)
                if child:
                    outer.append(collect)
                    collect = collect and kind != image
                    node = child
                    continue
            while True:
                following = next_node(node)
                if following:
                    node = following
                    break
                if not outer:
                    return
                collect = outer.pop()
                node = parent(node)


def walk(cm: Cmark, parent: int) -> Iterator[int]:
    """The nodes below ``parent``, depth first."""
    node = cm.first_child(parent)
    while node:
        yield node
        yield from walk(cm, node)
        node = cm.next(node)


def inline_text(cm: Cmark, node: int, kind: int) -> str:
    """A text or code node's share of a heading's text as its number is read: the text
    and code spans outside images, not what escapes or entities make (a text node
    holding one is longer in the source than in the tree, and counts for nothing). The
    writer writes a turn's number plainly; one spelt otherwise is refused even where a
    renderer shows it."""
    raw = cm.literal(node) or b""
    if kind == cm.types["text"] and cm.end_column(node) - cm.start_column(node) + 1 != len(raw):
        return ""
    return raw.decode("utf-8", "replace")


@functools.lru_cache(maxsize=1)
def parser() -> Cmark:
    """The checker's parser, bound once per process."""
    return Cmark()


def heading_tokens(text: str) -> list[Token]:
    """The records the parser makes of the ATX heading on the first line of ``text``. Made
    from the line (:func:`atx`) where its text holds no ``<`` or ``[`` (nothing an inline
    check reads: ``text`` is then left unset, read by :func:`heading_text` if needed), else
    given to the parser alone: at a cut, or where a sentinel stood, the heading opens and
    closes on its line in a clean state, as the whole document's parser reads it."""
    end = text.find("\n")
    line = text if end < 0 else text[:end]
    level, content = atx(line)
    if "<" not in content and "[" not in content:
        return [Token("heading", 0, (0, 1), content, level)]
    tokens = parser().parse(line)
    for tok in tokens[:1]:
        tok.alone = True
    return tokens


def heading_text(content: str) -> str:
    """The text of a heading whose raw text is ``content``, as the parser's record of it
    holds it. A closing sequence after it keeps a ``#`` that ends it from being read as
    one."""
    tokens = parser().parse("# " + content + " #")
    return (tokens[0].text or "") if tokens and tokens[0].type == "heading" else ""


# What could be a link reference definition: a line starting, after what could be
# container markers and indentation, with a label (no unescaped bracket inside, at most
# 999 characters) and a colon. A definition the parser reads always matches.
_DEFINITION = re.compile(r"^[ \t>*+\-0-9.)]*\[(?:[^\[\]\\]|\\[\s\S]){0,999}\]:", re.MULTILINE)


def may_define(text: str) -> bool:
    """Whether ``text`` could hold a link reference definition (the parser's tree keeps
    no trace of one)."""
    return "]:" in text and _DEFINITION.search(text) is not None


# What cmark strips from the end of a heading's line (a line end is not in it).
_TRAIL = " \t"
_HASHES = re.compile(r"#{1,6}(?=[ \t]|$)")


def atx(line: str) -> tuple[int, str]:
    """Level and raw text of the ATX heading ``line``: cmark's heading rule step by step
    (the marker, the spaces and tabs after it, the closing run of ``#`` and white space)."""
    if "\0" in line:
        line = line.replace("\0", "\ufffd")  # as the parser's normalisation does
    m = _HASHES.match(line)
    level = m.end() if m is not None else len(line) - len(line.lstrip("#"))
    pos = level
    while pos < len(line) and line[pos] in " \t":
        pos += 1
    # The closing sequence is chopped off the whole line, then the text starts after the
    # marker's white space (nothing is left where the chop reached into it).
    end = len(line.rstrip(_TRAIL))
    stripped = end
    while stripped > 0 and line[stripped - 1] == "#":
        stripped -= 1
    if stripped != end and stripped > 0 and line[stripped - 1] in " \t":
        end = len(line[:stripped].rstrip(_TRAIL))
    return level, line[pos:end] if end > pos else ""


def open_tail(tokens: list[Token], lines: int) -> bool:
    """Whether the last top-level block runs to the end of the section as a fence or an
    HTML block, which the next line (a heading) would continue in the whole document."""
    for tok in reversed(tokens):
        if tok.level == 0:
            return tok.map[1] >= lines and tok.type in ("fence", "html_block")
    return False


def elisions_hold(tokens: list[Token], fences: Any, sentinels: Any, skip: int = 0) -> bool:
    """Every fence whose content was left out (opening at a line in ``fences``) opens at
    the top level on its own line and closes on the next; every sentinel line, of a block
    or of a heading, starts a thematic break at the top level (see
    :mod:`.sections`). ``skip``: lines before the parsed text."""
    found_fences = set()
    breaks = set()
    for tok in tokens:
        if tok.level == 0:
            kind = tok.type
            if kind == "fence" and tok.map[1] == tok.map[0] + 2:
                found_fences.add(tok.map[0] + skip)
            elif kind == "hr":  # one line by its syntax (the parser's end line may be the next)
                breaks.add(tok.map[0] + skip)
    return found_fences.issuperset(fences) and breaks.issuperset(sentinels)
