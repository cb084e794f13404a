"""A yes/no validator compiled from a JSON Schema, for the common case: a valid output.

jsonschema is the validator of record: it says *what* is wrong. But importing it costs
about 0.1 s, more than converting a 1 MB session, and most outputs are valid. This module
compiles a small, closed set of keywords into nested closures that answer "valid?" only,
with the verdict jsonschema gives under draft 2020-12. A ``False`` sends the value to
jsonschema for the messages; a keyword outside the set makes :func:`compile_schema` refuse
the whole schema (:class:`UnsupportedSchema`), so a schema that grows a keyword can never
be checked more loosely than jsonschema would check it. Converters that use it test both
validators on their outputs and on mutated outputs and require the same verdict.

Known keywords: ``type``, ``properties``, ``required``, ``additionalProperties``,
``anyOf``, ``const``, ``enum``, ``items``, ``$ref`` (to ``#/$defs/...``), ``minLength``,
``minimum``, ``uniqueItems``, ``if``/``then``/``else`` and ``not``; annotations are
ignored.

``uniqueItems`` compares items by JSON equality, except in one corner where jsonschema
does not: it sorts the items with Python's ordering, in which a nested ``true`` equals
``1``, and compares neighbours, so it misses the duplicate in ``[[1], [true], [1]]``. That
verdict is copied, not corrected: under ``not`` or in an ``if``, a stricter answer would
become a looser one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from itertools import pairwise
from typing import Any

Predicate = Callable[[Any], bool]

# Keywords that only annotate: they never change a verdict.
_ANNOTATIONS = frozenset(("title", "description", "$schema", "$id", "$defs", "default", "examples"))
_KNOWN = frozenset(
    (
        "type",
        "properties",
        "required",
        "additionalProperties",
        "anyOf",
        "const",
        "enum",
        "items",
        "$ref",
        "minLength",
        "minimum",
        "uniqueItems",
        "if",
        "then",
        "else",
        "not",
    )
)


class UnsupportedSchema(ValueError):
    """The schema uses a keyword (or a form of one) this compiler does not implement."""


def _is_type(value: Any, name: str) -> bool:
    t = type(value)
    if name == "string":
        return t is str
    if name == "object":
        return t is dict
    if name == "array":
        return t is list
    if name == "boolean":
        return t is bool
    if name == "null":
        return value is None
    if name == "number":
        return t is int or t is float
    if name == "integer":  # JSON Schema: any number with no fractional part
        return t is int or (t is float and value.is_integer())
    raise UnsupportedSchema(f"unknown type {name!r}")


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``; containers compared deeply."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if type(a) is list:
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _json_key(value: Any) -> Hashable:
    """A hashable stand-in equal for two values exactly when :func:`_json_equal` holds, so
    duplicates are found in one pass even among lists and objects. The tags keep ``true``
    apart from ``1``; numbers share one tag because Python's ``1 == 1.0`` (and equal hash)
    is JSON's."""
    t = type(value)
    if t is bool:
        return ("b", value)
    if t is int or t is float:
        return ("n", value)
    if t is str:
        return ("s", value)
    if t is list:
        return ("l", tuple(_json_key(v) for v in value))
    if t is dict:
        return ("o", frozenset((k, _json_key(v)) for k, v in value.items()))
    if value is None:
        return ("z",)
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _unique(value: Any) -> bool:
    if type(value) is not list:
        return True
    if all(type(v) is str for v in value):  # the common case needs no tagging
        return len(set(value)) == len(value)
    try:
        if len({_json_key(v) for v in value}) == len(value):
            return True
    except TypeError:
        pass  # not JSON (a tuple, say): no key for it, so jsonschema's way decides
    # jsonschema never finds a duplicate that JSON equality does not, but it can miss one
    # (see the module's docstring), so a duplicate is confirmed its way.
    return _unique_as_jsonschema(value)


_TRUE, _FALSE = object(), object()


def _unbool(value: Any) -> Any:
    return _TRUE if value is True else _FALSE if value is False else value


def _unique_as_jsonschema(value: list[Any]) -> bool:
    """jsonschema's ``uniq``, step for step: sort (top-level booleans replaced by sentinels so
    they neither sort nor compare as numbers) and compare neighbours; if the items do not
    sort, compare every pair."""
    try:
        ordered = sorted(_unbool(v) for v in value)
        return not any(_json_equal(a, b) for a, b in pairwise(ordered))
    except (NotImplementedError, TypeError):
        seen: list[Any] = []
        for item in map(_unbool, value):
            if any(_json_equal(s, item) for s in seen):
                return False
            seen.append(item)
        return True


def _number(node: Mapping[str, Any], keyword: str) -> int | float:
    bound = node[keyword]
    if type(bound) not in (int, float):
        raise UnsupportedSchema(f"{keyword} must be a number, not {bound!r}")
    return bound


def compile_schema(schema: Mapping[str, Any]) -> Predicate:
    """``valid(value) -> bool`` for ``schema`` (its ``$defs`` resolve ``#/$defs/...`` refs)."""
    defs: Mapping[str, Any] = schema.get("$defs", {})
    compiled: dict[str, Predicate] = {}

    def ref(target: str) -> Predicate:
        prefix = "#/$defs/"
        if not target.startswith(prefix) or target[len(prefix) :] not in defs:
            raise UnsupportedSchema(f"unsupported $ref {target!r}")
        name = target[len(prefix) :]
        if name not in compiled:
            compiled[name] = lambda value: compiled[name](value)  # recursion: bound below
            compiled[name] = build(defs[name])
        return lambda value: compiled[name](value)

    def build(node: Any) -> Predicate:
        if node is True or node == {}:
            return lambda value: True
        if node is False:
            return lambda value: False
        if not isinstance(node, Mapping):
            raise UnsupportedSchema(f"not a schema: {node!r}")
        unknown = set(node) - _KNOWN - _ANNOTATIONS
        if unknown:
            raise UnsupportedSchema(f"unsupported keywords {sorted(unknown)}")
        checks: list[Predicate] = []
        if "$ref" in node:
            checks.append(ref(node["$ref"]))
        if "type" in node:
            names = node["type"] if isinstance(node["type"], list) else [node["type"]]
            for name in names:
                _is_type(None, name)  # refuses an unknown type name now, not at run time
            checks.append(lambda value, names=tuple(names): any(_is_type(value, n) for n in names))
        if "const" in node:
            checks.append(lambda value, c=node["const"]: _json_equal(value, c))
        if "enum" in node:
            checks.append(lambda value, options=tuple(node["enum"]): any(_json_equal(value, o) for o in options))
        if "minLength" in node:
            least = node["minLength"]
            if type(least) is not int or least < 0:
                raise UnsupportedSchema(f"minLength must be a non-negative integer, not {least!r}")
            # len() counts code points, as jsonschema does (JSON Schema counts characters).
            checks.append(lambda value: type(value) is not str or len(value) >= least)
        if "minimum" in node:
            low = _number(node, "minimum")
            checks.append(lambda value: (type(value) is not int and type(value) is not float) or value >= low)
        if "anyOf" in node:
            options = tuple(build(sub) for sub in node["anyOf"])
            checks.append(lambda value: any(p(value) for p in options))
        if "not" in node:
            negated = build(node["not"])
            checks.append(lambda value: not negated(value))
        if "if" in node:
            # then/else without if are ignored by jsonschema, so they are here too.
            checks.append(_conditional(node, build))
        if "items" in node:
            item = build(node["items"])
            checks.append(lambda value: type(value) is not list or all(item(v) for v in value))
        if "uniqueItems" in node:
            if type(node["uniqueItems"]) is not bool:
                raise UnsupportedSchema(f"uniqueItems must be a boolean, not {node['uniqueItems']!r}")
            if node["uniqueItems"]:
                checks.append(_unique)
        if {"properties", "required", "additionalProperties"} & set(node):
            checks.append(_object(node, build))
        if not checks:
            return lambda value: True
        if len(checks) == 1:
            return checks[0]
        all_checks = tuple(checks)
        return lambda value: all(c(value) for c in all_checks)

    return build(schema)


def _conditional(node: Mapping[str, Any], build: Callable[[Any], Predicate]) -> Predicate:
    condition = build(node["if"])
    then = build(node.get("then", True))
    otherwise = build(node.get("else", True))
    return lambda value: then(value) if condition(value) else otherwise(value)


def _object(node: Mapping[str, Any], build: Callable[[Any], Predicate]) -> Predicate:
    properties = {k: build(v) for k, v in node.get("properties", {}).items()}
    required = tuple(node.get("required", ()))
    additional = node.get("additionalProperties", True)
    extra: Predicate | None = None if additional is True else build(additional)

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True  # object keywords say nothing about other types
        for key in required:
            if key not in value:
                return False
        for key, item in value.items():
            predicate = properties.get(key)
            if predicate is not None:
                if not predicate(item):
                    return False
            elif extra is not None and not extra(item):
                return False
        return True

    return check
