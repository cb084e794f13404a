"""HTML pages of the corpus: every code block names a language the page embeds, and the
tree overview stays small and proportional to the session."""

from __future__ import annotations

import io
import re

import piconv
import pytest
from conftest import SHARED, corpus_files
from piconv.converters.html import check, write
from piconv.converters.html.highlight import with_requirements
from piconv.report import Report

pytestmark = pytest.mark.shared  # every test here reads the reference material


def _page(path: object, **options: object) -> str:
    out = io.BytesIO()
    write(piconv.load(path), out, options, Report("html"))
    assert check(out.getvalue()) == []
    return out.getvalue().decode()


def test_the_largest_source_file_read_names_its_language() -> None:
    # before-compaction.jsonl reads main.ts (1,544 lines) first; Pygments' size caps used
    # to leave most of this session's code plain.
    page = _page(SHARED / "corpus" / "pi" / "badlogic__pi-mono__before-compaction.jsonl")
    start = page.index('<span class="tool-path"')
    assert "main.ts" in page[start : start + 300]
    block = page[start : page.index("</section>", start)]
    assert block.count("\n") > 1500
    # the preview of the folded block names the language too, and is coloured as it is
    assert '<span class="preview"><code class="language-typescript">' in block
    whole = '<pre class="hl"><code class="language-typescript">'
    assert "<span" not in block[block.index(whole) :]  # coloured in the browser
    assert 'hljs.registerLanguage("typescript"' in page


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_every_language_a_block_names_is_embedded_and_no_other(path: object) -> None:
    # The grammars are chosen before the body is written (languages.py); the blocks
    # name exactly those, so none is missing (a block would stay plain) or wasted.
    page = _page(path)
    named = set(re.findall(r'<code class="language-([a-z]+)">', page))
    embedded = set(re.findall(r'hljs\.registerLanguage\("([^"]+)"', page))
    assert embedded == set(with_requirements(named))
    assert ("Highlight.js v" in page) == bool(named)


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_the_tree_overview_is_one_short_line_per_entry(path: object) -> None:
    doc = piconv.load(path)
    page = _page(path)
    start = page.index('<details class="overview"')
    tree = page[start : page.index('<main id="transcript">', start)]
    lines = re.findall(r'<li class="k-[^"]*"><a href="#([^"]+)">', tree)
    assert len(lines) == len(doc.entries) == len(set(lines))
    # Linear and small: a fixed head plus a short line per entry, well under the page.
    assert len(tree) < 2_000 + 400 * len(doc.entries)
    if len(doc.entries) > 100:
        assert len(tree) < 0.15 * len(page)
