"""The HTML converter's pages in real tools: the Nu Html Checker (one JVM call for every
page this module renders) and headless Chromium opening hostile sessions.

Chromium and the checker are installed by .ci/run (Debian ``chromium``, npm ``vnu-jar``
under ~/.cache/piconv/vnu or $PICONV_VNU_JAR). Locally a missing tool skips its tests;
under CI (``CI`` set) it fails them, so a broken install step cannot pass silently.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import piconv
import pytest
from conftest import SHARED
from piconv.converters.html import check, write
from piconv.converters.html.escape import anchor
from piconv.ir import AssistantMessage, Text, UserMessage
from piconv.report import Report

REPO = Path(__file__).resolve().parent.parent
HOSTILE = sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl"))
CORPUS = sorted((SHARED / "corpus" / "pi").glob("*.jsonl")) + sorted(
    (SHARED / "corpus" / "pi-generated").glob("*.jsonl")
)
# Corpus pages also opened in the browser (the rest only go through the checker).
BROWSER_CORPUS = (
    "branching.jsonl",
    "images.jsonl",
    "extensions.jsonl",
    "compaction.jsonl",
    "castai__kimchi-dev__session.jsonl",
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
VNU = os.environ.get("PICONV_VNU_JAR") or str(
    Path.home() / ".cache/piconv/vnu/node_modules/vnu-jar/build/dist/vnu.jar"
)


def _need(ok: bool, what: str) -> None:
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(f"{what} is missing (.ci/run should install it)")
        pytest.skip(f"{what} is not installed")


def _render(src: Path, dest: Path) -> Path:
    doc = piconv.load(src)
    buf = io.BytesIO()
    write(doc, buf, {}, Report("html"))
    dest.write_bytes(buf.getvalue())
    return dest


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("html")
    result: dict[str, Path] = {}
    for src in [*HOSTILE, *CORPUS]:
        name = f"{src.parent.name}__{src.stem}.html"
        try:
            result[name] = _render(src, out / name)
        except piconv.InputError:
            # Shared hostile files include some that are no pi session at all; piconv
            # refuses those before any converter runs.
            if src.name.startswith("html-"):
                raise
    return result


@pytest.mark.shared
def test_every_page_passes_the_converters_own_check(pages: dict[str, Path]) -> None:
    assert len(pages) >= len(CORPUS) + 2 > 2
    bad = {name: check(p.read_bytes()) for name, p in pages.items()}
    assert {k: v for k, v in bad.items() if v} == {}


@pytest.mark.shared
def test_nu_html_checker_finds_no_errors(pages: dict[str, Path]) -> None:
    _need(shutil.which("java") is not None and Path(VNU).is_file(), "java with vnu.jar")
    # One JVM for the whole batch: starting Java per file would dominate the test time.
    proc = subprocess.run(
        ["java", "-jar", VNU, "--errors-only", "--format", "json", *map(str, pages.values())],
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


# --------------------------------------------------------------------------- browser


def _chromium(url: str) -> tuple[str, str]:
    """Loads ``url`` headless; returns (serialised DOM after load, browser log)."""
    with tempfile.TemporaryDirectory() as profile:
        args = [
            CHROMIUM or "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=3000",
        ]
        proc = subprocess.run([*args, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    return proc.stdout, proc.stderr


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.scripts = 0
        self.title: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        if tag in ("iframe", "svg", "object", "embed", "form", "base"):
            self.problems.append(f"<{tag}>")
        if tag == "title":
            self._in_title = True
        for k, v in attrs:
            v = (v or "").strip().lower()
            if k.startswith("on") or k in ("style", "srcdoc"):
                self.problems.append(f"{k} on <{tag}>")
            if k == "href" and not (v.startswith("#") or v.startswith(("http://", "https://"))):
                self.problems.append(f"href {v[:40]!r}")
            if k == "src" and not v.startswith(
                ("data:image/png;", "data:image/jpeg;", "data:image/gif;", "data:image/webp;")
            ):
                self.problems.append(f"src {v[:40]!r}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)


def _title_of(page: str) -> str:
    m = re.search(r"<title>(.*?)</title>", page, re.S)
    return html.unescape(m.group(1)) if m else ""


def _console(log: str) -> list[str]:
    return [line for line in log.splitlines() if ":CONSOLE" in line]


def _open_all(paths: list[Path]) -> list[tuple[str, str]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda p: _chromium(p.as_uri()), paths))


@pytest.mark.shared
def test_hostile_pages_run_no_injected_script(pages: dict[str, Path]) -> None:
    _need(CHROMIUM is not None, "chromium")
    chosen = [
        p
        for n, p in pages.items()
        if n.startswith("hostile__") or any(n.endswith(c.replace(".jsonl", ".html")) for c in BROWSER_CORPUS)
    ]
    assert any(n.startswith("hostile__html-") for n in pages)
    for path, (dom, log) in zip(chosen, _open_all(chosen), strict=True):
        name = path.name
        assert '<html lang="en" data-js="on">' in dom, f"{name}: the page's own script did not run"
        parsed = _Dom()
        parsed.feed(dom)
        assert parsed.problems == [], name
        assert parsed.scripts == 1, name
        # The title is what the converter wrote (the session's name, escaped), not PWNED.
        assert "".join(parsed.title) == _title_of(path.read_text(encoding="utf-8")), name
        console = _console(log)
        assert not [c for c in console if "PWNED" in c], name
        # Not even a refused attempt: nothing injected reached the DOM as markup.
        assert not [c for c in console if "Content Security Policy" in c], name


@pytest.mark.shared
def test_csp_blocks_script_even_if_escaping_failed(pages: dict[str, Path], tmp_path: Path) -> None:
    _need(CHROMIUM is not None, "chromium")
    page = next(p for n, p in pages.items() if n == "hostile__html-every-field.html").read_text(
        encoding="utf-8"
    )
    run = "document.title='PWNED';console.log('PWNED')"
    injected = f'<script>{run}</script><img src="x" onerror="{run}"><a id="l" href="javascript:{run}">x</a>'
    tampered = tmp_path / "tampered.html"
    tampered.write_text(
        page.replace('<main id="transcript">', '<main id="transcript">' + injected, 1), encoding="utf-8"
    )
    dom, log = _chromium(tampered.as_uri())
    assert '<html lang="en" data-js="on">' in dom
    assert "<title>PWNED</title>" not in dom
    console = _console(log)
    assert not [c for c in console if '"PWNED"' in c]
    assert [c for c in console if "Content Security Policy" in c], (
        "the CSP should have refused the injected script"
    )


@pytest.mark.shared
def test_readable_without_javascript_and_deep_links_open_branches(
    pages: dict[str, Path], tmp_path: Path
) -> None:
    _need(CHROMIUM is not None, "chromium")
    path = pages["pi-generated__branching.html"]
    doc = piconv.load(SHARED / "corpus" / "pi-generated" / "branching.jsonl")
    on_path = {e.id for e in doc.path()}
    off = [e for e in doc.entries if e.id not in on_path]
    assert off, "the branching session should have entries off the leaf path"
    # Chromium's --dump-dom needs script enabled, so "without JavaScript" is the page
    # with its one script removed: what a reader with script off gets.
    page = path.read_text(encoding="utf-8")
    no_js = tmp_path / "no-js.html"
    no_js.write_text(page[: page.rindex("<script>")] + "</body></html>\n", encoding="utf-8")
    dom, _ = _chromium(no_js.as_uri())
    assert "data-js" not in dom[:300]
    # Without script every entry is in the page; the leaf path is open.
    for e in doc.entries:
        assert f'id="{anchor(e.id)}"' in dom
    assert re.search(r'<details class="branch on-path" id="[^"]*" open="?"?>', dom)
    # A deep link to an entry in a closed branch opens that branch (and its ancestors).
    target = anchor(off[-1].id)
    assert _details_around(dom, target) and not all(_details_around(dom, target)), (
        "target should start closed"
    )
    dom, _ = _chromium(path.as_uri() + "#" + target)
    assert all(_details_around(dom, target))


def _details_around(dom: str, target: str) -> list[bool]:
    """Open state of each <details> enclosing the element with id ``target``."""

    class P(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[bool] = []
            self.found: list[bool] | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            a = dict(attrs)
            if tag == "details":
                self.stack.append("open" in a)
            if a.get("id") == target and self.found is None:
                self.found = list(self.stack)

        def handle_endtag(self, tag: str) -> None:
            if tag == "details":
                self.stack.pop()

    p = P()
    p.feed(dom)
    assert p.found is not None, f"no element with id {target}"
    return p.found


# --------------------------------------------------------------------------- tree overview

# Three corpus pages opened in a real browser, with and without JavaScript: a generated
# session with nested branches, the largest real one, a real branchy one.
TREE_PAGES = (
    "pi-generated/branching.jsonl",
    "pi/badlogic__pi-mono__before-compaction.jsonl",
    "pi/twKrash__pi-session-inspector__branching.jsonl",
)


def _target(doc: piconv.Document) -> tuple[str, bool]:
    """An entry to choose in the tree: the last message off the open path when there is
    one (it starts hidden in a closed branch), else the first user message."""
    on_path = {e.id for e in doc.path()}
    msgs = [e for e in doc.entries if isinstance(e.message, (UserMessage, AssistantMessage))]
    off = [e for e in msgs if e.id not in on_path]
    if off:
        return off[-1].id, True
    return next(e for e in msgs if isinstance(e.message, UserMessage)).id, False


@pytest.mark.shared
@pytest.mark.parametrize("name", TREE_PAGES)
@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_tree_overview_in_chromium(name: str, javascript: bool, tmp_path: Path) -> None:
    _need(CHROMIUM is not None, "chromium")
    from cdp import Browser

    src = SHARED / "corpus" / name
    doc = piconv.load(src)
    page = _render(src, tmp_path / "page.html")
    leaf = anchor(doc.leaf_id or doc.entries[-1].id)
    target, hidden_at_first = _target(doc)
    line = f'#overview a[href="#{anchor(target)}"]'
    with Browser(CHROMIUM or "chromium") as browser:
        p = browser.open(page.as_uri(), javascript=javascript)
        ran = p.evaluate("document.documentElement.getAttribute('data-js')") == "on"
        assert ran == javascript
        # The overview sits beside the transcript (a wide window) and shows the leaf's line.
        assert p.visible("#overview") and p.visible("#overview li.leaf > a")
        tree, main = p.box("#overview"), p.box("main")
        assert tree is not None and main is not None and tree[0] + tree[2] <= main[0] + 1
        # The last entry is on screen once scrolled to.
        assert p.visible(f'[id="{leaf}"]')
        # Controls only when they work.
        assert p.visible("#ov-tools") == javascript and p.visible("#controls") == javascript
        if hidden_at_first:
            assert not p.visible(f'[id="{anchor(target)}"]')
        # A click on the entry's line in the tree shows its branch.
        p.click(line)
        assert p.evaluate("location.hash") == "#" + anchor(target)
        assert p.visible(f'[id="{anchor(target)}"]')
        assert all(_details_around(p.html(), anchor(target)))
        if javascript:
            classes = p.evaluate(f"document.querySelector({json.dumps(line)}).parentElement.className")
            assert "cur" in classes.split() and "at" in classes.split()
            if hidden_at_first:  # the branch that was open before is closed now
                assert not p.visible(f'[id="{leaf}"]')
        assert p.errors() == []


@pytest.mark.shared
def test_tree_filters_and_search_in_chromium(tmp_path: Path) -> None:
    _need(CHROMIUM is not None, "chromium")
    from cdp import Browser

    src = SHARED / "corpus" / "pi-generated" / "branching.jsonl"
    doc = piconv.load(src)
    page = _render(src, tmp_path / "page.html")
    user = next(e for e in doc.entries if isinstance(e.message, UserMessage))
    said = next(
        e
        for e in doc.entries
        if isinstance(e.message, AssistantMessage)
        and any(isinstance(t, Text) and "Option B" in (t.text or "") for t in e.message.content or ())
    )
    settings = next(e for e in doc.entries if e.kind == "model_change")

    def shown(e: object) -> bool:
        return p.visible(f'#overview a[href="#{anchor(e.id)}"]')  # type: ignore[attr-defined]

    with Browser(CHROMIUM or "chromium") as browser:
        p = browser.open(page.as_uri())
        # Default: settings entries hidden, messages shown.
        assert shown(user) and shown(said) and not shown(settings)
        p.click('button[data-act="f-user"]')
        assert shown(user) and not shown(said)
        p.click('button[data-act="f-all"]')
        assert shown(user) and shown(said) and shown(settings)
        # The search box keeps the lines whose entry holds every word; Enter jumps to a hit.
        p.send("DOM.focus", {"nodeId": p.node("#search")})
        p.send("Input.insertText", {"text": "Option B keeps"})
        time.sleep(0.5)
        assert shown(said) and not shown(user)
        for kind in ("rawKeyDown", "keyUp"):
            p.send(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13},
            )
        time.sleep(0.3)
        hit = p.evaluate("location.hash.slice(1)")
        text = p.evaluate(f"document.getElementById('{hit}').textContent").lower()
        assert all(w in text for w in ("option", "b", "keeps"))
        assert p.evaluate("document.getElementById('search-status').textContent").startswith("1 / ")
        assert p.errors() == []


@pytest.mark.shared
def test_a_malformed_fragment_does_not_stop_the_script(tmp_path: Path) -> None:
    _need(CHROMIUM is not None, "chromium")
    from cdp import Browser

    src = SHARED / "corpus" / "pi-generated" / "branching.jsonl"
    page = _render(src, tmp_path / "page.html")
    with Browser(CHROMIUM or "chromium") as browser:
        p = browser.open(page.as_uri() + "#%E0%A4%A")
        assert p.errors() == []
        # The script ran to its end: the controls are there and a filter works.
        assert p.visible("#ov-tools")
        p.click('button[data-act="f-all"]')
        assert "f-all" in p.evaluate("document.getElementById('overview').className").split()


# --------------------------------------------------------------------------- highlighting


def _wait(p: object, expression: str, timeout: float = 10.0) -> object:
    """Polls ``expression`` until it is truthy (the colouring runs in timer slices)."""
    end = time.monotonic() + timeout
    value = None
    while time.monotonic() < end:
        value = p.evaluate(expression)  # type: ignore[attr-defined]
        if value:
            return value
        time.sleep(0.1)
    return value


_MAIN_TS_SECTION = """Array.prototype.find.call(document.querySelectorAll("section.tool"), function (x) {
    var t = x.querySelector(".tool-path"); return t && t.textContent.indexOf("main.ts") >= 0;
  })"""
_MAIN_TS = f"""(function () {{
  return {_MAIN_TS_SECTION}.querySelector("pre > code.language-typescript");
}})()"""
# The preview of the collapsed block, in its <summary>: coloured as the block will be.
_MAIN_TS_PREVIEW = f"""(function () {{
  return {_MAIN_TS_SECTION}.querySelector("summary .preview > code.language-typescript");
}})()"""


@pytest.mark.shared
def test_code_is_coloured_when_it_comes_into_view(tmp_path: Path) -> None:
    _need(CHROMIUM is not None, "chromium")
    from cdp import Browser

    page = _render(
        SHARED / "corpus" / "pi" / "badlogic__pi-mono__before-compaction.jsonl", tmp_path / "p.html"
    )
    with Browser(CHROMIUM or "chromium") as browser:
        p = browser.open(page.as_uri())
        named = p.evaluate("document.querySelectorAll(\"code[class*='language-']\").length")
        assert named > 100
        # Lazily: once the page has settled, only blocks near the viewport are coloured.
        time.sleep(1.0)
        coloured = p.evaluate("document.querySelectorAll('code[data-highlighted]').length")
        assert coloured < named / 4
        # main.ts (1,544 lines) is read first, in a closed <details>: its preview, in
        # view, is coloured as the block will be; the block is coloured once a reader
        # opens it and scrolls to it.
        assert _wait(p, f"{_MAIN_TS_PREVIEW}.getAttribute('data-highlighted') === 'yes'")
        assert p.evaluate(f"{_MAIN_TS_PREVIEW}.querySelectorAll('span.hljs-keyword').length") > 3
        assert p.evaluate(f"{_MAIN_TS}.hasAttribute('data-highlighted')") is False
        p.evaluate(
            f"(function () {{ var c = {_MAIN_TS}; c.closest('details').open = true; c.scrollIntoView(); }})()"
        )
        assert _wait(p, f"{_MAIN_TS}.getAttribute('data-highlighted') === 'yes'")
        spans = p.evaluate(f"{_MAIN_TS}.querySelectorAll('span[class^=\"hljs-\"]').length")
        assert spans > 1000
        assert p.evaluate(f"{_MAIN_TS}.querySelectorAll('span.hljs-keyword').length") > 300
        # The colours come from the page's own style (the CSP allowed it): a keyword is
        # not drawn in the text colour.
        assert p.evaluate(
            f"(function () {{ var c = {_MAIN_TS}; return getComputedStyle(c.querySelector('.hljs-keyword')).color"
            " !== getComputedStyle(c).color; })()"
        )
        assert p.errors() == []


def test_hostile_code_is_coloured_and_runs_nothing(tmp_path: Path) -> None:
    _need(CHROMIUM is not None, "chromium")
    from cdp import Browser

    run = "document.title='PWNED';console.log('PWNED')"
    evil = f'</script><script>{run}</script>\n<img src=x onerror="{run}">\n<!-- <script>{run}</script> -->\n'
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "id": "u",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": f"```html\n{evil}```\n\n```ts\n{evil}```", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a",
            "parentId": "u",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x.ts"}},
                    {
                        "type": "toolCall",
                        "id": "c2",
                        "name": "bash",
                        "arguments": {"command": f"echo '{evil}'"},
                    },
                    {"type": "toolCall", "id": "c3", "name": "custom", "arguments": {"v": evil}},
                ],
                "api": "x",
                "provider": "x",
                "model": "x",
                "stopReason": "toolUse",
                "timestamp": 2,
            },
        },
        {
            "type": "message",
            "id": "r",
            "parentId": "a",
            "timestamp": "2026-01-01T00:00:03.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": evil}],
                "isError": False,
                "timestamp": 3,
            },
        },
    ]
    src = tmp_path / "evil.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    page = _render(src, tmp_path / "evil.html")
    assert check(page.read_bytes()) == []
    with Browser(CHROMIUM or "chromium") as browser:
        p = browser.open(page.as_uri())
        p.evaluate("document.querySelectorAll('main details').forEach(function (d) { d.open = true; })")
        n = p.evaluate("document.querySelectorAll(\"code[class*='language-']\").length")
        assert n >= 5  # html and ts fences, the read, the bash command, the JSON arguments
        assert _wait(p, f"document.querySelectorAll('code[data-highlighted]').length === {n}")
        assert p.evaluate("document.title") != "PWNED"
        assert p.evaluate("document.scripts.length") == 1
        assert p.evaluate("document.querySelectorAll('main img, main script').length") == 0
        # Coloured, and the text is what the session holds, character for character.
        texts = p.evaluate(
            "Array.prototype.map.call(document.querySelectorAll('code.language-typescript'),"
            " function (c) { return c.textContent; })"
        )
        assert texts == [evil, evil]
        assert p.errors() == []
        console = [c for e in browser.events for c in [json.dumps(e)] if "PWNED" in c and "consoleAPI" in c]
        assert console == []


def test_a_huge_block_is_coloured_on_request(tmp_path: Path) -> None:
    _need(CHROMIUM is not None, "chromium")
    from cdp import Browser

    source = "export function f(a: number): number {\n  return a + 1; // add\n}\n" * 4000  # 256,000 chars
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "id": "u",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": f"```ts\n{source}```", "timestamp": 1},
        },
    ]
    src = tmp_path / "big.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    page = _render(src, tmp_path / "big.html")
    with Browser(CHROMIUM or "chromium") as browser:
        p = browser.open(page.as_uri())
        assert _wait(p, "!!document.querySelector('button.hl-offer')")
        assert p.evaluate("document.querySelector('main pre code').hasAttribute('data-highlighted')") is False
        assert "256,000 characters" in p.evaluate("document.querySelector('button.hl-offer').textContent")
        p.click("button.hl-offer")
        assert _wait(p, "document.querySelector('main pre code').getAttribute('data-highlighted') === 'yes'")
        assert p.evaluate("!document.querySelector('button.hl-offer')")
        assert p.evaluate("document.querySelectorAll('main pre code span.hljs-keyword').length") >= 8000
        assert p.errors() == []
