"""One ATIF document: the trajectory of the path to one leaf.

Root members: ``schema_version`` (ATIF-v1.8), ``session_id`` (the session's id),
``trajectory_id`` (the leaf's entry id), ``agent`` (``pi``, the session format's version,
the default model, the tools declared to the model), ``steps`` (:mod:`.steps`), ``notes``
(what the steps leave out), ``final_metrics`` (:mod:`.metrics`) and ``extra`` (the
session's working directory and name, labels, which branch was continued). Mapping:
docs/formats/atif.md.
"""

from __future__ import annotations

from typing import Any

from piconv import Report
from piconv.converters.common.system import declared_tools
from piconv.ir import (
    AssistantMessage,
    Document,
    ExtensionState,
    MessageBody,
    SystemMessage,
    ToolSpec,
    UnknownBody,
    UsageRecord,
)

from . import losses
from .branches import Forks
from .content import Media
from .metrics import final_metrics, step_metrics
from .steps import StepBuilder

SCHEMA_VERSION = "ATIF-v1.8"
AGENT_NAME = "pi"

JSONDict = dict[str, Any]

WRITTEN_BY = "piconv"
"""The trajectory's ``extra.written_by``: what lets a later run know a file as its own
(``writer._owned_by``) and leave another tool's trajectory of the session alone."""

EMPTY_STEP: JSONDict = {"step_id": 1, "source": "system", "message": "", "extra": {"empty_context": True}}
"""The one step of a trajectory whose context holds no message."""


def agent_version(doc: Document) -> str:
    """pi does not record its own version in a session; the session format's version is
    what is known (``session-v3``), as piconv's ASF names the harness."""
    version = doc.session.source_version
    return f"session-v{version}" if version else "unknown"


def tool_definition(spec: ToolSpec) -> JSONDict:
    """A declared tool in the OpenAI function-calling shape ATIF's agent lists."""
    function: JSONDict = {"name": spec.name or "", "description": spec.description or ""}
    if spec.parameters is not None:
        function["parameters"] = spec.parameters
    return {"type": "function", "function": function}


def build(doc: Document, leaf_id: str, forks: Forks, media: Media, report: Report) -> JSONDict:
    """The trajectory of the path to ``leaf_id`` as a JSON value (not yet validated)."""
    context = doc.context(leaf_id)
    path = doc.path(leaf_id)
    first_model = next(
        (
            cm.message.model
            for cm in context.messages
            if type(cm.message) is AssistantMessage and cm.message.model is not None
        ),
        context.model,
    )
    provider = first_model.provider if first_model is not None else None
    steps = StepBuilder(context, path, doc.get, media, report, provider).build()
    if not steps:
        # nothing the model saw (an entry the IR does not know at the root): ATIF wants a
        # step, so one empty system step says so
        steps = [EMPTY_STEP]

    in_context = {cm.entry_id for cm in context.messages if cm.entry_id is not None}
    folded = [
        e
        for e in path
        if type(e.body) is MessageBody
        and e.id not in in_context
        and type(e.body.message) is not SystemMessage
    ]
    hidden_calls = sum(1 for e in folded if type(e.message) is AssistantMessage)
    if folded:
        report.add(losses.FOLDED, folded[0].origin.line, f"{len(folded)} messages")
    records: list[JSONDict] = []
    for entry in path:
        body = entry.body
        if type(body) in (ExtensionState, UnknownBody):
            report.add(losses.ENTRY_NOT_STEP, entry.origin.line, entry.kind)
        elif type(body) is UsageRecord and body.usage is not None:
            # model usage that is no message (a cache refresh): counted in the totals
            report.add(losses.USAGE_OUTSIDE_STEPS, entry.origin.line, body.usage_kind)
            record: JSONDict = {"entry_id": entry.id}
            if body.usage_kind is not None:
                record["kind"] = body.usage_kind
            record["usage"] = step_metrics(body.usage)
            records.append(record)

    agent: JSONDict = {"name": AGENT_NAME, "version": agent_version(doc)}
    if first_model is not None and first_model.model:
        agent["model_name"] = first_model.model
    systems = [cm.message for cm in context.messages if type(cm.message) is SystemMessage]
    tools = declared_tools(systems)  # type: ignore[arg-type]
    if tools:
        agent["tool_definitions"] = [tool_definition(t) for t in tools]
    if first_model is not None and first_model.provider:
        agent["extra"] = {"provider": first_model.provider}

    preferred_over, abandoned_at, preferred = forks.marks(leaf_id)
    current = leaf_id == doc.leaf_id
    extra: JSONDict = {
        "written_by": WRITTEN_BY,
        "leaf_id": leaf_id,
        "current": current,
        "preferred": preferred,
    }
    session = doc.session
    if session.cwd is not None:
        extra["cwd"] = session.cwd
    if session.parent_session is not None:
        extra["parent_session"] = session.parent_session
    name = doc.session_name()
    if name is not None:
        extra["name"] = name
    labels = doc.labels(leaf_id)
    if labels:
        extra["labels"] = labels
    if preferred_over:
        extra["preferred_over"] = preferred_over
    if abandoned_at is not None:
        extra["abandoned_at"] = abandoned_at
    if records:
        extra["usage_records"] = records

    out: JSONDict = {"schema_version": SCHEMA_VERSION}
    if session.id is not None:
        out["session_id"] = session.id
    out["trajectory_id"] = leaf_id
    out["agent"] = agent
    out["steps"] = steps
    if hidden_calls:
        out["notes"] = (
            "The steps are the model's context at the leaf: they leave out "
            f"{hidden_calls} model call(s) of the path no longer in it (folded into a compaction "
            "summary, or removed by a context edit); total_steps counts them and final_metrics "
            "totals the whole path."
        )
    out["final_metrics"] = final_metrics(path, len(steps), hidden_calls)
    out["extra"] = extra
    return out
