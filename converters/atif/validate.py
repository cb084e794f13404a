"""Validation by the reference models: the ``atif`` package's Pydantic models of ATIF v1.8
(imported on first use, only when the format is asked for), plus the one rule of Harbor's
validator they leave out: a trajectory has at least one step."""

from __future__ import annotations

import functools
from typing import Any

from piconv import PluginError, ValidationFailed

INSTALL = "pip install 'piconv[atif]'"
MAX_ERRORS = 50


@functools.cache
def models() -> Any:
    """The ``atif`` package's ``Trajectory`` model; a clear error when it is not installed."""
    try:
        from atif import Trajectory
    except ImportError as exc:
        raise PluginError(
            f"--to atif needs the atif package (the reference models of ATIF v1.8), which is not installed: {INSTALL}"
        ) from exc
    return Trajectory


def errors(value: Any, limit: int = MAX_ERRORS) -> list[str]:
    """What is wrong with one trajectory, each problem with its JSON path."""
    model = models()
    from pydantic import ValidationError  # installed with atif

    found: list[str] = []
    if isinstance(value, dict) and value.get("steps") == []:
        found.append("steps: a trajectory has at least one step")
    try:
        model.model_validate(value)
    except ValidationError as exc:
        for error in exc.errors(include_url=False)[: max(limit - len(found), 0)]:
            where = ".".join(str(part) for part in error.get("loc", ())) or "(root)"
            found.append(f"{where}: {error.get('msg')}")
    return found


def require_valid(value: Any, name: str, source: str | None) -> None:
    """Raise :class:`ValidationFailed` when the trajectory ``name`` is not valid ATIF."""
    problems = errors(value)
    if problems:
        shown = "; ".join(problems[:5])
        raise ValidationFailed(
            f"atif output {name} failed validation ({len(problems)} problems): {shown}", path=source
        )


def check(data: bytes) -> list[str]:
    """``piconv validate --format atif``: one trajectory (a JSON document)."""
    import orjson

    models()  # the clear error first, when the package is missing
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        import json  # escaped lone surrogates are JSON, which orjson refuses

        try:
            value = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            return [f"line 1: not JSON: {exc}"]
    return [f"line 1: {problem}" for problem in errors(value)]
