"""GFM's extended autolinks swallow the backslash that escapes a ``<``.

An extended autolink (``www.``, ``http://``, ``https://``) runs to the next space or
``<`` whatever it meets, a backslash included: in ``http://x\\<b onmouseover=...>`` the
link takes ``http://x\\`` and the ``<b ...>`` after it is raw HTML again, for cmark-gfm
as GitHub and other GFM viewers render it. A link that runs straight into a ``<`` has its
start escaped (``http\\://``: no link, the same text), and any other ``<`` on a line still
holding a link's start is written ``&lt;``, which no link can take apart; either way the
text reads the same.
"""

from __future__ import annotations

import io

import cmarkgfm
import piconv
import pytest
from cmarkgfm.cmark import Options

from .conftest import session_bytes
from .test_markdown import TagAudit, assert_valid, rendered_html

PAYLOADS = [
    "http://x<b onmouseover=alert(1)>hi",
    "see https://e.com/a<img src=x onerror=alert(1)>",
    "www.example.com<b onclick=alert(1)>x",
    "http://x\\<b onmouseover=alert(1)>escaped by the author",
    "http://x\\\\\\<b onmouseover=alert(1)>three backslashes",
    "https://e.com<javascript:alert(1)>",
    "HTTP://X<b onmouseover=alert(1)>",
    "http://x`a`<b onclick=alert(1)>after a code span",
    "a `b` http://x<b onclick=alert(1)> c `d`",
    "http://x<b onclick=alert(1)>\n```\ncode\n```\nwww.x<b onclick=alert(2)>",
    "- item\n\n  ```\n  code\n  ```\nhttp://x<b onclick=alert(1)>",
]


def _session(text: str) -> bytes:
    return session_bytes(
        {
            "type": "session_info",
            "id": "n1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "name": text,
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": "n1",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": text},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": text}]},
        },
    )


def _gfm(markdown_text: str) -> list[object]:
    audit = TagAudit()
    for html in rendered_html(markdown_text).values():
        audit.feed(html)
    # an upper-case scheme is still http(s), which TagAudit spells in lower case only
    return [b for b in audit.bad if not (isinstance(b, tuple) and str(b[2]).lower().startswith("http"))]


@pytest.mark.parametrize("text", PAYLOADS)
def test_an_autolink_cannot_unescape_raw_html(text: str) -> None:
    out = io.BytesIO()
    piconv.convert(piconv.load(_session(text)), "markdown", out)
    markdown_text = out.getvalue().decode()
    assert_valid(markdown_text)
    assert _gfm(markdown_text) == []


@pytest.mark.parametrize(
    "text", ["http://x<b>", "www.a <i> b", "a\\<b> http://x", "www.y.z<i> and https://e.com <b>"]
)
def test_the_text_reads_the_same(text: str) -> None:
    out = io.BytesIO()
    piconv.convert(piconv.load(_session(text)), "markdown", out)
    body = out.getvalue().decode().split("\n---\n", 1)[1]
    html = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    shown = "&lt;" + text.split("<", 1)[1].split(">", 1)[0] + "&gt;"
    thinking = html.split("<summary>Thinking</summary>", 1)[1]  # a message's body, not a heading
    assert shown in thinking or shown.replace("&gt;", ">") in thinking


def test_the_directory_index_in_markdown_keeps_titles_inert(tmp_path: object) -> None:
    from piconv import ListedSession
    from piconv.converters.markdown.index import page

    row = ListedSession(
        project="http://p<b onclick=alert(1)>",
        title="http://x<b onmouseover=alert(1)>t",
        link="./s.md",
        output="s.md",
        file="s.jsonl",
        cwd="www.x<b onclick=alert(1)>",
        created="",
        updated="",
        models=("https://m<img src=x onerror=alert(1)>",),
        turns=1,
        tokens=1,
        cost=0.0,
        failed=False,
    )
    text = page({row.project: [row]})
    html = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)
    audit = TagAudit()
    audit.feed(html)
    assert [b for b in audit.bad if b != ("a", "href", "./s.md")] == []


# Indented code is code for cmark, but not for every renderer: markdown-it with its GFM
# table rule (VS Code's preview, among others) reads ``*     <script>||`` above ``-|-``
# as a table row, not as a list item holding indented code. Only fenced code is left as
# it is (its opening line's info string aside: below); an indented block gets the same
# escapes as the text around it (a visible backslash, as in text without fences).
DIVERGING = [
    "    ```\n*     <script>alert(1)</script>||\n-|-",
    "\t*<img src=x onerror=alert(1)>|\n-|-\n ```",
    "- a\n\n  ```\n  x\n  ```\n\n      <b onclick=alert(1)>|\n-|-",
]


def _assert_inert_with_tables(text: str) -> str:
    """The Markdown of a session holding ``text``, checked, and inert under markdown-it
    with its GFM table rule and under cmark-gfm."""
    from markdown_it import MarkdownIt

    out = io.BytesIO()
    piconv.convert(piconv.load(_session(text)), "markdown", out)
    markdown_text = out.getvalue().decode()
    assert_valid(markdown_text)
    body = markdown_text.split("\n---\n", 1)[1]
    audit = TagAudit()
    audit.feed(MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(body))
    assert audit.bad == []
    assert _gfm(markdown_text) == []
    return markdown_text


@pytest.mark.parametrize("text", DIVERGING)
def test_indented_code_is_inert_for_a_renderer_that_reads_it_as_a_table(text: str) -> None:
    _assert_inert_with_tables(text)


# markdown-it tries a table before a fence: an opener line whose info string holds a
# ``|``, above a delimiter row, makes the fence's lines table cells and their HTML live.
# The ``|`` of an info string is written as a character reference (the same info
# string to CommonMark).
FENCE_OPENERS_WITH_A_PIPE = [
    "```x|y\n-|-\n<img src=x onerror=alert(1)>|z\n```",
    "~~~x|y\n-|-\n<img src=x onerror=alert(1)>|z\n~~~",
    "- ```x|y\n  -|-\n  <img src=x onerror=alert(1)>|z\n  ```",
    "> ```x|y\n> -|-\n> <img src=x onerror=alert(1)>|z\n> ```",
    "   ```x|y\n-|-\n<img src=x onerror=alert(1)>|z\n```",
    "```|\n-|-\n<img src=x onerror=alert(1)>|z",
]


@pytest.mark.parametrize("text", FENCE_OPENERS_WITH_A_PIPE)
def test_a_fence_whose_info_string_holds_a_pipe_is_not_read_as_a_table(text: str) -> None:
    markdown_text = _assert_inert_with_tables(text)
    after = markdown_text[markdown_text.index("&#124;") :]
    assert "<img src=x onerror=alert(1)>|z\n" in after  # the code itself, as written


# A fence opened in a list item or quote by the last text of the document ran to the end
# of the file: nothing after it closed the container, and the checker refused the output
# (exit 5), so such a session could not be converted to Markdown at all.
@pytest.mark.parametrize("text", ["* ```", "> * ```", "- a\n- ```\n  code", "1. > ~~~~\n   > x", "  - ```"])
def test_a_fence_left_open_in_a_container_at_the_end_is_closed(text: str) -> None:
    out = io.BytesIO()
    data = session_bytes(
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": text},
        }
    )
    piconv.convert(piconv.load(data), "markdown", out)
    assert_valid(out.getvalue().decode())
