"""Helpers converters use to validate their output against a JSON Schema."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import orjson

from .registry import CheckFunction

MAX_ERRORS = 50


@functools.cache
def load_schema(package: str, resource: str) -> dict[str, Any]:
    """A JSON Schema shipped as package data, e.g. ``load_schema("piconv.converters.asf", "schema/asf.schema.json")``."""
    return orjson.loads(resources.files(package).joinpath(resource).read_bytes())


@functools.cache
def _validator(package: str, resource: str) -> Any:
    import jsonschema  # lazily: keeps start-up fast

    schema = load_schema(package, resource)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def json_schema_check(package: str, resource: str, *, lines: bool = False) -> CheckFunction:
    """A check function validating a JSON document (or, with ``lines``, each line of a
    JSON Lines file) against the schema at ``package``/``resource``."""

    def check(data: bytes) -> list[str]:
        validator = _validator(package, resource)
        errors: list[str] = []
        docs = enumerate(data.splitlines(), 1) if lines else [(1, data)]
        for lineno, raw in docs:
            if lines and not raw.strip():
                continue
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                errors.append(f"line {lineno}: not JSON: {exc}")
                continue
            for err in validator.iter_errors(value):
                path = "/".join(str(p) for p in err.absolute_path)
                errors.append(f"line {lineno}: {path or '(root)'}: {err.message}")
                if len(errors) >= MAX_ERRORS:
                    return errors
        return errors

    return check
