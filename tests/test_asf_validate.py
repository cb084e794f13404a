"""The ASF schema and checks accept every reference example and reject broken ones."""

from __future__ import annotations

import orjson
import pytest
from conftest import SHARED
from piconv.converters.asf import ids
from piconv.converters.asf.filecheck import validate_asf

pytestmark = pytest.mark.shared  # every test here reads the reference material

EXAMPLES = SHARED / "reference" / "asf" / "examples"
GOOD = ["sessions_basic", "sessions_branch", "sessions_compaction", "sessions_extensions"]


def lines(name: str) -> list[dict]:
    return [orjson.loads(raw) for raw in (EXAMPLES / f"{name}.jsonl").read_bytes().splitlines()]


def dump(values: list[dict]) -> bytes:
    return b"".join(orjson.dumps(v) + b"\n" for v in values)


def codes(data: bytes) -> set[str]:
    return {i.code for i in validate_asf(data)}


@pytest.mark.parametrize("name", GOOD)
def test_reference_examples_valid(name: str) -> None:
    assert validate_asf(EXAMPLES / f"{name}.jsonl") == []


@pytest.mark.parametrize("name", GOOD)
def test_every_reference_id_recomputes(name: str) -> None:
    for entry in lines(name)[1:]:
        assert ids.entry_id(entry) == entry["id"]


def test_truncated_final_line_is_tolerated_and_reported() -> None:
    issues = validate_asf(EXAMPLES / "sessions_truncated.jsonl")
    assert [(i.line, i.code) for i in issues] == [(10, "truncated")]


def test_stream_input() -> None:
    with open(EXAMPLES / "sessions_basic.jsonl", "rb") as fh:
        assert validate_asf(fh) == []


def test_bad_hash() -> None:
    values = lines("sessions_basic")
    values[3]["item"]["summary"][0]["text"] = "changed after writing"
    assert "id-mismatch" in codes(dump(values))


def test_bad_parent() -> None:
    values = lines("sessions_basic")
    values[4]["parent"] = "sha256:" + "0" * 64
    found = codes(dump(values))
    assert "parent-unknown" in found and "id-mismatch" in found


def test_parent_later_in_file() -> None:
    values = lines("sessions_basic")
    values[2], values[3] = values[3], values[2]
    assert "parent-unknown" in codes(dump(values))


def test_non_canonical_ts() -> None:
    values = lines("sessions_basic")
    values[2]["ts"] = "2026-09-17T12:00:01.000Z"
    found = codes(dump(values))
    assert "ts-noncanonical" in found


def test_non_canonical_ts_with_recomputed_id_still_rejected() -> None:
    values = lines("sessions_branch")[:3]
    values[2]["ts"] = "2026-09-17T14:00:01+00:00"
    values[2]["id"] = ids.entry_id(values[2])
    assert "ts-noncanonical" in codes(dump(values))


def test_reserved_member_in_body() -> None:
    values = lines("sessions_branch")[:3]
    values[2]["content"] = "x"
    values[2]["id"] = ids.entry_id(values[2])  # even a matching id verifies nothing
    assert "reserved-member" in codes(dump(values))


def test_duplicate_call_id() -> None:
    values = lines("sessions_basic")
    extra = dict(values[4])
    extra["legacy_id"] = "again"
    extra["parent"] = values[-1]["id"]
    extra["id"] = ids.entry_id(extra)
    assert "call-id-duplicate" in codes(dump([*values, extra]))


def test_first_kept_must_be_on_path() -> None:
    values = lines("sessions_compaction")
    comp = values[10]
    assert comp["type"] == "compaction"
    comp["first_kept"] = values[-1]["id"]
    comp["id"] = ids.entry_id(comp)
    assert "first-kept-not-on-path" in codes(dump(values[:11]))


def test_label_target_must_exist() -> None:
    values = lines("sessions_branch")
    values[12]["target"] = "sha256:" + "1" * 64
    values[12]["id"] = ids.entry_id(values[12])
    assert "ref-unknown" in codes(dump(values[:13]))


def test_header_and_format() -> None:
    values = lines("sessions_basic")
    assert "header-missing" in codes(dump(values[1:]))
    values[0]["format"] = "agentsession/0.4"
    assert "format-unsupported" in codes(dump(values))
    values[0]["format"] = "agentsession/0.12"
    assert "format-unsupported" in codes(dump(values))


def test_lone_surrogate_and_big_number_are_not_ijson() -> None:
    values = lines("sessions_branch")[:3]
    data = dump(values).replace(b'"Q"', b'"\\ud83d"')
    assert "not-ijson" in codes(data)
    data = dump(values).replace(b'"Q"', b"9007199254740993")
    assert "not-ijson" in codes(data)
    data = dump(values).replace(b'"Q"', b"9.007199254740993e15")
    assert "not-ijson" in codes(data)


def test_schema_rejects_empty_call_id() -> None:
    values = lines("sessions_basic")
    values[4]["item"]["call_id"] = ""
    values[4]["id"] = ids.entry_id(values[4])
    assert "schema" in codes(dump(values[:5]))
