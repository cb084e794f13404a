"""piconv: convert pi coding-agent sessions into other formats.

The library in four calls::

    import piconv
    doc = piconv.load("session.jsonl")            # read, migrate, build the tree and IR
    ctx = doc.context()                            # what the model saw at the leaf
    piconv.convert(doc, "markdown", "out.md")      # write any registered format
    piconv.formats()                               # every registered format
    piconv.sessions()                              # pi's sessions, newest first
    piconv.usage(by=["month", "model"])            # tokens and cost, each entry counted once

Names are imported on first use, so ``piconv --help`` does not pay for the reader, the
registry or pluggy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

_EXPORTS = {
    "load": "api",
    "convert": "api",
    "convert_to_bytes": "api",
    "format_for_path": "api",
    "formats": "api",
    "get_format": "api",
    "input_formats": "api",
    "get_input_format": "api",
    "detect": "api",
    "Reader": "inputformat",
    "plugins": "api",
    "plugin_failures": "api",
    "filters": "api",
    "apply_filters": "api",
    "redact": "api",
    "diff": "api",
    "render_diff": "api",
    "SessionDiff": "compare.model",
    "usage_totals": "facts.spending",
    "UsageTotals": "facts.spending",
    "watch": "bulk.watch",
    "RedactOptions": "redaction.api",
    "Filter": "filters",
    "session_facts": "facts.summary",
    "call_cost": "facts.spending",
    "session_title": "facts.titles",
    "Converter": "outputformat",
    "Option": "outputformat",
    "ListedSession": "facts.summary",
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
    "write_into_folder": "output",
    "sessions": "catalog.listing",
    "usage": "catalog.usage",
    "Session": "catalog.listing",
    "Catalog": "catalog.listing",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

if TYPE_CHECKING:  # "import X as X": a re-export type checkers see (mypy --strict)
    from .api import apply_filters as apply_filters
    from .api import convert as convert
    from .api import convert_to_bytes as convert_to_bytes
    from .api import detect as detect
    from .api import diff as diff
    from .api import filters as filters
    from .api import format_for_path as format_for_path
    from .api import formats as formats
    from .api import get_format as get_format
    from .api import get_input_format as get_input_format
    from .api import input_formats as input_formats
    from .api import load as load
    from .api import plugin_failures as plugin_failures
    from .api import plugins as plugins
    from .api import redact as redact
    from .api import render_diff as render_diff
    from .bulk.watch import watch as watch
    from .catalog.listing import Catalog as Catalog
    from .catalog.listing import Session as Session
    from .catalog.listing import sessions as sessions
    from .catalog.usage import usage as usage
    from .compare.model import SessionDiff as SessionDiff
    from .errors import InputError as InputError
    from .errors import OutputError as OutputError
    from .errors import PiconvError as PiconvError
    from .errors import PluginError as PluginError
    from .errors import UsageError as UsageError
    from .errors import ValidationFailed as ValidationFailed
    from .facts.spending import UsageTotals as UsageTotals
    from .facts.spending import call_cost as call_cost
    from .facts.spending import usage_totals as usage_totals
    from .facts.summary import ListedSession as ListedSession
    from .facts.summary import session_facts as session_facts
    from .facts.titles import session_title as session_title
    from .filters import Filter as Filter
    from .hookspecs import PLUGIN_API_VERSION as PLUGIN_API_VERSION
    from .hookspecs import hookimpl as hookimpl
    from .inputformat import Reader as Reader
    from .output import write_into_folder as write_into_folder
    from .outputformat import Converter as Converter
    from .outputformat import Option as Option
    from .redaction.api import RedactOptions as RedactOptions
    from .registry import PluginWarning as PluginWarning
    from .report import Report as Report


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'piconv' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
