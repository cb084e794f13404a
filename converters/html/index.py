"""The directory run's index page in HTML: ``OUTDIR/index.html``, every session of the
run grouped by project, linking to its page (see docs/bulk.md, "The index").

Every string from a session or a file name is untrusted: it passes :func:`.escape.text`
like all session text of the HTML format, and the whole page goes through
:func:`.escape.to_utf8` (forbidden code points). Links are the percent-encoded relative
paths the run supplies. The page carries the HTML format's Content-Security-Policy
(:mod:`.assets`), with its own style and script allowed by hash: nothing else loads or runs.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from piconv.converters.common.listing import activity, lineage_text, models_text, readable_date, totals_line

from . import assets
from .escape import text as esc
from .escape import to_utf8

if TYPE_CHECKING:
    from piconv import ListedSession

STYLE = """\
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
.rel{color:var(--muted);font-size:.85rem}tr.sub1 td:first-child{padding-left:1.75rem}
tr.sub2 td:first-child{padding-left:3rem}tr.sub3 td:first-child{padding-left:4.25rem}
.activity{margin:1rem 0}.activity summary{cursor:pointer;font-weight:bold}.activity table{width:auto}
.activity meter{width:12rem;height:.9rem}
"""
MAX_DEPTH = 3
"""Deeper forks and subagents are indented as much as the third level."""

SCRIPT = """\
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

_HEAD = (
    '<tr><th data-sort="t">Session</th><th data-sort="t" aria-sort="descending">Created</th>'
    '<th data-sort="t">Updated</th><th data-sort="t">Models</th>'
    '<th class="n" data-sort="n">Turns</th><th class="n" data-sort="n">Tokens</th><th class="n" data-sort="n">Cost</th></tr>'
)


def owns(existing: bytes) -> bool:
    """A page that names piconv as its generator near its top is piconv's."""
    return assets.GENERATOR.encode() in existing[:4096]


def render(projects: Mapping[str, Sequence[ListedSession]], output_dir: str) -> bytes:
    """The page. When ``output_dir`` holds the archive ``piconv search`` reads, the
    "nothing matches" hint gives the command that searches it."""
    return to_utf8(page(projects, output_dir if _searchable(output_dir) else None))


def _searchable(output_dir: str) -> bool:
    """Whether ``piconv search DIR`` finds an archive in ``output_dir``: the file of the
    format it searches by default (``sqlite``), asked of the registry."""
    import piconv

    try:
        archive = piconv.get_format("sqlite").archive
    except piconv.PluginError:
        return False
    return archive is not None and os.path.isfile(os.path.join(output_dir, archive.file_name))


STRIP_OPEN_DAYS = 14
"""Up to this many days the activity strip is shown open; past it, folded under its summary."""


def _strip(days: list[tuple[str, int, int, float]]) -> str:
    """The activity by day: sessions, tokens and cost each day, newest first, each day's
    tokens a ``<meter>`` against the busiest day's (a bar the browser draws in the page's
    light or dark colours; no script, no style attribute)."""
    if not days:
        return ""
    most = max(t for _d, _n, t, _c in days)
    opened = " open" if len(days) <= STRIP_OPEN_DAYS else ""
    span = days[0][0] if len(days) == 1 else f"{days[0][0]} to {days[-1][0]}"
    out = [
        f'<details class="activity"{opened}><summary>Activity by day: {len(days):,} '
        f"day{'' if len(days) == 1 else 's'}, {esc(span)}</summary>",
        '<table><thead><tr><th>Day</th><th class="n">Sessions</th><th class="n">Tokens</th>'
        '<th class="n">Cost</th><th>Tokens, against the busiest day</th></tr></thead><tbody>',
    ]
    for day, sessions, tokens, cost in reversed(days):
        out.append(
            f'<tr><td class="d">{esc(day)}</td><td class="n">{sessions}</td><td class="n">{tokens:,}</td>'
            f'<td class="n">${cost:.4f}</td><td><meter min="0" max="{max(most, 1)}" value="{tokens}" '
            f'aria-label="{tokens:,} tokens">{tokens:,}</meter></td></tr>'
        )
    out.append("</tbody></table></details>")
    return "".join(out)


def page(projects: Mapping[str, Sequence[ListedSession]], archive_dir: str | None = None) -> str:
    """The page as text. ``archive_dir``: the directory of a ``--to sqlite`` archive,
    named in the hint that says how to search the full text."""
    everything = totals_line(r for rows in projects.values() for r in rows)
    if archive_dir is not None:
        hint = (
            "The filter looks at titles, projects, dates and models only. To search the full text of every "
            f"session: <code>piconv search '<span id=\"nomatch-cmd\"></span>' {esc(shlex.quote(archive_dir))}</code>"
        )
    else:
        hint = (
            "The filter looks at titles, projects, dates and models only. To search the full text, convert "
            "with <code>--to sqlite</code> as well and use <code>piconv search</code>."
        )
    out = [
        assets.head("pi sessions", SCRIPT, STYLE),
        f'<h1>pi sessions</h1><p class="sum">{everything} in {len(projects):,} projects. Times are UTC.</p>',
        _strip(activity(r for rows in projects.values() for r in rows)),
        # Hidden until the script runs: without JavaScript there is nothing to type into.
        '<input id="filter" type="search" placeholder="Filter by project, title, model, date…" '
        'aria-label="Filter sessions" hidden>',
        f'<p id="nomatch" hidden>No session matches “<span id="nomatch-q"></span>”. {hint}</p>',
    ]
    for project, rows in projects.items():
        cwd = next((r.cwd for r in rows if r.cwd), None)
        cwd_html = f' <span class="cwd">{esc(cwd)}</span>' if cwd else ""
        out.append(
            f'<section class="project" data-project="{esc(project)}"><h2>{esc(project)}{cwd_html}</h2>'
            f'<p class="sum">{totals_line(rows)}</p>'
        )
        out.append(f"<table><thead>{_HEAD}</thead><tbody>")
        for r in rows:
            flag = ' <span class="failed">(last conversion failed)</span>' if r.failed else ""
            came = lineage_text(r)
            if came:
                flag += f'<br><span class="rel">↳ {esc(came)}</span>'
            models = esc(models_text(r))
            # a fork or subagent under its parent: indented by a class (the policy allows no style attribute)
            nested = f' class="sub{min(r.depth, MAX_DEPTH)}"' if r.depth > 0 else ""
            out.append(
                f'<tr{nested}><td data-v="{esc(r.title.casefold())}"><a href="{esc(r.link)}">{esc(r.title)}</a>{flag}</td>'
                f'<td class="d" data-v="{esc(r.created)}">{esc(readable_date(r.created))}</td>'
                f'<td class="d" data-v="{esc(r.updated)}">{esc(readable_date(r.updated))}</td>'
                f'<td data-v="{models}">{models}</td>'
                f'<td class="n" data-v="{r.turns}">{r.turns}</td>'
                f'<td class="n" data-v="{r.tokens}">{r.tokens:,}</td>'
                f'<td class="n" data-v="{r.cost!r}">${r.cost:.4f}</td></tr>'
            )
        out.append("</tbody></table></section>")
    out.append(assets.tail(SCRIPT))
    return "".join(out)
