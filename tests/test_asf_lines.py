"""ASF's lines come from the one line reader (piconv.jsonl), which the pi reader uses too: its
nesting and size limits hold for ASF, and a line that breaks them is a problem with its line
number, never a crash; the reader's codes are said in ASF's (converters/asf/lines.py)."""

from __future__ import annotations

import io
import subprocess
import sys

import orjson
import piconv
import pytest
from conftest import REPO, session_bytes
from piconv.converters.asf import validate_asf
from piconv.converters.asf.lines import ASF_MAX_DEPTH, iter_lines
from piconv.errors import ValidationFailed
from piconv.jsonl import MAX_DEPTH, MAX_LINE_BYTES, depth_over

EXAMPLE = REPO / "examples" / "basic.jsonl"
FORMATS = ("asf", "openai", "ir", "pi", "markdown", "html", "sqlite")


def _asf_lines() -> list[bytes]:
    out = io.BytesIO()
    piconv.convert(str(EXAMPLE), "asf", out)
    return out.getvalue().splitlines()


LINES = _asf_lines()
"""piconv's ASF file of examples/basic.jsonl: valid, with a header and a few entries."""


def _asf(*lines: bytes) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def _nested_text(levels: int) -> bytes:
    """A JSON value of exactly ``levels`` levels of arrays and objects, written by hand
    (orjson writes no more than 255)."""
    text = b'"leaf"'
    for i in range(levels):
        text = b"[" + text + b"]" if i % 2 else b'{"k":' + text + b"}"
    return text


def _custom_line(data: bytes) -> bytes:
    """A root ``custom`` entry whose ``data`` is ``data`` (one level below the line's)."""
    return (
        b'{"type":"custom","id":"sha256:' + b"0" * 64 + b'","parent":null,'
        b'"ts":"2026-01-01T00:00:00Z","ns":"test","data":' + data + b"}"
    )


def _with_deep_line(levels: int) -> bytes:
    """The example's ASF with a line nested ``levels`` deep as line 2."""
    return _asf(LINES[0], _custom_line(_nested_text(levels - 1)), *LINES[1:])


# --------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("levels", [300, 1100])
def test_the_reader_reports_a_deep_line_and_reads_every_other(levels: int) -> None:
    doc = piconv.load(_with_deep_line(levels), reader="asf")
    assert [(i.line, i.code) for i in doc.issues] == [(2, "too-deep")]
    assert len(doc.entries) == len(piconv.load(_asf(*LINES), reader="asf").entries) > 0


@pytest.mark.parametrize("levels", [300, 1100])
def test_the_checker_reports_a_deep_line(levels: int) -> None:
    assert [(i.line, i.code) for i in validate_asf(_with_deep_line(levels))] == [(2, "too-deep")]


@pytest.mark.parametrize("levels", [300, 1100])
def test_inspect_and_validate_report_a_deep_line(levels: int, tmp_path: object) -> None:
    path = tmp_path / "deep.asf.jsonl"  # type: ignore[operator]
    path.write_bytes(_with_deep_line(levels))
    run = [sys.executable, "-m", "piconv"]
    inspect = subprocess.run([*run, "inspect", str(path)], capture_output=True, text=True)
    assert inspect.returncode == 0, inspect.stderr
    assert "format:         asf" in inspect.stdout and "line 2: [too-deep]" in inspect.stdout
    validate = subprocess.run(
        [*run, "validate", str(path), "--format", "asf"], capture_output=True, text=True
    )
    assert validate.returncode == ValidationFailed.exit_code, validate.stderr
    assert f"{path}: line 2: too-deep:" in validate.stderr and "internal error" not in validate.stderr


FOREIGN_HEADER = (
    b'{"type":"session","format":"agentsession/0.11","id":"s-1","created_at":"2026-09-17T12:00:00Z",'
    b'"harness":{"name":"elsewhere","version":"7"}}'
)
FOREIGN_ITEM = (
    b'{"type":"item","id":"u","parent":"sha256:' + b"0" * 64 + b'","ts":"2026-09-17T12:00:01Z",'
    b'"item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}'
)


def test_a_line_at_the_asf_limit_is_kept_and_every_format_writes_it() -> None:
    """In another writer's file (piconv's own holds pi's values, bounded by pi's limit)."""
    deep = _custom_line(_nested_text(ASF_MAX_DEPTH - 1))
    value = orjson.loads(deep)
    assert not depth_over(value, ASF_MAX_DEPTH) and depth_over(value, ASF_MAX_DEPTH - 1)
    doc = piconv.load(_asf(FOREIGN_HEADER, deep, FOREIGN_ITEM), reader="asf")
    assert doc.issues == () and doc.entries[0].body.data == value["data"]  # type: ignore[union-attr]
    for fmt in FORMATS:
        out = io.BytesIO()
        piconv.convert(doc, fmt, out)  # validated while written
        assert out.getvalue(), fmt
    deeper = _custom_line(_nested_text(ASF_MAX_DEPTH))
    doc = piconv.load(_asf(FOREIGN_HEADER, deeper, FOREIGN_ITEM), reader="asf")
    assert [(i.line, i.code) for i in doc.issues] == [(2, "too-deep"), (3, "bad-parent")]


def test_the_asf_of_a_pi_line_at_the_pi_limit_reads_back_whole() -> None:
    """The ASF writer wraps a pi value in levels of its own: the ASF limit leaves room for
    them, so pi -> ASF -> pi keeps every line the pi reader keeps."""

    def nested(levels: int) -> object:
        value: object = "leaf"
        for i in range(levels):
            value = [value] if i % 2 else {"k": value}
        return value

    line = {
        "type": "custom_message",
        "id": "b",
        "parentId": "a",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "customType": "t",
        "content": [{"type": "text", "text": "x", "deep": nested(MAX_DEPTH - 3)}],
        "display": True,
    }
    assert not depth_over(line, MAX_DEPTH) and depth_over(line, MAX_DEPTH - 1)
    user = {
        "type": "message",
        "id": "a",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "hi", "timestamp": 1},
    }
    asf = io.BytesIO()
    piconv.convert(piconv.load(session_bytes(user, line)), "asf", asf)
    written = [orjson.loads(x) for x in asf.getvalue().splitlines()]
    assert any(depth_over(v, MAX_DEPTH) for v in written)  # the writer's own levels
    doc = piconv.load(asf.getvalue())
    assert doc.issues == () and validate_asf(asf.getvalue()) == []
    back = io.BytesIO()
    piconv.convert(doc, "pi", back)
    assert orjson.loads(back.getvalue().splitlines()[2]) == line


# --------------------------------------------------------------------------- size


class _LongLineStream(io.RawIOBase):
    """The example's header, then a line one byte over the reader's limit, made on demand
    (so only the reader could hold it whole), then the example's other lines."""

    def __init__(self) -> None:
        self.head = LINES[0] + b"\n" + _custom_line(b'"')
        self.left = MAX_LINE_BYTES + 1 - len(_custom_line(b'"')) - 2  # the string's x's
        self.tail = b'"}\n' + _asf(*LINES[1:])

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = self.head, b""
            return out
        if self.left:
            k = min(n, self.left)
            self.left -= k
            return b"x" * k
        out, self.tail = self.tail, b""
        return out


def test_a_line_over_the_size_limit_is_reported_by_the_reader_and_the_checker() -> None:
    doc = piconv.load(_LongLineStream(), reader="asf")
    assert [(i.line, i.code) for i in doc.issues] == [(2, "line-too-long")]
    assert f"{MAX_LINE_BYTES + 1} bytes" in doc.issues[0].message
    assert len(doc.entries) == len(piconv.load(_asf(*LINES), reader="asf").entries)
    assert [(i.line, i.code) for i in validate_asf(_LongLineStream())] == [(2, "line-too-long")]


# --------------------------------------------------------------------------- ASF's codes


def _codes(data: bytes) -> list[tuple[int, str | None]]:
    return [(line.line, line.code) for line in iter_lines(data)]


def test_a_line_that_does_not_parse_is_not_json_and_truncated_when_last() -> None:
    header, entry = LINES[0], LINES[1]
    broken = [
        b"{not json",
        entry + entry,  # two objects glued: a lost newline
        entry[:-2] + b'"\xff"}',  # invalid UTF-8
        entry[:-1] + b"\x00}",  # a raw NUL
        b'{"a": NaN}',
    ]
    for bad in broken:
        assert _codes(_asf(header, bad, entry)) == [(1, None), (2, "not-json"), (3, None)], bad
        # the last line, with or without its newline (RFC 0001: tolerated and reported)
        assert _codes(_asf(header, bad)) == [(1, None), (2, "truncated")], bad
        assert _codes(_asf(header) + bad) == [(1, None), (2, "truncated")], bad
    cut = _asf(header) + '{"t": "é"}'.encode()[:-3]  # inside a UTF-8 character
    assert _codes(cut) == [(1, None), (2, "truncated")]


def test_other_skipped_lines_keep_their_code_on_the_last_line() -> None:
    header = LINES[0]
    assert _codes(_asf(header, b"[1]")) == [(1, None), (2, "not-object")]
    assert _codes(_asf(header, b"")) == [(1, None), (2, "blank-line")]
    assert _codes(_asf(header, b"  ", LINES[1])) == [(1, None), (2, "blank-line"), (3, None)]


def test_a_bom_and_crlf_line_ends_are_read_without_a_problem() -> None:
    crlf = b"".join(line + b"\r\n" for line in LINES)
    for data in (b"\xef\xbb\xbf" + _asf(*LINES), crlf):
        assert [line.value for line in iter_lines(data)] == [orjson.loads(x) for x in LINES]
        assert validate_asf(data) == [] and piconv.load(data, reader="asf").issues == ()
    later_bom = _asf(LINES[0], b"\xef\xbb\xbf" + LINES[1], *LINES[2:])
    assert _codes(later_bom)[1] == (2, "not-json")  # a BOM is a file's, not a line's


def test_a_line_only_the_standard_library_reads_is_kept_and_checked() -> None:
    """orjson refuses a lone surrogate escape; the line is kept (the reader's
    ``lone-surrogate``), and the checker finds a member name it repeats."""
    header, entry = LINES[0], LINES[4]
    assert entry.startswith(b'{"type":"item",') and b'"text":"' in entry
    line = b'{"type":"item",' + entry[1:].replace(b'"text":"', b'"text":"\\ud800', 1)
    first, kept = iter_lines(_asf(header, line), keep_raw=True)
    assert kept.read_by_stdlib and kept.raw == line and "\\ud800" in repr(kept.value)
    assert not first.read_by_stdlib and first.raw == header
    issues = validate_asf(_asf(*LINES[:4], line))  # after its parent
    assert [(i.line, i.code, i.message) for i in issues] == [
        (5, "not-ijson", "an object repeats the member name 'type'")
    ]
    # the reader does not keep the bytes unless asked
    assert [(x.line, x.code, x.raw) for x in iter_lines(_asf(header, line))] == [
        (1, None, None),
        (2, None, None),
    ]


def test_every_code_a_skipped_line_gets_is_one_the_checker_documents() -> None:
    from piconv.converters.asf.filecheck import CODES
    from piconv.converters.asf.lines import _READ_BY_STDLIB, _TOLERATED, _skipped
    from piconv.problems import READER_CODES

    skipping = READER_CODES - _TOLERATED - _READ_BY_STDLIB
    got = {_skipped(1, code, "why; skipped", last=last).code for code in skipping for last in (False, True)}
    assert got <= set(CODES) and {"not-json", "truncated", "too-deep", "line-too-long"} <= got


def test_a_number_beyond_every_binary64_is_not_ijson_and_found_at_once() -> None:
    from piconv.converters.asf.lines import number_problem

    assert (
        number_problem(b'{"a":1e9999999}') == "number 1e9999999 is not I-JSON: no binary64 holds it exactly"
    )
    digits = b"9" * 5000  # more digits than Python parses into an int
    assert number_problem(b'{"a":' + digits + b"}") is not None
    assert number_problem(b'{"a":1e308,"b":-1.7976931348623157e308,"c":1e-999999}') is None
    assert number_problem(b'{"a":9007199254740993}') is not None
