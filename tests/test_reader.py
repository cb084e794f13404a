"""The line reader: every case of bad bytes, the accounting of every physical line, the
corpora, chunk boundaries, and property tests over random and mutated input."""

from __future__ import annotations

import io
import re
import tracemalloc
from collections import defaultdict
from pathlib import Path

import orjson
import pytest
from conftest import SHARED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from piconv import jsonl
from piconv.jsonl import MAX_LINE_BYTES, ReadResult, Record, iter_lines, read_records
from piconv.problems import INFO_CODES, PROBLEM_CODES, READER_CODES, Problem

REPO = Path(__file__).resolve().parents[1]
CORPUS_FILES = sorted((SHARED / "corpus" / "pi").glob("*.jsonl")) + sorted(
    (SHARED / "corpus" / "pi-generated").glob("*.jsonl")
)
# The two real files with a damaged line: pi wrote two entries without a newline between.
MALFORMED = {
    "badlogic__pi-mono__compact.jsonl": (1013, "glued-objects"),
    "badlogic__pi-mono__session.jsonl": (440, "glued-objects"),
}


class Trickle(io.RawIOBase):
    """A binary stream that hands over at most ``step`` bytes per read, like a slow pipe,
    so lines straddle many chunk boundaries."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data = data
        self.pos = 0
        self.step = step

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        size = self.step if n < 0 else min(n, self.step)
        piece = self.data[self.pos : self.pos + size]
        self.pos += len(piece)
        return piece


def physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def check_accounting(items: list[Record | Problem], data: bytes, *, recover_glued: bool = False) -> None:
    """Every physical line yields exactly one Record, or at least one Problem and no Record
    (a recovered glued line: two or more Records and its glued-objects Problem)."""
    n_lines = physical_lines(data)
    records: dict[int, int] = defaultdict(int)
    codes: dict[int, list[str]] = defaultdict(list)
    last = 0
    for item in items:
        assert 1 <= item.line <= n_lines
        assert item.line >= last, "items must come in file order"
        last = item.line
        if isinstance(item, Record):
            assert type(item.value) is dict
            records[item.line] += 1
        else:
            assert item.code in READER_CODES
            codes[item.line].append(item.code)
    for line in range(1, n_lines + 1):
        if recover_glued and "glued-objects" in codes[line]:
            assert records[line] >= 2
        elif records[line]:
            assert records[line] == 1, f"line {line}"
            assert not set(codes[line]) - INFO_CODES, f"line {line} kept despite {codes[line]}"
        else:
            assert codes[line], f"line {line} is neither a record nor a problem"


def read_checked(data: bytes, **kw) -> ReadResult:
    result = read_records(data, **kw)
    assert result.lines_read == physical_lines(data)
    items = list(iter_lines(data, **kw))
    check_accounting(items, data, recover_glued=kw.get("recover_glued", False))
    assert [i for i in items if isinstance(i, Record)] == result.records
    assert [i for i in items if isinstance(i, Problem)] == result.problems
    return result


def codes(result: ReadResult) -> list[tuple[int, str]]:
    return [(p.line, p.code) for p in result.problems]


HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'
ENTRY = b'{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi"}}'


# -- the API --------------------------------------------------------------------------------


def test_problem_to_json_and_frozen():
    p = Problem(3, "not-json", "bad")
    assert p.to_json() == {"line": 3, "code": "not-json", "message": "bad"}
    with pytest.raises(AttributeError):
        p.line = 4  # type: ignore[misc]
    assert MAX_LINE_BYTES == 256 * 1024 * 1024


def test_sources_path_str_bytes_stream(tmp_path):
    data = HEADER + b"\n" + ENTRY + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    expected = read_records(data)
    assert [r.line for r in expected.records] == [1, 2]
    assert expected.records[1].value == orjson.loads(ENTRY)
    for source in (path, str(path), io.BytesIO(data), Trickle(data, 1), bytearray(data)):
        assert read_records(source) == expected


def test_text_stream_is_a_usage_error():
    with pytest.raises(TypeError, match="binary stream"):
        read_records(io.StringIO("{}\n"))  # type: ignore[arg-type]


def test_line_counting():
    assert read_checked(b"").lines_read == 0
    assert read_checked(b"{}").lines_read == 1
    assert read_checked(b"{}\n").lines_read == 1
    assert read_checked(b"{}\n{}").lines_read == 2
    r = read_checked(b"{}\n\n")
    assert r.lines_read == 2 and codes(r) == [(2, "blank-line")]


def test_clean_file_has_no_problems():
    r = read_checked(HEADER + b"\n" + ENTRY + b"\n")
    assert r.problems == []
    assert [(x.line, x.value["type"]) for x in r.records] == [(1, "session"), (2, "message")]


# -- one test per case ----------------------------------------------------------------------


def test_not_json():
    r = read_checked(HEADER + b'\n{"type": oops}\n' + ENTRY + b"\n")
    assert codes(r) == [(2, "not-json")]
    assert [x.line for x in r.records] == [1, 3]


@pytest.mark.parametrize("line", [b"[1,2]", b"42", b'"text"', b"null", b"true", b"-1.5e3"])
def test_not_object(line):
    r = read_checked(HEADER + b"\n" + line + b"\n" + ENTRY + b"\n")
    assert codes(r) == [(2, "not-object")]
    assert [x.line for x in r.records] == [1, 3]


def test_nan_and_infinity_literals_are_not_json():
    # The stdlib fallback would take these; JSON and pi's JSON.parse do not.
    r = read_checked(b'{"a":NaN}\n{"a":-Infinity}\n')
    assert codes(r) == [(1, "not-json"), (2, "not-json")]
    assert r.records == []


@pytest.mark.parametrize("sep", [b"", b" ", b"\t  "])
def test_glued_objects_skipped_by_default(sep):
    r = read_checked(HEADER + b"\n" + ENTRY + sep + b'{"type":"x","id":"b"}\n' + ENTRY + b"\n")
    assert codes(r) == [(2, "glued-objects")]
    assert [x.line for x in r.records] == [1, 3]


def test_glued_objects_recovered():
    line = ENTRY + b'{"type":"x","id":"b"} {"type":"y","id":"c"}'
    r = read_checked(HEADER + b"\n" + line + b"\n", recover_glued=True)
    assert codes(r) == [(2, "glued-objects")]
    assert [(x.line, x.value["id"]) for x in r.records[1:]] == [(2, "a1"), (2, "b"), (2, "c")]


def test_glued_values_that_are_not_all_objects_are_not_json():
    r = read_checked(b'{"a":1} [2]\n', recover_glued=True)
    assert codes(r) == [(1, "not-json")]
    assert r.records == []


def test_truncated_last_line():
    r = read_checked(HEADER + b"\n" + ENTRY + b'\n{"type":"message","id":"a2","mess')
    assert codes(r) == [(3, "truncated-line")]
    assert [x.line for x in r.records] == [1, 2]


def test_truncated_inside_a_utf8_character():
    r = read_checked(HEADER + b'\n{"text":"caf\xc3')
    assert codes(r) == [(2, "truncated-line")]


def test_last_line_without_newline_that_is_json_is_fine():
    r = read_checked(HEADER + b"\n" + ENTRY)
    assert r.problems == [] and len(r.records) == 2


def test_cut_line_before_the_end_is_not_json():
    r = read_checked(b'{"type":"mess\n' + ENTRY)
    assert codes(r) == [(1, "not-json")]


def test_invalid_utf8():
    r = read_checked(HEADER + b'\n{"text":"ab\xff\xfe"}\n' + ENTRY + b"\n")
    assert codes(r) == [(2, "invalid-utf8")]
    assert "byte 11" in r.problems[0].message
    assert [x.line for x in r.records] == [1, 3]


def test_encoded_surrogate_is_invalid_utf8():
    # CESU-8 style: a surrogate encoded as three bytes is not UTF-8.
    r = read_checked(b'{"text":"\xed\xa0\x80"}\n')
    assert codes(r) == [(1, "invalid-utf8")]


def test_lone_surrogate_kept():
    r = read_checked(HEADER + b'\n{"text":"a\\ud800b","\\udc01":1}\n' + ENTRY + b"\n")
    assert codes(r) == [(2, "lone-surrogate")]
    assert r.records[1].line == 2
    assert r.records[1].value == {"text": "a\ud800b", "\udc01": 1}
    assert len(r.records) == 3


def test_surrogate_pair_is_no_problem():
    r = read_checked(b'{"text":"\\ud83d\\ude00"}\n')
    assert r.problems == [] and r.records[0].value == {"text": "\U0001f600"}


def test_fallback_parser_only_for_refused_lines(monkeypatch):
    calls = []
    real = jsonl._decoder()

    class Counting:
        def raw_decode(self, text, pos):
            calls.append(pos)
            return real.raw_decode(text, pos)

    monkeypatch.setattr(jsonl, "_decoder", lambda: Counting())
    clean = b"\n".join([HEADER, ENTRY] * 50) + b"\n"
    assert read_records(clean).problems == []
    assert calls == []
    r = read_records(clean + b'{"t":"\\ud800"}\n' + clean)
    assert codes(r) == [(101, "lone-surrogate")]
    assert len(calls) == 1


def test_fallback_keeps_orjson_number_semantics():
    # A lone surrogate sends the line to the stdlib; its numbers must read as orjson's would.
    big = b"123456789012345678901234567890"
    r = read_checked(b'{"s":"\\ud800","big":' + big + b',"u":18446744073709551615}\n')
    value = r.records[0].value
    assert value["big"] == orjson.loads(big) and type(value["big"]) is float
    assert value["u"] == 18446744073709551615 and type(value["u"]) is int


def test_infinite_number_kept():
    r = read_checked(b'{"a":1e999,"b":[-1e400]}\n')
    assert codes(r) == [(1, "infinite-number")]
    assert r.records[0].value == {"a": float("inf"), "b": [float("-inf")]}


def test_nul_byte_raw():
    for line in (b'{"text":"a\x00b"}', b'{"a":1}\x00', b"\x00\x00\x00\x00"):
        r = read_checked(HEADER + b"\n" + line + b"\n" + ENTRY + b"\n")
        assert codes(r) == [(2, "nul-byte")], line
        assert [x.line for x in r.records] == [1, 3]


def test_nul_padding_at_end_of_file_is_nul_byte_not_truncation():
    r = read_checked(HEADER + b"\n" + b"\x00" * 4096)
    assert codes(r) == [(2, "nul-byte")]


def test_escaped_nul_is_legal():
    r = read_checked(b'{"text":"a\\u0000b"}\n')
    assert r.problems == [] and r.records[0].value == {"text": "a\x00b"}


def test_bom():
    r = read_checked(b"\xef\xbb\xbf" + HEADER + b"\n" + ENTRY + b"\n")
    assert codes(r) == [(1, "bom")]
    assert r.records[0].line == 1 and r.records[0].value["type"] == "session"


def test_bom_through_a_trickling_stream():
    data = b"\xef\xbb\xbf" + HEADER + b"\n"
    r = read_records(Trickle(data, 1))
    assert codes(r) == [(1, "bom")] and r.records[0].value["id"] == "s1"


def test_bom_later_in_the_file_is_not_json():
    r = read_checked(HEADER + b"\n\xef\xbb\xbf" + ENTRY + b"\n")
    assert codes(r) == [(2, "not-json")]


def test_crlf_reported_once():
    r = read_checked(HEADER + b"\r\n" + ENTRY + b"\r\n" + ENTRY + b"\r\n")
    assert codes(r) == [(1, "crlf")]
    assert len(r.records) == 3


def test_crlf_first_seen_on_a_bad_line_and_final_line():
    r = read_checked(HEADER + b"\n{oops}\r\n" + ENTRY + b"\r\n" + ENTRY + b"\r")
    assert codes(r) == [(2, "crlf"), (2, "not-json")]
    assert [x.line for x in r.records] == [1, 3, 4]


def test_crlf_split_across_chunks():
    data = HEADER + b"\r\n" + ENTRY + b"\r\n"
    cut = len(HEADER) + 1  # the CR ends one read, the LF starts the next
    stream = io.BytesIO(data)
    pieces = [data[:cut], data[cut:]]
    stream.read = lambda n=-1: pieces.pop(0) if pieces else b""  # type: ignore[method-assign]
    r = read_records(stream)
    assert codes(r) == [(1, "crlf")] and len(r.records) == 2


@pytest.mark.parametrize("blank", [b"", b"   ", b"\t", b"\r", b" \r"])
def test_blank_line(blank):
    r = read_checked(HEADER + b"\n" + blank + b"\n" + ENTRY + b"\n")
    assert (2, "blank-line") in codes(r)
    assert {c for _, c in codes(r)} <= {"blank-line", "crlf"}
    assert [x.line for x in r.records] == [1, 3]


def test_too_deep():
    deep = b'{"a":' + b"[" * 3000 + b"]" * 3000 + b"}"
    r = read_checked(HEADER + b"\n" + deep + b"\n" + ENTRY + b"\n")
    assert codes(r) == [(2, "too-deep")]


def test_line_too_long_bytes_source():
    long = b'{"text":"' + b"x" * 200 + b'"}'
    r = read_checked(HEADER + b"\n" + long + b"\n" + ENTRY + b"\n", max_line_bytes=150)
    assert codes(r) == [(2, "line-too-long")]
    assert "211 bytes" in r.problems[0].message
    assert [x.line for x in r.records] == [1, 3]


@pytest.mark.parametrize("step", [1, 7, 64, 10_000])
def test_line_too_long_streamed(step):
    long = b'{"text":"' + b"x" * 500 + b'"}'
    data = HEADER + b"\n" + long + b"\n" + ENTRY + b"\n" + long
    r = read_records(Trickle(data, step), max_line_bytes=200)
    assert codes(r) == [(2, "line-too-long"), (4, "line-too-long")]
    assert all("511 bytes" in p.message for p in r.problems)
    assert [x.line for x in r.records] == [1, 3] and r.lines_read == 4


def test_line_too_long_is_not_held_in_memory():
    limit = 1024 * 1024
    size = 48 * limit

    class Endless(io.RawIOBase):
        # Makes the long line on demand, so only the reader could hold it whole.
        def __init__(self) -> None:
            self.left = size
            self.tail = b'"}\n' + ENTRY + b"\n"

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            if self.left:
                k = min(n, self.left)
                self.left -= k
                return (b'{"t":"' + b"x" * (k - 6)) if self.left == size - k else b"x" * k
            tail, self.tail = self.tail, b""
            return tail

    tracemalloc.start()
    try:
        r = read_records(Endless(), max_line_bytes=limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert codes(r) == [(1, "line-too-long")]
    assert [x.line for x in r.records] == [2]
    assert peak < limit + 4 * jsonl.CHUNK_BYTES


def test_line_spanning_many_chunks_is_joined():
    value = {"text": "y" * 5000, "n": list(range(300))}
    data = HEADER + b"\n" + orjson.dumps(value) + b"\n" + ENTRY
    r = read_records(Trickle(data, 97))
    assert r.problems == [] and r.records[1].value == value and r.lines_read == 3


# -- the corpora ----------------------------------------------------------------------------


@pytest.mark.shared
@pytest.mark.parametrize("path", CORPUS_FILES, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS_FILES])
def test_corpus_accounting(path):
    data = path.read_bytes()
    result = read_checked(data)
    assert read_records(path) == result
    assert read_records(Trickle(data, 4093)) == result
    assert result.lines_read == len(result.records) + len({p.line for p in result.problems})
    expected = MALFORMED.get(path.name)
    assert codes(result) == ([expected] if expected else [])
    recovered = read_checked(data, recover_glued=True)
    if expected:
        assert len(recovered.records) == len(result.records) + 2
        assert sum(r.line == expected[0] for r in recovered.records) == 2
    else:
        assert recovered == result


@pytest.mark.shared
def test_corpus_is_present():
    assert len(CORPUS_FILES) >= 20
    assert set(MALFORMED) <= {p.name for p in CORPUS_FILES}


# -- properties -----------------------------------------------------------------------------

FRAGMENTS = [
    b"{", b"}", b"[", b"]", b'"', b":", b",", b"1", b"\n", b"\r", b"\r\n", b" ", b"\x00",
    b"\xff", b"\xc3", b"\xef\xbb\xbf", b"\\ud800", b"\\u0000", b"\\", b"1e999", b"null",
    b'{"a":1}', b'"k":"v"', b"\n\n",
]  # fmt: skip
json_ish = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(b"".join)
any_bytes = st.one_of(st.binary(max_size=300), json_ish)
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(data=any_bytes, recover=st.booleans(), limit=st.sampled_from([MAX_LINE_BYTES, 16, 3]))
def test_random_bytes_never_crash_and_are_accounted_for(data, recover, limit):
    result = read_checked(data, recover_glued=recover, max_line_bytes=limit)
    assert result.lines_read == physical_lines(data)


@PROPERTY
@given(data=any_bytes, step=st.integers(1, 17), limit=st.sampled_from([MAX_LINE_BYTES, 16]))
def test_chunk_boundaries_do_not_change_the_result(data, step, limit):
    assert read_records(Trickle(data, step), max_line_bytes=limit) == read_records(data, max_line_bytes=limit)


def _corpus_lines() -> list[bytes]:
    lines: list[bytes] = []
    for path in CORPUS_FILES:
        # Short lines keep the examples fast; the long ones are covered by the corpus test.
        lines.extend(x for x in path.read_bytes().split(b"\n")[:40] if x and len(x) < 3000)
    return lines


CORPUS_LINES = _corpus_lines()
STRING_START = re.compile(rb'":"')


@st.composite
def mutated_file(draw):
    """A few real lines, one of them mutated; returns (file bytes, mutated index, how)."""
    lines = draw(st.lists(st.sampled_from(CORPUS_LINES), min_size=2, max_size=6))
    i = draw(st.integers(0, len(lines) - 2))
    how = draw(st.sampled_from(["truncate", "insert", "glue", "surrogate", "crlf"]))
    line = lines[i]
    if how == "truncate":
        lines[i] = line[: draw(st.integers(0, len(line) - 1))]
    elif how == "insert":
        at = draw(st.integers(0, len(line)))
        # No newline: the mutation must stay on its own physical line.
        junk = draw(st.binary(min_size=1, max_size=8).filter(lambda b: b"\n" not in b))
        lines[i] = line[:at] + junk + line[at:]
    elif how == "glue":
        lines[i : i + 2] = [line + draw(st.sampled_from([b"", b" "])) + lines[i + 1]]
    elif how == "surrogate":
        spots = [m.end() for m in STRING_START.finditer(line)]
        if spots:
            at = draw(st.sampled_from(spots))
            lines[i] = line[:at] + draw(st.sampled_from([b"\\ud800", b"\\udfff", b"\\uDBFFx"])) + line[at:]
        else:
            how = "none"
    sep = b"\r\n" if how == "crlf" else b"\n"
    return sep.join(lines) + draw(st.sampled_from([sep, b""])), i, how


@pytest.mark.shared
@PROPERTY
@given(case=mutated_file(), recover=st.booleans())
def test_mutated_corpus_lines_are_accounted_for(case, recover):
    data, i, how = case
    result = read_checked(data, recover_glued=recover)
    by_line = defaultdict(list)
    for p in result.problems:
        if p.code != "crlf":
            by_line[p.line].append(p.code)
    # Every line but the mutated one reads exactly as before.
    assert set(by_line) <= {i + 1}
    if how == "glue":
        assert by_line[i + 1] == ["glued-objects"]
        assert sum(r.line == i + 1 for r in result.records) == (2 if recover else 0)
    elif how == "surrogate":
        assert by_line[i + 1] == ["lone-surrogate"]
        assert any(r.line == i + 1 for r in result.records)
    elif how == "crlf":
        assert by_line == {} and codes(result) == [(1, "crlf")]
        assert len(result.records) == result.lines_read


# -- docs -----------------------------------------------------------------------------------


def test_reader_codes_are_declared():
    # Every code the reader can emit is a literal in its source; each must be declared.
    source = (REPO / "core" / "jsonl.py").read_text(encoding="utf-8")
    emitted = set(re.findall(r'Problem\(\s*\w+,\s*"([a-z0-9-]+)"', source))
    emitted |= set(re.findall(r'"(line-too-long|crlf)"', source))
    assert emitted == set(READER_CODES)
    assert set(PROBLEM_CODES) >= READER_CODES
    assert INFO_CODES <= READER_CODES


def test_docs_list_every_reader_code():
    doc = (REPO / "docs" / "formats" / "pi-reader.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([a-z0-9-]+)` \|", doc, re.MULTILINE))
    assert rows == set(READER_CODES)
    assert f"{MAX_LINE_BYTES // (1024 * 1024)} MiB" in doc
