"""pi-ai's ``transformMessages``: make a history replayable on the target model.

1. Images become a text placeholder when the target takes no images.
2. Assistant turns written by another model (provider, api or model id differ) lose their
   reasoning and tool-call thought signatures; their tool-call ids are normalised for the
   target and the matching tool results follow the new ids.
3. Turns that ended in ``error`` or ``aborted`` are dropped.
4. A tool call left without a result gets a synthetic error result ``No result provided``
   before the next assistant or user turn (or at the end); a system message arriving between
   a call and its results is held back until after them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from piconv import Report
from piconv.ir import Image, Reasoning, Text, ToolCall, replace

from . import losses
from .jsutil import js_trim
from .llm import LLMMessage

NON_VISION_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
NON_VISION_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
NO_RESULT_TEXT = "No result provided"


def replace_images_with_placeholder(content: list[Any], placeholder: str) -> list[Any]:
    """Each run of images becomes one placeholder text (none right after an existing one)."""
    result: list[Any] = []
    previous_was_placeholder = False
    for block in content:
        if type(block) is Image:
            if not previous_was_placeholder:
                result.append(Text(placeholder))
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = type(block) is Text and block.text == placeholder
    return result


def _downgrade_images(messages: list[LLMMessage], model: dict[str, Any], report: Report) -> list[LLMMessage]:
    if "image" in (model.get("input") or ()):
        return messages
    out = []
    for msg in messages:
        role = msg["role"]
        content = msg.get("content")
        if (role == "user" or role == "toolResult") and type(content) is list:
            images = sum(1 for b in content if type(b) is Image)
            if images:
                report.add(losses.IMAGE_REPLACED, msg["line"], count=images)
                placeholder = (
                    NON_VISION_USER_IMAGE_PLACEHOLDER if role == "user" else NON_VISION_TOOL_IMAGE_PLACEHOLDER
                )
                msg = {**msg, "content": replace_images_with_placeholder(content, placeholder)}
        out.append(msg)
    return out


def transform_messages(
    messages: list[LLMMessage],
    model: dict[str, Any],
    normalize_id: Callable[[str], str] | None,
    report: Report,
) -> list[LLMMessage]:
    id_map: dict[str, str] = {}
    messages = _downgrade_images(messages, model, report)
    target = (model.get("provider"), model.get("api"), model.get("id"))

    transformed: list[LLMMessage] = []
    for msg in messages:
        role = msg["role"]
        if role == "toolResult":
            new_id = id_map.get(msg["toolCallId"])
            if new_id and new_id != msg["toolCallId"]:
                msg = {**msg, "toolCallId": new_id}
        elif role == "assistant":
            same = (msg["provider"], msg["api"], msg["model"]) == target
            content: list[Any] = []
            line = msg["line"]
            for block in msg["content"]:
                t = type(block)
                if t is Reasoning:
                    if not same:
                        # Signatures are only valid for the model that made them, and readable
                        # reasoning sent as text would read as part of the visible reply.
                        report.add(losses.THINKING_DROPPED, line)
                        continue
                    if block.redacted or block.signature or (block.text and js_trim(block.text)):
                        content.append(block)
                elif t is ToolCall:
                    call = block
                    if not same and call.signature:
                        report.add(losses.SIGNATURE_DROPPED, line)
                        call = replace(call, signature=None)
                    if not same and normalize_id is not None and call.call_id is not None:
                        new_id = normalize_id(call.call_id)
                        if new_id != call.call_id:
                            report.add(losses.IDS_REWRITTEN, line, f"{call.call_id[:60]} -> {new_id}")
                            id_map[call.call_id] = new_id
                            call = replace(call, call_id=new_id)
                    content.append(call)
                else:
                    content.append(block)
            msg = {**msg, "content": content}
        transformed.append(msg)

    result: list[LLMMessage] = []
    pending: list[ToolCall] = []
    answered: set[Any] = set()
    held: list[LLMMessage] = []
    pending_line: list[int | None] = [None]

    def close_pending() -> None:
        nonlocal pending, answered
        if pending:
            for call in pending:
                if call.call_id not in answered:
                    report.add(losses.TOOL_RESULT_SYNTHESIZED, pending_line[0], call.name)
                    result.append(
                        {
                            "role": "toolResult",
                            "toolCallId": call.call_id,
                            "toolName": call.name,
                            "content": [Text(NO_RESULT_TEXT)],
                            "isError": True,
                            "line": None,
                            "synthetic": True,
                        }
                    )
            pending = []
            answered = set()
        result.extend(held)
        held.clear()

    for msg in transformed:
        role = msg["role"]
        if role == "assistant":
            close_pending()
            if msg["stopReason"] in ("error", "aborted"):
                # Incomplete turns are not replayed: the model retries from the last valid state.
                report.add(losses.TURN_DROPPED, msg["line"], msg["stopReason"])
                continue
            calls = [b for b in msg["content"] if type(b) is ToolCall]
            if calls:
                pending = calls
                answered = set()
                pending_line[0] = msg["line"]
            result.append(msg)
        elif role == "toolResult":
            answered.add(msg["toolCallId"])
            result.append(msg)
        elif role == "system":
            if pending:
                held.append(msg)
            else:
                result.append(msg)
        elif role == "user":
            close_pending()
            result.append(msg)
        else:
            result.append(msg)
    close_pending()
    return result
