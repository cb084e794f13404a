"""The HTML page's cost grows linearly: in the number of entries on branchy sessions, and in
the size of one huge message (time linear, memory a small multiple of the message).
Timings are ratios between two sizes of the same shape, so they hold on a busy machine."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time

from piconv.converters.html import check, write
from piconv.converters.html.blocks import LARGE, PREVIEW_LINES
from piconv.ir import (
    AssistantMessage,
    Document,
    Entry,
    MessageBody,
    Origin,
    SessionInfo,
    Text,
    ToolCall,
    ToolResult,
    UserMessage,
)
from piconv.report import Report


def _entry(eid: str, parent: str | None, msg: object) -> Entry:
    return Entry(
        id=eid,
        parent_id=parent,
        timestamp="2026-01-01T00:00:00Z",
        body=MessageBody(msg),
        origin=Origin(line=1),
    )  # type: ignore[arg-type]


def _comb(n: int) -> Document:
    """One prompt, then a chain of ``n`` replies, each with a dead-end sibling: ``n``
    branch points and ``n + 1`` leaves, none of them below a later user message."""
    entries = [_entry("u", None, UserMessage(content="start"))]
    parent = "u"
    for i in range(n):
        entries.append(_entry(f"a{i}", parent, AssistantMessage(content=(Text(text=f"answer {i}"),))))
        entries.append(_entry(f"d{i}", parent, AssistantMessage(content=(Text(text=f"other {i}"),))))
        parent = f"a{i}"
    return Document(session=SessionInfo(id="s"), entries=tuple(entries), leaf_id=parent)


def _once(doc: Document) -> float:
    start = time.process_time()  # CPU time: other processes on a busy machine do not count
    write(doc, io.BytesIO(), {}, Report("html"))
    return time.process_time() - start


def test_branchy_sessions_render_in_linear_time() -> None:
    small, large = _comb(1000), _comb(4000)
    _once(small)  # warm up (imports, caches)
    # Alternated, best of three each: a busy machine slows both sides alike.
    t_small = t_large = float("inf")
    for _ in range(3):
        t_small = min(t_small, _once(small))
        t_large = min(t_large, _once(large))
    ratio = t_large / t_small
    # Linear is 4x; quadratic (naming every branch end by walking to the root) was 13x.
    assert ratio < 6.5, f"4x the branch points took {ratio:.1f}x the time"


def test_huge_texts_come_out_whole_in_pieces() -> None:
    body = "a < b & c\n" * (LARGE // 10 + 5000)
    doc = Document(
        session=SessionInfo(id="s"),
        entries=(
            _entry(
                "a",
                None,
                AssistantMessage(content=(ToolCall(call_id="c", name="bash", arguments={"command": "x"}),)),
            ),
            _entry("r", "a", ToolResult(call_id="c", content=body)),
            _entry("u", "r", UserMessage(content="```\n" + body + "```\n\n" + "*x*\n\n" * (LARGE // 6))),
        ),
        leaf_id="u",
    )
    out = io.BytesIO()
    write(doc, out, {"validate": True}, Report("html"))
    page = out.getvalue().decode()
    assert check(out.getvalue()) == []
    assert "\ufdd1" not in page  # every placeholder was replaced
    # The plain output (and its preview) and the fenced block are complete and escaped.
    assert page.count("a &lt; b &amp; c\n") == 2 * body.count("\n") + PREVIEW_LINES - 1
    assert page.count("<pre><code>") == 1
    assert page.count("<em>x</em>") == LARGE // 6


_PROBE = r"""
import io, json, sys, time
from piconv.converters.html import write
from piconv.ir import Document, Entry, MessageBody, Origin, SessionInfo, UserMessage
from piconv.report import Report

def status(key):
    with open("/proc/self/status") as f:
        return int(f.read().split(key + ":")[1].split()[0]) * 1024

class Null(io.RawIOBase):
    def writable(self): return True
    def write(self, b): return len(b)

size = int(sys.argv[1])
warm = Entry(id="w", parent_id=None, timestamp=None, body=MessageBody(UserMessage(content="*hi*")), origin=Origin(line=1))
write(Document(session=SessionInfo(), entries=(warm,), leaf_id="w"), Null(), {}, Report("html"))  # imports
before = status("VmRSS")
line = "Some words of *text*, with `code` and a [link](https://example.org).\n"
text = (line * (size // len(line) + 1))[:size]
doc = Document(session=SessionInfo(id="s"), entries=(Entry(id="u", parent_id=None, timestamp=None,
    body=MessageBody(UserMessage(content=text)), origin=Origin(line=1)),), leaf_id="u")
start = time.process_time()
write(doc, Null(), {"validate": True}, Report("html"))
seconds = time.process_time() - start
# VmHWM, not ru_maxrss: the latter keeps the peak of the process that forked this one.
peak = status("VmHWM")
print(json.dumps({"seconds": seconds, "growth": peak - before}))
"""


def _probe(size: int) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(size)], capture_output=True, text=True, check=True, timeout=300
    )
    return json.loads(proc.stdout)


def test_one_huge_message_linear_time_and_bounded_memory() -> None:
    small, large = _probe(3_000_000), _probe(12_000_000)
    ratio = large["seconds"] / small["seconds"]  # CPU seconds of the rendering alone
    assert ratio < 6.5, f"4x the message took {ratio:.1f}x the time"
    # The message itself plus what rendering it costs stays within 3x of the message
    # (it was about 45x: cmark's tree of the whole text, then several copies of the page).
    assert large["growth"] < 3 * 12_000_000, f"peak grew by {large['growth'] / 1e6:.0f} MB"
