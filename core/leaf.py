"""Naming a leaf: ``--leaf`` takes an entry id, a unique prefix of one, or a label.

Resolved once, before any converter runs, so every format (a plugin's included) gets a
whole entry id in ``options["leaf"]``.
"""

from __future__ import annotations

from .errors import UsageError
from .ir import Document

SHOWN = 5
"""How many candidates an "ambiguous" message names."""


def resolve_leaf(doc: Document, name: str) -> str:
    """The id of the entry ``name`` names in ``doc``, tried in this order: an entry id
    exactly; a label in force on exactly one entry; the prefix of exactly one entry id.
    Raises :class:`UsageError` naming the file when nothing or more than one entry fits."""
    if name in doc:
        return name
    path = doc.session.source_path
    if not name:
        raise UsageError("--leaf '': an empty name names no entry", path=path)
    labelled = [target for target, label in doc.labels().items() if label == name and target in doc]
    if len(labelled) == 1:
        return labelled[0]
    if len(labelled) > 1:
        raise UsageError(
            f"--leaf {name!r}: the label is on {len(labelled)} entries ({_some(labelled)}); give an id",
            path=path,
        )
    matches = [e.id for e in doc.entries if e.id.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UsageError(
            f"--leaf {name!r}: the prefix of {len(matches)} entry ids ({_some(matches)}); give more of the id",
            path=path,
        )
    raise UsageError(f"--leaf {name!r}: no entry has this id, id prefix or label", path=path)


def _some(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN])
    return shown + (", …" if len(ids) > SHOWN else "")
