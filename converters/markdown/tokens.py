"""The CommonMark parser the checker uses (markdown-it-py) and what it reads of its tokens.

Links are collected with markdown-it's own link validation switched off, so a
``javascript:`` target that a stricter renderer would drop still counts as a failure.
Inline parsing is switched off in the core chain: the checker runs it by hand only on
the inline tokens where it can find something (see :mod:`.body`).

A section that starts at a cut opens with an ATX heading in a clean parser state; its
tokens are made here (:func:`heading_tokens`) rather than parsed, and a test compares
them with the parser's.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any


@functools.lru_cache(maxsize=1)
def parser() -> Any:
    """The checker's parser, made once per process (markdown-it-py loads here)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    md.validateLink = lambda url: True  # see every link, even those markdown-it would drop
    md.disable("inline")
    return md


@functools.lru_cache(maxsize=1)
def trim_chars() -> str:
    """What markdown-it's heading rule strips from a heading's text."""
    from markdown_it.common.utils import MD_TRIM_CHARS

    return MD_TRIM_CHARS


class Token:
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


def heading_tokens(text: str) -> list[Any]:
    """The tokens markdown-it makes of an ATX heading on the first line of ``text``, as
    far as the checks read them."""
    level, content = atx(text)
    return [Token("heading_open", f"h{level}", 0), Token("inline", "", 1, content)]


def atx(text: str) -> tuple[int, str]:
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
    return pos, line[pos:maximum].strip(trim_chars())


def inline_text(children: list[Any]) -> str:
    """The text of inline tokens, as a heading's number is read from it."""
    return "".join(c.content for c in children if c.type in ("text", "code_inline"))


def walk(children: Any) -> Iterator[Any]:
    """Inline tokens and their children, depth first."""
    for child in children:
        yield child
        if child.children:
            yield from walk(child.children)


def open_tail(tokens: list[Any], lines: int) -> bool:
    """Whether the last top-level block runs to the end of the section as a fence or an
    HTML block, which the next line (a heading) would continue in the whole document."""
    for tok in reversed(tokens):
        if tok.level == 0 and tok.map is not None:
            return tok.map[1] >= lines and tok.type in ("fence", "html_block")
    return False


def elisions_hold(tokens: list[Any], fences: Any, sentinels: Any, skip: int = 0) -> bool:
    """Every fence whose content was left out (opening at a line in ``fences``) opens at
    the top level on its own line and closes on the next; every sentinel line, of a block
    or of a heading, is a thematic break of one line at the top level (see
    :mod:`.sections`). ``skip``: lines before the parsed text."""
    found_fences = set()
    breaks = set()
    for tok in tokens:
        if tok.level == 0 and tok.map:
            kind = tok.type
            if kind == "fence" and tok.map[1] == tok.map[0] + 2:
                found_fences.add(tok.map[0] + skip)
            elif kind == "hr" and tok.map[1] == tok.map[0] + 1:
                breaks.add(tok.map[0] + skip)
    return found_fences.issuperset(fences) and breaks.issuperset(sentinels)
