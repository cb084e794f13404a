"""``--to atif``: ATIF v1.8 trajectories, one per leaf, validated by the ``atif`` package.

Every corpus, hostile and example session converts, every leaf's trajectory validates by
the reference models, every tool call has its observation and ``final_metrics`` equals the
path's totals counted here from the IR; ``branching.jsonl`` gives five trajectories named as
agentsession names them; a session built like the RFC's example gives the RFC's shape,
member by member.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import piconv
import pytest
from piconv import ir
from piconv.cli import main

from .conftest import REPO, SHARED, corpus_files, corpus_ids, session_bytes

if sys.version_info < (3, 11):  # the atif package needs Python 3.11
    pytest.importorskip("atif")
import atif

HOSTILE = sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl"))
EXAMPLES = sorted((REPO / "examples").glob("*.jsonl"))


def trajectories(source: Any, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Every leaf's trajectory of ``source``, by file name, written with ``-o DIR/``."""
    out = tmp_path / "trajectories"
    report = piconv.convert(source, "atif", str(out) + "/")
    assert report.format == "atif"
    # the standard parser: a session's lone surrogates are written as escapes orjson refuses
    return {p.name: json.loads(p.read_bytes()) for p in sorted(out.glob("*.json"))}


def path_totals(doc: ir.Document, leaf: str) -> dict[str, Any]:
    """The totals of the path, counted from the IR as piconv inspect counts a file."""
    prompt = completion = cached = tokens = 0
    cost = 0.0
    for entry in doc.path(leaf):
        body = entry.body
        usage = None
        if isinstance(body, ir.MessageBody) and isinstance(
            body.message, (ir.AssistantMessage, ir.ToolResult)
        ):
            usage = body.message.usage
        elif isinstance(body, (ir.Compaction, ir.BranchSummary, ir.UsageRecord)):
            usage = body.usage
        if usage is None:
            continue
        read = usage.cache_read_tokens or 0
        prompt += (usage.input_tokens or 0) + read + (usage.cache_write_tokens or 0)
        completion += usage.output_tokens or 0
        cached += read
        tokens += ir.total_tokens(usage)
        if usage.cost is not None and usage.cost.total is not None:
            cost += usage.cost.total
    return {"prompt": prompt, "completion": completion, "cached": cached, "tokens": tokens, "cost": cost}


def check_trajectory(value: dict[str, Any], doc: ir.Document) -> None:
    atif.Trajectory.model_validate(value)  # the reference models' verdict
    assert value["schema_version"] == "ATIF-v1.8"
    assert value["session_id"] == doc.session.id
    assert value["steps"], "a trajectory has at least one step"
    for step in value["steps"]:
        calls = [c["tool_call_id"] for c in step.get("tool_calls", ())]
        answered = [r.get("source_call_id") for r in step.get("observation", {}).get("results", ())]
        assert sorted(calls) == sorted(a for a in answered if a in calls), step["step_id"]
    leaf = value["trajectory_id"]
    totals = path_totals(doc, leaf)
    final = value["final_metrics"]
    assert final["total_prompt_tokens"] == totals["prompt"]
    assert final["total_completion_tokens"] == totals["completion"]
    assert final["total_cached_tokens"] == totals["cached"]
    assert final["extra"]["total_tokens"] == totals["tokens"]
    assert final.get("total_cost_usd", 0.0) == pytest.approx(totals["cost"], abs=1e-9)
    outside = any("usage" in s.get("extra", {}) for s in value["steps"]) or "usage_records" in value["extra"]
    if not value.get("notes") and not outside:
        # nothing folded away, no usage outside agent steps: the steps add up to the totals
        metrics = [s["metrics"] for s in value["steps"] if "metrics" in s]
        assert sum(m["prompt_tokens"] for m in metrics) == totals["prompt"]
        assert sum(m["completion_tokens"] for m in metrics) == totals["completion"]
        assert final["total_steps"] == len(value["steps"])


SOURCES = [*corpus_files(), *HOSTILE, *EXAMPLES]
IDS = [*corpus_ids(), *(f"hostile/{p.stem}" for p in HOSTILE), *(f"examples/{p.stem}" for p in EXAMPLES)]


@pytest.mark.shared
@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_every_session_converts_and_validates(path: Path, tmp_path: Path) -> None:
    doc = piconv.load(str(path))
    written = trajectories(doc, tmp_path)
    leaves = [leaf.id for leaf in doc.leaves()]
    assert len(written) == len(set(leaves) | ({doc.leaf_id} if doc.leaf_id else set()))
    current = [name for name, value in written.items() if value["extra"]["current"]]
    assert len(current) == 1
    for name, value in written.items():
        check_trajectory(value, doc)
        assert piconv.get_format("atif").check(json.dumps(value).encode()) == [], name
    # the single conversion writes the current leaf's trajectory, as in the directory
    single = piconv.convert_to_bytes(doc, "atif")
    assert json.loads(single)["trajectory_id"] == written[current[0]]["trajectory_id"]


@pytest.mark.shared
def test_branching_gives_five_trajectories_the_current_one_named_by_the_session(tmp_path: Path) -> None:
    path = SHARED / "corpus" / "pi-generated" / "branching.jsonl"
    doc = piconv.load(str(path))
    written = trajectories(doc, tmp_path)
    sid = doc.session.id
    assert len(written) == 5
    main_doc = written.pop(f"{sid}.json")
    assert main_doc["trajectory_id"] == doc.leaf_id and main_doc["extra"]["current"] is True
    # the current path is the continued one at every fork (here above the session's two
    # roots: pi's branch back to the start made the second): preferred over every other leaf
    assert main_doc["extra"]["preferred"] is True and "abandoned_at" not in main_doc["extra"]
    others = {leaf.id for leaf in doc.leaves()} - {doc.leaf_id}
    assert set(main_doc["extra"]["preferred_over"]) == others
    assert set(written) == {f"{sid}_{leaf}.json" for leaf in others}
    for value in written.values():
        assert value["extra"]["current"] is False and value["extra"]["preferred"] is False
    # a path that left the continued route names the fork where it did, on its own path
    for value in written.values():
        fork = value["extra"].get("abandoned_at")
        if fork is not None:
            assert fork in {e.id for e in doc.path(value["trajectory_id"])}


@pytest.mark.shared
def test_compaction_marks_copied_context_and_counts_the_folded_calls() -> None:
    doc = piconv.load(str(SHARED / "corpus" / "pi-generated" / "compaction.jsonl"))
    value = orjson.loads(piconv.convert_to_bytes(doc, "atif"))
    first = value["steps"][0]
    assert first["is_copied_context"] is True
    summary = next(s for s in value["steps"] if "context_management" in s.get("extra", {}))
    assert (
        summary["source"] == "system"
        and summary["observation"]["results"][0]["content"] == summary["message"]
    )
    folded = sum(
        1
        for e in doc.path()
        if isinstance(e.message, ir.AssistantMessage)
        and e.id not in {s["extra"].get("entry_id") for s in value["steps"]}
    )
    assert folded > 0
    assert value["final_metrics"]["total_steps"] == len(value["steps"]) + folded
    assert str(folded) in value["notes"]


# ------------------------------------------------------------------ the RFC's example


def _rfc_like_session() -> bytes:
    """A session built like the RFC's multi-step example: a question, one agent turn with
    reasoning and two tool calls answered together, the answer."""

    def msg(id_: str, parent: str | None, ts: str, message: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "id": id_, "parentId": parent, "timestamp": ts, "message": message}

    def usage(inp: int, out: int, read: int, total: float) -> dict[str, Any]:
        return {
            "input": inp,
            "output": out,
            "cacheRead": read,
            "cacheWrite": 0,
            "totalTokens": inp + out + read,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": total},
        }

    calls = [
        {
            "type": "toolCall",
            "id": "call_temp_1",
            "name": "weather",
            "arguments": {"city": "Oslo", "what": "temp"},
        },
        {
            "type": "toolCall",
            "id": "call_wind_2",
            "name": "weather",
            "arguments": {"city": "Oslo", "what": "wind"},
        },
    ]
    return session_bytes(
        {
            "type": "thinking_level_change",
            "id": "t1",
            "parentId": None,
            "timestamp": "2026-03-01T09:00:00Z",
            "thinkingLevel": "medium",
        },
        msg(
            "u1",
            "t1",
            "2026-03-01T09:00:00Z",
            {"role": "user", "content": "How warm and windy is Oslo now?", "timestamp": 1},
        ),
        msg(
            "a1",
            "u1",
            "2026-03-01T09:00:02Z",
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Two readings are needed: I ask for both at once."},
                    {"type": "text", "text": "I will look up the temperature and the wind."},
                    *calls,
                ],
                "provider": "google",
                "model": "gemini-2.5-flash",
                "usage": usage(320, 80, 200, 0.00045),
                "stopReason": "toolUse",
                "timestamp": 2,
            },
        ),
        msg(
            "r1",
            "a1",
            "2026-03-01T09:00:03Z",
            {
                "role": "toolResult",
                "toolCallId": "call_temp_1",
                "toolName": "weather",
                "content": [{"type": "text", "text": "Oslo: 4 °C"}],
                "isError": False,
                "timestamp": 3,
            },
        ),
        msg(
            "r2",
            "r1",
            "2026-03-01T09:00:03Z",
            {
                "role": "toolResult",
                "toolCallId": "call_wind_2",
                "toolName": "weather",
                "content": [{"type": "text", "text": "Oslo: wind 6 m/s"}],
                "isError": False,
                "timestamp": 4,
            },
        ),
        {
            "type": "thinking_level_change",
            "id": "t2",
            "parentId": "r2",
            "timestamp": "2026-03-01T09:00:04Z",
            "thinkingLevel": "low",
        },
        msg(
            "a2",
            "t2",
            "2026-03-01T09:00:05Z",
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Both readings are in; I answer."},
                    {"type": "text", "text": "Oslo is at 4 °C with a 6 m/s wind."},
                ],
                "provider": "google",
                "model": "gemini-2.5-flash",
                "usage": usage(600, 44, 0, 0.00033),
                "stopReason": "stop",
                "timestamp": 5,
            },
        ),
    )


# The RFC's example trajectory, in this session's words: the members the RFC shows, with
# their values (pi records no token ids or log probabilities; extras are piconv's own).
RFC_SHAPE = {
    "schema_version": "ATIF-v1.8",
    "session_id": "11111111-2222-4333-8444-555555555555",
    "agent": {"name": "pi", "version": "session-v3", "model_name": "gemini-2.5-flash"},
    "final_metrics": {
        "total_prompt_tokens": 1120,
        "total_completion_tokens": 124,
        "total_cached_tokens": 200,
        "total_cost_usd": 0.00078,
        "total_steps": 3,
    },
    "steps": [
        {
            "step_id": 1,
            "timestamp": "2026-03-01T09:00:00Z",
            "source": "user",
            "message": "How warm and windy is Oslo now?",
        },
        {
            "step_id": 2,
            "timestamp": "2026-03-01T09:00:02Z",
            "source": "agent",
            "model_name": "gemini-2.5-flash",
            "reasoning_effort": "medium",
            "message": "I will look up the temperature and the wind.",
            "reasoning_content": "Two readings are needed: I ask for both at once.",
            "tool_calls": [
                {
                    "tool_call_id": "call_temp_1",
                    "function_name": "weather",
                    "arguments": {"city": "Oslo", "what": "temp"},
                },
                {
                    "tool_call_id": "call_wind_2",
                    "function_name": "weather",
                    "arguments": {"city": "Oslo", "what": "wind"},
                },
            ],
            "observation": {
                "results": [
                    {"source_call_id": "call_temp_1", "content": "Oslo: 4 °C"},
                    {"source_call_id": "call_wind_2", "content": "Oslo: wind 6 m/s"},
                ]
            },
            "metrics": {
                "prompt_tokens": 520,
                "completion_tokens": 80,
                "cached_tokens": 200,
                "cost_usd": 0.00045,
            },
        },
        {
            "step_id": 3,
            "timestamp": "2026-03-01T09:00:05Z",
            "source": "agent",
            "model_name": "gemini-2.5-flash",
            "reasoning_effort": "low",
            "message": "Oslo is at 4 °C with a 6 m/s wind.",
            "reasoning_content": "Both readings are in; I answer.",
            "metrics": {
                "prompt_tokens": 600,
                "completion_tokens": 44,
                "cached_tokens": 0,
                "cost_usd": 0.00033,
            },
        },
    ],
}


def _without_extras(value: Any) -> Any:
    """``value`` without piconv's ``extra`` members and ``llm_call_count`` (which the
    RFC's example leaves out), to compare the members the RFC shows."""
    if isinstance(value, dict):
        return {k: _without_extras(v) for k, v in value.items() if k not in ("extra", "llm_call_count")}
    if isinstance(value, list):
        return [_without_extras(v) for v in value]
    return value


def test_a_session_like_the_rfc_example_gives_the_rfc_shape_member_by_member() -> None:
    value = orjson.loads(piconv.convert_to_bytes(_rfc_like_session(), "atif"))
    atif.Trajectory.model_validate(value)
    assert value.pop("trajectory_id") == "a2"
    shown = _without_extras(value)
    assert shown["final_metrics"].pop("total_cost_usd") == pytest.approx(0.00078)
    expected = _without_extras(RFC_SHAPE)
    expected["final_metrics"].pop("total_cost_usd")
    assert shown == expected
    assert all(step["llm_call_count"] == 1 for step in value["steps"] if step["source"] == "agent")


# ------------------------------------------------------------------ the directory form


def test_a_directory_run_again_replaces_its_own_trajectories_and_nothing_else(tmp_path: Path) -> None:
    data = _rfc_like_session()
    source = tmp_path / "s.jsonl"
    source.write_bytes(data)
    out = tmp_path / "out"
    assert main([str(source), "--to", "atif", "-o", f"{out}/", "-q"]) == 0
    name = "11111111-2222-4333-8444-555555555555.json"
    first = (out / name).read_bytes()
    # the session grows: the same file is rewritten, since it is this session's trajectory
    grown = (
        data
        + orjson.dumps(
            {
                "type": "message",
                "id": "u9",
                "parentId": "a2",
                "timestamp": "2026-03-01T09:01:00Z",
                "message": {"role": "user", "content": "thanks", "timestamp": 9},
            }
        )
        + b"\n"
    )
    source.write_bytes(grown)
    assert main([str(source), "--to", "atif", "-o", str(out), "-q"]) == 0  # an existing directory
    assert (out / name).read_bytes() != first
    assert orjson.loads((out / name).read_bytes())["trajectory_id"] == "u9"
    # another tool's trajectory of the same session is left alone, and the conversion says so
    theirs = orjson.loads((out / name).read_bytes())
    del theirs["extra"]["written_by"]
    (out / name).write_bytes(orjson.dumps(theirs))
    assert main([str(source), "--to", "atif", "-o", f"{out}/", "-q"]) == 6
    assert orjson.loads((out / name).read_bytes()) == theirs
    # a file of someone else's at that name is left alone, and the conversion says so
    (out / name).write_text("my notes\n")
    assert main([str(source), "--to", "atif", "-o", f"{out}/", "-q"]) == 6
    assert (out / name).read_text() == "my notes\n"


@pytest.mark.shared
def test_images_are_files_beside_the_trajectory_and_data_urls_on_stdout(tmp_path: Path) -> None:
    path = SHARED / "corpus" / "pi-generated" / "images.jsonl"
    out = tmp_path / "one.json"
    piconv.convert(str(path), "atif", str(out))
    value = orjson.loads(out.read_bytes())
    parts = [
        part
        for step in value["steps"]
        for content in [
            step["message"],
            *(r.get("content") for r in step.get("observation", {}).get("results", ())),
        ]
        if isinstance(content, list)
        for part in content
        if part["type"] == "image"
    ]
    assert parts, "the images session has images"
    for part in parts:
        file = tmp_path / part["source"]["path"]
        assert file.is_file() and file.parent.name.endswith("_images")
    buffer = io.BytesIO()
    report = piconv.convert(str(path), "atif", buffer)
    assert "data:image/" in buffer.getvalue().decode()
    assert "images" in report.notes


def test_without_the_atif_package_the_format_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from piconv.converters.atif import validate

    source = tmp_path / "s.jsonl"
    source.write_bytes(_rfc_like_session())
    validate.models.cache_clear()
    monkeypatch.setitem(sys.modules, "atif", None)  # import atif raises ImportError
    try:
        assert main([str(source), "--to", "atif", "-o", str(tmp_path / "x.json")]) == 4
    finally:
        validate.models.cache_clear()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'piconv[atif]'" in err[0], err
    assert not (tmp_path / "x.json").exists()


def test_validate_names_what_is_wrong() -> None:
    value = orjson.loads(piconv.convert_to_bytes(_rfc_like_session(), "atif"))
    check = piconv.get_format("atif").check
    assert check(orjson.dumps(value)) == []
    value["steps"][1]["observation"]["results"][0]["source_call_id"] = "call_elsewhere"
    value["steps"][0]["tool_calls"] = []
    problems = check(orjson.dumps(value))
    assert any("only valid on `source='agent'`" in p for p in problems), problems
    assert any("call_elsewhere" in p for p in problems), problems
    assert check(b"{") and check(b"{")[0].startswith("line 1: not JSON")
    value["steps"] = []
    assert any("at least one step" in p for p in check(orjson.dumps(value)))


def test_leaf_ids_alike_once_made_file_names_get_their_own_files(tmp_path: Path) -> None:
    def entry(id_: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        return {
            "type": "message",
            "id": id_,
            "parentId": parent,
            "timestamp": "2026-03-01T09:00:00Z",
            "message": {"role": role, "content": content, "timestamp": 1},
        }

    data = session_bytes(
        entry("u", None, "user", "hello"),
        entry("x/1", "u", "assistant", "one"),
        entry("x?1", "u", "assistant", "two"),
        entry("x:1", "u", "assistant", "three"),
    )
    written = trajectories(data, tmp_path)
    sid = "11111111-2222-4333-8444-555555555555"
    assert set(written) == {f"{sid}.json", f"{sid}_x-1.json", f"{sid}_x-1_2.json"}
    assert {v["trajectory_id"] for v in written.values()} == {"x/1", "x?1", "x:1"}
    assert written[f"{sid}.json"]["trajectory_id"] == "x:1"


def test_a_trajectory_never_replaces_the_input_even_one_that_looks_like_a_trajectory(tmp_path: Path) -> None:
    """An input shaped to pass for an earlier trajectory of its session, at the name a
    trajectory takes, is still the input: refused, not replaced."""
    folder = tmp_path / "o"
    folder.mkdir()
    source = folder / "sid1.json"
    data = (
        b'{"type":"session","version":3,"id":"sid1","timestamp":"2025-01-01T00:00:00.000Z",'
        b'"cwd":"/tmp","schema_version":"ATIF-v1.4","session_id":"sid1"}\n'
    )
    source.write_bytes(data)
    with pytest.raises(piconv.OutputError, match="is the input"):
        piconv.convert(str(source), "atif", str(folder) + "/")
    assert source.read_bytes() == data


def test_a_cost_recorded_by_its_parts_counts_as_piconvs_totals_count_it(tmp_path: Path) -> None:
    """A session written before pi recorded a cost's total: its parts add up, in the
    trajectory's metrics as in every total piconv shows."""
    usage = {
        "input": 10,
        "output": 5,
        "cacheRead": 0,
        "cacheWrite": 0,
        "cost": {"input": 0.25, "output": 0.5, "cacheRead": 0, "cacheWrite": 0},
    }
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        session_bytes(
            {
                "type": "message",
                "id": "u1",
                "parentId": None,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": "hi", "timestamp": 1},
            },
            {
                "type": "message",
                "id": "a1",
                "parentId": "u1",
                "timestamp": "2026-01-01T00:00:02.000Z",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "hello"}],
                    "provider": "p",
                    "model": "m",
                    "usage": usage,
                    "stopReason": "stop",
                    "timestamp": 2,
                },
            },
        )
    )
    doc = piconv.load(path)
    trajectory = json.loads(piconv.convert_to_bytes(doc, "atif"))
    expected = piconv.usage_totals(doc.path()).cost
    assert expected == 0.75
    assert trajectory["final_metrics"]["total_cost_usd"] == expected
