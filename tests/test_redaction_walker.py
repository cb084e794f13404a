"""The C accelerator's passes of a redaction (core/_speedups.c) do what the Python ones,
the reference, do, for values built to take every branch (the corpus files are compared
in test_speedups.py):

- the string walk (``StringWalker``; ``Redactor._walk``) collects the same strings, in the
  same order, and gives the same answer to "does this hold something to drop";
- the rebuild (``Rebuilder``; ``Redactor._rebuild``) gives equal values of the same types,
  keeps what did not change as the same object, and notes the same outcome."""

from __future__ import annotations

from collections import UserDict, UserList
from typing import Any

import piconv
import pytest
from piconv import fastload
from piconv.ir import EMPTY, Image, Reasoning, Text, ToolCall, UserMessage
from piconv.irformat import document_to_json
from piconv.redaction import engine
from piconv.redaction.api import redact
from piconv.redaction.engine import Redactor
from redact_seed import seeded_session


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
    return (redactor._walker()(value, fast), fast), (redactor._walk(value, slow), slow)


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
        redactor._walker()(unset, [])
    with pytest.raises(AttributeError):
        redactor._walk(unset, [])


# --------------------------------------------------------------------------- the rebuild

SECRET = "s3cr3t"


def _with_secrets(value: Any) -> Any:
    """``value`` with the secret beside each string, as a key, an item and a field."""
    return {SECRET: value, "k": [SECRET, value, (SECRET, {"v": SECRET})]}


def _rebuilt(value: Any, *, fast: bool, drop_images: bool = False) -> tuple[Any, Any]:
    assert fastload.speedups is not None, "core/_speedups.c was not built: pip install -e . with gcc"
    redactor = Redactor(None, drop_images=drop_images)  # type: ignore[arg-type]
    redactor._replaced[SECRET] = ("[REDACTED:x#1]", [("x", "[REDACTED:x#1]")])
    rebuild = redactor._rebuilder() if fast else redactor._rebuild
    assert (rebuild == redactor._rebuild) is not fast
    new = rebuild(value)
    outcome = {
        name: {
            rule: {"count": c.count, "values": sorted(c.values), "entries": c.entries}
            for rule, c in table.items()
        }
        for name, table in (("rules", redactor.outcome.rules), ("dropped", redactor.outcome.dropped))
    }
    return new, outcome


def _shape(value: Any) -> Any:
    """What must be equal: values and their types, at any depth."""
    if isinstance(value, dict | UserDict):
        return (type(value), [(_shape(k), _shape(v)) for k, v in value.items()])
    if isinstance(value, list | tuple | UserList):
        return (type(value), [_shape(v) for v in value])
    return (type(value), value)


@pytest.mark.parametrize("drop_images", [False, True])
@pytest.mark.parametrize("value", ODD_VALUES, ids=lambda v: type(v).__name__)
def test_the_c_rebuild_gives_what_the_python_rebuild_gives(value: Any, drop_images: bool) -> None:
    for shown in (value, _with_secrets(value)):
        if isinstance(value, _Computed):  # no positional maker for it: both refuse alike
            for fast in (True, False):
                with pytest.raises(TypeError, match="is not a slot"):
                    _rebuilt(shown, fast=fast, drop_images=drop_images)
            continue
        fast, fast_outcome = _rebuilt(shown, fast=True, drop_images=drop_images)
        slow, slow_outcome = _rebuilt(shown, fast=False, drop_images=drop_images)
        assert _shape(fast) == _shape(slow)
        assert fast_outcome == slow_outcome
        assert (fast is shown) == (slow is shown)


def test_the_rebuild_replaces_drops_and_keeps() -> None:
    """The comparisons above can fail: each effect is seen."""
    node = ToolCall(call_id=SECRET, name=SECRET, arguments={SECRET: [SECRET, 1]}, signature="sig")
    new, outcome = _rebuilt(node, fast=True)
    assert new.call_id == SECRET  # a tree id is never changed
    assert new.name == "[REDACTED:x#1]" and new.arguments == {"[REDACTED:x#1]": ["[REDACTED:x#1]", 1]}
    assert new.signature is None
    assert outcome["rules"]["x"]["count"] == 3 and outcome["dropped"]["signature"]["count"] == 1
    unchanged = Text(text="nothing here", extra={"kept": ["a"]})
    assert _rebuilt(unchanged, fast=True)[0] is unchanged
    image = Image(data="aGVsbG8=", extra={"encrypted_x": "y", "plain": SECRET})
    kept, _ = _rebuilt(image, fast=True)
    dropped, dropped_outcome = _rebuilt(image, fast=True, drop_images=True)
    assert kept.data == "aGVsbG8=" and dropped.data is None
    assert dict(kept.extra) == {"plain": "[REDACTED:x#1]"}
    assert set(dropped_outcome["dropped"]) == {"image", "signature"}


def test_redaction_with_and_without_the_accelerator_is_the_same(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session seeded with secrets in every field, signatures and images."""
    path = tmp_path / "seeded.jsonl"
    path.write_bytes(seeded_session())
    doc = piconv.load(path)
    for images in (False, True):
        fast = redact(doc, images=images)
        with monkeypatch.context() as patch:
            patch.setattr(engine, "speedups", None)
            slow = redact(doc, images=images)
        assert document_to_json(fast.document) == document_to_json(slow.document)
        assert fast.to_json() == slow.to_json()
        assert fast.to_json()["rules"] and fast.to_json()["dropped"]


def test_repeated_redaction_holds_no_memory(tmp_path: Any) -> None:
    """A redactor, its strings and its replacements are freed by reference counting when
    the redaction returns: nothing the C passes hold keeps them in a cycle (a bulk worker
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


# --------------------------------------------------------------------------- hostile values


def _outcomes(value_for: Any, *, rebuild: bool) -> list[tuple[str, Any]]:
    """What the Python pass and the C pass do with a value made afresh for each: a result
    or the type of the exception raised (never a crash)."""
    out: list[tuple[str, Any]] = []
    for fast in (False, True):
        redactor = Redactor(None, drop_images=False)  # type: ignore[arg-type]
        redactor._replaced["x"] = ("NEW", [("rule", "NEW")])
        value = value_for()
        try:
            if rebuild:
                done = (redactor._rebuilder() if fast else redactor._rebuild)(value)
                out.append(("value", _shape(done)))
            else:
                seen: list[str] = []
                answer = (redactor._walker() if fast else redactor._walk)(value, seen)
                out.append(("value", (answer, seen)))
        except Exception as exc:  # the type of what it raised is what is compared
            out.append(("raised", type(exc)))
    return out


def _list_cleared_by_a_callback() -> list[Any]:
    outer: list[Any] = []

    class Clears(str):
        def __str__(self) -> str:
            outer.clear()
            return "x"

    outer[:] = [Clears("a"), *(f"s{i}" for i in range(200)), "x"]
    return outer


def _node_whose_field_is_deleted_by_a_callback() -> ToolCall:
    node: ToolCall

    class Deletes(str):
        def __str__(self) -> str:
            object.__delattr__(node, "namespace")
            return "x"

    node = ToolCall(call_id="c", name="n", arguments=[Deletes("a")], namespace="ns")
    return node


def _dict_grown_by_a_callback() -> dict[str, Any]:
    grown: dict[str, Any] = {}

    class Grows(str):
        def __str__(self) -> str:
            grown["added"] = "x"
            return "x"

    grown.update({"a": [Grows("a")], "b": "x"})
    return grown


@pytest.mark.parametrize("rebuild", [False, True])
@pytest.mark.parametrize(
    "value_for",
    [_list_cleared_by_a_callback, _node_whose_field_is_deleted_by_a_callback, _dict_grown_by_a_callback],
)
def test_values_changed_under_the_walk_fail_or_pass_alike(value_for: Any, rebuild: bool) -> None:
    python, c = _outcomes(value_for, rebuild=rebuild)
    assert c == python


def test_nesting_deeper_than_the_c_passes_go_is_handed_to_python() -> None:
    """The C passes nest only so deep; beyond, the Python ones go on as far as the
    recursion limit allows (Python's own calls do not use the C stack)."""
    import sys

    def nested(depth: int) -> Any:
        value: Any = "x"
        for _ in range(depth):
            value = [value]
        return value

    assert _outcomes(lambda: nested(800), rebuild=False) == [("value", (False, ["x"]))] * 2
    assert _outcomes(lambda: nested(5000), rebuild=True) == [("raised", RecursionError)] * 2
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200_000)
    try:
        walked = _outcomes(lambda: nested(50_000), rebuild=False)
        rebuilt = []
        for fast in (False, True):
            redactor = Redactor(None, drop_images=False)  # type: ignore[arg-type]
            redactor._replaced["x"] = ("NEW", [("rule", "NEW")])
            rebuilt.append((redactor._rebuilder() if fast else redactor._rebuild)(nested(50_000)))
    finally:
        sys.setrecursionlimit(limit)
    assert walked == [("value", (False, ["x"]))] * 2
    for value in rebuilt:  # looked at level by level: comparing them whole would nest in C
        depth = 0
        while type(value) is list:
            (value,) = value
            depth += 1
        assert (depth, value) == (50_000, "NEW")
