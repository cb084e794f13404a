"""The registry: the tables of registered output formats, readers and filters.

What each declares is in :mod:`piconv.outputformat` (:class:`Converter`, :class:`Option`),
:mod:`piconv.inputformat` (:class:`Reader`) and :mod:`piconv.filters` (:class:`Filter`);
``Converter`` and ``Option`` are named here too, where plugins have always found them.

The formats come from plugins through the ``register_converters`` hook
(:mod:`piconv.plugins` finds the plugins and dispatches it). Problems with a plugin are
never fatal: each is kept in :attr:`Registry.failures` and issued once as a
:class:`PluginWarning`; the command line prints them.
"""

from __future__ import annotations

import warnings
from typing import Any

from .errors import PluginError
from .filters import Filter
from .inputformat import Reader
from .nametable import NameTable
from .outputformat import Archive, ArchiveStore, Converter, DiffPage, IndexPage, Option
from .plugins import Origin, PluginInfo, PluginSet, load_builtins, load_third_party

__all__ = [
    "Archive",
    "ArchiveStore",
    "Converter",
    "DiffPage",
    "IndexPage",
    "Option",
    "PluginWarning",
    "Registry",
    "build_registry",
    "get_registry",
]


class PluginWarning(UserWarning):
    """A plugin could not be used (it failed to import, misspelled a hook, raised, or
    clashed on a format name); it was skipped and everything else works."""


class Registry:
    """The registered formats. Third-party plugins load the first time a name is not
    among the formats already registered, or the whole list is asked for."""

    def __init__(self, *, third_party_pending: bool) -> None:
        from .filters import Filter
        from .inputformat import Reader
        from .nametable import NameTable

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
