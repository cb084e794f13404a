"""The asf reader: detection, ids and parents checked as read, unknown members kept, the
RFC 0001 context, and round trips over every corpus file (pi → ASF → each format equals
pi → that format, but for what docs/formats/asf.md says ASF cannot carry)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import piconv
import pytest
from conftest import SHARED, corpus_files, session_bytes
from piconv import ir
from piconv.converters.asf.read import request_context

EXAMPLES = sorted((SHARED / "reference" / "asf" / "examples").glob("*.jsonl"))
HEADER = {
    "type": "session",
    "format": "agentsession/0.11",
    "id": "s-1",
    "created_at": "2026-09-17T12:00:00Z",
    "payload": "openresponses/2026-04-24",
    "harness": {"name": "elsewhere", "version": "7"},
    "future": [1],
}
TS = "2026-09-17T12:00:0%dZ"


def asf_bytes(*entries: Any, header: Any = HEADER) -> bytes:
    lines = [header, *entries] if header is not None else list(entries)
    return b"".join(e if isinstance(e, bytes) else orjson.dumps(e) + b"\n" for e in lines)


def item(entry_id: str, parent: str | None, value: dict[str, Any], n: int = 1, **more: Any) -> dict[str, Any]:
    return {"type": "item", "id": entry_id, "parent": parent, "ts": TS % n, "item": value, **more}


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def to_asf(data: bytes) -> bytes:
    out = io.BytesIO()
    piconv.convert(data, "asf", out)
    return out.getvalue()


def render(doc: ir.Document, fmt: str) -> bytes:
    out = io.BytesIO()
    piconv.convert(doc, fmt, out)
    return out.getvalue()


# --------------------------------------------------------------------------- detection


def test_piconv_own_asf_output_is_detected_as_asf_not_pi() -> None:
    pi = session_bytes(
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi"},
        }
    )
    asf = to_asf(pi)
    assert piconv.detect(pi).name == "pi"
    assert piconv.detect(asf).name == "asf"
    doc = piconv.load(asf)
    assert [e.id for e in doc.entries] == ["a"] and doc.issues == ()


@pytest.mark.shared
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_reference_examples_are_detected_and_convert_to_every_format(path: Path) -> None:
    assert piconv.detect(path).name == "asf"
    doc = piconv.load(path)
    assert doc.entries and doc.session.source_format == "asf"
    for converter in piconv.formats():
        out = io.BytesIO()
        piconv.convert(doc, converter.name, out)  # validated: a failure raises
        assert out.getvalue()


@pytest.mark.shared
def test_a_cut_last_line_is_reported_with_its_line() -> None:
    doc = piconv.load(SHARED / "reference" / "asf" / "examples" / "sessions_truncated.jsonl")
    assert [(i.line, i.code) for i in doc.issues] == [(10, "truncated")]
    assert len(doc.entries) == 8


def test_the_header_becomes_the_session_and_unknown_header_members_stay() -> None:
    doc = piconv.load(asf_bytes(item("a", None, user("hi"))))
    assert (doc.session.id, doc.session.created, doc.session.source_version) == (
        "s-1",
        "2026-09-17T12:00:00Z",
        11,
    )
    assert doc.session.extra["future"] == [1] and doc.session.extra["harness"] == {
        "name": "elsewhere",
        "version": "7",
    }


# --------------------------------------------------------------------------- ids and parents


def test_bad_ids_and_parents_are_problems_with_their_line_never_a_crash() -> None:
    data = asf_bytes(
        item("a", None, user("one")),  # line 2
        item("", "a", user("empty id")),  # 3: skipped
        {"type": "item", "parent": "a", "ts": TS % 1},  # 4: no id, skipped
        item("a", None, user("again")),  # 5: id used before, skipped
        item("b", "later", user("parent unknown")),  # 6: kept as a root
        item("c", ["a"], user("parent not a string")),  # 7: kept as a root
        item("later", "b", user("late")),  # 8
        item("d", "later", user("fine")),  # 9
        b"{not json\n",  # 10
        {"type": "session", "format": "agentsession/0.11"},  # 11: a second header
    )
    doc = piconv.load(data)
    assert [(i.line, i.code) for i in doc.issues] == [
        (3, "bad-id"),
        (4, "bad-id"),
        (5, "duplicate-id"),
        (6, "bad-parent"),
        (7, "bad-parent"),
        (10, "not-json"),
        (11, "extra-header"),
    ]
    assert [(e.id, e.parent_id) for e in doc.entries] == [
        ("a", None),
        ("b", None),
        ("c", None),
        ("later", "b"),
        ("d", "later"),
    ]
    assert doc.get("b").extra["parent"] == "later" and doc.get("c").extra["parent"] == [
        "a"
    ]  # kept as written
    assert doc.leaf_id == "d" and [m.message.content for m in doc.context().messages] == [
        (ir.Text("parent unknown"),),
        (ir.Text("late"),),
        (ir.Text("fine"),),
    ]
    for converter in piconv.formats():
        render(doc, converter.name)


def test_a_file_without_a_header_read_with_from() -> None:
    data = asf_bytes(item("a", None, user("hi")), header=None)
    assert piconv.detect(data).name == "pi"  # entries with a type and an id: a pi file that lost its header
    doc = piconv.load(data, reader="asf")
    assert [(i.line, i.code) for i in doc.issues] == [(1, "no-header")] and [e.id for e in doc.entries] == [
        "a"
    ]


# --------------------------------------------------------------------------- mapping


def test_items_map_to_messages_and_unknown_members_stay() -> None:
    data = asf_bytes(
        {
            "type": "config",
            "id": "k",
            "parent": None,
            "ts": TS % 0,
            "model": "m-1",
            "instructions": "Be brief.",
            "tools_added": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}],
        },
        item("u", "k", {**user("2+2?"), "extra_member": 1}, 1, mood="curious"),
        item(
            "r",
            "u",
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "easy"}]},
            2,
            response="resp_1",
        ),
        item(
            "f",
            "r",
            {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q":"2+2"}'},
            2,
            response="resp_1",
        ),
        {
            "type": "response",
            "id": "p",
            "parent": "f",
            "ts": TS % 3,
            "response_id": "resp_1",
            "model": "m-1-2026",
            "usage": {
                "input_tokens": 40,
                "output_tokens": 12,
                "total_tokens": 52,
                "input_tokens_details": {"cached_tokens": 8},
            },
        },
        item("o", "p", {"type": "function_call_output", "call_id": "c1", "output": "4"}, 4),
        item("x", "o", {"type": "acme:thing", "value": 3}, 5),
        {"type": "acme:note", "id": "n", "parent": "x", "ts": TS % 6, "text": "kept"},
        {"type": "label", "id": "l", "parent": "n", "ts": TS % 7, "target": "u", "label": "question"},
    )
    doc = piconv.load(data)
    assert doc.issues == ()
    system = doc.get("k").message
    assert (
        type(system) is ir.SystemMessage
        and system.content == "Be brief."
        and system.tools_added[0].name == "lookup"
    )
    u = doc.get("u")
    assert u.message == ir.UserMessage((ir.Text("2+2?"),), None, {"extra_member": 1}) and u.extra == {
        "mood": "curious"
    }
    reasoning = doc.get("r").message
    assert reasoning.content == (ir.Reasoning("easy"),) and reasoning.model == ir.ModelRef(None, "m-1-2026")
    call = doc.get("f").message.content[0]
    assert (call.call_id, call.name, call.arguments) == ("c1", "lookup", {"q": "2+2"})
    usage = doc.get("p").body
    assert (
        type(usage) is ir.UsageRecord
        and usage.usage.input_tokens == 32  # Open Responses counts the 8 cached among the 40; the IR apart
        and usage.usage.cache_read_tokens == 8
        and usage.usage.total_tokens == 52
    )
    result = doc.get("o").message
    assert type(result) is ir.ToolResult and result.tool_name == "lookup" and result.content == "4"
    assert doc.get("x").message == ir.UnknownMessage({"type": "acme:thing", "value": 3})
    assert type(doc.get("n").body) is ir.UnknownBody and doc.get("n").extra == {"text": "kept"}
    assert doc.labels() == {"u": "question"}
    ctx = doc.context()
    assert ctx.model == ir.ModelRef(None, "m-1") and [type(m.message).__name__ for m in ctx.messages] == [
        "SystemMessage",
        "UserMessage",
        "AssistantMessage",
        "AssistantMessage",
        "ToolResult",
        "UnknownMessage",
    ]
    assert [m.entry_id for m in ctx.messages] == [None, "u", "r", "f", "o", "x"]
    assert request_context(doc).settings["instructions"] == "Be brief."


@pytest.mark.shared
def test_compaction_context_starts_from_its_summary() -> None:
    doc = piconv.load(SHARED / "reference" / "asf" / "examples" / "sessions_compaction.jsonl")
    compaction = next(e for e in doc.entries if e.kind == "compaction")
    below = next(e for e in reversed(doc.entries) if compaction in doc.path(e.id))
    ctx = doc.context(below.id)
    summaries = [m for m in ctx.messages if type(m.message) is ir.SummaryMessage]
    assert summaries and summaries[0].entry_id == compaction.id
    assert summaries[0].message.summary == compaction.body.summary
    rfc = request_context(doc, below.id)
    assert len([m for m in ctx.messages if m.entry_id is not None]) == len(rfc.items)


def test_a_leaf_label_picks_the_branch_to_resume() -> None:
    data = asf_bytes(
        item("a", None, user("root")),
        item("b1", "a", user("first branch"), 2),
        item("b2", "a", user("second branch"), 3),
        {"type": "label", "id": "l", "parent": "b2", "ts": TS % 4, "target": "b1", "label": "leaf"},
        item("c1", "b1", user("first branch, extended"), 5),
    )
    assert piconv.load(data).leaf_id == "c1"
    assert piconv.load(data[: data.rindex(b'{"type":"item"')]).leaf_id == "b1"


# --------------------------------------------------------------------------- round trips

CORPUS = corpus_files()
MEMBER_ORDER_SHOWN = {
    "branching.jsonl",
    "models.jsonl",
    "castai__kimchi-dev__session.jsonl",
    "twKrash__pi-session-inspector__branching.jsonl",
}
"""Files whose HTML shows a JSON value (a tool's details, a usage) whose members pi wrote
in another order than their names'."""


def _without_problems(doc: ir.Document) -> ir.Document:
    return ir.Document(doc.session, doc.entries, doc.leaf_id, (), doc.lines_read, doc.context_builder)


@pytest.mark.shared
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_pi_to_asf_to_each_format_equals_pi_to_that_format(path: Path) -> None:
    data = path.read_bytes()
    pi = piconv.load(data)
    back = piconv.load(to_asf(data))
    assert back.entries == pi.entries and back.session == pi.session and back.leaf_id == pi.leaf_id
    for leaf in pi.leaves():
        assert back.context(leaf.id) == pi.context(leaf.id)
    assert render(back, "markdown") == render(pi, "markdown")
    assert orjson.loads(render(back, "openai")) == orjson.loads(
        render(pi, "openai")
    )  # members in another order
    # What ASF does not carry (docs/formats/asf.md): the problems the pi reader found in
    # the original file, and the order of an object's members (a JSON value shown in HTML
    # shows them in order). The same values in ASF's order: pi → ASF → pi.
    same_order = piconv.load(render(back, "pi"))
    assert render(back, "html") == render(_without_problems(same_order), "html")
    if path.name not in MEMBER_ORDER_SHOWN:
        assert render(back, "html") == render(_without_problems(pi), "html")


@pytest.mark.shared
@pytest.mark.parametrize("path", CORPUS[:4], ids=lambda p: p.name)
def test_pi_files_read_from_asf_agree_with_the_rfc_context(path: Path) -> None:
    # The document's context follows pi's rule (the harness's); RFC 0001's algorithm over
    # the same file gives the same turns, item by item.
    back = piconv.load(to_asf(path.read_bytes()))
    for leaf in back.leaves():
        rfc = request_context(back, leaf.id)
        ir_id = back.context_builder.ir_ids(back, leaf.id)
        assert {ir_id[source] for source in rfc.item_entries} <= {e.id for e in back.path(leaf.id)}


# --------------------------------------------------------------------------- another writer's files


def another_writers(asf: bytes) -> bytes:
    """piconv's ASF of a pi session as another writer's file: the harness renamed and
    every ``pi`` record and ``legacy_id`` dropped, so no entry is read back as pi's."""
    lines = []
    for number, line in enumerate(asf.splitlines()):
        value = orjson.loads(line)
        value.pop("pi", None)
        value.pop("legacy_id", None)
        if number == 0:
            value["harness"] = {"name": "elsewhere", "version": "1"}
        lines.append(orjson.dumps(value) + b"\n")
    return b"".join(lines)


def _as_message(item: Any) -> ir.Message:
    from piconv.converters.asf.read.foreign import item_message

    return item_message(item, {})


def _same_rfc_context(data: bytes) -> None:
    """RFC 0001's context of every leaf, made from the document, equals the one made
    from the file's own entries: same settings, same entries, each item the same
    message. An IR entry read back from pi is, in the file, the last entry written of it
    (the one holding its ``pi`` record)."""
    from piconv.converters.asf.read.context import AsfFile, build_context

    doc = piconv.load(data, reader="asf")
    asf = AsfFile.of(data)
    written_last = {e["legacy_id"]: e["id"] for e in asf.entries if "pi" in e and "legacy_id" in e}

    def in_file(ir_id: str | None) -> str | None:
        return ir_id if ir_id in asf.index else written_last.get(ir_id, ir_id)  # type: ignore[arg-type]

    assert in_file(doc.leaf_id) == asf.leaf()
    for leaf in doc.leaves():
        ours = request_context(doc, leaf.id)
        theirs = build_context(asf.path(in_file(leaf.id)))  # type: ignore[arg-type]
        assert (ours.settings, ours.entries, ours.item_entries, ours.omitted) == (
            theirs.settings,
            theirs.entries,
            theirs.item_entries,
            theirs.omitted,
        )
        assert [_as_message(i) for i in ours.items] == [_as_message(i) for i in theirs.items]


@pytest.mark.shared
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_rfc_context_made_from_the_document_equals_the_files_reference(path: Path) -> None:
    _same_rfc_context(path.read_bytes())


@pytest.mark.shared
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_the_rfc_context_made_from_the_document_equals_the_files_corpus(path: Path) -> None:
    _same_rfc_context(another_writers(to_asf(path.read_bytes())))


def _reachable(root: object) -> list[object]:
    import gc

    seen = {id(root)}
    todo = [root]
    found = []
    while todo:
        for child in gc.get_referents(todo.pop()):
            if id(child) not in seen and not isinstance(child, (str, bytes, int, float, type)):
                seen.add(id(child))
                found.append(child)
                todo.append(child)
    return found


@pytest.mark.shared
def test_another_writers_file_is_not_held_beside_its_document() -> None:
    # Reading costs the document: no parsed line outlives the reading (the context is
    # made from the document when asked for), so nothing an entry of the file parsed
    # into, an object with an envelope's parent and ts, is reachable from the document.
    data = another_writers(
        to_asf((SHARED / "corpus" / "pi" / "badlogic__pi-mono__compact.jsonl").read_bytes())
    )
    doc = piconv.load(data, reader="asf")
    assert len(doc.entries) > 500 and doc.context().messages
    held = [o for o in _reachable(doc) if type(o) is dict and "parent" in o and "ts" in o]
    assert held == []


def test_the_context_of_another_writers_file_shows_what_a_filter_left() -> None:
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
    data = asf_bytes(
        {
            "type": "config",
            "id": "k",
            "parent": None,
            "ts": TS % 0,
            "model": "m-1",
            "instructions": f"Use {token}.",
        },
        item("u", "k", user(f"and {token} too"), 1),
    )
    doc = piconv.load(data)
    assert token in doc.context().messages[0].message.content
    redacted = piconv.redact(doc).document
    shown = repr(redacted.context())
    assert token not in shown and "Use " in shown and "and " in shown
    assert token not in render(redacted, "openai").decode()


def test_what_an_entry_names_ahead_of_it_is_read_at_the_end() -> None:
    # A label naming an entry written after it, and an assistant item whose model its
    # response entry (after it) names: both are read as if every entry came first.
    data = asf_bytes(
        item("a", None, user("hi")),
        {"type": "label", "id": "l", "parent": "a", "ts": TS % 2, "target": "r", "label": "answer"},
        item(
            "r",
            "l",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]},
            3,
            response="resp_1",
        ),
        {"type": "response", "id": "p", "parent": "r", "ts": TS % 4, "response_id": "resp_1", "model": "m-2"},
    )
    doc = piconv.load(data)
    assert doc.issues == ()
    assert doc.labels() == {"r": "answer"}
    assert doc.get("r").message.model == ir.ModelRef(None, "m-2")


def test_a_label_that_is_no_string_is_kept_and_ignored_by_the_resume_rule() -> None:
    data = asf_bytes(
        item("a", None, user("root")),
        item("b1", "a", user("first"), 2),
        item("b2", "a", user("second"), 3),
        {"type": "label", "id": "l", "parent": "b2", "ts": TS % 4, "target": "b1", "label": "leaf"},
        {"type": "label", "id": "m", "parent": "l", "ts": TS % 5, "target": "b1", "label": 7},
    )
    doc = piconv.load(data)
    assert doc.get("m").extra == {"label": 7}
    assert doc.leaf_id == "b1"  # the second label clears nothing: 7 is no label


def test_an_entry_read_again_at_the_end_keeps_the_root_it_was_read_as() -> None:
    # The label's parent is a chain the writer refused (no IR entry), so it is read as a
    # root; its target is no entry, so it is read again at the end: it stays a root (its
    # parent was dangling, and --to ir failed its own validation).
    header = {**HEADER, "harness": {"name": "pi", "version": "session-v3"}}
    data = asf_bytes(
        {
            "type": "pi:refused",
            "id": "r",
            "parent": None,
            "ts": TS % 0,
            "legacy_id": "aaaa1111",
            "pi": {"refused": "not a pi entry", "line": 2},
        },
        {"type": "label", "id": "l", "parent": "r", "ts": TS % 1, "target": "nowhere", "label": "x"},
        header=header,
    )
    doc = piconv.load(data, reader="asf")
    (label,) = doc.entries
    assert (label.parent_id, dict(label.extra)) == (None, {"parent": "aaaa1111", "target": "nowhere"})
    assert [i.code for i in doc.issues] == ["entry-refused", "bad-parent"]
    render(doc, "ir")  # valid


def _below_a_leaf_label(n: int) -> list[Any]:
    """A root, a ``leaf`` label on it, then ``n`` entries each the child of the one before."""
    from piconv.converters.asf.read.context import NOT_LABEL

    nodes: list[Any] = [("r", None, NOT_LABEL, None), ("l", "r", "leaf", "r")]
    parent = "l"
    for i in range(n):
        nodes.append((f"e{i}", parent, NOT_LABEL, None))
        parent = f"e{i}"
    return nodes


def test_the_resume_rule_takes_a_time_linear_in_the_entries() -> None:
    # Each entry after the label was walked up to the target: 8,000 entries below a
    # leaf label took 2.4 s to read, 32,000 about 40 s. Timings are compared as a
    # ratio between two sizes (the machine's speed cancels out): 4x the entries, 4x the
    # time when linear, 16x when quadratic.
    import time

    from piconv.converters.asf.read.context import resume_leaf

    def best(n: int) -> float:
        nodes = _below_a_leaf_label(n)
        times = []
        for _ in range(3):
            start = time.perf_counter()
            assert resume_leaf(nodes) == f"e{n - 1}"
            times.append(time.perf_counter() - start)
        return min(times)

    assert best(16_000) / best(4_000) < 8


def test_leaf_labels_naming_each_other_as_parents_end_the_resume_rule() -> None:
    # No leaf label in force (their targets are no entries): the last entry, a leaf
    # label, resolves to its nearest other ancestor, walking parents written before it
    # (labels naming each other looped for ever).
    import threading

    from piconv.converters.asf.read.context import resume_leaf

    nodes = [("a", "b", "leaf", "nowhere"), ("b", "a", "leaf", "nowhere")]
    found: list[Any] = []
    walk = threading.Thread(target=lambda: found.append(resume_leaf(nodes)), daemon=True)
    walk.start()
    walk.join(timeout=10)
    assert found == ["a"]
