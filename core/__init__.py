"""piconv: convert pi coding-agent sessions into other formats.

The library in four calls::

    import piconv
    doc = piconv.load("session.jsonl")            # read, migrate, build the tree and IR
    ctx = doc.context()                            # what the model saw at the leaf
    piconv.convert(doc, "markdown", "out.md")      # write any registered format
    piconv.formats()                               # every registered format

Names are imported on first use, so ``piconv --help`` does not pay for the reader, the
registry or pluggy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "load": "api",
    "convert": "api",
    "formats": "api",
    "get_format": "api",
    "plugins": "api",
    "plugin_failures": "api",
    "context_as_pi": "api",
    "session_facts": "facts",
    "Converter": "registry",
    "Option": "registry",
    "Report": "report",
    "hookimpl": "hookspecs",
    "PLUGIN_API_VERSION": "hookspecs",
    "PluginWarning": "registry",
    "PiconvError": "errors",
    "OutputError": "errors",
    "InputError": "errors",
    "PluginError": "errors",
    "UsageError": "errors",
    "ValidationFailed": "errors",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

if TYPE_CHECKING:
    from .api import context_as_pi, convert, formats, get_format, load, plugin_failures, plugins  # noqa: F401
    from .errors import InputError, OutputError, PiconvError, PluginError, UsageError, ValidationFailed  # noqa: F401
    from .facts import session_facts  # noqa: F401
    from .hookspecs import PLUGIN_API_VERSION, hookimpl  # noqa: F401
    from .registry import Converter, Option, PluginWarning  # noqa: F401
    from .report import Report  # noqa: F401


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'piconv' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
