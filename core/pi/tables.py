"""Building IR objects from JSON objects by the field tables of :mod:`piconv.pi.model`.

A table maps each JSON member to a field, the JSON type it must have and a converter;
:class:`TableLoader` reads it for each object: values of the wrong type or ``null`` go to
``extra``, fields are filled through their slots' C-level descriptors (not the records'
``__init__``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from ..ir import EMPTY
from ..records import field_defaults

# The type test of each accepted JSON type, by name (the tables name them).
TESTS: dict[str, Callable[[Any], bool]] = {
    "str": lambda v: type(v) is str,
    "bool": lambda v: type(v) is bool,
    "num": lambda v: type(v) is int or type(v) is float,
    "dict": lambda v: type(v) is dict,
    "content": lambda v: type(v) is str or type(v) is list,
    "any": lambda v: v is not None,
    # a list holding anything but objects stays raw in ``extra`` as a whole
    "tools": lambda v: type(v) is list and all(type(t) is dict for t in v),
    "system": lambda v: type(v) is dict and v.get("role") == "system",
    # prompt sections: names to text, or to null (removed); any other value leaves the
    # whole map raw in ``extra``, so no converter meets a section that is not text
    "sections": lambda v: type(v) is dict and all(type(s) is str or s is None for s in v.values()),
}


def slot_setters(cls: type) -> dict[str, Callable[[Any, Any], None]]:
    """Each field's slot descriptor ``__set__``: sets a frozen instance's field directly."""
    return {name: getattr(cls, name).__set__ for name in field_defaults(cls)}


def compile_loader(
    cls: type,
    table: Mapping[str, tuple[str, str, Callable[[Any], Any] | None]],
    *,
    skip: tuple[str, ...] = (),
    groups: Mapping[str, tuple[type, Mapping[str, str]]] | None = None,
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
    return TableLoader(cls, table, skip, groups or {})


# The simple tests as the set of types they accept (one ``in`` instead of a call).
_TYPE_SETS: dict[str, frozenset[type]] = {
    "str": frozenset({str}),
    "bool": frozenset({bool}),
    "num": frozenset({int, float}),
    "dict": frozenset({dict}),
    "content": frozenset({str, list}),
}


class TableLoader:
    """``load(raw, **fixed)`` of :func:`compile_loader`, reading its table as it goes."""

    __slots__ = (
        "cls",
        "defaults",
        "extra_setter",
        "groups",
        "members",
        "members_and_skip",
        "skip",
    )

    def __init__(
        self,
        cls: type,
        table: Mapping[str, tuple[str, str, Callable[[Any], Any] | None]],
        skip: tuple[str, ...],
        groups: Mapping[str, tuple[type, Mapping[str, str]]],
    ) -> None:
        self.cls = cls
        setters = slot_setters(cls)
        # (member, its field's setter, accepted types or None, the test when no types, converter)
        self.members = tuple(
            (key, setters[field], _TYPE_SETS.get(test), TESTS[test], conv)
            for key, (field, test, conv) in table.items()
        )
        self.groups = tuple(
            (setters[name], group_cls, tuple(members.items()))
            for name, (group_cls, members) in groups.items()
        )
        self.skip = frozenset(skip)
        self.members_and_skip = frozenset(table) | {key for _c, members in groups.values() for key in members}
        self.members_and_skip |= self.skip
        fields = field_defaults(cls)
        self.extra_setter = setters.get("extra")
        filled = {field for field, _test, _conv in table.values()} | set(groups)
        self.defaults = {
            name: (setters[name], None if default is dataclasses.MISSING else default)
            for name, default in fields.items()
            if name not in filled and name != "extra"
        }

    def __call__(self, raw: dict[str, Any], **fixed: Any) -> Any:
        defaults = self.defaults
        if fixed and not fixed.keys() <= defaults.keys():
            unknown = next(iter(fixed.keys() - defaults.keys()))
            raise TypeError(f"load() got an unexpected keyword argument {unknown!r}")
        obj = object.__new__(self.cls)
        taken = 0
        refused: list[str] | None = None  # members present but null or mistyped: they go to extra
        for key, setter, types, test, conv in self.members:
            v = raw.get(key)
            if v is not None and (type(v) in types if types is not None else test(v)):
                if conv is not None:
                    v = conv(v)
                    if v is None:
                        refused = [*(refused or ()), key]
                taken += 1
            elif key in raw:
                refused = [*(refused or ()), key]
                v = None
            setter(obj, v)
        for setter, group_cls, members in self.groups:
            parts: dict[str, Any] = {}
            for key, attr in members:
                v = raw.get(key)
                if type(v) is str:
                    taken += 1
                elif key in raw:
                    refused = [*(refused or ()), key]
                    v = None
                parts[attr] = v
            setter(obj, group_cls(**parts) if any(v is not None for v in parts.values()) else None)
        skip = self.skip
        taken += sum(1 for key in skip if key in raw)
        extra = None
        if taken != len(raw):
            known = self.members_and_skip
            extra = {k: v for k, v in raw.items() if k not in known or (refused is not None and k in refused)}
        for name, (setter, default) in defaults.items():
            setter(obj, fixed.get(name, default))
        if self.extra_setter is not None:
            self.extra_setter(obj, extra if extra else EMPTY)
            return obj
        return obj, extra
