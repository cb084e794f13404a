"""The C accelerator's string walk (``StringWalker`` in core/_speedups.c) collects what
the Python walk (``Redactor._walk``, the reference) collects: the same strings, in the
same order, and the same answer to "does this hold something to drop", for values built
to take every branch of the walk (the corpus files are compared in test_speedups.py)."""

from __future__ import annotations

from collections import UserDict, UserList
from typing import Any

import pytest
from piconv import fastload
from piconv.ir import EMPTY, Image, Reasoning, Text, ToolCall, UserMessage
from piconv.redaction.engine import Redactor


class _Str(str):
    pass


class _Computed(Text):
    """An IR class one of whose fields is not a slot: the C walk hands it to Python."""

    __slots__ = ()

    @property  # type: ignore[misc]
    def text(self) -> str:  # type: ignore[override]
        return "computed text"


def _computed() -> _Computed:
    node = object.__new__(_Computed)
    for name, value in (("text", "stored text"), ("signature", None), ("extra", EMPTY)):
        Text.__dict__[name].__set__(node, value)  # the slots under the property
    return node


class _Sub(Text):
    """An IR subclass the walk has no plan for until it meets one."""

    __slots__ = ()


def _both(value: Any, *, drop_images: bool = False) -> tuple[tuple[bool, list[str]], tuple[bool, list[str]]]:
    assert fastload.speedups is not None, "core/_speedups.c was not built: pip install -e . with gcc"
    redactor = Redactor(None, drop_images=drop_images)  # type: ignore[arg-type]
    fast: list[str] = []
    slow: list[str] = []
    return (redactor._strings_of(value, fast), fast), (redactor._walk(value, slow), slow)


ODD_VALUES: list[Any] = [
    "plain",
    _Str("a str subclass"),
    {"key": "value", 3: "int key", ("tuple", "key"): ["in", "a", "list"], "n": 1.5, "b": True, "z": None},
    UserDict({"mapping key": "mapping value"}),
    UserList(["user", "list"]),
    ("tuple", ["nested", {"deep": ("er", "est")}]),
    frozenset({"never", "read"}),
    {"never", "read"},
    b"bytes are not text",
    EMPTY,
    [EMPTY, {}, [], ()],
    Text(text="hello", signature="opaque"),
    Text(text="hello"),
    Image(data="aGVsbG8=", media_type="image/png"),
    Reasoning(text="thinking", signature=None, extra={"encrypted_content": "x"}),
    Reasoning(text="thinking", extra={"encrypted_content": None, "kept": "yes"}),
    ToolCall(call_id="c1", name="bash", arguments={"command": "ls ~", "env": {"TOKEN": "t"}}),
    _computed(),
    _Sub(text="a subclass", extra={"signature_of_something": "s"}),
    UserMessage(content=(Text(text="a"), Image(data="x"), _Sub(text="b")), extra={"origin": ["x", 1]}),
]


@pytest.mark.parametrize("drop_images", [False, True])
@pytest.mark.parametrize("value", ODD_VALUES, ids=lambda v: type(v).__name__)
def test_the_c_walk_collects_what_the_python_walk_collects(value: Any, drop_images: bool) -> None:
    fast, slow = _both(value, drop_images=drop_images)
    assert fast == slow


def test_the_walk_tells_what_is_dropped() -> None:
    """The answers compared above can differ: each flag is seen set and unset."""
    assert _both(Text(text="t", signature="s"))[0][0] is True
    assert _both(Text(text="t"))[0][0] is False
    assert _both(Image(data="x"), drop_images=True)[0][0] is True
    assert _both(Image(data="x"), drop_images=False)[0][0] is False
    assert _both(Reasoning(extra={"encrypted_content": "x"}))[0][0] is True
    assert _both(Reasoning(extra={"encrypted_content": None}))[0][0] is False
    # met in a list or a mapping, a node's answer reaches the top
    assert _both([{"k": [Text(text="t", signature="s")]}])[0] == (True, ["k", "t"])
    assert _both(_computed())[0] == (False, ["computed text"])


def test_deep_values_and_broken_nodes_fail_alike() -> None:
    nested: Any = "bottom"
    for _ in range(200):
        nested = [nested, {"k": "v"}]
    fast, slow = _both(nested)
    assert fast == slow and len(fast[1]) == 401
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(RecursionError):
        _both(nested)
    unset = object.__new__(Text)  # its slots never filled
    redactor = Redactor(None, drop_images=False)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        redactor._strings_of(unset, [])
    with pytest.raises(AttributeError):
        redactor._walk(unset, [])
