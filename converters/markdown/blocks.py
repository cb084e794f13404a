"""The blocks the Markdown writer assembles: a block is a str, or, for a huge text, its
:class:`Pieces`, written one after the other and never joined (no copy of the text);
and the shapes every renderer uses (notes, collapsed details, fenced text)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

from piconv.ir import Content, Text

from . import escape as esc


class Pieces(list[str]):
    """A block given as pieces to write one after the other, never joined: a huge text
    goes out as it is, with no copy of it beside it (:func:`.writer.emit`)."""

    __slots__ = ()


Block = str | Pieces
"""A block of the output: a str, or a huge one in :class:`Pieces`."""

HUGE_TEXT_CHARS = 1 << 20
"""Message text longer than this (1 Mi characters) is written as a fenced code block,
not as Markdown: Markdown's block and inline parsers, the writer's and the checker's,
take time and memory far beyond the text's size on such a text."""


def parts(content: Content | None) -> tuple[Any, ...]:
    """Content as parts: a plain string is one text part (assistant content included,
    which pi's older files store as a string)."""
    if isinstance(content, str):
        return (Text(text=content),)
    if isinstance(content, (tuple, list)):
        return tuple(content)
    return ()


@overload
def collapsed(summary: str, body: str) -> str: ...
@overload
def collapsed(summary: str, body: Block) -> Block: ...
def collapsed(summary: str, body: Block) -> Block:
    """A collapsed block. ``summary`` must already be HTML-escaped; ``body`` is Markdown
    that leaves no container open (the blank line and ``</details>`` at column 0 close
    anything it opened)."""
    if type(body) is not str:
        # The same characters as below, the rule applied to the last piece (which ends
        # the text: white space to strip stays within it when it holds anything else).
        last = body[-1] if body else ""
        head = f"<details>\n<summary>{summary}</summary>\n\n"
        if len(last) > 1 and last[-1] == "\n" and not last[-2].isspace():
            return Pieces((head, *body, "\n</details>\n"))
        if last.rstrip():
            return Pieces((head, *body[:-1], last.rstrip(), "\n\n</details>\n"))
        body = "".join(body)  # (not a shape the writer makes in pieces)
    if len(body) > 1 and body[-1] == "\n" and not body[-2].isspace():
        # The usual body (a block ending in one newline): the same text as below,
        # without copying the body once more to strip that newline.
        return f"<details>\n<summary>{summary}</summary>\n\n{body}\n</details>\n"
    return f"<details>\n<summary>{summary}</summary>\n\n{body.rstrip()}\n\n</details>\n"


def note(text: str) -> str:
    return f"*{text}*\n"


def join_blocks(blocks: Sequence[Block], sep: str) -> Block:
    """``sep.join(blocks)``, in pieces when a block is."""
    if all(type(block) is str for block in blocks):
        return sep.join(blocks)  # type: ignore[arg-type]
    out = Pieces()
    for i, block in enumerate(blocks):
        if i:
            out.append(sep)
        if type(block) is str:
            out.append(block)
        else:
            out.extend(block)
    return out


def fenced_pieces(text: str, language: str) -> Block:
    """:func:`.escape.fenced`, in pieces for a text longer than :data:`HUGE_TEXT_CHARS`
    (the same characters)."""
    if len(text) <= HUGE_TEXT_CHARS:
        return esc.fenced(text, language)
    text = esc.normalize_newlines(text)
    fence = esc.fence_for(text)
    end = "" if text[-1] == "\n" else "\n"
    return Pieces((f"{fence}{language}\n", text, f"{end}{fence}\n"))
