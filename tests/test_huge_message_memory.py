"""One huge message: ``--to markdown`` and ``--to html`` peak within 3x the message's
line (what the process holds beyond a small session's conversion), with output the same
as the whole-copy paths give; and the Markdown checker, which reads a huge fenced text as
its newlines, gives the verdict of the whole check on outputs broken around it."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import piconv
import pytest
from piconv import Report, jsonl
from piconv.converters.markdown import blocks, checker, render, write, writer
from piconv.converters.markdown import escape as esc
from piconv.converters.markdown.images import Images

UNITS = {
    "ascii": "line with `code`, <b>tags</b>, [links](http://x) and ``` a fence & more\n",
    "escaped": 'she said "hi"\tand\\left\n\n"quoted" <x> & \x01 \x7f\n',
    "nonascii": "naïve café — 漢字 テキスト <é> & ü → ✓\n",
}
CHARS = 24_000_000


def _entry(eid: str, parent: str | None, message: dict) -> dict:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": message,
    }


def session(kind: str, chars: int, where: str = "prompt") -> tuple[bytes, bytes]:
    """A session with ``chars`` characters of ``kind`` in its prompt, a tool's result or
    the reply; and the line of that message."""
    unit = UNITS[kind]
    text = "A long paste\n" + unit * (chars // len(unit))
    head = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    call = {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "cat log"}}
    lines = [
        _entry("u", None, {"role": "user", "content": text if where == "prompt" else "go", "timestamp": 1}),
        _entry("a", "u", {"role": "assistant", "content": [call], "stopReason": "toolUse"}),
        _entry(
            "r",
            "a",
            {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "bash",
                "content": [{"type": "text", "text": text if where == "result" else "done"}],
                "isError": False,
            },
        ),
        _entry(
            "b",
            "r",
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": text if where == "thinking" else "hmm"},
                    {"type": "text", "text": text if where == "reply" else "ok"},
                ],
                "stopReason": "stop",
            },
        ),
    ]
    data = [orjson.dumps(line) for line in [head, *lines]]
    line = data[{"prompt": 1, "result": 3, "reply": 4, "thinking": 4}[where]]
    return b"\n".join(data) + b"\n", line


def text_of(line: bytes) -> str:
    content = orjson.loads(line)["message"]["content"]
    if isinstance(content, str):
        return content
    return max((part.get("text") or part.get("thinking") for part in content), key=len)


# The child reports its own peak (VmHWM, which belongs to the process image and starts
# afresh at exec): the rusage of a child counts the memory of the forking process too,
# the test runner's, which can exceed what the conversion holds.
CHILD = """
import atexit, sys
def peak():
    with open("/proc/self/status") as f:
        sys.stderr.write("peak-kib " + f.read().split("VmHWM:")[1].split()[0] + "\\n")
atexit.register(peak)
from piconv.cli import run
sys.argv[0] = "piconv"
run()
"""


def peak_rss(source: Path, fmt: str, out: Path) -> int:
    """The converting process's peak resident memory, in bytes."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(source), "--to", fmt, "-o", str(out), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0, stderr
    return int(stderr.rsplit("peak-kib ", 1)[1].split()[0]) * 1024


SHAPES = [(kind, "prompt") for kind in UNITS] + [
    ("ascii", where) for where in ("result", "reply", "thinking")
]


@pytest.mark.parametrize("fmt", ["markdown", "html"])
@pytest.mark.parametrize(("kind", "where"), SHAPES)
def test_one_huge_message_peaks_within_3x_its_line(tmp_path: Path, kind: str, where: str, fmt: str) -> None:
    small_data, _ = session(kind, 2000, where)
    small = tmp_path / "small.jsonl"
    small.write_bytes(small_data)
    data, line = session(kind, CHARS, where)
    huge = tmp_path / "huge.jsonl"
    huge.write_bytes(data)
    del data
    baseline = peak_rss(small, fmt, tmp_path / "small.out")
    peak = peak_rss(huge, fmt, tmp_path / "huge.out")
    assert peak - baseline < 3 * len(line), ((peak - baseline) / len(line), kind, where, fmt)
    output = (tmp_path / "huge.out").read_bytes()
    if fmt == "markdown":
        assert text_of(line).encode() in output  # shown as it is, whole
    if fmt == "html":
        assert output.rstrip().endswith(b"</html>")
    else:  # the last message: the huge reply's fenced block, or the short reply
        assert output.endswith(b"````\n" if where == "reply" else b"\nok\n")
        assert output.count(b"</details>") == 2  # the result and the thinking, closed


@pytest.mark.parametrize("fmt", ["markdown", "html"])
@pytest.mark.parametrize(("kind", "where"), SHAPES)
def test_the_output_is_the_whole_copy_paths_output(tmp_path: Path, kind: str, where: str, fmt: str) -> None:
    data, _ = session(kind, jsonl.LONG_LINE_BYTES + 100_000, where)
    source = tmp_path / "s.jsonl"
    source.write_bytes(data)
    peak_rss(source, fmt, tmp_path / "out")
    with pytest.MonkeyPatch.context() as patch:
        # Every line straight to orjson, every block joined into one string before it is
        # written and checked.
        patch.setattr(jsonl, "LONG_LINE_BYTES", 1 << 62)
        emit = writer.emit

        def joined(out: Any, report: Report, head: str, body: Any, sink: Any = None) -> None:
            body = ([b if type(b) is str else "".join(b) for b in batch] for batch in body)
            emit(out, report, head, body, sink)

        patch.setattr(writer, "emit", joined)
        expected = io.BytesIO()
        piconv.convert(source, fmt, expected)
    assert (tmp_path / "out").read_bytes() == expected.getvalue()


# -- the checker -------------------------------------------------------------------------


def written(where: str, chars: int = checker.STAND_IN_CHARS + 5000) -> tuple[str, str]:
    """The Markdown of a session with one huge message, and the message's text."""
    data, line = session("ascii", chars, where)
    out = io.BytesIO()
    write(piconv.load(data), out, {"images": "omit", "output_path": None}, Report("markdown"))
    return out.getvalue().decode(), text_of(line)


def verdict(pieces: list[str]) -> tuple[list[str], checker.Stream]:
    """The streaming checker's verdict on ``pieces`` fed one at a time (the whole check's
    where the stream cannot give one, as the writer does)."""
    stream = checker.Stream(section=checker.SECTION_CHARS)
    for piece in pieces:
        stream.feed(piece)
    problems = stream.close()
    if stream.incomplete:
        problems = checker.check("".join(pieces).encode())
    return problems, stream


@pytest.fixture(scope="module", params=["prompt", "result"])
def huge_markdown(request: pytest.FixtureRequest) -> tuple[str, str, str]:
    """(what comes before the huge text, the text, what follows it)."""
    out, text = written(request.param)
    at = out.index(text)
    return out[:at], text, out[at + len(text) :]


def test_the_checker_reads_a_huge_fenced_text_as_its_newlines(huge_markdown) -> None:
    before, text, after = huge_markdown
    problems, stream = verdict([before, text, after])
    assert problems == [] and stream.stood_in == 1 and not stream.incomplete
    assert len(stream.buf) < 1000  # neither the text nor what stands in for it is left
    assert checker.check_whole((before + text + after).encode()) == []


def _broken(before: str, text: str, after: str) -> dict[str, list[str]]:
    opener = before.rstrip("\n").rindex("\n") + 1  # the fence's first line
    fence = before[opener:].rstrip("\n").rstrip("abcdefghijklmnopqrstuvwxyz")  # as the writer made it
    assert fence and set(fence) == {"`"}
    cut = text.index("\n", 1000) + 1  # a line start inside the text
    turn = before.rindex("\n## ") + 1
    return {
        "fence never closed": [before, text, after.replace("```", "", 1)],
        "closer indented too far": [before, text, after.replace("```", "    ```", 1)],
        "an HTML block left open above": [before[:turn] + "<div>\n" + before[turn:], text, after],
        "an HTML block swallowing the opener": [before[:opener] + "<div>\n" + before[opener:], text, after],
        "opener indented as code": [before[:opener] + "    " + before[opener:], text, after],
        "opener in a list item": [before[:opener] + "- " + before[opener:], text, after],
        "opener in a block quote": [before[:opener] + "> " + before[opener:], text, after],
        "a line that closes it": [before, text[:cut] + f"{fence}\n# Heading\n<b>\n" + text[cut:], after],
        "a line that closes it, indented": [before, text[:cut] + f"  {fence} \n<b>\n" + text[cut:], after],
        "a CR in it": [before, text[:cut] + "\r" + text[cut:], after],
        "unfinished last line": [before, text + "x", after],
        "heading after it": [before, text, after + "\n# Top\n"],
        "raw HTML after it": [before, text, after + "\n<script>alert(1)</script>\n"],
    }


def test_the_checker_gives_the_whole_checks_verdict_around_a_huge_text(huge_markdown) -> None:
    stood_in = 0
    for name, pieces in _broken(*huge_markdown).items():
        whole = checker.check_whole("".join(pieces).encode())
        problems, stream = verdict(pieces)
        assert problems == whole, (name, problems[:3], whole[:3])
        stood_in += stream.stood_in
    assert stood_in >= 4  # the stand-in is tried on most, refused where it cannot hold


# -- the pieces ------------------------------------------------------------------------


@pytest.mark.parametrize("tail", ["\n", "", " \n\t ", "x\n\n", "\r\n\x00"])
def test_a_block_in_pieces_is_the_characters_of_the_block_joined(tail: str) -> None:
    line = "a `` ``` ```` line\n"
    text = line * (blocks.HUGE_TEXT_CHARS // len(line) + 1) + tail
    for language in ("text", "bash"):
        assert "".join(blocks.fenced_pieces(text, language)) == esc.fenced(text, language)
    renderer = render.Renderer(Report("markdown"), Images("omit", Report("markdown"), None, "s"), 2, {})
    huge = renderer._huge(text)
    assert renderer._block(text) == huge and isinstance(huge, blocks.Pieces)
    assert "".join(renderer._text(text)) == "".join(huge).rstrip("\n")
    for body in (huge, renderer._text(text), blocks.Pieces((text, tail)), blocks.Pieces(("x", " \n"))):
        assert "".join(blocks.collapsed("S", body)) == blocks.collapsed("S", "".join(body))
    parts = ["a\n", huge, "b\n"]
    assert "".join(blocks.join_blocks(parts, "\n")) == "\n".join(
        b if type(b) is str else "".join(b) for b in parts
    )
