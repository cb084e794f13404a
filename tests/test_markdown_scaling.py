"""Markdown in time linear in the input: a tree with many branch points (``--all-branches``)
and one huge message. Timings are compared as ratios between two sizes of the same shape
(a shared machine's speed cancels out); sizes and memory are exact."""

from __future__ import annotations

import gc
import io
import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import piconv
import pytest
from piconv import Report
from piconv.converters.markdown import write
from piconv.converters.markdown.blocks import HUGE_TEXT_CHARS


def comb(forks: int) -> bytes:
    """A session whose every prompt has a second, abandoned prompt beside its reply: a
    branch point per turn, each branch nested in the one before."""
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    ]
    parent = None
    ts = "2026-01-01T00:00:01.000Z"
    for i in range(forks):
        user = {"role": "user", "content": f"prompt {i}", "timestamp": 1}
        lines.append({"type": "message", "id": f"u{i}", "parentId": parent, "timestamp": ts, "message": user})
        reply = {
            "role": "assistant",
            "content": [{"type": "text", "text": f"reply {i}"}],
            "stopReason": "stop",
        }
        lines.append(
            {"type": "message", "id": f"a{i}", "parentId": f"u{i}", "timestamp": ts, "message": reply}
        )
        side = {"role": "user", "content": f"side {i}", "timestamp": 1}
        lines.append(
            {"type": "message", "id": f"x{i}", "parentId": f"u{i}", "timestamp": ts, "message": side}
        )
        parent = f"a{i}"
    return "\n".join(json.dumps(x) for x in lines).encode() + b"\n"


def huge(chars: int) -> bytes:
    unit = "line with `code`, <b>tags</b>, [links](http://x) and\n```\na fence\n```\n"
    text = "A long paste\n" + unit * (chars // len(unit))
    head = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    msg = {"role": "user", "content": text, "timestamp": 1}
    entry = {
        "type": "message",
        "id": "u",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": msg,
    }
    return (json.dumps(head) + "\n" + json.dumps(entry) + "\n").encode()


def convert(doc: piconv.ir.Document, **options: Any) -> tuple[bytes, float]:
    """The output and the least time of three conversions (validated, as the CLI does)."""
    best = float("inf")
    data = b""
    for _ in range(3):
        out = io.BytesIO()
        opts = {"images": "omit", "validate": True, "output_path": None, **options}
        start = time.perf_counter()
        write(doc, out, opts, Report("markdown"))
        best = min(best, time.perf_counter() - start)
        data = out.getvalue()
    return data, best


def test_all_branches_is_linear_in_branch_points() -> None:
    small, large = piconv.load(comb(250)), piconv.load(comb(1000))
    out_small, t_small = convert(small, all_branches=True)
    out_large, t_large = convert(large, all_branches=True)
    # The size is exact: branch numbers and headings no longer grow with the depth.
    assert len(out_large) / len(out_small) < 4.5
    assert out_large.count(b"\n## Branch ") == 2 * 1000
    # Four times the branch points: about four times the time (quadratic would be 16).
    assert t_large / t_small < 9, (t_small, t_large)


def test_one_huge_message_takes_linear_time_and_bounded_memory(tmp_path: Path) -> None:
    size = 2 * HUGE_TEXT_CHARS
    small, large = piconv.load(huge(size)), piconv.load(huge(4 * size))
    _out_small, t_small = convert(small)
    out_large, t_large = convert(large)
    assert b"A very long text, shown as it is" in out_large
    assert t_large / t_small < 9, (t_small, t_large)
    # The conversion's own memory, beyond the loaded document: within 3x the message.
    gc.collect()
    with open(tmp_path / "out.md", "wb") as target:
        tracemalloc.start()
        try:
            write(
                large, target, {"images": "omit", "validate": True, "output_path": None}, Report("markdown")
            )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    chars = len(large.entries[0].message.content)  # type: ignore[union-attr]
    assert peak < 3 * chars, (peak, chars)


@pytest.mark.parametrize("size", [HUGE_TEXT_CHARS - 100, HUGE_TEXT_CHARS + 100])
def test_huge_text_is_code_only_beyond_the_limit(size: int) -> None:
    doc = piconv.load(huge(size))
    report = Report("markdown")
    out = io.BytesIO()
    write(doc, out, {"images": "omit", "validate": True, "output_path": None}, report)
    as_code = "text-as-code" in report.losses
    assert as_code == (len(doc.entries[0].message.content) > HUGE_TEXT_CHARS)  # type: ignore[union-attr]
    assert (b", <b>tags" in out.getvalue()) is as_code  # as Markdown, the tag is escaped
    # (written &lt; rather than \<: the line holds a URL, see escape._AUTOLINK)
    assert (b", &lt;b>tags" in out.getvalue()) is not as_code
