"""The passes of a redaction that walk the IR generically (``Redactor._walk``, which
collects the strings, and ``Redactor._rebuild``, which rebuilds what changed), on values
built to take every branch:

- the walk collects every string, keys included, in order, passing over numbers, sets
  and bytes, and tells whether a value holds something to drop;
- the rebuild replaces, drops and keeps, leaving what did not change the same object."""

from __future__ import annotations

from collections import UserDict
from typing import Any

import piconv
import pytest
from piconv.ir import EMPTY, Image, Reasoning, Text, ToolCall, UserMessage
from piconv.redaction.api import redact
from piconv.redaction.engine import Redactor


class _Str(str):
    pass


class _Computed(Text):
    """An IR class one of whose fields is not a slot: the walk reads the property."""

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


def _walked(value: Any, *, drop_images: bool = False) -> tuple[bool, list[str]]:
    redactor = Redactor(None, drop_images=drop_images)  # type: ignore[arg-type]
    seen: list[str] = []
    return redactor._walk(value, seen), seen


@pytest.mark.parametrize(
    ("value", "strings"),
    [
        ("plain", ["plain"]),
        (_Str("a str subclass"), ["a str subclass"]),
        (
            {
                "key": "value",
                3: "int key",
                ("tuple", "key"): ["in", "a", "list"],
                "n": 1.5,
                "b": True,
                "z": None,
            },
            ["key", "value", "int key", "tuple", "key", "in", "a", "list", "n", "b", "z"],
        ),
        (UserDict({"mapping key": "mapping value"}), ["mapping key", "mapping value"]),
        (("tuple", ["nested", {"deep": ("er", "est")}]), ["tuple", "nested", "deep", "er", "est"]),
        (frozenset({"never", "read"}), []),
        ({"never", "read"}, []),
        (b"bytes are not text", []),
        ([EMPTY, {}, [], ()], []),
        (
            ToolCall(call_id="c1", name="bash", arguments={"command": "ls ~", "env": {"TOKEN": "t"}}),
            ["bash", "command", "ls ~", "env", "TOKEN", "t"],
        ),
        (Image(data="aGVsbG8=", media_type="image/png"), ["image/png"]),
        (
            UserMessage(
                content=(Text(text="a"), Image(data="x"), _Sub(text="b")), extra={"origin": ["x", 1]}
            ),
            ["a", "b", "origin", "x"],
        ),
    ],
    ids=lambda v: type(v).__name__,
)
def test_the_walk_collects_every_string_in_order(value: Any, strings: list[str]) -> None:
    for drop_images in (False, True):
        assert _walked(value, drop_images=drop_images)[1] == strings


def test_the_walk_tells_what_is_dropped() -> None:
    assert _walked(Text(text="t", signature="s"))[0] is True
    assert _walked(Text(text="t"))[0] is False
    assert _walked(Image(data="x"), drop_images=True)[0] is True
    assert _walked(Image(data="x"), drop_images=False)[0] is False
    assert _walked(Reasoning(extra={"encrypted_content": "x"}))[0] is True
    assert _walked(Reasoning(extra={"encrypted_content": None}))[0] is False
    assert _walked(_Sub(text="a subclass", extra={"signature_of_something": "s"})) == (
        True,
        ["a subclass", "signature_of_something", "s"],
    )
    # met in a list or a mapping, a node's answer reaches the top
    assert _walked([{"k": [Text(text="t", signature="s")]}]) == (True, ["k", "t"])
    assert _walked(_computed()) == (False, ["computed text"])


def test_deep_values_and_broken_nodes() -> None:
    nested: Any = "bottom"
    for _ in range(200):
        nested = [nested, {"k": "v"}]
    walked = _walked(nested)
    assert walked[0] is False and len(walked[1]) == 401
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(RecursionError):
        _walked(nested)
    unset = object.__new__(Text)  # its slots never filled
    with pytest.raises(AttributeError):
        _walked(unset)


# --------------------------------------------------------------------------- the rebuild

SECRET = "s3cr3t"


def _with_secrets(value: Any) -> Any:
    """``value`` with the secret beside each string, as a key, an item and a field."""
    return {SECRET: value, "k": [SECRET, value, (SECRET, {"v": SECRET})]}


def _rebuilt(value: Any, *, drop_images: bool = False) -> tuple[Any, Any]:
    redactor = Redactor(None, drop_images=drop_images)  # type: ignore[arg-type]
    redactor._replaced[SECRET] = ("[REDACTED:x#1]", [("x", "[REDACTED:x#1]")])
    new = redactor._rebuild(value)
    outcome = {
        name: {
            rule: {"count": c.count, "values": sorted(c.values), "entries": c.entries}
            for rule, c in table.items()
        }
        for name, table in (("rules", redactor.outcome.rules), ("dropped", redactor.outcome.dropped))
    }
    return new, outcome


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        {"key": "value", 3: "int key", ("tuple", "key"): ["in", "a", "list"]},
        UserDict({"mapping key": "mapping value"}),
        frozenset({"never", "read"}),
        b"bytes are not text",
        [EMPTY, {}, [], ()],
        Text(text="hello"),
        ToolCall(call_id="c1", name="bash", arguments={"command": "ls ~"}),
        _computed(),
        _Sub(text="a subclass"),
    ],
    ids=lambda v: type(v).__name__,
)
def test_the_rebuild_replaces_what_changed_and_keeps_the_rest_as_it_is(value: Any) -> None:
    assert _rebuilt(value) == (value, {"rules": {}, "dropped": {}})
    assert _rebuilt(value)[0] is value
    new, outcome = _rebuilt(_with_secrets(value))
    placeholder = "[REDACTED:x#1]"
    assert new == {placeholder: value, "k": [placeholder, value, (placeholder, {"v": placeholder})]}
    assert new[placeholder] is value and new["k"][1] is value
    assert outcome["rules"] == {"x": {"count": 4, "values": [placeholder], "entries": []}}


def test_the_rebuild_replaces_drops_and_keeps() -> None:
    node = ToolCall(call_id=SECRET, name=SECRET, arguments={SECRET: [SECRET, 1]}, signature="sig")
    new, outcome = _rebuilt(node)
    assert new.call_id == SECRET  # a tree id is never changed
    assert new.name == "[REDACTED:x#1]" and new.arguments == {"[REDACTED:x#1]": ["[REDACTED:x#1]", 1]}
    assert new.signature is None
    assert outcome["rules"]["x"]["count"] == 3 and outcome["dropped"]["signature"]["count"] == 1
    unchanged = Text(text="nothing here", extra={"kept": ["a"]})
    assert _rebuilt(unchanged)[0] is unchanged
    image = Image(data="aGVsbG8=", extra={"encrypted_x": "y", "plain": SECRET})
    kept, _ = _rebuilt(image)
    dropped, dropped_outcome = _rebuilt(image, drop_images=True)
    assert kept.data == "aGVsbG8=" and dropped.data is None
    assert dict(kept.extra) == {"plain": "[REDACTED:x#1]"}
    assert set(dropped_outcome["dropped"]) == {"image", "signature"}


def test_repeated_redaction_holds_no_memory(tmp_path: Any) -> None:
    """A redactor, its strings and its replacements are freed by reference counting when
    the redaction returns: nothing the passes hold keeps them in a cycle (a bulk worker
    redacts session after session, and the command line runs without the cyclic
    collector)."""
    import gc
    import tracemalloc

    from test_bulk import conversation

    path = tmp_path / "s.jsonl"
    path.write_bytes(
        conversation("s", prompt="see /home/alice/p and /home/alice/q", cwd="/home/alice/p", turns=300)
    )
    doc = piconv.load(path)
    assert redact(doc).to_json()["rules"]["home"]["count"] >= 300
    was_enabled = gc.isenabled()
    gc.disable()
    tracemalloc.start()
    try:
        for _ in range(3):
            redact(doc)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(20):
            redact(doc)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()
    assert grown < 256 * 1024, f"{grown} bytes held after 20 redactions"
