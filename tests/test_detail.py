"""``--detail``: what each level keeps, in the IR and in the bytes of every output; the
tree mended where entries go; the report's codes; the command line, one session and a
directory. The corpus checks read the reference material (marked ``shared``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import piconv
import pytest
from conftest import SHARED, corpus_files, session_bytes
from piconv import cli
from piconv.converters.common.htmlescape import escape
from piconv.ir import (
    AssistantMessage,
    Compaction,
    Label,
    Reasoning,
    ShellCommand,
    Text,
    ToolCall,
    ToolResult,
    UserMessage,
)
from piconv.report import Report

T = "2026-01-01T00:00:{:02d}.000Z"
USAGE = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}


def _msg(i: int, eid: str, parent: str | None, message: dict) -> dict:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": T.format(i),
        "message": {**message, "timestamp": 1767225600000 + i},
    }


def _assistant(content: list[dict], stop: str = "toolUse") -> dict:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-x",
        "usage": USAGE,
        "stopReason": stop,
    }


def _result(call: str, text: str) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call,
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "details": {"stdout": text},
        "isError": False,
    }


SESSION = session_bytes(
    _msg(1, "u1", None, {"role": "user", "content": [{"type": "text", "text": "PROMPT-ONE please look"}]}),
    _msg(
        2,
        "a1",
        "u1",
        _assistant(
            [
                {"type": "thinking", "thinking": "THINKING-ONE", "thinkingSignature": "sig"},
                {"type": "text", "text": "REPLY-ONE, I will look."},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat ARG-ONE.txt"}},
            ]
        ),
    ),
    _msg(3, "r1", "a1", _result("c1", "OUTPUT-ONE of the tool")),
    _msg(
        4,
        "a2",
        "r1",
        _assistant([{"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "ARG-TWO"}}]),
    ),
    _msg(5, "r2", "a2", _result("c2", "OUTPUT-TWO of the tool")),
    {
        "type": "label",
        "id": "l1",
        "parentId": "r2",
        "timestamp": T.format(6),
        "targetId": "r2",
        "label": "on-r2",
    },
    {
        "type": "compaction",
        "id": "k1",
        "parentId": "l1",
        "timestamp": T.format(7),
        "summary": "SUMMARY-ONE",
        "firstKeptEntryId": "a2",
        "tokensBefore": 1000,
        "details": {"readFiles": ["FILE-ONE.txt"], "modifiedFiles": []},
    },
    _msg(8, "a3", "k1", _assistant([{"type": "text", "text": "REPLY-THREE done"}], stop="stop")),
    _msg(
        9,
        "s1",
        "a3",
        {
            "role": "bashExecution",
            "command": "SHELL-CMD",
            "output": "SHELL-OUTPUT",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        },
    ),
    _msg(10, "u2", "s1", {"role": "user", "content": "PROMPT-TWO thanks"}),
    _msg(11, "r9", "u2", _result("c9", "OUTPUT-ORPHAN")),
)
TOOL_TEXT = ("OUTPUT-ONE", "OUTPUT-TWO", "OUTPUT-ORPHAN", "SHELL-OUTPUT")
CALL_TEXT = ("ARG-ONE", "ARG-TWO", "SHELL-CMD", "FILE-ONE")
SAID = ("PROMPT-ONE", "REPLY-ONE", "SUMMARY-ONE", "REPLY-THREE", "PROMPT-TWO")
FORMATS = ("html", "markdown", "asf", "openai", "ir", "pi", "sqlite")
WHOLE = ("html", "markdown", "asf", "ir", "pi", "sqlite")
"""The formats that write the whole path or tree (``openai`` writes the model's context
at the leaf: after the compaction, without what the summary replaced)."""


def _at(level: str) -> tuple[piconv.ir.Document, Report]:
    report = Report(format="")
    doc = piconv.apply_filters(piconv.load(SESSION), [("detail", {"level": level})], report)
    return doc, report


def _bytes(level: str, fmt: str, tmp_path: Path) -> bytes:
    out = tmp_path / f"out-{level}.{fmt}"
    piconv.convert(SESSION, fmt, str(out), filters=[("detail", {"level": level})])
    return out.read_bytes()


def _tree_is_whole(doc: piconv.ir.Document) -> None:
    ids = {e.id for e in doc.entries}
    assert all(e.parent_id is None or e.parent_id in ids for e in doc.entries)
    assert doc.leaf_id in ids
    for e in doc.entries:
        if isinstance(e.body, Label):
            assert e.body.target_id in ids
        if isinstance(e.body, Compaction):
            assert e.body.first_kept_id in ids


def test_full_changes_nothing() -> None:
    source = piconv.load(SESSION)
    report = Report(format="")
    assert piconv.apply_filters(source, [("detail", {"level": "full"})], report) is source
    assert report.losses == {}


def test_calls_keeps_the_calls_and_leaves_their_output_out(tmp_path: Path) -> None:
    doc, report = _at("calls")
    results = [e.message for e in doc.entries if isinstance(e.message, ToolResult)]
    assert len(results) == 3 and all(r.content == () and r.details is None for r in results)
    calls = [
        p for e in doc.entries if isinstance(e.message, AssistantMessage) for p in e.message.content or ()
    ]
    assert sum(isinstance(p, ToolCall) for p in calls) == 2
    shell = next(e.message for e in doc.entries if isinstance(e.message, ShellCommand))
    assert shell.command == "SHELL-CMD" and shell.output == ""
    assert len(doc.entries) == len(piconv.load(SESSION).entries)  # nothing dropped, the tree as it was
    assert {c: i.count for c, i in report.losses.items()} == {
        "detail:tool-output": 3,
        "detail:shell-output": 1,
    }
    assert report.losses["detail:tool-output"].lines == [4, 6, 12]
    assert doc.notes == {
        "detail:calls": "Detail level calls: left out 3 tool outputs, 1 shell command output."
    }
    for fmt in FORMATS:
        data = _bytes("calls", fmt, tmp_path)
        assert not [t for t in TOOL_TEXT if t.encode() in data], fmt
        assert fmt not in WHOLE or all(t.encode() in data for t in ("ARG-ONE", "ARG-TWO", "PROMPT-ONE")), fmt
    page = _bytes("calls", "html", tmp_path).decode()
    assert page.count('<p class="note left-out">Output left out.</p>') == 4  # 3 results, 1 shell command
    assert "Detail level calls: left out 3 tool outputs, 1 shell command output." in page
    text = _bytes("calls", "markdown", tmp_path).decode()
    assert text.count("*Output left out (detail level calls).*") == 4


def test_conversation_leaves_tool_calls_output_and_reasoning_out(tmp_path: Path) -> None:
    doc, report = _at("conversation")
    _tree_is_whole(doc)
    kept = [e.id for e in doc.entries]
    # a2 held nothing but a tool call; the label on r2 goes with r2
    assert kept == ["u1", "a1", "k1", "a3", "u2"]
    parents = {e.id: e.parent_id for e in doc.entries}
    assert parents == {"u1": None, "a1": "u1", "k1": "a1", "a3": "k1", "u2": "a3"}
    assert doc.leaf_id == "u2"  # the leaf (a dropped orphan result) moved up to what is kept
    a1 = doc.get("a1").message  # type: ignore[union-attr]
    assert [type(p) for p in a1.content] == [Text]
    k1 = doc.get("k1").body  # type: ignore[union-attr]
    assert k1.first_kept_id == "k1" and k1.details is None  # nothing after a2 on its path is kept
    assert {c: i.count for c, i in report.losses.items()} == {
        "detail:tool-call": 2,
        "detail:reasoning": 1,
        "detail:tool-result": 3,
        "detail:assistant": 1,
        "detail:shell": 1,
        "detail:label": 1,
        "detail:summary-files": 1,
    }
    for fmt in FORMATS:
        data = _bytes("conversation", fmt, tmp_path)
        assert not [t for t in (*TOOL_TEXT, *CALL_TEXT, "THINKING-ONE") if t.encode() in data], fmt
        assert fmt not in WHOLE or all(t.encode() in data for t in SAID), fmt


def test_prompts_keeps_the_prompts_alone(tmp_path: Path) -> None:
    doc, report = _at("prompts")
    _tree_is_whole(doc)
    assert [type(e.message) for e in doc.entries] == [UserMessage, UserMessage]
    assert [e.parent_id for e in doc.entries] == [None, "u1"]
    assert report.losses["detail:assistant"].count == 3
    for fmt in FORMATS:
        data = _bytes("prompts", fmt, tmp_path)
        assert b"PROMPT-TWO" in data and (fmt not in WHOLE or b"PROMPT-ONE" in data), fmt
        assert not [t for t in (*TOOL_TEXT, *CALL_TEXT, "REPLY-ONE", "SUMMARY-ONE") if t.encode() in data], (
            fmt
        )


def test_a_compaction_keeps_the_first_entry_kept_after_a_dropped_one() -> None:
    # The compaction's first kept entry (a tool result) goes: the next kept entry on its
    # path takes its place, so the harness's context rule still finds where to start.
    data = session_bytes(
        _msg(1, "u1", None, {"role": "user", "content": "go"}),
        _msg(2, "a1", "u1", _assistant([{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}])),
        _msg(3, "r1", "a1", _result("c1", "out")),
        _msg(4, "a2", "r1", _assistant([{"type": "text", "text": "kept"}], stop="stop")),
        {"type": "compaction", "id": "k1", "parentId": "a2", "timestamp": T.format(5), "summary": "s",
         "firstKeptEntryId": "r1", "tokensBefore": 5},
    )  # fmt: skip
    doc = piconv.apply_filters(piconv.load(data), [("detail", {"level": "conversation"})])
    assert doc.get("k1").body.first_kept_id == "a2"  # type: ignore[union-attr]
    assert [m.entry_id for m in doc.context().messages] == ["k1", "a2"]  # the summary, then a2


def test_an_unknown_level_is_a_usage_error() -> None:
    with pytest.raises(piconv.UsageError, match="the levels are full, calls, conversation, prompts"):
        piconv.apply_filters(piconv.load(SESSION), [("detail", {"level": "most"})])
    assert cli.main(["-", "--to", "html", "--detail", "most"]) == 2


def test_the_command_line_one_session_and_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "s.jsonl").write_bytes(SESSION)
    out = tmp_path / "one.html"
    assert cli.main([str(src / "s.jsonl"), "--to", "html", "--detail", "conversation", "-o", str(out)]) == 0
    assert "detail:tool-result×3" in capsys.readouterr().err
    assert b"OUTPUT-ONE" not in out.read_bytes() and b"REPLY-ONE" in out.read_bytes()
    outdir = tmp_path / "out"
    argv = [str(src), "--to", "markdown", "--to", "html", "-o", str(outdir), "-q"]
    assert cli.main([*argv, "--detail", "prompts"]) == 0
    for name in ("s.md", "s.html"):
        data = (outdir / name).read_bytes()
        assert b"PROMPT-TWO" in data and b"REPLY-ONE" not in data and b"OUTPUT-ONE" not in data
    # another level is another conversion: the run converts again
    assert cli.main([*argv, "--detail", "calls"]) == 0
    data = (outdir / "s.html").read_bytes()
    assert b"REPLY-ONE" in data and b"ARG-ONE" in data and b"OUTPUT-ONE" not in data


def test_detail_runs_before_redaction(tmp_path: Path) -> None:
    """The redaction report counts what the output holds: a secret only a left-out tool
    output held is not counted."""
    secret = "ghp_8fK2mQ9xT4vB7nL1pR6sW3yZ0cH5jD2gA9eU"
    data = SESSION.replace(b"OUTPUT-ONE", secret.encode())
    out = tmp_path / "r.json"
    argv = [
        "-",
        "--to",
        "html",
        "--detail",
        "calls",
        "--redact",
        "-o",
        str(tmp_path / "p.html"),
        "--report",
        str(out),
    ]
    import sys

    stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))
    try:
        assert cli.main(argv) == 0
    finally:
        sys.stdin = stdin
    report = json.loads(out.read_text())
    assert "github-pat" not in report["notes"]["redaction"]["rules"]
    assert secret.encode() not in (tmp_path / "p.html").read_bytes()


# --------------------------------------------------------------------------- the corpus


def _tool_texts(doc: piconv.ir.Document) -> list[str]:
    texts = []
    for e in doc.entries:
        msg = e.message
        if isinstance(msg, ToolResult):
            content = msg.content
            text = (
                content
                if isinstance(content, str)
                else "\n".join(p.text for p in content or () if isinstance(p, Text) and p.text)
            )
            if text.strip():
                texts.append(text)
        elif isinstance(msg, ShellCommand) and msg.output and msg.output.strip():
            texts.append(msg.output)
    return texts


def _said(doc: piconv.ir.Document) -> str:
    """Every text the conversation level keeps (prompts, replies, summaries, prompts of
    the system): a tool's output that someone wrote there too may appear."""
    out = []
    for e in doc.entries:
        msg = e.message
        content = getattr(msg, "content", None)
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, tuple):
            out.extend(p.text for p in content if isinstance(p, (Text, Reasoning)) and p.text)
        for name in ("summary",):
            value = getattr(e.body, name, None) or getattr(msg, name, None)
            if isinstance(value, str):
                out.append(value)
        if msg is not None and getattr(msg, "sections", None):
            out.extend(v for v in msg.sections.values() if isinstance(v, str))
    return "\n".join(out)


# the corpus sessions that hold tool output (the others have none to leave out)
WITH_TOOL_OUTPUT = [p for p in corpus_files() if b'"toolResult"' in p.read_bytes()]


@pytest.mark.shared
@pytest.mark.parametrize("path", WITH_TOOL_OUTPUT, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_conversation_holds_no_tool_output_of_the_corpus(path: Path) -> None:
    source = piconv.load(path)
    texts = _tool_texts(source)
    assert texts
    kept = piconv.apply_filters(source, [("detail", {"level": "conversation"})])
    said = _said(kept)
    for fmt in ("html", "markdown"):
        pages = {}
        for level, doc in (("full", source), ("conversation", kept)):
            buf = io.BytesIO()
            # Markdown with every branch: the page draws the whole tree too
            piconv.convert(
                doc, fmt, buf, {"images": "omit", "all_branches": True} if fmt == "markdown" else {}
            )
            pages[level] = buf.getvalue().decode("utf-8", "replace")

        def shown(text: str, page: str) -> bool:
            return text in page or escape(text) in page

        # the check can fail: at full detail the outputs are there
        assert any(shown(t, pages["full"]) for t in texts), fmt
        leaked = [t[:60] for t in texts if t not in said and shown(t, pages["conversation"])]
        assert leaked == [], fmt
    assert SHARED in path.parents


def test_an_edit_at_calls_shows_the_replacement_asked_for_not_the_tools_diff(tmp_path: Path) -> None:
    """The tool's diff holds lines of the file around the change (tool output); at
    ``calls`` the page shows the call's own old and new text instead."""
    edit = {"path": "/home/ann/src/a.py", "oldText": "x = 1", "newText": "x = 2"}
    result = {**_result("c1", "Edited"), "toolName": "edit",
              "details": {"diff": " FILE-CONTEXT-LINE\n-x = 1\n+x = 2"}}  # fmt: skip
    data = session_bytes(
        _msg(1, "u1", None, {"role": "user", "content": "fix"}),
        _msg(
            2, "a1", "u1", _assistant([{"type": "toolCall", "id": "c1", "name": "edit", "arguments": edit}])
        ),
        _msg(3, "r1", "a1", result),
    )
    out = tmp_path / "p.html"
    piconv.convert(data, "html", str(out), filters=[("detail", {"level": "calls"})])
    page = out.read_text()
    assert "FILE-CONTEXT-LINE" not in page and "Edited" not in page
    assert '<span class="del">-x = 1</span>\n<span class="add">+x = 2</span>' in page
    assert '<p class="note left-out">Output left out.</p>' in page
    piconv.convert(data, "html", str(out))
    assert "FILE-CONTEXT-LINE" in out.read_text()  # at full detail, the tool's diff
