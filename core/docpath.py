"""Where a format's mapping document is on this machine.

Converters name their mapping document as a path of the source tree
(``docs/formats/asf.md``). The documents under ``docs/`` ship inside the package
(``piconv/docs/``), so an installed piconv points at its own copy; a checkout points at
its ``docs/`` folder. Anything else a plugin names (its README, a URL) is left as it is.
"""

from __future__ import annotations

import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def locate(doc: str) -> str | None:
    """The file ``doc`` (``docs/...``) names on this machine, or None when it is not one
    of piconv's documents or cannot be found."""
    if not doc.startswith("docs/") or ".." in doc.split("/"):
        return None
    rel = doc.split("/")[1:]
    for base in (
        os.path.join(_HERE, "docs"),  # installed: piconv/docs/
        os.path.join(os.path.dirname(_HERE), "docs"),  # a checkout: core/ beside docs/
    ):
        path = os.path.join(base, *rel)
        if os.path.isfile(path):
            return path
    return None


def shown(doc: str) -> str:
    """``doc`` as a reader can open it: the local file when there is one."""
    return locate(doc) or doc
