"""A session named by its id or file name instead of its path, and the latest session of
a project (what ``pi --continue`` would resume).

Only headers are read: the directory's sessions are found as a directory run finds them
(:func:`piconv.bulk.discover.discover`) and each file's first line tells its id
(:func:`piconv.bulk.sniff.sniff`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import InputError, UsageError

SHOWN = 10
"""How many candidates an ambiguous name lists."""


@dataclass(frozen=True, slots=True)
class Found:
    """A session file below the session directory: its path, its path below the
    directory, its header's id and working directory, and its modification time."""

    path: str
    rel: str
    id: str | None
    cwd: str | None
    mtime_ns: int


def headers(directory: str, recursive: bool = False) -> list[Found]:
    """Every session below ``directory`` with what its header says."""
    from ..bulk.discover import discover
    from ..bulk.sniff import Header, sniff

    root = os.path.realpath(directory)
    sources, _refused, _skipped = discover(root, recursive=recursive)
    out = []
    for src in sources:
        header = sniff(root, src)
        if isinstance(header, Header):
            out.append(Found(src.path, src.rel, header.id, header.cwd, src.mtime_ns))
    return out


def _stem(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


def find_session(name: str, directory: str | None = None, recursive: bool = False) -> str:
    """The path of the session ``name`` names: the file itself when it exists, else the one
    session of the session directory (``directory``, default pi's) whose id begins with
    ``name`` (case-insensitive) or whose file name, without ``.jsonl``, is ``name`` or
    begins with it. :class:`piconv.UsageError` naming the candidates when several match;
    :class:`piconv.InputError` when none does."""
    if os.path.exists(name):
        return name
    from .listing import default_directory

    where = directory or default_directory()
    if not os.path.isdir(where):
        raise InputError("no such file (and no session directory to look for it in)", path=name)
    wanted = name.casefold()
    found = headers(where, recursive)
    exact = [f for f in found if (f.id or "").casefold() == wanted or _stem(f.rel) == name]
    matches = exact or [
        f for f in found if (f.id or "").casefold().startswith(wanted) or _stem(f.rel).startswith(name)
    ]
    if len(matches) == 1:
        return matches[0].path
    if not matches:
        raise InputError(
            f"no such file, and no session in {where} has an id or file name beginning so", path=name
        )
    matches.sort(key=lambda f: f.mtime_ns, reverse=True)
    listed = "; ".join(f"{f.id or '?'} ({f.rel})" for f in matches[:SHOWN])
    more = f"; and {len(matches) - SHOWN} more" if len(matches) > SHOWN else ""
    raise UsageError(f"{name!r} names {len(matches)} sessions: {listed}{more}. Give more of the id")


def pi_folder(cwd: str) -> str:
    """The folder pi keeps a working directory's sessions in: ``--home-me-app--``."""
    path = os.path.realpath(cwd)
    trimmed = path[1:] if path[:1] in ("/", "\\") else path
    return "--" + trimmed.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def latest_session(cwd: str | None = None, directory: str | None = None) -> str:
    """The newest session of the project at ``cwd`` (default: the current directory), as
    ``pi --continue`` picks it: the most recently modified session file in pi's folder for
    that directory; in a directory laid out otherwise, the most recently modified session
    whose header names that working directory. :class:`piconv.InputError` when it has none."""
    from .listing import default_directory

    here = os.path.realpath(cwd or os.getcwd())
    where = directory or default_directory()
    if not os.path.isdir(where):
        raise InputError("no session directory", path=where)
    found = headers(where)
    folder = pi_folder(here)
    mine = [f for f in found if f.rel.split("/", 1)[0] == folder and "/" in f.rel]
    if not mine:
        mine = [f for f in found if f.cwd is not None and _same_dir(f.cwd, here)]
    if not mine:
        raise InputError(
            f"no session of {here} in this session directory (pi keeps them in {folder})", path=where
        )
    return max(mine, key=lambda f: (f.mtime_ns, f.rel)).path


def _same_dir(a: str, b: str) -> bool:
    return os.path.normpath(a) == b or os.path.realpath(a) == b
