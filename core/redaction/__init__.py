"""Redaction: secrets, home paths and named values out of a document, with a report of
what went (never the secret itself). See docs/redaction.md.

    import piconv
    doc = piconv.load("session.jsonl")
    result = piconv.redact(doc, values=["Project Nightingale"])
    piconv.convert(result.document, "html", "share.html")

This package's modules load on first use: ``piconv --help`` imports only its command-line
options (:mod:`.cli`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import Redaction, RedactOptions, redact, rule_ids, rule_set_name  # noqa: F401

_EXPORTS = ("RedactOptions", "Redaction", "redact", "rule_ids", "rule_set_name", "unknown_rules")
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'piconv.redaction' has no attribute {name!r}")
    from . import api

    return getattr(api, name)
