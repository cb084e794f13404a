"""``checks.header_proven_valid`` may say "valid" only where the schema (jsonschema) does,
and says it for every header the writer makes, so a conversion never imports jsonschema."""

from __future__ import annotations

import io
import subprocess
import sys
from typing import Any

import orjson
import pytest
from conftest import SHARED, corpus_files, corpus_ids
from hypothesis import given, settings
from hypothesis import strategies as st
from piconv.api import convert
from piconv.converters.asf.checks import header_proven_valid
from piconv.converters.asf.validate import _validator

WRONG = (None, True, 0, 1.5, "", "x", "session", "agentsession/0.11", "sha256:" + "a" * 64, [], ["a"], [1], {}, {"name": 1}, {"name": "pi"})
MEMBERS = ("type", "format", "id", "created_at", "payload", "harness", "records", "cwd", "parent_session", "base",
           "spawned_by", "media", "redacted", "pi", "normalised")


def _valid(value: Any) -> bool:
    return _validator().is_valid(value)


def _written_header(path: Any) -> dict:
    out = io.BytesIO()
    convert(path, "asf", out)
    return orjson.loads(out.getvalue().split(b"\n", 1)[0])


@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_every_written_header_is_proven(path: Any) -> None:
    header = _written_header(path)
    assert _valid(header)
    assert header_proven_valid(header)


def test_reference_headers_agree_with_the_schema() -> None:
    for path in sorted((SHARED / "reference" / "asf" / "examples").glob("*.jsonl")):
        header = orjson.loads(path.read_bytes().split(b"\n", 1)[0])
        assert not header_proven_valid(header) or _valid(header), path.name


def _base() -> dict:
    return _written_header(corpus_files()[0])


def test_every_member_set_to_every_wrong_value() -> None:
    proven = 0
    for member in MEMBERS:
        for wrong in WRONG:
            header = _base() | {member: wrong}
            if header_proven_valid(header):
                proven += 1
                assert _valid(header), (member, wrong)
        header = _base()
        header.pop(member, None)
        assert not header_proven_valid(header) or _valid(header), ("without", member)
    assert proven > 20  # the predicate does prove headers with optional members


def test_patterns_are_the_schemas() -> None:
    for member, value in (("format", "agentsession/x"), ("created_at", "2026-01-01 00:00:00Z"),
                          ("created_at", "2026-01-01T00:00:00+0100"), ("payload", "x-openresponses/1"),
                          ("base", "sha256:" + "A" * 64), ("media", "Inline"), ("id", "")):
        header = _base() | {member: value}
        assert not _valid(header), (member, value)
        assert not header_proven_valid(header), (member, value)
    for member, value in (("created_at", "2026-01-01t00:00:00.5z"), ("created_at", "2026-01-01T00:00:00-05:00"),
                          ("format", "agentsession/9.99"), ("media", "sidecar")):
        header = _base() | {member: value}
        assert _valid(header) and header_proven_valid(header), (member, value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4) | st.sampled_from(WRONG[5:9]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["name", "version", "x"]), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(MEMBERS), json_values, max_size=6))
def test_generated_headers_never_proven_when_invalid(changes: dict) -> None:
    header = _base() | changes
    assert not header_proven_valid(header) or _valid(header)


def test_a_conversion_does_not_import_jsonschema() -> None:
    path = corpus_files()[0]
    code = ("import io, sys; from piconv.api import convert; "
            f"convert({str(path)!r}, 'asf', io.BytesIO()); print('jsonschema' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
