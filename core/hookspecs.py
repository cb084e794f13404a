"""Plugin hook specifications (pluggy project name ``piconv``).

Every hook is documented with its full signature in ``docs/plugins.md``; a test fails
when the two disagree. Built-in formats register through the same hooks as third-party
plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .registry import Converter

hookspec = pluggy.HookspecMarker("piconv")
hookimpl = pluggy.HookimplMarker("piconv")


@hookspec
def register_converters(register: Callable[[Converter], None]) -> None:
    """Register output formats: call ``register(converter)`` once per format.

    ``converter`` is a :class:`piconv.Converter`. A name (or alias) already taken by
    another plugin is an error naming both plugins.
    """
