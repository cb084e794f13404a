"""From a document to chat-completions request bodies: one per leaf or one for a leaf."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from piconv import Report
from piconv.ir import Document

from . import compat as compat_mod
from . import models
from .chat import build_request
from .llm import convert_to_llm


def resolve_target(options: Mapping[str, Any], report: Report) -> tuple[dict[str, Any], dict[str, Any]]:
    """(model, compat) for ``--target`` and ``--compat``."""
    model, known = models.resolve_target(options.get("target"))
    if not known:
        report.notes["openai_target"] = (
            f"{model['provider']}/{model['id']} is not in pi's model registry; OpenAI defaults used"
        )
    pairs = options.get("compat") or ()
    if isinstance(pairs, str):
        pairs = (pairs,)
    model = compat_mod.apply_overrides(model, list(pairs))
    return model, compat_mod.get_compat(model)


def request_for(
    document: Document, leaf_id: str | None, model: dict[str, Any], compat: dict[str, Any], report: Report
) -> dict[str, Any]:
    context = document.context(leaf_id)
    get = document.get

    def line_of(entry_id: str | None) -> int | None:
        entry = get(entry_id) if entry_id is not None else None
        return entry.origin.line if entry is not None else None

    llm = convert_to_llm(context, report, line_of)
    return build_request(llm, model, compat, report)


def requests(
    document: Document, options: Mapping[str, Any], report: Report
) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """``(leaf id, body)`` for the chosen leaf, or for every leaf with ``all_leaves``."""
    model, compat = resolve_target(options, report)
    if options.get("all_leaves"):
        for leaf in document.leaves():
            yield leaf.id, request_for(document, leaf.id, model, compat, report)
    else:
        leaf = options.get("leaf")
        yield leaf, request_for(document, leaf, model, compat, report)
