"""Frozen records (the IR's nodes, the registry's declarations, problems, read records)
share their methods (piconv.records.Frozen) instead of having them generated; they must
behave exactly as frozen slots dataclasses do."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from piconv import ir, plugins, problems, reader, readers, records, registry

NODES = sorted(
    (
        c
        for module in (ir, plugins, problems, reader, readers, registry)
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
        registry.Converter,
        readers.Reader,
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
