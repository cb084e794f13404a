"""The format registry: what a converter declares (:class:`Converter`, :class:`Option`)
and the table of registered formats.

The formats come from plugins through the ``register_converters`` hook
(:mod:`piconv.plugins` finds the plugins and dispatches it). Problems with a plugin are
never fatal: each is kept in :attr:`Registry.failures` and issued once as a
:class:`PluginWarning`; the command line prints them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, Protocol

from .errors import PluginError
from .records import Frozen, frozen

if TYPE_CHECKING:
    from .filters import Filter
    from .ir import Document
    from .listing import ListedSession
    from .plugins import PluginInfo
    from .readers import Reader
    from .report import Report
    from .stream import SessionStream


class PluginWarning(UserWarning):
    """A plugin could not be used (it failed to import, misspelled a hook, raised, or
    clashed on a format name); it was skipped and everything else works."""


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

StreamWriteFunction = Callable[["SessionStream", IO[bytes], Mapping[str, Any], "Report"], None]
"""Writes a session read entry by entry (:class:`piconv.stream.SessionStream`): the same
output ``write`` makes of the whole document. It may raise
:class:`piconv.stream.NeedsWholeSession` (iterating the stream does so for an irregular
file); the caller then discards what was written and calls ``write``."""


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


class Archive(Protocol):
    """What a format needs for a directory run to write it as one file (see docs/plugins.md).

    Optional: ``put(path, key, document, options, report, sha256, links)`` puts one session
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
    - ``write_stream``: optional; the same conversion from a session read entry by entry
      (see :data:`StreamWriteFunction`), for a format whose output follows the file. A
      conversion from a file then holds one entry at a time, not the whole document.
    - ``archive``: optional; an :class:`Archive`: a directory run writes this format as
      one file for the whole archive (a database) instead of one output per session.
    - ``index``: optional; an :class:`IndexPage`: a directory run writes this format's
      page listing its sessions at the top of the output directory.
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
    write_stream: StreamWriteFunction | None = None
    archive: Archive | None = None
    index: IndexPage | None = None
    plugin: str = ""
    distribution: str = ""
    version: str = ""


class Registry:
    """The registered formats. Third-party plugins load the first time a name is not
    among the formats already registered, or the whole list is asked for."""

    def __init__(self, *, third_party_pending: bool) -> None:
        from .filters import Filter
        from .nametable import NameTable
        from .plugins import PluginSet
        from .readers import Reader

        self.failures: list[str] = []
        self._plugins = PluginSet(self.fail)
        self._third_party_pending = third_party_pending
        self.output: NameTable[Converter] = NameTable("format", Converter, self._plugins, self.fail)
        """The output formats (``register_converters``)."""
        self.input: NameTable[Reader] = NameTable("reader", Reader, self._plugins, self.fail)
        """The input formats (``register_readers``)."""
        self.filter_table: NameTable[Filter] = NameTable("filter", Filter, self._plugins, self.fail)
        """The filters (``register_filters``)."""

    @property
    def converters(self) -> dict[str, Converter]:
        """Output formats by lower-case name."""
        return self.output.items

    @property
    def filters(self) -> dict[str, Filter]:
        """Filters by lower-case name."""
        return self.filter_table.items

    def reader(self, name: str) -> Reader:
        """The input format called ``name`` (or one of its aliases), case-insensitive."""
        found = self.input.find(name)
        if found is None and self._load_third_party():
            found = self.input.find(name)
        if found is None:
            raise PluginError(f"unknown input format {name!r} (known: {self.input.names()})")
        return found

    def readers(self, *, third_party: bool = True) -> list[Reader]:
        """Every registered input format, by name (without ``third_party``: those
        registered so far, the installed plugins not loaded for them)."""
        if third_party:
            self._load_third_party()
        return self.input.all()

    @property
    def plugins(self) -> list[PluginInfo]:
        """Every loaded plugin, built-ins first."""
        self._load_third_party()
        return sorted(self._plugins.infos, key=lambda p: (not p.builtin, p.name))

    def get(self, name: str) -> Converter:
        """The format called ``name`` (or one of its aliases), case-insensitive."""
        found = self.output.find(name)
        if found is None and self._load_third_party():
            found = self.output.find(name)
        if found is None:
            raise PluginError(f"unknown format {name!r} (known: {self.output.names()})")
        return found

    def formats(self) -> list[Converter]:
        """Every registered format, by name."""
        self._load_third_party()
        return self.output.all()

    def fail(self, message: str) -> None:
        self.failures.append(message)
        warnings.warn(message, PluginWarning, stacklevel=2)

    def get_filter(self, name: str) -> Filter:
        """The filter called ``name`` (case-insensitive)."""
        found = self.filter_table.find(name)
        if found is None and self._load_third_party():
            found = self.filter_table.find(name)
        if found is None:
            raise PluginError(f"unknown filter {name!r} (known: {self.filter_table.names()})")
        return found

    def _load_third_party(self) -> bool:
        """Loads the third-party plugins once; True when that registered any."""
        if not self._third_party_pending:
            return False
        self._third_party_pending = False
        from .plugins import load_third_party

        added = load_third_party(self._plugins, self.fail)
        if added:
            relay = self._plugins.only(added)
            self.dispatch(relay)
        return bool(added)

    def dispatch(self, hooks: Any) -> None:
        """Calls each registering hook of ``hooks`` (pluggy's hook relay, or one limited to
        some plugins) and enters what it registered, kind by kind."""
        for table, hook in (
            (self.output, hooks.register_converters),
            (self.filter_table, hooks.register_filters),
            (self.input, hooks.register_readers),
        ):
            hook(register=table.register)
            table.settle()


def build_registry(extra_plugins: tuple[object, ...] = (), *, third_party: bool = True) -> Registry:
    """A new registry: the built-in formats, then ``extra_plugins`` (tests and embedding
    applications use it), then, when first needed and ``third_party`` allows, the
    installed third-party plugins."""
    from .plugins import Origin, load_builtins

    registry = Registry(third_party_pending=third_party)
    plugins = registry._plugins
    load_builtins(plugins)
    for plugin in extra_plugins:
        name = getattr(plugin, "__name__", type(plugin).__name__)
        plugins.add(plugin, Origin(name, "-", "-"), builtin=False)
    registry.dispatch(plugins.manager.hook)
    return registry


_cached: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _cached
    if _cached is None:
        _cached = build_registry()
    return _cached
