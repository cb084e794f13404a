"""The front matter against ``schema/front-matter.schema.json``, with jsonschema-rs.

The validator is compiled once per process, when the first front matter is checked.
"""

from __future__ import annotations

import functools
from typing import Any

from piconv.validation import load_schema

SCHEMA = ("piconv.converters.markdown", "schema/front-matter.schema.json")


@functools.lru_cache(maxsize=1)
def validator() -> Any:
    import jsonschema_rs  # lazy: only a checked output needs it

    return jsonschema_rs.validator_for(load_schema(*SCHEMA))


def problems(fm: dict[str, Any]) -> list[str]:
    """What is wrong with the front matter ``fm`` (parsed by :func:`.frontmatter.parse`),
    one line each; ``[]`` when it is valid."""
    check = validator()
    if check.is_valid(fm):
        return []
    found = []
    for err in check.iter_errors(fm):
        path = "/".join(str(p) for p in err.instance_path) or "(root)"
        found.append(f"line 1: front matter {path}: {err.message}")
    return found
