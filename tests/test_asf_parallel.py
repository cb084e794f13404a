"""A large ASF conversion on two processes must write the one-process output, byte for
byte, with the same report, wherever the file is split, and start over on the whole
document whenever the second process cannot do its part."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
from piconv.api import convert
from piconv.converters.asf import parallel

from .conftest import SHARED, corpus_files, corpus_ids, session_bytes

RICH = ("branching", "compaction", "extensions", "models", "branching-fork", "images")


def _convert(source: bytes | Path, jobs: int) -> tuple[bytes, dict]:
    out = io.BytesIO()
    report = convert(source, "asf", out, {"jobs": jobs})
    return out.getvalue(), report.to_json()


@pytest.fixture
def split_everywhere(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Split even small files; returns the list of splits made (one per conversion)."""
    made: list[int] = []
    real = parallel.Worker.__init__

    def counted(self: parallel.Worker, stream: object, last_line: int, options: object) -> None:
        made.append(last_line)
        real(self, stream, last_line, options)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel.Worker, "__init__", counted)
    return made


@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_two_processes_write_the_one_process_output(path: Path, split_everywhere: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _convert(path, jobs=1)
    for share in (0.03, 0.3, 0.5, 0.7, 0.97):
        monkeypatch.setattr(parallel, "FIRST_SHARE", share)
        assert _convert(path, jobs=2) == expected, f"split at {share:.0%}"


@pytest.mark.parametrize("name", RICH)
def test_every_split_line_of_a_rich_session(name: str, split_everywhere: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    path = SHARED / "corpus" / "pi-generated" / f"{name}.jsonl"
    expected = _convert(path, jobs=1)
    lines = path.read_bytes().count(b"\n")
    for last in range(1, lines + 1):
        monkeypatch.setattr(parallel, "split_line", lambda source, share, last=last: last)
        assert _convert(path, jobs=2) == expected, f"split after line {last}"
    assert len(split_everywhere) == lines  # the second process ran every time


def _assistant(entry_id: str, parent: str, call_id: str, model: str, ts: str | None) -> dict:
    entry = {"type": "message", "id": entry_id, "parentId": parent, "message": {
        "role": "assistant", "provider": "p", "model": model, "api": "x", "stopReason": "toolUse",
        "content": [{"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": "ls"}}],
        "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3}}}
    if ts is not None:  # neither timestamp: the entry takes the last one written before it
        entry["timestamp"] = ts
        entry["message"]["timestamp"] = 1
    return entry


def _result(entry_id: str, parent: str, call_id: str) -> dict:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:03.000Z", "message": {
        "role": "toolResult", "toolCallId": call_id, "toolName": "bash", "content": [{"type": "text", "text": "ok"}],
        "isError": False, "timestamp": 2}}


def _state_heavy_session() -> bytes:
    """Call ids used again, models switched, timestamps missing and references that cross
    every possible split point."""
    lines: list[dict] = [
        {"type": "model_change", "id": "m0", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z", "provider": "p", "modelId": "one"},
        {"type": "message", "id": "s0", "parentId": "m0", "timestamp": "2026-01-01T00:00:00.500Z", "message": {"role": "user", "content": "start"}},
    ]
    parent = "s0"
    for i in range(12):
        model = "one" if i % 3 else "two"
        lines.append(_assistant(f"a{i}", parent, "call_dup" if i % 2 else f"call_{i}", model, None if i % 4 == 1 else "2026-01-01T00:00:02.000Z"))
        lines.append(_result(f"r{i}", f"a{i}", "call_dup" if i % 2 else f"call_{i}"))
        parent = f"r{i}"
        if i == 4:
            lines.append({"type": "thinking_level_change", "id": "t4", "parentId": parent, "timestamp": "2026-01-01T00:00:04.000Z", "thinkingLevel": "high"})
            parent = "t4"
        if i == 6:
            lines.append({"type": "label", "id": "l6", "parentId": parent, "timestamp": "2026-01-01T00:00:05.000Z", "targetId": "a1", "label": "early"})
            lines.append({"type": "compaction", "id": "c6", "parentId": "l6", "timestamp": "2026-01-01T00:00:06.000Z",
                          "summary": "so far", "firstKeptEntryId": "a5", "tokensBefore": 100})
            parent = "c6"
        if i == 9:
            lines.append({"type": "context_edit", "id": "e9", "parentId": parent, "timestamp": "2026-01-01T00:00:07.000Z",
                          "targetId": "r2", "replacement": {"content": "shorter"}})
            lines.append({"type": "branch_summary", "id": "b9", "parentId": "e9", "timestamp": "2026-01-01T00:00:08.000Z",
                          "fromId": "a7", "summary": "elsewhere"})
            parent = "b9"
    return session_bytes(*lines)


def test_state_crossing_the_split_is_carried(split_everywhere: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    data = _state_heavy_session()
    expected = _convert(data, jobs=1)
    assert any(loss["code"] == "call-id-rewritten" for loss in expected[1]["losses"])
    lines = data.count(b"\n")
    for last in range(1, lines + 1):
        monkeypatch.setattr(parallel, "split_line", lambda source, share, last=last: last)
        assert _convert(data, jobs=2) == expected, f"split after line {last}"
    assert len(split_everywhere) == lines


def test_a_failing_second_process_means_starting_over(split_everywhere: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    data = _state_heavy_session()
    expected = _convert(data, jobs=1)

    def broken(*args: object) -> None:
        raise RuntimeError("the worker dies")

    monkeypatch.setattr(parallel, "_worker", broken)
    assert _convert(data, jobs=2) == expected
    assert split_everywhere  # it was tried


def test_an_irregular_second_part_means_starting_over(split_everywhere: list[int]) -> None:
    data = _state_heavy_session() + orjson.dumps({"type": "message", "id": "a3", "parentId": "r11", "timestamp": "2026-01-01T00:00:09.000Z",
                                                   "message": {"role": "user", "content": "an id used again"}}) + b"\n"
    expected = _convert(data, jobs=1)
    assert any(loss["code"] == "input:duplicate-id" for loss in expected[1]["losses"])
    assert _convert(data, jobs=2) == expected
    assert split_everywhere


def test_small_files_and_one_job_stay_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(parallel.Worker, "__init__", lambda *a, **k: calls.append(a))
    data = _state_heavy_session()
    assert len(data) < parallel.MIN_BYTES
    _convert(data, jobs=2)
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    _convert(data, jobs=1)
    assert calls == []


def test_jobs_none_takes_a_second_process_when_it_helps(split_everywhere: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    from piconv import processes

    data = _state_heavy_session()
    expected = _convert(data, jobs=1)
    for helps in (False, True):
        monkeypatch.setattr(processes, "second_process_helps", lambda helps=helps: helps)
        out = io.BytesIO()
        report = convert(data, "asf", out, {"jobs": None})
        assert (out.getvalue(), report.to_json()) == expected
    assert len(split_everywhere) == 1  # only when it helps


def test_bad_lines_on_either_side_are_reported_once(split_everywhere: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _state_heavy_session().split(b"\n")
    for at in (3, 12, len(lines) - 4):
        lines.insert(at, b"{not json")
    lines.insert(20, b"[1, 2]")
    data = b"\n".join(lines)
    expected = _convert(data, jobs=1)
    assert expected[1]["problems"] == 4
    for last in range(1, data.count(b"\n") + 1):
        monkeypatch.setattr(parallel, "split_line", lambda source, share, last=last: last)
        assert _convert(data, jobs=2) == expected, f"split after line {last}"


def test_the_command_line_default_writes_what_one_process_writes(tmp_path: Path) -> None:
    """End to end, past the size where two processes are taken: ``piconv FILE --to asf``
    (jobs not given: a second process where it helps) and ``--jobs 1`` write the same file."""
    import subprocess
    import sys

    base = _state_heavy_session().split(b"\n", 1)  # header, entries
    filler = "x" * 20_000
    lines = [base[0], base[1].rstrip(b"\n")]
    parent = "b9"
    for i in range(500):  # ~10 MB of tool results after the state-heavy start
        lines.append(orjson.dumps(_result(f"big{i}", parent, f"call_{i % 12}") | {"message": {
            "role": "toolResult", "toolCallId": f"call_{i % 12}", "toolName": "bash",
            "content": [{"type": "text", "text": f"{i} {filler}"}], "isError": False, "timestamp": 2}}))
        parent = f"big{i}"
    source = tmp_path / "large.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    assert source.stat().st_size > parallel.MIN_BYTES
    outputs = []
    for extra in ([], ["--jobs", "1"]):
        out = tmp_path / f"out{len(outputs)}.jsonl"
        subprocess.run([sys.executable, "-m", "piconv", str(source), "--to", "asf", "-o", str(out), "-q", *extra], check=True)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b"\n") > 500
