"""piconv: convert pi coding-agent sessions into other formats.

The library in four calls::

    import piconv
    doc = piconv.load("session.jsonl")            # read, migrate, build the tree and IR
    ctx = doc.context()                            # what the model saw at the leaf
    piconv.convert(doc, "markdown", out)           # write any registered format
    piconv.formats()                               # every registered format
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import InputError, PiconvError, PluginError, UsageError, ValidationFailed
from .hookspecs import hookimpl
from .report import Report
from .registry import Converter, Option

__all__ = [
    "Converter",
    "InputError",
    "Option",
    "PiconvError",
    "PluginError",
    "Report",
    "UsageError",
    "ValidationFailed",
    "__version__",
    "convert",
    "formats",
    "hookimpl",
    "load",
]


def __getattr__(name: str):  # lazy: `piconv --help` must not pay for the reader
    if name in ("load", "convert", "formats"):
        from . import api

        return getattr(api, name)
    raise AttributeError(name)
