"""The archive index pages (index.html, index.md) and the Dask executor."""

from __future__ import annotations

import base64
import hashlib
import sys
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from piconv import ListedSession
from piconv.bulk import run_bulk
from piconv.bulk.index import write_index
from piconv.converters.markdown.index import page as markdown_page
from piconv.registry import get_registry

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_bulk import conversation, make_tree, snapshot


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.csp: str | None = None
        self.first_in_head: str | None = None
        self.in_head = False
        self.raw: str | None = None
        self.bodies: dict[str, list[str]] = {"script": [], "style": []}
        self.hrefs: list[str] = []
        self.rows = 0
        self.attrs_seen: list[str] = []
        self.hidden_filter = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.attrs_seen += [k for k, _ in attrs]
        if tag == "head":
            self.in_head = True
        elif self.in_head and self.first_in_head is None and not (tag == "meta" and "charset" in a):
            self.first_in_head = f"{tag} {a.get('http-equiv', '')}".strip()
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy":
            self.csp = a.get("content")
        if tag in self.bodies:
            self.raw = tag
            self.bodies[tag].append("")
        if tag == "a":
            self.hrefs.append(a.get("href") or "")
        if tag == "tr":
            self.rows += 1
        if tag == "input" and a.get("id") == "filter":
            self.hidden_filter = "hidden" in a

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.in_head = False
        if tag == self.raw:
            self.raw = None

    def handle_data(self, data: str) -> None:
        if self.raw:
            self.bodies[self.raw][-1] += data


def _sha(s: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"


def test_html_index_lists_every_session_by_project_under_a_strict_csp(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    evil = src / "--evil--"
    evil.mkdir()
    (evil / "x.jsonl").write_bytes(
        conversation("e", prompt='<img src=x onerror="alert(1)"> & </script>', cwd="<b>cwd</b>")
    )
    summary = run_bulk(str(src), str(out), ["html"], jobs=2, quiet=True)
    assert summary.indexes == [str(out.resolve() / "index.html")]
    html = (out / "index.html").read_text()
    page = _Page()
    page.feed(html)
    assert page.first_in_head == "meta Content-Security-Policy"
    policy = {d.split()[0]: d.split()[1:] for d in (page.csp or "").split(";") if d.split()}
    assert policy["default-src"] == ["'none'"]
    assert policy["script-src"] == [_sha(page.bodies["script"][0])] and len(page.bodies["script"]) == 1
    assert policy["style-src"] == [_sha(page.bodies["style"][0])] and len(page.bodies["style"]) == 1
    assert not [a for a in page.attrs_seen if a.startswith("on") or a == "style"]
    assert page.hidden_filter  # no JavaScript, no filter box: the table alone is the page
    # projects are named from the cwd: /work/p (two folders), /work/b and the evil one's
    # a header row per project table, a row per session; the activity strip's header and its one day
    assert page.rows == 3 + 4 + 2
    assert sorted(page.hrefs) == sorted(
        [
            "./--work-a--/2026-01-01_s1.html",
            "./--work-a--/2026-01-02_s2.html",
            "./--work-b--/2026-01-03_s3.html",
            "./--evil--/x.html",
        ]
    )
    for text in ("fix the bug 0", "write tests 0", "faux/faux-coder", "/work/b", "$0.0060", ">2<", ">30<"):
        assert text in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &lt;/script&gt;" in html
    assert "&lt;b&gt;cwd&lt;/b&gt;" in html
    # the projects are sorted, sessions grouped under them, each with its totals
    assert (
        html.index('data-project="b"') < html.index('data-project="b&gt;"') < html.index('data-project="p"')
    )
    assert "2 sessions, 4 turns, 60 tokens, $0.01" in html  # project p
    assert "1 session, 2 turns, 30 tokens" in html
    assert "4 sessions, 8 turns, 120 tokens, $0.02 in 3 projects" in html  # the archive
    # readable dates (UTC, to the minute), the full time stamp kept for sorting
    assert ">2026-01-01 00:00<" in html and 'data-v="2026-01-01T00:00:00.000Z"' in html
    assert ":00.000Z<" not in html
    # sortable columns (buttons made by the script), dark mode, a filter that says when nothing matches
    assert html.count('data-sort="') == 3 * 7 and "<button" not in html.split("<script>")[0]
    assert "prefers-color-scheme:dark" in html
    assert 'id="nomatch" hidden' in html and "piconv search" in html

    before = snapshot(out)["index.html"]
    run_bulk(str(src), str(out), ["html"], jobs=1, quiet=True)
    assert snapshot(out)["index.html"] == before  # nothing changed: not rewritten


def test_index_drops_removed_outputs_and_marks_failures(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    run_bulk(str(src), str(out), ["html"], jobs=1, quiet=True)
    (out / "--work-b--/2026-01-03_s3.html").unlink()
    records = [
        {
            "input": "--work-a--/2026-01-01_s1.jsonl",
            "outputs": {"html": {"path": "--work-a--/2026-01-01_s1.html"}},
            "meta": {},
        },
        {
            "input": "--work-b--/2026-01-03_s3.jsonl",
            "outputs": {"html": {"path": "--work-b--/2026-01-03_s3.html"}},
        },
        {
            "input": "--work-a--/2026-01-02_s2.jsonl",
            "status": "failed",
            "outputs": {"html": {"path": "--work-a--/2026-01-02_s2.html"}},
            "meta": {"name": "named | session", "cost": 1.5},
        },
    ]
    write_index(get_registry().get("html").index, "html", records, str(out))
    html = (out / "index.html").read_text()
    assert "2026-01-03_s3" not in html  # its output is gone: no dead link
    assert "2026-01-01_s1.jsonl" in html  # no name, no prompt recorded: the file name
    assert "named | session" in html and "last conversion failed" in html


def test_markdown_index(tmp_path: Path) -> None:
    md = markdown_page(
        {
            "--p--": [
                ListedSession(
                    project="--p--",
                    link="./--p--/a%20b.md",
                    output="--p--/a b.md",
                    title="fix [it](javascript:x) | *now* <b> (see http://x<i>)",
                    file="a b.jsonl",
                    cwd="/w/p",
                    created="2026-01-01",
                    updated="2026-01-02",
                    models=("faux/faux-coder",),
                    turns=2,
                    tokens=1234,
                    cost=0.5,
                    failed=False,
                )
            ]
        }
    )
    assert md.startswith("# pi sessions\n")
    assert "## \\-\\-p\\-\\-" not in md and "## --p--" in md
    row = next(line for line in md.splitlines() if line.startswith("| ["))
    # the Markdown format's own escape (converters/markdown/escape.py): every character
    # with a meaning inside a line, an autolink's "://" among them (test_attack_markdown.py)
    assert row.startswith(
        "| [fix \\[it\\](javascript:x) \\| \\*now\\* \\<b\\> (see http\\://x\\<i\\>)](<./--p--/a%20b.md>)"
    )
    html = cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)
    link = '<a href="./--p--/a%20b.md">fix [it](javascript:x) | *now* &lt;b&gt; (see http://x&lt;i&gt;)</a>'
    assert f"<td>{link}</td>" in html  # the title shows as typed, in its cell
    assert "| 2 | 1,234 | $0.5000 |" in row
    assert row.count(" | ") == 6  # the title's pipe is escaped, the table keeps its columns


def test_markdown_index_end_to_end(tmp_path: Path) -> None:
    if "markdown" not in get_registry().converters:
        pytest.skip("the markdown converter is not registered in this build")
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    summary = run_bulk(str(src), str(out), ["markdown", "html"], jobs=2, quiet=True)
    assert summary.failed == 0, summary.failures
    md = (out / "index.md").read_text()
    assert "(<./--work-a--/2026-01-01_s1.md>)" in md and (out / "index.html").is_file()


# --------------------------------------------------------------------------- Dask


def test_dask_local_cluster_writes_what_the_local_pool_writes(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    src = tmp_path / "s"
    make_tree(src)
    (src / "--work-c--").mkdir()
    (src / "--work-c--" / "empty.jsonl").write_bytes(b"")
    local = run_bulk(str(src), str(tmp_path / "local"), ["ir", "html", "pi"], jobs=2, quiet=True)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = run_bulk(str(src), str(tmp_path / "dask"), ["ir", "html", "pi"], client=client, quiet=True)
        assert remote.executor == "dask"
        assert (remote.converted, remote.failed) == (local.converted, local.failed) == (3, 0)
        assert remote.skipped == local.skipped and len(local.skipped) == 1  # the empty file
        again = run_bulk(str(src), str(tmp_path / "dask"), ["ir", "html", "pi"], client=client, quiet=True)
        assert (again.converted, again.up_to_date) == (0, 3)
    strip = {k: v[1] for k, v in snapshot(tmp_path / "local").items()}
    assert strip == {k: v[1] for k, v in snapshot(tmp_path / "dask").items()}
    assert len(strip) == 3 * 3 + 1  # three formats for three sessions, and the index


def test_titles_drop_pis_markup_tags(tmp_path: Path) -> None:
    from piconv.facts.titles import clean_title

    assert clean_title(
        "<user_message_time>Monday, 12:00</user_message_time>\n\nReview the <b>parser</b>."
    ) == (
        "Review the <b>parser</b>."  # pi's metadata block goes; other text stays as typed
    )
    assert clean_title("<project_context>x</project_context> go") == "x go"
    src, out = tmp_path / "s", tmp_path / "o"
    (src / "--w--").mkdir(parents=True)
    (src / "--w--" / "t.jsonl").write_bytes(
        conversation("t", prompt="<user_message_time>Monday, April 6, 2026</user_message_time>\n\nReview it")
    )
    run_bulk(str(src), str(out), ["html"], jobs=1, quiet=True)
    html = (out / "index.html").read_text()
    assert ">Review it 0</a>" in html and "user_message_time" not in html and "April 6" not in html


def test_the_index_in_a_browser_filters_says_when_nothing_matches_and_sorts(tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess
    import tempfile

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing (.ci/run should install it)")
        pytest.skip("chromium is not installed")
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    run_bulk(str(src), str(out), ["html", "sqlite"], jobs=1, quiet=True)

    def dom(fragment: str) -> str:
        with tempfile.TemporaryDirectory() as profile:
            proc = subprocess.run(
                [
                    chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    f"--user-data-dir={profile}",
                    "--virtual-time-budget=3000",
                    "--dump-dom",
                    (out / "index.html").as_uri() + fragment,
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
        return proc.stdout

    nothing = dom("#q=zyzzyva")
    assert '<p id="nomatch">' in nothing  # shown
    assert "piconv search '<span id=\"nomatch-cmd\">zyzzyva</span>'" in nothing
    assert all(f'data-project="{p}" hidden=""' in nothing for p in ("b", "p"))
    some = dom("#q=write%20tests")
    assert '<p id="nomatch" hidden="">' in some
    assert 'data-project="b" hidden=""' in some and 'data-project="p" hidden=""' not in some
    # the script made the sort buttons (none exist without it); a header sorts its table
    assert some.count("<button") == 2 * 7
    newest_first = dom("")
    assert newest_first.index("write tests 0") < newest_first.index("fix the bug 0")
    by_title = dom("#sort=session")
    assert by_title.index("fix the bug 0") < by_title.index("write tests 0")
    assert 'aria-sort="ascending"><button type="button">Session' in by_title
    by_title_down = dom("#sort=-session&q=t")
    assert by_title_down.index("write tests 0") < by_title_down.index("fix the bug 0")


def test_the_activity_strip_adds_up_to_the_sessions_each_entry_once(tmp_path: Path) -> None:
    """The index's per-day strip (HTML and Markdown) sums each session's own days: a fork's
    copies of its parent's entries count on the parent's day only, and the days add up to
    the page's totals."""
    import json
    import re

    from piconv.bulk import run_bulk

    examples = Path(__file__).resolve().parent.parent / "examples"
    src = tmp_path / "in" / "--p--"
    src.mkdir(parents=True)
    parent = src / "parent.jsonl"
    parent.write_bytes((examples / "branching.jsonl").read_bytes())
    lines = [json.loads(x) for x in parent.read_text().splitlines()]
    header = {
        **lines[0],
        "id": "fork-1",
        "timestamp": "2026-12-02T00:00:00.000Z",
        "parentSession": str(parent),
    }
    (src / "fork.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [header, *lines[1:13]]))
    out = tmp_path / "out"
    assert run_bulk(str(tmp_path / "in"), str(out), ["html", "markdown"], jobs=1, quiet=True).failed == 0
    md = (out / "index.md").read_text()
    strip = md[md.index("## Activity by day") : md.index("\n## ", md.index("## Activity by day") + 5)]
    days = re.findall(r"^\| (\d{4}-\d{2}-\d{2}) \| (\d+) \| ([\d,]+) \| \$([\d.]+) \|", strip, re.M)
    assert days == [("2026-11-30", "1", "22,283", "0.0000")]  # the fork added nothing of its own
    assert "2 sessions, 6 turns, 22,283 tokens" in md
    html = (out / "index.html").read_text()
    assert '<details class="activity" open><summary>Activity by day: 1 day, 2026-11-30</summary>' in html
    assert '<meter min="0" max="22283" value="22283" aria-label="22,283 tokens">22,283</meter>' in html
