"""The built-in ``detail`` filter: how much of a session an output keeps.

``--detail LEVEL`` (``piconv.apply_filters(doc, [("detail", {"level": LEVEL})])``) leaves
content out of the document before any converter sees it, so what is left out is absent
from the output's bytes, not hidden by a page's script. Each level keeps less than the
one before it (docs/sharing.md):

- ``full``: everything (the default; the filter then changes nothing).
- ``calls``: the tool calls (what was run, read, written) without their output.
- ``conversation``: the prompts and the agent's replies: no tool calls, tool output,
  shell commands, reasoning or extension messages.
- ``prompts``: the user's prompts alone.

What a level leaves out is counted in the conversion's report under ``detail:<what>``
codes, and said in one sentence in :attr:`piconv.ir.Document.notes` for a format to show.
"""

from __future__ import annotations

LEVELS = ("full", "calls", "conversation", "prompts")
"""The levels, from most kept to least."""

__all__ = ["LEVELS"]
