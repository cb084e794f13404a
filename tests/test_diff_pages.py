"""``piconv diff`` of hostile sessions: the text cannot drive the terminal, the JSON is
JSON, and the pages are as safe as every page of their formats: the HTML page passes its
format's own check and the Nu Html Checker, and a browser opening it runs nothing but its
own script; the Markdown page renders to no markup, link or raw HTML of the session's.

The hostile sessions are those of the fuzz test (tests/hostile.py), and the fixed hostile
files of tests/data/hostile.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import cmarkgfm
import hostile
import piconv
import pytest
from cmarkgfm.cmark import Options
from conftest import SHARED
from hypothesis import given
from piconv.compare import render_text
from piconv.compare.text import width_of
from piconv.jsonio import dumps, loads
from piconv.terminal import shown
from test_fuzz import FUZZ
from test_html_browser import CHROMIUM, VNU, _chromium, _console, _Dom, _need

REPO = Path(__file__).resolve().parent.parent
HOSTILE = sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl"))
GENERATED = SHARED / "corpus" / "pi-generated"

# What the Markdown page is made of once rendered: its own headings, paragraphs, tables
# and code spans. Anything else (a link, an image, raw HTML, emphasis a session's text
# would make) came from a session.
_OWN_TAGS = {"h1", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "code"}
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>")


def check_page(page: bytes) -> list[str]:
    """The HTML format's own check, as ``piconv validate --format html`` runs it."""
    check = piconv.get_format("html").check
    assert check is not None
    return check(page)


def _diffs(data: bytes) -> list[piconv.SessionDiff]:
    document = hostile.read(data)
    if document is None:
        return []
    leaves = document.leaves()
    out = [piconv.diff(document, document)]
    if len(leaves) >= 2:
        out.append(piconv.diff(document, leaf=leaves[0].id, against=leaves[-1].id))
    return out


def _check_markdown(page: bytes) -> None:
    html = cmarkgfm.github_flavored_markdown_to_html(page.decode("utf-8"), options=Options.CMARK_OPT_UNSAFE)
    for closing, tag, attrs in _TAG.findall(html):
        assert tag.lower() in _OWN_TAGS, f"<{closing}{tag}{attrs}> in the rendered Markdown page"
        assert not attrs.strip() or re.fullmatch(r' align="(left|right|center)"', attrs), attrs


def _check_text(diff: piconv.SessionDiff) -> None:
    text = render_text(diff, 60)
    for line in text.splitlines():
        assert width_of(line) <= 60
        assert shown(line) == line, "a control character reached the terminal"


@FUZZ
@given(data=hostile.sessions())
def test_hostile_sessions_make_safe_diffs(data: bytes) -> None:
    for diff in _diffs(data):
        _check_text(diff)
        assert loads(dumps(diff.to_json()))["kind"] == diff.kind
        page = piconv.render_diff(diff, "html")  # checked by the format's own check as it is drawn
        assert check_page(page) == []
        _check_markdown(piconv.render_diff(diff, "markdown"))


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Diff pages of the fixed hostile files: each against the next, and its own first
    leaf against its last."""
    out = tmp_path_factory.mktemp("diff")
    docs = [piconv.load(p) for p in HOSTILE if p.name.startswith("html-")]
    result: dict[str, Path] = {}
    for k, doc in enumerate(docs):
        pairs = [("sessions", piconv.diff(doc, docs[(k + 1) % len(docs)]))]
        leaves = doc.leaves()
        if len(leaves) >= 2:
            pairs.append(("leaves", piconv.diff(doc, leaf=leaves[0].id, against=leaves[-1].id)))
        for what, diff in pairs:
            name = f"hostile-{k}-{what}.html"
            (out / name).write_bytes(piconv.render_diff(diff, "html"))
            result[name] = out / name
            _check_markdown(piconv.render_diff(diff, "markdown"))
            _check_text(diff)
    return result


def _corpus_pages(out: Path) -> dict[str, Path]:
    """The pages of the corpus's two checks."""
    result = {}
    for name, diff in (
        ("options.html", piconv.diff(GENERATED / "branching.jsonl", leaf="option-A", against="option-B")),
        ("fork.html", piconv.diff(GENERATED / "branching.jsonl", GENERATED / "branching-fork.jsonl")),
    ):
        (out / name).write_bytes(piconv.render_diff(diff, "html"))
        result[name] = out / name
    return result


def test_hostile_files_make_pages_that_pass_the_formats_check(pages: dict[str, Path]) -> None:
    assert len(pages) >= 2
    for path in pages.values():
        assert check_page(path.read_bytes()) == []


@pytest.mark.shared
def test_nu_html_checker_finds_no_errors_in_diff_pages(pages: dict[str, Path], tmp_path: Path) -> None:
    _need(shutil.which("java") is not None and Path(VNU).is_file(), "java with vnu.jar")
    every = {**pages, **_corpus_pages(tmp_path)}
    proc = subprocess.run(
        ["java", "-jar", VNU, "--errors-only", "--format", "json", *map(str, every.values())],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(proc.stderr or proc.stdout or '{"messages": []}')
    errors = [
        f"{Path(m.get('url', '')).name}:{m.get('lastLine')}: {m.get('message')}" for m in report["messages"]
    ]
    assert errors == []
    assert proc.returncode == 0


def test_hostile_diff_pages_run_nothing_in_a_browser(pages: dict[str, Path]) -> None:
    _need(CHROMIUM is not None, "chromium")
    for name, path in pages.items():
        dom, log = _chromium(path.as_uri())
        parsed = _Dom()
        parsed.feed(dom)
        assert parsed.problems == [], name
        assert parsed.scripts == 1, name  # the page's own, which shows its button
        assert 'id="only"' in dom and 'id="only" hidden' not in dom, (
            f"{name}: the page's own script did not run"
        )
        console = _console(log)
        assert not [c for c in console if "PWNED" in c], name
        assert not [c for c in console if "Content Security Policy" in c], name
