"""``piconv diff``: two branches of a session, or two sessions, compared.

The corpus checks read the session files themselves (their lines, ``parentId`` links and
usage) to know what the answer must be, and hold the diff to it: the common part, each
side's totals (equal to what the index and the archive list for a session holding that
path alone, ``session_facts``, the figures ``piconv stats`` reports) and the first prompt
where the sides part.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import piconv
import pytest
from conftest import SHARED, session_bytes
from piconv.cli import main
from piconv.compare import render_text
from piconv.compare.files import shell_files, tool_files
from piconv.compare.text import width_of
from piconv.facts.summary import session_facts

GENERATED = SHARED / "corpus" / "pi-generated"
BRANCHING = GENERATED / "branching.jsonl"
FORK = GENERATED / "branching-fork.jsonl"


# --------------------------------------------------------------------------- the raw files


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _raw_path(lines: list[dict[str, Any]], leaf: str) -> list[dict[str, Any]]:
    """The entries from the root to ``leaf``, by following ``parentId`` in the file."""
    by_id = {e["id"]: e for e in lines if e.get("type") != "session"}
    path = []
    at: str | None = leaf
    while at is not None:
        path.append(by_id[at])
        at = by_id[at].get("parentId")
    return path[::-1]


def _raw_label(lines: list[dict[str, Any]], label: str) -> str:
    found = {e["targetId"]: e.get("label") for e in lines if e.get("type") == "label"}
    (target,) = [t for t, name in found.items() if name == label]
    return target


def _raw_usage(entries: list[dict[str, Any]]) -> tuple[int, int, float]:
    """Turns, tokens and cost of raw entries, as pi counts them: user messages; the usage
    of assistant messages, tool results, summaries and usage records."""
    turns = tokens = 0
    cost = 0.0
    for e in entries:
        message = e.get("message") if e.get("type") == "message" else None
        if message is not None and message.get("role") == "user":
            turns += 1
            continue
        usage = message.get("usage") if message is not None else e.get("usage")
        if isinstance(usage, dict):
            tokens += usage.get("totalTokens") or sum(
                usage.get(k, 0) for k in ("input", "output", "cacheRead", "cacheWrite")
            )
            cost += (usage.get("cost") or {}).get("total") or 0.0
    return turns, tokens, cost


def _first_user_text(entries: list[dict[str, Any]]) -> str | None:
    for e in entries:
        message = e.get("message") if e.get("type") == "message" else None
        if message is not None and message.get("role") == "user":
            content = message["content"]
            return (
                content if isinstance(content, str) else " ".join(p["text"] for p in content if p.get("text"))
            )
    return None


# --------------------------------------------------------------------------- the two checks


@pytest.mark.shared
def test_option_a_against_option_b() -> None:
    lines = _lines(BRANCHING)
    a_leaf, b_leaf = _raw_label(lines, "option-A"), _raw_label(lines, "option-B")
    path_a, path_b = _raw_path(lines, a_leaf), _raw_path(lines, b_leaf)
    ids_b = [e["id"] for e in path_b]
    shared = [e for e in path_a if e["id"] in ids_b]
    assert shared and [e["id"] for e in shared] == ids_b[: len(shared)]

    diff = piconv.diff(BRANCHING, leaf="option-A", against="option-B")

    assert diff.kind == "branches"
    assert (diff.a.leaf_id, diff.b.leaf_id) == (a_leaf, b_leaf)
    assert diff.common_ancestor == shared[-1]["id"]
    assert diff.common.entries == len(shared)
    assert diff.a.own.entries == len(path_a) - len(shared)
    assert diff.b.own.entries == len(path_b) - len(shared)
    # each side's totals: those of its whole path, read from the file
    for side, path in ((diff.a, path_a), (diff.b, path_b)):
        turns, tokens, cost = _raw_usage(path)
        assert (side.path.turns, side.path.tokens) == (turns, tokens)
        assert side.path.cost == pytest.approx(cost)
        own = path[len(shared) :]
        assert (side.own.turns, side.own.tokens) == _raw_usage(own)[:2]
        assert side.path.tokens == diff.common.tokens + side.own.tokens
    # where the sides part: the first prompt after the common part
    assert diff.a.first_prompt == _first_user_text(path_a[len(shared) :]) == "Let's try option A."
    assert diff.b.first_prompt == _first_user_text(path_b[len(shared) :]) == "Actually, try option B instead."
    (pair,) = diff.pairs
    assert pair.a is not None and pair.b is not None and {"prompt", "tools", "reply"} <= set(pair.differs)
    assert [t.name for t in pair.a.tools] == ["bash"] and [t.name for t in pair.b.tools] == ["write"]
    assert [f.path for f in diff.b.own.files if f.written] == ["notes/option-b.md"]
    assert [f.path for f in diff.a.own.files if f.read] == ["src/sum.js"]


@pytest.mark.shared
def test_a_session_against_its_fork() -> None:
    parent, fork = _lines(BRANCHING), _lines(FORK)
    header = fork[0]
    # the fork's copies: its entries older than its header, each also in the parent
    copied = [e for e in fork[1:] if e["timestamp"] < header["timestamp"]]
    held = {(e["id"], e["timestamp"]) for e in parent[1:]}
    assert copied and all((e["id"], e["timestamp"]) in held for e in copied)

    diff = piconv.diff(BRANCHING, FORK)

    assert diff.kind == "fork"
    assert any("B was forked from A" in note for note in diff.notes)
    # the common part is the copied prefix, and the fork added nothing after it
    assert diff.common_ancestor == copied[-1]["id"]
    assert diff.b.path.entries == len(fork) - 1 == len(copied)
    assert diff.b.own.entries == 0 and diff.a.own.entries == 0
    assert not diff.parted and diff.a.first_prompt is None and diff.b.first_prompt is None
    # A is taken at the branch the copy was made from, not at its own leaf (a new root)
    assert diff.a.leaf_id == copied[-1]["id"] != piconv.load(BRANCHING).leaf_id
    # the fork's totals are what the archive and the index list for its file
    facts = session_facts(piconv.load(FORK))
    turns, tokens, cost = _raw_usage(fork)
    assert (diff.b.path.turns, diff.b.path.tokens) == (facts["turns"], facts["tokens"]) == (turns, tokens)
    assert diff.b.path.cost == facts["cost"] == pytest.approx(cost)
    # labels, which pi's /fork drops, are the only entries of A's path the fork lacks
    assert diff.a.path.entries - diff.b.path.entries == sum(
        1 for e in _raw_path(parent, copied[-1]["id"]) if e["type"] == "label"
    )


@pytest.mark.shared
def test_a_session_at_its_own_leaf_against_its_fork() -> None:
    parent, fork = _lines(BRANCHING), _lines(FORK)
    leaf = piconv.load(BRANCHING).leaf_id
    assert leaf is not None
    diff = piconv.diff(BRANCHING, FORK, leaf=leaf)
    # the parent's leaf is on a root of its own: the two paths share nothing
    assert diff.common_ancestor is None and diff.common.entries == 0
    assert diff.a.first_prompt == _first_user_text(_raw_path(parent, leaf))
    assert diff.b.first_prompt == _first_user_text(fork[1:])
    assert diff.a.path.tokens == _raw_usage(_raw_path(parent, leaf))[1]


# --------------------------------------------------------------------------- costs and turns


def _turn(
    n: int, parent: str | None, prompt: str, tokens: int, cost: float, stamp: int
) -> list[dict[str, Any]]:
    usage = {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens}
    usage["cost"] = {"input": cost, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}
    return [
        {
            "type": "message",
            "id": f"u{n}",
            "parentId": parent,
            "timestamp": f"2026-01-01T00:{stamp:02d}:00.000Z",
            "message": {"role": "user", "content": prompt, "timestamp": 1},
        },
        {
            "type": "message",
            "id": f"a{n}",
            "parentId": f"u{n}",
            "timestamp": f"2026-01-01T00:{stamp:02d}:30.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"answer {n}"},
                    {"type": "toolCall", "id": f"c{n}", "name": "edit", "arguments": {"path": f"f{n}.py"}},
                ],
                "provider": "faux",
                "model": "faux-coder" if n < 5 else "faux-mini",
                "usage": usage,
                "stopReason": "toolUse",
            },
        },
        {
            "type": "message",
            "id": f"r{n}",
            "parentId": f"a{n}",
            "timestamp": f"2026-01-01T00:{stamp:02d}:40.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": f"c{n}",
                "toolName": "edit",
                "content": [{"type": "text", "text": "failed" if n == 6 else "ok"}],
                "isError": n == 6,
                "timestamp": 1,
            },
        },
    ]


def test_branches_with_costs_align_turn_by_turn(tmp_path: Path) -> None:
    # root: turn 1; then A: turns 2 ("same question") and 3; B: turns 5 ("same question") and 6
    lines = [*_turn(1, None, "start", 100, 0.01, 1)]
    lines += _turn(2, "r1", "same question", 200, 0.02, 2)
    lines += _turn(3, "r2", "a's next", 300, 0.03, 3)
    lines += _turn(5, "r1", "same question", 250, 0.025, 10)
    lines += _turn(6, "r5", "b's next", 400, 0.04, 11)
    source = tmp_path / "s.jsonl"
    source.write_bytes(session_bytes(*lines))
    diff = piconv.diff(source, leaf="r3", against="r6")
    assert diff.common_ancestor == "r1" and diff.shared_prompt == "start"
    assert diff.a.own.cost == pytest.approx(0.05) and diff.b.own.cost == pytest.approx(0.065)
    assert diff.a.path.cost == pytest.approx(0.06) and diff.b.path.cost == pytest.approx(0.075)
    assert diff.a.path.tokens == 600 and diff.b.path.tokens == 750
    assert diff.b.own.errors == 1 and diff.a.own.errors == 0
    assert dict(diff.b.own.tool_calls) == {"edit": 2}
    assert diff.b.own.models == ("faux/faux-mini",) and diff.a.own.models == ("faux/faux-coder",)
    assert diff.a.own.seconds == 100.0  # 00:02:00 to 00:03:40
    first, second = diff.pairs
    assert first.a is not None and first.b is not None
    assert (first.a.prompt, first.b.prompt) == ("same question", "same question")
    assert set(first.differs) == {"tools", "reply", "models"}
    assert (second.a and second.a.prompt, second.b and second.b.prompt) == ("a's next", "b's next")
    assert second.a is not None and second.a.number == 3 and second.b is not None and second.b.number == 3
    assert "errors" in second.differs
    data = diff.to_json()
    assert orjson.loads(orjson.dumps(data)) == data
    assert data["a"]["own"]["cost"] == pytest.approx(0.05)
    assert [p["mark"] for p in data["pairs"]] == ["~", "~"]


def test_a_reply_regenerated_parts_within_the_turn(tmp_path: Path) -> None:
    lines = [*_turn(1, None, "question", 100, 0.0, 1)]
    other = dict(lines[1], id="a9", timestamp="2026-01-01T00:05:00.000Z")
    other["message"] = dict(lines[1]["message"], content=[{"type": "text", "text": "another answer"}])
    source = tmp_path / "s.jsonl"
    source.write_bytes(session_bytes(*lines, other))
    diff = piconv.diff(source, leaf="r1", against="a9")
    assert diff.common_ancestor == "u1" and diff.shared_prompt == "question"
    assert diff.a.first_prompt is None and diff.b.first_prompt is None
    (pair,) = diff.pairs
    assert pair.a is not None and pair.a.continued and pair.b is not None and pair.b.continued
    assert "reply" in pair.differs
    text = render_text(diff, 80)
    assert "the reply to: question" in text


def test_two_sessions_share_an_entry_only_when_it_is_a_copy(tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_bytes(session_bytes(*_turn(1, None, "x", 10, 0.0, 1)))
    # a copy of the first turn (no header naming the other), then a turn of its own
    two.write_bytes(session_bytes(*_turn(1, None, "x", 10, 0.0, 1), *_turn(2, "r1", "y", 5, 0.0, 2)))
    diff = piconv.diff(one, two)
    assert diff.kind == "sessions"
    assert diff.common_ancestor == "r1" and diff.b.first_prompt == "y" and diff.b.own.tokens == 5
    assert [p.mark for p in diff.pairs] == [">"]
    # the same ids and times, other content: not a copy, nothing shared
    three = tmp_path / "three.jsonl"
    three.write_bytes(session_bytes(*_turn(1, None, "z", 10, 0.0, 1)))
    unrelated = piconv.diff(one, three)
    assert unrelated.common_ancestor is None
    assert (unrelated.a.first_prompt, unrelated.b.first_prompt) == ("x", "z")
    # the same ids, other times: no false merge either
    four = tmp_path / "four.jsonl"
    four.write_bytes(session_bytes(*_turn(1, None, "x", 10, 0.0, 7)))
    same_text = piconv.diff(one, four)
    assert same_text.common_ancestor is None and [p.mark for p in same_text.pairs] == ["="]


# --------------------------------------------------------------------------- files touched


def test_files_from_tools_and_shell_commands() -> None:
    assert tool_files("read", {"path": "src/a.py"}) == [("src/a.py", True, False)]
    assert tool_files("edit", {"path": "b.md"}) == [("b.md", False, True)]
    assert tool_files("bash", {"command": "cat a.txt > out/b.txt"}) == [
        ("out/b.txt", False, True),
        ("a.txt", True, False),
    ]
    assert shell_files('grep -n "" src/sum.js | head -n 5') == [("src/sum.js", True, False)]
    assert shell_files("sed -i 's/a/b/' x.js && mv old.txt new/place.txt") == [
        ("x.js", True, True),
        ("old.txt", True, False),
        ("new/place.txt", False, True),
    ]
    assert shell_files("rm -rf build/ && echo done > /dev/null") == [("build/", False, True)]
    assert shell_files("cat 'unclosed") == []  # what cannot be split names nothing
    assert shell_files("python -c 'print(1.5)' && ls $HOME/x.py") == []


# --------------------------------------------------------------------------- the command line


@pytest.mark.shared
def test_the_command_line_prints_text_that_fits(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code = main(["diff", str(BRANCHING), "--leaf", "option-A", "--against", "option-B", "--width", "72"])
    out = capsysbinary.readouterr().out.decode()
    assert code == 0
    assert all(width_of(line) <= 72 for line in out.splitlines())
    assert "A: Let's try option A." in out and "B: Actually, try option B instead." in out
    assert "Common part: 7 entries, 1 turn, up to c12ca4bf" in out


@pytest.mark.shared
@pytest.mark.parametrize("to", ["json", "html", "markdown"])
def test_the_command_line_writes_json_and_pages(to: str, tmp_path: Path) -> None:
    out = tmp_path / f"d.{to}"
    flags = ["--json"] if to == "json" else ["--to", to]
    assert main(["diff", str(BRANCHING), str(FORK), *flags, "-o", str(out)]) == 0
    data = out.read_bytes()
    if to == "json":
        assert orjson.loads(data)["kind"] == "fork"
    else:
        assert b"a fork and the session it came from" in data


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(session_bytes(*_turn(1, None, "x", 1, 0.0, 1)))
    assert main(["diff", str(source)]) == 2
    assert "--leaf A --against B" in capsys.readouterr().err
    assert main(["diff", str(source), "--against", "nothing-like-this"]) == 2
    assert main(["diff", str(source), "--against", "u1", "--to", "sqlite"]) == 2
    assert "draws no diff page" in capsys.readouterr().err
    # never over an input
    assert main(["diff", str(source), "--against", "u1", "--json", "-o", str(source)]) == 6
    assert source.read_bytes().startswith(b'{"type":"session"')


def test_diff_of_a_session_read_from_bytes_and_a_document(tmp_path: Path) -> None:
    data = session_bytes(*_turn(1, None, "x", 5, 0.0, 1), *_turn(2, "r1", "y", 7, 0.0, 2))
    doc = piconv.load(io.BytesIO(data))
    assert piconv.diff(data, doc, leaf="r1").b.own.tokens == 7
