"""Fast construction of IR objects from JSON objects.

Reading a large session builds hundreds of thousands of small frozen dataclasses. Their
generated ``__init__`` sets each field through ``object.__setattr__`` and a generic
table-driven loop costs a dict look-up and a predicate call per member, which together
made loading several times slower than parsing. Here each field table is compiled once
into a straight-line Python function that tests each member's type inline and fills the
object's slots through their C-level descriptors; the behaviour is exactly the table's
(values of the wrong type or ``null`` go to ``extra``), only faster.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from .ir import EMPTY
from .records import field_defaults


def _accelerator() -> ModuleType | None:
    """The optional C accelerator (core/_speedups.c), unless ``PICONV_PURE_PYTHON`` is set
    or it was not built."""
    if os.environ.get("PICONV_PURE_PYTHON"):
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    return _speedups


speedups = _accelerator()
"""The C accelerator module, or ``None`` when piconv runs on its Python loaders only."""

# A type test per accepted JSON type, as an expression over ``v``.
TESTS: dict[str, str] = {
    "str": "type(v) is str",
    "bool": "type(v) is bool",
    "num": "(type(v) is int or type(v) is float)",
    "dict": "type(v) is dict",
    "content": "(type(v) is str or type(v) is list)",
    "any": "v is not None",
    # a list holding anything but objects stays raw in ``extra`` as a whole
    "tools": "(type(v) is list and all(type(t) is dict for t in v))",
    "system": "(type(v) is dict and v.get('role') == 'system')",
    # prompt sections: names to text, or to null (removed); any other value leaves the
    # whole map raw in ``extra``, so no converter meets a section that is not text
    "sections": "(type(v) is dict and all(type(s) is str or s is None for s in v.values()))",
}
# The tests the C accelerator knows, by its numbers; a table using another stays in Python.
C_TESTS: dict[str, int] = {"str": 0, "bool": 1, "num": 2, "dict": 3, "content": 4, "any": 5}


def lookup(mapping: dict[str, str]) -> Callable[[str], str]:
    """A converter that renames the values ``mapping`` names and keeps the others (which
    the C accelerator does as a dict look-up, without calling back into Python)."""

    def convert(value: str) -> str:
        return mapping.get(value, value)

    convert.lookup_table = mapping  # type: ignore[attr-defined]
    return convert


def slot_setters(cls: type) -> dict[str, Callable[[Any, Any], None]]:
    """Each field's slot descriptor ``__set__``: sets a frozen instance's field directly."""
    return {name: getattr(cls, name).__set__ for name in field_defaults(cls)}


def compile_loader(
    cls: type,
    table: Mapping[str, tuple[str, str, Callable[[Any], Any] | None]],
    *,
    skip: tuple[str, ...] = (),
    groups: Mapping[str, tuple[type, Mapping[str, str]]] | None = None,
    name: str = "load",
) -> Callable[..., Any]:
    """A function ``load(raw, **fixed)`` building ``cls`` from the JSON object ``raw``.

    ``table`` maps a JSON member to ``(field, test, converter)``: the member fills ``field``
    when it passes ``TESTS[test]`` (after ``converter``, if any). ``skip`` members are
    ignored (the caller handles them). ``groups`` gathers several string members into one
    nested object: ``{"model": (ModelRef, {"provider": "provider", ...})}``. Members that do
    not fit go to ``extra``; when ``cls`` has no ``extra`` field the function returns
    ``(object, extra or None)`` instead. Fields named nowhere keep their default unless
    given as keyword arguments.
    """
    fields = field_defaults(cls)
    has_extra = "extra" in fields
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls, "EMPTY": EMPTY}
    setters = slot_setters(cls)
    for field_name, setter in setters.items():
        env[f"_set_{field_name}"] = setter
    for group_field, (group_cls, _members) in (groups or {}).items():
        env[f"_group_{group_field}"] = group_cls

    # Straight-line: one dict look-up and an inline type test per known member, then a
    # length check. Only an object with unknown, null or mistyped members (rare) takes the
    # slow path that collects ``extra``.
    filled = {spec[0] for spec in table.values()} | set(groups or {})
    for f in fields:
        if f not in filled and f != "extra":
            default = fields[f]
            env[f"_default_{f}"] = None if default is dataclasses.MISSING else default
    params = ", ".join(f"{f}=_default_{f}" for f in fields if f not in filled and f != "extra")
    lines = [f"def {name}(raw{', ' + params if params else ''}):", "    n = 0"]
    taken_by: dict[str, str] = {}  # JSON member -> local variable that holds it when taken
    for index, (json_key, (_field, test, converter)) in enumerate(table.items()):
        var = f"f{index}"
        taken_by[json_key] = var
        lines.append(f"    v = raw.get({json_key!r})")
        lines.append(f"    if v is not None and {TESTS[test]}:")
        if converter is not None:
            env[f"_conv{index}"] = converter
            lines.append(f"        {var} = _conv{index}(v)")
        else:
            lines.append(f"        {var} = v")
        lines.append("        n += 1")
        lines.append("    else:")
        lines.append(f"        {var} = None")
    group_vars: dict[str, dict[str, str]] = {}
    for g_index, (group_field, (_group_cls, members)) in enumerate((groups or {}).items()):
        group_vars[group_field] = {}
        for m_index, json_key in enumerate(members):
            var = f"g{g_index}_{m_index}"
            taken_by[json_key] = var
            group_vars[group_field][json_key] = var
            lines.append(f"    v = raw.get({json_key!r})")
            lines.append("    if type(v) is str:")
            lines.append(f"        {var} = v")
            lines.append("        n += 1")
            lines.append("    else:")
            lines.append(f"        {var} = None")
    for json_key in skip:
        lines.append(f"    if {json_key!r} in raw:")
        lines.append("        n += 1")
    # Slow path: a member is left over when it was neither skipped nor taken (taken
    # members hold a value; null or mistyped ones left theirs at None).
    ordered = list(taken_by.values())
    env["_skip"] = frozenset(skip)
    env["_position"] = {key: i for i, key in enumerate(taken_by)}
    lines += [
        "    if n == len(raw):",
        "        extra = None",
        "    else:",
        f"        taken = ({''.join(f'{var}, ' for var in ordered)})",
        "        extra = {}",
        "        for k, v in raw.items():",
        "            i = _position.get(k)",
        "            if k in _skip or (i is not None and taken[i] is not None):",
        "                continue",
        "            extra[k] = v",
    ]
    for group_field, members in group_vars.items():
        checks = " or ".join(f"{var} is not None" for var in members.values())
        group_cls, attrs = (groups or {})[group_field]
        args = ", ".join(f"{attrs[k]}={var}" for k, var in members.items())
        lines.append(f"    gv_{group_field} = _group_{group_field}({args}) if ({checks}) else None")
    field_value = {spec[0]: taken_by[json_key] for json_key, spec in table.items()}
    field_value.update({g: f"gv_{g}" for g in group_vars})
    lines.append("    o = _new(_cls)")
    for f in fields:
        if f == "extra":
            lines.append("    _set_extra(o, extra if extra else EMPTY)")
        elif f in field_value:
            lines.append(f"    _set_{f}(o, {field_value[f]})")
        else:
            lines.append(f"    _set_{f}(o, {f})")
    lines.append("    return o" if has_extra else "    return o, extra")
    source = "\n".join(lines)
    if speedups is None or any(test not in C_TESTS for _f, test, _c in table.values()):
        return _compiled(source, env, name, cls)
    # Behind the C loader the Python one only takes the rare irregular object: it is
    # compiled the first time one comes (compiling all of them costs every run ~5 ms).
    loader: Callable[..., Any] = _Deferred(source, env, name, cls)
    # The C loader takes the well-formed objects and hands every other one to ``loader``.
    c_fields = tuple(
        (key, C_TESTS[test], getattr(conv, "lookup_table", conv), field_name)
        for key, (field_name, test, conv) in table.items()
    )
    for _group_cls, members in (groups or {}).values():
        for field_name, default in field_defaults(_group_cls).items():
            if field_name not in members.values() and default is not None:
                return loader  # the C loader sets a group's unnamed fields to None only
    c_groups = tuple(
        (
            group_field,
            group_cls,
            tuple(members.items()),
            # the group's other fields keep their default (None, checked above)
            tuple(name for name in field_defaults(group_cls) if name not in members.values()),
        )
        for group_field, (group_cls, members) in (groups or {}).items()
    )
    c_defaults = tuple(
        (f, EMPTY if f == "extra" else env[f"_default_{f}"]) for f in fields if f not in filled
    )
    return speedups.TableLoader(cls, c_fields, c_groups, tuple(skip), c_defaults, has_extra, loader)


def _ident(key: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in key)


def _compiled(source: str, env: dict[str, Any], name: str, cls: type) -> Callable[..., Any]:
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<piconv.fastload {cls.__name__}>", "exec"), env, namespace)
    return namespace[name]


class _Deferred:
    """A loader compiled from its source on its first call."""

    __slots__ = ("_args", "_function")

    def __init__(self, source: str, env: dict[str, Any], name: str, cls: type) -> None:
        self._args: tuple[str, dict[str, Any], str, type] | None = (source, env, name, cls)
        self._function: Callable[..., Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._function is None:
            self._function = _compiled(*self._args)  # type: ignore[misc]
            self._args = None
        return self._function(*args, **kwargs)


def compile_maker(cls: type) -> Callable[..., Any]:
    """``make(field1, field2, ...)``: a positional constructor for a frozen slots dataclass
    that fills the slots directly (the generated ``__init__`` goes through
    ``object.__setattr__`` once per field)."""
    names = list(field_defaults(cls))
    if speedups is not None:
        return speedups.Maker(cls, tuple(names))
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = [f"def make({', '.join(names)}):", "    o = _new(_cls)"]
    for name in names:
        env[f"_set_{name}"] = getattr(cls, name).__set__
        lines.append(f"    _set_{name}(o, {name})")
    lines.append("    return o")
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), f"<piconv.fastload make {cls.__name__}>", "exec"), env, namespace)
    return namespace["make"]
