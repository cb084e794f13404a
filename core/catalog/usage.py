"""``piconv.usage(...)``: tokens and cost, grouped by day, week, month, project, model or
session (any of them combined), from the sessions of a directory, from session files, or
from an archive database.

Every counted entry (:class:`piconv.facts.Spend`) goes to exactly one row, so each row's
figures add up to the total. A fork's copies of its parent's entries are counted once,
under the parent (:mod:`.listing`). The figures are pi's: input, output, cache read and
cache write tokens as each call reported them, the call's total, and its cost.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..facts.spending import Spend
from .listing import Session

GROUPS = ("day", "week", "month", "project", "model", "session")
"""What a report can be grouped by (``--by``), in the order columns are shown."""

NO_MODEL = "(tools and summaries)"
"""The model of usage no model is named for (a tool result's, a compaction's, a branch
summary's): pi's ``/session`` groups it as "Tools/summaries"."""


@dataclass(slots=True)
class Row:
    """One row of a report: ``key`` holds its value of each group (in the report's
    ``by`` order); the figures are sums over the entries in the row. ``sessions``: how
    many sessions have an entry in it (a session active on two days counts on each, so
    this column alone does not add up)."""

    key: tuple[str, ...]
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    sessions: int = 0
    _seen: set[str] = field(default_factory=set, repr=False)

    def add(self, spend: Spend, session: str) -> None:
        self.input += spend.input
        self.output += spend.output
        self.cache_read += spend.cache_read
        self.cache_write += spend.cache_write
        self.tokens += spend.tokens
        self.cost += spend.cost
        self.calls += spend.calls
        if session not in self._seen:
            self._seen.add(session)
            self.sessions += 1

    def to_json(self, by: Sequence[str]) -> dict[str, Any]:
        out: dict[str, Any] = dict(zip(by, self.key, strict=True))
        out.update(
            input=self.input,
            output=self.output,
            cache_read=self.cache_read,
            cache_write=self.cache_write,
            tokens=self.tokens,
            cost=round(self.cost, 10),
            calls=self.calls,
            sessions=self.sessions,
        )
        return out


@dataclass(slots=True)
class Report:
    """A usage report: ``rows`` sorted by key, and ``total`` over all of them (its key
    empty). ``by``: the groups; ``timezone``: the zone days, weeks and months are told in."""

    by: tuple[str, ...]
    rows: list[Row]
    total: Row
    timezone: str = "UTC"
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "by": list(self.by),
            "timezone": self.timezone,
            "source": self.source,
            "rows": [r.to_json(self.by) for r in self.rows],
            "total": self.total.to_json(()),
        }


@dataclass(frozen=True, slots=True)
class Selection:
    """Which entries a report counts: ``since`` / ``until`` (ISO dates or prefixes,
    inclusive, in the report's zone), ``project`` (a glob over the session's project
    name, working directory or folder)."""

    since: str | None = None
    until: str | None = None
    project: str | None = None


def check_groups(by: Iterable[str]) -> tuple[str, ...]:
    """``by`` in the order columns are shown, each once; a usage error for an unknown name."""
    wanted = []
    for name in by:
        if name not in GROUPS:
            raise UsageError(f"--by {name!r}: not one of {', '.join(GROUPS)}")
        if name not in wanted:
            wanted.append(name)
    return tuple(sorted(wanted, key=GROUPS.index))


def zone(name: str | None) -> _dt.tzinfo:
    """The time zone ``name`` names: ``UTC`` (the default), ``local`` (this machine's) or
    an IANA name (``Europe/Paris``)."""
    if name is None or name.upper() == "UTC":
        return _dt.timezone.utc
    if name == "local":
        local = _dt.datetime.now().astimezone().tzinfo
        return local if local is not None else _dt.timezone.utc
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        raise UsageError(
            f"--timezone {name!r}: not a time zone (UTC, local, or a name such as Europe/Paris)"
        ) from None


class _Days:
    """ISO time stamps to local dates in one zone, each distinct stamp's date worked out once."""

    def __init__(self, tz: _dt.tzinfo) -> None:
        self.tz = tz
        self.utc = tz is _dt.timezone.utc
        self.cache: dict[str, str | None] = {}

    def day(self, stamp: str | None) -> str | None:
        if stamp is None:
            return None
        if self.utc and len(stamp) >= 10 and stamp[4] == "-" and stamp.endswith("Z"):
            return stamp[:10]
        found = self.cache.get(stamp, "")
        if found == "":
            found = self._convert(stamp)
            self.cache[stamp] = found
        return found

    def _convert(self, stamp: str) -> str | None:
        text = stamp[:-1] + "+00:00" if stamp.endswith("Z") else stamp
        try:
            when = _dt.datetime.fromisoformat(text)
        except ValueError:
            return stamp[:10] if len(stamp) >= 10 and stamp[4:5] == "-" else None
        if when.tzinfo is None:
            when = when.replace(tzinfo=_dt.timezone.utc)
        return when.astimezone(self.tz).date().isoformat()


def week_of(day: str) -> str:
    """The ISO week of a date: ``2026-W02``."""
    year, week, _ = _dt.date.fromisoformat(day).isocalendar()
    return f"{year}-W{week:02d}"


def session_label(session: Session) -> str:
    """A session's key in a report grouped by session: its id (else its file)."""
    return session.id or session.rel


def project_matches(pattern: str, session: Session) -> bool:
    """Whether ``pattern`` (a glob) matches the session's project name, its working
    directory, or its folder (with or without pi's ``--`` marks), as ``--project`` of a
    directory run matches."""
    from ..bulk.select import project_folder

    folder = project_folder(session.rel)
    names = (session.project, session.cwd, folder, folder.strip("-"))
    return any(isinstance(n, str) and n and fnmatch.fnmatchcase(n, pattern) for n in names)


def report(
    sessions: Iterable[Session],
    by: Sequence[str] = ("day",),
    selection: Selection | None = None,
    timezone: str | None = None,
    source: str = "",
) -> Report:
    """The usage of ``sessions`` grouped ``by`` (see :data:`GROUPS`), counting the
    entries ``selection`` admits. Entries that spend nothing (a user's message) are not
    rows of a usage report."""
    groups = check_groups(by)
    tz = zone(timezone)
    days = _Days(tz)
    selection = selection or Selection()
    rows: dict[tuple[str, ...], Row] = {}
    total = Row(())
    for session in sessions:
        if selection.project and not project_matches(selection.project, session):
            continue
        label = session_label(session)
        for spend in session.spends:
            if spend.turns:
                continue
            day = days.day(spend.timestamp)
            if (selection.since or selection.until) and not _in(day, selection.since, selection.until):
                continue
            key = _key(groups, spend, session, day, label)
            row = rows.get(key)
            if row is None:
                row = rows[key] = Row(key)
            row.add(spend, session.rel)
            total.add(spend, session.rel)
    ordered = [rows[k] for k in sorted(rows)]
    for row in (*ordered, total):
        row.cost = round(row.cost, 10)
    return Report(groups, ordered, total, _zone_name(timezone), source)


def _zone_name(name: str | None) -> str:
    return "UTC" if name is None or name.upper() == "UTC" else name


def _in(day: str | None, since: str | None, until: str | None) -> bool:
    if day is None:
        return False
    if since is not None and day < since[:10]:
        return False
    return not (until is not None and day[: len(until)] > until)


def _key(
    groups: Sequence[str], spend: Spend, session: Session, day: str | None, label: str
) -> tuple[str, ...]:
    out = []
    for group in groups:
        if group == "day":
            out.append(day or "(no date)")
        elif group == "week":
            out.append(week_of(day) if day else "(no date)")
        elif group == "month":
            out.append(day[:7] if day else "(no date)")
        elif group == "project":
            out.append(session.project)
        elif group == "model":
            out.append(spend.model or NO_MODEL)
        else:
            out.append(label)
    return tuple(out)


def titles(sessions: Iterable[Session]) -> Mapping[str, str]:
    """Each session's title by its report key (:func:`session_label`)."""
    return {session_label(s): s.title for s in sessions}


def usage(
    source: str | Sequence[str] | Iterable[Session] | None = None,
    *,
    by: Sequence[str] = ("day",),
    since: str | None = None,
    until: str | None = None,
    project: str | None = None,
    timezone: str | None = None,
    archive: str | None = None,
    recursive: bool = False,
    omp: bool | None = None,
    jobs: int | None = 1,
) -> Report:
    """Tokens and cost grouped ``by`` any of :data:`GROUPS`.

    ``source``: a directory of sessions (default: pi's own, found as pi finds it), a list
    of session files, or sessions :func:`piconv.sessions` returned; ``archive``: an
    archive database written by a directory run with ``--to sqlite`` (or the directory
    holding it), read instead of the sessions. ``since`` / ``until``: dates (``2026-01``,
    ``2026-01-05``, ``7d``, ``yesterday``...), inclusive, told in ``timezone`` (``UTC``
    by default, ``local``, or an IANA name), as the days of the report are.
    """
    from ..bulk.select import parse_date
    from .listing import scan_files, sessions

    today = _dt.datetime.now(zone(timezone)).date()
    selection = Selection(
        parse_date(since, "--since", today) if since else None,
        parse_date(until, "--until", today) if until else None,
        project,
    )
    if archive is not None:
        from .archive import archived_sessions

        found: Iterable[Session] = archived_sessions(archive)
        label = archive
    elif source is None or isinstance(source, str) or hasattr(source, "__fspath__"):
        import os

        path = None if source is None else os.fspath(source)  # type: ignore[arg-type]
        if path is not None and os.path.isfile(path):
            found, label = scan_files([path]), path
        else:
            catalog = sessions(path, recursive=recursive, omp=omp, jobs=jobs)
            found, label = catalog, catalog.directory
    else:
        items = list(source)
        if items and all(isinstance(i, str) for i in items):
            found = scan_files(items)  # type: ignore[arg-type]
            label = ", ".join(items)  # type: ignore[arg-type]
        else:
            found = items  # type: ignore[assignment]
            label = ""
    return report(found, by, selection, timezone, label)
