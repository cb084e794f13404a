"""Plugin hook specifications (pluggy project name ``piconv``).

Every hook is documented with its full signature in ``docs/plugins.md``; a test fails
when the two disagree. Built-in formats register through the same hooks as third-party
plugins, dispatched by pluggy (``pm.hook.register_converters(register=...)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .filters import Filter
    from .inputformat import Reader
    from .outputformat import Converter

PLUGIN_API_VERSION = 2
"""The version of the plugin interface (these hooks and the objects they pass). A plugin
that needs a newer interface declares ``PICONV_PLUGIN_API = N`` at module level and is
skipped, with a message, by a piconv whose version is lower; one that declares nothing is
taken to need version 1. Version 2 added ``register_readers`` and :class:`piconv.Reader`,
and ``register_filters`` and :class:`piconv.Filter`; nothing of version 1 changed, so a
version 1 plugin works unchanged."""

hookspec = pluggy.HookspecMarker("piconv")
hookimpl = pluggy.HookimplMarker("piconv")


@hookspec
def register_converters(register: Callable[[Converter], None]) -> None:
    """Register output formats: call ``register(converter)`` once per format.

    ``converter`` is a :class:`piconv.Converter`. A name (or alias) already taken by
    another plugin is reported and that converter skipped; the first one keeps the name.
    """


@hookspec
def register_readers(register: Callable[[Reader], None]) -> None:
    """Register input formats: call ``register(reader)`` once per format.

    ``reader`` is a :class:`piconv.Reader`. A name (or alias) already taken by another
    plugin is reported and that reader skipped; the first one keeps the name.
    """


@hookspec
def register_filters(register: Callable[[Filter], None]) -> None:
    """Register IR -> IR filters: call ``register(filter)`` once per filter.

    ``filter`` is a :class:`piconv.filters.Filter`. Filters run after the reader and
    before any converter, in the order asked for. A name already taken is reported and
    that filter skipped; the first one keeps the name.
    """
