"""Frozen records (the IR's nodes, the registry's declarations, problems, read records)
share their methods (piconv.records.Frozen) instead of having them generated; they must
behave exactly as frozen slots dataclasses do."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from typing import ClassVar

import pytest
from piconv import filters, inputformat, ir, jsonl, outputformat, plugins, problems, records
from piconv.facts import summary

NODES = sorted(
    (
        c
        for module in (ir, summary, plugins, problems, jsonl, inputformat, outputformat, filters)
        for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, records.Frozen) and c not in (records.Frozen, ir.Node)
    ),
    key=lambda c: c.__name__,
)


def _twin(cls: type) -> type:
    """The same fields as a generated frozen slots dataclass, the reference behaviour."""
    fields = [
        (f.name, f.type, dataclasses.field(default=f.default))
        if f.default is not dataclasses.MISSING
        else (f.name, f.type)
        for f in dataclasses.fields(cls)
    ]
    return dataclasses.make_dataclass(cls.__name__, fields, frozen=True, slots=True)


def _sample(cls: type, salt: str) -> dict:
    return {f.name: f"{salt}-{f.name}" for f in dataclasses.fields(cls)}


def test_there_are_nodes() -> None:
    assert len(NODES) >= 36 and {
        ir.Entry,
        ir.Text,
        outputformat.Converter,
        inputformat.Reader,
        problems.Problem,
    } <= set(NODES)


@pytest.mark.parametrize("cls", NODES, ids=lambda c: c.__name__)
def test_a_node_behaves_as_a_frozen_slots_dataclass(cls: type) -> None:
    twin = _twin(cls)
    values = _sample(cls, "a")
    node, reference = cls(**values), twin(**values)
    assert repr(node) == repr(reference).replace(twin.__qualname__, cls.__qualname__)
    assert node == cls(**values) and hash(node) == hash(cls(**values)) == hash(reference)
    assert node != cls(**_sample(cls, "b")) and node != reference
    positional = cls(*values.values())
    assert positional == node
    assert dataclasses.is_dataclass(node) and [f.name for f in dataclasses.fields(node)] == list(values)
    name = next(iter(values))
    changed = dataclasses.replace(node, **{name: "other"})
    assert getattr(changed, name) == "other" and getattr(node, name) == values[name]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(node, name, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(node, name)
    with pytest.raises(AttributeError):
        node.__dict__  # noqa: B018 (slots: no instance dictionary)
    assert pickle.loads(pickle.dumps(node)) == node and copy.deepcopy(node) == node
    assert cls.__match_args__ == twin.__match_args__


@pytest.mark.parametrize("cls", NODES, ids=lambda c: c.__name__)
def test_a_node_refuses_what_the_generated_constructor_refuses(cls: type) -> None:
    twin = _twin(cls)
    values = list(_sample(cls, "a").values())
    for attempt in (
        lambda c: c(*values, "extra"),
        lambda c: c(bogus=1),
        lambda c: c(values[0], **{dataclasses.fields(c)[0].name: 1}),
    ):
        with pytest.raises(TypeError):
            attempt(twin)
        with pytest.raises(TypeError):
            attempt(cls)
    required = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]
    if required:
        with pytest.raises(TypeError):
            cls()
    else:
        assert cls() == cls(**{f.name: f.default for f in dataclasses.fields(cls)})


@pytest.mark.parametrize("cls", NODES, ids=lambda c: c.__name__)
def test_replace_and_field_defaults_agree_with_dataclasses(cls: type) -> None:
    node = cls(**_sample(cls, "a"))
    name = next(iter(_sample(cls, "a")))
    assert records.replace(node, **{name: "other"}) == dataclasses.replace(node, **{name: "other"})
    with pytest.raises(TypeError):
        records.replace(node, bogus=1)
    assert records.field_defaults(cls) == {f.name: f.default for f in dataclasses.fields(cls)}


def test_a_record_is_declared_as_a_dataclass_would_be() -> None:
    with pytest.raises(TypeError, match="non-default argument"):

        @records.frozen
        class Misordered(records.Frozen):
            first: int = 0
            second: int

    with pytest.raises(TypeError, match="class or init-only"):

        @records.frozen
        class WithClassVar(records.Frozen):
            shared: ClassVar[int] = 0

    @records.frozen
    class Base(records.Frozen):
        a: int
        b: str = "b"

    @records.frozen
    class Derived(Base):
        c: int = 3

    assert Derived(1) == Derived(1, "b", 3) and [f.name for f in dataclasses.fields(Derived)] == [
        "a",
        "b",
        "c",
    ]
    assert records.replace(Derived(1), c=4).c == 4 and Derived.__match_args__ == ("a", "b", "c")


def test_converting_makes_no_dataclass_metadata(tmp_path) -> None:
    """Making a record's dataclass metadata costs what ``@dataclass`` does; loading a
    session and converting it never asks for it (checked in a fresh interpreter)."""
    session = tmp_path / "s.jsonl"
    session.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}\n'
        '{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}\n'
    )
    probe = (
        "import sys, piconv\n"
        "from piconv import inputformat, ir, jsonl, outputformat, records\n"
        "doc = piconv.load(sys.argv[1])\n"
        "for fmt in ('ir', 'pi', 'openai', 'asf', 'markdown', 'html'):\n"
        "    assert piconv.convert_to_bytes(doc, fmt)\n"
        "made = sorted(c.__name__ for m in (ir, jsonl, inputformat, outputformat) for c in vars(m).values()\n"
        "    if isinstance(c, type) and issubclass(c, records.Frozen)\n"
        "    and isinstance(c.__dict__.get('__dataclass_fields__'), dict))\n"
        "print(made)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(session)], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_a_report_is_a_plain_mutable_record() -> None:
    from piconv.report import LossItem, Report

    first, second = Report("asf"), Report("asf")
    first.add("x", 3, "detail")
    assert first != second and second.losses == {} and first.losses["x"] == LossItem("x", 1, [3], ["detail"])
    second.add("x", 3, "detail")
    assert first == second and repr(first) == repr(second)
    assert repr(Report("ir")).startswith("Report(format='ir', source=None, lines_read=0")
    with pytest.raises(TypeError):
        hash(first)


def _every_record_class() -> list[type]:
    import sys

    import piconv.filters
    import piconv.redaction.api  # noqa: F401 (its records join the subclasses)

    found, todo = [], [records.Frozen]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            module = sys.modules.get(sub.__module__)
            # the class its module holds now (a test may have loaded a module again)
            if sub.__module__.startswith("piconv.") and getattr(module, sub.__qualname__, None) is sub:
                found.append(sub)
    return sorted(found, key=lambda c: c.__qualname__)


def test_every_record_pickles_every_field() -> None:
    """What a directory run sends its workers arrives whole, including a field a class
    leaves out of comparing and showing (RedactOptions' environment)."""
    classes = _every_record_class()
    assert {c.__name__ for c in classes} >= {"RedactOptions", "Filter", "Entry", "Converter"}
    for cls in classes:
        node = cls(**{name: f"a-{name}" for name in cls._names})
        copy_ = pickle.loads(pickle.dumps(node))
        assert [getattr(copy_, n) for n in cls._names] == [getattr(node, n) for n in cls._names], cls
