"""Redaction defaults from ``$XDG_CONFIG_HOME/piconv/config.toml`` (``~/.config`` when
the variable is unset), table ``[redact]``::

    [redact]
    always = true                   # redact every conversion (--no-redact turns it off)
    values = ["Project Nightingale"]
    patterns = ['ACME-[0-9]{4}']
    env = true                      # as --redact-env
    images = false                  # as --redact-images
    skip = ["generic-api-key"]      # rules left out

The command line adds to these (values, patterns, skip) or turns them on.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..errors import UsageError

KEYS = {"always": bool, "values": list, "patterns": list, "env": bool, "images": bool, "skip": list}


def config_path(environ: Any = None) -> str:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "piconv", "config.toml")


def read_config(path: str) -> dict[str, Any]:
    """The ``[redact]`` table of the file at ``path`` (empty when there is no file);
    :class:`UsageError` naming the file, and the line for a syntax error, when it is wrong."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsageError(f"cannot read the configuration: {exc.strerror or exc}", path=path) from None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"not valid TOML: {exc}", path=path) from None
    table = data.get("redact", {})
    if not isinstance(table, dict):
        raise UsageError("[redact] must be a table", path=path)
    for key, value in table.items():
        kind = KEYS.get(key)
        if kind is None:
            raise UsageError(f"[redact] has no setting {key!r} (known: {', '.join(KEYS)})", path=path)
        if not isinstance(value, kind) or (kind is list and not all(isinstance(v, str) for v in value)):
            want = "true or false" if kind is bool else "a list of strings"
            raise UsageError(f"[redact] {key} must be {want}", path=path)
    return table
