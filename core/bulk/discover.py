"""Discovery: which session files a directory holds, and where each one's outputs go.

Output paths are derived from the *relative input path* alone (never from session
content), and every derived path is checked to stay inside the output directory. A
symlink is followed only when its target stays inside the input root; one that points
outside is refused and reported, so a planted link cannot make piconv read (and publish)
a file the user did not put in the archive.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
from dataclasses import dataclass
from typing import BinaryIO

from ..output import inside

SUFFIX = ".jsonl"

RESERVED_TOP_LEVEL = frozenset(
    {
        "index.html",
        "index.md",
        ".piconv-manifest.jsonl",
        ".piconv-lock",
        "archive.db",
        "archive.metadata.json",
    }
)
"""Names the bulk run writes at the top of OUTDIR (its own files, the built-in formats'
pages and archive); a session's output never takes them (``--to pi`` of an input named
``.piconv-manifest.jsonl`` would replace the manifest). A run adds the page names its
formats declare (``Converter.index``)."""


@dataclass(frozen=True, slots=True)
class Source:
    """One session file: ``rel`` is its path below the input root with ``/`` separators;
    ``open_rel`` the real file's (a symlink's resolved target, itself below the root),
    which the worker opens without following any link (:func:`open_session`)."""

    rel: str
    path: str
    size: int
    mtime_ns: int
    open_rel: str = ""


@dataclass(frozen=True, slots=True)
class Refused:
    """An entry under the input root that is not converted, and why (a stable code)."""

    rel: str
    code: str
    message: str


_SEPARATORS = (os.sep, os.altsep)


class UnsafePath(ValueError):
    """A derived output path would leave the output directory."""

    code = "bulk:unsafe-path"


class NotOurs(UnsafePath):
    """A file is where an output would go, piconv's manifest does not record it as an
    output, and it holds other bytes than piconv would write there: someone else's."""

    code = "bulk:output-exists"


class OutputInInput(UnsafePath):
    """A derived output path lies in the input tree (OUTDIR around the input): writing
    it could replace an input, and a later run would take it for one."""

    code = "bulk:output-in-input"


class NotASession(OSError):
    """What the worker was to open is no longer a regular file (swapped after the scan)."""


PIPED_SUBAGENTS = "subagent-artifacts"
"""pi-subagents' folder beside a project's sessions: ``<runId>_<agent>.jsonl`` per run."""
_RUN_DIR = re.compile(r"^run-[0-9]+$")
OWN_MARKERS = (".piconv-manifest.jsonl", ".piconv-lock")
"""Files only a piconv run writes at the top of its OUTDIR: a folder holding one is
piconv's output, never read as input."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file (or folder) under the input root that is not a session and is passed over,
    as pi passes over it: listed in the summary, never a failure. ``code``: ``empty``,
    ``not-a-session``, ``piconv-output``."""

    rel: str
    code: str
    message: str


def layout_of(rel: str) -> str:
    """Where ``rel`` sits in pi's layout: ``session`` (``F.jsonl`` or ``PROJECT/F.jsonl``),
    ``subagent`` (pi-subagents' ``[PROJECT/]subagent-artifacts/F.jsonl`` or
    ``[PROJECT/]STEM/RUN/run-N/F.jsonl``) or ``""`` (anywhere else: ``--recursive`` only)."""
    parts = rel.split("/")
    if len(parts) <= 2 and parts[0] != PIPED_SUBAGENTS:
        return "session"
    if parts[-2] == PIPED_SUBAGENTS and len(parts) <= 3:
        return "subagent"
    if len(parts) in (4, 5) and _RUN_DIR.match(parts[-2]):
        return "subagent"
    return ""


def _may_hold_sessions(rel_dir: str) -> bool:
    """Whether pi's layout can have a session file below the folder ``rel_dir`` (not
    walked otherwise): a project folder, pi-subagents' artifacts folder, or the folders
    of a subagent's run (``STEM/RUN/run-N``, in a project or at the top)."""
    parts = rel_dir.split("/")
    if len(parts) <= 2:
        return True  # PROJECT, PROJECT/subagent-artifacts, STEM/RUN or PROJECT/STEM
    if len(parts) == 3:
        return True  # STEM/RUN/run-N or PROJECT/STEM/RUN
    return len(parts) == 4 and _RUN_DIR.match(parts[3]) is not None  # PROJECT/STEM/RUN/run-N


def discover(
    root: str, exclude: str | None = None, recursive: bool = False
) -> tuple[list[Source], list[Refused], list[Skipped]]:
    """The candidate session files below ``root`` (sorted by relative path), as pi lists
    them: ``*.jsonl`` at the top and one folder down (``PROJECT/*.jsonl``), and the
    subagent sessions of pi-subagents' layouts (:func:`layout_of`); with ``recursive``,
    every ``*.jsonl`` below. Whether each is a session is decided from its first line
    (:mod:`.sniff`). ``exclude`` is a directory not to descend into (the output
    directory, when it sits inside the input); neither is any folder holding a piconv
    run's own files (an earlier run's OUTDIR: its outputs are never inputs).

    Directory symlinks are not descended into: one pointing outside is refused, one
    pointing inside would only list the same files twice. File symlinks are followed
    when their resolved target is inside ``root``.
    """
    real_root = os.path.realpath(root)
    real_exclude = os.path.realpath(exclude) if exclude else None
    sources: list[Source] = []
    refused: list[Refused] = []
    skipped: list[Skipped] = []
    for dirpath, dirnames, filenames in os.walk(real_root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, real_root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        if _holds_a_run(dirpath, filenames):
            dirnames[:] = []
            skipped.append(
                Skipped(rel_dir or ".", "piconv-output", "a piconv run's output directory: not read as input")
            )
            continue
        for name in sorted(dirnames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full) and not inside(os.path.realpath(full), real_root):
                refused.append(
                    _refuse(
                        rel_dir,
                        name,
                        "bulk:symlink-outside",
                        "directory symlink points outside the input directory",
                    )
                )
        dirnames[:] = sorted(
            d
            for d in dirnames
            if os.path.join(dirpath, d) != real_exclude
            and (recursive or _may_hold_sessions(_rel(rel_dir, d)))
        )
        for name in sorted(filenames):
            if not name.endswith(SUFFIX) or name == SUFFIX:
                continue
            rel = _rel(rel_dir, name)
            if not recursive and not layout_of(rel):
                continue
            full = os.path.join(dirpath, name)
            open_rel = rel
            if os.path.islink(full):
                target = os.path.realpath(full)
                if not inside(target, real_root):
                    refused.append(
                        Refused(rel, "bulk:symlink-outside", "symlink points outside the input directory")
                    )
                    continue
                open_rel = os.path.relpath(target, real_root).replace(os.sep, "/")
            try:
                st = os.stat(full)
            except OSError as exc:
                refused.append(Refused(rel, "bulk:unreadable", f"cannot stat: {exc.strerror or exc}"))
                continue
            if not stat.S_ISREG(st.st_mode):
                refused.append(Refused(rel, "bulk:not-a-file", "not a regular file"))
                continue
            sources.append(Source(rel, full, st.st_size, st.st_mtime_ns, open_rel))
    sources.sort(key=lambda s: s.rel)
    return sources, refused, skipped


def _holds_a_run(dirpath: str, filenames: list[str]) -> bool:
    """Whether the folder is a piconv run's OUTDIR: it holds the run's lock file, or a
    manifest whose first line is a manifest record (a session file that happens to be
    called ``.piconv-manifest.jsonl`` is still a session)."""
    if OWN_MARKERS[1] in filenames:
        return True
    if OWN_MARKERS[0] not in filenames:
        return False
    try:
        with open(os.path.join(dirpath, OWN_MARKERS[0]), "rb", buffering=0) as fh:
            first = fh.read(4096).split(b"\n", 1)[0]
        value = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(value, dict) and isinstance(value.get("input"), str) and "v" in value


def _rel(rel_dir: str, name: str) -> str:
    return f"{rel_dir}/{name}" if rel_dir else name


def _refuse(rel_dir: str, name: str, code: str, message: str) -> Refused:
    return Refused(_rel(rel_dir, name), code, message)


def output_rel(
    rel: str, extension: str, tag: str | None = None, reserved: frozenset[str] = RESERVED_TOP_LEVEL
) -> str:
    """The output's path below OUTDIR for input ``rel``: the same folders, the file's
    stem, ``.tag`` when several requested formats share an extension, then the
    extension; ``.session`` before them where the name is one of the ``reserved`` at the
    top. Raises :class:`UnsafePath` for any component that could leave OUTDIR."""
    parts = rel.split("/")
    for part in parts:
        # os.walk never yields these, but this function is the gate: check, don't assume.
        # A backslash is an ordinary character in a POSIX name, a separator on Windows.
        if part in ("", ".", "..") or "\x00" in part or any(sep and sep in part for sep in _SEPARATORS):
            raise UnsafePath(f"unsafe path component {part!r} in {rel!r}")
    stem = parts[-1][: -len(SUFFIX)] if parts[-1].endswith(SUFFIX) else parts[-1]
    ext = extension if extension.startswith(".") or not extension else "." + extension
    name = stem + (f".{tag}" if tag else "") + ext
    if len(parts) == 1 and name in reserved:
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


def input_guard(real_in: str, real_out: str) -> str | None:
    """The input tree outputs must stay out of, or None when OUTDIR sits inside the
    input (then every output is below OUTDIR, which discovery does not scan)."""
    return None if inside(real_out, real_in) else real_in


def safe_join(outdir: str, rel_out: str, guard: str | None = None) -> str:
    """``outdir`` joined with ``rel_out``, refusing a result whose *parent directory*
    resolves outside ``outdir`` (a symlink planted inside OUTDIR) or inside ``guard``
    (the input tree, see :func:`input_guard`). The final component itself may be a
    symlink: ``os.replace`` replaces the link, it never writes through it."""
    real_out = os.path.realpath(outdir)
    full = os.path.join(real_out, *rel_out.split("/"))
    parent = os.path.realpath(os.path.dirname(full))
    if not inside(parent, real_out):
        raise UnsafePath(f"{rel_out!r} would be written outside the output directory")
    if guard is not None and inside(parent, guard):
        raise OutputInInput(f"{rel_out!r} would be written inside the input directory")
    return full


def open_session(root: str, rel: str) -> BinaryIO:
    """``root/rel`` opened for reading, checked when opened rather than trusted from the
    scan: no component below ``root`` may be a symlink (``O_NOFOLLOW`` on each, from a
    directory descriptor), a FIFO does not block (``O_NONBLOCK``), and anything but a
    regular file (``fstat``) raises :class:`NotASession`. A file swapped for a link to
    a private file, or for a pipe, after the scan is therefore refused, not read."""
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    parts = rel.split("/")
    try:
        if os.open in os.supports_dir_fd:
            dirfd = os.open(root, flags | getattr(os, "O_DIRECTORY", 0))
            try:
                for part in parts[:-1]:
                    fd = os.open(part, flags | os.O_DIRECTORY | nofollow, dir_fd=dirfd)
                    os.close(dirfd)
                    dirfd = fd
                fd = os.open(parts[-1], flags | nofollow | os.O_NONBLOCK, dir_fd=dirfd)
            finally:
                os.close(dirfd)
        else:  # no descriptor-relative open (Windows): the last component is still checked
            fd = os.open(os.path.join(root, *parts), flags | nofollow | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotASession(exc.errno, "a symlink appeared after the scan; not followed") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotASession(errno.EINVAL, "not a regular file (changed after the scan)")
    # O_NONBLOCK has no effect on reading a regular file, so it stays set.
    return os.fdopen(fd, "rb")


class NamedBytes(io.BytesIO):
    """A session file's bytes with the file's name, so a document parsed from memory (the
    bytes read once, to hash or scan them too) keeps its source path."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name
