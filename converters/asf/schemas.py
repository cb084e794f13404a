"""The ASF JSON Schema (``schema/asf.schema.json``), compiled once per process by jsonschema-rs.

The schema is the one definition of an ASF line's shape, and jsonschema-rs is the one engine
that reads it, for both jobs: the writer asks :func:`is_valid` of every line before writing it,
and ``piconv validate`` (``filecheck.validate_asf``) asks :func:`errors` of each line it reads.
jsonschema-rs gives each error with its JSON path (``instance_path``) as jsonschema does, so
the Python implementation would add nothing to a report but its import (~35 ms) and a second
reading of ``pattern``: JSON Schema reads patterns as ECMA 262, as jsonschema-rs does, while
jsonschema uses Python's ``re``, where ``$`` also matches before a final newline.
``tests/test_asf_schema.py`` holds the two to the same verdict on every line piconv writes for
the corpus and on mutated lines.

Nothing is imported or compiled until the first line is checked: a conversion pays for
jsonschema-rs only when it validates.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["errors", "is_valid", "schema", "validator"]


@functools.cache
def schema() -> dict[str, Any]:
    """The schema document (draft 2020-12)."""
    from piconv.validation import load_schema

    return load_schema(__package__, "schema/asf.schema.json")


@functools.cache
def validator() -> Any:
    """The compiled validator (``jsonschema_rs`` for draft 2020-12)."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(schema())


def is_valid(value: Any) -> bool:
    """Whether the line ``value`` (a header or an entry) matches the schema."""
    return validator().is_valid(value)


def errors(value: Any, limit: int = 5) -> list[str]:
    """Up to ``limit`` schema errors of ``value``, each as ``"json/path: message"``
    (``(line)`` for the line itself)."""
    out = []
    for err in validator().iter_errors(value):
        path = "/".join(str(p) for p in err.instance_path)
        out.append(f"{path or '(line)'}: {err.message[:300]}")
        if len(out) >= limit:
            break
    return out
