"""Discovery: which session files a directory holds, and where each one's outputs go.

Output paths are derived from the *relative input path* alone (never from session
content), and every derived path is checked to stay inside the output directory. A
symlink is followed only when its target stays inside the input root; one that points
outside is refused and reported, so a planted link cannot make piconv read (and publish)
a file the user did not put in the archive.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

SUFFIX = ".jsonl"

RESERVED_TOP_LEVEL = frozenset({"index.html", "index.md"})
"""Names the bulk run writes at the top of OUTDIR; a session's output never takes them."""


@dataclass(frozen=True, slots=True)
class Source:
    """One session file: ``rel`` is its path below the input root with ``/`` separators."""

    rel: str
    path: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Refused:
    """An entry under the input root that is not converted, and why (a stable code)."""

    rel: str
    code: str
    message: str


_SEPARATORS = (os.sep, os.altsep)


class UnsafePath(ValueError):
    """A derived output path would leave the output directory."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def discover(root: str, exclude: str | None = None) -> tuple[list[Source], list[Refused]]:
    """Every ``*.jsonl`` below ``root`` (recursively, sorted by relative path).
    ``exclude`` is a directory not to descend into (the output directory, when it sits
    inside the input: ``--to pi`` writes ``.jsonl`` files a rerun must not take as input).

    Directory symlinks are not descended into: one pointing outside is refused, one
    pointing inside would only list the same files twice. File symlinks are followed
    when their resolved target is inside ``root``.
    """
    real_root = os.path.realpath(root)
    real_exclude = os.path.realpath(exclude) if exclude else None
    sources: list[Source] = []
    refused: list[Refused] = []
    for dirpath, dirnames, filenames in os.walk(real_root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, real_root)
        rel_dir = "" if rel_dir == "." else rel_dir
        for name in sorted(dirnames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full) and not _inside(os.path.realpath(full), real_root):
                refused.append(
                    _refuse(
                        rel_dir,
                        name,
                        "bulk:symlink-outside",
                        "directory symlink points outside the input directory",
                    )
                )
        dirnames[:] = sorted(d for d in dirnames if os.path.join(dirpath, d) != real_exclude)
        for name in sorted(filenames):
            if not name.endswith(SUFFIX) or name == SUFFIX:
                continue
            full = os.path.join(dirpath, name)
            rel = _rel(rel_dir, name)
            if os.path.islink(full):
                target = os.path.realpath(full)
                if not _inside(target, real_root):
                    refused.append(
                        Refused(rel, "bulk:symlink-outside", "symlink points outside the input directory")
                    )
                    continue
            try:
                st = os.stat(full)
            except OSError as exc:
                refused.append(Refused(rel, "bulk:unreadable", f"cannot stat: {exc.strerror or exc}"))
                continue
            if not stat.S_ISREG(st.st_mode):
                refused.append(Refused(rel, "bulk:not-a-file", "not a regular file"))
                continue
            sources.append(Source(rel, full, st.st_size, st.st_mtime_ns))
    sources.sort(key=lambda s: s.rel)
    return sources, refused


def _rel(rel_dir: str, name: str) -> str:
    parts = [*rel_dir.split(os.sep), name] if rel_dir else [name]
    return "/".join(parts)


def _refuse(rel_dir: str, name: str, code: str, message: str) -> Refused:
    return Refused(_rel(rel_dir, name), code, message)


def output_rel(rel: str, extension: str, tag: str | None = None) -> str:
    """The output's path below OUTDIR for input ``rel``: the same folders, the file's
    stem, ``.tag`` when several requested formats share an extension, then the
    extension. Raises :class:`UnsafePath` for any component that could leave OUTDIR."""
    parts = rel.split("/")
    for part in parts:
        # os.walk never yields these, but this function is the gate: check, don't assume.
        # A backslash is an ordinary character in a POSIX name, a separator on Windows.
        if part in ("", ".", "..") or "\x00" in part or any(sep and sep in part for sep in _SEPARATORS):
            raise UnsafePath(f"unsafe path component {part!r} in {rel!r}")
    stem = parts[-1][: -len(SUFFIX)] if parts[-1].endswith(SUFFIX) else parts[-1]
    ext = extension if extension.startswith(".") or not extension else "." + extension
    name = stem + (f".{tag}" if tag else "") + ext
    if len(parts) == 1 and name in RESERVED_TOP_LEVEL:
        name = stem + ".session" + (f".{tag}" if tag else "") + ext
    return "/".join([*parts[:-1], name])


def leaf_rel(rel_out: str, number: int) -> str:
    """The output path of the ``number``-th leaf (1-based) for a per-leaf format:
    ``a/b/stem.leaf-3.json`` for ``a/b/stem.json``. Only a counter is added, never an
    entry id, so session content still cannot steer the name."""
    head, _, name = rel_out.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    leaf_name = f"{stem}.leaf-{number}.{ext}" if dot and stem else f"{name}.leaf-{number}"
    return f"{head}/{leaf_name}" if head else leaf_name


def safe_join(outdir: str, rel_out: str) -> str:
    """``outdir`` joined with ``rel_out``, refusing a result whose *parent directory*
    resolves outside ``outdir`` (a symlink planted inside OUTDIR). The final component
    itself may be a symlink: ``os.replace`` replaces the link, it never writes through it."""
    real_out = os.path.realpath(outdir)
    full = os.path.join(real_out, *rel_out.split("/"))
    parent = os.path.realpath(os.path.dirname(full))
    if not _inside(parent, real_out):
        raise UnsafePath(f"{rel_out!r} would be written outside the output directory")
    return full
