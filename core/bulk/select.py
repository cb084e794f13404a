"""Which sessions a directory run converts (``--since``, ``--until``, ``--project``), and
where pi keeps its sessions when no input is named.

Chosen before any session is converted, from each session's header (read once, when the
file is new or changed: :mod:`.sniff`) and ``stat``. A session began at its header's time
stamp (else the time in pi's file name, ``2026-01-05T10-00-00-000Z_<id>.jsonl``, else what
an earlier run recorded, else the file's modification time) and was last active at the
file's modification time (pi appends to a session as it goes). Its project is its
header's working directory (the whole path or its last folder) or its folder's name.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .discover import PIPED_SUBAGENTS, Source, layout_of

if TYPE_CHECKING:
    from .sniff import Header

_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d{1,9})?)?)?Z?)?)?)?$")
_PI_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z_")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}")


_RELATIVE = re.compile(r"^(\d+)\s*(d|days?|w|weeks?)(\s+ago)?$")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")


def parse_date(value: str, flag: str, today: _dt.date | None = None) -> str:
    """``value`` as the ISO prefix it names (``2026``, ``2026-01``, ``2026-01-05``,
    ``2026-01-05T10:00``..., or ``20260105`` as ccusage writes it), or a day relative to
    ``today`` (default: this machine's date): ``today``, ``yesterday``, ``7d`` or
    ``7 days ago`` (the day seven days back), ``2w`` (two weeks back). A usage error
    naming ``flag`` for anything else."""
    text = value.strip()
    relative = _relative(text.lower(), today)
    if relative is not None:
        return relative
    compact = _COMPACT.match(text)
    if compact:
        text = "-".join(compact.groups())
    if not _DATE.match(text):
        raise UsageError(
            f"{flag} {value!r}: not a date (YYYY, YYYY-MM, YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS], "
            "today, yesterday, 7d, 2w)"
        )
    text = text.replace(" ", "T").removesuffix("Z")
    try:
        _dt.date.fromisoformat((text + "-01-01")[:10] if len(text) < 10 else text[:10])
    except ValueError:
        raise UsageError(f"{flag} {value!r}: no such date") from None
    return text


def _relative(text: str, today: _dt.date | None) -> str | None:
    base = today or _dt.date.today()
    if text == "today":
        return base.isoformat()
    if text == "yesterday":
        return (base - _dt.timedelta(days=1)).isoformat()
    match = _RELATIVE.match(text)
    if match is None:
        return None
    count = int(match.group(1))
    days = count * 7 if match.group(2).startswith("w") else count
    try:
        return (base - _dt.timedelta(days=days)).isoformat()
    except OverflowError:
        return _dt.date.min.isoformat()


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


def created_of(src: Source, header: Header | None, meta: Mapping[str, Any]) -> str:
    """When the session began: its header's time stamp, else the time in pi's file name,
    else what an earlier run recorded, else the file's modification time."""
    stamp = header.timestamp if header is not None else None
    if isinstance(stamp, str) and _ISO.match(stamp):
        return stamp
    match = _PI_NAME.match(src.rel.rsplit("/", 1)[-1])
    if match:
        day, hh, mm, ss, ms = match.groups()
        return f"{day}T{hh}:{mm}:{ss}.{ms}Z"
    created = meta.get("created")
    return created if isinstance(created, str) else _iso(src.mtime_ns)


def project_folder(rel: str) -> str:
    """The project folder a session file is in (``--home-me-app--``), or ``""`` for a
    file at the top of the input: a subagent's session belongs to its parent's folder."""
    parts = rel.split("/")
    if len(parts) == 2 and parts[0] != PIPED_SUBAGENTS:
        return parts[0]
    if (len(parts) == 3 and parts[1] == PIPED_SUBAGENTS) or len(parts) == 5:
        return parts[0]
    return "/".join(parts[:-1]) if layout_of(rel) == "" else ""


def _project_matches(pattern: str, src: Source, header: Header | None, meta: Mapping[str, Any]) -> bool:
    folder = project_folder(src.rel)
    cwd = header.cwd if header is not None else None
    last = cwd.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] if cwd else None
    names = [folder, folder.strip("-"), cwd, last]
    names += [meta.get("project"), meta.get("cwd")]
    return any(isinstance(n, str) and n and fnmatch.fnmatchcase(n, pattern) for n in names)


def select(
    sources: list[Source],
    selection: Selection | None,
    manifest: Any,
    headers: Mapping[str, Header] | None = None,
) -> tuple[list[Source], Counter[str]]:
    """The sources ``selection`` admits, and how many each option left out (a session
    counted under the first option that leaves it out: ``--project``, ``--since``,
    ``--until``). Decided from each session's header (``headers``, by relative path), so
    a first run over a folder of any shape selects as a later one does."""
    left_out: Counter[str] = Counter()
    if not selection:
        return sources, left_out
    headers = headers or {}
    chosen = []
    for src in sources:
        rec = manifest.get(src.rel) or {}
        meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
        header = headers.get(src.rel)
        if selection.project and not _project_matches(selection.project, src, header, meta):
            left_out["--project"] += 1
            continue
        if selection.since or selection.until:
            start, end = created_of(src, header, meta), _iso(src.mtime_ns)
            if not in_range(start, end, selection.since, None):
                left_out["--since"] += 1
                continue
            if not in_range(start, end, None, selection.until):
                left_out["--until"] += 1
                continue
        chosen.append(src)
    return chosen, left_out


def pi_sessions_dir(
    environ: Mapping[str, str] | None = None, omp: bool | None = None, cwd: str | None = None
) -> str:
    """Where pi keeps its sessions, as pi started in ``cwd`` (default: this process's
    working directory) finds it: ``$PI_CODING_AGENT_SESSION_DIR``, else the ``sessionDir``
    of the project's ``.pi/settings.json`` in ``cwd`` (pi lays a project's settings over
    its own), else that of pi's ``settings.json`` (in ``$PI_CODING_AGENT_DIR``, else
    ``~/.pi/agent``), else ``$PI_CODING_AGENT_DIR/sessions``, else ``~/.pi/agent/sessions``
    (``~`` expanded). ``omp``: Oh-My-Pi's, found the same way from ``OMP_…`` variables and
    ``~/.omp/agent``; ``None``: Oh-My-Pi's when pi's does not exist and Oh-My-Pi's does."""
    env = os.environ if environ is None else environ
    if omp is None:
        pi = pi_sessions_dir(env, False, cwd)
        if os.path.isdir(pi):
            return pi
        other = pi_sessions_dir(env, True, cwd)
        return other if os.path.isdir(other) else pi
    app, config = ("OMP", ".omp") if omp else ("PI", ".pi")
    if env.get(f"{app}_CODING_AGENT_SESSION_DIR"):
        return _expand(env[f"{app}_CODING_AGENT_SESSION_DIR"], env)
    agent_dir = (
        _expand(env[f"{app}_CODING_AGENT_DIR"], env)
        if env.get(f"{app}_CODING_AGENT_DIR")
        else os.path.join(_home(env), config, "agent")
    )
    configured = _settings_session_dir(_project_settings(cwd, config)) or _settings_session_dir(
        os.path.join(agent_dir, "settings.json")
    )
    if configured:
        return _expand(configured, env)
    return os.path.join(agent_dir, "sessions")


def _project_settings(cwd: str | None, config: str) -> str | None:
    """The project's settings file in ``cwd`` (default: the working directory; None
    when that directory is gone, as a removed one is)."""
    if cwd is None:
        try:
            cwd = os.getcwd()
        except OSError:
            return None
    return os.path.join(cwd, config, "settings.json")


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _expand(path: str, env: Mapping[str, str]) -> str:
    """``~`` and ``~/…`` as pi expands them (not ``~user``)."""
    if path == "~":
        return _home(env)
    if path.startswith("~/"):
        return os.path.join(_home(env), path[2:])
    return path


def _settings_session_dir(path: str | None) -> str | None:
    """The ``sessionDir`` of pi's settings file at ``path``, if it sets one. A file that
    cannot be read or is not JSON sets nothing (pi reports it; piconv goes on without)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            import orjson

            settings = orjson.loads(fh.read())
    except (OSError, ValueError):
        return None
    value = settings.get("sessionDir") if isinstance(settings, dict) else None
    return value if isinstance(value, str) and value else None
