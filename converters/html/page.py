"""The page: head with CSP, header with session facts and navigation, the tree, the script.

The markup the converter writes itself is pure ASCII (typographic characters as
character references): a chunk whose session text is ASCII then stays a one-byte-per-
character string, which joins, encodes and scans several times faster.

Output is streamed to the binary stream in chunks of about a megabyte, so memory stays
bounded by the document, not by the page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import IO, Any

from piconv import ValidationFailed, session_title
from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Document,
    Entry,
    ExtensionMessage,
    MessageBody,
    ShellCommand,
    SummaryMessage,
    SystemMessage,
    ToolCall,
    ToolResult,
    UsageRecord,
    UserMessage,
)
from piconv.report import Report

from . import assets
from .blocks import Ctx
from .check import check_body, check_page
from .entries import render_entry
from .escape import anchor, to_utf8
from .escape import text as esc
from .highlight import Highlighter, with_requirements
from .languages import page_languages
from .overview import write_overview
from .readable import full_time, path_html
from .tree import TreeWriter, preview

FLUSH_AT = 1 << 20
LIVE_NOTE = (
    '<p class="note" id="live">Kept current by <code>piconv watch</code>: this page reloads itself every '
    f"{assets.RELOAD_SECONDS} seconds while the session is watched, and keeps your place.</p>"
)


class Pairs:
    """Pairs each tool call with one result carrying its call id (first in file order
    not yet drawn). A paired result is drawn inside its call, never twice.

    Computed up front over the entries in page order (the order they are drawn in).
    """

    def __init__(self, doc: Document, order: Iterable[Entry]) -> None:
        by_call: dict[str, list[Entry]] = {}
        for e in doc.entries:
            msg = e.message
            if isinstance(msg, ToolResult) and isinstance(msg.call_id, str):
                by_call.setdefault(msg.call_id, []).append(e)
        paired: set[str] = set()
        drawn: set[str] = set()
        found: dict[tuple[int, int], tuple[ToolResult, str]] = {}
        for entry in order:
            msg = entry.message
            if isinstance(msg, AssistantMessage) and by_call:
                k = 0
                for part in msg.content or ():
                    if not isinstance(part, ToolCall):
                        continue
                    if isinstance(part.call_id, str):
                        for e in by_call.get(part.call_id, ()):
                            if e.id not in paired and e.id not in drawn:
                                paired.add(e.id)
                                found[(id(entry), k)] = (e.message, anchor(e.id))  # type: ignore[assignment]
                                break
                    k += 1
            drawn.add(entry.id)
        self.found = found
        self.paired = paired

    def result_for(self, entry: Entry, k: int) -> tuple[ToolResult, str] | None:
        """The result of ``entry``'s ``k``-th tool call, with its entry's anchor."""
        return self.found.get((id(entry), k))

    def is_paired(self, entry: Entry) -> bool:
        return entry.id in self.paired


_ROLE_NAMES: dict[type, str] = {
    UserMessage: "user",
    AssistantMessage: "assistant",
    ToolResult: "tool results",
    ShellCommand: "shell",
    ExtensionMessage: "extension",
    SystemMessage: "system",
    SummaryMessage: "summary",
}


class _Stats:
    def __init__(self, doc: Document) -> None:
        self.counts: dict[str, int] = {}
        self.tool_calls = 0
        self.tokens = {"input": 0, "output": 0, "cache read": 0, "cache write": 0}
        self.cost = 0.0
        self.has_cost = False
        # Responses by model, in order of first use: a model that answered nothing
        # (one only switched to) is left out of the header, its switch kept in the tree.
        self.models: dict[str, int] = {}
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        for e in doc.entries:
            if isinstance(e.timestamp, str):
                self.first_ts = self.first_ts or e.timestamp
                self.last_ts = e.timestamp
            body = e.body
            if isinstance(body, MessageBody):
                msg = body.message
                key = _ROLE_NAMES.get(type(msg), "other")
                self.counts[key] = self.counts.get(key, 0) + 1
                if isinstance(msg, AssistantMessage):
                    self.tool_calls += sum(1 for p in msg.content or () if isinstance(p, ToolCall))
                    if msg.model is not None and isinstance(msg.model.model, str):
                        name = (
                            f"{msg.model.provider}/{msg.model.model}"
                            if isinstance(msg.model.provider, str)
                            else msg.model.model
                        )
                        self.models[name] = self.models.get(name, 0) + 1
                    self._usage(msg.usage)
            elif isinstance(body, Compaction):
                self.counts["compactions"] = self.counts.get("compactions", 0) + 1
                self._usage(body.usage)
            elif isinstance(body, BranchSummary):
                self.counts["branch summaries"] = self.counts.get("branch summaries", 0) + 1
                self._usage(body.usage)
            elif isinstance(body, UsageRecord):
                self._usage(body.usage)

    def _usage(self, u: Any) -> None:
        if u is None:
            return
        for key, v in (
            ("input", u.input_tokens),
            ("output", u.output_tokens),
            ("cache read", u.cache_read_tokens),
            ("cache write", u.cache_write_tokens),
        ):
            if isinstance(v, int):
                self.tokens[key] += v
        c = u.cost
        if c is not None:
            total = (
                c.total
                if isinstance(c.total, (int, float))
                else sum(
                    x for x in (c.input, c.output, c.cache_read, c.cache_write) if isinstance(x, (int, float))
                )
            )
            self.cost += total
            self.has_cost = True


def _dl(rows: list[tuple[str, str]]) -> str:
    return '<dl class="facts">' + "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in rows) + "</dl>"


def page_title(doc: Document) -> str:
    """The session's name, else its first prompt (what the archive's index says), else its id."""
    s = doc.session
    return session_title(doc) or (f"Session {s.id}" if s.id else "pi session")


def _compact(n: int) -> str:
    """A count as a reader takes it in (``3.7k``, ``54.7M``), the exact one as its title."""
    if n < 1000:
        return f"{n:,}"
    for size, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1000, "k")):
        if n >= size:
            value = n / size
            shown = f"{value:.1f}" if value < 100 else f"{value:.0f}"
            return f'<span title="{n:,}">{shown}{unit}</span>'
    return f"{n:,}"  # (not reached)


def _models(models: Mapping[str, int]) -> str:
    """The models that answered, each with its count of responses when there are several."""
    if len(models) == 1:
        return esc(next(iter(models)))
    return ", ".join(f'{esc(m)} <span class="count">({n:,})</span>' for m, n in models.items()) or "unknown"


def _header(doc: Document, stats: _Stats, labels: Mapping[str, str], leaf_id: str | None) -> str:
    s = doc.session
    title = page_title(doc)
    rows: list[tuple[str, str]] = []
    if s.id:
        rows.append(("Session", esc(s.id)))
    if s.cwd:
        rows.append(("Directory", f"<code>{path_html(s.cwd, 'path')}</code>"))
    started = s.created or stats.first_ts
    if started:
        rows.append(("Started", full_time(started)))
    if stats.last_ts and stats.last_ts != started:
        rows.append(("Last entry", full_time(stats.last_ts)))
    if s.parent_session:
        rows.append(("Forked from", esc(s.parent_session)))
    rows.append(("Models", _models(stats.models)))
    msgs = ", ".join(f"{n:,} {k}" for k, n in stats.counts.items()) or "none"
    rows.append(("Messages", msgs))
    rows.append(("Tool calls", f"{stats.tool_calls:,}"))
    tok = " &#183; ".join(f"{_compact(v)} {k}" for k, v in stats.tokens.items() if v) or "none recorded"
    rows.append(("Tokens", tok))
    if stats.has_cost:
        rows.append(("Cost", f"${stats.cost:.3f}"))
    leaves = doc.leaves()
    rows.append(
        ("Entries", f"{len(doc.entries):,} in {len(leaves):,} branch{'es' if len(leaves) != 1 else ''}")
    )

    nav: list[str] = []
    if len(leaves) > 1:
        items = []
        names = _leaf_names(doc, leaves)
        for leaf in leaves:
            cur = ' <span class="current">open</span>' if leaf.id == leaf_id else ""
            ts = " " + full_time(leaf.timestamp) if isinstance(leaf.timestamp, str) else ""
            items.append(f'<li><a href="#{anchor(leaf.id)}">{esc(names[leaf.id])}</a>{cur}{ts}</li>')
        nav.append(
            f'<details class="nav-list"><summary>Branches ({len(leaves):,} ends)</summary><ol>{"".join(items)}</ol></details>'
        )
    if labels:
        items = "".join(f'<li><a href="#{anchor(t)}">{esc(lab)}</a></li>' for t, lab in labels.items())
        nav.append(
            f'<details class="nav-list" open><summary>Labels ({len(labels):,})</summary><ul>{items}</ul></details>'
        )
    if doc.issues:
        items = "".join(
            f"<li>line {i.line}: <code>{esc(i.code)}</code> {esc(i.message)}</li>" for i in doc.issues[:500]
        )
        more = f"<li>&#8230; and {len(doc.issues) - 500:,} more</li>" if len(doc.issues) > 500 else ""
        nav.append(
            f'<details class="nav-list problems"><summary>Problems in the file ({len(doc.issues):,})</summary><ul>{items}{more}</ul></details>'
        )
    controls = (
        '<div id="controls" class="controls" hidden>'
        '<button type="button" data-act="expand">Expand all (e)</button>'
        '<button type="button" data-act="collapse">Collapse all (c)</button>'
        '<button type="button" data-act="thinking">Thinking (t)</button>'
        '<button type="button" data-act="tools">Tool output (o)</button>'
        "</div>"
    )
    leaf = (
        f'<p class="note">Open by default: the path to the last entry, <a href="#{anchor(doc.leaf_id)}">jump to it</a>.</p>'
        if doc.leaf_id
        else ""
    )
    # What the filters left out (--detail), said where a reader starts.
    notes = "".join(f'<p class="note filtered">{esc(n)}</p>' for n in doc.notes.values())
    return f'<header class="page-head"><h1>{esc(title)}</h1>{_dl(rows)}{notes}{"".join(nav)}{leaf}{controls}</header>'


def _leaf_names(doc: Document, leaves: list[Entry]) -> dict[str, str]:
    """Each branch end named by the last user text on its path. Walks up from every leaf
    but stops at an entry already named: each entry is visited once, however many
    leaves share it (a walk per leaf to the root was quadratic on branchy sessions)."""
    named: dict[str, str] = {}
    for leaf in leaves:
        walked: dict[str, None] = {}
        e: Entry | None = leaf
        name = leaf.kind
        while e is not None:
            if e.id in named:
                name = named[e.id]
                break
            if isinstance(e.message, UserMessage):
                name = preview(doc, e, limit=1)
                break
            if e.id in walked:  # a parent cycle
                break
            walked[e.id] = None
            e = doc.get(e.parent_id) if e.parent_id is not None else None
        for eid in walked:
            named[eid] = name
        named[leaf.id] = name
    return named


class _Sink:
    """Page chunks → UTF-8 bytes on ``out`` in pieces of about ``FLUSH_AT`` characters,
    each body piece checked (check.check_body) when the page is validated."""

    def __init__(self, out: IO[bytes], validate: bool) -> None:
        self.out = out
        self.validate = validate
        self.failed = False
        self.buf: list[str] = []
        self.size = 0

    def emit(self, chunk: str) -> None:
        self.buf.append(chunk)
        self.size += len(chunk)
        if self.size >= FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            # Forbidden code points (controls, noncharacters, lone surrogates) become
            # U+FFFD here, once per chunk: the markup around session text has none, so
            # this equals cleaning every string, at a fraction of the cost.
            self.body(to_utf8("".join(self.buf)))
            self.buf.clear()
        self.size = 0

    def body(self, data: bytes) -> None:
        if self.validate and not self.failed and check_body(data):
            self.failed = True
        self.out.write(data)


def write_page(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    # The grammars are chosen before the body is written: the script's hash goes in the
    # CSP at the top of the page.
    languages = with_requirements(page_languages(doc))
    watched = bool(options.get("watched"))  # piconv watch keeps this page current
    script = assets.script(languages, live=watched)
    ctx = Ctx(
        highlighter=Highlighter(languages),
        leading_system=_leading_system(doc),
        output_left_out="detail:calls" in doc.notes,
    )
    labels = doc.labels()
    stats = _Stats(doc)
    # --leaf (a common option) chooses which path is open; every branch is drawn anyway.
    leaf_id = options.get("leaf") if isinstance(options.get("leaf"), str) else doc.leaf_id

    # The page in order: tree markup (strings) and the entries drawn between them.
    items: list[Any] = []
    tree = TreeWriter(doc, _itself, items.append, leaf_id)
    tree.write()
    entries = [item for item in items if not isinstance(item, str)]
    pairs = Pairs(doc, entries)

    validate = bool(options.get("validate"))
    sink = _Sink(out, validate)
    head = to_utf8(assets.head(esc(page_title(doc)), script, reload=watched))
    out.write(head)
    if watched:
        sink.emit(LIVE_NOTE)
    sink.emit(_header(doc, stats, labels, leaf_id))
    write_overview(doc, tree.kids, tree.on_path, leaf_id, labels, sink.emit)
    sink.emit('<main id="transcript">')

    emit = sink.emit
    label = labels.get
    expand = ctx.expand
    for item in items:
        if isinstance(item, str):
            emit(item)
        else:
            for piece in expand(render_entry(ctx, item, pairs, label(item.id))):
                emit(piece)
    sink.emit("</main>")
    sink.flush()
    tail = to_utf8(assets.tail(script))
    out.write(tail)

    if validate and (sink.failed or check_page(head + tail)):
        _fail(doc, out, head + tail)

    report.entries_read = len(doc.entries)
    report.entries_written = len(entries)
    report.lines_read = doc.lines_read
    if ctx.images_refused:
        report.add(
            "html:image-refused", count=ctx.images_refused, detail="image type not allowed or data invalid"
        )


def _leading_system(doc: Document) -> frozenset[str]:
    """The system entries with no system state above them (a system message, or a
    compaction carrying the prompt): each starts the prompt on its branch. Each entry is
    walked over once, however many system entries sit below it."""
    carries: dict[str, bool] = {}  # entry id -> it or an entry above it carries system state

    def above(entry: Entry) -> bool:
        walked: dict[str, None] = {}
        cur: Entry | None = doc.get(entry.parent_id) if entry.parent_id is not None else None
        found = False
        while cur is not None:
            if cur.id in carries:
                found = carries[cur.id]
                break
            if isinstance(cur.message, SystemMessage) or (
                isinstance(cur.body, Compaction) and cur.body.checkpoint is not None
            ):
                found = True
                walked[cur.id] = None
                break
            if cur.id in walked:  # a parent cycle
                break
            walked[cur.id] = None
            cur = doc.get(cur.parent_id) if cur.parent_id is not None else None
        for eid in walked:
            carries[eid] = found
        return found

    return frozenset(e.id for e in doc.entries if isinstance(e.message, SystemMessage) and not above(e))


def _itself(entry: Entry) -> Entry:
    return entry


def _fail(doc: Document, out: IO[bytes], ends: bytes) -> None:
    """Raise ValidationFailed with the whole page's problems (read back when ``out``
    allows it, which the API's temporary file does; else those of the head and tail)."""
    try:
        out.flush()
        out.seek(0)
        problems = check_page(out.read())
    except (OSError, ValueError, AttributeError):
        problems = check_page(ends) or ["the page body holds markup outside the converter's vocabulary"]
    shown = "; ".join(problems[:5])
    raise ValidationFailed(
        f"html output failed validation ({len(problems)} problems): {shown}", path=doc.session.source_path
    )
