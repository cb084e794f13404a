"""``piconv validate --format asf`` on envelopes whose members have the wrong type: each is
reported by line, never a crash."""

from __future__ import annotations

import io

import orjson
import piconv
import pytest
from conftest import REPO
from piconv.converters.asf import validate_asf

EXAMPLE = REPO / "examples" / "basic.jsonl"
MEMBERS = ("id", "parent", "ts", "type", "parents", "from", "target", "first_kept", "item")
VALUES = ([], {}, 1, 1.5, True, None, [[]], {"entry": []})


def _asf() -> list[bytes]:
    out = io.BytesIO()
    piconv.convert(str(EXAMPLE), "asf", out)
    return out.getvalue().splitlines()


LINES = _asf()


@pytest.mark.parametrize("member", MEMBERS)
def test_a_member_of_any_type_is_reported_not_a_crash(member: str) -> None:
    for number in range(1, min(len(LINES), 12)):
        for bad in VALUES:
            lines = list(LINES)
            value = orjson.loads(lines[number])
            value[member] = bad
            if member == "item" and isinstance(value.get("item"), dict):
                value["item"] = {**orjson.loads(LINES[number]).get("item", {}), "call_id": bad}
            lines[number] = orjson.dumps(value)
            issues = validate_asf(b"\n".join(lines) + b"\n")  # returns: no crash
            changed = orjson.loads(lines[number]) != orjson.loads(LINES[number])
            if changed and member in ("id", "parent", "ts", "type"):  # what the id is made of
                assert any(i.line == number + 1 for i in issues), (member, bad, number)
