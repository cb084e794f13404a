"""Validating a converter's output against a JSON Schema shipped as package data.

Two validators, one schema: jsonschema-rs gives the verdict while converting (compiled once
per process, on first use, ~100x faster than jsonschema); jsonschema says what is wrong,
each error with its JSON path, for ``piconv validate`` and for a failed verdict. The tests
hold the two to the same verdict on every shipped schema's outputs and on mutations of them.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Iterator
from typing import Any

import orjson

from .outputformat import CheckFunction

MAX_ERRORS = 50


@functools.cache
def load_schema(package: str, resource: str) -> dict[str, Any]:
    """A JSON file shipped as package data, e.g. ``load_schema("piconv.converters.asf", "schema/asf.schema.json")``."""
    with open(package_file(package, resource), "rb") as f:
        return orjson.loads(f.read())


def package_file(package: str, resource: str) -> str:
    """The path of ``resource`` beside the modules of ``package`` (an installed package is
    plain files; importlib.resources, or even pathlib, would cost each run its imports)."""
    return os.path.join(os.path.dirname(importlib.import_module(package).__file__ or ""), resource)


def _schema(package: str, resource: str, definition: str | None) -> dict[str, Any]:
    """The schema, or the one of its ``$defs`` named ``definition`` (with every ``$defs``
    beside it, so its references resolve)."""
    schema = load_schema(package, resource)
    if definition is None:
        return schema
    return {"$schema": schema.get("$schema"), "$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}


@functools.cache
def fast_validator(package: str, resource: str, definition: str | None = None) -> Any:
    """The jsonschema-rs validator of a shipped schema, or of one of its definitions
    (imported and compiled on first use)."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(_schema(package, resource, definition), validate_formats=True)


@functools.cache
def reporting_validator(package: str, resource: str, definition: str | None = None) -> Any:
    """The jsonschema validator of a shipped schema (or one of its definitions), whose
    errors carry their JSON paths."""
    import jsonschema  # lazily: only to say what is wrong

    schema = _schema(package, resource, definition)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def is_valid(package: str, resource: str, value: Any, definition: str | None = None) -> bool:
    """Whether ``value`` matches the schema (or its definition ``definition``):
    jsonschema-rs's verdict, or jsonschema's for a value jsonschema-rs cannot take (a lone
    surrogate in a string, which JSON escapes allow)."""
    try:
        return bool(fast_validator(package, resource, definition).is_valid(value))
    except (UnicodeEncodeError, ValueError, OverflowError):
        return bool(reporting_validator(package, resource, definition).is_valid(value))


def parse_json(raw: bytes) -> Any:
    """A JSON document piconv wrote: orjson, or the stdlib for what orjson refuses (a lone
    surrogate escape). Raises ``ValueError`` on anything else."""
    from .jsonio import loads

    return loads(raw)


def describe(error: Any, prefix: tuple[Any, ...] = (), skip: int = 0) -> str:
    """``path: message`` for a jsonschema error, its path under ``prefix``."""
    path = "/".join(str(p) for p in (*prefix, *list(error.absolute_path)[skip:]))
    return f"{path or '(root)'}: {error.message}"


def schema_errors(
    package: str, resource: str, value: Any, definition: str | None = None, prefix: tuple[Any, ...] = ()
) -> Iterator[str]:
    """Every error of ``value`` against the schema (or its definition ``definition``) as
    ``path: message``, the paths under ``prefix``."""
    found = False
    for error in reporting_validator(package, resource, definition).iter_errors(value):
        found = True
        yield describe(error, prefix)
    if not found and not is_valid(package, resource, value, definition):
        # the two disagree (a format jsonschema has no checker for): jsonschema-rs's words
        for error in fast_validator(package, resource, definition).iter_errors(value):
            path = "/".join(str(p) for p in (*prefix, *error.instance_path))
            yield f"{path or '(root)'}: {error.message}"


def json_schema_check(package: str, resource: str, *, lines: bool = False) -> CheckFunction:
    """A check function validating a JSON document (or, with ``lines``, each line of a
    JSON Lines file) against the schema at ``package``/``resource``: jsonschema-rs for the
    verdict, jsonschema to name the errors."""

    def check(data: bytes) -> list[str]:
        errors: list[str] = []
        docs = enumerate(data.splitlines(), 1) if lines else [(1, data)]
        for lineno, raw in docs:
            if lines and not raw.strip():
                continue
            try:
                value = parse_json(raw)
            except ValueError as exc:
                errors.append(f"line {lineno}: not JSON: {exc}")
                continue
            if is_valid(package, resource, value):
                continue
            for message in schema_errors(package, resource, value):
                errors.append(f"line {lineno}: {message}")
                if len(errors) >= MAX_ERRORS:
                    return errors
        return errors

    return check
