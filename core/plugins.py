"""Finding plugins and dispatching their hooks through pluggy.

The built-in formats are default plugins, registered by module name (as simonw/llm does),
so a conversion to a built-in format never scans the installed distributions. Third-party
plugins are the ``piconv`` entry points of other distributions, loaded the first time
something asks for a format the built-ins lack, or for the whole list.

A plugin that fails to import, declares a hook piconv does not have (a misspelling),
takes arguments its hook does not offer, raises from a hook, or needs a newer plugin
interface is recorded as a failure and skipped; everything else keeps working.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import types
from collections.abc import Callable, Iterator
from typing import Any

import pluggy

from . import hookspecs
from .records import Frozen, frozen
from .version import __version__

ENTRY_POINT_GROUP = "piconv"
LOAD_PLUGINS_ENV = "PICONV_LOAD_PLUGINS"
"""Comma-separated names of third-party plugins to load, as entry-point names or
distribution names (empty: none); unset loads them all. Built-in formats always load."""

BUILTIN_PLUGINS = (
    "piconv.irformat",
    "piconv.pi.write",
    "piconv.pi.read",
    "piconv.converters.asf",
    "piconv.converters.asf.read",
    "piconv.converters.openai",
    "piconv.converters.markdown",
    "piconv.converters.html",
    "piconv.redaction.hooks",
    "piconv.detail.hooks",
    "piconv.converters.sqlite",
    "piconv.converters.atif",
)


@frozen
class PluginInfo(Frozen):
    """A loaded plugin: its name, where it came from and the hooks it implements."""

    name: str
    distribution: str
    version: str
    hooks: tuple[str, ...]
    builtin: bool


@frozen
class Origin(Frozen):
    """Who is registering: filled into every converter a plugin registers."""

    plugin: str
    distribution: str
    version: str


Failure = Callable[[str], None]


class _StandIn:
    """Holds a plugin's guarded hook implementations (hashable, as pluggy needs)."""

    def __dir__(self) -> list[str]:
        # pluggy inspects every name ``dir`` gives; the hooks are all there is to find.
        return list(vars(self))


class PluginSet:
    """One pluggy manager and the plugins registered with it, each hook call guarded so
    that one plugin's exception skips that plugin alone."""

    def __init__(self, on_failure: Failure) -> None:
        self.manager = pluggy.PluginManager("piconv")
        self.manager.add_hookspecs(hookspecs)
        self.infos: list[PluginInfo] = []
        self.calling: Origin | None = None
        """The plugin whose hook implementation is running (read by ``register``)."""
        self.on_failure = on_failure
        self._known = {name for name in dir(hookspecs) if self.manager.parse_hookspec_opts(hookspecs, name)}

    def add(self, plugin: object, origin: Origin, builtin: bool) -> bool:
        """Registers ``plugin``; False (and a failure reported) when it cannot be used."""
        implemented = {}  # attribute -> the hook it implements (pluggy's specname, else its name)
        wrappers = set()  # pluggy's wrappers are generators: registered as they are
        for name in _candidates(plugin, f"{self.manager.project_name}_impl"):
            opts = self.manager.parse_hookimpl_opts(plugin, name)
            if opts is not None:
                implemented[name] = opts.get("specname") or name
                if opts.get("wrapper") or opts.get("hookwrapper"):
                    wrappers.add(name)
        unknown = sorted(set(implemented.values()) - self._known)
        if unknown:
            known = ", ".join(sorted(self._known))
            self.on_failure(
                f"plugin {origin.plugin!r} ({origin.distribution}) skipped: {', '.join(unknown)} "
                f"is not a piconv hook (known: {known})"
            )
            return False
        wanted = getattr(plugin, "PICONV_PLUGIN_API", 1)
        if not isinstance(wanted, int) or wanted > hookspecs.PLUGIN_API_VERSION:
            self.on_failure(
                f"plugin {origin.plugin!r} ({origin.distribution}) skipped: it needs plugin interface "
                f"{wanted!r}, piconv {__version__} has {hookspecs.PLUGIN_API_VERSION}"
            )
            return False
        guarded = self._guard(plugin, implemented, wrappers, origin)
        try:
            self.manager.register(guarded, name=origin.plugin)
        except Exception as exc:  # pluggy's PluginValidationError, or a name registered twice
            reason = " ".join(str(exc).split())
            self.on_failure(f"plugin {origin.plugin!r} ({origin.distribution}) skipped: {reason}")
            return False
        self.infos.append(
            PluginInfo(
                origin.plugin,
                origin.distribution,
                origin.version,
                tuple(sorted(set(implemented.values()))),
                builtin,
            )
        )
        return True

    def _guard(
        self, plugin: object, implemented: dict[str, str], wrappers: set[str], origin: Origin
    ) -> object:
        """A stand-in for ``plugin`` whose hook implementations record who is calling and
        turn an exception into a reported failure. Signatures and hookimpl options are
        the plugin's own (``functools.wraps`` keeps both), so pluggy sees no difference."""
        stand_in = _StandIn()
        for name, hook in implemented.items():
            impl = getattr(plugin, name)
            setattr(stand_in, name, impl if name in wrappers else self._guarded_call(impl, hook, origin))
        return stand_in

    def _guarded_call(self, impl: Callable[..., Any], hook: str, origin: Origin) -> Callable[..., Any]:
        @functools.wraps(impl)
        def call(*args: Any, **kwargs: Any) -> Any:
            outer, self.calling = self.calling, origin
            try:
                return impl(*args, **kwargs)
            except (Exception, SystemExit) as exc:  # a plugin does not end piconv
                self.on_failure(
                    f"plugin {origin.plugin!r} ({origin.distribution}): {hook} failed: {type(exc).__name__}: {exc}"
                )
                return None
            finally:
                self.calling = outer

        return call

    def only(self, origins: set[str]) -> pluggy.HookRelay:
        """The hooks of the plugins named ``origins`` alone (a batch loaded later)."""
        others = [p for name, p in self.manager.list_name_plugin() if name not in origins]
        relay = types.SimpleNamespace()
        for hook in self._known:
            setattr(relay, hook, self.manager.subset_hook_caller(hook, remove_plugins=others))
        return relay  # type: ignore[return-value]


def _candidates(plugin: object, marker: str) -> list[str]:
    """The names pluggy could take for hook implementations. For a module, only its
    routines that carry the marker: pluggy's own check of every attribute of a module
    costs more than the rest of registering it."""
    if not isinstance(plugin, types.ModuleType):
        return dir(plugin)
    return [
        name
        for name, value in vars(plugin).items()
        if inspect.isroutine(value) and getattr(value, marker, None) is not None
    ]


def load_builtins(plugins: PluginSet) -> None:
    for module_name in BUILTIN_PLUGINS:
        plugins.add(
            importlib.import_module(module_name), Origin(module_name, "piconv", __version__), builtin=True
        )


def _wanted() -> set[str] | None:
    value = os.environ.get(LOAD_PLUGINS_ENV)
    if value is None:
        return None
    return {name.strip().lower() for name in value.split(",") if name.strip()}


def third_party_entry_points() -> Iterator[tuple[Any, str, str]]:
    """``(entry point, distribution name, version)`` of every third-party plugin to load,
    in a stable order."""
    wanted = _wanted()
    if wanted is not None and not wanted:
        return
    from importlib.metadata import entry_points

    found = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist is not None else "?"
        if dist == "piconv":
            continue  # the built-ins, already registered by module name
        if wanted is not None and ep.name.lower() not in wanted and dist.lower() not in wanted:
            continue
        found.append((ep, dist, ep.dist.version if ep.dist is not None else "?"))
    yield from sorted(found, key=lambda item: (item[1].lower(), item[0].name))


def load_third_party(plugins: PluginSet, on_failure: Failure) -> set[str]:
    """Imports and registers the third-party plugins; returns the names registered."""
    added = set()
    for ep, dist, version in third_party_entry_points():
        try:
            module = ep.load()
        except (
            Exception,
            SystemExit,
        ) as exc:  # a broken plugin (one that exits too) must not take the tool down
            on_failure(f"plugin {ep.name!r} ({dist}) failed to load: {type(exc).__name__}: {exc}")
            continue
        if plugins.add(module, Origin(ep.name, dist, version), builtin=False):
            added.add(ep.name)
    return added
