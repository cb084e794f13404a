"""The C serialiser (converters/asf/_jcs.c) writes exactly the RFC 8785 bytes.

The references are ``jcs.canonical_slow`` (the plain reading of the RFC) and the rfc8785
package, on every body the ASF writer emits for the corpora and on generated values. Where
the C code declines (``None``), the Python path decides: those cases are listed here, and
``jcs.canonical`` must answer them exactly as it does without the C code.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import io
import math
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import piconv
import pytest
import rfc8785
from conftest import corpus_files
from hypothesis import given, settings
from hypothesis import strategies as st
from piconv.converters.asf import jcs, writer
from piconv.converters.asf.writer import write_asf
from piconv.report import Report

try:
    from piconv.converters.asf import _jcs
except ImportError:  # every test below then fails, naming the cause
    _jcs = None


class _Str(str):
    pass


def c_canonical(value: Any) -> bytes | None:
    assert _jcs is not None, "converters/asf/_jcs.c was not built: pip install -e . with gcc"
    return _jcs.canonical(value)


def _reference(value: Any) -> bytes | None:
    """canonical_slow's bytes, checked against rfc8785 where the package has the value
    in its domain (it refuses integers beyond 2**53); None where JCS refuses the value."""
    try:
        slow = jcs.canonical_slow(value)
    except (jcs.CanonicalError, UnicodeEncodeError):
        return None
    with contextlib.suppress(rfc8785.IntegerDomainError):  # beyond 2**53: the package's limit
        assert rfc8785.dumps(value) == slow
    return slow


# --------------------------------------------------------------------------- built


def test_the_serialiser_is_built_and_used() -> None:
    """A machine with a C compiler (CI's) builds it; a silent fallback would hide it."""
    assert _jcs is not None, "converters/asf/_jcs.c was not built: pip install -e . with gcc"
    if not os.environ.get("PICONV_PURE_PYTHON"):
        assert jcs._c_canonical is _jcs.canonical


def test_pure_python_turns_it_off() -> None:
    env = {**os.environ, "PICONV_PURE_PYTHON": "1"}
    code = "from piconv.converters.asf import jcs; print(jcs._c_canonical is None)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


# --------------------------------------------------------------------------- corpora


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_written_body_is_canonical(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def checked(value: Any) -> bytes:
        fast = c_canonical(value)
        expected = _reference(value)
        if fast is not None:
            assert fast == expected
        seen.append(1)
        return jcs.canonical(value)

    monkeypatch.setattr(writer, "canonical", checked)
    write_asf(piconv.load(path), io.BytesIO(), {"validate": True}, Report(format="asf"))
    assert seen


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_output_is_the_same_without_it(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = piconv.load(path)
    fast = io.BytesIO()
    write_asf(doc, fast, {"validate": True}, Report(format="asf"))
    monkeypatch.setattr(jcs, "_c_canonical", None)
    pure = io.BytesIO()
    write_asf(doc, pure, {"validate": True}, Report(format="asf"))
    assert fast.getvalue() == pure.getvalue()


@pytest.mark.parametrize("parent", [None, "sha256:" + "ab" * 32])
@pytest.mark.parametrize("body", [{}, {"legacy_id": "x"}, {"b": [1.5, "é\n"], "a": {"z": None, "y": True}}])
def test_entry_line_is_the_envelope_then_the_body(parent: str | None, body: dict[str, Any]) -> None:
    assert _jcs is not None
    data = jcs.canonical(body)
    line = _jcs.entry_line("item", "sha256:" + "cd" * 32, parent, "2026-01-01T00:00:00.5Z", data)
    assert line is not None and line.endswith(b"}\n") and line.count(b"\n") == 1
    value = orjson.loads(line)
    assert list(value)[:4] == ["type", "id", "parent", "ts"]
    assert value == {
        "type": "item",
        "id": "sha256:" + "cd" * 32,
        "parent": parent,
        "ts": "2026-01-01T00:00:00.5Z",
        **body,
    }
    parent_json = b"null" if parent is None else b'"' + parent.encode() + b'"'
    head = (
        b'{"type":"item","id":"sha256:'
        + b"cd" * 32
        + b'","parent":'
        + parent_json
        + b',"ts":"2026-01-01T00:00:00.5Z"'
    )
    assert line == head + (b"," + data[1:] if body else b"}") + b"\n"


@pytest.mark.parametrize(
    "args",
    [
        (1, "id", None, "ts", b"{}"),
        ("item", "id", 5, "ts", b"{}"),
        ("item", "id", None, _Str("ts"), b"{}"),
        ("item", "\ud800", None, "ts", b"{}"),
        ("item", "id", None, "ts", b"[]"),
        ("item", "id", None, "ts", b"{"),
        ("item", "id", None, "ts", "{}"),
    ],
)
def test_entry_line_declines(args: tuple[Any, ...]) -> None:
    assert _jcs is not None
    assert _jcs.entry_line(*args) is None


# --------------------------------------------------------------------------- ids


@pytest.fixture(params=["fastest", "portable"])
def sha256_rounds(request: pytest.FixtureRequest) -> str:
    """Each of the C SHA-256 block functions in turn (the portable one on any CPU)."""
    assert _jcs is not None
    name = _jcs.use_portable_sha256(request.param == "portable")
    yield name
    _jcs.use_portable_sha256(False)


def test_sha256_is_hashlibs(sha256_rounds: str) -> None:
    """Every tail length around the 64-byte blocks and the 56-byte padding boundary, and
    longer inputs, random bytes."""
    assert _jcs is not None
    rng = __import__("random").Random(7)
    for size in [*range(0, 300), 511, 512, 513, 4096, 65_537, 1 << 20]:
        data = rng.randbytes(size)
        assert _jcs.sha256_hex(data) == hashlib.sha256(data).hexdigest(), size
    assert _jcs.sha256_hex(memoryview(b"abc")) == hashlib.sha256(b"abc").hexdigest()


def test_the_cpus_sha_instructions_are_used_where_present() -> None:
    assert _jcs is not None
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    expected = "sha-ni" if " sha_ni" in flags else "portable"
    assert _jcs.sha256_rounds() == expected
    assert (jcs.c_entry is not None) == (expected == "sha-ni")  # hashlib is quicker than the portable rounds


@pytest.mark.parametrize("parent", [None, "sha256:" + "ab" * 32])
@pytest.mark.parametrize("body", [{}, {"legacy_id": "x"}, {"b": [1.5, "é\n"], "a": {"z": None, "y": True}}, {"t": "x" * 5000}])
@pytest.mark.parametrize("type_", ["item", "pi:context_edit"])
def test_entry_is_the_python_id_and_line(parent: str | None, body: dict[str, Any], type_: str, sha256_rounds: str) -> None:
    from piconv.converters.asf.ids import envelope_id, envelope_id_plain

    assert _jcs is not None
    data = jcs.canonical(body)
    ts = "2026-01-01T00:00:00.5Z"
    content = "sha256:" + hashlib.sha256(data).hexdigest()
    expected_id = envelope_id_plain(type_, parent, ts, content)
    assert expected_id == envelope_id(type_, parent, ts, content, None)
    expected = (expected_id, writer.entry_line(type_, expected_id, parent, ts, data, body))
    assert _jcs.entry(type_, parent, ts, data) == expected
    assert _jcs.stitched(type_, parent, ts, content[7:], data) == expected


@pytest.mark.parametrize(
    "args",
    [
        (1, None, "ts", b"{}"),
        ("item", 5, "ts", b"{}"),
        ("item", None, _Str("ts"), b"{}"),
        ("ite\"m", None, "ts", b"{}"),
        ("item", "a\\b", "ts", b"{}"),
        ("item", None, "t\ns", b"{}"),
        ("item", None, "tś", b"{}"),
        ("item", None, "ts", b"[]"),
        ("item", None, "ts", b"{"),
        ("item", None, "ts", "{}"),
    ],
)
def test_entry_declines_what_is_not_the_writers_plain_text(args: tuple[Any, ...]) -> None:
    assert _jcs is not None
    assert _jcs.entry(*args) is None
    type_, parent, ts, body = args
    assert _jcs.stitched(type_, parent, ts, "ab" * 32, body) is None
    assert _jcs.stitched("item", None, "ts", "ab" * 31, b"{}") is None  # not a whole hash


# --------------------------------------------------------------------------- generated

# Where encoders slip: escapes, the UTF-8 length boundaries, the top of the BMP next to
# the supplementary planes (UTF-16 key order), DEL and the C1 controls (literal in JCS).
_EDGES = [
    "\x00",
    "\x01",
    "\x08",
    "\t",
    "\n",
    "\x0b",
    "\x0c",
    "\r",
    "\x1f",
    " ",
    '"',
    "\\",
    "/",
    "\x7f",
    "\x80",
    "\x9f",
    "é",
    "\u07ff",
    "\u0800",
    "\u2028",
    "\ud7ff",
    "\ue000",
    "\ufeff",
    "\uffff",
    "\U00010000",
    "\U0001f600",
    "\U0010ffff",
    "a",
    "z",
]
chars = st.one_of(st.sampled_from(_EDGES), st.characters(exclude_categories=["Cs"]))
texts = st.text(alphabet=chars, max_size=12)
keys = st.one_of(
    texts,
    st.text(alphabet=st.sampled_from(["a", "\ue000", "\uffff", "\U0001f600", "\U00010000", "é"]), max_size=4),
)


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


# Every exponent: doubles from random bit patterns (subnormals included), besides
# hypothesis' own floats and whole numbers around the 2**53 and 1e21 boundaries.
floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=0, max_value=2**64 - 1).map(_double).filter(math.isfinite),
    st.integers(min_value=-(2**60), max_value=2**60).map(float),
    st.sampled_from(
        [1e21, 1e20, 999999999999999900000.0, 1e-6, 1e-7, 0.1, 5e-324, 1.7976931348623157e308, -0.0]
    ),
)
numbers = st.one_of(st.integers(min_value=-(2**53), max_value=2**53), floats)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
values = st.recursive(
    scalars,
    lambda c: st.one_of(
        st.lists(c, max_size=5), st.lists(c, max_size=3).map(tuple), st.dictionaries(keys, c, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=1500)
@given(values)
def test_generated_values(value: Any) -> None:
    fast = c_canonical(value)
    assert fast is not None
    assert fast == _reference(value)
    assert fast == jcs.canonical_python(value)


@settings(max_examples=1500)
@given(floats)
def test_numbers_match_ecmascript(x: float) -> None:
    assert c_canonical(x) == jcs.number_text(x).encode() == rfc8785.dumps(x)


def test_large_members_and_strings() -> None:
    # Past the insertion sort (16 members) and the string chunk (4096 code points).
    value = {f"k{i:03d}\U0001f600" if i % 7 == 0 else f"k{i:03d}\ue000": i for i in range(200)}
    value["text"] = ("ab\x01\u20ac\U0001f600\n" * 3000)[:-1]
    value["ascii"] = 'x"\\\t' * 5000
    assert c_canonical(value) == _reference(value)


def test_no_utf8_copy_is_cached() -> None:
    # PyUnicode_AsUTF8 would attach a UTF-8 copy to each str for the rest of its life.
    s = "".join(["é€😀 ", str(id(object()))])
    before = sys.getsizeof(s)
    c_canonical({s: [s]})
    assert sys.getsizeof(s) == before


# --------------------------------------------------------------------------- declined


class _Int(int):
    pass


class _Float(float):
    pass


class _List(list):  # type: ignore[type-arg]
    pass


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


DECLINED: list[Any] = [
    "\ud800",
    "a\udfffb",
    "\U0001f600\ud83d",  # a wide str with a lone surrogate
    {"\ud83d": 1},
    [1, {"a": ["\udc00"]}],
    2**53 + 1,
    -(2**53) - 1,
    2**60,
    2**64,
    -(2**200),
    10**400,
    float("nan"),
    math.inf,
    -math.inf,
    [1.0, math.nan],
    {1: 2},
    {None: 1},
    {("a",): 1},
    {"a": 1, 2: "b"},
    _Str("x"),
    _Int(3),
    _Float(1.5),
    _List([1]),
    collections.OrderedDict(a=1),
    {"a": _Str("b")},
    b"bytes",
    {1, 2},
    object(),
    _nested(300),
]


@pytest.mark.parametrize("value", DECLINED, ids=lambda v: type(v).__name__)
def test_declined_values_go_to_python(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert c_canonical(value) is None
    try:
        with_c: Any = jcs.canonical(value)
    except Exception as exc:
        with_c = (type(exc), str(exc))
    monkeypatch.setattr(jcs, "_c_canonical", None)
    try:
        without: Any = jcs.canonical(value)
    except Exception as exc:
        without = (type(exc), str(exc))
    assert with_c == without


def test_depth_below_the_limit_is_handled() -> None:
    value = _nested(200)
    assert c_canonical(value) == _reference(value)


# --------------------------------------------------------------------------- timestamps


def _js_timestamp_by_regex(text: str) -> str | None:
    """ids.canonical_ts's reading of pi's toISOString() form, without the C code."""
    from piconv.converters.asf import ids

    match = ids._JS_TS(text)
    if match is None or not ids._is_day(match[1]):
        return None
    fraction = match[2].rstrip("0")
    return f"{text[:19]}.{fraction}Z" if fraction else f"{text[:19]}Z"


def _timestamp_cases() -> list[str]:
    import random

    rng = random.Random(11)
    cases = ["2026-01-01T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "2026-01-01T00:00:00.0000Z", "\uff11026-01-01T00:00:00.000Z"]  # a fullwidth digit
    for year in (1, 4, 100, 400, 1900, 2000, 2023, 2024, 9999):
        for month in range(14):
            for day in (0, 1, 28, 29, 30, 31, 32):
                for fraction in ("000", "100", "120", "123", "001"):
                    cases.append(f"{year:04d}-{month:02d}-{day:02d}T12:34:56.{fraction}Z")
    for _ in range(20_000):  # one to three characters changed
        chars = list("2024-02-29T23:59:59.120Z")
        for _ in range(rng.randint(1, 3)):
            chars[rng.randrange(len(chars))] = rng.choice("0123456789-T:.Z z")
        cases.append("".join(chars))
    return cases


def test_js_timestamps_are_read_as_the_regex_reads_them() -> None:
    assert _jcs is not None
    for text in _timestamp_cases():
        assert _jcs.js_timestamp(text) == _js_timestamp_by_regex(text), text
    assert _jcs.js_timestamp(_Str("2026-01-01T00:00:00.000Z")) is None  # a subclass: the Python path
    assert _jcs.js_timestamp(5) is None


# --------------------------------------------------------------------------- ancestry


def test_link_is_ancestry_add_for_new_ids_under_known_parents() -> None:
    from piconv.converters.asf.checks import Ancestry

    assert _jcs is not None
    rng = __import__("random").Random(5)
    python, nodes = Ancestry(), {}
    ids: list[str] = []
    for i in range(2000):  # a tree: mostly chains, branches back now and then, a few roots
        parent = None if not ids or rng.random() < 0.01 else ids[-1] if rng.random() < 0.9 else rng.choice(ids)
        node = f"sha256:{i:064x}"
        assert _jcs.link(nodes, node, parent) is True
        python.add(node, parent)
        ids.append(node)
    assert nodes == python.nodes
    for a, b in ((rng.choice(ids), rng.choice(ids)) for _ in range(500)):  # the jump pointers work
        checked = Ancestry()
        checked.nodes = nodes
        assert checked.on_path(a, b) == python.on_path(a, b)
    assert _jcs.link(nodes, ids[5], ids[3]) is False  # an id already there
    assert _jcs.link(nodes, "sha256:new", "sha256:nowhere") is False  # a parent not there
    assert "sha256:new" not in nodes and len(nodes) == 2000
