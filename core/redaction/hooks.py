"""The built-in ``redact`` filter, registered as a plugin's would be. Light to import:
the rule set loads when the filter first runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..filters import Filter
from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from ..ir import Document
    from ..report import Report


def apply_redact(document: Document, options: Mapping[str, Any], report: Report) -> Document:
    """``options`` holds a :class:`piconv.redact.RedactOptions` under ``"options"``, or
    that class's fields by name."""
    from .api import RedactOptions, redact

    given = options.get("options")
    if not isinstance(given, RedactOptions):
        given = RedactOptions(**{k: tuple(v) if isinstance(v, list) else v for k, v in options.items()})
    result = redact(document, given)
    result.add_to(report)
    return result.document


@hookimpl
def register_filters(register: Any) -> None:
    register(
        Filter("redact", "replace secrets, home paths and named values; see docs/redaction.md", apply_redact)
    )
