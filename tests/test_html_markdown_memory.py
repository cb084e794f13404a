"""Rendering Markdown through cmark must not leak: a long session renders thousands of texts."""

from __future__ import annotations

from piconv.converters.html.highlight import Highlighter
from piconv.converters.html.markdown import MarkdownRenderer


def _rss_mib() -> int:
    with open("/proc/self/status") as fh:
        return int(fh.read().split("VmRSS:")[1].split()[0]) // 1024


def test_rendering_many_texts_keeps_memory_flat() -> None:
    text = (
        "Some *markdown* with `code`, a [link](https://example.org) and a table.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        * 1500
    )[:150_000]
    renderer = MarkdownRenderer(Highlighter())
    renderer.render(text)
    before = _rss_mib()
    for _ in range(40):
        assert "<table>" in renderer.render(text)
    # leaking, this grew by about 6 MiB per call (240 MiB here)
    assert _rss_mib() - before < 20
