"""The Markdown converter: every corpus file converts and passes the checker, hostile
content stays inert, options behave, output is deterministic, goldens hold."""

from __future__ import annotations

import io
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from piconv import Report, UsageError
from piconv.converters.markdown import check, write
from piconv.converters.markdown import frontmatter as fmod
from piconv.ir import Document

from .conftest import REPO, corpus_files, corpus_ids

HOSTILE_DIR = REPO / "tests" / "data" / "hostile"
GOLDEN_DIR = REPO / "tests" / "data" / "markdown"
GOLDEN_SOURCES = (
    "pi-generated/extensions",
    "pi-generated/images",
    "pi/twKrash__pi-session-inspector__branching",
)


def load(path: Path) -> Document:
    import piconv

    return piconv.load(path)


def convert(doc: Document, **options: Any) -> tuple[str, Report]:
    report = Report(format="markdown")
    out = io.BytesIO()
    opts = {"images": "embed", "all_branches": False, "leaf": None, "output_path": None, **options}
    write(doc, out, opts, report)
    return out.getvalue().decode("utf-8"), report


def assert_valid(text: str) -> None:
    problems = check(text.encode("utf-8"))
    assert problems == [], problems[:10]


def front_matter(text: str) -> dict[str, Any]:
    lines, _ = fmod.split(text)
    return fmod.parse(lines)


# -------------------------------------------------------------------------- corpus


@pytest.mark.shared
@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
@pytest.mark.parametrize("all_branches", [False, True], ids=["path", "tree"])
def test_corpus_converts_and_passes_the_checker(path: Path, all_branches: bool) -> None:
    doc = load(path)
    text, report = convert(doc, all_branches=all_branches)
    assert_valid(text)
    fm = front_matter(text)
    assert fm["session_id"] == doc.session.id
    assert fm["layout"] == ("tree" if all_branches else "path")
    if not all_branches:
        path_entries = doc.path()
        assert report.entries_written == len(path_entries)
        users = sum(1 for e in path_entries if type(e.message).__name__ == "UserMessage")
        assert fm["messages"]["user"] == users


@pytest.mark.shared
@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_every_user_and_assistant_text_reaches_the_output(path: Path) -> None:
    """Nothing typed by the user or written by the model goes missing (compared on
    letters and digits only, since escaping adds backslashes)."""
    doc = load(path)
    text, _ = convert(doc, images="omit")
    squashed = re.sub(r"[^0-9A-Za-z]", "", text)
    for entry in doc.path():
        msg = entry.message
        content = getattr(msg, "content", None)
        parts = [content] if isinstance(content, str) else [getattr(p, "text", None) for p in content or ()]
        for part in parts:
            if isinstance(part, str):
                want = re.sub(r"[^0-9A-Za-z]", "", part)[:200]
                assert want in squashed, (entry.id, part[:80])


# -------------------------------------------------------------------------- hostile content

ALLOWED_TAGS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "details", "summary", "pre", "code", "em", "strong",
    "a", "img", "ul", "ol", "li", "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th",
    "td", "del", "input",
}  # fmt: skip
SAFE_URL = re.compile(
    r"^(https?://|data:image/(png|gif|jpeg|webp);base64,|[A-Za-z0-9._-]+_images/[0-9a-f]{16}\.|#turn-[1-9][0-9]*$)"
)


class TagAudit(HTMLParser):
    """Collects every element or attribute an HTML-rendering viewer would act on."""

    def __init__(self) -> None:
        super().__init__()
        self.bad: list[Any] = []
        self.open_details = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.bad.append(tag)
        for key, value in attrs:
            if key.startswith("on") or (key in ("href", "src") and not SAFE_URL.match(value or "")):
                self.bad.append((tag, key, value))
        self.open_details += tag == "details"

    def handle_endtag(self, tag: str) -> None:
        self.open_details -= tag == "details"


def rendered_html(markdown_text: str) -> dict[str, str]:
    """The body rendered by two independent engines with raw HTML enabled, and the whole
    file as an engine that does not know front matter renders it (the front matter a
    paragraph under a rule)."""
    import cmarkgfm
    from cmarkgfm.cmark import Options
    from markdown_it import MarkdownIt

    body = markdown_text.split("\n---\n", 1)[1]
    # markdown-it with GFM's tables, as VS Code's preview and many sites run it: a table
    # is tried before a fence or a paragraph, so it reads some lines differently
    with_tables = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    return {
        "cmark-gfm": cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE),
        "markdown-it": MarkdownIt("commonmark", {"html": True}).render(body),
        "markdown-it with tables": with_tables.render(body),
        "cmark-gfm, whole file": cmarkgfm.github_flavored_markdown_to_html(
            markdown_text, options=Options.CMARK_OPT_UNSAFE
        ),
        "markdown-it, whole file": MarkdownIt("commonmark", {"html": True}).render(markdown_text),
    }


HOSTILE = sorted(HOSTILE_DIR.glob("*.jsonl"))


@pytest.mark.parametrize("path", HOSTILE, ids=[p.stem for p in HOSTILE])
@pytest.mark.parametrize("all_branches", [False, True], ids=["path", "tree"])
def test_hostile_sessions_stay_inert(path: Path, all_branches: bool) -> None:
    text, _ = convert(load(path), all_branches=all_branches)
    assert_valid(text)
    for engine, html in rendered_html(text).items():
        audit = TagAudit()
        audit.feed(html)
        assert audit.bad == [], (engine, audit.bad[:5])
        assert audit.open_details == 0, engine
        assert "<script" not in html, engine


def test_hostile_markdown_file_reaches_every_field() -> None:
    text, report = convert(load(HOSTILE_DIR / "markdown-hostile.jsonl"))
    fm = front_matter(text)
    # Front matter values come back exactly, line breaks and all.
    assert fm["cwd"] == "/tmp/<script>alert(1)</script>\n---\n# not yaml"
    assert fm["session_id"].endswith("key: value \u2028")
    codes = {item.code for item in report.losses.values()}
    assert {
        "image-invalid",
        "image-type-omitted",
        "unknown-part",
        "unknown-entry",
        "unknown-message",
    } <= codes
    assert "surrogates-replaced" in codes
    # The unclosed fence in the user's text was closed before the next message.
    assert "\n### Assistant (m\\`\\<script" in text and "\n## 3. Shell command " in text


def test_front_matter_reads_the_same_with_pyyaml() -> None:
    yaml = pytest.importorskip("yaml")
    text, _ = convert(load(HOSTILE_DIR / "markdown-hostile.jsonl"))
    lines, _ = fmod.split(text)
    assert yaml.safe_load("\n".join(lines)) == fmod.parse(lines)


# -------------------------------------------------------------------------- escaping units


@pytest.mark.parametrize(
    "source",
    [
        "<div>\n```\n\n```\n<script>x</script>\n```",
        "- a\n\n  ```\n  <b>\nafter <b>",
        "text\n```\nnever closed",
        "~~~~\n<b>\n~~~",
        "[x]: javascript:alert(1)\n---",
        "Heading\n===\n# h1\n###### h6",
        "``<b>`` `<i>` \\`<u>`",
        "a\rb\r# c",
    ],
)
def test_escaped_markdown_has_no_html_and_no_top_level_heading(source: str) -> None:
    from markdown_it import MarkdownIt
    from piconv.converters.markdown.escape import markdown

    safe = markdown(source, 2)
    md = MarkdownIt("commonmark")
    md.validateLink = lambda url: True
    tokens = md.parse(safe + "\n\nafter\n")
    assert not [t for t in tokens if t.type == "html_block"]
    inline_html = [
        c for t in tokens if t.type == "inline" for c in t.children or () if c.type == "html_inline"
    ]
    assert not inline_html
    assert not [t for t in tokens if t.type == "heading_open" and t.level == 0 and t.tag in ("h1", "h2")]
    assert tokens[-2].content == "after"  # nothing left open swallows what follows


def test_fence_is_longer_than_any_backtick_run() -> None:
    from piconv.converters.markdown.escape import fenced

    block = fenced("a ````` b\n```\n", "text")
    assert block.startswith("``````text\n") and block.endswith("\n``````\n")


def test_yaml_scalars_escape_line_breaks_yaml_knows() -> None:
    for value in ("\u2028", "\u2029", "\x85", "\x7f", "\ufeff", "a\nb", 'q"'):
        out = fmod.scalar(value)
        assert "\n" not in out and not re.search("[\x7f-\x9f\u2028\u2029\ufeff]", out)
        assert fmod.parse([f"k: {out}"]) == {"k": value}
    assert fmod.scalar(1e-05) == "0.00001"
    assert fmod.scalar(3.0) == "3.0"


def test_checker_catches_broken_structure() -> None:
    text, _ = convert(load(HOSTILE_DIR / "markdown-hostile.jsonl"), images="omit")
    broken = {
        "raw html": text.replace("\n## 1. ", "\n<script>x</script>\n\n## 1. ", 1),
        "open fence": text + "\n```\nnever closed\n",
        "details": text.replace("\n</details>\n", "\n", 1),
        "turn count": text.replace("\n## 2. ", "\nTwo. ", 1),
        "turn out of order": text.replace("\n## 2. ", "\n## 7. ", 1),
        "anchor with more": text.replace('<a id="turn-1">', '<a id="turn-1" href="javascript:x">', 1),
        "other anchor": text.replace('<a id="turn-1">', '<a id="x">', 1),
        "link to another fragment": text + "\n[x](#top)\n",
        "js link": text + "\n[x](javascript:alert(1))\n",
        "front matter": text.replace('layout: "path"', "layout: path", 1),
        "schema": text.replace('layout: "path"', 'layout: "other"', 1),
    }
    for name, bad in broken.items():
        assert check(bad.encode("utf-8")), name


_HEAD = '{"type":"session","version":3,"id":"s1"}\n'


def _session(tmp_path: Path, *lines: str) -> Document:
    path = tmp_path / "s.jsonl"
    path.write_text(_HEAD + "".join(line + "\n" for line in lines), encoding="utf-8")
    return load(path)


@pytest.mark.parametrize(
    ("ending", "closed"),
    [
        ("> ```\n> ~~~\n> ```\n", True),
        ("> ```\n> ~~~\n> ```", True),
        ("> > ~~~~\n> > a\n> > ~~~~~\n", True),
        ("- ```\n  a\n  ```\n", True),
        ("```\n~~~\n   ```\n", True),
        ("> ```\n> ~~~\n", False),
        ("> ````\n> a\n> ```\n", False),
        ("```\n\n", False),
        ("```", False),
        ("- ```\n  a\n", False),
    ],
)
def test_a_fence_at_the_end_is_closed_as_commonmark_reads_it(
    tmp_path: Path, ending: str, closed: bool
) -> None:
    """A fence that ends the document, inside a container or not: the checker finds it
    closed exactly where CommonMark does (cmark's reading: a line added in the same
    container is code only if the fence was left open)."""
    cmarkgfm = pytest.importorskip("cmarkgfm")
    prefix = ending[: len(ending) - len(ending.lstrip("> -"))].replace("-", " ")
    after = ending + ("" if ending.endswith("\n") else "\n") + prefix + "after\n"
    assert (re.search("<code>[^<]*after", cmarkgfm.markdown_to_html(after)) is None) is closed
    text, _ = convert(
        _session(
            tmp_path, '{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}'
        )
    )
    problems = check((text + "\n" + ending).encode("utf-8"))
    assert (problems == []) is closed, problems


def test_a_branch_summary_ending_in_a_fence_passes_the_checker(tmp_path: Path) -> None:
    doc = _session(tmp_path, '{"type":"branch_summary","id":"b","parentId":null,"summary":"```\\n~~~"}')
    for all_branches in (False, True):
        text, _ = convert(doc, all_branches=all_branches)
        assert text.endswith("> ```\n> ~~~\n> ```\n")
        assert_valid(text)


def test_lone_surrogates_in_front_matter_become_replacement_characters(tmp_path: Path) -> None:
    """Every front matter string may hold a lone surrogate: it is replaced (and counted)
    where the body's are, and the checker reads the front matter back."""
    doc = _session(
        tmp_path,
        '{"type":"session_info","id":"n","parentId":null,"name":"name \\udc00"}',
        '{"type":"model_change","id":"a","parentId":"n","provider":"p\\ud800","modelId":"x"}',
        '{"type":"model_change","id":"b","parentId":"a","modelId":"half \\ud800 a pair"}',
        '{"type":"thinking_level_change","id":"c","parentId":"b","thinkingLevel":"\\udfff"}',
    )
    for all_branches in (False, True):
        text, report = convert(doc, all_branches=all_branches)
        assert_valid(text)
        fm = front_matter(text)
        assert fm["title"] == fm["session_name"] == "name \ufffd"
        assert fm["models"] == ["p\ufffd/x", "half \ufffd a pair"]
        assert fm["thinking_levels"] == ["\ufffd"]
        assert report.losses["surrogates-replaced"].count >= 5


def test_an_escaped_lone_surrogate_in_front_matter_is_a_problem_not_a_crash() -> None:
    assert fmod.scalar("a\ud800") == '"a\ud800"'  # left for the writer to replace
    with pytest.raises(fmod.FrontMatterError, match="lone surrogate"):
        fmod.parse(['title: "a \\ud800"'])
    doc = (
        "---\n"
        + "\n".join(f"{k}: {v}" for k, v in {"title": '"\\ud800"', "models": "[]"}.items())
        + "\n---\n"
    )
    assert check(doc.encode("utf-8")) == [
        "front matter: line 2: string holds an escaped lone surrogate (not a character)"
    ]


# -------------------------------------------------------------------------- options


@pytest.fixture()
def images_doc(shared: Path) -> Document:
    return load(shared / "corpus" / "pi-generated" / "images.jsonl")


@pytest.mark.shared
def test_images_files_written_beside_the_output(images_doc: Document, tmp_path: Path) -> None:
    target = tmp_path / "out" / "session.md"
    target.parent.mkdir()
    text, _ = convert(images_doc, images="files", output_path=str(target))
    assert_valid(text)
    links = re.findall(r"\]\(([^)]+_images/[0-9a-f]{16}\.png)\)", text)
    assert links
    for link in links:
        assert (target.parent / link).is_file()
    # content-addressed: a second run writes the same names
    again, _ = convert(images_doc, images="files", output_path=str(target))
    assert again == text


@pytest.mark.shared
def test_images_folder_never_follows_a_symlink(images_doc: Document, tmp_path: Path) -> None:
    from piconv import OutputError
    from piconv.converters.markdown.images import folder_name

    outdir, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    outdir.mkdir()
    elsewhere.mkdir()
    target = outdir / "session.md"
    folder = outdir / folder_name(images_doc.session.id, str(target))
    folder.symlink_to(elsewhere)
    with pytest.raises(OutputError, match="is a symlink"):
        convert(images_doc, images="files", output_path=str(target))
    assert list(elsewhere.iterdir()) == []
    # a link planted where an image file goes is not replaced nor written through
    folder.unlink()
    convert(images_doc, images="files", output_path=str(target))
    first = sorted(folder.iterdir())[0]
    first.unlink()
    victim = elsewhere / "victim"
    victim.write_bytes(b"keep")
    first.symlink_to(victim)
    with pytest.raises(OutputError, match="not a regular file"):
        convert(images_doc, images="files", output_path=str(target))
    assert victim.read_bytes() == b"keep" and first.is_symlink()


@pytest.mark.shared
def test_images_someone_else_s_file_at_an_image_s_name_is_never_replaced(
    images_doc: Document, tmp_path: Path
) -> None:
    """The names are content hashes: a file there with other bytes, of another size or
    the same, is not piconv's; the output is refused rather than written over it (or,
    of the same size, linked to it)."""
    from piconv import OutputError

    target = tmp_path / "session.md"
    convert(images_doc, images="files", output_path=str(target))
    first = sorted(next(tmp_path.glob("*_images")).iterdir())[0]
    mine = first.read_bytes()
    convert(images_doc, images="files", output_path=str(target))  # its own: kept
    assert first.read_bytes() == mine
    for planted in (b"someone's notes", bytes(len(mine))):
        first.write_bytes(planted)
        with pytest.raises(OutputError, match="other content"):
            convert(images_doc, images="files", output_path=str(target))
        assert first.read_bytes() == planted


@pytest.mark.shared
def test_images_temporary_files_are_the_kind_a_run_cleans_up(
    images_doc: Document, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from piconv import output
    from piconv.bulk.worker import clean_temps

    seen: list[str] = []

    def spy(src: str, dst: str, **kw: object) -> None:
        seen.append(src)
        raise KeyboardInterrupt  # killed between the write and the rename

    monkeypatch.setattr(os, "replace", spy)
    monkeypatch.setattr(os, "unlink", lambda *a, **kw: None)  # as after kill -9: nothing cleaned
    target = tmp_path / "session.md"
    with pytest.raises(KeyboardInterrupt):
        convert(images_doc, images="files", output_path=str(target))
    monkeypatch.undo()
    assert seen and all(output.TEMP_NAME.match(name) for name in seen)
    assert clean_temps(str(tmp_path)) == len(seen) == 1  # the next directory run removes it


@pytest.mark.shared
def test_images_files_to_stdout_falls_back_to_omit(images_doc: Document) -> None:
    text, report = convert(images_doc, images="files", output_path=None)
    assert "_images/" not in text and "omitted" in text
    assert "images" in report.notes and "image-omitted" in report.losses


@pytest.mark.shared
def test_images_embed_and_omit(images_doc: Document) -> None:
    embedded, _ = convert(images_doc, images="embed")
    assert "](data:image/png;base64," in embedded
    omitted, _ = convert(images_doc, images="omit")
    assert "data:image" not in omitted and "Image 1 omitted" in omitted
    assert_valid(embedded)
    assert_valid(omitted)


@pytest.mark.shared
def test_all_branches_writes_trunk_once_and_every_branch(shared: Path) -> None:
    doc = load(shared / "corpus" / "pi-generated" / "branching.jsonl")
    text, report = convert(doc, all_branches=True)
    assert_valid(text)
    branch_heads = re.findall(r"^## (Branch [0-9.]+): (.*)$", text, re.M)
    assert len(branch_heads) >= 3
    assert front_matter(text)["segments"] == text.count("\n## ")
    assert report.entries_written == len(doc.entries)
    # every message entry of the file appears exactly once
    ids = re.findall(r"^### \d+\. .* `([^`]+)`$", text, re.M)
    assert len(ids) == len(set(ids))


@pytest.mark.shared
def test_labels_name_branches(shared: Path) -> None:
    doc = load(shared / "corpus" / "pi-generated" / "branching.jsonl")
    text, _ = convert(doc, all_branches=True)
    labels = set(doc.labels().values())
    titled = {title for _n, title in re.findall(r"^## (Branch [0-9.]+): (.*)$", text, re.M)}
    assert labels & titled


@pytest.mark.shared
def test_leaf_selects_another_branch(shared: Path) -> None:
    doc = load(shared / "corpus" / "pi-generated" / "branching.jsonl")
    other = next(leaf for leaf in doc.leaves() if leaf.id != doc.leaf_id)
    text, _ = convert(doc, leaf=other.id)
    assert_valid(text)
    assert front_matter(text)["leaf"] == other.id
    with pytest.raises(UsageError):
        convert(doc, leaf="no-such-entry")
    with pytest.raises(UsageError):
        convert(doc, leaf=other.id, all_branches=True)


@pytest.mark.shared
@pytest.mark.parametrize("path", corpus_files()[:6], ids=corpus_ids()[:6])
def test_output_is_deterministic(path: Path) -> None:
    first, _ = convert(load(path), all_branches=True)
    second, _ = convert(load(path), all_branches=True)
    assert first == second


def test_registered_with_alias_and_options() -> None:
    from piconv.registry import build_registry

    registry = build_registry()
    conv = registry.get("md")
    assert conv.name == "markdown" and conv.extension == ".md" and conv.media_type == "text/markdown"
    assert {o.flag for o in conv.options} == {"--images", "--all-branches"}
    assert conv.check is not None and os.path.exists(REPO / conv.mapping_doc)


# -------------------------------------------------------------------------- goldens


@pytest.mark.shared
@pytest.mark.parametrize("name", GOLDEN_SOURCES)
def test_golden_outputs(name: str, shared: Path) -> None:
    source = shared / "corpus" / f"{name}.jsonl"
    text, _ = convert(load(source), images="embed")
    golden = GOLDEN_DIR / (Path(name).name + ".md")
    if os.environ.get("PICONV_UPDATE_GOLDENS"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


FRAGMENTS = [
    "```", "````", "~~~", "```js", "``` `x`", "  ```", "- ```", "> ```", "1. ```", "    ```",
    "<div>", "</details>", "<script>x</script>", "<!-- c -->", "<https://x.y>", "# h", "## h",
    "---", "===", "text", "", "- item", "> quote", "    code <b>", "`<b>`", "``a`<i>``",
    "[x](javascript:y)", "[r]: javascript:z", "[r]:", "javascript:w", "![i](file:///x)",
    "\\`<u>`", "| `a|<b>` |", "\t<tab>", "a\r# b",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12))
def test_escaped_markdown_property(lines: list[str]) -> None:
    """Any mix of fences, HTML, headings, links and containers: no raw HTML, no heading
    at or above the turn level, no non-http link, and nothing left open."""
    from markdown_it import MarkdownIt
    from piconv.converters.markdown.escape import markdown

    safe = markdown("\n".join(lines), 2)
    md = MarkdownIt("commonmark")
    md.validateLink = lambda url: True
    tokens = md.parse(safe + "\n\nafter\n")
    assert not [t for t in tokens if t.type == "html_block"]
    children = [c for t in tokens if t.type == "inline" for c in t.children or ()]
    assert not [c for c in children if c.type == "html_inline"]
    for c in children:
        if c.type in ("link_open", "image"):
            assert re.match(r"https?://", c.attrGet("href") or c.attrGet("src") or "", re.I)
    assert not [t for t in tokens if t.type == "heading_open" and t.level == 0 and t.tag in ("h1", "h2")]
    assert tokens[-3].type == "paragraph_open" and tokens[-3].level == 0 and tokens[-2].content == "after"


@pytest.mark.parametrize("text", ["plain", "<b>&amp;\"x\"</b> 'y'", "a\nb\r\nc & <d>", "&#x27;&quot;", ""])
def test_summary_text_is_html_escaped_like_the_standard_library(text: str) -> None:
    import html

    from piconv.converters.markdown import escape

    assert escape.summary_text(text) == html.escape(escape.one_line(text, 160), quote=True)
