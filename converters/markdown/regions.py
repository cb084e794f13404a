"""The blocks the checker can leave out of a section, and how far each reaches.

:class:`.sections.Splitter` proposes a region where one of our blocks starts (a prose
block after a blank line, a tool call with its result, a result block); the functions
here say where it ends, or 0 when it holds something a check reads or does not leave the
top level clean after the blank line that follows it.
"""

from __future__ import annotations

import re

_REGION_HEAD = re.compile(r"<details>\n<summary>[^<>\n]*</summary>\n\n")
_FENCE_LINE = re.compile(r"(`{3,}|~{3,})([^\n]*)\n")
_DETAILS_END = "</details>\n"
# A tool-call line that holds nothing the inline checks look at, and the blank line after it.
_CALL_LINE = re.compile(r"\*\*Tool call\*\* [^\n<\[]*\n\n")


class More(Exception):
    """The buffer ends before the question can be answered."""


PROSE_CHARS = 1 << 16
"""A block longer than this is left to the parser rather than waited for."""


def risky_lines(turn_level: int) -> re.Pattern[str]:
    """A line that could make a heading the checks count: an ATX heading at or above the
    turn level, or a setext underline (either possibly indented, as inside a list). Led
    by the newline before the line: search from the character before the first line."""
    return re.compile(rf"\n[ \t]*(?:#{{1,{turn_level}}}(?:[ \t]|$)|(?:=+|-+)[ \t]*$)", re.MULTILINE)


def prose_block(buf: str, p: int, limit: int, final: bool, risky: re.Pattern[str]) -> int:
    """The end of the block at ``p`` (its first line, at column 0, after a blank line)
    when it passes every check and leaves nothing open that the next line could
    continue; else 0. That end is the start of the blank line after it.

    Such a block holds no ``<`` (no HTML of any kind, no autolink) and no ``[`` (no link,
    image or link reference definition), no run of three backticks or tildes (no fence)
    and no line that :func:`risky_lines` finds (no heading the checks count, wherever the
    block's containers put it). What it parses into (paragraphs, lists, block quotes,
    code indented, headings below the turn level) is then read by no check. A blank
    line ends any paragraph or block quote in it; a list can go on after a blank line,
    but only with a line indented under it or a further item: so the line after the
    blank line must start at column 0 with something other than white space, which
    either starts another list item (at the same depth as a list that starts afresh)
    or closes the list. The sentinel that stands for the block shows that no fence or
    HTML block was open where it starts."""
    end = buf.find("\n\n", p, limit)
    if end < 0:
        if not final and limit - p < PROSE_CHARS:
            raise More
        return 0
    end += 1
    after = end + 1
    if after >= limit:
        if not final:
            raise More
    elif buf[after] in " \t\n":
        return 0
    find = buf.find
    if (
        find("<", p, end) >= 0
        or find("[", p, end) >= 0
        or find("```", p, end) >= 0
        or find("~~~", p, end) >= 0
    ):
        return 0
    if p == 0 or buf[p - 1] != "\n" or risky.search(buf, p - 1, end) is not None:
        return 0  # (a block is always after a blank line: the first test is a safeguard)
    return end


def closer(buf: str, pos: int, limit: int, char: str, length: int) -> tuple[int, int]:
    """Start and end of the first line from ``pos`` (a line start) that could close a
    fence of ``length`` ``char``s under any reading: the character repeated at least
    that often, with any white space around it; ``(-1, -1)`` when there is none before
    ``limit``. Found by the run of ``length`` characters any such line holds (a fast
    search: lines with shorter runs, as a longer fence's content has, are never looked at)."""
    run = char * max(3, length)
    i = buf.find(run, pos, limit)
    while i >= 0:
        start = buf.rfind("\n", pos, i) + 1 or pos
        end = buf.find("\n", i, limit)
        if end < 0:
            end = limit
        stripped = buf[start:end].strip()
        if len(stripped) >= length and stripped == char * len(stripped):
            return start, end
        i = buf.find(run, end, limit)
    return -1, -1


def fenced_block(buf: str, p: int, limit: int, final: bool, risky: re.Pattern[str]) -> int:
    """The end (after its newline) of the collapsed block at ``p`` when it is exactly
    ours and holds only fenced blocks, each closed by a line holding the fence and
    nothing else, and blocks :func:`prose_block` takes, each followed by a blank line,
    and a blank line (or the end) follows it; else 0. Such a block parses into an HTML
    block, fences, blocks no check reads and an HTML block, all at the top level,
    whatever comes before it, as long as its first line opens an HTML block there
    (which the checker verifies on the sentinel that replaces it)."""

    def need(end: int) -> None:
        if end > limit and not final:
            raise More

    m = _REGION_HEAD.match(buf, p, limit)
    if m is None:
        if buf.count("\n", p, limit) < 3:
            need(limit + 1)
        return 0
    q = m.end()
    while True:
        need(q + 1)
        f = _FENCE_LINE.match(buf, q, limit)
        if f is None:
            if buf.find("\n", q, limit) < 0:
                need(limit + 1)
                return 0
            end = prose_block(buf, q, limit, final, risky)
            if not end:
                return 0
            q = end + 1
        else:
            marker = f.group(1)
            if marker[0] == "`" and "`" in f.group(2):
                return 0
            line, end = closer(buf, f.end(), limit, marker[0], len(marker))
            if line < 0:
                need(limit + 1)
                return 0
            if buf[line:end] != marker[0] * (end - line):
                return 0  # a closing line with white space: left to the parser
            q = end + 1
            need(q + 1)
            if buf.startswith("\n", q, limit):
                q += 1
            else:
                return 0
        need(q + len(_DETAILS_END) + 1)
        if buf.startswith(_DETAILS_END, q, limit):
            end = q + len(_DETAILS_END)
            if end == len(buf) or buf.startswith("\n", end, limit):
                return end
            return 0


def call_block(buf: str, p: int, limit: int, final: bool, risky: re.Pattern[str]) -> int:
    """The end of the tool call at ``p`` (a line after a blank line) when it is exactly
    ours: its line holds no ``<`` or ``[``, then come fenced blocks, each closed by a
    line holding the fence and nothing else and followed by a blank line, then a result
    block as :func:`fenced_block` takes it; else 0.

    After a blank line such a call line starts a paragraph at the top level (nothing
    but a fence or an HTML block of kinds 1 to 5 could still be open there, and either
    would also swallow the sentinel that replaces the call, which the checker verifies
    to be an HTML block of its own); the paragraph is one line, which the inline checks
    skip (no ``<`` or ``[``), and the fences and the result block then parse as they do
    after a blank line anywhere. So the call passes every check, changes no count, and
    leaves the top level as it found it: one sentinel stands for all of it."""

    def need(end: int) -> None:
        if end > limit and not final:
            raise More

    m = _CALL_LINE.match(buf, p, limit)
    if m is None:
        end = buf.find("\n", p, limit)
        if end < 0 or end + 1 >= limit:
            need(limit + 1)  # the line after it is not there yet
        return 0
    q = m.end()
    while True:
        need(q + 4)
        f = _FENCE_LINE.match(buf, q, limit)
        if f is None:
            break
        marker = f.group(1)
        if marker[0] == "`" and "`" in f.group(2):
            return 0
        line, end = closer(buf, f.end(), limit, marker[0], len(marker))
        if line < 0:
            need(limit + 1)
            return 0
        if buf[line:end] != marker[0] * (end - line):
            return 0  # a closing line with white space: left to the parser
        q = end + 1
        need(q + 1)
        if not buf.startswith("\n", q, limit):
            return 0
        q += 1
    if not buf.startswith("<details>\n", q, limit):
        need(q + len("<details>\n") + 1)
        return 0
    return fenced_block(buf, q, limit, final, risky)
