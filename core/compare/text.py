"""``piconv diff`` as plain text that fits the terminal: the two sides, the common part,
where they part, a table of figures (common, A, B) and the turns side by side.

Every line is cut to the width asked for (a character East Asian scripts draw wide
counts two columns) and passes :func:`piconv.terminal.shown`, so nothing a session holds
can drive the terminal.
"""

from __future__ import annotations

import os
import textwrap
import unicodedata
from collections.abc import Sequence

from ..terminal import shown
from .model import Figures, SessionDiff, Side, Turn, TurnPair

MIN_WIDTH = 40
LABEL = 12
MAX_LINES = 8
"""A cell of the figures table lists at most this many tools, models or files."""


def width_of(text: str) -> int:
    n = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def cut(text: str, width: int) -> str:
    """``text`` (made safe for a terminal) in at most ``width`` columns, ``…`` where cut."""
    text = shown(text)
    if width_of(text) <= width:
        return text
    out, n = [], 0
    for ch in text:
        w = 0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        if n + w > width - 1:
            break
        out.append(ch)
        n += w
    return "".join(out) + "…"


def pad(text: str, width: int) -> str:
    text = cut(text, width)
    return text + " " * (width - width_of(text))


def plural(n: int, one: str, many: str = "") -> str:
    """``1 turn``, ``2 turns``, ``3 entries`` (``many`` given)."""
    return f"{n:,} {one}" if n == 1 else f"{n:,} {many or one + 's'}"


def _money(cost: float) -> str:
    return f"${cost:,.4f}"


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.3g} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


def _listed(items: Sequence[str]) -> list[str]:
    if len(items) <= MAX_LINES:
        return list(items) or ["-"]
    return [*items[: MAX_LINES - 1], f"… {len(items) - MAX_LINES + 1} more"]


def _cells(fig: Figures) -> list[list[str]]:
    calls = [f"{name} {n:,}" for name, n in fig.tool_calls]
    return [
        [f"{fig.entries:,}"],
        [f"{fig.turns:,}"],
        [f"{fig.calls:,}", *_listed(calls)[: MAX_LINES if calls else 0]],
        [f"{fig.errors:,}"],
        [f"{fig.tokens:,}"],
        [_money(fig.cost)],
        [_time(fig.seconds)],
        _listed(fig.models),
        _listed([f"{f.path} ({f.how})" for f in fig.files]),
    ]


ROWS = ("entries", "turns", "tool calls", "errors", "tokens", "cost", "wall time", "models", "files")


def _table(diff: SessionDiff, width: int) -> list[str]:
    col = max((width - LABEL) // 3 - 1, 8)
    columns = [_cells(diff.common), _cells(diff.a.own), _cells(diff.b.own)]
    lines = [pad("", LABEL) + " ".join(pad(h, col) for h in ("common", "A only", "B only")).rstrip()]
    for r, label in enumerate(ROWS):
        cells = [c[r] for c in columns]
        for k in range(max(len(c) for c in cells)):
            row = pad(label if k == 0 else "", LABEL)
            row += " ".join(pad(c[k] if k < len(c) else "", col) for c in cells)
            lines.append(row.rstrip())
    lines.append("")
    for side in (diff.a, diff.b):
        p = side.path
        lines.append(
            cut(
                f"{side.name}'s whole path: {plural(p.entries, 'entry', 'entries')}, {plural(p.turns, 'turn')}, "
                f"{plural(p.calls, 'tool call')}, {plural(p.errors, 'error')}, {plural(p.tokens, 'token')}, "
                f"{_money(p.cost)}, {_time(p.seconds)}",
                width,
            )
        )
    return lines


def _who(side: Side) -> str:
    where = os.path.basename(side.source) if side.source else "(stdin)"
    leaf = f"at {side.leaf_id}" if side.leaf_id else "(empty)"
    label = f' "{side.leaf_label}"' if side.leaf_label else ""
    return f"{side.name}: {where} {leaf}{label}"


def _head(diff: SessionDiff, width: int) -> list[str]:
    what = {
        "branches": "two branches of one session",
        "fork": "a fork and the session it came from",
        "sessions": "two sessions",
    }.get(diff.kind, diff.kind)
    lines = [f"piconv diff: {what}", _who(diff.a), _who(diff.b)]
    c = diff.common
    if diff.common_ancestor is None:
        lines.append("Common part: none (the sides share no entry)")
    else:
        lines.append(
            f"Common part: {plural(c.entries, 'entry', 'entries')}, {plural(c.turns, 'turn')}, "
            f"up to {diff.common_ancestor}" + (f" ({c.ended})" if c.ended else "")
        )
    if not diff.parted:
        lines.append("The sides do not part: neither holds anything after the common part.")
    else:
        lines.append("The sides part at:")
        for side in (diff.a, diff.b):
            first = side.turns[0] if side.turns else None
            if first is None:
                said = "(nothing after the common part)"
            elif first.continued:
                said = f"the reply to: {diff.shared_prompt or '(no prompt)'}"
            else:
                said = first.prompt or "(an empty prompt)"
            lines.append(f"  {side.name}: {said}")
    return [cut(line, width) for line in lines]


def _turn_lines(turn: Turn | None, width: int) -> list[str]:
    if turn is None:
        return [pad("", width)]
    head = f"{turn.number}. " + (turn.prompt if not turn.continued else "(continues the turn)")
    lines = [head]
    for tool in turn.tools[:MAX_LINES]:
        lines.append(f"  {'!' if tool.error else '·'} {tool.name} {tool.target}")
    if len(turn.tools) > MAX_LINES:
        lines.append(f"  … {len(turn.tools) - MAX_LINES} more tool calls")
    if turn.reply:
        lines.append(f"  → {turn.reply}")
    lines.append(f"  {turn.usage.tokens:,} tokens, {_money(turn.usage.cost)}, {_time(turn.seconds)}")
    return [pad(line, width) for line in lines]


def _pairs(pairs: Sequence[TurnPair], width: int) -> list[str]:
    if not pairs:
        return []
    col = max((width - 5) // 2, 10)
    lines = ["Turn by turn after the common part (= same, ~ differs, < only in A, > only in B):"]
    lines.append(f"  {pad('A', col)} │ B")
    for pair in pairs:
        left, right = _turn_lines(pair.a, col), _turn_lines(pair.b, col)
        for k in range(max(len(left), len(right))):
            mark = pair.mark if k == 0 else " "
            a = left[k] if k < len(left) else pad("", col)
            b = right[k] if k < len(right) else ""
            lines.append(f"{mark} {a} │ {b}".rstrip())
        if pair.differs:
            lines.append(f"  differs: {', '.join(pair.differs)}")
    return lines


def render_text(diff: SessionDiff, width: int = 100) -> str:
    """``diff`` as text, every line at most ``width`` columns (at least 40)."""
    width = max(width, MIN_WIDTH)
    lines = [*_head(diff, width), "", *_table(diff, width), ""]
    pairs = _pairs(diff.pairs, width)
    if pairs:
        lines += [*pairs, ""]
    for note in diff.notes:  # wrapped, not cut: a note says what to type
        lines += textwrap.wrap(f"Note: {note}", width, subsequent_indent="  ", break_on_hyphens=False)
    return "\n".join(cut(line, width).rstrip() for line in lines).rstrip("\n") + "\n"
