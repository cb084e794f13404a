"""What a session's entries spend: which entries a total counts (:func:`counted_usage`),
their sums (:func:`usage_totals`), each call's cost (:func:`call_cost`), and each counted
entry on its own (:class:`Spend`) for reports that break totals down.

The one definition of every turn, token and cost figure piconv shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Document,
    Entry,
    MessageBody,
    ModelChange,
    ToolResult,
    Usage,
    UsageRecord,
    UserMessage,
    total_tokens,
)


def _finite(value: Any) -> float | None:
    if type(value) in (int, float) and value == value and abs(value) != float("inf"):
        return float(value)
    return None


def call_cost(total: Any, parts: tuple[Any, ...] | None) -> float:
    """A call's cost from its cost object's ``total`` and its parts (input, output, cache
    read, cache write; None without a cost object): the total, else (a session written
    before pi recorded it) the sum of the parts, as pi's export adds them; 0 without
    either. Only finite numbers count."""
    if (type(total) is float or type(total) is int) and total == total and abs(total) != float("inf"):
        return float(total)
    return sum(_finite(part) or 0.0 for part in parts) if parts is not None else 0.0


def _spent(usage: Any) -> float:
    cost = usage.cost
    if cost is None:
        return 0.0
    return call_cost(cost.total, (cost.input, cost.output, cost.cache_read, cost.cache_write))


def _usage_of(body: Any) -> tuple[int, Usage | None]:
    """``(turns, usage)`` an entry's body adds to a total: a user message is a turn; an
    assistant message, a tool result, a compaction or branch summary and a usage record
    bring their call's usage (or None)."""
    if type(body) is MessageBody:
        message = body.message
        if type(message) is UserMessage:
            return 1, None
        if type(message) is AssistantMessage or type(message) is ToolResult:
            return 0, message.usage
        return 0, None
    if type(body) in (Compaction, BranchSummary, UsageRecord):
        return 0, body.usage
    return 0, None


def counted_usage(entries: Iterable[Entry]) -> Iterator[tuple[Entry, int, Usage | None]]:
    """The entries a total counts, each with what it adds: ``(entry, 1, None)`` for a user
    message (a turn); ``(entry, 0, usage)`` for an assistant message, a tool result, a
    compaction or branch summary, a usage record that carries its call's usage. Every
    total piconv shows of a session, of a branch or of any run of entries is a sum of
    these (:func:`usage_totals`)."""
    for entry in entries:
        turns, usage = _usage_of(entry.body)
        if turns:
            yield entry, 1, None
        elif usage is not None:
            yield entry, 0, usage


def counted(doc: Document) -> Iterator[tuple[Entry, int, int, float]]:
    """:func:`counted_usage` of every entry of ``doc``, each as ``(entry, turns, tokens,
    cost)``: a call's tokens by :func:`piconv.ir.total_tokens`, its cost as recorded."""
    for entry, turns, usage in counted_usage(doc.entries):
        if usage is None:
            yield entry, turns, 0, 0.0
        else:
            yield entry, 0, total_tokens(usage), _spent(usage)


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """What a run of entries adds up to (:func:`usage_totals`): ``turns`` (user
    messages), ``tokens`` (each call's :func:`piconv.ir.total_tokens`), ``cost`` (USD,
    rounded to 10 places), the four kinds of tokens as recorded (counts of zero or more),
    and ``calls``: how many usage records were counted."""

    turns: int = 0
    tokens: int = 0
    cost: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    calls: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "tokens": self.tokens,
            "cost": self.cost,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "calls": self.calls,
        }


def _kind(value: object) -> int:
    return value if type(value) is int and value >= 0 else 0


def usage_totals(entries: Iterable[Entry]) -> UsageTotals:
    """The turns, tokens and cost of ``entries``: a session's (``doc.entries``: what the
    index, the archive and ``piconv stats`` show of it), one branch's (``doc.path(leaf)``:
    what ``piconv diff`` shows of each side), or any part of one. The one definition of
    these sums: every figure piconv shows is computed here, over the entries
    :func:`counted_usage` counts."""
    turns = tokens = calls = 0
    cost = 0.0
    kinds = [0, 0, 0, 0]
    for _entry, turn, usage in counted_usage(entries):
        if usage is None:
            turns += turn
            continue
        calls += 1
        tokens += total_tokens(usage)
        cost += _spent(usage)
        kinds[0] += _kind(usage.input_tokens)
        kinds[1] += _kind(usage.output_tokens)
        kinds[2] += _kind(usage.cache_read_tokens)
        kinds[3] += _kind(usage.cache_write_tokens)
    return UsageTotals(turns, tokens, round(cost, 10), *kinds, calls)


def model_key(provider: Any, model: Any) -> str | None:
    """``provider/model`` as pi's ``/session`` names a model (either part may be missing)."""
    if type(provider) is str and provider:
        return f"{provider}/{model}" if type(model) is str and model else provider
    return model if type(model) is str and model else None


def models_used(entries: Iterable[Entry]) -> list[str]:
    """The models of ``entries`` (``provider/model``) in order of first use: those that
    answered (assistant messages) and those chosen (model changes), each named by
    :func:`model_key` (``""`` when neither its provider nor its id is a string that
    holds text)."""
    models: dict[str, None] = {}
    for entry in entries:
        body = entry.body
        if type(body) is MessageBody:
            message = body.message
            if type(message) is AssistantMessage and message.model is not None and message.model.model:
                models[model_key(message.model.provider, message.model.model) or ""] = None
        elif type(body) is ModelChange and body.model:
            models[model_key(body.provider, body.model) or ""] = None
    return list(models)


# --------------------------------------------------------------------------- usage, entry by entry


class Spend(NamedTuple):
    """One entry a total counts (:func:`counted`), with what it adds, for reports that
    break totals down by day, model or kind.

    - ``entry_id`` / ``timestamp``: the entry's id and time stamp (ISO 8601, UTC; None
      when it has none): a fork's copy keeps both (:func:`piconv.facts.lineage.entry_key`).
    - ``kind``: ``user`` (a turn), ``assistant``, ``tool`` (a tool result that reports
      usage), ``compaction``, ``branch_summary`` or ``usage`` (a usage record: a cache
      warm-up, say).
    - ``model``: ``provider/model`` for an assistant message (its ``response_model`` when
      the provider named one, as pi's ``/session`` breaks cost down) and a usage record;
      None for the others, which pi's ``/session`` groups as "Tools/summaries".
    - ``turns``: 1 for a user message, else 0.
    - ``input``, ``output``, ``cache_read``, ``cache_write``: token counts (only counts of
      zero or more; anything else is 0).
    - ``tokens``: the call's total (:func:`piconv.ir.total_tokens`); ``cost``: what it cost.
    - ``calls``: 1; more where a source gives several calls of one minute, kind and model
      summed as one (an archive read for a report).
    """

    entry_id: str
    timestamp: str | None
    kind: str
    model: str | None
    turns: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    tokens: int
    cost: float
    calls: int = 1


def spend(entry_id: str, timestamp: Any, kind: str, model: str | None, usage: Usage) -> Spend:
    """The :class:`Spend` of an entry whose call reported ``usage``."""
    cost = usage.cost
    return call_spend(
        entry_id,
        timestamp,
        kind,
        model,
        (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens),
        usage.total_tokens,
        cost.total if cost is not None else None,
        (cost.input, cost.output, cost.cache_read, cost.cache_write) if cost is not None else None,
    )


def call_spend(
    entry_id: str,
    timestamp: Any,
    kind: str,
    model: str | None,
    counts: tuple[Any, Any, Any, Any],
    total: Any,
    cost_total: Any,
    cost_parts: tuple[Any, ...] | None,
) -> Spend:
    """The :class:`Spend` of one call from its values as the source gave them: ``counts``
    (input, output, cache read, cache write), its own ``total`` of tokens and its cost
    (:func:`call_cost`). Anything but a count of zero or more counts 0; the total is the
    call's own when it gave one, else the sum of the counts (:func:`piconv.ir.total_tokens`)."""
    i, o, r, w = counts
    i = i if type(i) is int and i >= 0 else 0
    o = o if type(o) is int and o >= 0 else 0
    r = r if type(r) is int and r >= 0 else 0
    w = w if type(w) is int and w >= 0 else 0
    return Spend(
        entry_id,
        timestamp if isinstance(timestamp, str) else None,
        kind,
        model,
        0,
        i,
        o,
        r,
        w,
        total if type(total) is int and total >= 0 else i + o + r + w,
        call_cost(cost_total, cost_parts),
    )


def turn(entry_id: str, timestamp: Any) -> Spend:
    """The :class:`Spend` of a user message: a turn, nothing spent."""
    return Spend(
        entry_id, timestamp if isinstance(timestamp, str) else None, "user", None, 1, 0, 0, 0, 0, 0, 0.0
    )


def spend_of(entry: Entry) -> Spend | None:
    """The :class:`Spend` of ``entry``, or None when a total does not count it
    (:func:`counted_usage`)."""
    turns, usage = _usage_of(entry.body)
    if turns:
        return turn(entry.id, entry.timestamp)
    if usage is None:
        return None
    body = entry.body
    model = None
    if type(body) is MessageBody:
        message = body.message
        if type(message) is AssistantMessage:
            kind = "assistant"
            ref = message.model
            if ref is not None:
                model = model_key(ref.provider, message.response_model or ref.model)
            elif message.response_model:
                model = message.response_model
        else:
            kind = "tool"
    elif type(body) is UsageRecord:
        kind = "usage"
        if body.model is not None:
            model = model_key(body.model.provider, body.model.model)
    else:
        kind = body.kind
    return spend(entry.id, entry.timestamp, kind, model, usage)
