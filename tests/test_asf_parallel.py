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
from piconv.stream import NeedsWholeSession

from .conftest import SHARED, corpus_files, corpus_ids, session_bytes

RICH = ("branching", "compaction", "extensions", "models", "branching-fork", "images")


def split_after(source: bytes | Path, last_line: int) -> tuple[int, int]:
    """The split after ``last_line``: that line, and the byte offset of the next."""
    data = source if isinstance(source, (bytes, bytearray)) else Path(source).read_bytes()
    offset = 0
    for _ in range(last_line):
        offset = data.index(b"\n", offset) + 1
    return last_line, offset


def _convert(source: bytes | Path, jobs: int) -> tuple[bytes, dict]:
    out = io.BytesIO()
    report = convert(source, "asf", out, {"jobs": jobs})
    return out.getvalue(), report.to_json()


class Splits(list):
    """The splits made (one per conversion), and the reasons of those that started over."""

    def __init__(self) -> None:
        super().__init__()
        self.started_over: list[str] = []


@pytest.fixture
def split_everywhere(monkeypatch: pytest.MonkeyPatch) -> Splits:
    """Split even small files; returns the splits made."""
    made = Splits()
    real = parallel.Worker.__init__
    real_join = parallel.Worker.join

    def counted(self: parallel.Worker, stream: object, split: tuple[int, int], options: object) -> None:
        made.append(split[0])
        real(self, stream, split, options)  # type: ignore[arg-type]

    def join(self: parallel.Worker, *args: object) -> None:
        try:
            real_join(self, *args)  # type: ignore[arg-type]
        except NeedsWholeSession as exc:
            made.started_over.append(f"split after line {self.last_line}: {exc.reason}")
            raise

    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel.Worker, "__init__", counted)
    monkeypatch.setattr(parallel.Worker, "join", join)
    return made


@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_two_processes_write_the_one_process_output(path: Path, split_everywhere: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _convert(path, jobs=1)
    for share in (0.03, 0.3, 0.5, 0.7, 0.97):
        monkeypatch.setattr(parallel, "FIRST_SHARE", share)
        assert _convert(path, jobs=2) == expected, f"split at {share:.0%}"
    assert split_everywhere.started_over == []  # the second process did its part


@pytest.mark.parametrize("name", RICH)
def test_every_split_line_of_a_rich_session(name: str, split_everywhere: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    path = SHARED / "corpus" / "pi-generated" / f"{name}.jsonl"
    expected = _convert(path, jobs=1)
    lines = path.read_bytes().count(b"\n")
    for last in range(1, lines + 1):
        monkeypatch.setattr(parallel, "split_line", lambda source, share, last=last: split_after(source, last))
        assert _convert(path, jobs=2) == expected, f"split after line {last}"
    assert len(split_everywhere) == lines  # the second process ran every time
    assert split_everywhere.started_over == []  # and did its part


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
        _system("y0", "m0", {"preamble": "be brief"}, [{"name": "bash", "description": "run", "parameters": {}}]),
        {"type": "message", "id": "s0", "parentId": "y0", "timestamp": "2026-01-01T00:00:00.500Z", "message": {"role": "user", "content": "start"}},
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
        if i == 8:  # entries in a row without a timestamp of their own (a9 has none either)
            lines.append({"type": "message", "id": "u8", "parentId": parent, "message": {"role": "user", "content": "on"}})
            lines.append({"type": "message", "id": "v8", "parentId": "u8", "message": {"role": "user", "content": "and on"}})
            parent = "v8"
        if i == 10:
            lines.append(_system("y10", parent, {"rules": "none"}, [{"name": "read", "description": "read", "parameters": {}}]))
            parent = "y10"
    # a branch back to the start, under settings only the first lines set
    lines.append(_assistant("back", "s0", "call_dup", "one", "2026-01-01T00:00:09.000Z"))
    lines.append(_result("back-r", "back", "call_dup"))
    lines.append(_system("back-y", "back-r", {"preamble": "again"}, []))
    lines.append(_assistant("back-a", "back-y", "call_1", "two", "2026-01-01T00:00:10.000Z"))
    return session_bytes(*lines)


def _system(entry_id: str, parent: str, sections: dict, tools: list[dict]) -> dict:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.100Z",
            "message": {"role": "system", "content": "", "sections": sections, "toolsAdded": tools, "timestamp": 1}}


def test_state_crossing_the_split_is_carried(split_everywhere: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _state_heavy_session()
    expected = _convert(data, jobs=1)
    assert any(loss["code"] == "call-id-rewritten" for loss in expected[1]["losses"])
    lines = data.count(b"\n")
    for last in range(1, lines + 1):
        monkeypatch.setattr(parallel, "split_line", lambda source, share, last=last: split_after(source, last))
        assert _convert(data, jobs=2) == expected, f"split after line {last}"
    assert len(split_everywhere) == lines
    assert split_everywhere.started_over == []


def test_a_failing_second_process_means_starting_over(split_everywhere: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _state_heavy_session()
    expected = _convert(data, jobs=1)

    def broken(*args: object) -> None:
        raise RuntimeError("the worker dies")

    monkeypatch.setattr(parallel, "_worker", broken)
    assert _convert(data, jobs=2) == expected
    assert split_everywhere  # it was tried


def test_an_irregular_second_part_means_starting_over(split_everywhere: Splits) -> None:
    data = _state_heavy_session() + orjson.dumps({"type": "message", "id": "a3", "parentId": "r11", "timestamp": "2026-01-01T00:00:09.000Z",
                                                   "message": {"role": "user", "content": "an id used again"}}) + b"\n"
    expected = _convert(data, jobs=1)
    assert any(loss["code"] == "input:duplicate-id" for loss in expected[1]["losses"])
    assert _convert(data, jobs=2) == expected
    assert split_everywhere
    assert split_everywhere.started_over == [f"split after line {split_everywhere[0]}: id 'a3' is used again"]


def test_small_files_and_one_job_stay_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(parallel.Worker, "__init__", lambda *a, **k: calls.append(a))
    data = _state_heavy_session()
    assert len(data) < parallel.MIN_BYTES
    _convert(data, jobs=2)
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    _convert(data, jobs=1)
    assert calls == []


def test_jobs_none_takes_a_second_process_when_it_helps(split_everywhere: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    from piconv import processes

    data = _state_heavy_session()
    expected = _convert(data, jobs=1)
    for helps in (False, True):
        monkeypatch.setattr(processes, "second_process_helps", lambda helps=helps: helps)
        out = io.BytesIO()
        report = convert(data, "asf", out, {"jobs": None})
        assert (out.getvalue(), report.to_json()) == expected
    assert len(split_everywhere) == 1  # only when it helps


def test_bad_lines_on_either_side_are_reported_once(split_everywhere: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _state_heavy_session().split(b"\n")
    for at in (3, 12, len(lines) - 4):
        lines.insert(at, b"{not json")
    lines.insert(20, b"[1, 2]")
    data = b"\n".join(lines)
    expected = _convert(data, jobs=1)
    assert expected[1]["problems"] == 4
    for last in range(1, data.count(b"\n") + 1):
        monkeypatch.setattr(parallel, "split_line", lambda source, share, last=last: split_after(source, last))
        assert _convert(data, jobs=2) == expected, f"split after line {last}"
    assert split_everywhere.started_over == []


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


def test_crlf_line_ends_are_reported_once(split_everywhere: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _state_heavy_session().replace(b"\n", b"\r\n")
    expected = _convert(data, jobs=1)
    assert expected[1]["problems"] == 1
    assert [(loss["code"], loss["lines"]) for loss in expected[1]["losses"] if loss["code"] == "input:crlf"] == [("input:crlf", [1])]
    for last in (1, 5, 20):
        monkeypatch.setattr(parallel, "split_line", lambda source, share, last=last: split_after(source, last))
        assert _convert(data, jobs=2) == expected, f"split after line {last}"
    assert split_everywhere.started_over == []


def test_call_ids_the_worker_cannot_see_mean_starting_over(split_everywhere: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker finds the first part's tool calls by their spelling; a call spelled
    otherwise (an escaped letter) is missed, and this process notices before stitching."""
    lines = _state_heavy_session().split(b"\n")
    lines[4] = lines[4].replace(b'"toolCall"', b'"toolCal\\u006c"')
    data = b"\n".join(lines)
    expected = _convert(data, jobs=1)
    monkeypatch.setattr(parallel, "split_line", lambda source, share: split_after(source, 10))
    assert _convert(data, jobs=2) == expected
    assert split_everywhere.started_over == ["split after line 10: the second process took other call ids"]


@pytest.mark.parametrize("name", ["branching", "compaction"])
def test_the_stitch_in_python_writes_what_the_c_stitch_writes(name: str, split_everywhere: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    """The C stitch (``_jcs.stitch_run``) hands back to the Python loop whatever it does not
    take; with it and without it, and without the C ids, every split writes the same."""
    path = SHARED / "corpus" / "pi-generated" / f"{name}.jsonl"
    expected = _convert(path, jobs=1)
    lines = path.read_bytes().count(b"\n")
    for missing in (("c_stitch_run",), ("c_stitch_run", "c_stitched", "c_sha256_hex")):
        for attr in missing:
            monkeypatch.setattr(parallel, attr, None)
        for last in range(1, lines + 1, 3):
            monkeypatch.setattr(parallel, "split_line", lambda source, share, last=last: split_after(source, last))
            assert _convert(path, jobs=2) == expected, f"without {missing}, split after line {last}"
    assert split_everywhere.started_over == []


def _stitch_tables() -> dict:
    return {"ids": [], "nodes": {}, "asf_ids": {}, "item_ids": {}, "editable": set(), "call_ids": set(), "call_map": {}, "reports": []}


def _run(records: list, blob: bytes, t: dict, check: bool = True) -> tuple:
    from piconv.converters.asf import _jcs

    return _jcs.stitch_run(records, 0, blob, 0, t["ids"], t["nodes"], check, t["asf_ids"], t["item_ids"], t["editable"],
                           t["call_ids"], t["call_map"], None, t["reports"])


def test_the_c_stitch_keeps_the_tables_the_python_stitch_keeps() -> None:
    import hashlib

    from piconv.converters.asf.checks import Ancestry
    from piconv.converters.asf.ids import envelope_id_plain

    body = b'{"item":{"type":"message"},"legacy_id":"x"}'
    digest = hashlib.sha256(body).hexdigest()
    t = _stitch_tables()
    first_part = "sha256:" + "ab" * 32
    t["asf_ids"]["p0"] = (first_part, first_part)
    t["nodes"][first_part] = (None, 0, first_part)
    records: list = [("r", "code", 3, "detail", 1)]
    parents: list = []
    for i in range(40):  # a chain under a first-part entry, with a branch back every seventh
        parent = "p0" if i == 0 else (i - 7 if i % 7 == 0 else i - 1)
        parents.append(parent)
        records.append(("e", "item", parent, f"2026-01-01T00:00:{i:02d}Z", digest, len(body), {}))
        records.append(("p", f"pi{i}", i, i, [i], i % 2 == 0, (("n", f"c{i}"),) if i % 3 == 0 else None))
    index, offset, lines, count = _run(records, body * 40, t)
    assert (index, offset, count) == (len(records), len(body) * 40, 40)
    ancestry = Ancestry()
    ancestry.nodes[first_part] = (None, 0, first_part)
    ids: list[str] = []
    for i, parent in enumerate(parents):
        parent_id = first_part if parent == "p0" else ids[parent]
        ids.append(envelope_id_plain("item", parent_id, f"2026-01-01T00:00:{i:02d}Z", "sha256:" + digest))
        ancestry.add(ids[-1], parent_id)
    assert t["ids"] == ids
    assert t["nodes"] == ancestry.nodes
    assert lines.count(b"\n") == 40 and lines.splitlines()[0].startswith(b'{"type":"item","id":"' + ids[0].encode())
    assert t["asf_ids"]["pi5"] == (ids[5], ids[5]) and t["item_ids"]["pi5"] == [ids[5]]
    assert t["editable"] == {f"pi{i}" for i in range(0, 40, 2)}
    assert t["call_ids"] == {f"c{i}" for i in range(0, 40, 3)} and t["call_map"] == {"n": "c39"}
    assert t["reports"] == [records[0]]


@pytest.mark.parametrize("record, why", [
    (("e", "item", None, "2026-01-01T00:00:00Z", None, 2, {"id": "x"}), "a body member named like an envelope member"),
    (("e", "item", "nowhere", "2026-01-01T00:00:00Z", None, 2, {}), "a parent no entry holds"),
    (("e", "item", 0, "2026-01-01T00:00:00Z", None, 2, {}), "a parent number not yet stitched"),
    (("e", "it\"em", None, "2026-01-01T00:00:00Z", None, 2, {}), "a type JSON escapes"),
    (("e", "item", None, "2026-01-01T00:00:00Z", "abc", 2, {}), "no whole hash"),
    (("e", "item", None, "2026-01-01T00:00:00Z", None, 99, {}), "a body past the blob"),
    (("p", "pi0", 0, 0, None, False, None), "a pi entry whose ASF ids are not stitched"),
    (("d", None, None, None, -1), "a handed-over entry"),
    (("s", frozenset(), {}), "the call ids to check"),
])
def test_the_c_stitch_leaves_what_it_does_not_take_to_python(record: tuple, why: str) -> None:
    import hashlib

    if record[0] == "e" and record[4] is None:
        record = (*record[:4], hashlib.sha256(b"{}").hexdigest(), *record[5:])
    t = _stitch_tables()
    index, offset, lines, count = _run([record], b"{}", t)
    assert (index, offset, lines, count) == (0, 0, b"", 0), why
    assert t["ids"] == [] and t["nodes"] == {} and t["asf_ids"] == {}


def test_the_c_stitch_leaves_an_id_written_twice_to_the_checker() -> None:
    import hashlib

    digest = hashlib.sha256(b"{}").hexdigest()
    record = ("e", "item", None, "2026-01-01T00:00:00Z", digest, 2, {})
    t = _stitch_tables()
    assert _run([record, record], b"{}{}", t)[::3] == (1, 1)  # stops at the second, for the checker to word
    t = _stitch_tables()
    assert _run([record, record], b"{}{}", t, check=False)[::3] == (2, 2)


@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_the_first_parts_call_ids_are_those_of_its_entries(path: Path) -> None:
    """What the worker reads of the first part: the tool calls' ids, as the IR holds them,
    in file order, from the file (mapped) and from bytes alike."""
    import piconv
    from piconv import ir

    data = path.read_bytes()
    expected = [part.call_id for entry in piconv.load(path).entries if type(entry.message) is ir.AssistantMessage
                and type(entry.message.content) is not str for part in entry.message.content or () if type(part) is ir.ToolCall]
    assert parallel.first_part_calls(path, len(data)) == expected
    assert parallel.first_part_calls(data, len(data)) == expected
    half = len(data) // 2
    assert parallel.first_part_calls(path, half) == parallel.first_part_calls(data[:half], half)


def test_the_split_is_after_the_line_holding_the_share(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    data = b"".join(b"%d %s\n" % (i, b"x" * (i % 50)) for i in range(2000))
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    for share in (0.001, 0.3, 0.47, 0.5, 0.9):
        cut = int(len(data) * share)
        line = data.count(b"\n", 0, cut) + 1
        expected = split_after(data, line)
        assert parallel.split_line(data, share) == expected
        assert parallel.split_line(path, share) == expected
        assert data[: expected[1]].count(b"\n") == line and expected[1] > cut
    last = data.rfind(b"\n", 0, len(data) - 1) + 1  # in the last line: nothing after it to split off
    assert parallel.split_line(data, (last + 1) / len(data)) is None
    assert parallel.split_line(path, (last + 1) / len(data)) is None
    monkeypatch.setattr(parallel, "MIN_BYTES", len(data) + 1)
    assert parallel.split_line(data, 0.5) is None and parallel.split_line(path, 0.5) is None
