"""The whole Markdown document: front matter, title, then the path or the tree.

The front matter is computed from the entries that are rendered (the path to the leaf,
or every entry with ``--all-branches``), so its counts describe the document it heads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import reduce
from math import isfinite
from operator import add, attrgetter
from typing import IO, Any

from piconv import Report, UsageError, ValidationFailed, session_title
from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Document,
    Entry,
    ExtensionMessage,
    MessageBody,
    ModelChange,
    ReasoningLevelChange,
    ShellCommand,
    SummaryMessage,
    SystemMessage,
    ToolResult,
    Usage,
    UsageRecord,
    UserMessage,
    total_tokens,
)

from . import escape as esc
from . import frontmatter
from .blocks import Block, note
from .headings import head_title, short_time, when
from .images import Images
from .render import Renderer, Run
from .tree import Segment, branch_titles, segments

FLUSH_CHARS = 1 << 20
"""Blocks are joined and written in pieces of about this many characters."""
# The pieces emit joins are a little over FLUSH_CHARS: each is encoded whole, in one C call.
_WHOLE_CHARS = 4 * FLUSH_CHARS

_SURROGATE = re.compile("[\ud800-\udfff]")


def _counts() -> dict[str, int]:
    return {
        "user": 0,
        "assistant": 0,
        "tool_results": 0,
        "shell_commands": 0,
        "extension_messages": 0,
        "system": 0,
        "summaries": 0,
    }


_ROLE_KEYS = {
    UserMessage: "user",
    AssistantMessage: "assistant",
    ToolResult: "tool_results",
    ShellCommand: "shell_commands",
    ExtensionMessage: "extension_messages",
    SystemMessage: "system",
    SummaryMessage: "summaries",
}
_TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_COST_FIELDS = ("input", "output", "cache_read", "cache_write", "total")


def statistics(entries: Iterable[Entry]) -> dict[str, Any]:
    """Models, thinking levels, message counts and usage totals over ``entries``."""
    models: dict[str, None] = {}  # insertion-ordered set
    levels: dict[str, None] = {}
    counts = _counts()
    usages: list[Usage] = []  # summed at the end, in this order
    add_usage = usages.append
    role_keys = _ROLE_KEYS
    named: set[tuple[str | None, str]] = set()  # (provider, model) pairs in ``models`` already
    for entry in entries:
        body = entry.body
        msg = body.message if isinstance(body, MessageBody) else None
        if msg is not None:
            key = role_keys.get(type(msg))
            if key:
                counts[key] += 1
            if isinstance(msg, AssistantMessage):
                model = msg.model
                if model is not None and model.model:
                    pair = (model.provider, model.model)
                    if pair not in named:  # the name is joined once per pair, not per message
                        named.add(pair)
                        models["/".join(x for x in pair if x)] = None
                if msg.reasoning_level:
                    levels[msg.reasoning_level] = None
                if msg.usage is not None:
                    add_usage(msg.usage)
            elif isinstance(msg, ToolResult) and msg.usage is not None:
                add_usage(msg.usage)
        elif isinstance(body, ModelChange) and body.model:
            models["/".join(x for x in (body.provider, body.model) if x)] = None
        elif isinstance(body, ReasoningLevelChange) and body.level:
            levels[body.level] = None
        elif isinstance(body, (Compaction, BranchSummary)):
            counts["summaries"] += 1
            if body.usage is not None:
                add_usage(body.usage)
        elif isinstance(body, UsageRecord) and body.usage is not None:
            add_usage(body.usage)
    return {
        "models": list(models),
        "thinking_levels": list(levels),
        "messages": counts,
        "tokens": _token_totals(usages),
        "cost": _cost_totals(usages),
    }


_INT_OR_NONE = {int, type(None)}
_NUMBER_OR_NONE = {int, float, type(None)}


def _token_totals(usages: list[Usage]) -> dict[str, int]:
    """Each token field summed over ``usages`` (integers of zero or more only, a bool
    counting as ever: a negative count in a session is not added, so a total is a count)."""
    totals = {}
    for field in _TOKEN_FIELDS:
        column = list(map(attrgetter(field), usages))
        if set(map(type, column)) <= _INT_OR_NONE and min(filter(None, column), default=0) >= 0:
            total = sum(filter(None, column))  # the usual case, in C
        else:
            total = 0
            for v in column:
                if isinstance(v, int) and v >= 0:
                    total += v
        totals[field.removesuffix("_tokens")] = total
    # a call without totalTokens (older pi sessions) counts its parts, as pi's statistics do
    totals["total"] = sum(map(total_tokens, usages))
    return totals


def _cost_totals(usages: list[Usage]) -> dict[str, float]:
    """Each cost field summed over ``usages`` in their order (numbers only, not bools),
    rounded to 10 digits. The additions are the plain left-to-right ones (not ``sum``,
    which compensates rounding errors in newer Pythons): the same digits everywhere."""
    costs = [cost for u in usages if (cost := u.cost) is not None]
    totals = {}
    for field in _COST_FIELDS:
        column = list(map(attrgetter(field), costs))
        total = 0.0
        if set(map(type, column)) <= _NUMBER_OR_NONE:
            # The usual case, in C. Leaving zeros out changes no sum: a total that starts
            # at 0.0 is never -0.0.
            total = reduce(add, filter(None, column), 0.0)
        if not isfinite(total) or not set(map(type, column)) <= _NUMBER_OR_NONE:
            # a number beyond the double range (1e400 in a session) is not added either
            total = 0.0
            for v in column:
                if isinstance(v, (int, float)) and not isinstance(v, bool) and isfinite(v):
                    total += v
        totals[field] = round(total, 10)
    return totals


def title_of(doc: Document) -> str:
    """The session's name, else its first prompt (as the archive's index titles it), else its id."""
    return session_title(doc) or (f"Session {doc.session.id}" if doc.session.id else "pi session")


def write(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    leaf = options.get("leaf")
    all_branches = bool(options.get("all_branches"))
    if all_branches and leaf:
        raise UsageError("--all-branches writes every branch; it cannot be combined with --leaf")
    output_path = options.get("output_path")
    images = Images(
        str(options.get("images") or "files"),
        report,
        os.fspath(output_path) if output_path else None,
        doc.session.id,
    )
    if all_branches:
        rendered: list[Entry] = list(doc.entries)
        level = 3
    else:
        if leaf is not None and leaf not in doc:
            raise UsageError(f"--leaf {leaf!r}: no such entry", path=doc.session.source_path)
        rendered = doc.path(leaf)
        level = 2
        if len(rendered) < len(doc.entries):
            report.add("other-branches", count=len(doc.entries) - len(rendered))
    labels = doc.labels()
    renderer = Renderer(report, images, level, labels, output_left_out="detail:calls" in doc.notes)
    if all_branches:
        segs = segments(doc)
        runs = [renderer.plan(seg.entries) for seg in segs]
        turns = sum(run.turns for run in runs)
        titles = branch_titles(segs, labels)
        toc = _tree_contents(segs, runs, titles)
        body = _tree(doc, segs, runs, renderer, titles)
    else:
        run = renderer.plan(rendered)
        turns = run.turns
        toc = _contents(run.heads, 1)[0]
        body = renderer.batches(run)
    report.entries_written = len(rendered)
    fm_segments = len(segs) - (0 if segs[0].entries else 1) if all_branches else None

    head = _head(
        doc, rendered, turns, (leaf or doc.leaf_id) if not all_branches else doc.leaf_id, fm_segments
    )
    if toc:
        head += "\n" + toc
    if options.get("validate"):
        _write_checked(doc, out, report, head, body)
    else:
        emit(out, report, head, body)
    _same_turns(renderer, turns)


def _head(doc: Document, rendered: list[Entry], turns: int, leaf: str | None, segments: int | None) -> str:
    """The front matter and the title; ``segments``: their count in the tree layout
    (``None``: the path layout)."""
    info = doc.session
    fm: dict[str, Any] = {
        "title": title_of(doc),
        "session_id": info.id,
        "session_name": doc.session_name(),
        "cwd": info.cwd,
        "created": info.created,
        "parent_session": info.parent_session,
        "source_format": info.source_format or None,
        "source_version": info.source_version,
        "source_file": os.path.basename(info.source_path) if info.source_path else None,
        "leaf": leaf,
        "layout": "path" if segments is None else "tree",
        "turns": turns,
    }
    if segments is not None:
        fm["segments"] = segments
    fm.update(statistics(rendered))
    fm["generator"] = "piconv markdown"
    head = frontmatter.dump(fm) + "\n# " + esc.inline(title_of(doc), 200) + "\n"
    # What the filters left out (--detail), said before anything else.
    return head + "".join("\n" + note(esc.inline(text, 500)) for text in doc.notes.values())


def _same_turns(renderer: Renderer, turns: int) -> None:
    """The front matter, written first, counted the turns the renderer was to make."""
    if renderer.turns != turns:
        raise RuntimeError(f"markdown writer: {renderer.turns} turn headings written, {turns} announced")


def _write_checked(
    doc: Document, out: IO[bytes], report: Report, head: str, body: Iterable[list[Block]]
) -> None:
    """Writes and validates as it writes: the checker reads each piece as it goes out
    (:class:`.checker.Stream`), so the output is not read back and parsed again."""
    from .checker import SECTION_CHARS, Stream, check  # lazy: only validating needs it

    start = tell(out)
    kept: list[str] | None = None if start is not None else []
    stream = Stream(section=SECTION_CHARS)
    feed = stream.feed

    def sink(text: str) -> None:
        feed(text)
        if kept is not None:
            kept.append(text)

    emit(out, report, head, body, sink)
    problems = stream.close()
    if stream.incomplete:
        # Rare (a CR, or a link definition after text that could use it): the whole check.
        if kept is not None:
            data = "".join(kept).encode("utf-8")
        else:
            out.flush()
            out.seek(start)  # type: ignore[arg-type]
            data = out.read()
            out.seek(0, os.SEEK_END)
        problems = check(data)
    if problems:
        _failed(doc, problems)


def _failed(doc: Document, problems: list[str]) -> None:
    shown = "; ".join(problems[:5])
    raise ValidationFailed(
        f"markdown output failed validation ({len(problems)} problems): {shown}", path=doc.session.source_path
    )


def tell(out: IO[bytes]) -> int | None:
    """Where the output starts, if it can be read back from there."""
    try:
        return out.tell() if out.readable() and out.seekable() else None
    except (OSError, ValueError, AttributeError):
        return None


CONTENTS = "**Contents**\n"


def _contents(
    heads: list[Entry], first: int, indent: str = "", date: str | None = None
) -> tuple[str, str | None]:
    """The table of contents: one line per turn heading, numbered as the turns (from
    ``first``), linking to its anchor, with its time (the date where it changes from
    ``date``); and the date of its last line."""
    if not heads:
        return "", date
    lines = [CONTENTS, "\n"] if not indent else []
    for n, entry in enumerate(heads, first):
        title = head_title(entry)
        time = when(entry)
        if time:
            short, date = short_time(time, date)
            lines.append(f"{indent}{n}. [{title}](#turn-{n}) · {short}\n")
        else:
            lines.append(f"{indent}{n}. [{title}](#turn-{n})\n")
    return "".join(lines), date


def _tree_contents(segs: list[Segment], runs: list[Run], titles: dict[int, str]) -> str:
    """The table of contents of the tree layout: each segment, its turns below it."""
    lines = [CONTENTS, "\n"]
    first = 1
    date: str | None = None
    for seg, run in zip(segs, runs, strict=True):
        if seg is segs[0]:
            if not seg.entries:
                continue
            lines.append("- Shared history\n")
        else:
            lines.append(f"- Branch {seg.number}: {esc.inline(titles[id(seg)], 80)}\n")
        # A nested list under the item, its first number that of its first turn; after a
        # blank line (a list that does not start at 1 cannot interrupt a paragraph).
        nested, date = _contents(run.heads, first, "  ", date)
        if nested:
            lines.append("\n" + nested)
        first += run.turns
    return "".join(lines) if len(lines) > 2 else ""


def _tree(
    doc: Document, segs: list[Segment], runs: list[Run], renderer: Renderer, titles: dict[int, str]
) -> Iterator[list[Block]]:
    """The trunk once under "Shared history", then each branch under its own heading."""
    trunk = segs[0]
    last_turn: dict[int, str] = {}  # id of a segment -> the reference to its last turn
    for seg, run in zip(segs, runs, strict=True):
        if seg is trunk:
            if not seg.entries:
                continue
            head: list[Block] = ["## Shared history\n"]
            if len(segs) > 1:
                head.append(f"*The {len(segs) - 1} branches below continue from here.*\n")
        else:
            title = esc.inline(titles[id(seg)], 80)
            parent = seg.parent
            if parent is None or parent.last is None:
                origin = "Starts at its own root."
            else:
                # the parent is rendered by now; its reference was kept when it was
                ref = last_turn.get(id(parent), "the start")
                where = f" (branch {parent.number})" if parent.number else ""
                origin = f"Continues from {ref}{where}."
            mark = (
                " The session's current leaf is on this branch."
                if any(e.id == doc.leaf_id for e in seg.entries)
                else ""
            )
            head = [f"## Branch {seg.number}: {title}\n", note(origin + mark)]
        yield head
        yield from renderer.batches(run)
        ref = renderer.last_turn(reversed(seg.entries))
        parent_ref = last_turn.get(id(seg.parent), "the start") if seg.parent is not None else "the start"
        last_turn[id(seg)] = ref if ref != "the start" else parent_ref


def emit(
    out: IO[bytes],
    report: Report,
    head: str,
    body: Iterable[list[Block]],
    sink: Callable[[str], None] | None = None,
) -> None:
    """Joins ``head`` and the blocks of ``body`` with blank lines and writes UTF-8 in
    pieces of about :data:`FLUSH_CHARS`, as the blocks come. Lone surrogates (from
    ``\\ud800`` escapes in the session) cannot be encoded: they become U+FFFD and are
    counted. ``sink`` gets each piece of text as written."""
    pending: list[str] = [head]
    size = len(head)
    for blocks in body:
        for block in blocks:
            if type(block) is not str or len(block) >= FLUSH_CHARS:
                # A block this large is written by itself, not copied into a joined piece:
                # what is pending and the separator first, then the block (a piece at a
                # time when it comes in pieces).
                pending.append("")
                _write(out, report, "\n".join(pending), sink)
                for piece in (block,) if type(block) is str else block:
                    _write(out, report, piece, sink)
                pending, size = [""], 0
                continue
            pending.append(block)
            size += len(block)
        if size >= FLUSH_CHARS:
            _write(out, report, "\n".join(pending), sink)
            # The separator before the next block starts the next piece (no copy of this
            # one), and only if a block follows: the output ends with the last block.
            pending, size = [""], 0
    if len(pending) > 1 or pending[0]:
        _write(out, report, "\n".join(pending), sink)


def _write(out: IO[bytes], report: Report, text: str, sink: Callable[[str], None] | None = None) -> None:
    if len(text) <= _WHOLE_CHARS:
        try:
            out.write(text.encode("utf-8"))
        except UnicodeEncodeError:
            text = _replaced(report, text)
            out.write(text.encode("utf-8"))
    else:
        # A huge block is encoded a slice at a time: its bytes are never all in memory
        # beside the text. (Slices of a str encode independently.)
        clean = True
        for start in range(0, len(text), FLUSH_CHARS):
            piece = text[start : start + FLUSH_CHARS]
            try:
                data = piece.encode("utf-8")
            except UnicodeEncodeError:
                clean = False
                data = _SURROGATE.sub("\ufffd", piece).encode("utf-8")
            out.write(data)
            del data, piece
        if not clean:
            text = _replaced(report, text)
    if sink is not None:
        sink(text)  # the text itself: slices of it would be copies for the checker to hold


def _replaced(report: Report, text: str) -> str:
    """``text`` with its lone surrogates (which UTF-8 cannot encode) made U+FFFD, counted."""
    report.add("surrogates-replaced", count=len(_SURROGATE.findall(text)))
    return _SURROGATE.sub("\ufffd", text)
