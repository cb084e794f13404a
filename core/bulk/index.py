"""The archive's front page: ``OUTDIR/index.html`` for html, ``OUTDIR/index.md`` for markdown.

Built from the manifest alone (each record carries the facts the worker noted while the
session was in memory), so writing the index never re-reads a session. Every string that
comes from a session or a file name is untrusted: in HTML it passes :func:`_esc`, in a
link it is percent-encoded component by component first; in Markdown :func:`_md`
neutralises the characters with meaning. The HTML page carries the same kind of strict
Content-Security-Policy as the HTML converter's pages: nothing loads or runs but the
page's own style and script, allowed by hash. The core imports no converter, so the
small escaping needed here is written here.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shlex
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from ..facts import clean_title, project_name
from .worker import write_own

INDEXED_FORMATS = ("html", "markdown")
TITLE_CHARS = 120

# Code points HTML forbids in documents (controls, noncharacters, lone surrogates).
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]")


def _esc(s: object) -> str:
    """Escape for element content and double-quoted attribute values."""
    text = _FORBIDDEN.sub("\ufffd", str(s))
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def _href(rel: str) -> str:
    # Each component percent-encoded with nothing kept: a name like "javascript:x" or
    # "?a#b" becomes an inert relative path; only the "/" between components survive.
    # The leading "./" makes that plain to any reader of the page, browser or human.
    # A name that is not UTF-8 is encoded back to its bytes, so the link finds the file.
    return "./" + "/".join(quote(os.fsencode(part), safe="") for part in rel.split("/"))


def _rows(records: Iterable[dict[str, Any]], fmt: str, outdir: str) -> dict[str, list[dict[str, Any]]]:
    """Sessions with an existing output in ``fmt``, grouped by project."""
    projects: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        try:
            row = _row(rec, fmt, outdir)
        except (TypeError, ValueError, OverflowError, AttributeError, UnicodeError):
            continue  # the manifest checks records on load; one that still fails costs its row only
        if row is not None:
            projects.setdefault(row.pop("project"), []).append(row)
    for rows in projects.values():
        rows.sort(key=lambda r: (str(r["created"]), r["file"]), reverse=True)  # newest first
    return dict(sorted(projects.items(), key=lambda kv: (kv[0].casefold(), kv[0])))


def _row(rec: dict[str, Any], fmt: str, outdir: str) -> dict[str, Any] | None:
    out = (rec.get("outputs") or {}).get(fmt)
    if not isinstance(out, dict) or not isinstance(out.get("path"), str):
        return None
    if not os.path.isfile(os.path.join(outdir, *out["path"].split("/"))):
        return None  # the user removed it: the index does not point at nothing
    meta = rec.get("meta") or {}
    rel = rec["input"]
    title = meta.get("title") or meta.get("name") or meta.get("first_prompt")
    title = clean_title(str(title)) if title else ""
    cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    project = meta.get("project") if isinstance(meta.get("project"), str) else project_name(cwd, rel)
    return {
        "project": project,
        "href": _href(out["path"]),
        "title": _clip(title or rel.rsplit("/", 1)[-1]),
        "file": rel.rsplit("/", 1)[-1],
        "cwd": cwd,
        "created": str(meta.get("created") or ""),
        "updated": str(meta.get("updated") or ""),
        "models": ", ".join(str(m) for m in meta.get("models") or []),
        "turns": int(meta.get("turns") or 0),
        "tokens": int(meta.get("tokens") or 0),
        "cost": float(meta.get("cost") or 0.0),
        "failed": rec.get("status") == "failed",
    }


def readable_date(stamp: str) -> str:
    """``2026-01-05T10:00:00.123Z`` as ``2026-01-05 10:00`` (the time stamps are UTC)."""
    match = _STAMP.match(stamp)
    return f"{match.group(1)} {match.group(2)}" if match else stamp


_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})")


def _clip(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= TITLE_CHARS else s[: TITLE_CHARS - 1] + "…"


def _totals(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    rows = list(rows)
    return {
        "sessions": len(rows),
        "turns": sum(r["turns"] for r in rows),
        "tokens": sum(r["tokens"] for r in rows),
        "cost": sum(r["cost"] for r in rows),
    }


_HTML_MARK = '<meta name="generator" content="piconv">'
_MD_HEADING = "# pi sessions\n"
"""What each index begins with, and what tells a file at its place as piconv's."""


def _ours(fmt: str, existing: bytes) -> bool:
    """Whether an index file is one piconv wrote: an index file without piconv's first
    bytes is someone else's, and is not written over."""
    if fmt == "html":
        return _HTML_MARK.encode() in existing[:4096]
    return existing.startswith(_MD_HEADING.encode() + b"\n")


class NotOurIndex(Exception):
    """The index's place holds a file piconv did not write."""


def write_index(fmt: str, records: Iterable[dict[str, Any]], outdir: str, replace_any: bool = False) -> str:
    """Write the index for ``fmt``; returns its path. Rewritten only when its bytes
    change, so a rerun with nothing new leaves it (and its mtime) alone. A file there
    that piconv did not write raises :class:`NotOurIndex` (unless ``replace_any``)."""
    projects = _rows(records, fmt, outdir)
    if fmt == "html":
        archive = os.path.isfile(os.path.join(outdir, "archive.db"))
        name, data = "index.html", render_html(projects, outdir if archive else None).encode("utf-8")
    else:
        name, data = "index.md", render_markdown(projects).encode("utf-8")
    path = os.path.join(outdir, name)
    if not write_own(path, data, outdir, lambda existing: _ours(fmt, existing), replace_any):
        raise NotOurIndex(f"{path}: not written by piconv; left as it is (move it away, or use --overwrite)")
    return path


# --------------------------------------------------------------------------- HTML

_STYLE = """\
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--head:#f6f8fa;--link:#0969da;--bad:#b00}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;--head:#151b23;--link:#4493f8;--bad:#f85149}}
body{font:15px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:80rem;padding:0 1rem;color:var(--fg);background:var(--bg)}
a{color:var(--link)}h1{font-size:1.5rem}h2{font-size:1.1rem;margin:2rem 0 .25rem;overflow-wrap:anywhere}
.cwd,.sum{color:var(--muted);font-weight:normal;font-size:.9rem}.sum{margin:.1rem 0 .5rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--head)}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.d{white-space:nowrap}
th button{font:inherit;font-weight:bold;color:inherit;background:none;border:0;padding:0;cursor:pointer}
th[aria-sort=ascending] button::after{content:" \\25b2"}th[aria-sort=descending] button::after{content:" \\25bc"}
.failed{color:var(--bad)}#filter{width:100%;max-width:30rem;padding:.35rem;font-size:1rem;margin:.5rem 0}
#nomatch{padding:.5rem;border:1px solid var(--line);background:var(--head)}code{font-size:.9em}
"""

_SCRIPT = """\
(function(){
var box=document.getElementById('filter'),none=document.getElementById('nomatch'),
q1=document.getElementById('nomatch-q'),q2=document.getElementById('nomatch-cmd');
box.hidden=false;
var sections=document.querySelectorAll('section.project');
function apply(){
var q=box.value.toLowerCase().trim(),total=0;
sections.forEach(function(s){var shown=0;
var inProject=s.dataset.project.toLowerCase().indexOf(q)>=0;
s.querySelectorAll('tbody tr').forEach(function(r){
var hit=!q||inProject||r.textContent.toLowerCase().indexOf(q)>=0;
r.hidden=!hit;if(hit)shown++;});
s.hidden=shown===0;total+=shown;});
none.hidden=total>0;q1.textContent=box.value;if(q2)q2.textContent=box.value.replace(/'/g,"'\\\\''");
}
box.addEventListener('input',apply);
document.querySelectorAll('th[data-sort]').forEach(function(th){
var b=document.createElement('button');b.type='button';b.textContent=th.textContent;th.textContent='';th.appendChild(b);
b.addEventListener('click',function(){
var table=th.closest('table'),body=table.tBodies[0],col=th.cellIndex,num=th.dataset.sort==='n';
var dir=th.getAttribute('aria-sort')==='descending'?1:-1;
table.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort');});
th.setAttribute('aria-sort',dir===1?'ascending':'descending');
var rows=Array.prototype.slice.call(body.rows);
rows.sort(function(a,b){var x=a.cells[col].dataset.v,y=b.cells[col].dataset.v;
if(num){x=parseFloat(x);y=parseFloat(y);}return x<y?-dir:x>y?dir:0;});
rows.forEach(function(r){body.appendChild(r);});});});
var asked=new URLSearchParams(location.hash.slice(1)),key=(asked.get('sort')||'').toLowerCase();
var want=key.charAt(0)==='-'?'descending':'ascending';key=key.replace(/^-/,'');
document.querySelectorAll('th[data-sort]').forEach(function(th){
if(key&&th.textContent.toLowerCase()===key){th.firstChild.click();
if(th.getAttribute('aria-sort')!==want)th.firstChild.click();}});
if(asked.has('q')){box.value=asked.get('q');apply();}
})();
"""


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode() + "'"


CSP = (
    "default-src 'none'; "
    f"script-src {_hash(_SCRIPT)}; "
    f"style-src {_hash(_STYLE)}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)

_HEAD = (
    '<tr><th data-sort="t">Session</th><th data-sort="t" aria-sort="descending">Created</th>'
    '<th data-sort="t">Updated</th><th data-sort="t">Models</th>'
    '<th class="n" data-sort="n">Turns</th><th class="n" data-sort="n">Tokens</th><th class="n" data-sort="n">Cost</th></tr>'
)


def _summary(t: dict[str, Any]) -> str:
    sessions = "1 session" if t["sessions"] == 1 else f"{t['sessions']:,} sessions"
    return f"{sessions}, {t['turns']:,} turns, {t['tokens']:,} tokens, ${t['cost']:,.2f}"


def render_html(projects: dict[str, list[dict[str, Any]]], archive_dir: str | None = None) -> str:
    """The index page. ``archive_dir``: the directory of a ``--to sqlite`` archive, named
    in the hint that says how to search the full text."""
    everything = _totals(r for rows in projects.values() for r in rows)
    if archive_dir is not None:
        hint = (
            "The filter looks at titles, projects, dates and models only. To search the full text of every "
            f"session: <code>piconv search '<span id=\"nomatch-cmd\"></span>' {_esc(shlex.quote(archive_dir))}</code>"
        )
    else:
        hint = (
            "The filter looks at titles, projects, dates and models only. To search the full text, convert "
            "with <code>--to sqlite</code> as well and use <code>piconv search</code>."
        )
    out = [
        "<!DOCTYPE html>\n",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        _HTML_MARK,
        "<title>pi sessions</title>",
        f"<style>{_STYLE}</style></head><body>",
        f'<h1>pi sessions</h1><p class="sum">{_summary(everything)} in {len(projects):,} projects. Times are UTC.</p>',
        # Hidden until the script runs: without JavaScript there is nothing to type into.
        '<input id="filter" type="search" placeholder="Filter by project, title, model, date…" '
        'aria-label="Filter sessions" hidden>',
        f'<p id="nomatch" hidden>No session matches “<span id="nomatch-q"></span>”. {hint}</p>',
    ]
    for project, rows in projects.items():
        cwd = next((r["cwd"] for r in rows if r["cwd"]), None)
        cwd_html = f' <span class="cwd">{_esc(cwd)}</span>' if cwd else ""
        out.append(
            f'<section class="project" data-project="{_esc(project)}"><h2>{_esc(project)}{cwd_html}</h2>'
            f'<p class="sum">{_summary(_totals(rows))}</p>'
        )
        out.append(f"<table><thead>{_HEAD}</thead><tbody>")
        for r in rows:
            flag = ' <span class="failed">(last conversion failed)</span>' if r["failed"] else ""
            out.append(
                f'<tr><td data-v="{_esc(r["title"].casefold())}"><a href="{_esc(r["href"])}">{_esc(r["title"])}</a>{flag}</td>'
                f'<td class="d" data-v="{_esc(r["created"])}">{_esc(readable_date(r["created"]))}</td>'
                f'<td class="d" data-v="{_esc(r["updated"])}">{_esc(readable_date(r["updated"]))}</td>'
                f'<td data-v="{_esc(r["models"])}">{_esc(r["models"])}</td>'
                f'<td class="n" data-v="{r["turns"]}">{r["turns"]}</td>'
                f'<td class="n" data-v="{r["tokens"]}">{r["tokens"]:,}</td>'
                f'<td class="n" data-v="{r["cost"]!r}">${r["cost"]:.4f}</td></tr>'
            )
        out.append("</tbody></table></section>")
    out.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "".join(out)


# --------------------------------------------------------------------------- Markdown

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")


def _md(s: object) -> str:
    """Text for a table cell: one line, every character with Markdown meaning escaped;
    ``<`` as ``&lt;``, since a GFM autolink before it (``http://x\\<b>``) would take the
    backslash and leave the tag."""
    text = _FORBIDDEN.sub("\ufffd", " ".join(str(s).split()))
    return _MD_SPECIAL.sub(r"\\\1", text).replace("\\<", "&lt;")


def render_markdown(projects: dict[str, list[dict[str, Any]]]) -> str:
    everything = _totals(r for rows in projects.values() for r in rows)
    out = [
        _MD_HEADING,
        "\n",
        f"{_summary(everything)} in {len(projects):,} projects. Times are UTC.\n",
    ]
    for project, rows in projects.items():
        cwd = next((r["cwd"] for r in rows if r["cwd"]), None)
        out.append(f"\n## {_md(project)}\n\n")
        if cwd:
            out.append(f"`cwd`: {_md(cwd)}\n\n")
        out.append(f"{_summary(_totals(rows))}\n\n")
        out.append("| Session | Created | Updated | Models | Turns | Tokens | Cost |\n")
        out.append("| --- | --- | --- | --- | ---: | ---: | ---: |\n")
        for r in rows:
            flag = " (last conversion failed)" if r["failed"] else ""
            out.append(
                f"| [{_md(r['title'])}](<{r['href']}>){flag} | {_md(readable_date(r['created']))} | "
                f"{_md(readable_date(r['updated']))} | "
                f"{_md(r['models'])} | {r['turns']} | {r['tokens']:,} | ${r['cost']:.4f} |\n"
            )
    return "".join(out)
