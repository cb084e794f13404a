"""The redaction options of the command line, added to the main parser. Imports nothing
heavy: the rule set loads only when a conversion redacts."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("redaction (docs/redaction.md)")
    group.add_argument(
        "--redact",
        action="store_true",
        default=None,
        help="replace secrets, the home directory and the user name",
    )
    group.add_argument(
        "--no-redact",
        dest="redact",
        action="store_false",
        help="do not redact, whatever the config file says",
    )
    group.add_argument(
        "--redact-value",
        action="append",
        metavar="VALUE",
        help="also redact this literal string (repeatable)",
    )
    group.add_argument(
        "--redact-pattern",
        action="append",
        metavar="REGEX",
        help="also redact what this expression matches (repeatable)",
    )
    group.add_argument(
        "--redact-env",
        action="store_true",
        default=None,
        help="also redact the values of this environment's secret-looking variables",
    )
    group.add_argument("--redact-images", action="store_true", default=None, help="drop image data")
    group.add_argument(
        "--redact-skip",
        action="append",
        metavar="RULE",
        help="leave this rule out (repeatable; see docs/redaction.md)",
    )


def redaction_steps(ns: argparse.Namespace, environ: Any = None) -> list[tuple[str, dict[str, Any]]]:
    """``[("redact", {"options": RedactOptions})]`` when the arguments or the config file
    ask for redaction, else ``[]``."""
    from .config import config_path, read_config

    env = os.environ if environ is None else environ
    conf = read_config(config_path(env))
    given = bool(ns.redact_value or ns.redact_pattern or ns.redact_env or ns.redact_images or ns.redact_skip)
    if ns.redact is False:
        if given:
            raise UsageError("--no-redact contradicts the other --redact options")
        return []
    if not (ns.redact or given or conf.get("always")):
        return []
    from .api import RedactOptions, unknown_rules

    skip = tuple(conf.get("skip", [])) + tuple(ns.redact_skip or ())
    unknown = unknown_rules(skip)
    if unknown:
        raise UsageError(
            f"--redact-skip: no rule called {', '.join(map(repr, unknown))} (see docs/redaction.md)"
        )
    options = RedactOptions(
        values=tuple(conf.get("values", [])) + tuple(ns.redact_value or ()),
        patterns=tuple(conf.get("patterns", [])) + tuple(ns.redact_pattern or ()),
        environ=dict(env) if (ns.redact_env or conf.get("env")) else None,
        images=bool(ns.redact_images or conf.get("images")),
        disabled=skip,
    )
    for pattern in options.patterns:
        from .api import _compile

        _compile(pattern)
    return [("redact", {"options": options})]
