"""The format registry: loads plugins with pluggy and collects their converters.

Built-in formats are entry points of the ``piconv`` distribution itself (group
``piconv``), so they register exactly the way a third-party plugin does. A plugin that
fails to import is reported and skipped; two plugins claiming one format name is an
error naming both.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import IO, TYPE_CHECKING, Any

import pluggy

from . import hookspecs
from .errors import PluginError

if TYPE_CHECKING:
    from .ir import Document
    from .report import Report
    from .stream import SessionStream

ENTRY_POINT_GROUP = "piconv"
LOAD_PLUGINS_ENV = "PICONV_LOAD_PLUGINS"
"""Comma-separated entry-point names of third-party plugins to load (empty: none);
unset loads them all. Built-in formats always load."""

CORE_PLUGINS = ("piconv.irformat", "piconv.piwrite")
"""Formats that live in the core itself (the IR dump, pi's own format); registered like any plugin."""


@dataclass(frozen=True, slots=True)
class Option:
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


@dataclass(frozen=True, slots=True)
class Converter:
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
    - ``write_stream``: optional; the same conversion from a session read entry by entry
      (see :data:`StreamWriteFunction`), for a format whose output follows the file. A
      conversion from a file then holds one entry at a time, not the whole document.
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
    write_stream: StreamWriteFunction | None = None
    plugin: str = ""
    distribution: str = ""
    version: str = ""


@dataclass(frozen=True, slots=True)
class PluginInfo:
    name: str
    distribution: str
    version: str
    hooks: tuple[str, ...]
    builtin: bool


@dataclass(slots=True)
class Registry:
    converters: dict[str, Converter] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    plugins: list[PluginInfo] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def get(self, name: str) -> Converter:
        key = self.aliases.get(name.lower(), name.lower())
        try:
            return self.converters[key]
        except KeyError:
            known = ", ".join(sorted(self.converters))
            raise PluginError(f"unknown format {name!r} (known: {known})") from None

    def formats(self) -> list[Converter]:
        return [self.converters[k] for k in sorted(self.converters)]


def _plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("piconv")
    pm.add_hookspecs(hookspecs)
    return pm


def _allowed(name: str) -> bool:
    wanted = os.environ.get(LOAD_PLUGINS_ENV)
    if wanted is None:
        return True
    return name in {w.strip() for w in wanted.split(",") if w.strip()}


def build_registry(extra_plugins: tuple[object, ...] = ()) -> Registry:
    """Load every plugin and collect its converters. ``extra_plugins`` are registered
    after the installed ones (tests and embedding applications use it)."""
    import importlib
    from importlib.metadata import entry_points

    registry = Registry()
    pm = _plugin_manager()
    sources: dict[int, tuple[str, str, str, bool]] = {}
    registered: list[object] = []

    def add(plugin: object, name: str, dist: str, version: str, builtin: bool) -> None:
        if pm.is_registered(plugin):
            return
        pm.register(plugin, name=name)
        sources[id(plugin)] = (name, dist, version, builtin)
        registered.append(plugin)

    from . import __version__

    for module_name in CORE_PLUGINS:
        add(importlib.import_module(module_name), module_name, "piconv", __version__, True)
    # built-ins (the piconv distribution) first, so a third party clashing with one is named second
    eps = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (not (e.dist and e.dist.name == "piconv"), e.name))
    for ep in eps:
        dist = ep.dist.name if ep.dist else "?"
        builtin = dist == "piconv"
        if not builtin and not _allowed(ep.name):
            continue
        try:
            plugin = ep.load()
        except Exception as exc:  # a broken plugin must not take the tool down
            registry.failures.append(f"plugin {ep.name!r} ({dist}) failed to load: {type(exc).__name__}: {exc}")
            continue
        add(plugin, ep.name, dist, ep.dist.version if ep.dist else "?", builtin)
    for plugin in extra_plugins:
        name = getattr(plugin, "__name__", type(plugin).__name__)
        add(plugin, name, "-", "-", False)
    pm.check_pending()

    for plugin in registered:  # registration order: core, built-ins, then third parties
        name, dist, version, builtin = sources[id(plugin)]
        hooks = tuple(sorted(h.name for h in pm.get_hookcallers(plugin) or ()))
        registry.plugins.append(PluginInfo(name, dist, version, hooks, builtin))
        impl = getattr(plugin, "register_converters", None)
        if impl is None:
            continue

        def register(converter: Converter, _name: str = name, _dist: str = dist, _ver: str = version) -> None:
            _register(registry, replace(converter, plugin=_name, distribution=_dist, version=_ver))

        try:
            impl(register=register)
        except PluginError:
            raise
        except Exception as exc:
            registry.failures.append(f"plugin {name!r} failed to register: {type(exc).__name__}: {exc}")
    registry.plugins.sort(key=lambda p: (not p.builtin, p.name))
    return registry


def _register(registry: Registry, converter: Converter) -> None:
    for key in (converter.name, *converter.aliases):
        key = key.lower()
        owner = registry.converters.get(registry.aliases.get(key, key))
        if owner is not None:
            raise PluginError(
                f"format name {key!r} is registered twice: by plugin {owner.plugin!r} "
                f"({owner.distribution}) and by plugin {converter.plugin!r} ({converter.distribution})"
            )
    registry.converters[converter.name.lower()] = converter
    for alias in converter.aliases:
        registry.aliases[alias.lower()] = converter.name.lower()


_cached: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _cached
    if _cached is None:
        _cached = build_registry()
        for failure in _cached.failures:
            print(f"piconv: warning: {failure}", file=sys.stderr)
    return _cached
