"""What ``piconv diff`` finds: the part two conversations share, each side's own part, and
their turns side by side (:class:`SessionDiff`).

Plain frozen records holding text and numbers only: the text renderer
(:mod:`.text`), ``--json`` (:meth:`SessionDiff.to_json`) and the formats' diff pages
(``Converter.diff``) all draw the same record. Every string in it comes from a session:
a page escapes it for its language.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..facts.spending import UsageTotals


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call: the tool's ``name``, what it was aimed at (``target``: a path, a
    command, cut to one line), and whether its result was an error."""

    name: str
    target: str
    error: bool

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "target": self.target, "error": self.error}


@dataclass(frozen=True, slots=True)
class FileTouch:
    """A file named by a tool call or a shell command: ``read`` (read, listed, searched),
    ``written`` (written, edited, moved, removed, a redirection's target); neither when
    the tool is not one piconv knows (it took the path as an argument)."""

    path: str
    read: bool
    written: bool

    @property
    def how(self) -> str:
        """``read``, ``written``, ``read, written`` or ``used``."""
        said = [w for w, on in (("read", self.read), ("written", self.written)) if on]
        return ", ".join(said) or "used"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "read": self.read, "written": self.written}


@dataclass(frozen=True, slots=True)
class Figures:
    """What a run of entries (the common part, a side's own part, a side's whole path)
    holds: ``entries``; ``usage`` (turns, tokens and cost, counted by
    :func:`piconv.facts.spending.usage_totals`, the sums ``piconv stats``, the index and the
    archive show); ``tool_calls`` by tool, most used first; ``errors`` (tool results
    marked as errors, replies that ended in an error); ``started`` / ``ended`` (its first
    and last time stamps, labels aside) and ``seconds`` between them (None without two
    time stamps); ``models`` (``provider/model``, in order of first use); ``files``
    touched, by path."""

    entries: int
    usage: UsageTotals
    tool_calls: tuple[tuple[str, int], ...]
    errors: int
    started: str | None
    ended: str | None
    seconds: float | None
    models: tuple[str, ...]
    files: tuple[FileTouch, ...]

    @property
    def turns(self) -> int:
        return self.usage.turns

    @property
    def tokens(self) -> int:
        return self.usage.tokens

    @property
    def cost(self) -> float:
        return self.usage.cost

    @property
    def calls(self) -> int:
        """Tool calls, every tool together."""
        return sum(n for _name, n in self.tool_calls)

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            **self.usage.to_json(),
            "tool_calls": dict(self.tool_calls),
            "errors": self.errors,
            "started": self.started,
            "ended": self.ended,
            "seconds": self.seconds,
            "models": list(self.models),
            "files": [f.to_json() for f in self.files],
        }


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a side's own part: a prompt and what followed it up to the next.
    ``number`` counts the turns of the side's whole path (1 is its first prompt);
    ``prompt`` is what the person typed, one line (``""`` for the rest of a turn begun in
    the common part: the sides parted on the reply); ``reply`` the last text the model
    gave in the turn, one line."""

    number: int
    entry_id: str | None
    prompt: str
    tools: tuple[ToolUse, ...]
    errors: int
    reply: str
    models: tuple[str, ...]
    usage: UsageTotals
    seconds: float | None

    @property
    def continued(self) -> bool:
        """The turn began in the common part (no prompt of its own)."""
        return self.entry_id is None

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "entry": self.entry_id,
            "prompt": self.prompt,
            "tools": [t.to_json() for t in self.tools],
            "errors": self.errors,
            "reply": self.reply,
            "models": list(self.models),
            "tokens": self.usage.tokens,
            "cost": self.usage.cost,
            "seconds": self.seconds,
        }


DIFFERENCES = ("prompt", "tools", "errors", "reply", "models")
"""What a pair of turns is compared on, in the order it is said."""


@dataclass(frozen=True, slots=True)
class TurnPair:
    """Two turns aligned (``a`` or ``b`` None: a turn on one side only) and what differs
    between them (:data:`DIFFERENCES`; empty: the same)."""

    a: Turn | None
    b: Turn | None
    differs: tuple[str, ...]

    @property
    def mark(self) -> str:
        """``=`` the same, ``~`` differs, ``<`` only in A, ``>`` only in B."""
        if self.b is None:
            return "<"
        if self.a is None:
            return ">"
        return "~" if self.differs else "="

    def to_json(self) -> dict[str, Any]:
        return {
            "mark": self.mark,
            "differs": list(self.differs),
            "a": self.a.to_json() if self.a is not None else None,
            "b": self.b.to_json() if self.b is not None else None,
        }


@dataclass(frozen=True, slots=True)
class Side:
    """One side: the session it is in (``source``, ``session_id``, ``session_name``),
    the leaf it ends at (``leaf_id``, the label in force on it, what was asked for),
    ``path``: the figures of its whole path (root to leaf), ``own``: of what it holds
    after the common part, ``first_prompt``: the first prompt of its own part, and its
    own ``turns``."""

    name: str
    source: str | None
    session_id: str | None
    session_name: str | None
    leaf_id: str | None
    leaf_label: str | None
    asked: str | None
    path: Figures
    own: Figures
    first_prompt: str | None
    turns: tuple[Turn, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "session": self.session_id,
            "name": self.session_name,
            "leaf": self.leaf_id,
            "label": self.leaf_label,
            "asked": self.asked,
            "first_prompt": self.first_prompt,
            "path": self.path.to_json(),
            "own": self.own.to_json(),
            "turns": [t.to_json() for t in self.turns],
        }


KINDS = ("branches", "fork", "sessions")
"""``branches``: two leaves of one session; ``fork``: two sessions, one forked from the
other (its header names the other's file); ``sessions``: any two sessions."""


@dataclass(frozen=True, slots=True)
class SessionDiff:
    """Two conversations compared.

    - ``kind``: one of :data:`KINDS`.
    - ``a`` / ``b``: the two :class:`Side` s.
    - ``common``: the figures of the part both hold (in A's file), the root down to
      ``common_ancestor`` (its last entry, or None when they share nothing). Between two
      sessions, the entries compared are the same when their id, time stamp and content
      are (a fork's copies of its parent's); labels, which pi's ``/fork`` drops, are
      passed over.
    - ``shared_prompt``: the last prompt of the common part: the one both sides answered
      when they part on the reply (the first turn of a side is then ``continued``).
    - ``pairs``: the sides' own turns aligned, prompt by prompt.
    - ``notes``: what the reader should know (a leaf chosen for them, a fork's link).
    """

    kind: str
    a: Side
    b: Side
    common: Figures
    common_ancestor: str | None
    shared_prompt: str | None
    pairs: tuple[TurnPair, ...]
    notes: tuple[str, ...]

    @property
    def parted(self) -> bool:
        """Whether the sides hold anything the other does not."""
        return bool(self.a.own.entries or self.b.own.entries)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "common": {
                "ancestor": self.common_ancestor,
                "last_prompt": self.shared_prompt,
                **self.common.to_json(),
            },
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "pairs": [p.to_json() for p in self.pairs],
            "notes": list(self.notes),
        }
