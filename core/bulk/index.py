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
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from .worker import write_atomic

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
    """Sessions with an existing output in ``fmt``, grouped by project folder."""
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
    return dict(sorted(projects.items()))


def _row(rec: dict[str, Any], fmt: str, outdir: str) -> dict[str, Any] | None:
    out = (rec.get("outputs") or {}).get(fmt)
    if not isinstance(out, dict) or not isinstance(out.get("path"), str):
        return None
    if not os.path.isfile(os.path.join(outdir, *out["path"].split("/"))):
        return None  # the user removed it: the index does not point at nothing
    meta = rec.get("meta") or {}
    rel = rec["input"]
    title = meta.get("name") or meta.get("first_prompt") or rel.rsplit("/", 1)[-1]
    return {
        "project": rel.rsplit("/", 1)[0] if "/" in rel else ".",
        "href": _href(out["path"]),
        "title": _clip(str(title)),
        "file": rel.rsplit("/", 1)[-1],
        "cwd": meta.get("cwd"),
        "created": meta.get("created") or "",
        "updated": meta.get("updated") or "",
        "models": ", ".join(str(m) for m in meta.get("models") or []),
        "turns": int(meta.get("turns") or 0),
        "tokens": int(meta.get("tokens") or 0),
        "cost": float(meta.get("cost") or 0.0),
        "failed": rec.get("status") == "failed",
    }


def _clip(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= TITLE_CHARS else s[: TITLE_CHARS - 1] + "…"


def write_index(fmt: str, records: Iterable[dict[str, Any]], outdir: str) -> str:
    """Write the index for ``fmt``; returns its path. Rewritten only when its bytes
    change, so a rerun with nothing new leaves it (and its mtime) alone."""
    projects = _rows(records, fmt, outdir)
    if fmt == "html":
        name, data = "index.html", render_html(projects).encode("utf-8")
    else:
        name, data = "index.md", render_markdown(projects).encode("utf-8")
    path = os.path.join(outdir, name)
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return path
    except OSError:
        pass
    write_atomic(path, data, outdir)
    return path


# --------------------------------------------------------------------------- HTML

_STYLE = """\
body{font:15px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:78rem;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.1rem;margin-top:2rem;word-break:break-all}
.cwd{color:#666;font-weight:normal;font-size:.9rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #8884;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.failed{color:#b00}#filter{width:100%;max-width:30rem;padding:.35rem;font-size:1rem;margin:.5rem 0}
"""

_SCRIPT = """\
(function(){
var box=document.getElementById('filter');box.hidden=false;
var sections=document.querySelectorAll('section.project');
box.addEventListener('input',function(){
var q=box.value.toLowerCase().trim();
sections.forEach(function(s){var shown=0;
s.querySelectorAll('tbody tr').forEach(function(r){
var hit=!q||r.textContent.toLowerCase().indexOf(q)>=0||s.dataset.project.toLowerCase().indexOf(q)>=0;
r.hidden=!hit;if(hit)shown++;});
s.hidden=shown===0;});
});
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


def render_html(projects: dict[str, list[dict[str, Any]]]) -> str:
    count = sum(len(r) for r in projects.values())
    out = [
        "<!DOCTYPE html>\n",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        '<meta name="generator" content="piconv">',
        "<title>pi sessions</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>pi sessions</h1><p>{count} sessions in {len(projects)} projects.</p>",
        # Hidden until the script runs: without JavaScript there is nothing to type into.
        '<input id="filter" type="search" placeholder="Filter by project, title, model…" aria-label="Filter sessions" hidden>',
    ]
    for project, rows in projects.items():
        cwd = next((r["cwd"] for r in rows if r["cwd"]), None)
        cwd_html = f' <span class="cwd">{_esc(cwd)}</span>' if cwd else ""
        out.append(
            f'<section class="project" data-project="{_esc(project)}"><h2>{_esc(project)}{cwd_html}</h2>'
        )
        out.append(
            "<table><thead><tr><th>Session</th><th>Created</th><th>Updated</th><th>Models</th>"
            '<th class="n">Turns</th><th class="n">Tokens</th><th class="n">Cost</th></tr></thead><tbody>'
        )
        for r in rows:
            flag = ' <span class="failed">(last conversion failed)</span>' if r["failed"] else ""
            out.append(
                f'<tr><td><a href="{_esc(r["href"])}">{_esc(r["title"])}</a>{flag}</td>'
                f"<td>{_esc(r['created'])}</td><td>{_esc(r['updated'])}</td><td>{_esc(r['models'])}</td>"
                f'<td class="n">{r["turns"]}</td><td class="n">{r["tokens"]:,}</td><td class="n">${r["cost"]:.4f}</td></tr>'
            )
        out.append("</tbody></table></section>")
    out.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "".join(out)


# --------------------------------------------------------------------------- Markdown

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")


def _md(s: object) -> str:
    """Text for a table cell: one line, every character with Markdown meaning escaped."""
    text = _FORBIDDEN.sub("\ufffd", " ".join(str(s).split()))
    return _MD_SPECIAL.sub(r"\\\1", text)


def render_markdown(projects: dict[str, list[dict[str, Any]]]) -> str:
    count = sum(len(r) for r in projects.values())
    out = ["# pi sessions\n", "\n", f"{count} sessions in {len(projects)} projects.\n"]
    for project, rows in projects.items():
        cwd = next((r["cwd"] for r in rows if r["cwd"]), None)
        out.append(f"\n## {_md(project)}\n\n")
        if cwd:
            out.append(f"`cwd`: {_md(cwd)}\n\n")
        out.append("| Session | Created | Updated | Models | Turns | Tokens | Cost |\n")
        out.append("| --- | --- | --- | --- | ---: | ---: | ---: |\n")
        for r in rows:
            flag = " (last conversion failed)" if r["failed"] else ""
            out.append(
                f"| [{_md(r['title'])}](<{r['href']}>){flag} | {_md(r['created'])} | {_md(r['updated'])} | "
                f"{_md(r['models'])} | {r['turns']} | {r['tokens']:,} | ${r['cost']:.4f} |\n"
            )
    return "".join(out)
