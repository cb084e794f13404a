"""A yes/no validator compiled from the request schema, for the common case: a valid output.

jsonschema is the validator of record: it says *what* is wrong. But importing it costs
more than converting a 1 MB session, and most outputs are valid. The generated schema
uses a small, closed set of keywords (the ones pydantic emits for the SDK's TypedDicts);
this module compiles exactly those into nested closures that answer "valid?" only. A
``False`` sends the output to jsonschema for the messages; a keyword outside the set makes
:func:`compile_schema` refuse the schema (:class:`UnsupportedSchema`), so a regenerated
schema can never be checked more loosely than jsonschema would check it. The tests run
both on every output and on mutated outputs and require the same verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Predicate = Callable[[Any], bool]

# Keywords that only annotate: they never change a verdict.
_ANNOTATIONS = frozenset(("title", "description", "$schema", "$id", "$defs", "default", "examples"))
_KNOWN = frozenset(("type", "properties", "required", "additionalProperties", "anyOf", "const", "enum", "items", "$ref"))


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
        if "anyOf" in node:
            options = tuple(build(sub) for sub in node["anyOf"])
            checks.append(lambda value: any(p(value) for p in options))
        if "items" in node:
            item = build(node["items"])
            checks.append(lambda value: type(value) is not list or all(item(v) for v in value))
        if {"properties", "required", "additionalProperties"} & set(node):
            checks.append(_object(node, build))
        if not checks:
            return lambda value: True
        if len(checks) == 1:
            return checks[0]
        all_checks = tuple(checks)
        return lambda value: all(c(value) for c in all_checks)

    return build(schema)


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
