"""Which sessions a directory run converts (``--since``, ``--until``, ``--project``), and
where pi keeps its sessions when no input is named.

Chosen before any session is read, so a run over a large session directory that selects
a week costs a ``stat`` per file. A session's dates are its creation time, from pi's
file name (``2026-01-05T10-00-00-000Z_<id>.jsonl``) or, for another name, from what an
earlier run recorded, else the file's modification time; and its last activity, the
file's modification time (pi appends to a session as it goes).
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from .discover import Source

_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d{1,9})?)?)?Z?)?)?)?$")
_PI_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z_")


def parse_date(value: str, flag: str) -> str:
    """``value`` as the ISO prefix it names (``2026``, ``2026-01``, ``2026-01-05``,
    ``2026-01-05T10:00``...), or a usage error naming ``flag``."""
    text = value.strip()
    if not _DATE.match(text):
        raise UsageError(f"{flag} {value!r}: not a date (YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS])")
    text = text.replace(" ", "T").removesuffix("Z")
    try:
        _dt.date.fromisoformat((text + "-01-01")[:10] if len(text) < 10 else text[:10])
    except ValueError:
        raise UsageError(f"{flag} {value!r}: no such date") from None
    return text


def in_range(start: str | None, end: str | None, since: str | None, until: str | None) -> bool:
    """Whether a span from ``start`` to ``end`` (ISO time stamps) touches the inclusive
    range ``since``..``until`` (ISO prefixes: ``until`` 2026-01 admits all of January)."""
    if since is not None and (end or start or "") < since:
        return False
    return not (until is not None and (start or end or "")[: len(until)] > until)


@dataclass(frozen=True, slots=True)
class Selection:
    since: str | None = None
    until: str | None = None
    project: str | None = None

    def __bool__(self) -> bool:
        return any((self.since, self.until, self.project))


def _iso(ns: int) -> str:
    return _dt.datetime.fromtimestamp(ns / 1e9, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def created_of(src: Source, meta: Mapping[str, Any]) -> str:
    match = _PI_NAME.match(src.rel.rsplit("/", 1)[-1])
    if match:
        day, hh, mm, ss, ms = match.groups()
        return f"{day}T{hh}:{mm}:{ss}.{ms}Z"
    created = meta.get("created")
    return created if isinstance(created, str) else _iso(src.mtime_ns)


def _project_matches(pattern: str, src: Source, meta: Mapping[str, Any]) -> bool:
    folder = src.rel.rsplit("/", 1)[0] if "/" in src.rel else ""
    names = [folder, folder.strip("-"), meta.get("project"), meta.get("cwd")]
    return any(isinstance(n, str) and n and fnmatch.fnmatchcase(n, pattern) for n in names)


def select(sources: list[Source], selection: Selection | None, manifest: Any) -> tuple[list[Source], int]:
    """The sources ``selection`` admits, and how many it left out."""
    if not selection:
        return sources, 0
    chosen = []
    for src in sources:
        rec = manifest.get(src.rel) or {}
        meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
        if selection.project and not _project_matches(selection.project, src, meta):
            continue
        if (selection.since or selection.until) and not in_range(
            created_of(src, meta), _iso(src.mtime_ns), selection.since, selection.until
        ):
            continue
        chosen.append(src)
    return chosen, len(sources) - len(chosen)


def pi_sessions_dir(environ: Mapping[str, str] | None = None) -> str:
    """Where pi keeps its sessions, as pi finds it: ``$PI_CODING_AGENT_SESSION_DIR``, else
    ``$PI_CODING_AGENT_DIR/sessions``, else ``~/.pi/agent/sessions`` (``~`` expanded)."""
    env = os.environ if environ is None else environ
    if env.get("PI_CODING_AGENT_SESSION_DIR"):
        return os.path.expanduser(env["PI_CODING_AGENT_SESSION_DIR"])
    if env.get("PI_CODING_AGENT_DIR"):
        return os.path.join(os.path.expanduser(env["PI_CODING_AGENT_DIR"]), "sessions")
    return os.path.join(os.path.expanduser("~"), ".pi", "agent", "sessions")
