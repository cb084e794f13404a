"""Markdown text holding a fence in a list or quote takes its block structure from the
checker's parser (cmark-gfm, the CommonMark reference): where code is, and what is a
heading, must be read as that parser reads the output, so nothing escaping left alone
as "code" is live HTML or a live definition for a CommonMark renderer."""

from __future__ import annotations

import re

import cmarkgfm
import pytest
from piconv.converters.markdown import escape


def _html(markdown: str) -> str:
    return cmarkgfm.markdown_to_html(markdown, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # A fence left open in a list ends with the list: the line that ends the list is
        # not code, though the parser counts it as the fence's last line.
        ("- ```\n  a\n<b>x</b>", "\\<b>x\\</b>"),
        ("- ```\n  a\n[r]: javascript:x", "[r]\\: javascript:x"),  # a definition, no paragraph
        ("> ```\n> a\n<i>y</i> [r]", "\\<i>y\\</i> [r]"),
        # Indented text below a definition continues its paragraph: not code.
        ("- ```\n  a\n  ```\n\n[r]: https://x.y\n    code <b>", "    code \\<b>"),
    ],
)
def test_lines_after_a_fence_in_a_container_are_escaped(text: str, line: str) -> None:
    out = escape.markdown(text, 2)
    assert line in out.split("\n"), out
    assert not re.search(r"<(b|i)>|href=\"javascript", _html(out)), out


@pytest.mark.parametrize(
    "text",
    [
        "- ```\n  <b>\n  ```\n",  # closed in the list: the closing line is the fence's
        "> ```\n> <b>\n> ```\n",
        "- ```\n  <b>\n",  # left open to the end
    ],
)
def test_code_stays_byte_for_byte(text: str) -> None:
    out = escape.markdown(text, 2)
    assert "<b>" in out and "\\<b>" not in out, out
    assert "<b>" not in re.sub(r"<pre><code>.*?</code></pre>", "", _html(out), flags=re.S)


def test_indented_code_gets_the_escapes_of_text() -> None:
    """Renderers disagree on indented code (markdown-it's table rule), so it is escaped
    as in text without fences: a visible backslash, never live HTML."""
    out = escape.markdown("    <b> indented\n\n- ```\n  x\n  ```", 2)
    assert out.split("\n")[0] == "    \\<b> indented", out


def test_a_setext_heading_after_a_definition_keeps_the_definition_out() -> None:
    """The parser starts the heading at the definition's line; only the lines holding
    its text become the heading (demoted), the definition stays a line of its own."""
    text = "- ```\n  x\n  ```\n\n[r]: https://x.y\nTitle\n===\n\n[r]"
    out = escape.markdown(text, 2).split("\n")
    assert "[r]: https://x.y" in out and "### Title" in out, out
