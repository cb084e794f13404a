"""``piconv.sessions(dir)``: every session of a directory, newest first, each with its
name, first prompt, dates, turns, tokens and cost, and the session it came from.

Found as a directory run finds sessions (:func:`piconv.bulk.discover.discover`, then
:func:`piconv.bulk.sniff.sniff` on each file's first line), linked as a run links them
(:func:`piconv.bulk.lineage.resolve`), and counted as every total piconv shows is counted:
a fork's copies of its parent's entries count under the parent only (the rule of
:func:`piconv.bulk.lineage.own`, applied entry by entry so a report can split a total by
day or model).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from ..facts.lineage import entry_key
from ..facts.scan import SessionScan
from ..facts.spending import Spend
from ..facts.titles import project_name, shown_title


@dataclass(frozen=True, slots=True)
class Session:
    """One session of a directory.

    - ``path``: the file (absolute); ``rel``: its path below the directory (``/``-separated).
    - ``id``: the session id of its header; ``reader``: its input format (``pi``, ``asf``...).
    - ``project``: the last folder of its working directory (``cwd``), else its folder's name.
    - ``name``: the name given to it (pi's ``/name``), else None; ``first_prompt``: the
      first thing the user typed along the current branch; ``title``: the name, else a
      title the file carries, else the first prompt, else the file name (one line).
    - ``created``: when it began (its header); ``updated``: its latest entry (ISO 8601, UTC).
    - ``models``: ``provider/model``, in order of first use.
    - ``relation``: ``"fork"`` or ``"subagent"`` when it came from another session
      (``parent``: that session's ``rel``, None when it is not in the directory).
    - ``spends``: the entries it counts (:class:`piconv.facts.Spend`), without those a
      fork copied from its parent (``copied`` of them), which count under the parent.
    - ``turns``, ``input``, ``output``, ``cache_read``, ``cache_write``, ``tokens``,
      ``cost``: sums over ``spends``.
    """

    path: str
    rel: str
    id: str | None
    reader: str
    project: str
    cwd: str | None
    name: str | None
    first_prompt: str | None
    title: str
    created: str | None
    updated: str | None
    models: tuple[str, ...]
    relation: str | None
    parent: str | None
    copied: int
    spends: tuple[Spend, ...] = field(repr=False)
    turns: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    tokens: int = 0
    cost: float = 0.0

    def to_json(self, spends: bool = False) -> dict[str, Any]:
        """The session as JSON; its entries (``spends``) only when asked."""
        out = {name: getattr(self, name) for name in _JSON_FIELDS}
        out["models"] = list(self.models)
        out["cost"] = round(self.cost, 10)
        if spends:
            out["spends"] = [s._asdict() for s in self.spends]
        return out


_JSON_FIELDS = (
    "id",
    "path",
    "rel",
    "reader",
    "project",
    "cwd",
    "title",
    "name",
    "first_prompt",
    "created",
    "updated",
    "models",
    "relation",
    "parent",
    "copied",
    "turns",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "tokens",
    "cost",
)


@dataclass(frozen=True, slots=True)
class Passed:
    """A file that is not listed: ``code`` says why (``empty``, ``not-a-session``,
    ``piconv-output``: passed over as pi passes over it; ``unreadable`` and the
    ``bulk:`` codes of a refused file; ``failed``: no reader could read it)."""

    rel: str
    code: str
    message: str


class Catalog(Sequence[Session]):
    """The sessions of a directory, newest first (``updated``, then ``created``), and
    what was passed over (``passed``). ``directory``: the directory, as given."""

    def __init__(self, directory: str, sessions: Sequence[Session], passed: Sequence[Passed]) -> None:
        self.directory = directory
        self._sessions = tuple(sessions)
        self.passed = tuple(passed)

    @overload
    def __getitem__(self, index: int) -> Session: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Session]: ...

    def __getitem__(self, index: int | slice) -> Session | Sequence[Session]:
        return self._sessions[index]

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[Session]:
        return iter(self._sessions)

    def by_rel(self) -> dict[str, Session]:
        return {s.rel: s for s in self._sessions}

    def nested(self) -> list[tuple[Session, int]]:
        """The sessions newest first, each one's forks and subagents right after it
        (newest first too), with how deep each sits below a parent in the list."""
        from ..bulk.lineage import Link, order

        links = {s.rel: Link(s.parent, s.relation) for s in self._sessions if s.relation}
        by_rel = self.by_rel()
        return [(by_rel[rel], depth) for rel, depth in order([s.rel for s in self._sessions], links)]


def sessions(
    directory: str | os.PathLike[str] | None = None,
    *,
    recursive: bool = False,
    omp: bool | None = None,
    jobs: int | None = 1,
) -> Catalog:
    """Every session below ``directory`` (default: pi's own session directory, found as
    pi finds it; ``omp``: Oh-My-Pi's), as a directory run finds them: ``PROJECT/*.jsonl``
    and pi-subagents' layouts, or every ``*.jsonl`` with ``recursive``. ``jobs``: worker
    processes that read the files (``None``: the cores this process may use).

    Reads what a list needs (the header, the names, the usage of each call), not whole
    documents when the session's reader can do without (pi's can). Raises
    :class:`piconv.InputError` when ``directory`` is not a directory."""
    from ..bulk.discover import Refused, Skipped, discover
    from ..bulk.sniff import Header, sniff
    from ..errors import InputError
    from .scanning import scan_all

    given = default_directory(omp) if directory is None else os.fspath(directory)
    if not os.path.isdir(given):
        raise InputError("not a directory of sessions", path=given)
    root = os.path.realpath(given)
    sources, refused, skipped = discover(root, recursive=recursive)
    passed = [Passed(r.rel, r.code, r.message) for r in refused]
    passed += [Passed(s.rel, s.code, s.message) for s in skipped]
    headers: dict[str, Header] = {}
    wanted = []
    for src in sources:
        header = sniff(root, src)
        if isinstance(header, (Skipped, Refused)):
            passed.append(Passed(header.rel, header.code, header.message))
            continue
        headers[src.rel] = header
        wanted.append(src)
    scans = {}
    for item in scan_all(root, wanted, jobs):
        if item.scan is None:
            passed.append(Passed(item.source.rel, "failed", item.error))
        else:
            scans[item.source.rel] = (item.source, item.scan, item.reader)
    listed = assemble(root, scans)
    passed.sort(key=lambda p: p.rel)
    return Catalog(given, listed, passed)


def default_directory(omp: bool | None = None) -> str:
    """pi's session directory, found as pi finds it (Oh-My-Pi's with ``omp``; with None,
    Oh-My-Pi's when pi's does not exist and Oh-My-Pi's does)."""
    from ..bulk.select import pi_sessions_dir

    return pi_sessions_dir(omp=omp)


def assemble(root: str, scans: Mapping[str, tuple[Any, SessionScan, str]]) -> list[Session]:
    """The sessions of ``scans`` (by relative path: ``(source, scan, reader)``), linked
    and each entry counted once, newest first."""
    from ..bulk.lineage import resolve

    records = {
        rel: {
            "input": rel,
            "header": {"id": scan.id, "parent_session": scan.parent_session},
            "meta": {
                "id": scan.id,
                "parent_session": scan.parent_session,
                "subagent_runs": list(scan.subagent_runs),
            },
        }
        for rel, (_src, scan, _reader) in scans.items()
    }
    links = resolve(records, root)
    out = []
    for rel, (src, scan, reader) in scans.items():
        link = links.get(rel)
        parent = scans.get(link.parent) if link is not None and link.parent is not None else None
        own, copied = own_spends(scan, parent[1] if parent is not None else None)
        out.append(
            _session(
                src.path,
                rel,
                scan,
                reader,
                own,
                copied,
                link.relation if link else None,
                link.parent if link else None,
            )
        )
    out.sort(key=lambda s: (s.updated or s.created or "", s.created or "", s.rel), reverse=True)
    return out


def own_spends(scan: SessionScan, parent: SessionScan | None) -> tuple[tuple[Spend, ...], int]:
    """``scan``'s entries without its copies of ``parent``'s, and how many it copied: an
    entry older than the session's header whose key (id and time stamp,
    :func:`piconv.facts.lineage.entry_key`) the parent holds, as :func:`piconv.bulk.lineage.own`
    decides."""
    started = scan.created
    if parent is None or started is None:
        return scan.spends, 0
    older = [s for s in scan.spends if s.timestamp is not None and s.timestamp < started]
    if not older:
        return scan.spends, 0
    held = {entry_key(s.entry_id, s.timestamp) for s in parent.spends}
    copies = {id(s) for s in older if entry_key(s.entry_id, s.timestamp) in held}
    return tuple(s for s in scan.spends if id(s) not in copies), len(copies)


def _session(
    path: str,
    rel: str,
    scan: SessionScan,
    reader: str,
    spends: tuple[Spend, ...],
    copied: int,
    relation: str | None,
    parent: str | None,
) -> Session:
    turns = i = o = r = w = tokens = 0
    cost = 0.0
    for s in spends:
        turns += s.turns
        i += s.input
        o += s.output
        r += s.cache_read
        w += s.cache_write
        tokens += s.tokens
        cost += s.cost
    title = shown_title(scan.name, scan.header_title, scan.first_prompt, rel.rsplit("/", 1)[-1])
    return Session(
        path=path,
        rel=rel,
        id=scan.id,
        reader=reader,
        project=project_name(scan.cwd, path),
        cwd=scan.cwd,
        name=scan.name,
        first_prompt=scan.first_prompt,
        title=title,
        created=scan.created or scan.updated,
        updated=scan.updated,
        models=scan.models,
        relation=relation,
        parent=parent,
        copied=copied,
        spends=spends,
        turns=turns,
        input=i,
        output=o,
        cache_read=r,
        cache_write=w,
        tokens=tokens,
        cost=round(cost, 10),
    )


def scan_files(paths: Sequence[str]) -> list[Session]:
    """The sessions of the files named (not a directory's), linked among themselves."""
    from ..bulk.discover import Source
    from ..errors import InputError
    from .scanning import scan_bytes

    scans = {}
    root = os.path.commonpath([os.path.realpath(p) for p in paths]) if paths else os.getcwd()
    if os.path.isfile(root):
        root = os.path.dirname(root)
    for path in paths:
        real = os.path.realpath(path)
        try:
            with open(real, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None
        found, reader = scan_bytes(data, real)
        rel = os.path.relpath(real, root).replace(os.sep, "/")
        st = os.stat(real)
        scans[rel] = (Source(rel, real, st.st_size, st.st_mtime_ns, rel), found, reader)
    return assemble(root, scans)
