"""Token and cost figures: a model call's ``metrics`` and a path's ``final_metrics``.

ATIF counts a call's prompt with its cached part inside it (``cached_tokens`` is a subset
of ``prompt_tokens``); pi counts input, cache reads and cache writes apart. So
``prompt_tokens`` = input + cache read + cache write, ``cached_tokens`` = cache read,
``completion_tokens`` = output (reasoning included). ``final_metrics`` sums every usage
along the path, as piconv's own totals do (``piconv inspect``): assistant messages,
summaries, a tool's own calls and usage records, including those a compaction folded away.
"""

from __future__ import annotations

from typing import Any

from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Entry,
    MessageBody,
    ToolResult,
    Usage,
    UsageRecord,
    total_tokens,
)

COST_DIGITS = 10
"""Costs are sums of floats: rounded as piconv's totals are, so equal sums print alike."""


def _count(value: object) -> int:
    return value if type(value) is int and value >= 0 else 0


def _cost(usage: Usage) -> float | None:
    """The call's cost as piconv's totals count it (:func:`piconv.call_cost`: the recorded
    total, else the sum of its parts); None when the call records none at all."""
    from piconv import call_cost

    cost = usage.cost
    if cost is None:
        return None
    parts = (cost.input, cost.output, cost.cache_read, cost.cache_write)
    if not isinstance(cost.total, (int, float)) and all(p is None for p in parts):
        return None
    return call_cost(cost.total, parts)


def step_metrics(usage: Usage) -> dict[str, Any]:
    """One model call's usage as ATIF metrics (pi's own split kept in ``extra``)."""
    read = _count(usage.cache_read_tokens)
    write = _count(usage.cache_write_tokens)
    metrics: dict[str, Any] = {
        "prompt_tokens": _count(usage.input_tokens) + read + write,
        "completion_tokens": _count(usage.output_tokens),
        "cached_tokens": read,
    }
    cost = _cost(usage)
    if cost is not None:
        metrics["cost_usd"] = cost
    extra: dict[str, Any] = {}
    if usage.cache_write_tokens is not None:
        extra["cache_write_tokens"] = usage.cache_write_tokens
    if usage.cache_write_1h_tokens is not None:
        extra["cache_write_1h_tokens"] = usage.cache_write_1h_tokens
    if usage.reasoning_tokens is not None:
        extra["reasoning_tokens"] = usage.reasoning_tokens
    if usage.total_tokens is not None:
        extra["total_tokens"] = usage.total_tokens
    if extra:
        metrics["extra"] = extra
    return metrics


def usage_of(entry: Entry) -> Usage | None:
    """The usage an entry records, where piconv's totals count one."""
    body = entry.body
    cls = type(body)
    if cls is MessageBody:
        message = body.message  # type: ignore[union-attr]
        if type(message) in (AssistantMessage, ToolResult):
            return message.usage  # type: ignore[union-attr]
        return None
    if cls in (Compaction, BranchSummary, UsageRecord):
        return body.usage  # type: ignore[union-attr]
    return None


def final_metrics(path: list[Entry], steps: int, hidden_calls: int) -> dict[str, Any]:
    """The totals of every usage along ``path``. ``total_steps`` counts the steps and the
    model calls a compaction folded away (``hidden_calls``), as the notes say."""
    prompt = completion = cached = tokens = 0
    cost = 0.0
    priced = False
    for entry in path:
        usage = usage_of(entry)
        if usage is None:
            continue
        read = _count(usage.cache_read_tokens)
        prompt += _count(usage.input_tokens) + read + _count(usage.cache_write_tokens)
        completion += _count(usage.output_tokens)
        cached += read
        tokens += total_tokens(usage)
        spent = _cost(usage)
        if spent is not None:
            cost += spent
            priced = True
    out: dict[str, Any] = {
        "total_prompt_tokens": prompt,
        "total_completion_tokens": completion,
        "total_cached_tokens": cached,
    }
    if priced:
        out["total_cost_usd"] = round(cost, COST_DIGITS)
    out["total_steps"] = steps + hidden_calls
    out["extra"] = {"total_tokens": tokens}
    return out
