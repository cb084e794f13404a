"""pi's session semantics: header, migrations, the tree and its repairs, the leaf."""

from __future__ import annotations

import os

import piconv
import pytest
from conftest import session_bytes
from piconv import InputError, ir


def msg(
    entry_id: str | None, parent: str | None, text: str = "x", role: str = "user", **extra: object
) -> dict:
    entry: dict = {
        "type": "message",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": role, "content": text, "timestamp": 1},
    }
    if entry_id is not None:
        entry["id"] = entry_id
    entry["parentId"] = parent
    entry.update(extra)
    return entry


def codes(doc: ir.Document) -> list[tuple[int, str]]:
    return [(i.line, i.code) for i in doc.issues]


def test_leaf_is_the_last_entry_and_every_leaf_is_enumerable() -> None:
    doc = piconv.load(session_bytes(msg("a", None), msg("b", "a"), msg("c", "a"), msg("d", "b")))
    assert doc.leaf_id == "d"
    assert [e.id for e in doc.leaves()] == ["c", "d"]
    assert [e.id for e in doc.branch_points()] == ["a"]
    assert [e.id for e in doc.path()] == ["a", "b", "d"]
    assert [e.id for e in doc.path("c")] == ["a", "c"]
    assert [(e.id, depth) for e, depth in doc.walk()] == [("a", 0), ("b", 1), ("d", 2), ("c", 1)]
    assert doc.issues == ()


def test_several_roots() -> None:
    doc = piconv.load(session_bytes(msg("a", None), msg("b", "a"), msg("r2", None), msg("c", "r2")))
    assert [e.id for e in doc.roots()] == ["a", "r2"]
    assert [e.id for e in doc.path()] == ["r2", "c"]


def test_dangling_parent_becomes_a_root_and_is_reported() -> None:
    doc = piconv.load(session_bytes(msg("a", None), msg("b", "ghost")))
    assert doc.get("b").parent_id is None  # type: ignore[union-attr]
    assert codes(doc) == [(3, "dangling-parent")]
    assert [e.id for e in doc.path()] == ["b"]


def test_duplicate_ids_the_later_wins_and_the_earlier_is_kept() -> None:
    doc = piconv.load(session_bytes(msg("a", None, "first"), msg("a", None, "second"), msg("b", "a")))
    assert codes(doc) == [(2, "duplicate-id")]
    assert [e.id for e in doc.entries] == ["a~2", "a", "b"]
    assert doc.path()[0].message.content == "second"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("entries", "cut"),
    [
        ([msg("a", "b"), msg("b", "a")], "a"),  # two-cycle: cut at the first in the file
        ([msg("a", "a")], "a"),  # self-parent
        ([msg("r", None), msg("x", "z"), msg("y", "x"), msg("z", "y"), msg("leaf", "y")], "x"),
        # a duplicate id makes the cycle: "b"'s parent "a" becomes the later "a", whose parent is "b"
        ([msg("a", None), msg("b", "a"), msg("a", "b")], "b"),
        # a parent further on, then a dangling one and a plain chain around them
        ([msg("r", None), msg("p", "q"), msg("q", "p"), msg("s", "r")], "p"),
    ],
)
def test_parent_cycles_are_cut_where_pi_would_hang(entries: list[dict], cut: str) -> None:
    doc = piconv.load(session_bytes(*entries))
    assert [c for _l, c in codes(doc) if c != "duplicate-id"] == ["parent-cycle"]
    assert doc.get(cut).parent_id is None  # type: ignore[union-attr]
    for leaf in doc.leaves():
        assert len(doc.path(leaf.id)) <= len(doc.entries)
    doc.context()  # terminates


def test_entries_without_ids_get_stable_synthetic_ids() -> None:
    data = session_bytes(msg(None, None), msg(None, None))
    first, second = piconv.load(data), piconv.load(data)
    assert [e.id for e in first.entries] == [e.id for e in second.entries] == ["~2", "~3"]
    assert [c for _l, c in codes(first)] == ["missing-id", "missing-id"]


def test_version_1_migration_gives_pi_ids_parents_and_compaction_targets() -> None:
    header = {"type": "session", "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"}
    data = session_bytes(
        msg(None, None, "one"),
        msg(None, None, "two", role="user"),
        {
            "type": "compaction",
            "timestamp": "2026-01-01T00:00:01Z",
            "summary": "S",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 9,
        },
        {
            "type": "message",
            "timestamp": "t",
            "message": {
                "role": "hookMessage",
                "customType": "x",
                "content": "c",
                "display": True,
                "timestamp": 2,
            },
        },
        header=header,
    )
    doc = piconv.load(data)
    assert [e.id for e in doc.entries] == ["00000001", "00000002", "00000003", "00000004"]
    assert [e.parent_id for e in doc.entries] == [None, "00000001", "00000002", "00000003"]
    # firstKeptEntryIndex counts the header as index 0
    assert doc.entries[2].body.first_kept_id == "00000002"  # type: ignore[union-attr]
    assert isinstance(doc.entries[3].message, ir.ExtensionMessage)
    assert doc.session.source_version == 1


def test_late_and_missing_headers_are_read_anyway() -> None:
    late = session_bytes(msg("a", None), {"type": "session", "version": 3, "id": "s", "cwd": "/w"}, header={})
    doc = piconv.load(late)
    assert doc.session.cwd == "/w" and [c for _l, c in codes(doc)] == ["late-header"]
    missing = session_bytes(msg("a", None), msg("b", "a"), header={})
    doc = piconv.load(missing)
    assert [c for _l, c in codes(doc)] == ["missing-header"] and doc.leaf_id == "b"


def test_not_a_session_and_empty_input_raise_input_error(tmp_path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        piconv.load(empty)
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"name": "not a session"}\n[1,2]\n')
    with pytest.raises(InputError, match=r"no reader recognises this input \(readers tried: asf, pi\)"):
        piconv.load(other)
    with pytest.raises(InputError, match="not a pi session"):  # the pi reader's own verdict
        piconv.load(other, reader="pi")
    with pytest.raises(InputError, match="no such file"):
        piconv.load(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="directory"):
        piconv.load(tmp_path)


def test_lines_are_all_accounted_for() -> None:
    data = session_bytes(msg("a", None), b"not json", b"", msg("b", "a"), b"[1]")
    doc = piconv.load(data)
    header_lines = 1 + len(doc.session.other_headers)
    problem_lines = {i.line for i in doc.issues}
    assert doc.lines_read == len(doc.entries) + header_lines + len(problem_lines) == 6


def test_an_output_file_gets_the_usual_permissions(tmp_path) -> None:
    out = tmp_path / "out.json"
    piconv.convert(session_bytes(msg("a", None)), "ir", out)
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left
