"""``piconv diff --to html``: two conversations side by side on one page.

Every string of the diff comes from a session or a file name: it reaches the page only
through :func:`.escape.text`, and the whole page through :func:`.escape.to_utf8`
(forbidden code points), as on every page of the format. The page carries the format's
Content-Security-Policy (:mod:`.assets`) with its own style and script allowed by hash,
and is checked by the format's own check (:func:`.check.check_page`) before it is given
out. The script only adds a button that hides the turns that are the same: everything is
readable without it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from piconv import ValidationFailed
from piconv.converters.common.figures import money, plural

from . import assets
from .check import check_page
from .escape import text as esc
from .escape import to_utf8

if TYPE_CHECKING:
    from piconv import SessionDiff

# The parts of a SessionDiff (a side, its figures, a turn, a pair of turns) are read by
# their attributes, documented in docs/diff.md; only the whole is a public name.
Side: TypeAlias = Any
Figures: TypeAlias = Any
Turn: TypeAlias = Any
TurnPair: TypeAlias = Any

STYLE = """\
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--head:#f6f8fa;--a:#0969da;--b:#8250df;--mark:#fff8c5;--bad:#b00}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;--head:#151b23;--a:#4493f8;--b:#ab7df8;--mark:#3b2e00;--bad:#f85149}}
body{font:15px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:90rem;padding:0 1rem;color:var(--fg);background:var(--bg)}
h1{font-size:1.5rem;overflow-wrap:anywhere}h2{font-size:1.15rem;margin:2rem 0 .5rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
th{background:var(--head)}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
table.turns td.side{width:48%}td.mark{width:2rem;text-align:center;font-weight:bold}
.sum,.fig,.note{color:var(--muted);font-size:.9rem}p{margin:.2rem 0}
.prompt{white-space:pre-wrap;font-weight:600}.reply{white-space:pre-wrap}
ul.tools{margin:.2rem 0;padding-left:1.2rem}ul.tools code{font-size:.85em}
.changed{background:var(--mark)}.err{color:var(--bad)}
th.a{color:var(--a)}th.b{color:var(--b)}tr.only-a td.side:last-child,tr.only-b td.side:first-of-type{background:var(--head)}
tr.differs-list td{border-bottom:2px solid var(--line)}
button{font:inherit;padding:.3rem .7rem;margin:.3rem 0}
@media (max-width:45rem){table.turns td,table.turns th{display:block;width:auto}}
"""

SCRIPT = """\
(function(){
var b=document.getElementById('only');if(!b)return;b.hidden=false;
b.addEventListener('click',function(){var on=b.classList.toggle('on');
document.querySelectorAll('tr.same').forEach(function(r){r.hidden=on;});
b.textContent=on?'Show every turn':'Show only the turns that differ';});
})();
"""

TITLES = {
    "branches": "two branches of one session",
    "fork": "a fork and the session it came from",
    "sessions": "two sessions",
}


def render(diff: SessionDiff) -> bytes:
    """The page, checked; :class:`piconv.ValidationFailed` if the check finds anything
    (it never should: the check is a second line of defence)."""
    data = to_utf8(page(diff))
    problems = check_page(data)
    if problems:
        raise ValidationFailed(f"html diff page failed validation: {'; '.join(problems[:5])}")
    return data


def _time(seconds: float | None) -> str:
    return "&#8211;" if seconds is None else f"{seconds:,.3f} s"


def _where(side: Side) -> str:
    name = os.path.basename(side.source) if side.source else "(no file)"
    label = f" &#8220;{esc(side.leaf_label)}&#8221;" if side.leaf_label else ""
    leaf = f" at <code>{esc(side.leaf_id)}</code>{label}" if side.leaf_id else " (empty)"
    title = f"<br>{esc(side.session_name)}" if side.session_name else ""
    return f"<code>{esc(name)}</code>{leaf}{title}"


def _list(items: Sequence[str]) -> str:
    return "<br>".join(esc(i) for i in items) or "&#8211;"


def _figure_rows(parts: Sequence[Figures]) -> str:
    rows: list[tuple[str, list[str]]] = [
        ("entries", [f"{p.entries:,}" for p in parts]),
        ("turns", [f"{p.turns:,}" for p in parts]),
        ("tool calls", [f"{p.calls:,}" for p in parts]),
        ("by tool", [_list([f"{n} {c:,}" for n, c in p.tool_calls]) for p in parts]),
        ("errors", [f"{p.errors:,}" for p in parts]),
        ("tokens", [f"{p.tokens:,}" for p in parts]),
        ("input / output", [f"{p.usage.input_tokens:,} / {p.usage.output_tokens:,}" for p in parts]),
        (
            "cache read / write",
            [f"{p.usage.cache_read_tokens:,} / {p.usage.cache_write_tokens:,}" for p in parts],
        ),
        ("cost", [money(p.cost) for p in parts]),
        ("wall time", [_time(p.seconds) for p in parts]),
        ("models", [_list(p.models) for p in parts]),
        ("files", [_list([f"{f.path} ({f.how})" for f in p.files]) for p in parts]),
    ]
    out = []
    for label, cells in rows:
        tds = "".join(f"<td>{c}</td>" for c in cells)
        out.append(f"<tr><th>{label}</th>{tds}</tr>")
    return "".join(out)


def _parting(diff: SessionDiff) -> str:
    if not diff.parted:
        return '<p class="note">The sides do not part: neither holds anything after the common part.</p>'
    cells = []
    for side in (diff.a, diff.b):
        first = side.turns[0] if side.turns else None
        if first is None:
            said = '<span class="note">nothing after the common part</span>'
        elif first.continued:
            said = f'the reply to <span class="prompt">{esc(diff.shared_prompt or "(no prompt)")}</span>'
        else:
            said = f'<span class="prompt">{esc(first.prompt) or "(an empty prompt)"}</span>'
        cells.append(f'<td class="side">{said}</td>')
    return (
        '<table class="turns"><thead><tr><th class="a">A</th><th class="b">B</th></tr></thead>'
        f"<tbody><tr>{''.join(cells)}</tr></tbody></table>"
    )


def _turn(turn: Turn | None, differs: Sequence[str]) -> str:
    if turn is None:
        return '<td class="side"><p class="note">(no turn here)</p></td>'

    def mark(what: str) -> str:
        return " changed" if what in differs else ""

    if turn.continued:
        prompt = '<p class="note">(the rest of the turn begun in the common part)</p>'
    else:
        prompt = f'<p class="prompt{mark("prompt")}">{esc(turn.prompt) or "(an empty prompt)"}</p>'
    tools = "".join(
        f"<li{_ERROR if t.error else ''}>{esc(t.name)} <code>{esc(t.target)}</code></li>" for t in turn.tools
    )
    tools_html = f'<ul class="tools{mark("tools")}">{tools}</ul>' if tools else ""
    reply = f'<p class="reply{mark("reply")}">&#8594; {esc(turn.reply)}</p>' if turn.reply else ""
    errors = (
        f'<span class="err{mark("errors")}">{plural(turn.errors, "error")}</span>, ' if turn.errors else ""
    )
    models = esc(", ".join(turn.models))
    if models and "models" in differs:
        models = f'<span class="changed">{models}</span>'
    fig = (
        f'<p class="fig">turn {turn.number:,}: {errors}{turn.usage.tokens:,} tokens, {money(turn.usage.cost)}, '
        f"{_time(turn.seconds)}{'; ' + models if models else ''}</p>"
    )
    return f'<td class="side">{prompt}{tools_html}{reply}{fig}</td>'


_ERROR = ' class="err"'
_ROW_CLASS = {"=": "same", "~": "differs", "<": "only-a", ">": "only-b"}


def _pairs(pairs: Sequence[TurnPair]) -> str:
    if not pairs:
        return ""
    rows = []
    for k, pair in enumerate(pairs, 1):
        mark = pair.mark
        cls = _ROW_CLASS[mark]
        rows.append(
            f'<tr class="{cls}" id="t{k}"><td class="mark" title="{cls}">{esc(mark)}</td>'
            f"{_turn(pair.a, pair.differs)}{_turn(pair.b, pair.differs)}</tr>"
        )
        if pair.differs:
            rows.append(
                f'<tr class="differs-list"><td></td><td class="note">differs: {esc(", ".join(pair.differs))}</td><td></td></tr>'
            )
    return (
        "<section><h2>Turn by turn after the common part</h2>"
        '<p class="note">= the same, ~ differs (highlighted), &lt; only in A, &gt; only in B.</p>'
        '<button type="button" id="only" hidden>Show only the turns that differ</button>'
        '<table class="turns"><thead><tr><th></th><th class="a">A</th><th class="b">B</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def page(diff: SessionDiff) -> str:
    """The page as text (not yet cleaned of forbidden code points)."""
    what = TITLES.get(diff.kind, diff.kind)
    c = diff.common
    if diff.common_ancestor is None:
        common = "none: the sides share no entry."
    else:
        last = (
            f' The last prompt both hold: <span class="prompt">{esc(diff.shared_prompt)}</span>'
            if diff.shared_prompt
            else ""
        )
        common = (
            f"{plural(c.entries, 'entry', 'entries')}, {plural(c.turns, 'turn')}, up to <code>{esc(diff.common_ancestor)}</code>"
            f"{' (' + esc(c.ended) + ')' if c.ended else ''}.{last}"
        )
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in diff.notes)
    out = [
        assets.head(f"piconv diff: {esc(what)}", SCRIPT, STYLE),
        f"<header><h1>piconv diff: {esc(what)}</h1>{notes}</header>",
        '<table><thead><tr><th></th><th class="a">A</th><th class="b">B</th></tr></thead><tbody>'
        f"<tr><th>session</th><td>{_where(diff.a)}</td><td>{_where(diff.b)}</td></tr></tbody></table>",
        f"<section><h2>Common part</h2><p>{common}</p></section>",
        f"<section><h2>Where the sides part</h2>{_parting(diff)}</section>",
        "<section><h2>Figures</h2>"
        '<p class="note">Each side&#8217;s own part is what it holds after the common part; its whole path runs '
        "from the root to its leaf. Tokens and cost are counted as <code>piconv stats</code> counts them.</p>"
        '<table><thead><tr><th></th><th>common</th><th class="a">A only</th><th class="b">B only</th>'
        '<th class="a">A whole path</th><th class="b">B whole path</th></tr></thead><tbody>'
        f"{_figure_rows([c, diff.a.own, diff.b.own, diff.a.path, diff.b.path])}</tbody></table></section>",
        _pairs(diff.pairs),
        assets.tail(SCRIPT),
    ]
    return "".join(out)
