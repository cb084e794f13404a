"""Named declarations that plugins register: output formats, readers, filters.

Each kind is collected while its hook runs and entered once the hook call has returned,
in plugin order (built-ins first, whatever order pluggy called the hooks in), so a name or
alias goes to the first plugin that claims it and every later claim is reported and
skipped. Names are case-insensitive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .records import replace

if TYPE_CHECKING:
    from .plugins import PluginSet

__all__ = ["NameTable"]

T = TypeVar("T")


class NameTable(Generic[T]):
    """The registered declarations of one kind (``"format"``, ``"reader"``, ``"filter"``),
    each a frozen record with ``name``, optionally ``aliases``, and the ``plugin`` /
    ``distribution`` / ``version`` fields the table fills in."""

    def __init__(self, kind: str, cls: type[T], plugins: PluginSet, fail: Callable[[str], None]) -> None:
        self.kind = kind
        self.items: dict[str, T] = {}
        self.aliases: dict[str, str] = {}
        self._cls = cls
        self._plugins = plugins
        self._fail = fail
        self._pending: list[T] = []

    def register(self, item: T) -> None:
        """The ``register`` callback handed to the kind's hook: collects ``item``;
        :meth:`settle` enters it."""
        origin = self._plugins.calling
        if not isinstance(item, self._cls):
            who = f"plugin {origin.plugin!r} ({origin.distribution})" if origin else "a plugin"
            self._fail(
                f"{who} registered {type(item).__name__} as a {self.kind}; it is skipped "
                f"(a piconv.{self._cls.__name__} is needed)"
            )
            return
        if origin is not None:
            item = replace(  # type: ignore[type-var]
                item, plugin=origin.plugin, distribution=origin.distribution, version=origin.version
            )
        self._pending.append(item)

    def settle(self) -> None:
        """Enters the collected declarations in plugin order."""
        order = {info.name: n for n, info in enumerate(self._plugins.infos)}
        pending, self._pending = self._pending, []
        for item in sorted(pending, key=lambda i: order.get(_field(i, "plugin"), len(order))):
            self._enter(item)

    def _enter(self, item: T) -> None:
        name: str = _field(item, "name")
        aliases: tuple[str, ...] = _field(item, "aliases", ())
        for key in (name, *aliases):
            owner = self.find(key)
            if owner is not None:
                self._fail(
                    f"{self.kind} name {key.lower()!r} is registered twice: by plugin "
                    f"{_field(owner, 'plugin')!r} ({_field(owner, 'distribution')}) and by plugin "
                    f"{_field(item, 'plugin')!r} ({_field(item, 'distribution')}); the second is skipped"
                )
                return
        self.items[name.lower()] = item
        for alias in aliases:
            self.aliases[alias.lower()] = name.lower()

    def find(self, name: str) -> T | None:
        key = name.lower()
        return self.items.get(self.aliases.get(key, key))

    def all(self) -> list[T]:
        """Every entered declaration, by name."""
        return [self.items[k] for k in sorted(self.items)]

    def names(self) -> str:
        return ", ".join(sorted(self.items))


def _field(item: Any, name: str, default: Any = None) -> Any:
    return getattr(item, name, default)
