"""The checker parses with cmark-gfm; it replaced one that parsed with markdown-it-py.
Both read CommonMark, so the verdicts must not have moved: on every corpus and hostile
output (as a path and as a tree) and on every output the section tests break on purpose,
the problems found, their count, lines and kinds, are those the markdown-it checker
found. ``tests/data/markdown/checker-verdicts.json`` holds what it found, recorded before
the change (the first five problems of each, without the text they quote); it is a
record of the old checker and is never written from this one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from piconv.converters.markdown import checker

from .conftest import REPO
from .test_markdown_sections import (
    CALLS,
    MUTATED,
    PROSE,
    SOURCES,
    _call_mutations,
    _mutations,
    _prose_mutations,
    _turn_starts,
    convert,
)

pytestmark = pytest.mark.shared  # every test here reads the reference material

RECORDED = json.loads((REPO / "tests" / "data" / "markdown" / "checker-verdicts.json").read_text("utf-8"))


def _key(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _cases(path: Path) -> dict[str, str]:
    """name -> output, as the recording named them."""
    out = {}
    for tree in (False, True):
        out[f"{'tree' if tree else 'path'}|as written"] = convert(path, all_branches=tree)
    if path in MUTATED or path in CALLS or path in PROSE:
        text = convert(path, images="omit")
        broken: dict[str, tuple[str, bool | None]] = {}
        if len(_turn_starts(text)) >= 3:
            broken.update(_mutations(text))
        if path in CALLS:
            broken.update(_call_mutations(text))
        if path in PROSE:
            broken.update(_prose_mutations(text))
        out.update({f"omit|{name}": bad for name, (bad, _) in broken.items()})
    return out


def _shape(problems: list[str]) -> dict[str, object]:
    """What was recorded of a verdict: the count, and the first five problems up to the
    text they quote."""
    return {"problems": len(problems), "first": [re.sub(r"['\"].*$", "", p).rstrip() for p in problems[:5]]}


@pytest.mark.parametrize("path", SOURCES, ids=[_key(p) for p in SOURCES])
def test_the_verdicts_are_those_of_the_markdown_it_checker(path: Path) -> None:
    cases = _cases(path)
    recorded = {k.split("|", 1)[1]: v for k, v in RECORDED.items() if k.split("|", 1)[0] == _key(path)}
    assert set(cases) == set(recorded), "the outputs recorded are the outputs made"
    for name, text in cases.items():
        data = text.encode("utf-8")
        whole = checker.check_whole(data)
        assert _shape(whole) == recorded[name], (name, whole[:3])
        assert checker.check(data) == whole, name


def test_every_recorded_source_is_checked() -> None:
    keys = {k.split("|", 1)[0] for k in RECORDED}
    assert keys == {_key(p) for p in SOURCES}
