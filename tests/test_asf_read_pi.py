"""pi → ASF → pi gives back every line's JSON value (the asf reader, converters/asf/read/document.py).

For every corpus file (and the hostile sessions below) the session is converted to ASF
through piconv's API, the ASF bytes alone are read back (the format detected) and
written as pi, and the values must equal the original file's, line by line, header
included. The only lines
left out are listed in ``NOT_REBUILT`` with the reason; the test also checks that the
list is exactly what the pi reader skipped plus what the ASF writer refused, so it can
neither hide a loss nor go stale.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import piconv
import pytest
from conftest import REPO, SHARED, corpus_files
from piconv.converters.asf.read.unnormalise import restore

HOSTILE = REPO / "tests" / "data" / "asf" / "rebuild-hostile.jsonl"
"""Unknown entry types, roles and members at every depth; context edits replacing
content (valid, on a non-editable target, with a non-content replacement); lone
surrogates in names and values; whole numbers no binary64 holds; entries without or
with non-string timestamps, ids and parents; a child before its parent; a repeated id;
a further header; a line that is not JSON, one holding 1e400 and a blank line."""

_GENERATED = SHARED / "corpus" / "pi-generated"
CORPUS = [*corpus_files(), *sorted(p for p in _GENERATED.rglob("*.jsonl") if p.parent != _GENERATED)]
"""conftest's corpus (pi/*.jsonl, pi-generated/*.jsonl) and any pi-generated subdirectory."""
CASES = [*CORPUS, *sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl")), HOSTILE]

NOT_REBUILT: dict[str, dict[int, str]] = {
    # the pi reader skips these lines (reported with their code): they never reach ASF
    "badlogic__pi-mono__compact.jsonl": {1013: "glued-objects"},
    "badlogic__pi-mono__session.jsonl": {440: "glued-objects"},
    "html-broken-lines.jsonl": {2: "not-json", 5: "not-json"},
    "rebuild-hostile.jsonl": {
        45: "not-json",
        54: "entry-refused",  # 1e400 reads as infinity: RFC 0001 says refuse the entry
        56: "blank-line",
    },
}
_SKIPPED = {
    "not-json",
    "not-object",
    "glued-objects",
    "truncated-line",
    "invalid-utf8",
    "nul-byte",
    "line-too-long",
    "blank-line",
}


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _original(data: bytes, leave_out: set[int]) -> list[Any]:
    values = []
    for number, line in enumerate(data.removeprefix(b"\xef\xbb\xbf").split(b"\n"), 1):
        if number in leave_out or (not line.strip() and number == data.count(b"\n") + 1):
            continue  # listed, or the empty string after the final newline
        try:
            values.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            values.append(json.loads(line))  # orjson refuses lone surrogate escapes
    return values


def rebuild_pi(data: bytes) -> list[Any]:
    """The pi JSON values of an ASF file: read by the detected reader, written as pi."""
    out = io.BytesIO()
    piconv.convert(piconv.load(data), "pi", out)
    values = []
    for line in out.getvalue().splitlines():
        try:
            values.append(orjson.loads(line))
        except orjson.JSONDecodeError:  # a lone surrogate, written as its \u escape
            values.append(json.loads(line))
    return values


def _to_asf(path: Path) -> tuple[bytes, Any]:
    out = io.BytesIO()
    doc = piconv.load(path)
    piconv.convert(doc, "asf", out)  # validated while written
    return out.getvalue(), doc


@pytest.mark.shared
def test_the_corpus_is_present() -> None:
    assert (SHARED / "corpus" / "pi").is_dir() and (SHARED / "corpus" / "pi-generated").is_dir(), SHARED
    assert len([p for p in CORPUS if "pi-generated" in p.parts]) >= 7
    assert len([p for p in CORPUS if "pi-generated" not in p.parts]) >= 15


@pytest.mark.shared
@pytest.mark.parametrize("path", CASES, ids=_name)
def test_the_pi_file_is_rebuilt_line_by_line(path: Path) -> None:
    data, doc = _to_asf(path)
    listed = NOT_REBUILT.get(path.name, {})
    rebuilt = piconv.load(data)
    assert piconv.detect(data).name == "asf" and rebuilt.session.source_format == "pi"
    refused = {int(i.message.split()[2]) for i in rebuilt.issues if i.code == "entry-refused"}
    skipped = {i.line: i.code for i in doc.issues if i.code in _SKIPPED}
    assert {**skipped, **{line: "entry-refused" for line in refused}} == listed
    # the child of a refused entry is read as a root (its parentId kept for the pi line)
    assert {i.code for i in rebuilt.issues} <= {"entry-refused", "bad-parent"}
    assert sorted(e.id for e in rebuilt.entries) == sorted(
        e.id for e in doc.entries if e.origin.line not in refused
    )
    got = rebuild_pi(data)
    want = _original(path.read_bytes(), set(listed))
    assert len(got) == len(want)
    for number, (a, b) in enumerate(zip(got, want, strict=True)):
        assert a == b, f"value {number + 1}"


def test_the_hostile_session_exercises_what_it_claims() -> None:
    data, _doc = _to_asf(HOSTILE)
    entries = [orjson.loads(line) for line in data.splitlines()[1:]]
    types = {e["type"] for e in entries}
    assert {"pi:entry", "pi:refused", "pi:label", "pi:context_edit"} <= types
    edits = [e for e in entries if e["type"] == "pi:context_edit"]
    assert any("replacement" in e and e["items"] for e in edits)  # a replacement with an ASF form
    assert any(e["type"] == "item" and e["item"]["type"] == "pi:message" for e in entries)
    assert any("normalised" in e for e in entries)
    assert any("line" in (e.get("pi") or {}) for e in entries)


def test_normalised_names_and_values_are_put_back() -> None:
    entry = {
        "data": {"\ufffdkey": "\ufffd", "s": "\ufffd lone", "n": 9007199254740992.0},
        "normalised": [
            {"at": "/data/n", "was": "9007199254740993"},
            {"at": "/data/s", "was": '"\\ud800 lone"'},
            {"at": "/data/\ufffdkey", "was": '"\\udc00key"'},
            {"at": "/data/\ufffdkey", "was": '"\\udc01"'},
        ],
    }
    assert restore(entry) == {"data": {"\udc00key": "\udc01", "s": "\ud800 lone", "n": 9007199254740993}}


@pytest.mark.shared
def test_the_command_line_reads_asf_back_to_pi(tmp_path: Path) -> None:
    source = SHARED / "corpus" / "pi-generated" / "extensions.jsonl"
    asf = tmp_path / "s.asf.jsonl"
    asf.write_bytes(_to_asf(source)[0])
    out = tmp_path / "s.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "piconv", str(asf), "--to", "pi", "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert [orjson.loads(x) for x in out.read_bytes().splitlines()] == _original(source.read_bytes(), set())
    assert out.read_bytes().endswith(b"\n") and len(out.read_bytes().splitlines()) == len(
        source.read_bytes().splitlines()
    )

    hostile = tmp_path / "h.asf.jsonl"
    hostile.write_bytes(_to_asf(HOSTILE)[0])
    run = subprocess.run(
        [sys.executable, "-m", "piconv", str(hostile), "--to", "pi", "--report", "-"],
        capture_output=True,
        check=False,
    )
    assert run.returncode == 0 and b"entry-refused" in run.stderr and b"pi line 54" in run.stderr
    assert len(run.stdout.splitlines()) == len(
        _original(HOSTILE.read_bytes(), set(NOT_REBUILT["rebuild-hostile.jsonl"]))
    )
