"""OpenAI chat completions: the request body pi 1.6.0 would send for a session's context.

``convertToLlm`` (llm.py) → ``transformMessages`` (transform.py) → openai-completions
``convertMessages`` and tools (chat.py, tools.py), for the target model and compat flags
of pi's registry (models.py, compat.py). Mapping and rules: docs/formats/openai.md.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping
from typing import IO, Any

from piconv import Converter, Option, Report, ValidationFailed, hookimpl
from piconv.ir import Document

SCHEMA = "schema/chat-request.schema.json"
MAPPING_DOC = "docs/formats/openai.md"
MAX_ERRORS = 50


def _dumps(value: Any, pretty: bool) -> bytes:
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if pretty else 0)
    except TypeError:
        # orjson refuses lone surrogates (pi's reasoning fields keep them); JSON.stringify
        # would escape them, and so does the stdlib encoder with ensure_ascii.
        import json

        return json.dumps(
            value,
            ensure_ascii=True,
            indent=2 if pretty else None,
            separators=(",", ": ") if pretty else (",", ":"),
        ).encode()


def write(document: Document, stream: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    from .request import requests

    messages_only = bool(options.get("messages_only"))
    many = bool(options.get("all_leaves"))
    written = 0
    validate = bool(options.get("validate"))
    for _leaf, body in requests(document, options, report):
        value = body["messages"] if messages_only else body
        if validate:  # the value about to be written, as check() reads it back
            errors = _value_errors({"model": "-", "messages": value} if messages_only else value)
            if errors:
                shown = "; ".join(errors[:5])
                raise ValidationFailed(
                    f"openai output failed validation ({len(errors)} problems): {shown}", path=report.source
                )
        written += len(body["messages"])
        stream.write(_dumps(value, pretty=not many))
        stream.write(b"\n")
    report.entries_written = written


# Members pi adds for non-OpenAI targets (compat flags), which the official SDK types do not
# have. The check sets them aside and validates everything else against the closed schema.
ASSISTANT_EXTENSIONS = ("reasoning", "reasoning_content", "reasoning_text", "reasoning_details")


def standard_part(value: Any) -> Any:
    """``value`` without pi's documented provider extensions (see docs/formats/openai.md)."""
    if isinstance(value, list):
        return [standard_part(m) for m in value if not (isinstance(m, dict) and _is_tool_declaration(m))]
    if not isinstance(value, dict):
        return value
    out = dict(value)
    out.pop("tool_stream", None)  # zaiToolStream
    if isinstance(out.get("messages"), list):
        out["messages"] = [_standard_message(m) for m in out["messages"] if not _is_tool_declaration(m)]
    if isinstance(out.get("tools"), list):
        out["tools"] = [_without(t, "cache_control") for t in out["tools"]]
    return out


def _is_tool_declaration(message: Any) -> bool:
    # supportsMidConvoToolAdditions (Kimi): {"role": "system", "tools": [...]}
    return isinstance(message, dict) and message.get("role") == "system" and "tools" in message


def _without(value: Any, *keys: str) -> Any:
    if not isinstance(value, dict) or not any(k in value for k in keys):
        return value
    return {k: v for k, v in value.items() if k not in keys}


def _standard_message(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    role = message.get("role")
    if role == "assistant":
        message = _without(message, *ASSISTANT_EXTENSIONS)
    elif role == "tool":
        message = _without(message, "name")  # requiresToolResultName
    content = message.get("content")
    if isinstance(content, list):  # Anthropic cache_control on OpenRouter
        message = {**message, "content": [_without(p, "cache_control") for p in content]}
    return message


def _role_schemas() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The request schema, and per message role the schema of that role's SDK type.

    The messages array is an ``anyOf`` over the SDK's message types, each pinned by a
    ``role`` constant; checking each message against its role's type directly is the same
    check without trying the other five types first (3-4x faster on large outputs).
    """
    from piconv.validation import load_schema

    schema = load_schema(__name__, SCHEMA)
    by_role: dict[str, dict[str, Any]] = {}
    for name, sub in schema["$defs"].items():
        role = sub.get("properties", {}).get("role", {}).get("const")
        if name.endswith("MessageParam") and isinstance(role, str):
            by_role[role] = {**sub, "$defs": schema["$defs"]}
    return schema, by_role


@functools.lru_cache(maxsize=1)
def _validators() -> tuple[Any, dict[str, Any]]:
    """jsonschema validators for the request and per message role (see :func:`_role_schemas`),
    used only to say what is wrong. The committed schema's own validity is asserted by the
    tests, so it is not re-checked here."""
    import jsonschema

    schema, by_role = _role_schemas()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema), {role: cls(sub) for role, sub in by_role.items()}


def _valid(value: Any) -> bool:
    """The schema's verdict on ``value`` (jsonschema-rs, compiled once per process)."""
    from piconv.validation import is_valid

    return is_valid(__name__, SCHEMA, value)


def _errors(value: Any) -> Iterator[str]:
    """Every schema error of ``value`` with its JSON path. Each message is checked against
    its role's type, so an error is named inside that type rather than as "not valid under
    any of the given schemas" of the messages union."""
    from piconv.validation import describe

    root, by_role = _validators()
    messages = value.get("messages") if isinstance(value, dict) else None
    if not isinstance(messages, list):
        yield from (describe(e) for e in root.iter_errors(value))
        return
    yield from (describe(e) for e in root.iter_errors({**value, "messages": []}))
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        validator = by_role.get(role) if isinstance(role, str) else None
        if validator is None:  # no such role: let the union report it
            for e in root.iter_errors({"model": "-", "messages": [message]}):
                yield describe(e, ("messages", i), skip=2)
        else:
            yield from (describe(e, ("messages", i)) for e in validator.iter_errors(message))


def check(data: bytes) -> list[str]:
    """Validate one request (or messages array), or JSON Lines of them, against the schema
    generated from the OpenAI SDK types (provider extensions set aside, see above):
    jsonschema-rs for the verdict, jsonschema to name every error with its JSON path."""
    from piconv.validation import parse_json

    try:
        numbered = [(1, parse_json(data))]
    except ValueError:
        numbered = []
        for n, raw in enumerate(data.splitlines(), 1):
            if raw.strip():
                try:
                    numbered.append((n, parse_json(raw)))
                except ValueError as exc:
                    return [f"line {n}: not JSON: {exc}"]
    errors: list[str] = []
    for lineno, value in numbered:
        if isinstance(value, list):  # --messages-only: check it as the messages of a request
            value = {"model": "-", "messages": value}
        errors.extend(f"line {lineno}: {err}" for err in _value_errors(value, MAX_ERRORS - len(errors)))
        if len(errors) >= MAX_ERRORS:
            break
    return errors


def _value_errors(value: Any, limit: int = MAX_ERRORS) -> list[str]:
    """Up to ``limit`` errors of one request against the schema (provider extensions set aside)."""
    value = standard_part(value)
    if _valid(value):
        return []  # jsonschema (and its import) only to say what is wrong
    found = list(itertools.islice(_errors(value), limit))
    # the validators disagree (not seen on any corpus output or mutation): say so
    return found or ["(root): invalid according to jsonschema-rs, valid according to jsonschema"]


OPTIONS = (
    Option(
        "--target",
        "target model PROVIDER/MODEL from pi's registry (default: openai/gpt-4o)",
        metavar="PROVIDER/MODEL",
    ),
    Option(
        "--compat",
        "override a compat flag or model property, KEY=VALUE (repeatable), e.g. requiresThinkingAsText=true, input=text",
        repeatable=True,
        metavar="KEY=VALUE",
    ),
    Option("--messages-only", "write only the messages array", takes_value=False, default=False),
    Option(
        "--all-leaves", "JSON Lines: one request per leaf (every branch)", takes_value=False, default=False
    ),
)


@hookimpl
def register_converters(register) -> None:  # type: ignore[no-untyped-def]
    register(
        Converter(
            name="openai",
            aliases=("openai-chat",),
            summary="OpenAI chat-completions request body, exactly as pi builds it",
            extension=".json",
            per_leaf=True,
            media_type="application/json",
            write=write,
            check=check,
            checks_while_writing=True,
            mapping_doc=MAPPING_DOC,
            options=OPTIONS,
        )
    )
