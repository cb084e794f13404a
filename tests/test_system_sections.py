"""A system message's prompt sections that are not text (a number, an object, a list, the
whole member not an object) stay raw in ``extra``: every format converts the session, and
pi's own format gives the line back unchanged."""

from __future__ import annotations

import io

import orjson
import piconv
import pytest
from conftest import session_bytes

FORMATS = ("asf", "openai", "ir", "pi", "markdown", "html")
ODD = ({"x": 1}, {"x": {"y": 2}}, "text", [1, 2], {"x": None, "y": ["a"]}, {"x": True})


def _session(sections: object) -> bytes:
    return session_bytes(
        {
            "type": "message",
            "id": "b",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "system", "content": "sys", "sections": sections, "timestamp": 1},
        },
        {
            "type": "message",
            "id": "c",
            "parentId": "b",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 2},
        },
    )


@pytest.mark.parametrize("sections", ODD, ids=repr)
@pytest.mark.parametrize("fmt", FORMATS)
def test_sections_that_are_not_text_convert_in_every_format(sections: object, fmt: str) -> None:
    out = io.BytesIO()
    piconv.convert(_session(sections), fmt, out)  # validated while written
    assert out.getvalue()


@pytest.mark.parametrize("sections", ODD, ids=repr)
def test_sections_that_are_not_text_are_kept_raw(sections: object) -> None:
    doc = piconv.load(_session(sections))
    message = doc.entries[0].body.message
    assert message.sections is None and message.extra["sections"] == sections
    out = io.BytesIO()
    piconv.convert(doc, "pi", out)
    assert orjson.loads(out.getvalue().splitlines()[1])["message"]["sections"] == sections


def test_text_sections_are_typed() -> None:
    message = piconv.load(_session({"x": None, "y": "text"})).entries[0].body.message
    assert message.sections == {"x": None, "y": "text"} and "sections" not in message.extra
