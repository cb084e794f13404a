"""OpenAI chat completions: the request body pi 1.6.0 would send for a session's context.

``convertToLlm`` (llm.py) → ``transformMessages`` (transform.py) → openai-completions
``convertMessages`` and tools (chat.py, tools.py), for the target model and compat flags
of pi's registry (models.py, compat.py). Mapping and rules: docs/formats/openai.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from piconv import Converter, Option, Report, hookimpl
from piconv.ir import Document

SCHEMA = "schema/chat-request.schema.json"
MAPPING_DOC = "docs/formats/openai.md"


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
    for _leaf, body in requests(document, options, report):
        value = body["messages"] if messages_only else body
        written += len(body["messages"])
        stream.write(_dumps(value, pretty=not many))
        stream.write(b"\n")
    report.entries_written = written


def check(data: bytes) -> list[str]:
    """Validate one request (or messages array), or JSON Lines of them, against the schema."""
    import orjson
    from piconv.validation import json_schema_check

    validate = json_schema_check(__name__, SCHEMA)
    try:
        docs = [orjson.loads(data)]
        numbered = [(0, docs[0])]
    except orjson.JSONDecodeError:
        numbered = [(n, orjson.loads(raw)) for n, raw in enumerate(data.splitlines(), 1) if raw.strip()]
    errors: list[str] = []
    for lineno, value in numbered:
        if isinstance(value, list):  # --messages-only: check it as the messages of a request
            value = {"model": "-", "messages": value}
        for err in validate(orjson.dumps(value)):
            errors.append(err.replace("line 1:", f"line {lineno}:", 1) if lineno else err)
    return errors


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
            extension="json",
            media_type="application/json",
            write=write,
            check=check,
            mapping_doc=MAPPING_DOC,
            options=OPTIONS,
        )
    )
