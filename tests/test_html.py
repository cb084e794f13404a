"""Unit tests of the HTML converter on hand-built documents: escaping and URL policy,
Markdown with HTML disabled, per-tool rendering, the tree with every branch, limits."""

from __future__ import annotations

import io
import re

import pytest
from piconv.converters.html import check, write
from piconv.converters.html.escape import anchor, clean, has_forbidden, image_src, safe_href, text
from piconv.converters.html.highlight import Highlighter
from piconv.converters.html.markdown import MarkdownRenderer
from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Document,
    Entry,
    Image,
    Label,
    MessageBody,
    ModelRef,
    Origin,
    Reasoning,
    SessionInfo,
    ShellCommand,
    Text,
    ToolCall,
    ToolResult,
    UserMessage,
)
from piconv.report import Report

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="


def E(eid: str, parent: str | None, body: object, ts: str = "2026-01-01T00:00:00Z") -> Entry:
    b = (
        body
        if not isinstance(body, (UserMessage, AssistantMessage, ToolResult, ShellCommand))
        else MessageBody(body)
    )
    return Entry(id=eid, parent_id=parent, timestamp=ts, body=b, origin=Origin(line=1))  # type: ignore[arg-type]


def render(doc: Document, **options: object) -> str:
    out = io.BytesIO()
    write(doc, out, options, Report("html"))
    data = out.getvalue()
    assert check(data) == []
    return data.decode()


def doc_of(*entries: Entry, leaf: str | None = None) -> Document:
    return Document(session=SessionInfo(id="s"), entries=entries, leaf_id=leaf or entries[-1].id)


# --------------------------------------------------------------------------- escaping


def test_text_escapes_markup_and_forbidden_code_points() -> None:
    assert text('<a href="x">&</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
    assert clean("a\x00b\ufdd0c\ud800d\r\ne\x85f\U0010ffff") == "a\ufffdb\ufffdc\ufffdd\ne\ufffdf\ufffd"
    for ok in ("plain ascii\ttab\n", "é ü © \u00a0 ﷏ \ufdf0 \U0001f600 \uffef"):
        assert not has_forbidden(ok) or clean(ok) == ok
        assert clean(ok) == ok
    for bad in ("\x00", "\x7f", "\x9f", "\ufdd0", "\ufdef", "\ufffe", "\U0001ffff", "\U0010fffe", "\ud800"):
        assert has_forbidden("x" + bad + "y") and clean(bad) == "\ufffd"


def test_pages_carry_no_forbidden_code_points() -> None:
    doc = doc_of(E("u", None, UserMessage(content="a\x00b \ufdd0 `\ufffe` \ud800 \x1b[31mred")))
    html = render(doc)
    assert "a\ufffdb" in html and "\x00" not in html and "\ufdd0" not in html and "\x1b" not in html


def test_anchor_is_a_valid_injective_id() -> None:
    ids = ["a b", "a_20_b", 'x" onclick="y', "é", "a-b", ""]
    anchors = [anchor(i) for i in ids]
    assert len(set(anchors)) == len(ids)
    assert all(re.fullmatch(r"e-[A-Za-z0-9_-]*", a) for a in anchors)


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://example.com/x?a=1", True),
        ("http://example.com", True),
        ("javascript:alert(1)", False),
        ("JaVaScRiPt:alert(1)", False),
        ("java\tscript:alert(1)", False),
        (" javascript:alert(1)", False),
        ("vbscript:x", False),
        ("data:text/html,<script>", False),
        ("file:///etc/passwd", False),
        ("./relative.html", False),
        ("//evil.example/x", False),
        ("mailto:a@b.c", False),
        ("http:///nohost", False),
    ],
)
def test_only_absolute_http_links_survive(url: str, ok: bool) -> None:
    assert (safe_href(url) is not None) is ok


def test_image_allow_list_and_signature() -> None:
    assert image_src("image/png", PNG)[0] == f"data:image/png;base64,{PNG}"
    assert image_src("IMAGE/PNG", PNG)[0] is not None
    assert image_src("image/svg+xml", "PHN2Zz48L3N2Zz4=")[0] is None
    assert image_src("text/html", PNG)[0] is None
    assert image_src('image/png" onerror="x', PNG)[0] is None
    assert image_src("image/jpeg", PNG)[1] == "image data does not match its type"
    assert image_src("image/png", '"><script>')[0] is None
    assert image_src("image/png", None)[0] is None


# --------------------------------------------------------------------------- markdown


@pytest.fixture(scope="module")
def md() -> MarkdownRenderer:
    return MarkdownRenderer(Highlighter({"python"}))


def test_markdown_raw_html_is_text(md: MarkdownRenderer) -> None:
    out = md.render(
        'Hi <script>alert(1)</script> <img src=x onerror="a()"> `<b>` **b**\n\n<div>\nblock\n</div>'
    )
    assert "<script" not in out and "<img" not in out and "<div" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "<code>&lt;b&gt;</code>" in out and "<strong>b</strong>" in out
    assert "&lt;div&gt;" in out


def test_markdown_links_and_images(md: MarkdownRenderer) -> None:
    out = md.render(
        "[a](javascript:alert(1)) [b](https://ok.example/) [c](./rel) <https://auto.example> "
        f"![r](https://img.example/x.png) ![d](data:image/png;base64,{PNG}) ![s](data:image/svg+xml;base64,AAAA)"
    )
    hrefs = re.findall(r'href="([^"]*)"', out)
    assert hrefs == ["https://ok.example/", "https://auto.example", "https://img.example/x.png"]
    assert re.findall(r'src="([^"]*)"', out) == [f"data:image/png;base64,{PNG}"]
    assert '<a class="blocked-link">a</a>' in out
    assert "[image: s]" in out


def test_markdown_tables_code_and_sentinel(md: MarkdownRenderer) -> None:
    out = md.render("| a | b |\n|:-:|--:|\n| 1 | 2 |\n\n```python\nx = '<s>'\n```\n\n\ufdd0 stays out")
    assert 'class="al-center"' in out and "align=" not in out
    # The language is named for the browser's highlighter; the text stays escaped.
    assert '<pre class="hl"><code class="language-python">x = \'&lt;s&gt;\'\n</code></pre>' in out
    assert "\ufdd0" not in out and "\ufffd stays out" in out


# --------------------------------------------------------------------------- page


def _sample() -> Document:
    return doc_of(
        E("u1", None, UserMessage(content="Fix <b>it</b> please")),
        E(
            "a1",
            "u1",
            AssistantMessage(
                content=(
                    Reasoning(text="thinking about it"),
                    Text(text="On it."),
                    ToolCall(call_id="c1", name="bash", arguments={"command": "make test"}),
                    ToolCall(
                        call_id="c2", name="read", arguments={"path": "src/x.py", "offset": 3, "limit": 2}
                    ),
                    ToolCall(
                        call_id="c3",
                        name="edit",
                        arguments={"path": "src/x.py", "oldText": "a\nb", "newText": "a\nc"},
                    ),
                    ToolCall(call_id="c4", name="custom_tool", arguments={"k": "</script>"}),
                ),
                model=ModelRef("prov", "mod"),
            ),
        ),
        E(
            "r1",
            "a1",
            ToolResult(
                call_id="c1", content=(Text(text="boom\n\nCommand exited with code 2"),), is_error=True
            ),
        ),
        E("r2", "r1", ToolResult(call_id="c2", content=(Text(text="def f():\n    return 1"),))),
        E(
            "r3",
            "r2",
            ToolResult(call_id="c3", content=(Text(text="ok"),), details={"diff": "  1 a\n- 2 b\n+ 2 c"}),
        ),
        E("r4", "r3", ToolResult(call_id="c4", content="done")),
        E("u2", "r4", UserMessage(content="first branch")),
        E(
            "u3",
            "r4",
            UserMessage(content=(Text(text="second branch"), Image(data=PNG, media_type="image/png"))),
        ),
        E("l1", "u3", Label(target_id="u1", label="start")),
        leaf="l1",
    )


def test_every_entry_has_an_anchor_and_results_sit_in_their_calls() -> None:
    html = render(_sample())
    for eid in ("u1", "a1", "r1", "r2", "r3", "r4", "u2", "u3", "l1"):
        assert f'id="{anchor(eid)}"' in html
    # Results are drawn inside the assistant entry that called them.
    assistant = html[html.index(f'id="{anchor("a1")}"') : html.index(f'id="{anchor("u2")}"')]
    assert "boom" in assistant and '<span class="exit bad">exit 2</span>' in assistant
    assert "Command exited" not in assistant
    assert '<span class="tool-path">src/<wbr><span class="nb">x.py:3-4</span></span>' in assistant
    assert '<code class="language-python">def f():' in assistant  # language by path
    assert '<span class="del">- 2 b</span>' in assistant and '<span class="add">+ 2 c</span>' in assistant
    assert "&lt;/script&gt;" in assistant and "</script>" not in assistant


def test_leaf_path_open_other_branches_closed() -> None:
    html = render(_sample())
    closed = re.search(r'<details class="branch" id="b-u2">', html)
    opened = re.search(r'<details class="branch on-path" id="b-u3" open>', html)
    assert closed and opened
    assert "Fix &lt;b&gt;it&lt;/b&gt; please" in html
    assert '<span class="label">start</span>' in html
    assert f'src="data:image/png;base64,{PNG}"' in html


def _overview_lines(html: str) -> dict[str, tuple[set[str], str]]:
    tree = html[html.index('<details class="overview"') : html.index('<main id="transcript">')]
    return {
        m.group(2): (set(m.group(1).split()), m.group(3))
        for m in re.finditer(r'<li class="([^"]*)"><a href="#([^"]+)">(.*?)</a></li>', tree)
    }


def test_tree_overview_lists_every_entry_with_its_kind_and_the_open_path() -> None:
    html = render(_sample())
    lines = _overview_lines(html)
    assert set(lines) == {anchor(e) for e in ("u1", "a1", "r1", "r2", "r3", "r4", "u2", "u3", "l1")}
    cls = {k: v[0] for k, v in lines.items()}
    assert {"k-user", "cur", "lab"} <= cls[anchor("u1")]  # labelled "start" by l1
    assert '<span class="label">start</span>' in lines[anchor("u1")][1]
    assert "k-asst" in cls[anchor("a1")] and "quiet" not in cls[anchor("a1")]  # it has text
    assert "k-tool" in cls[anchor("r1")] and "err" in cls[anchor("r1")]
    assert "read: src/x.py" in lines[anchor("r2")][1]  # a result is named by its call
    assert "k-set" in cls[anchor("l1")] and {"cur", "leaf"} <= cls[anchor("l1")]
    assert "cur" not in cls[anchor("u2")]  # the other branch
    assert "2 branches" in lines[anchor("r4")][1]
    # Session text is escaped in the overview like everywhere else.
    assert "Fix &lt;b&gt;it&lt;/b&gt; please" in lines[anchor("u1")][1]
    # Branch u2 and branch u3 are nested lists below the fork, in file order.
    tree = html[html.index('<details class="overview"') : html.index('<main id="transcript">')]
    fork = tree.index('<li class="ov-fork">')
    assert tree.index(anchor("r4")) < fork < tree.index(anchor("u2")) < tree.index(anchor("u3"))
    # The controls need the script: they start hidden.
    assert '<div class="ov-tools" id="ov-tools" hidden>' in tree
    assert '<div id="controls" class="controls" hidden>' in html


def test_tree_overview_previews_are_short_whatever_the_text() -> None:
    doc = doc_of(
        E("u", None, UserMessage(content="word " * 200_000)),
        E("a", "u", AssistantMessage(content=(ToolCall(call_id="c", name="bash", arguments={}),))),
    )
    lines = _overview_lines(render(doc))
    assert len(lines[anchor("u")][1]) < 200
    assert "quiet" in lines[anchor("a")][0] and "calls bash" in lines[anchor("a")][1]


def test_branch_ends_are_named_without_a_walk_per_end() -> None:
    # Every end is below the one user message: each is named by it, in one pass.
    entries = [E("u", None, UserMessage(content="the prompt"))]
    parent = "u"
    for i in range(300):
        entries.append(E(f"a{i}", parent, AssistantMessage(content=(Text(text=f"a {i}"),))))
        entries.append(E(f"d{i}", parent, AssistantMessage(content=(Text(text=f"d {i}"),))))
        parent = f"a{i}"
    html = render(doc_of(*entries, leaf=parent))
    branches = html[html.index("Branches (") : html.index("</details>", html.index("Branches ("))]
    assert branches.count(">the prompt</a>") == 301


def test_leaf_option_opens_another_path() -> None:
    html = render(_sample(), leaf="u2")
    assert re.search(r'<details class="branch on-path" id="b-u2" open>', html)
    assert re.search(r'<details class="branch" id="b-u3">', html)


def test_header_facts() -> None:
    html = render(_sample())
    assert "<dt>Models</dt><dd>prov/mod</dd>" in html
    assert "<dt>Tool calls</dt><dd>4</dd>" in html
    assert "Branches (2 ends)" in html


def test_output_is_deterministic() -> None:
    assert render(_sample()) == render(_sample())


def test_long_output_is_collapsed_with_preview() -> None:
    long = "\n".join(f"line {i}" for i in range(100))
    doc = doc_of(
        E(
            "a",
            None,
            AssistantMessage(content=(ToolCall(call_id="c", name="bash", arguments={"command": "seq"}),)),
        ),
        E("r", "a", ToolResult(call_id="c", content=long)),
    )
    html = render(doc)
    m = re.search(
        r'<details class="output"><summary>Output <span class="count">\(100 lines\)</span><span class="preview">([^<]*)</span>',
        html,
    )
    assert m and m.group(1).count("\n") == 7
    assert "line 99" in html


def _read_doc(path: str, content: str) -> Document:
    return doc_of(
        E("u", None, UserMessage(content="show me")),
        E(
            "a",
            "u",
            AssistantMessage(content=(ToolCall(call_id="c", name="read", arguments={"path": path}),)),
        ),
        E("r", "a", ToolResult(call_id="c", content=content)),
    )


def _scripts_and_styles(page: str) -> tuple[list[str], list[str]]:
    """The text of every <script> and <style> element, as an HTML parser splits them."""
    from html.parser import HTMLParser

    class P(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.found: dict[str, list[str]] = {"script": [], "style": []}
            self.open: str | None = None

        def handle_starttag(self, tag: str, attrs: object) -> None:
            if tag in self.found:
                self.open = tag
                self.found[tag].append("")

        def handle_endtag(self, tag: str) -> None:
            self.open = None

        def handle_data(self, data: str) -> None:
            if self.open:
                self.found[self.open][-1] += data

    p = P()
    p.feed(page)
    return p.found["script"], p.found["style"]


def _csp(page: str) -> dict[str, list[str]]:
    m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    assert m
    return {d.split()[0]: d.split()[1:] for d in m.group(1).split(";") if d.split()}


def _sha(s: str) -> str:
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"


def _grammars(page: str) -> list[str]:
    return re.findall(r'hljs\.registerLanguage\("([^"]+)"', page)


def test_a_typescript_read_embeds_the_core_and_only_the_typescript_grammar() -> None:
    page = render(_read_doc("src/main.ts", "export const x: number = 1;\n"))
    assert '<code class="language-typescript">export const x: number = 1;\n</code>' in page
    scripts, _ = _scripts_and_styles(page)
    assert len(scripts) == 1
    assert "Highlight.js v11.11.1" in scripts[0] and "highlightElement" in scripts[0]
    assert _grammars(page) == ["typescript"]
    # The page script first, then highlight.js in a function of its own (no global hljs).
    assert scripts[0].index("data-js") < scripts[0].index("Highlight.js v11.11.1")
    assert "var hljs=(function(){" in scripts[0]


def test_a_page_without_code_embeds_no_highlightjs() -> None:
    from piconv.converters.html.embedded import read

    page_js = read("page.js")
    page = render(
        doc_of(E("u", None, UserMessage(content="hello")), E("a", "u", AssistantMessage(content="hi")))
    )
    assert _scripts_and_styles(page)[0] == [page_js] and "language-" not in page
    # Nor does a read of a file with no known language: the block stays plain.
    page = render(_read_doc("notes.unknownext", "text"))
    assert _scripts_and_styles(page)[0] == [page_js] and "language-" not in page


def test_each_language_named_once_and_requirements_embedded() -> None:
    text = (
        "```console\n$ ls\n```\n\n```Python\nx = 1\n```\n\n> ```ts\n> let a = 1\n> ```\n\n"
        "- item\n\n  ~~~~ rust\n  fn main() {}\n  ~~~~\n\n```made-up-language\nx\n```\n\n"
        "```&lt;script&gt;\nx\n```\n\n```text\nplain\n```\n"
    )
    page = render(doc_of(E("u", None, UserMessage(content=text))))
    named = re.findall(r'<code class="language-([^"]+)">', page)
    assert sorted(named) == ["python", "rust", "shell", "typescript"]
    # The shell-session grammar hands commands to bash: both are embedded, each once.
    assert sorted(_grammars(page)) == ["bash", "python", "rust", "shell", "typescript"]
    assert page.count("<script>") == 1


def test_csp_hashes_match_every_inline_script_and_style() -> None:
    pages = [
        render(_sample()),
        render(_read_doc("a.py", "x = 1\n")),
        render(doc_of(E("u", None, UserMessage(content="no code")))),
        render(doc_of(E("u", None, UserMessage(content="```json\n{}\n```\n```yaml\na: 1\n```")))),
    ]
    for page in pages:
        scripts, styles = _scripts_and_styles(page)
        policy = _csp(page)
        assert len(scripts) == 1 and len(styles) == 1
        assert policy["script-src"] == [_sha(scripts[0])]
        assert policy["style-src"] == [_sha(styles[0])]
        assert policy["default-src"] == ["'none'"]
    # Different grammars, different scripts: each page carries its own hash.
    assert len({tuple(_csp(p)["script-src"]) for p in pages}) == len(pages)


def test_hostile_code_stays_escaped_text_in_a_named_block() -> None:
    evil = '</script><script>alert(1)</script><img src=x onerror="alert(2)"><!--'
    page = render(_read_doc("x.ts", evil))
    assert "<script>alert" not in page and "<img src=x" not in page
    assert '<code class="language-typescript">&lt;/script&gt;&lt;script&gt;alert(1)' in page
    scripts, _ = _scripts_and_styles(page)
    assert len(scripts) == 1 and "alert(1)" not in scripts[0]


def test_every_grammar_the_tables_name_is_vendored_and_stays_inside_its_script() -> None:
    from piconv.converters.html import hljs
    from piconv.converters.html.highlight import LANGUAGES, with_requirements

    script = hljs.script(with_requirements(LANGUAGES))
    assert sorted(_grammars(script)) == sorted(LANGUAGES)
    # Nothing in it could end the <script> element early or start the parser's
    # "double escaped" state, and it evaluates nothing from strings.
    assert not re.search(r"</script|<script[\t\n\f\r />]", script, re.I)
    assert not re.search(r"\beval\(|new Function\(", script)


def test_language_tables() -> None:
    from piconv.converters.html.highlight import language_for_name, language_for_path

    assert language_for_path("a/b/main.TS") == "typescript"
    assert language_for_path("x/Dockerfile") == "dockerfile"
    assert language_for_path("README") is None and language_for_path("a.weird") is None
    assert language_for_name("JS") == "javascript" and language_for_name("html") == "xml"
    assert language_for_name("text") is None and language_for_name("constructor") is None


def test_deep_branching_is_flattened_and_complete() -> None:
    # A comb: every entry has a dead-end sibling, 200 levels deep.
    entries = [E("n0", None, UserMessage(content="root"))]
    for i in range(1, 201):
        entries.append(E(f"n{i}", f"n{i - 1}", UserMessage(content=f"main {i}")))
        entries.append(E(f"d{i}", f"n{i - 1}", UserMessage(content=f"dead {i}")))
    doc = doc_of(*entries, leaf="n200")
    html = render(doc)
    for e in entries:
        assert html.count(f'id="{anchor(e.id)}"') == 1
    depth = max_details_depth(html)
    assert depth <= 45


def max_details_depth(html: str) -> int:
    depth = best = 0
    for m in re.finditer(r"<(/?)details\b", html):
        depth += -1 if m.group(1) else 1
        best = max(best, depth)
    return best


def test_cycles_and_self_parents_do_not_hang_or_lose_entries() -> None:
    doc = Document(
        session=SessionInfo(),
        entries=(
            E("a", None, UserMessage(content="root")),
            E("x", "y", UserMessage(content="cycle x")),
            E("y", "x", UserMessage(content="cycle y")),
            E("s", "s", UserMessage(content="self")),
        ),
        leaf_id="a",
    )
    html = render(doc)
    assert "cycle x" in html and "cycle y" in html and "self" in html
    assert "Entries not reachable from the start" in html


def test_summaries_and_shell() -> None:
    doc = doc_of(
        E("c", None, Compaction(summary="## Goal\nship it", tokens_before=1234, first_kept_id="c")),
        E("b", "c", BranchSummary(summary="tried **B**", from_id="zz")),
        E("s", "b", ShellCommand(command="ls", output="a\nb", exit_code=1)),
    )
    html = render(doc)
    assert "1,234 tokens before" in html and "<h2>Goal</h2>" in html
    assert "<strong>B</strong>" in html
    assert '<span class="exit bad">exit 1</span>' in html


def test_registered_as_a_converter() -> None:
    from piconv.registry import build_registry

    conv = build_registry().get("html")
    assert conv.extension == ".html" and conv.media_type == "text/html"
    assert conv.check is not None
    # Highlighting happens in the browser: nothing to cap, so no options.
    assert conv.options == ()


def test_check_catches_injected_markup() -> None:
    page = render(_sample()).encode()
    assert check(page) == []
    for bad in (
        b'<p onclick="x">a</p>',
        b'<a href="javascript:x">b</a>',
        b'<a href="./rel">b</a>',
        b'<img src="http://x/y.png" alt="">',
        b'<img src="data:image/svg+xml;base64,AAAA" alt="">',
        b"<script>x()</script>",
        b"<svg></svg>",
        b'<div style="color:red">x</div>',
        b"<p title=x>a</p>",
    ):
        tampered = page.replace(b'<main id="transcript">', b'<main id="transcript">' + bad, 1)
        assert check(tampered), bad
    assert check(page.replace(b"default-src 'none'", b"default-src *"))
    assert check(page.replace(b"hashchange", b"hashchang_"))  # script no longer matches its hash


# --------------------------------------------------------------------------- one process


@pytest.mark.parametrize("jobs", [None, 1, 2])
def test_a_page_is_drawn_in_one_process(jobs: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """However long the session and whatever ``jobs`` asks: no fork, no thread, and the
    interpreter's collector left as it was."""
    import gc
    import os
    import threading
    from pathlib import Path

    import piconv

    doc = piconv.load(Path(__file__).parent / "data" / "hostile" / "html-every-field.jsonl")
    many = doc_of(*(E(f"e{i}", f"e{i - 1}" if i else None, UserMessage(f"turn {i}")) for i in range(4000)))
    expected = [render(doc), render(many)]

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the html converter started a process or a thread")

    monkeypatch.setattr(os, "fork", refused)
    monkeypatch.setattr(threading.Thread, "start", refused)
    monkeypatch.setattr(gc, "disable", refused)
    assert [render(doc, validate=True, jobs=jobs), render(many, validate=True, jobs=jobs)] == expected
