"""The steps of one trajectory: what the model saw at a leaf (``Document.context``), in
order, as ATIF steps.

- a system message → a ``system`` step (its prompt text; tool changes in ``extra``);
- a user message, an extension's message, a shell command the model saw → a ``user``
  step (a shell command as pi words it for the model);
- an assistant message → an ``agent`` step: its text, reasoning, tool calls and metrics,
  and, as ``observation``, the results of its tool calls (``source_call_id``);
- a compaction or branch summary → a ``system`` step marked ``is_copied_context``, as
  are the messages a compaction kept from before it.

The rules and what is lost: docs/formats/atif.md.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from piconv import Report
from piconv.converters.common.shell import shell_command_text
from piconv.converters.common.system import system_text
from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Context,
    Entry,
    ExtensionMessage,
    Image,
    Reasoning,
    ShellCommand,
    SummaryMessage,
    SystemMessage,
    Text,
    ToolCall,
    ToolResult,
    UnknownMessage,
    UserMessage,
)

from . import losses
from .content import Media, message, other_part
from .metrics import step_metrics

NO_RESULT_TEXT = "No result provided"
"""What pi-ai sends the model for a tool call left without a result."""

EFFORT = {"off": "none"}
"""pi's reasoning level ``off`` as a reasoning effort (the word OpenAI's API uses, and ASF)."""

JSONDict = dict[str, Any]


def iso_time(entry: Entry | None, message_ms: float | None, report: Report) -> str | None:
    """When a step happened: the entry's time stamp, else the message's (milliseconds
    since the epoch), as ISO 8601; None (and a loss) for one Python cannot read."""
    stamp = entry.timestamp if entry is not None else None
    if isinstance(stamp, str):
        try:
            datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            report.add(losses.TIMESTAMP, entry.origin.line if entry else None, stamp[:80])
        else:
            return stamp
    if isinstance(message_ms, (int, float)) and message_ms == message_ms:
        try:
            moment = datetime.fromtimestamp(message_ms / 1000, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return None


class StepBuilder:
    """Builds the steps of the context at one leaf."""

    def __init__(
        self,
        context: Context,
        path: list[Entry],
        get: Any,
        media: Media,
        report: Report,
        default_provider: str | None = None,
    ) -> None:
        """``get`` looks an entry up by id; ``default_provider`` is the agent's (a step
        names its provider only when it is another)."""
        self.context = context
        self.get = get
        self.media = media
        self.report = report
        self.steps: list[JSONDict] = []
        self.call_step: dict[str, int] = {}  # call id -> index of the step that made it
        self.answered: set[tuple[int, str]] = set()
        self.position = {entry.id: n for n, entry in enumerate(path)}
        self.levels = _levels_along(path)
        # The messages a compaction kept come from entries before it on the path: copied
        # context, as the summary itself is (agentsession marks them alike).
        self.boundary = max(
            (
                self.position.get(cm.entry_id, -1)
                for cm in context.messages
                if cm.entry_id is not None and _is_compaction(self.get(cm.entry_id))
            ),
            default=-1,
        )
        self.default_provider = default_provider

    def build(self) -> list[JSONDict]:
        for cm in self.context.messages:
            entry = self.get(cm.entry_id) if cm.entry_id is not None else None
            self.add_message(cm.message, entry)
        self._unanswered()
        return [_ordered(step) for step in self.steps]

    # ---------------------------------------------------------------- one message

    def add_message(self, m: Any, entry: Entry | None) -> None:
        line = entry.origin.line if entry is not None else None
        cls = type(m)
        if cls is AssistantMessage:
            self._agent(m, entry, line)
        elif cls is ToolResult:
            self._tool_result(m, entry, line)
        elif cls is UserMessage:
            self._add("user", message(m.content, self.media, line, self.report), entry, m.timestamp)
        elif cls is SystemMessage:
            self._system(m, entry)
        elif cls is SummaryMessage:
            self._summary(m, entry)
        elif cls is ShellCommand:
            if m.exclude_from_context:
                self.report.add(losses.HIDDEN_SHELL, line)
                return
            extra: JSONDict = {
                "shell_command": _fields(m, ("command", "exit_code", "cancelled", "truncated"))
            }
            self._add("user", shell_command_text(m), entry, m.timestamp, extra)
        elif cls is ExtensionMessage:
            content = m.content
            text = content if type(content) is str else message(content, self.media, line, self.report)
            extra = {"extension": _fields(m, ("extension_type", "display"))}
            self._add("user", text, entry, m.timestamp, extra)
        else:  # UnknownMessage
            self.report.add(losses.UNKNOWN_MESSAGE, line, str(getattr(m, "role", None)))
            value = m.value if cls is UnknownMessage else None
            self._add("system", _compact(value), entry, None, {"unknown_message": value})

    def _add(
        self,
        source: str,
        text: Any,
        entry: Entry | None,
        message_ms: float | None,
        extra: JSONDict | None = None,
        **fields: Any,
    ) -> int:
        step: JSONDict = {"step_id": len(self.steps) + 1}
        stamp = iso_time(entry, message_ms, self.report)
        if stamp is not None:
            step["timestamp"] = stamp
        step["source"] = source
        step["message"] = text
        step.update(fields)
        if self._copied(entry):
            step["is_copied_context"] = True
        extra = dict(extra or {})
        if entry is not None:
            extra["entry_id"] = entry.id
        if extra:
            step["extra"] = extra
        self.steps.append(step)
        return len(self.steps) - 1

    def _copied(self, entry: Entry | None) -> bool:
        if entry is None:
            return False
        if type(entry.body) in (Compaction, BranchSummary):
            return True
        return self.position.get(entry.id, self.boundary) < self.boundary

    # ---------------------------------------------------------------- system and summaries

    def _system(self, m: SystemMessage, entry: Entry | None) -> None:
        extra: JSONDict = {}
        if m.tools_added:
            extra["tools_added"] = [t.name for t in m.tools_added]
        if m.tools_removed:
            extra["tools_removed"] = [t.name for t in m.tools_removed]
        removed = [name for name, value in (m.sections or {}).items() if value is None]
        if removed:
            extra["sections_removed"] = removed
        if entry is not None and _is_compaction(entry):
            extra["checkpoint"] = True  # the system state a compaction recorded at its boundary
        self._add("system", system_text(m), entry, m.timestamp, extra)

    def _summary(self, m: SummaryMessage, entry: Entry | None) -> None:
        line = entry.origin.line if entry is not None else None
        text = m.summary or ""
        extra: JSONDict = {}
        body = entry.body if entry is not None else None
        if m.kind == "branch":
            extra["branch_from"] = m.from_id
        else:
            extra["context_management"] = {"type": "compaction", "boundary": "replace"}
            if type(body) is Compaction and body.first_kept_id is not None:
                extra["first_kept"] = body.first_kept_id
            if m.tokens_before is not None:
                extra["tokens_before"] = m.tokens_before
        usage = getattr(body, "usage", None)
        if usage is not None:
            extra["usage"] = step_metrics(usage)
            self.report.add(losses.USAGE_OUTSIDE_STEPS, line, m.kind)
        observation = {"results": [{"content": text}]} if m.kind != "branch" else None
        if observation is not None:
            self._add("system", text, entry, m.timestamp, extra, observation=observation)
        else:
            self._add("system", text, entry, m.timestamp, extra)

    # ---------------------------------------------------------------- agent steps

    def _agent(self, m: AssistantMessage, entry: Entry | None, line: int | None) -> None:
        texts: list[str] = []  # runs of text parts; a run ends at any other part
        run: list[str] = []
        reasoning: list[str] = []
        calls: list[JSONDict] = []
        images: list[JSONDict] = []
        content = m.content
        if type(content) is str:
            content = (Text(text=content),)
        for n, part in enumerate(content or ()):
            cls = type(part)
            if cls is Text:
                run.append(part.text or "")
                if part.signature is not None:
                    self.report.add(losses.SIGNATURE, line, "text")
                continue
            if run:
                texts.append("".join(run))
                run = []
            if cls is Reasoning:
                if part.text:
                    reasoning.append(part.text)
                elif part.redacted:
                    self.report.add(losses.REASONING_REDACTED, line)
                if part.signature is not None:
                    self.report.add(losses.SIGNATURE, line, "reasoning")
            elif cls is ToolCall:
                calls.append(self._call(part, entry, n, line))
            elif cls is Image:
                images.append(self.media.image(part, line))
            else:
                texts.append(other_part(part, line, self.report))
        if run:
            texts.append("".join(run))
        text = "\n".join(texts)
        body: Any = text
        if any(p["type"] == "image" for p in images):
            body = ([{"type": "text", "text": text}] if text else []) + images
        elif images:  # only notes of images that could not be written
            body = "\n".join([text, *(p["text"] for p in images)]) if text else images[0]["text"]
        ref = m.model
        fields: JSONDict = {}
        name = m.response_model or (ref.model if ref is not None else None)
        if name:
            fields["model_name"] = name
        level = m.reasoning_level or (self.levels.get(entry.id) if entry is not None else None)
        if level:
            fields["reasoning_effort"] = EFFORT.get(level, level)
        if reasoning:
            fields["reasoning_content"] = "\n".join(reasoning)
        if calls:
            fields["tool_calls"] = calls
        if m.usage is not None:
            fields["metrics"] = step_metrics(m.usage)
        fields["llm_call_count"] = 1
        extra: JSONDict = {}
        provider = ref.provider if ref is not None else None
        if provider is not None and provider != self.default_provider:
            extra["provider"] = provider
        for key, value in (
            ("stop_reason", m.stop_reason),
            ("error_message", m.error_message),
            ("response_id", m.response_id),
        ):
            if value is not None:
                extra[key] = value
        index = self._add("agent", body, entry, m.timestamp, extra, **fields)
        for call in calls:
            self.call_step[call["tool_call_id"]] = index

    def _call(self, part: ToolCall, entry: Entry | None, n: int, line: int | None) -> JSONDict:
        call_id = part.call_id
        if not call_id:
            call_id = f"call_{entry.id if entry is not None else len(self.steps) + 1}_{n}"
            self.report.add(losses.CALL_ID, line, call_id)
        arguments = part.arguments
        if type(arguments) is not dict:
            self.report.add(losses.ARGUMENTS, line, type(arguments).__name__)
            arguments = {"_arguments": arguments}
        if part.signature is not None:
            self.report.add(losses.SIGNATURE, line, "tool call")
        return {"tool_call_id": call_id, "function_name": part.name or "", "arguments": arguments}

    def _tool_result(self, m: ToolResult, entry: Entry | None, line: int | None) -> None:
        result: JSONDict = {}
        if m.call_id is not None:
            result["source_call_id"] = m.call_id
        result["content"] = message(m.content, self.media, line, self.report)
        extra: JSONDict = {}
        if m.tool_name is not None:
            extra["tool_name"] = m.tool_name
        if m.is_error:
            extra["is_error"] = True
        if entry is not None:
            extra["entry_id"] = entry.id
        if m.usage is not None:
            extra["usage"] = step_metrics(m.usage)
            self.report.add(losses.USAGE_OUTSIDE_STEPS, line, "tool")
        if m.details is not None:
            self.report.add(losses.TOOL_DETAILS, line, m.tool_name)
        if extra:
            result["extra"] = extra
        index = self.call_step.get(m.call_id) if m.call_id is not None else None
        if index is None:
            # its call is not in this trajectory: a system step, so the document still
            # validates (an observation names only its own step's calls)
            self.report.add(losses.TOOL_ORPHAN, line, m.call_id)
            result.pop("source_call_id", None)
            self._add(
                "system",
                "",
                entry,
                m.timestamp,
                {"orphan_call_id": m.call_id},
                observation={"results": [result]},
            )
            return
        step = self.steps[index]
        step.setdefault("observation", {"results": []})["results"].append(result)
        self.answered.add((index, m.call_id))  # type: ignore[arg-type]

    def _unanswered(self) -> None:
        """A call left without a result gets the one pi-ai sends the model in its place
        (``No result provided``, an error), marked as made up, so every call has its
        observation."""
        for index, step in enumerate(self.steps):
            for call in step.get("tool_calls", ()):
                if (index, call["tool_call_id"]) in self.answered:
                    continue
                entry_id = step.get("extra", {}).get("entry_id")
                entry = self.get(entry_id) if entry_id is not None else None
                self.report.add(
                    losses.TOOL_UNANSWERED, entry.origin.line if entry else None, call["function_name"]
                )
                result = {
                    "source_call_id": call["tool_call_id"],
                    "content": NO_RESULT_TEXT,
                    "extra": {"is_error": True, "synthesized": True},
                }
                step.setdefault("observation", {"results": []})["results"].append(result)
                self.answered.add((index, call["tool_call_id"]))


STEP_FIELDS = (
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "llm_call_count",
    "is_copied_context",
    "extra",
)
"""A step's members in the order the RFC lists them, so every step reads alike."""


def _ordered(step: JSONDict) -> JSONDict:
    return {name: step[name] for name in STEP_FIELDS if name in step}


def _is_compaction(entry: Entry | None) -> bool:
    return entry is not None and type(entry.body) is Compaction


def _levels_along(path: list[Entry]) -> dict[str, str]:
    """The reasoning level in force at each entry of the path (the last change before it)."""
    levels: dict[str, str] = {}
    level: str | None = None
    for entry in path:
        body = entry.body
        if body.kind == "reasoning_level_change" and isinstance(getattr(body, "level", None), str):
            level = body.level  # type: ignore[union-attr]
        if level is not None:
            levels[entry.id] = level
    return levels


def _fields(obj: Any, names: tuple[str, ...]) -> JSONDict:
    return {name: getattr(obj, name) for name in names if getattr(obj, name) is not None}


def _compact(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
