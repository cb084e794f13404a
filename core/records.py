"""Frozen records whose methods are shared rather than generated.

``@dataclass(frozen=True, slots=True)`` writes and compiles ``__init__``, ``__eq__``,
``__hash__``, ``__repr__``, ``__setattr__`` and ``__delattr__`` for each class when its
module is imported: about a millisecond for a class of fifteen fields, paid by every run
of piconv for every such class on its way. A class decorated with :func:`frozen` and
derived from :class:`Frozen` inherits these methods instead and behaves as the generated
ones do (``tests/test_records.py`` holds every such class to a generated twin).
"""

from __future__ import annotations

from dataclasses import MISSING, FrozenInstanceError, dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # type checkers see a frozen record as the frozen dataclass it behaves as
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_kwargs: Any) -> Any:
        return lambda decorated: decorated


__all__ = ["Frozen", "frozen"]

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
        return self._values()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self._names, state, strict=True):
            object.__setattr__(self, name, value)


@dataclass_transform(frozen_default=True, eq_default=True)
def frozen(cls: type[_T]) -> type[_T]:
    """A :class:`Frozen` subclass made a dataclass with slots, its methods inherited.
    Defaults are values (a factory would be shared by every instance)."""
    made = dataclass(slots=True, init=False, repr=False, eq=False)(cls)
    fields = made.__dataclass_fields__  # type: ignore[attr-defined]
    made._names = tuple(fields)  # type: ignore[attr-defined]
    made._defaults = {n: f.default for n, f in fields.items() if f.default is not MISSING}  # type: ignore[attr-defined]
    if any(f.default_factory is not MISSING for f in fields.values()):
        raise TypeError(f"{cls.__name__}: a frozen record's defaults are values, not factories")
    return made
