"""The names a run keeps of an input, as the redaction filter leaves them.

With ``--redact``, what redaction removes from a session's outputs must not come back
through the names piconv makes of it: the folders of its outputs and its key in an
archive (:func:`output_namer`), and the header the manifest keeps of it
(:func:`header_redactor`). Without the filter, both are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .sniff import Header

_NO_FILTER = object()
"""What :func:`_redact_options` returns for a run without the redaction filter."""


def _redact_options(filters: Sequence[tuple[str, Mapping[str, Any]]]) -> Any:
    """The redaction filter's options, None for its defaults, ``_NO_FILTER`` without the filter."""
    options = next((opts.get("options") for name, opts in filters if name == "redact"), _NO_FILTER)
    if options is _NO_FILTER:
        return _NO_FILTER
    from ..redaction.api import RedactOptions

    return options if isinstance(options, RedactOptions) else None


def output_namer(filters: Sequence[tuple[str, Mapping[str, Any]]]) -> Callable[[str], str]:
    """How an input's path becomes the names piconv makes of it (outputs' folders, the
    archive's key): as it is, or, with the redaction filter, with what redaction removes
    from a name (:func:`piconv.redaction.api.name_redactor`)."""
    options = _redact_options(filters)
    if options is _NO_FILTER:
        return str
    from ..redaction.api import name_redactor

    redact_name = name_redactor(options)
    cache: dict[str, str] = {}

    def redacted(rel: str) -> str:
        if rel not in cache:
            cache[rel] = "/".join(redact_name(part) or "_" for part in rel.split("/"))
        return cache[rel]

    return redacted


def header_redactor(filters: Sequence[tuple[str, Mapping[str, Any]]]) -> Callable[[Header], Header] | None:
    """With the redaction filter: a header as redaction leaves it (its working directory and
    the path it names, the home directory they lie in as ``~``), so nothing the manifest
    keeps of a session names what redaction removed from its outputs; else None."""
    options = _redact_options(filters)
    if options is _NO_FILTER:
        return None
    from ..redaction.api import name_redactor

    by_cwd: dict[str | None, Callable[[str], str]] = {}

    def redacted(header: Header) -> Header:
        if header.cwd not in by_cwd:
            by_cwd[header.cwd] = name_redactor(options, [header.cwd] if header.cwd else [])
        redact = by_cwd[header.cwd]
        return Header(
            header.id,
            redact(header.cwd) if header.cwd else None,
            header.timestamp,
            redact(header.parent_session) if header.parent_session else None,
        )

    return redacted
