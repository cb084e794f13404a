"""What an output format declares: :class:`Converter`, its command-line :class:`Option`
s, the :class:`Archive` a format that writes one file for a whole directory run
provides, and the pages it may draw (:class:`IndexPage`, :class:`DiffPage`). The
registry (:mod:`piconv.registry`) keeps the registered ones."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, Protocol

from .records import Frozen, frozen

if TYPE_CHECKING:
    from .compare.model import SessionDiff
    from .facts.summary import ListedSession
    from .ir import Document
    from .report import Report


@frozen
class Option(Frozen):
    """A command-line option a converter accepts. ``flag`` is the long option
    (``--images``); the value reaches ``Converter.write`` under ``dest`` (default: the
    flag without dashes, ``-`` → ``_``)."""

    flag: str
    help: str
    takes_value: bool = True
    choices: tuple[str, ...] | None = None
    default: Any = None
    repeatable: bool = False
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


CheckFunction = Callable[[bytes], list[str]]
"""Validates one output: returns problems as ``"line N: message"`` strings (empty: valid)."""

WriteFunction = Callable[["Document", IO[bytes], Mapping[str, Any], "Report"], None]
"""Writes ``document`` to the binary stream; options by ``Option.dest``; records losses."""

DirectoryFunction = Callable[["Document", str, Mapping[str, Any], "Report"], None]
"""Writes ``document`` as files into the directory (which exists); options as for
:data:`WriteFunction`; validates each file itself when ``options["validate"]``."""


class ArchiveStore(Protocol):
    """An open archive file in the process that runs a directory conversion."""

    notes: list[str]
    """What the store had to do on opening (an unreadable file moved aside), for the user."""

    def keys(self) -> Mapping[str, str | None]:
        """Every session in the archive: its key and the SHA-256 of its source file."""

    def add(self, key: str, payload: bytes, sha256: str | None, links: Mapping[str, str]) -> None:
        """Put one session in (replacing an older version of it) atomically. ``links`` maps
        a format name to the session's output of that format, relative to the archive."""

    def close(self) -> Mapping[str, bytes]:
        """Finish; returns files to write beside the archive (name -> bytes).

        Optional: ``idle()``, called once the run has read :meth:`keys` and before any task
        runs: close what a process forked from this one must not inherit (an open database);
        ``add`` and ``close`` may open it again."""


class IndexPage(Protocol):
    """A format's page for a directory run: one file at the top of the output directory
    listing the run's sessions (see docs/plugins.md)."""

    file_name: str
    """The page's name at the top of the output directory."""

    def render(self, projects: Mapping[str, Sequence[ListedSession]], output_dir: str) -> bytes:
        """The page: ``projects`` maps each project's name (sorted case-insensitively) to
        its sessions with an output of this format, newest first; ``output_dir`` is the
        directory the page is written to (its links are relative to it)."""

    def owns(self, existing: bytes) -> bool:
        """Whether ``existing``, the bytes of a file at the page's place, is a page this
        format wrote (then it is replaced; any other file stays, unless ``--overwrite``)."""


class DiffPage(Protocol):
    """A format's page of ``piconv diff --to FORMAT``: two conversations side by side
    (see docs/plugins.md)."""

    def render(self, diff: SessionDiff) -> bytes:
        """The page showing ``diff``. Every string in it comes from a session: escape it
        for the page's language."""


class Archive(Protocol):
    """What a format needs for a directory run to write it as one file (see docs/plugins.md).

    Optional: ``usage(path)`` gives each session's row and the calls it counts, for
    ``piconv stats --archive`` (see docs/plugins.md). ``put(path, key, document, options, report, sha256, links)`` puts one session
    into the archive at ``path`` from the worker process itself, atomically, waiting while
    another process writes (the local executor calls it; without it, or on Dask, the
    payload goes to the parent's store); ``release()`` closes what ``put`` keeps open in
    this process."""

    file_name: str
    """The archive's name at the top of the output directory."""

    def payload(self, document: Document, options: Mapping[str, Any], report: Report) -> bytes:
        """One session's contribution, made in the worker process."""

    def open(self, path: str) -> ArchiveStore:
        """The archive at ``path``, created if missing, checked and brought up to date."""

    def search(
        self, path: str, query: str, filters: Mapping[str, Any] | None = None, limit: int = 20
    ) -> list[dict[str, Any]]:
        """The best ``limit`` hits for ``query`` (``piconv search``)."""


@frozen
class Converter(Frozen):
    """An output format.

    - ``name``: what ``--to`` takes; ``aliases`` are accepted too.
    - ``summary``: one line for ``--list-formats``.
    - ``extension`` / ``media_type``: of the output file.
    - ``write``: the conversion (see :data:`WriteFunction`).
    - ``check``: validates an output (see :data:`CheckFunction`); a JSON Schema shipped as
      package data is wrapped by :func:`piconv.validation.json_schema_check`.
    - ``mapping_doc``: the document saying field by field what maps where and what is lost.
    - ``options``: extra command-line options.
    - ``per_leaf``: the format describes one leaf of the tree (a request as the model
      saw it, say): a directory conversion writes one output per leaf,
      ``<stem>.leaf-<n><extension>`` numbered in :meth:`Document.leaves` order, each with
      ``options["leaf"]`` set. A single conversion writes the leaf ``--leaf`` names.
    - ``checks_while_writing``: ``write`` validates each piece as it writes it (when
      ``options["validate"]`` is true) and raises :class:`piconv.ValidationFailed`; the
      caller then does not run ``check`` over the whole output again. ``check`` stays the
      checker for ``piconv validate``.
    - ``takes_leaf``: the format writes one path or one leaf and honours
      ``options["leaf"]`` (the default); ``False`` for a format that always writes the
      whole tree, for which a ``leaf`` is refused with :class:`piconv.UsageError`.
    - ``archive``: optional; an :class:`Archive`: a directory run writes this format as
      one file for the whole archive (a database) instead of one output per session.
    - ``index``: optional; an :class:`IndexPage`: a directory run writes this format's
      page listing its sessions at the top of the output directory.
    - ``write_directory``: optional; a :data:`DirectoryFunction`: a single conversion
      whose output names a directory (``-o DIR/``) writes the session as several files
      into it (ATIF: one trajectory per leaf) instead of one output.
    - ``source_lines``: what the format needs of how the input's lines were spelled, to
      give an unchanged line back byte for byte: ``"bytes"`` (each line's bytes) or
      ``"layout"`` (each line's member order, :func:`piconv.jsonl.layout_of`, the
      bytes only where that cannot say them); the reader is asked to keep it
      (``keep_source``, :attr:`piconv.ir.Document.source_lines`). ``None``: nothing.
    - ``diff``: optional; a :class:`DiffPage`: ``piconv diff --to NAME`` draws two
      conversations side by side in this format.
    - ``plugin`` / ``distribution`` / ``version``: filled in by the registry.
    """

    name: str
    summary: str
    extension: str
    media_type: str
    write: WriteFunction
    check: CheckFunction | None = None
    mapping_doc: str = ""
    aliases: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
    per_leaf: bool = False
    checks_while_writing: bool = False
    takes_leaf: bool = True
    archive: Archive | None = None
    index: IndexPage | None = None
    write_directory: DirectoryFunction | None = None
    source_lines: str | None = None
    diff: DiffPage | None = None
    plugin: str = ""
    distribution: str = ""
    version: str = ""
