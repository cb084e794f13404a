"""One huge message: ``--to markdown`` and ``--to html`` peak within 3x the message's
line (what the process holds beyond a small session's conversion), with output the same
as the whole-copy paths give; and the Markdown checker, which reads a huge fenced text as
its newlines, gives the verdict of the whole check on outputs broken around it."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import orjson
import piconv
import pytest
from piconv import Report, reader
from piconv.converters.markdown import checker, write
from piconv.converters.markdown.render import Renderer

UNITS = {
    "ascii": "line with `code`, <b>tags</b>, [links](http://x) and ``` a fence & more\n",
    "escaped": 'she said "hi"\tand\\left\n\n"quoted" <x> & \x01 \x7f\n',
    "nonascii": "naïve café — 漢字 テキスト <é> & ü → ✓\n",
}
CHARS = 24_000_000


def session(kind: str, chars: int) -> tuple[bytes, bytes]:
    """A session whose prompt is ``chars`` characters of ``kind``; and its message's line."""
    unit = UNITS[kind]
    text = "A long paste\n" + unit * (chars // len(unit))
    head = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    prompt = {
        "type": "message",
        "id": "u",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }
    reply = {
        "type": "message",
        "id": "a",
        "parentId": "u",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop"},
    }
    line = orjson.dumps(prompt)
    return b"\n".join([orjson.dumps(head), line, orjson.dumps(reply)]) + b"\n", line


def peak_rss(source: Path, fmt: str, out: Path) -> int:
    """The converting process's peak resident memory, in bytes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "piconv", str(source), "--to", fmt, "-o", str(out), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read() if proc.stderr else b""
    proc.stderr.close() if proc.stderr else None
    assert os.waitstatus_to_exitcode(status) == 0, stderr.decode(errors="replace")
    return usage.ru_maxrss * 1024


@pytest.mark.parametrize("fmt", ["markdown", "html"])
@pytest.mark.parametrize("kind", list(UNITS))
def test_one_huge_message_peaks_within_3x_its_line(tmp_path: Path, kind: str, fmt: str) -> None:
    small_data, _ = session(kind, 2000)
    small = tmp_path / "small.jsonl"
    small.write_bytes(small_data)
    data, line = session(kind, CHARS)
    huge = tmp_path / "huge.jsonl"
    huge.write_bytes(data)
    del data
    baseline = peak_rss(small, fmt, tmp_path / "small.out")
    peak = peak_rss(huge, fmt, tmp_path / "huge.out")
    assert peak - baseline < 3 * len(line), ((peak - baseline) / len(line), kind, fmt)
    output = (tmp_path / "huge.out").read_bytes()
    if fmt == "markdown":
        text = orjson.loads(line)["message"]["content"]
        assert text.encode() in output  # shown as it is, whole
    assert output.rstrip().endswith(b"</html>" if fmt == "html" else b"ok")


@pytest.mark.parametrize("fmt", ["markdown", "html"])
@pytest.mark.parametrize("kind", list(UNITS))
def test_the_output_is_the_whole_copy_paths_output(tmp_path: Path, kind: str, fmt: str) -> None:
    data, _ = session(kind, reader.LONG_LINE_BYTES + 100_000)
    source = tmp_path / "s.jsonl"
    source.write_bytes(data)
    peak_rss(source, fmt, tmp_path / "out")
    with pytest.MonkeyPatch.context() as patch:
        # Every line straight to orjson, the huge block joined into one string.
        patch.setattr(reader, "LONG_LINE_BYTES", 1 << 62)
        huge = Renderer._huge
        patch.setattr(Renderer, "_huge", lambda self, text: "".join(huge(self, text)))
        expected = io.BytesIO()
        piconv.convert(source, fmt, expected)
    assert (tmp_path / "out").read_bytes() == expected.getvalue()


# -- the checker -------------------------------------------------------------------------


def written(chars: int = checker.STAND_IN_CHARS + 5000) -> tuple[str, str]:
    """The Markdown of a session with one huge prompt, and the prompt's text."""
    data, line = session("ascii", chars)
    out = io.BytesIO()
    write(piconv.load(data), out, {"images": "omit", "output_path": None}, Report("markdown"))
    return out.getvalue().decode(), orjson.loads(line)["message"]["content"]


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


@pytest.fixture(scope="module")
def huge_markdown() -> tuple[str, str, str]:
    """(what comes before the huge text, the text, what follows it)."""
    out, text = written()
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
    fence = before[opener:].removesuffix("text\n")  # as long as the writer made it
    assert set(fence) == {"`"}
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
