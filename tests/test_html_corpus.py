"""HTML pages of the corpus: the default highlighting caps cover the code readers open,
and the tree overview stays small and proportional to the session."""

from __future__ import annotations

import io
import re

import piconv
import pytest
from conftest import SHARED, corpus_files
from piconv.converters.html import check, write
from piconv.converters.html.highlight import DEFAULT_BLOCK_LIMIT
from piconv.report import Report


def _page(path: object, **options: object) -> str:
    out = io.BytesIO()
    write(piconv.load(path), out, options, Report("html"))
    assert check(out.getvalue()) == []
    return out.getvalue().decode()


def test_the_largest_source_file_read_is_highlighted() -> None:
    # before-compaction.jsonl reads main.ts (1,544 lines) first; a 10,000-character block
    # limit and a 50,000-character budget used to leave it plain.
    page = _page(SHARED / "corpus" / "pi" / "badlogic__pi-mono__before-compaction.jsonl")
    start = page.index('<span class="tool-path">')
    assert "main.ts" in page[start : start + 200]
    block = page[start : page.index("</section>", start)]
    assert block.count("\n") > 1500
    assert block.count('<span class="k') > 500  # keywords of the TypeScript source


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_every_code_block_of_the_corpus_fits_the_block_limit(path: object) -> None:
    # A block over the limit would stay plain however much budget is left.
    page = _page(path, highlight_budget=0)
    for m in re.finditer(r'<pre class="hl"><code>(.*?)</code></pre>', page, re.S):
        assert len(m.group(1)) <= DEFAULT_BLOCK_LIMIT * 1.3  # escaping adds a little


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
