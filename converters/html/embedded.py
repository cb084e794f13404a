"""The files a page embeds (style, scripts, highlight.js), read from the package's static/."""

from __future__ import annotations

import functools
import os

_DIR = os.path.join(os.path.dirname(__file__), "static")


@functools.cache
def read(name: str) -> str:
    # A plain read beside this module: importlib.resources would import inspect and
    # tempfile, several milliseconds for files the package always ships unzipped.
    with open(os.path.join(_DIR, *name.split("/")), encoding="utf-8") as f:
        return f.read()
