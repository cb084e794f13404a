"""The pages read well, in Chromium, on the five largest corpus sessions, with JavaScript
on and off: the title says what the session is, times are a person's (in the reader's
time zone with the script, in UTC without) with the exact stamp on hover and in print,
home paths are ``~``, only models that answered are named, the system prompt is folded,
paths wrap at separators, and nothing stops working without the script."""

from __future__ import annotations

import io
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import piconv
import pytest
from conftest import corpus_files, session_bytes
from piconv.converters.html.escape import anchor
from piconv.ir import AssistantMessage

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LARGEST = sorted(corpus_files(), key=lambda p: p.stat().st_size, reverse=True)[:5]
TOKYO = timezone(timedelta(hours=9))  # Asia/Tokyo keeps no daylight saving time


def _need_chromium() -> None:
    if CHROMIUM is None:
        import os

        if os.environ.get("CI"):
            pytest.fail("chromium is missing (.ci/run should install it)")
        pytest.skip("chromium is not installed")


def _page(src: Path, dest: Path) -> Path:
    buf = io.BytesIO()
    piconv.convert(piconv.load(src), "html", buf)
    dest.write_bytes(buf.getvalue())
    return dest


def _answered(doc: piconv.ir.Document) -> dict[str, int]:
    models: dict[str, int] = {}
    for e in doc.entries:
        m = e.message
        if isinstance(m, AssistantMessage) and m.model is not None and m.model.model:
            name = "/".join(x for x in (m.model.provider, m.model.model) if x)
            models[name] = models.get(name, 0) + 1
    return models


def _clock(stamp: str, zone: timezone) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(zone)


@pytest.mark.shared
@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
@pytest.mark.parametrize("src", LARGEST, ids=lambda p: p.stem)
def test_the_largest_sessions_read_well(src: Path, javascript: bool, tmp_path: Path) -> None:
    _need_chromium()
    from cdp import Browser

    doc = piconv.load(src)
    page = _page(src, tmp_path / "page.html")
    title = piconv.session_title(doc) or f"Session {doc.session.id}"
    with Browser(CHROMIUM or "chromium") as browser:
        p = browser.open(page.as_uri(), javascript=javascript, timezone="Asia/Tokyo")
        assert p.errors() == []
        assert p.evaluate("document.querySelector('h1').textContent") == title
        assert p.evaluate("document.title") == title

        # Times: the first entry's, as a person reads it; the exact stamp as its title.
        stamp = p.evaluate("document.querySelector('main time.ts').title")
        assert stamp in {e.timestamp for e in doc.entries}
        shown = p.evaluate("document.querySelector('main time.ts').textContent")
        when = _clock(stamp, TOKYO if javascript else timezone.utc)
        hour = when.hour % 12 or 12 if re.search(r"[AP]M", shown) else when.hour
        assert re.search(rf"\b0?{hour}:{when.minute:02d}:{when.second:02d}\b", shown), shown
        assert ("UTC" in shown) is not javascript
        stamps = p.evaluate(
            "Array.from(document.querySelectorAll('.meta, .page-head .facts')).some(function (m) {"
            " return /\\dT\\d\\d:\\d\\d:\\d\\d/.test(m.innerText); })"
        )
        assert stamps is False  # no raw ISO stamp left in entry headers or the facts

        # Home paths as ~, the full path on hover; only models that answered.
        cwd = doc.session.cwd or ""
        if re.match(r"/(Users|home)/[^/]+/", cwd):
            assert p.evaluate("document.querySelector('.facts .path').textContent").startswith("~/")
            assert p.evaluate("document.querySelector('.facts .path').title") == cwd
        home_paths = p.evaluate(
            "Array.from(document.querySelectorAll('.tool-path, .overview a')).filter(function (e) {"
            " return /(^|: )\\/(Users|home)\\/[^/]+\\//.test(e.textContent) && !/^bash/.test(e.textContent); }).length"
        )
        assert home_paths == 0
        models = p.evaluate(
            "Array.from(document.querySelectorAll('.facts dt')).find(function (d) {"
            " return d.textContent === 'Models'; }).nextElementSibling.textContent"
        )
        answered = _answered(doc)
        assert all(m in models for m in answered)
        unanswered = [e.body.model for e in doc.entries if e.kind == "model_change" and e.body.model]
        assert not [m for m in unanswered if not any(m in a for a in answered) and m in models]

        # Readable without the script: the path to the leaf open, the controls only with it.
        assert p.visible(f"#{anchor(doc.leaf_id)}") or p.evaluate(
            f"document.getElementById('{anchor(doc.leaf_id)}').closest('.tool') !== null"
        )
        assert p.evaluate("document.getElementById('controls').hidden") is not javascript
        if p.evaluate("document.querySelector('details.system-prompt') !== null"):
            assert p.evaluate("document.querySelector('details.system-prompt').open") is False

        # In print: every time followed by its exact stamp, folded blocks printed whole.
        p.send("Emulation.setEmulatedMedia", {"media": "print"})
        after = p.evaluate("getComputedStyle(document.querySelector('main time.ts'), '::after').content")
        assert stamp in after
        folded = p.evaluate(
            "(function () { var d = document.querySelector('main details.output:not([open])');"
            " return d ? d.querySelector('pre').checkVisibility() : true; })()"
        )
        assert folded is True
        assert p.errors() == []


def test_long_paths_wrap_between_names(tmp_path: Path) -> None:
    """On a narrow screen the working directory wraps, after a separator only: each
    name between separators stays on one line."""
    _need_chromium()
    from cdp import Browser

    cwd = "/home/someone/" + "/".join(f"a-rather-long-folder-name-{i}" for i in range(8))
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd}
    data = session_bytes({"type": "message", "id": "u", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
                          "message": {"role": "user", "content": "hi", "timestamp": 1}}, header=header)  # fmt: skip
    page = tmp_path / "p.html"
    buf = io.BytesIO()
    piconv.convert(piconv.load(data), "html", buf)
    page.write_bytes(buf.getvalue())
    with Browser(CHROMIUM or "chromium", width=420, height=800) as browser:
        p = browser.open(page.as_uri())
        lines = p.evaluate(
            "(function () { var el = document.querySelector('.facts .path'), out = [];"
            " var w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), n;"
            " while ((n = w.nextNode())) { var r = document.createRange(); r.selectNodeContents(n);"
            " out.push(new Set(Array.from(r.getClientRects()).map(function (x) { return Math.round(x.top); })).size); }"
            " return out; })()"
        )
        assert len(lines) == 9 and max(lines) == 1  # ~/ and each folder's name: one line each
        height = p.evaluate("document.querySelector('.facts .path').getBoundingClientRect().height")
        line = p.evaluate(
            "parseFloat(getComputedStyle(document.querySelector('.facts .path')).lineHeight) || 16"
        )
        assert height > 2 * line  # it did wrap
