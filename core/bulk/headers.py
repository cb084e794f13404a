"""Each session's header for a run, recalled from the manifest where it can be.

A rerun over files that have not changed reads none of them: the header (id, working
directory, start, parent) the manifest recorded is the one selection and lineage use.
"""

from __future__ import annotations

from collections.abc import Callable

from .discover import Refused, Skipped, Source
from .manifest import Manifest
from .sniff import Header, sniff


def session_headers(
    sources: list[Source],
    manifest: Manifest,
    root: str,
    skipped: list[Skipped],
    refused: list[Refused],
    redact: Callable[[Header], Header] | None = None,
) -> tuple[list[Source], dict[str, Header]]:
    """The sources that are sessions, and each one's header: the one the manifest
    recorded while the file is as it was then (a rerun reads no file), else read
    (:func:`.sniff.sniff`). A file that is not a session joins ``skipped``; one that
    cannot be read, ``refused``. ``redact``: what a header becomes (with ``--redact``)."""
    sessions: list[Source] = []
    headers: dict[str, Header] = {}
    for src in sources:
        rec = manifest.get(src.rel)
        header = None
        if rec is not None and rec.get("size") == src.size and rec.get("mtime_ns") == src.mtime_ns:
            header = Header.from_json(rec.get("header"))
        if header is None:
            found = sniff(root, src)
            if isinstance(found, Skipped):
                skipped.append(found)
                continue
            if isinstance(found, Refused):
                refused.append(found)
                continue
            header = redact(found) if redact is not None else found
            if rec is not None and rec.get("size") == src.size and rec.get("mtime_ns") == src.mtime_ns:
                manifest.append({**rec, "header": header.to_json()})  # read once: kept for the next run
        elif redact is not None:
            header = redact(header)  # kept by a run without redaction
        headers[src.rel] = header
        sessions.append(src)
    skipped.sort(key=lambda item: item.rel)
    return sessions, headers
