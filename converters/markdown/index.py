"""The directory run's index page in Markdown: ``OUTDIR/index.md``, the same tables and
totals as the HTML index (see docs/bulk.md, "The index").

Every string from a session or a file name goes through :func:`.escape.inline`, the
Markdown format's escape for text inside a line: one line, every character with a
meaning inside a line (a table's ``|`` among them) backslash-escaped. Links are the
percent-encoded relative paths the run supplies, in angle brackets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from piconv.converters.common.listing import (
    activity,
    bar,
    lineage_text,
    models_text,
    readable_date,
    totals_line,
)

from .escape import inline

if TYPE_CHECKING:
    from piconv import ListedSession

HEADING = "# pi sessions\n"
"""What the page begins with (then a blank line), and what tells a file at its place as
piconv's."""


def owns(existing: bytes) -> bool:
    return existing.startswith(HEADING.encode() + b"\n")


def render(projects: Mapping[str, Sequence[ListedSession]], output_dir: str) -> bytes:
    """The page, as UTF-8. ``output_dir`` is not named on it."""
    text = page(projects)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (a "\ud800" escape in a session, a file name that is not
        # UTF-8) is no character: U+FFFD, as in the Markdown format's transcripts.
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _strip(days: list[tuple[str, int, int, float]]) -> list[str]:
    """The activity by day: sessions, tokens and cost each day, newest first, with a bar
    of the day's tokens against the busiest day's."""
    if not days:
        return []
    most = max(t for _d, _n, t, _c in days)
    out = [
        "\n## Activity by day\n\n",
        "| Day | Sessions | Tokens | Cost | |\n",
        "| --- | ---: | ---: | ---: | --- |\n",
    ]
    for day, sessions, tokens, cost in reversed(days):
        out.append(f"| {inline(day)} | {sessions} | {tokens:,} | ${cost:.4f} | {bar(tokens, most)} |\n")
    return out


def page(projects: Mapping[str, Sequence[ListedSession]]) -> str:
    everything = totals_line(r for rows in projects.values() for r in rows)
    out = [HEADING, "\n", f"{everything} in {len(projects):,} projects. Times are UTC.\n"]
    out += _strip(activity(r for rows in projects.values() for r in rows))
    for project, rows in projects.items():
        cwd = next((r.cwd for r in rows if r.cwd), None)
        out.append(f"\n## {inline(project)}\n\n")
        if cwd:
            out.append(f"`cwd`: {inline(cwd)}\n\n")
        out.append(f"{totals_line(rows)}\n\n")
        out.append("| Session | Created | Updated | Models | Turns | Tokens | Cost |\n")
        out.append("| --- | --- | --- | --- | ---: | ---: | ---: |\n")
        for r in rows:
            flag = " (last conversion failed)" if r.failed else ""
            came = lineage_text(r)
            came = f" — {inline(came)}" if came else ""
            indent = "↳ " * r.depth
            out.append(
                f"| {indent}[{inline(r.title)}](<{r.link}>){flag}{came} | {inline(readable_date(r.created))} | "
                f"{inline(readable_date(r.updated))} | "
                f"{inline(models_text(r))} | {r.turns} | {r.tokens:,} | ${r.cost:.4f} |\n"
            )
    return "".join(out)
