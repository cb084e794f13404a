"""``piconv diff``: two branches of a session, or two sessions, compared.

:mod:`.build` finds the common part and aligns the turns, :mod:`.parts` counts each part
(turns, tokens and cost through :func:`piconv.facts.spending.usage_totals`), :mod:`.files`
reads the files a part touched, :mod:`.model` holds the result, :mod:`.text` draws it for a
terminal; the formats draw it as a page (``Converter.diff``). The library's entry point
is :func:`piconv.diff`; see docs/diff.md.
"""

from __future__ import annotations

from .build import diff_documents, diff_leaves
from .model import Figures, FileTouch, SessionDiff, Side, ToolUse, Turn, TurnPair
from .text import render_text

__all__ = [
    "Figures",
    "FileTouch",
    "SessionDiff",
    "Side",
    "ToolUse",
    "Turn",
    "TurnPair",
    "diff_documents",
    "diff_leaves",
    "render_text",
]
