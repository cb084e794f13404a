"""Frozen records whose methods are shared rather than generated.

``@dataclass(frozen=True, slots=True)`` writes and compiles ``__init__``, ``__eq__``,
``__hash__``, ``__repr__``, ``__setattr__`` and ``__delattr__`` for each class, and makes a
``Field`` for each of its fields, when its module is imported: about a millisecond for a
class of fifteen fields, paid by every run of piconv for every such class on its way. A
class decorated with :func:`frozen` and derived from :class:`Frozen` inherits these methods
instead, and its dataclass metadata (what ``dataclasses.fields``, ``replace`` and
``is_dataclass`` read) is made the first time something asks for it; it behaves as the
generated class does (``tests/test_records.py`` holds every such class to a generated twin).
:func:`replace` and :func:`field_defaults` answer the common questions without the metadata.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, field, make_dataclass
from dataclasses import fields as dataclasses_fields
from dataclasses import replace as dataclass_replace
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # type checkers see a frozen record as the frozen dataclass it behaves as
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_kwargs: Any) -> Any:
        return lambda decorated: decorated


__all__ = ["Frozen", "Mutable", "field_defaults", "frozen", "replace"]

_T = TypeVar("_T")


class Frozen:
    """The base of a :func:`frozen` record. The constructor takes the fields in order or
    by name with their defaults; equality compares fields in order and only between
    objects of one class; a field cannot be set or deleted
    (:class:`dataclasses.FrozenInstanceError`); ``hash``, ``repr``, pickling,
    ``dataclasses.fields``, ``replace`` and ``is_dataclass`` work as on a generated frozen
    slots dataclass."""

    __slots__ = ()
    _names: tuple[str, ...] = ()
    _defaults: dict[str, Any] = {}  # noqa: RUF012 (each class gets its own, read-only)
    _types: dict[str, Any] = {}  # noqa: RUF012 (each class gets its own, read-only)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self._names
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments, {len(args)} given")
        put = object.__setattr__
        for name, value in zip(names, args):  # noqa: B905 (fewer arguments than fields is the rule)
            if name in kwargs:
                raise TypeError(f"{type(self).__name__}() got multiple values for argument {name!r}")
            put(self, name, value)
        defaults = self._defaults
        for name in names[len(args) :]:
            if name in kwargs:
                put(self, name, kwargs.pop(name))
            elif name in defaults:
                put(self, name, defaults[name])
            else:
                raise TypeError(f"{type(self).__name__}() missing required argument {name!r}")
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}() got an unexpected keyword argument {next(iter(kwargs))!r}"
            )

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._names)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names)
        return f"{self.__class__.__qualname__}({shown})"

    def __getstate__(self) -> tuple[Any, ...]:
        # every field, whatever a class leaves out of comparing and showing (``_values``)
        return tuple(getattr(self, name) for name in self._names)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self._names, state, strict=True):
            object.__setattr__(self, name, value)


class _Metadata:
    """``__dataclass_fields__`` and ``__dataclass_params__`` of a frozen record, made on
    first use: those of a generated frozen dataclass with the same fields, which is what
    ``dataclasses.fields``, ``replace`` and ``is_dataclass`` (and a dataclass deriving
    from the record) read. Making them for every class at import is most of what
    ``@dataclass`` costs, and a conversion never asks for them."""

    def __get__(self, instance: object, owner: type) -> Any:
        fields = [
            (name, owner._types[name], field(default=owner._defaults[name]))  # type: ignore[attr-defined]
            if name in owner._defaults  # type: ignore[attr-defined]
            else (name, owner._types[name])  # type: ignore[attr-defined]
            for name in owner._names  # type: ignore[attr-defined]
        ]
        twin: Any = make_dataclass(owner.__name__, fields, frozen=True)
        type.__setattr__(owner, "__dataclass_fields__", twin.__dataclass_fields__)
        type.__setattr__(owner, "__dataclass_params__", twin.__dataclass_params__)
        return owner.__dict__[self.name]

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name


@dataclass_transform(frozen_default=True, eq_default=True)
def frozen(cls: type[_T]) -> type[_T]:
    """A :class:`Frozen` subclass made a record with slots: its fields are its annotations
    (after a base record's), a class attribute of the same name is the field's default
    (a value: a factory would be shared by every instance). Built directly rather than by
    ``@dataclass``; the dataclass metadata is made when first asked for."""
    namespace = dict(cls.__dict__)
    annotations = namespace.get("__annotations__", {})
    names = list(getattr(cls, "_names", ()))
    defaults = dict(getattr(cls, "_defaults", {}))
    types = dict(getattr(cls, "_types", {}))
    for name, annotation in annotations.items():
        if isinstance(annotation, str) and annotation.split("[", 1)[0].rsplit(".", 1)[-1] in (
            "ClassVar",
            "InitVar",
        ):
            raise TypeError(f"{cls.__name__}.{name}: a frozen record has no class or init-only variables")
        if name not in names:
            names.append(name)
        types[name] = annotation
        if name in namespace:
            default = namespace.pop(name)
            if isinstance(default, Field):
                raise TypeError(f"{cls.__name__}.{name}: a frozen record's defaults are values, not fields")
            defaults[name] = default
        else:
            defaults.pop(name, None)
    seen_default = False
    for name in names:
        if name in defaults:
            seen_default = True
        elif seen_default:
            raise TypeError(f"{cls.__name__}: non-default argument {name!r} follows default argument")
    namespace["__slots__"] = tuple(annotations)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["_names"] = tuple(names)
    namespace["_defaults"] = defaults
    namespace["_types"] = types
    namespace["__match_args__"] = tuple(names)
    namespace["__dataclass_fields__"] = _Metadata()
    namespace["__dataclass_params__"] = _Metadata()
    made = type(cls)(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    return made


def field_defaults(cls: type) -> dict[str, Any]:
    """``{name: default}`` of a frozen record's or a dataclass's fields, in order
    (``dataclasses.MISSING`` where there is none), without making a record's dataclass
    metadata."""
    if issubclass(cls, Frozen):
        return {name: cls._defaults.get(name, MISSING) for name in cls._names}
    return {f.name: f.default for f in dataclasses_fields(cls)}


def compile_maker(cls: type) -> Callable[..., Any]:
    """``make(field1, field2, ...)``: a positional constructor for a frozen slots record
    that fills the slots directly (``__init__`` goes through ``object.__setattr__`` once
    per field and checks its arguments); for readers that build a record per line."""
    setters = tuple(getattr(cls, name).__set__ for name in field_defaults(cls))
    new = object.__new__

    def make(*values: Any) -> Any:
        obj = new(cls)
        for setter, value in zip(setters, values, strict=True):
            setter(obj, value)
        return obj

    return make


def replace(record: _T, /, **changes: Any) -> _T:
    """``dataclasses.replace``: a copy of ``record`` with ``changes``; for a frozen record
    without making its dataclass metadata."""
    if not isinstance(record, Frozen):
        return dataclass_replace(record, **changes)  # type: ignore[type-var]
    values = {name: getattr(record, name) for name in record._names}
    values.update(changes)
    return type(record)(**values)


class Mutable:
    """The base of a mutable record written out by hand (``__slots__`` and ``__init__``):
    equality and ``repr`` over ``_fields``, in order, as a non-frozen dataclass has them;
    not hashable."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({shown})"
