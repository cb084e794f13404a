"""``piconv diff --to markdown``: two conversations side by side, in GFM tables.

Every string of the diff comes from a session or a file name: it goes through
:func:`.escape.inline` (one line, every character with a meaning inside a line, a
table's ``|`` among them, backslash-escaped) or :func:`.escape.code_span`, the Markdown
format's escapes for text inside a line, so it can neither end a cell nor make markup,
a link or raw HTML.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from piconv.converters.common.figures import money, plural

from .escape import code_span, inline

NONE = "\u2013"
"""An empty cell's dash."""

if TYPE_CHECKING:
    from piconv import SessionDiff

# The parts of a SessionDiff are read by their attributes (docs/diff.md).
Side: TypeAlias = Any
Figures: TypeAlias = Any
Turn: TypeAlias = Any
TurnPair: TypeAlias = Any

TITLES = {
    "branches": "two branches of one session",
    "fork": "a fork and the session it came from",
    "sessions": "two sessions",
}
CELL_CHARS = 600
"""A table cell holds at most this many characters of session text (a prompt, a reply)."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def render(diff: SessionDiff) -> bytes:
    text = page(diff)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate is no character: U+FFFD, as in transcripts
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _time(seconds: float | None) -> str:
    return NONE if seconds is None else f"{seconds:,.3f} s"


def _where(side: Side) -> str:
    name = os.path.basename(side.source) if side.source else "(no file)"
    # in a table cell: no code span, whose "|" would still end the cell in GFM
    out = inline(name)
    if side.leaf_id:
        out += f" at {inline(side.leaf_id)}"
    if side.leaf_label:
        out += f" “{inline(side.leaf_label)}”"
    if side.session_name:
        out += f": {inline(side.session_name, CELL_CHARS)}"
    return out


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c or NONE for c in cells) + " |\n"


def _figures(parts: Sequence[Figures]) -> str:
    rows = [
        ("entries", [f"{p.entries:,}" for p in parts]),
        ("turns", [f"{p.turns:,}" for p in parts]),
        ("tool calls", [f"{p.calls:,}" for p in parts]),
        ("by tool", ["; ".join(f"{inline(n)} {c:,}" for n, c in p.tool_calls) for p in parts]),
        ("errors", [f"{p.errors:,}" for p in parts]),
        ("tokens", [f"{p.tokens:,}" for p in parts]),
        ("input / output", [f"{p.usage.input_tokens:,} / {p.usage.output_tokens:,}" for p in parts]),
        (
            "cache read / write",
            [f"{p.usage.cache_read_tokens:,} / {p.usage.cache_write_tokens:,}" for p in parts],
        ),
        ("cost", [money(p.cost) for p in parts]),
        ("wall time", [_time(p.seconds) for p in parts]),
        ("models", ["; ".join(inline(m) for m in p.models) for p in parts]),
        ("files", ["; ".join(f"{inline(f.path)} ({f.how})" for f in p.files) for p in parts]),
    ]
    out = [
        "| | common | A only | B only | A whole path | B whole path |\n",
        "| --- | --- | --- | --- | --- | --- |\n",
    ]
    out += [_row([label, *cells]) for label, cells in rows]
    return "".join(out)


def _parting(diff: SessionDiff) -> str:
    if not diff.parted:
        return "The sides do not part: neither holds anything after the common part.\n"
    cells = []
    for side in (diff.a, diff.b):
        first = side.turns[0] if side.turns else None
        if first is None:
            cells.append("(nothing after the common part)")
        elif first.continued:
            cells.append(f"the reply to: {inline(diff.shared_prompt or '(no prompt)', CELL_CHARS)}")
        else:
            cells.append(inline(first.prompt, CELL_CHARS) or "(an empty prompt)")
    return "| A | B |\n| --- | --- |\n" + _row(cells)


def _prompt(turn: Turn | None) -> str:
    if turn is None:
        return "(no turn here)"
    if turn.continued:
        return "(the rest of the turn begun in the common part)"
    return inline(turn.prompt, CELL_CHARS) or "(an empty prompt)"


def _tools(turn: Turn | None) -> str:
    if turn is None:
        return ""
    return "; ".join(
        f"{inline(t.name)}: {inline(t.target, 200)}{' (error)' if t.error else ''}" for t in turn.tools
    )


def _figure(turn: Turn | None) -> str:
    if turn is None:
        return ""
    errors = f"{plural(turn.errors, 'error')}, " if turn.errors else ""
    models = "; ".join(inline(m) for m in turn.models)
    return (
        f"turn {turn.number:,}: {errors}{turn.usage.tokens:,} tokens, {money(turn.usage.cost)}, "
        f"{_time(turn.seconds)}{'; ' + models if models else ''}"
    )


_SAID = {"=": "the same", "<": "only in A", ">": "only in B"}


def _pairs(pairs: Sequence[TurnPair]) -> str:
    if not pairs:
        return ""
    out = [
        "\n## Turn by turn after the common part\n\n",
        "Each turn of A beside the turn of B with the same prompt, or the next one.\n",
    ]
    for pair in pairs:
        number = (pair.a or pair.b).number
        said = f"differs ({', '.join(pair.differs)})" if pair.differs else _SAID.get(pair.mark, "")
        out.append(f"\n### Turn {number:,}: {said}\n\n| | A | B |\n| --- | --- | --- |\n")
        out.append(_row(["prompt", _prompt(pair.a), _prompt(pair.b)]))
        out.append(_row(["tools", _tools(pair.a), _tools(pair.b)]))
        out.append(
            _row(
                [
                    "reply",
                    inline(pair.a.reply, CELL_CHARS) if pair.a else "",
                    inline(pair.b.reply, CELL_CHARS) if pair.b else "",
                ]
            )
        )
        out.append(_row(["figures", _figure(pair.a), _figure(pair.b)]))
    return "".join(out)


def page(diff: SessionDiff) -> str:
    c = diff.common
    if diff.common_ancestor is None:
        common = "None: the sides share no entry.\n"
    else:
        last = (
            f" The last prompt both hold: {inline(diff.shared_prompt, CELL_CHARS)}"
            if diff.shared_prompt
            else ""
        )
        when = f" ({inline(c.ended)})" if c.ended else ""
        common = (
            f"{plural(c.entries, 'entry', 'entries')}, {plural(c.turns, 'turn')}, "
            f"up to {code_span(diff.common_ancestor)}{when}.{last}\n"
        )
    out = [f"# piconv diff: {TITLES.get(diff.kind, inline(diff.kind))}\n\n"]
    out += [f"{inline(note)}\n\n" for note in diff.notes]
    out += [
        "| | A | B |\n| --- | --- | --- |\n",
        _row(["session", _where(diff.a), _where(diff.b)]),
        f"\n## Common part\n\n{common}",
        f"\n## Where the sides part\n\n{_parting(diff)}",
        "\n## Figures\n\nEach side's own part is what it holds after the common part; its whole path runs "
        "from the root to its leaf. Tokens and cost are counted as `piconv stats` counts them.\n\n",
        _figures([c, diff.a.own, diff.b.own, diff.a.path, diff.b.path]),
        _pairs(diff.pairs),
    ]
    return "".join(out)
