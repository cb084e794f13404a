"""The formats of a directory run, and what makes an output of one stale.

Each format the run writes is looked up once (an unknown name fails before anything is
written) and given its identity: the plugin, its distribution and version, and a hash of
the options (and filters) it writes with. The manifest records that identity beside
each output; an output whose record differs, or whose file is gone, is written again
(:func:`output_current`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..output import plain_file

WATCHED = "watched"
"""The option a format gets for a session ``piconv watch`` keeps current (a page may say
so and reload itself while it is watched)."""


@dataclass(frozen=True, slots=True)
class RunFormat:
    """One format of a run, with what its outputs' names and records are made of."""

    name: str
    extension: str
    tag: str | None
    """What goes before the extension in an output's name (:func:`output_tag`)."""
    options: dict[str, Any]
    identity: dict[str, Any]
    """What must be equal for an existing output to count as up to date: the plugin,
    its distribution and version, and a hash of the options it was written with."""
    watched_identity: dict[str, Any]
    """The identity of an output written while ``piconv watch`` keeps it current (its
    options with ``watched``): another than a plain run's, so the plain run that ends the
    watch writes that output again, as a plain run writes it."""
    per_leaf: bool
    archive: Any
    """The format's :class:`piconv.registry.Archive` when a directory run writes it as one
    file for the whole archive (a database), else None."""
    index: Any
    """The format's :class:`piconv.registry.IndexPage` when it has a page listing the
    run's sessions, else None."""

    def identity_for(self, watched: bool) -> dict[str, Any]:
        return self.watched_identity if watched else self.identity

    def options_for(self, watched: bool) -> dict[str, Any]:
        return {**self.options, WATCHED: True} if watched else self.options


def run_formats(
    registry: Any,
    names: Sequence[str],
    options: Mapping[str, Mapping[str, Any]],
    validate: bool,
    recover_glued: bool,
    filters: Sequence[tuple[str, Mapping[str, Any]]],
) -> list[RunFormat]:
    """The formats ``names`` asks for, each once (an alias and its format's name are one
    format), with ``options[name]`` as its options; ``filters`` run before each."""
    converters: list[Any] = []
    for name in names:
        conv = registry.get(name)  # unknown names raise PluginError before anything is written
        if conv.name not in (c.name for c in converters):
            converters.append(conv)
    out = []
    for conv in converters:
        opts = dict(options.get(conv.name, {}))
        identity = {
            "plugin": conv.plugin,
            "distribution": conv.distribution,
            "version": conv.version,
            "options": _options_hash(opts, validate, recover_glued),
        }
        if filters:
            identity["filters"] = _filters_identity(filters)
        watched = {**identity, "options": _options_hash({**opts, WATCHED: True}, validate, recover_glued)}
        out.append(
            RunFormat(
                conv.name,
                conv.extension,
                output_tag(conv),
                opts,
                identity,
                watched,
                bool(conv.per_leaf),
                getattr(conv, "archive", None),
                getattr(conv, "index", None),
            )
        )
    return out


def output_tag(conv: Any) -> str | None:
    """What goes before a format's extension in its outputs' names: nothing when the
    extension names the format (``.html``, ``.md`` for markdown), else the format's name
    (``a.ir.json``, ``a.asf.jsonl``). It depends on the format alone, never on the other
    formats of a run, so adding or dropping one renames nothing; and no output is named
    ``a.jsonl``, like the session it came from."""
    ext = conv.extension.lstrip(".").lower()
    return None if ext in (conv.name.lower(), *(a.lower() for a in conv.aliases)) else conv.name


def _options_hash(options: Mapping[str, Any], validate: bool, recover_glued: bool) -> str:
    blob = orjson.dumps(
        {"options": dict(options), "validate": validate, "recover_glued": recover_glued},
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
        default=repr,
    )
    return hashlib.sha256(blob).hexdigest()[:16]


def _filters_identity(filters: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """What the manifest records of the filters (never a secret: their options hashed):
    a change reconverts. The redaction filter names its rule set."""
    out = []
    for name, opts in filters:
        fingerprint = getattr(opts.get("options"), "fingerprint", None)
        if callable(fingerprint):
            from ..redaction.api import rule_set_name

            out.append({"name": name, "rules": rule_set_name(), "fingerprint": fingerprint()})
        else:
            out.append({"name": name, "fingerprint": _options_hash(opts, True, False)})
    return out


def output_current(
    rec: Mapping[str, Any], fmt: RunFormat, rel_out: str, outdir: str, version: str, watched: bool
) -> bool:
    """Whether the manifest record ``rec`` of an input shows its output in ``fmt`` (at
    ``rel_out`` below ``outdir``) up to date: written by this piconv with the same
    identity, and each of its files still there."""
    out = (rec.get("outputs") or {}).get(fmt.name)
    identity = fmt.identity_for(watched)
    meta = rec.get("meta")
    return (
        isinstance(out, dict)
        and rec.get("piconv") == version
        # the facts of an earlier piconv lack what links a fork to its parent: noted again
        and isinstance(meta, dict)
        and "counted" in meta
        and out.get("path") == rel_out
        and all(out.get(k) == v for k, v in identity.items())
        # an output made through filters is not current for a run that asks for none
        and (out.get("filters") is None or "filters" in identity)
        and all(plain_file(os.path.join(outdir, *rel.split("/"))) for rel in out.get("leaves", [rel_out]))
    )
