"""The sectioned Markdown checker gives the whole-document checker's answer: on every
corpus and hostile output, on the same outputs broken in ways that defeat a naive cut,
and however the text arrives in pieces."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from piconv import Report, ValidationFailed
from piconv.converters.markdown import checker, tokens, write
from piconv.converters.markdown.sections import Splitter, elide

from .conftest import REPO, corpus_files, corpus_ids

HOSTILE = sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl"))
SOURCES = corpus_files() + HOSTILE
IDS = corpus_ids() + [f"hostile/{p.stem}" for p in HOSTILE]


def convert(path: Path, **options: Any) -> str:
    import piconv

    out = io.BytesIO()
    opts = {"images": "embed", "all_branches": False, "leaf": None, "output_path": None, **options}
    write(piconv.load(path), out, opts, Report("markdown"))
    return out.getvalue().decode("utf-8")


def both(text: str) -> list[str]:
    data = text.encode("utf-8")
    sectioned = checker.check(data)
    whole = checker.check_whole(data)
    assert sectioned == whole
    return sectioned


def streamed(text: str, size: int) -> list[str]:
    stream = checker.Stream(piece=0)  # read every piece at once: the scan resumes mid-block
    for i in range(0, len(text), size):
        stream.feed(text[i : i + size])
    problems = stream.close()
    return checker.check_whole(text.encode("utf-8")) if stream.incomplete else problems


def sections(text: str) -> int:
    """How many sections the body is cut into (front matter aside)."""
    body = text[text.index("\n---\n") + 5 :]
    splitter = Splitter(3 if 'layout: "tree"' in text else 2)
    count = 0
    while True:
        section = splitter.next(body, True)
        assert section is not None
        count += 1
        elide(body, section)
        if section.end == len(body):
            return count
        splitter.reset(section.end)


@pytest.mark.shared
@pytest.mark.parametrize("path", SOURCES, ids=IDS)
@pytest.mark.parametrize("all_branches", [False, True], ids=["path", "tree"])
def test_sectioned_equals_whole_document(path: Path, all_branches: bool) -> None:
    text = convert(path, all_branches=all_branches)
    assert both(text) == []
    turns = len(re.findall(r"^#{2,3} \d+\. ", text, re.M))
    assert sections(text) >= min(turns, 2)  # the cut really happens
    for size in (1, 7, 4096):
        if size < 10 and len(text) > 100_000:
            continue
        assert streamed(text, size) == []


def _turn_starts(text: str) -> list[int]:
    return [m.start() for m in re.finditer(r"^#{2,3} \d+\. ", text, re.M)]


def _mutations(text: str) -> dict[str, tuple[str, bool | None]]:
    """name -> (mutated text, whether the checker must reject it; None: either way)."""
    starts = _turn_starts(text)
    mid = starts[len(starts) // 2]
    first_closer = re.search(r"^(`{3,}|~{3,})$", text[mid:], re.M)
    number = re.match(r"#{2,3} (\d+)\. ", text[mid:])
    assert number is not None
    n = number.group(1)
    heading_at = mid + number.start(1)
    after = mid + number.end()
    last_closer = list(re.finditer(r"^(`{3,}|~{3,})$", text, re.M))[-1]
    out: dict[str, tuple[str, bool | None]] = {
        "last fence unclosed": (text[: last_closer.start()] + text[last_closer.end() + 1 :], True),
        "extra </details>": (text[:mid] + "</details>\n\n" + text[mid:], True),
        "stray turn heading": (text[:mid] + "## 2. Stray\n\n" + text[mid:], True),
        "unterminated comment": (text[:mid] + "<!--\n\n" + text[mid:], True),
        "html block eats a heading": (text[:mid] + "<details>\n" + text[mid:], True),
        "open fence at the end": (text + "\n```\nnever closed\n", True),
        "turn number in a code span": (text[:heading_at] + f"`{n}. `" + text[after:], False),
        "turn number with an escaped dot": (text[:heading_at] + f"{n}\\. " + text[after:], True),
        "late javascript reference": (
            text[:mid] + "[r]\n\n" + text[mid:] + "\n[r]: javascript:alert(1)\n",
            True,
        ),
        "late http reference": (text[:mid] + "[r]\n\n" + text[mid:] + "\n[r]: https://example.org\n", False),
        "carriage return": (text[:mid] + "\r" + text[mid:], False),
        "indented fence over a cut": (text[:mid] + "  ```\n" + text[mid:] + "\n  ```\n", True),
        "list fence over a cut": (text[:mid] + "- item\n\n  ```\n" + text[mid:], False),
    }
    if first_closer is not None:
        a, b = mid + first_closer.start(), mid + first_closer.end()
        closer = text[a:b]
        # (whether this is rejected depends on what the fence then swallows)
        out["unclosed fence"] = (text[:a] + text[b + 1 :], None)
        out["closer with a no-break space"] = (text[:a] + closer + "\u00a0" + text[b:], None)
        out["closer with a tab"] = (text[:a] + closer + "\t" + text[b:], False)
    opener = re.search(r"^(`{3,})[a-z]+\n", text[mid:], re.M)
    if opener is not None:
        at, run = mid + opener.end(), opener.group(1)
        out["turn heading inside a fence"] = (text[:at] + "## 2. In code\n" + text[at:], False)
        out["longer fence run inside"] = (text[:at] + run + "`\n" + text[at:], None)
    return out


# Sources whose transcript has at least three turns to cut between (branching.jsonl's
# current path has two).
MUTATED = [p for p in SOURCES if p.stem in ("markdown-hostile", "basic", "images", "extensions")]


@pytest.mark.shared
@pytest.mark.parametrize("path", MUTATED, ids=[p.stem for p in MUTATED])
def test_mutated_outputs_get_the_same_verdict(path: Path) -> None:
    text = convert(path, images="omit")
    assert len(_turn_starts(text)) >= 3, "a source with too few turns to cut"
    fallbacks = {"reparsed": 0, "merged": 0}
    mutations = _mutations(text)
    for name, (bad, rejected) in mutations.items():
        problems = both(bad)
        if rejected is not None:
            assert bool(problems) == rejected, (name, problems[:3])
        assert streamed(bad, 997) == problems, name
        stream = checker.Stream()
        stream.feed(bad)
        stream.close()
        fallbacks["reparsed"] += stream.reparsed
        fallbacks["merged"] += stream.merged
    # The mutations exercise both ways the checker refuses a cut or a shortened fence.
    assert fallbacks["merged"], fallbacks
    if "closer with a no-break space" in mutations:
        assert fallbacks["reparsed"], fallbacks


def test_references_defined_late_are_seen_everywhere() -> None:
    text = convert(HOSTILE[-1] if HOSTILE[-1].stem == "markdown-hostile" else HOSTILE[0], images="omit")
    mid = _turn_starts(text)[1]
    bad = text[:mid] + "[r]\n\n" + text[mid:] + "\n[r]: javascript:alert(1)\n"
    problems = both(bad)
    assert any("javascript" in p for p in problems)
    stream = checker.Stream()
    stream.feed(bad)
    stream.close()
    assert stream.incomplete  # the stream alone cannot know; check() reads it again


@pytest.mark.shared
@pytest.mark.parametrize(
    ("use", "definition"),
    [
        ("[r]", "[r]: javascript:alert(1)"),  # defined before its use, in another section
        ("![r]", "> [R]:\n> javascript:alert(1)"),  # in a quote, the target on the next line
        ("[x][r]", "- [r]: <javascript:alert(1)>"),  # in a list item
    ],
)
def test_references_defined_in_another_section_are_seen(use: str, definition: str) -> None:
    """The parser resolves a definition within the text it is given: one in an earlier
    section, used in a later one, sends the check to the whole document."""
    text = convert(next(p for p in SOURCES if p.stem == "basic"), images="omit")
    starts = _turn_starts(text)
    bad = (
        text[: starts[1]]
        + definition
        + "\n\n"
        + text[starts[1] : starts[-1]]
        + use
        + "\n\n"
        + text[starts[-1] :]
    )
    problems = both(bad)
    assert any("javascript" in p for p in problems), problems[:3]
    stream = checker.Stream()
    stream.feed(bad)
    stream.close()
    assert stream.incomplete
    # The same text with the definition's label escaped defines nothing: the sections
    # give the verdict themselves.
    fine = bad.replace(definition, definition.replace("[", "\\["), 1)
    stream = checker.Stream()
    stream.feed(fine)
    assert stream.close() == checker.check_whole(fine.encode("utf-8"))
    assert not stream.incomplete


def test_validation_while_writing_matches_check(tmp_path: Path) -> None:
    import piconv

    path = next(p for p in HOSTILE if p.stem == "markdown-hostile")
    out = tmp_path / "out.md"
    piconv.convert(path, "markdown", out)
    assert checker.check(out.read_bytes()) == []
    from piconv.converters.markdown import writer

    doc = piconv.load(path)
    original = writer._write

    def corrupt(stream: Any, report: Report, text: str, sink: Any = None) -> None:
        original(stream, report, text.replace("\n</details>\n", "\n</details>\n\n</details>\n", 1), sink)

    writer._write = corrupt  # type: ignore[assignment]
    try:
        with pytest.raises(ValidationFailed, match="without an open"):
            piconv.convert(doc, "markdown", tmp_path / "bad.md")
    finally:
        writer._write = original  # type: ignore[assignment]
    assert not (tmp_path / "bad.md").exists()


HEADINGS = [
    "## 1. User", "# T", "##", "## ", "##\t", "## a ##", "## a##", "## a #  ", "## # #", "## ###",
    "### x \\#", "## a\t#\t", "## \u00a0x\u00a0", "## \u2003a #", "## a\x00b", "#\ta", "## `1. `x", "## ## ##",
]  # fmt: skip


def _records(toks: list[Any]) -> list[tuple[Any, ...]]:
    return [(t.type, t.level, t.map, t.content, t.heading) for t in toks]


@pytest.mark.parametrize(
    "line", [*HEADINGS, "## 1. [x](javascript:y) <b>", "## \\[r] &amp; `1. `", "### \x0b a \x0c#"]
)
def test_heading_tokens_match_the_parser(line: str) -> None:
    """The cut heading's records are made from its line: they must be what the parser
    makes of it in a document."""
    parsed = tokens.parser().parse(line + "\ntext\n")
    mine = tokens.heading_tokens(line + "\ntext\n")
    assert _records(mine) == _records(parsed[: len(mine)])
    assert parsed[len(mine)].type == "paragraph"  # the rest: the paragraph below
    if mine[0].text is None:
        assert tokens.heading_text(mine[0].content) == parsed[0].text
    else:
        assert mine[0].text == parsed[0].text


def test_atx_reads_a_heading_line_as_the_parser_does() -> None:
    """Level and raw text of many heading lines made of the characters that matter to the
    rule (markers, white space of every kind, escapes), against the parser's."""
    import random

    rng = random.Random(7)
    alphabet = ["#", "#", " ", " ", "\t", "a", "1", ".", "\\", "\u00a0", "\v", "\f", "\r", "\x00", "`"]
    for _ in range(3000):
        line = (
            "#" * rng.randint(1, 3)
            + rng.choice([" ", "\t", ""])
            + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        )
        line = line.split("\r")[0]  # a CR ends the line
        parsed = tokens.parser().parse(line + "\n")
        if not parsed or parsed[0].type != "heading":
            continue  # not a heading ("#a"): never a line the checker reads this way
        assert tokens.atx(line) == (parsed[0].heading, parsed[0].content), repr(line)


def test_the_tree_is_read_at_any_depth() -> None:
    """Quotes, lists and emphasis nest as deep as a message says: every level is read,
    and what is deepest is still checked."""
    deep = tokens.parser().parse("> " * 5000 + "x <b>\n\n" + "- " * 3000 + "[a](javascript:b)\n")
    assert max(t.level for t in deep) >= 5000
    assert [(t.type, t.content) for t in deep if t.level < 0] == [
        ("html_inline", "<b>"),
        ("link", "javascript:b"),
    ]
    emphasis = tokens.parser().parse("## " + "*" * 4000 + "1. x <i>" + "*" * 4000 + "\n")
    assert emphasis[0].text == "1. x " and emphasis[1].content == "<i>"


# -------------------------------------------------------------------------- what is left out


def _regions(text: str, section: int) -> dict[int, int]:
    """How many regions of each kind the splitter leaves out of the body."""
    from piconv.converters.markdown import sections as sec

    body = text[text.index("\n---\n") + 5 :]
    splitter = Splitter(3 if 'layout: "tree"' in text else 2, section)
    found = {sec.FENCE_CONTENT: 0, sec.BLOCK: 0, sec.HEADING: 0}
    while True:
        part = splitter.next(body, True)
        assert part is not None
        for _, _, kind in part.regions:
            found[kind] += 1
        if part.end == len(body):
            return found
        splitter.reset(part.end)


def _call_mutations(text: str) -> dict[str, tuple[str, bool | None]]:
    """Outputs broken around a tool call, where a whole call and its result are left out
    of what the parser sees: name -> (text, whether it must be rejected; None: either)."""
    call = "\n\n**Tool call** "
    at = text.index(call)
    head, tail = text[:at], text[at + len(call) :]
    return {
        "inline HTML on a call line": (head + call + "<b>x</b> " + tail, True),
        "link on a call line": (head + call + "[x](javascript:y) " + tail, True),
        "comment opened before a call": (head + "\n\n<!--" + call + tail, True),
        "script block before a call": (head + "\n\n<script>" + call + tail, True),
        "fence opened before a call": (head + "\n\n```" + call + tail, None),
        "call continues a paragraph": (head + "\ntext <a" + call[1:] + tail, None),
        "call continues a list item": (head + "\n\n- item" + call[1:] + tail, None),
        "call inside a block quote": (head + "\n\n> quote\n>" + call[1:] + tail, None),
        "no blank line after the call": (head + call + tail.replace("\n\n", "\n", 1), None),
        "heading right after a result": (text.replace("\n</details>\n\n## ", "\n</details>\n## ", 1), None),
        "details left open in a result": (head + call + tail.replace("\n\n</details>\n", "\n\n", 1), True),
        "plain paragraph in a pre block": (head + "\n\n<pre>\n\nPlain words\n\n</pre>" + call + tail, True),
        "plain paragraph in a comment": (head + "\n\n<!--\n\nPlain words\n\n-->" + call + tail, True),
        "plain paragraph after a list fence": (
            head + "\n\n- item\n\n  ```\n\nPlain words" + call + tail,
            None,
        ),
        "plain paragraph as a setext heading": (head + "\n\nPlain words\n---" + call + tail, True),
        "plain paragraph in a quote": (head + "\n\n> quote\n\nPlain <b>words</b>" + call + tail, True),
    }


CALLS = [p for p in SOURCES if p.stem in ("basic", "badlogic__pi-mono__session")]


@pytest.mark.shared
@pytest.mark.parametrize("path", CALLS, ids=[p.stem for p in CALLS])
def test_tool_calls_and_headings_left_out_give_the_same_verdict(path: Path) -> None:
    """Tool calls with their results and every heading but a section's first are left
    out of what the parser sees (sentinels stand for them, checked on the tokens); on
    outputs broken around them the verdict stays the whole-document one, with sections
    of every size."""
    text = convert(path, images="omit")
    found = _regions(text, checker.SECTION_CHARS)
    assert found[1] >= len(_turn_starts(text)) // 4  # the fast path is taken
    assert found[2] >= len(_turn_starts(text)) - len(text) // checker.SECTION_CHARS - 1
    cases = {"as written": (text, False), **_call_mutations(text), **_mutations(text)}
    for name, (bad, rejected) in cases.items():
        whole = checker.check_whole(bad.encode("utf-8"))
        if rejected is not None:
            assert bool(whole) == rejected, (name, whole[:3])
        for section in (0, 2048, checker.SECTION_CHARS):
            stream = checker.Stream(section=section)
            stream.feed(bad)
            problems = stream.close()
            if stream.incomplete:
                continue  # check() reads it again in full
            assert problems == whole, (name, section, problems[:3], whole[:3])
        assert checker.check(bad.encode("utf-8")) == whole, name


@pytest.mark.shared
def test_sentinels_that_do_not_hold_send_the_section_to_the_parser_whole() -> None:
    """A heading swallowed by an HTML block left open: its sentinel is swallowed too, the
    check sees it and parses the section in full (and finds the problem)."""
    path = next(p for p in SOURCES if p.stem == "basic")
    text = convert(path, images="omit")
    mid = _turn_starts(text)[2]
    bad = text[:mid] + "<div>\n" + text[mid:]
    stream = checker.Stream(section=checker.SECTION_CHARS)
    stream.feed(bad)
    problems = stream.close()
    assert stream.reparsed >= 1
    assert problems and problems == checker.check_whole(bad.encode("utf-8"))


def _prose_mutations(text: str) -> dict[str, tuple[str, bool | None]]:
    """Outputs broken in and around a prose block the splitter leaves out (a list item
    after a blank line): name -> (text, whether it must be rejected; None: either)."""
    item = "\n\n- first\n- second\n  continued\n\n"
    starts = _turn_starts(text)
    at = text.index("\n", starts[len(starts) // 2]) + 1  # below a turn heading
    head, tail = text[:at], text[at:]
    turn = re.match(r"#{2,3} (\d+)\. ", text[starts[len(starts) // 2] :])
    assert turn is not None
    wrong = f"## {int(turn.group(1)) + 5}. Out of sequence\n\n"
    return {
        "a list left out": (head + item + tail.lstrip("\n"), False),
        "inline HTML in a list": (head + item.replace("second", "second <b>x</b>") + tail.lstrip("\n"), True),
        "javascript link in a list": (
            head + item.replace("second", "[x](javascript:y)") + tail.lstrip("\n"),
            True,
        ),
        "setext title in a paragraph": (head + "\n\nWords\n===\n\n" + tail.lstrip("\n"), True),
        "setext heading in a list": (
            head + item.replace("continued", "continued\n  ---") + tail.lstrip("\n"),
            None,
        ),
        "counted heading in a paragraph": (head + "\n\nWords\n## 1. Again\n\n" + tail.lstrip("\n"), True),
        "indented heading in a paragraph": (head + "\n\nWords\n   # Title\n\n" + tail.lstrip("\n"), True),
        "deeper heading in a paragraph": (head + "\n\nWords\n#### Deeper\n\n" + tail.lstrip("\n"), False),
        "fence opened in a paragraph": (head + "\n\nWords\n```\n\n" + tail.lstrip("\n"), None),
        "list continued by an indented block": (head + item + "  <div>x</div>\n\n" + tail.lstrip("\n"), True),
        "list continued after two blank lines": (
            head + item + "\n  <div>x</div>\n\n" + tail.lstrip("\n"),
            True,
        ),
        "quote then a plain line": (head + "\n\n> quoted\nlazy\n\n" + tail.lstrip("\n"), False),
        "turn heading out of sequence between prose": (
            head + "\n\nWords\n\n" + wrong + "More words\n\n" + tail.lstrip("\n"),
            True,
        ),
        "thinking holding HTML": (
            head
            + "\n\n<details>\n<summary>Thinking</summary>\n\nWords <i>x</i>\n\n</details>\n\n"
            + tail.lstrip("\n"),
            True,
        ),
        "thinking left open": (
            head + "\n\n<details>\n<summary>Thinking</summary>\n\nWords\n\n" + tail.lstrip("\n"),
            True,
        ),
    }


PROSE = [p for p in SOURCES if p.stem in ("basic", "markdown-hostile", "badlogic__pi-mono__session")]


@pytest.mark.shared
@pytest.mark.parametrize("path", PROSE, ids=[p.stem for p in PROSE])
def test_prose_left_out_gives_the_same_verdict(path: Path) -> None:
    """Prose blocks (lists, paragraphs, quotes) that hold nothing a check reads are left
    out, with the headings between them; on outputs broken in and around such blocks the
    verdict, line numbers included, is the whole-document one at every section size."""
    text = convert(path, images="omit")
    assert len(_turn_starts(text)) >= 3, "a source with too few turns to cut"
    cases = {"as written": (text, False), **_prose_mutations(text)}
    left_out = 0
    for name, (bad, rejected) in cases.items():
        whole = checker.check_whole(bad.encode("utf-8"))
        if rejected is not None:
            assert bool(whole) == rejected, (name, whole[:3])
        for section in (0, 2048, checker.SECTION_CHARS):
            stream = checker.Stream(section=section)
            stream.feed(bad)
            problems = stream.close()
            if stream.incomplete:
                continue
            assert problems == whole, (name, section, problems[:3], whole[:3])
        assert checker.check(bad.encode("utf-8")) == whole, name
        if name == "a list left out":
            body = bad[bad.index("\n---\n") + 5 :]
            at = body.index("- first")
            left_out = sum(1 for a, b, k in _sections_regions(body, bad) if k == 1 and a <= at < b)
    assert left_out == 1  # the list really was left out


def _sections_regions(body: str, text: str) -> list[tuple[int, int, int]]:
    splitter = Splitter(3 if 'layout: "tree"' in text else 2, checker.SECTION_CHARS)
    regions: list[tuple[int, int, int]] = []
    while True:
        part = splitter.next(body, True)
        assert part is not None
        regions.extend(part.regions)
        if part.end == len(body):
            return regions
        splitter.reset(part.end)


@pytest.mark.shared
def test_headings_a_sentinel_stands_for_keep_their_lines() -> None:
    """Turn headings between blocks left out share their sentinel; a problem with one of
    them names its own line."""
    path = next(p for p in SOURCES if p.stem == "basic")
    text = convert(path, images="omit")
    starts = _turn_starts(text)
    at = starts[2]
    bad = text[:at] + "Words\n\n## 77. Stray\n\nMore words\n\n" + text[at:]
    whole = checker.check_whole(bad.encode("utf-8"))
    stray_line = bad[:at].count("\n") + 3
    assert any(p.startswith(f"line {stray_line}: turn heading out of sequence") for p in whole), whole[:3]
    body = bad[bad.index("\n---\n") + 5 :]
    elided = elide(body, Splitter(2, len(body) + 1).next(body, True))  # one section: no cut
    assert any(len(v) > 1 for v in elided.headings.values())  # several headings behind one sentinel
    assert checker.check(bad.encode("utf-8")) == whole


@pytest.mark.shared
@pytest.mark.parametrize(
    ("suffix", "problem"),
    [
        (" [x](javascript:y)", "link to a non-http(s) target"),
        (" ![x](file:///etc/passwd)", "image from a disallowed source"),
        (" <b>x</b>", "raw inline HTML"),
        (" [x][ref]", None),  # a reference defined at the end: the whole check decides
    ],
)
def test_headings_a_sentinel_stands_for_get_the_inline_checks(suffix: str, problem: str | None) -> None:
    """A heading left out behind a sentinel is checked from its line alone; where its text
    could hold a link, an image or HTML, its inline tokens are read as the parser's."""
    path = next(p for p in SOURCES if p.stem == "basic")
    text = convert(path, images="omit")
    at = _turn_starts(text)[1]
    end = text.index("\n", at)
    bad = text[:end] + suffix + text[end:]
    if problem is None:
        bad += "\n[ref]: javascript:y\n"
    body = bad[bad.index("\n---\n") + 5 :]
    elided = elide(body, Splitter(2, len(body) + 1).next(body, True))
    assert any(suffix in line for heads in elided.headings.values() for _, line in heads)  # left out
    verdict = both(bad)
    line = bad[:at].count("\n") + 1
    expected = problem or "link to a non-http(s) target"
    assert any(p.startswith(f"line {line}: {expected}") for p in verdict), verdict[:3]


# ------------------------------------------------- the one-regex path through calls and results

_FENCE_CHARS = ("`", "~")
_SPACES = ("", " ", "   ", "\t", "\u00a0", "\x1c", "\u2003")
_LINES = ("text", "a `b` c", "x ``` y", "``` y", "  x ```", "~~~ tilde", "", "#", "- item")


def _random_fence(rng: Any) -> str:
    """A fence whose content holds runs of its own character in every position that can
    or cannot close it (indented, with white space of any kind around, shorter, longer,
    beside other text), closed or not, and sometimes not followed by a blank line."""
    char = rng.choice(_FENCE_CHARS)
    length = rng.choice((3, 3, 4, 5))
    info = rng.choice(("", "diff", "a`b", "~x", " py "))
    lines = [char * length + info]
    for _ in range(rng.randrange(5)):
        if rng.random() < 0.7:
            lines.append(rng.choice(_LINES))
        else:
            run = rng.choice(_FENCE_CHARS) * rng.choice((1, 2, 3, 4, 5, 6))
            lines.append(rng.choice(_SPACES) + run + rng.choice(_SPACES) + rng.choice(("", "", "x", " x")))
    closer = char * rng.choice((length, length, length, length + 1, length - 1))
    if rng.random() < 0.2:
        closer = rng.choice(_SPACES) + closer + rng.choice(_SPACES)
    return "\n".join([*lines, closer]) + ("\n\n" if rng.random() < 0.9 else rng.choice(("\n", "")))


@pytest.mark.parametrize("first", ["## 2. Turn", "  ## 2. Turn", "# Title", "===", "  ---"])
def test_a_heading_on_the_first_line_of_a_block_keeps_it_from_being_left_out(first: str) -> None:
    """The search for lines that could make a heading starts on the block's first line
    (led by the newline before it): inside a result block, a heading there is counted, so
    the block goes to the parser."""
    from piconv.converters.markdown import regions as rg

    block = f"<details>\n<summary>Result</summary>\n\n{first}\nwords\n\n</details>\n\nafter\n"
    assert rg.prose_block(block, block.index(first), len(block), True, rg.risky_lines(2)) == 0
    assert rg.fenced_block(block, 0, len(block), True, rg.risky_lines(2)) == 0
    plain = block.replace(first, "Words")
    assert rg.fenced_block(plain, 0, len(plain), True, rg.risky_lines(2)) == plain.index("\nafter")


def _section_newlines(body: str, turn_level: int, min_chars: int) -> list[tuple[int, int]]:
    """(newlines elide counted, newlines in the section) for each section of ``body``."""
    splitter = Splitter(turn_level, min_chars)
    found = []
    while True:
        section = splitter.next(body, True)
        assert section is not None
        found.append((elide(body, section).newlines, body.count("\n", section.start, section.end)))
        if section.end == len(body):
            return found
        splitter.reset(section.end)


@pytest.mark.shared
@pytest.mark.parametrize("path", CALLS, ids=[p.stem for p in CALLS])
def test_elide_counts_the_lines_of_the_section(path: Path) -> None:
    """The checker takes a section's line count from elide's counts of its parts (which
    line numbers rest on), with sections of every size and a last heading without its
    newline."""
    text = convert(path, images="omit")
    body = text[text.index("\n---\n") + 5 :]
    for cut_body in (body, body.rstrip("\n") + "\n\n## 99. Last", body + "## 99. Last"):
        for min_chars in (0, 1000, checker.SECTION_CHARS):
            counts = _section_newlines(cut_body, 2, min_chars)
            assert all(a == b for a, b in counts), counts


_PROSE_LINES = (
    "Plain words", "a `b` c", "x ``y`` z", "a ``` b", "~~ x ~~", "x ~~~", "<b>", "a [b] c", "# One", "## Two",
    "### Three", "  ## Two", "\t# One", "##", "##x", "===", "  ---", "- item", "---x", "> quote", "1. item", "`",
)  # fmt: skip
