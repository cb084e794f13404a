"""A line longer than a chunk is parsed from its text with Python's ``json`` (its bytes
released first): the same records, values and problems as the orjson path gives, and
about two copies of the line at the most instead of three."""

from __future__ import annotations

import io
import subprocess
import sys
import tracemalloc
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from piconv import jsonl
from piconv.jsonl import read_records
from test_reader import (
    ENTRY,
    HEADER,
    PROPERTY,
    Trickle,
    any_bytes,
    codes,
    mutated_file,
    read_checked,
)

LONG = jsonl.LONG_LINE_BYTES + 1000  # characters of a long line's text


def shown(result: jsonl.ReadResult) -> tuple[list[str], list[object], int]:
    """The result with the values' exact types and key order (``1 == 1.0`` and equal
    dicts in another order would pass ``==``)."""
    return [repr((r.line, r.value)) for r in result.records], result.problems, result.lines_read


def long_line(**members: object) -> bytes:
    """A message line of more than a chunk, its text first, then ``members`` as JSON."""
    rest = b"".join(b',"%s":%s' % (k.encode(), v) for k, v in members.items())  # type: ignore[str-bytes-safe]
    return b'{"type":"message","text":"' + b'ab\\n\\"cd\\u00e9 ' * (LONG // 14) + b'"' + rest + b"}"


def both_paths(data: bytes) -> jsonl.ReadResult:
    """Reads ``data`` whole (each line straight to orjson) and through a stream that
    splits it into chunks (its long lines through the long path); checks they agree."""
    whole = read_checked(data)
    streamed = read_records(io.BytesIO(data))
    assert shown(streamed) == shown(whole)
    return streamed


def test_a_long_line_is_the_value_orjson_reads() -> None:
    line = long_line(
        big=b"123456789012345678901234567890",
        u64=b"18446744073709551615",
        i64=b"-9223372036854775808",
        floats=b"[0.1,1e-400,2.2250738585072011e-308,1.7976931348623157e308,5e-324,-0.0,1E5,-0]",
        dup=b'{"a":1,"b":2,"a":{"c":3}}',
        nested=b'[[[{"x":null,"y":true,"z":false}]]]',
    )
    data = HEADER + b"\n" + line + b"\n" + ENTRY + b"\n"
    result = both_paths(data)
    assert result.problems == []
    value = result.records[1].value
    assert repr(value) == repr(orjson.loads(line))
    assert type(value["big"]) is float and type(value["u64"]) is int
    assert list(value["dup"]) == ["a", "b"] and value["dup"]["a"] == {"c": 3}


@pytest.mark.parametrize(
    ("members", "code", "value"),
    [
        ({"s": b'"x\\ud800y"'}, "lone-surrogate", "x\ud800y"),
        ({"s": b'"\\udfff"'}, "lone-surrogate", "\udfff"),
        ({"n": b"1e400"}, "infinite-number", float("inf")),
        ({"n": b"-1e400"}, "infinite-number", float("-inf")),
    ],
)
def test_a_long_line_orjson_refuses_is_kept_with_its_problem(members, code, value) -> None:
    data = HEADER + b"\n" + long_line(**members) + b"\r\n" + ENTRY + b"\r\n"
    result = both_paths(data)
    assert codes(result) == [(2, "crlf"), (2, code)]
    assert result.records[1].value[next(iter(members))] == value


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (long_line()[:-1], "not-json"),
        (long_line() + b"{}", "glued-objects"),
        (long_line() + b" 1", "not-json"),
        (b"[" + long_line() + b"]", "not-object"),
        (long_line().replace(b"cd", b"c\xffd", 1), "invalid-utf8"),
        (long_line().replace(b"cd", b"c\x00d", 1), "nul-byte"),
        (long_line().replace(b"cd", b"c\x01d", 1), "not-json"),
        (b"\xef\xbb\xbf" + long_line(), "not-json"),
        (b" " * LONG, "blank-line"),
        (b'{"a":' + b"[" * 250 + b"]" * 250 + b',"t":"' + b"x" * LONG + b'"}', "too-deep"),
        (b'{"a":' + b"[" * 3000 + b"]" * 3000 + b',"t":"' + b"x" * LONG + b'"}', "too-deep"),
        (long_line(n=b"NaN"), "not-json"),
    ],
)
def test_a_bad_long_line_is_reported_with_its_line_and_skipped(line: bytes, code: str) -> None:
    data = HEADER + b"\n" + line + b"\n" + ENTRY + b"\n"
    result = both_paths(data)
    assert codes(result) == [(2, code)]
    assert [r.line for r in result.records] == [1, 3] and result.lines_read == 3


@pytest.mark.parametrize("end", [b"", b"\r"])
def test_a_long_last_line_without_newline(end: bytes) -> None:
    result = both_paths(HEADER + b"\n" + long_line() + end)
    assert [r.line for r in result.records] == [1, 2]
    cut = both_paths(HEADER + b"\n" + long_line()[:-3] + end)
    assert [p.code for p in cut.problems][-1] == "truncated-line"
    cut_in_char = both_paths(HEADER + b"\n" + long_line()[:-1] + b'\\u00e9"\xc3')
    assert codes(cut_in_char) == [(2, "truncated-line")]


def test_a_long_line_holds_at_most_about_two_copies() -> None:
    line = b'{"type":"message","text":"' + b"x" * (4 * LONG) + b'"}'
    source = HEADER + b"\n" + line + b"\n"
    tracemalloc.start()
    try:
        result = read_records(io.BytesIO(source))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(result.records[1].value["text"]) == 4 * LONG
    # the gathered bytes (with bytearray's slack) and the text; then the text and the value
    assert peak < 2.3 * len(line), peak / len(line)


# -- every line through the long path ----------------------------------------------------


def through_the_long_path(data: bytes, step: int, recover: bool) -> None:
    """Every line longer than ``step`` spans chunks; with no length threshold, each such
    line takes the long path: the result is the one the whole bytes give."""
    expected = read_records(data, recover_glued=recover)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl, "LONG_LINE_BYTES", 0)
        assert shown(read_records(Trickle(data, step), recover_glued=recover)) == shown(expected)


@PROPERTY
@given(data=any_bytes, step=st.integers(1, 17), recover=st.booleans())
def test_any_line_reads_the_same_through_the_long_path(data: bytes, step: int, recover: bool) -> None:
    through_the_long_path(data, step, recover)


@pytest.mark.shared
@PROPERTY
@given(case=mutated_file(), step=st.integers(5, 400), recover=st.booleans())
def test_real_lines_read_the_same_through_the_long_path(case, step: int, recover: bool) -> None:
    through_the_long_path(case[0], step, recover)


@pytest.mark.parametrize("extra", [b"", b"\\ud800", b"1e400"])
def test_a_long_line_of_text_wider_than_its_bytes(extra: bytes) -> None:
    # Mostly ASCII with one character beyond U+FFFF: the text takes four bytes a character,
    # so orjson reads the line from its bytes instead; the result is the same.
    text = ("x" * 1000 + "\U0001f600") * (LONG // 1000)
    member = b',"n":' + extra if extra == b"1e400" else b',"s":"' + extra + b'"'
    line = b'{"type":"message","text":' + orjson.dumps(text) + member + b"}"
    result = both_paths(HEADER + b"\n" + line + b"\n")
    assert result.records[1].value["text"] == text
    assert [p.code for p in result.problems] == (
        [] if not extra else ["lone-surrogate" if extra != b"1e400" else "infinite-number"]
    )


def test_the_cli_reports_a_bad_long_line_with_its_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_bytes(HEADER + b"\n" + long_line()[:-1] + b"\n" + ENTRY + b"\n")
    report = tmp_path / "report.json"
    out = tmp_path / "out.md"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "piconv",
            str(source),
            "--to",
            "markdown",
            "-o",
            str(out),
            "--report",
            str(report),
        ],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"bad.jsonl: markdown: 3 lines read" in done.stderr and b"input:not-json" in done.stderr
    (loss,) = orjson.loads(report.read_bytes())["losses"]
    assert loss["code"] == "input:not-json" and loss["lines"] == [2]
    assert loss["examples"][0].startswith("not JSON: Expecting ',' delimiter at character ")
