"""What an archive says about a session: title, project, dates, models, turns, tokens, cost.

One definition for every place that lists sessions (the directory run's index, the
``sqlite`` format's ``sessions`` table), public as :func:`piconv.session_facts` so a
converter reaches it through the public API; :class:`ListedSession` is one session as a
format's index page gets it (the run keeps the facts in its manifest and hands them to
the formats that declare a page, ``Converter.index``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from .ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Document,
    Entry,
    MessageBody,
    ModelChange,
    Text,
    ToolResult,
    Usage,
    UsageRecord,
    UserMessage,
    total_tokens,
)
from .records import Frozen, frozen

TITLE_CHARS = 200

# pi wraps metadata it adds to a prompt in tags of its own (``<user_message_time>…``);
# a title shows what the person typed, so such a block goes, and any other bare
# tag of that shape (lower case, underscores) loses its brackets.
_META_BLOCK = re.compile(r"<(user_message_time|system[_-]reminder|environment_details)>.*?</\1>", re.S)
_BARE_TAG = re.compile(r"</?[a-z][a-z0-9]*(?:_[a-z0-9]+)+>")


def clean_title(text: str) -> str:
    """``text`` as a one-line title: pi's metadata blocks and markup tags removed,
    white space collapsed."""
    text = _META_BLOCK.sub(" ", text)
    text = _BARE_TAG.sub(" ", text)
    return " ".join(text.split())


def project_name(cwd: str | None, source_path: str | None) -> str:
    """The project a session belongs to: the last folder of its working directory, or,
    when the session has none, the folder the file is in, without pi's ``--`` marks."""
    if isinstance(cwd, str):
        name = cwd.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        if name:
            return name
    if source_path:
        parts = source_path.replace("\\", "/").rsplit("/", 2)
        if len(parts) >= 2 and parts[-2].strip("-"):
            return parts[-2].strip("-")
    return "(no project)"


PROMPT_PREFIX = 64 * TITLE_CHARS
"""What of a prompt a title is made from: its start, so a prompt of hundreds of megabytes
costs what a short one does (pi's metadata blocks are a few dozen characters)."""


def prompt_text(message: UserMessage) -> str:
    """What the person typed in ``message``, as one line: its text parts joined, then
    cleaned (:func:`clean_title`); ``""`` when it holds no text."""
    content = message.content
    if isinstance(content, str):
        return clean_title(content)
    if content:
        return clean_title(" ".join(p.text for p in content if type(p) is Text and p.text))
    return ""


def first_prompt(doc: Document) -> str | None:
    """The first user text along the leaf's path, cleaned (:func:`clean_title`): made
    from the first :data:`PROMPT_PREFIX` characters of it."""
    for entry in doc.path():
        body = entry.body
        if type(body) is MessageBody and type(body.message) is UserMessage:
            content = body.message.content
            if isinstance(content, str):
                text = content[:PROMPT_PREFIX]
            elif content:
                texts: list[str] = []
                size = 0
                for p in content:
                    if type(p) is Text and p.text:
                        texts.append(p.text[: PROMPT_PREFIX - size])
                        size += len(texts[-1]) + 1
                        if size >= PROMPT_PREFIX:
                            break
                text = " ".join(texts)
            else:
                continue
            text = clean_title(text)
            if text:
                return text[:TITLE_CHARS]
    return None


def header_title(doc: Document) -> str | None:
    """A title the file carries beside its header (Oh-My-Pi's title line, kept in
    ``SessionInfo.other_headers``), stripped; None without one."""
    for _line, value in doc.session.other_headers:
        if isinstance(value, dict) and value.get("type") == "title" and isinstance(value.get("title"), str):
            return value["title"].strip() or None
    return None


def _finite(value: Any) -> float | None:
    if type(value) in (int, float) and value == value and abs(value) != float("inf"):
        return float(value)
    return None


def call_cost(total: Any, parts: tuple[Any, ...] | None) -> float:
    """A call's cost from its cost object's ``total`` and its parts (input, output, cache
    read, cache write; None without a cost object): the total, else (a session written
    before pi recorded it) the sum of the parts, as pi's export adds them; 0 without
    either. Only finite numbers count."""
    if (type(total) is float or type(total) is int) and total == total and abs(total) != float("inf"):
        return float(total)
    return sum(_finite(part) or 0.0 for part in parts) if parts is not None else 0.0


def _spent(usage: Any) -> float:
    cost = usage.cost
    if cost is None:
        return 0.0
    return call_cost(cost.total, (cost.input, cost.output, cost.cache_read, cost.cache_write))


def _usage_of(body: Any) -> tuple[int, Usage | None]:
    """``(turns, usage)`` an entry's body adds to a total: a user message is a turn; an
    assistant message, a tool result, a compaction or branch summary and a usage record
    bring their call's usage (or None)."""
    if type(body) is MessageBody:
        message = body.message
        if type(message) is UserMessage:
            return 1, None
        if type(message) is AssistantMessage or type(message) is ToolResult:
            return 0, message.usage
        return 0, None
    if type(body) in (Compaction, BranchSummary, UsageRecord):
        return 0, body.usage
    return 0, None


def counted_usage(entries: Iterable[Entry]) -> Iterator[tuple[Entry, int, Usage | None]]:
    """The entries a total counts, each with what it adds: ``(entry, 1, None)`` for a user
    message (a turn); ``(entry, 0, usage)`` for an assistant message, a tool result, a
    compaction or branch summary, a usage record that carries its call's usage. Every
    total piconv shows of a session, of a branch or of any run of entries is a sum of
    these (:func:`usage_totals`)."""
    for entry in entries:
        turns, usage = _usage_of(entry.body)
        if turns:
            yield entry, 1, None
        elif usage is not None:
            yield entry, 0, usage


def counted(doc: Document) -> Iterator[tuple[Entry, int, int, float]]:
    """:func:`counted_usage` of every entry of ``doc``, each as ``(entry, turns, tokens,
    cost)``: a call's tokens by :func:`piconv.ir.total_tokens`, its cost as recorded."""
    for entry, turns, usage in counted_usage(doc.entries):
        if usage is None:
            yield entry, turns, 0, 0.0
        else:
            yield entry, 0, total_tokens(usage), _spent(usage)


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """What a run of entries adds up to (:func:`usage_totals`): ``turns`` (user
    messages), ``tokens`` (each call's :func:`piconv.ir.total_tokens`), ``cost`` (USD,
    rounded to 10 places), the four kinds of tokens as recorded (counts of zero or more),
    and ``calls``: how many usage records were counted."""

    turns: int = 0
    tokens: int = 0
    cost: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    calls: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "tokens": self.tokens,
            "cost": self.cost,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "calls": self.calls,
        }


def _kind(value: object) -> int:
    return value if type(value) is int and value >= 0 else 0


def usage_totals(entries: Iterable[Entry]) -> UsageTotals:
    """The turns, tokens and cost of ``entries``: a session's (``doc.entries``: what the
    index, the archive and ``piconv stats`` show of it), one branch's (``doc.path(leaf)``:
    what ``piconv diff`` shows of each side), or any part of one. The one definition of
    these sums: every figure piconv shows is computed here, over the entries
    :func:`counted_usage` counts."""
    turns = tokens = calls = 0
    cost = 0.0
    kinds = [0, 0, 0, 0]
    for _entry, turn, usage in counted_usage(entries):
        if usage is None:
            turns += turn
            continue
        calls += 1
        tokens += total_tokens(usage)
        cost += _spent(usage)
        kinds[0] += _kind(usage.input_tokens)
        kinds[1] += _kind(usage.output_tokens)
        kinds[2] += _kind(usage.cache_read_tokens)
        kinds[3] += _kind(usage.cache_write_tokens)
    return UsageTotals(turns, tokens, round(cost, 10), *kinds, calls)


def model_name(provider: Any, model: Any) -> str:
    """``provider/model`` (either left out when it is not a string or empty)."""
    return "/".join(x for x in (provider, model) if isinstance(x, str) and x)


def models_used(entries: Iterable[Entry]) -> list[str]:
    """The models of ``entries`` (``provider/model``) in order of first use: those that
    answered (assistant messages) and those chosen (model changes)."""
    models: dict[str, None] = {}
    for entry in entries:
        body = entry.body
        if type(body) is MessageBody:
            message = body.message
            if type(message) is AssistantMessage and message.model is not None and message.model.model:
                models[model_name(message.model.provider, message.model.model)] = None
        elif type(body) is ModelChange and body.model:
            models[model_name(body.provider, body.model)] = None
    return list(models)


KEY_BYTES = 6
"""Bytes of the hash that names a counted entry (8 characters of base64): a fork and its
parent are compared entry by entry, so 48 bits leave no chance of a false match."""


def entry_key(entry_id: str, timestamp: Any) -> str:
    """A counted entry's key: a hash of its id and its time stamp, which a fork's copy of
    it keeps (pi copies the entry with both)."""
    stamp = timestamp if isinstance(timestamp, str) else ""
    digest = hashlib.blake2b(f"{entry_id}\x00{stamp}".encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES)
    return base64.urlsafe_b64encode(digest.digest()).decode("ascii")


def lineage_facts(doc: Document) -> dict[str, Any]:
    """What links a session to the one it was forked from, and what tells its copies of
    that session's entries, so a total counts each entry once:

    - ``parent_session``: the path the header names (pi's ``parentSession``), or None;
    - ``counted``: the keys (:func:`entry_key`) of every counted entry, concatenated;
    - ``copied``: ``[key, turns, tokens, cost, day]`` of each counted entry older than the
      header (a fork's copies of its parent's entries; empty in any other session);
    - ``subagent_runs``: the run ids of pi-subagents' runs the session started (the
      ``runId`` in a tool result's details), which name their artifacts.
    """
    started = doc.session.created if isinstance(doc.session.created, str) else None
    keys: list[str] = []
    copied: list[list[Any]] = []
    for entry, turns, tokens, cost in counted(doc):
        key = entry_key(entry.id, entry.timestamp)
        keys.append(key)
        stamp = entry.timestamp
        if started is not None and isinstance(stamp, str) and stamp < started:
            copied.append([key, turns, tokens, round(cost, 10), day_of(stamp)])
    runs: dict[str, None] = {}
    for entry in doc.entries:
        body = entry.body
        if type(body) is MessageBody and type(body.message) is ToolResult:
            details = body.message.details
            if isinstance(details, dict) and isinstance(details.get("runId"), str) and details["runId"]:
                runs[details["runId"]] = None
    return {
        "parent_session": doc.session.parent_session,
        "counted": "".join(keys),
        "copied": copied,
        "subagent_runs": list(runs),
    }


SHOWN_TITLE_CHARS = 120
"""A title as a page shows it: one line of at most this many characters."""


def shown_title(*candidates: str | None) -> str:
    """The first candidate that holds text, cleaned (:func:`clean_title`), on one line of
    at most :data:`SHOWN_TITLE_CHARS` characters (a longer one ends with ``…``); ``""``
    when none does. The one rule for every title piconv shows, whatever it is read from
    (a document, a quick scan, the archive, the manifest)."""
    text = next((t for t in (clean_title(c) for c in candidates if c) if t), "")
    return text if len(text) <= SHOWN_TITLE_CHARS else text[: SHOWN_TITLE_CHARS - 1] + "\u2026"


def session_title(doc: Document) -> str | None:
    """The title every output gives the session: its name (pi's ``session_info``, or
    Oh-My-Pi's title line), else its first prompt (:func:`shown_title`); ``None`` when it
    has neither."""
    return shown_title(doc.session_name(), header_title(doc), first_prompt(doc)) or None


def day_of(stamp: Any) -> str | None:
    """The day (UTC, as pi records time) of an ISO 8601 time stamp, or None."""
    if isinstance(stamp, str) and len(stamp) >= 10 and stamp[4:5] == "-" and stamp[7:8] == "-":
        return stamp[:10]
    return None


def activity_facts(doc: Document) -> dict[str, Any]:
    """``days``: for each day (UTC) the session has a counted entry on, ``[entries, tokens,
    cost]`` of those entries (:func:`counted`): the index's activity strip adds these up."""
    days: dict[str, list[Any]] = {}
    for entry, _turns, tokens, cost in counted(doc):
        day = day_of(entry.timestamp)
        if day is None:
            continue
        figures = days.setdefault(day, [0, 0, 0.0])
        figures[0] += 1
        figures[1] += tokens
        figures[2] += cost
    return {"days": {day: [n, t, round(c, 10)] for day, (n, t, c) in sorted(days.items())}}


def session_facts(doc: Document, source_path: str | None = None) -> dict[str, Any]:
    """The facts an archive lists about ``doc``. ``tokens`` and ``cost`` are totals over
    every entry of the file (all branches), each call counted by
    :func:`piconv.ir.total_tokens`; ``models`` are ``provider/model`` in order of first use."""
    session = doc.session
    stamps = [entry.timestamp for entry in doc.entries if isinstance(entry.timestamp, str)]
    totals = usage_totals(doc.entries)
    name = doc.session_name()
    prompt = first_prompt(doc)
    created = session.created if isinstance(session.created, str) else (stamps[0] if stamps else None)
    path = source_path or session.source_path
    return {
        "id": session.id,
        "name": name,
        "first_prompt": prompt,
        "title": clean_title(name or header_title(doc) or "") or prompt or None,
        "project": project_name(session.cwd, path),
        "cwd": session.cwd if isinstance(session.cwd, str) else None,
        "created": created,
        "updated": max(stamps) if stamps else created,
        "models": models_used(doc.entries),
        "turns": totals.turns,
        "entries": len(doc.entries),
        "tokens": totals.tokens,
        "cost": totals.cost,
    }


@frozen
class ListedSession(Frozen):
    """One session on an index page, with the link to the format's output of it.

    - ``project``: the project it belongs to (:func:`piconv.facts.project_name`).
    - ``title``: its name, else its first prompt, else its file name; one line, at most
      120 characters (a longer one ends with ``…``).
    - ``file``: the session file's name.
    - ``output``: the output's path below the output directory, ``/``-separated.
    - ``link``: the same as a relative URL from the page (``./a%20b/c.html``): each
      component percent-encoded, so any name is an inert path.
    - ``cwd``: the session's working directory, or None.
    - ``created`` / ``updated``: time stamps as recorded (ISO 8601, UTC), or ``""``.
    - ``models``: ``provider/model`` names in order of first use.
    - ``turns`` (user messages), ``tokens``, ``cost``: totals over the whole file, but
      for a session linked to the one it came from: its entries copied from that one
      are counted there, not here (each entry counted once over the page).
    - ``failed``: the last conversion of the session failed (the output listed is an
      earlier one).
    - ``key``: the session file's path below the input directory (``/``-separated):
      what ``parent`` names.
    - ``relation``: ``"fork"`` (its header names the session it was forked from),
      ``"subagent"`` (a pi-subagents run of another session), or None.
    - ``parent``: the ``key`` of that session, or None when it is not in the archive.
    - ``parent_title``: that session's title, or ``""``.
    - ``depth``: how many of its ancestors come before it on the page (its rows are
      placed right after its parent's, in the same project).
    - ``copied``: how many of its entries are its parent's, counted there.
    - ``days``: ``(day, tokens, cost)`` for each day (UTC) it has a counted entry on, its
      copies of its parent's entries left out: what the page's activity strip adds up.
    """

    project: str
    title: str
    file: str
    output: str
    link: str
    cwd: str | None
    created: str
    updated: str
    models: tuple[str, ...]
    turns: int
    tokens: int
    cost: float
    failed: bool
    key: str = ""
    relation: str | None = None
    parent: str | None = None
    parent_title: str = ""
    depth: int = 0
    copied: int = 0
    days: tuple[tuple[str, int, float], ...] = ()


# --------------------------------------------------------------------------- usage, entry by entry


class Spend(NamedTuple):
    """One entry a total counts (:func:`counted`), with what it adds, for reports that
    break totals down by day, model or kind.

    - ``entry_id`` / ``timestamp``: the entry's id and time stamp (ISO 8601, UTC; None
      when it has none): a fork's copy keeps both (:func:`entry_key`).
    - ``kind``: ``user`` (a turn), ``assistant``, ``tool`` (a tool result that reports
      usage), ``compaction``, ``branch_summary`` or ``usage`` (a usage record: a cache
      warm-up, say).
    - ``model``: ``provider/model`` for an assistant message (its ``response_model`` when
      the provider named one, as pi's ``/session`` breaks cost down) and a usage record;
      None for the others, which pi's ``/session`` groups as "Tools/summaries".
    - ``turns``: 1 for a user message, else 0.
    - ``input``, ``output``, ``cache_read``, ``cache_write``: token counts (only counts of
      zero or more; anything else is 0).
    - ``tokens``: the call's total (:func:`piconv.ir.total_tokens`); ``cost``: what it cost.
    - ``calls``: 1; more where a source gives several calls of one minute, kind and model
      summed as one (an archive read for a report).
    """

    entry_id: str
    timestamp: str | None
    kind: str
    model: str | None
    turns: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    tokens: int
    cost: float
    calls: int = 1


class SessionScan(NamedTuple):
    """What a session list and a usage report need of one session: its header, its name,
    its first prompt and its counted entries (:class:`Spend`). A reader may make it
    without a whole document (``Reader.scan``); :func:`scan_document` makes it from one,
    and the two are held equal by the test suite.

    - ``id``, ``cwd``, ``created`` (the header's time stamp), ``parent_session`` (the
      path of the session it was forked from): strings or None.
    - ``name``: the latest session name, stripped (None when unset or cleared).
    - ``header_title``: a title the file carries beside its header (Oh-My-Pi's).
    - ``first_prompt``: the first user text along the leaf's path (:func:`first_prompt`).
    - ``updated``: the latest entry time stamp (else ``created``).
    - ``models``: ``provider/model`` in order of first use, as :func:`session_facts` lists them.
    - ``spends``: the counted entries, in file order.
    - ``subagent_runs``: the run ids of pi-subagents' runs it started.
    """

    id: str | None
    cwd: str | None
    created: str | None
    parent_session: str | None
    name: str | None
    header_title: str | None
    first_prompt: str | None
    updated: str | None
    models: tuple[str, ...]
    spends: tuple[Spend, ...]
    subagent_runs: tuple[str, ...]


def model_key(provider: Any, model: Any) -> str | None:
    """``provider/model`` as pi's ``/session`` names a model (either part may be missing)."""
    if type(provider) is str and provider:
        return f"{provider}/{model}" if type(model) is str and model else provider
    return model if type(model) is str and model else None


def spend(entry_id: str, timestamp: Any, kind: str, model: str | None, usage: Usage) -> Spend:
    """The :class:`Spend` of an entry whose call reported ``usage``."""
    cost = usage.cost
    return call_spend(
        entry_id,
        timestamp,
        kind,
        model,
        (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens),
        usage.total_tokens,
        cost.total if cost is not None else None,
        (cost.input, cost.output, cost.cache_read, cost.cache_write) if cost is not None else None,
    )


def call_spend(
    entry_id: str,
    timestamp: Any,
    kind: str,
    model: str | None,
    counts: tuple[Any, Any, Any, Any],
    total: Any,
    cost_total: Any,
    cost_parts: tuple[Any, ...] | None,
) -> Spend:
    """The :class:`Spend` of one call from its values as the source gave them: ``counts``
    (input, output, cache read, cache write), its own ``total`` of tokens and its cost
    (:func:`call_cost`). Anything but a count of zero or more counts 0; the total is the
    call's own when it gave one, else the sum of the counts (:func:`piconv.ir.total_tokens`)."""
    i, o, r, w = counts
    i = i if type(i) is int and i >= 0 else 0
    o = o if type(o) is int and o >= 0 else 0
    r = r if type(r) is int and r >= 0 else 0
    w = w if type(w) is int and w >= 0 else 0
    return Spend(
        entry_id,
        timestamp if isinstance(timestamp, str) else None,
        kind,
        model,
        0,
        i,
        o,
        r,
        w,
        total if type(total) is int and total >= 0 else i + o + r + w,
        call_cost(cost_total, cost_parts),
    )


def turn(entry_id: str, timestamp: Any) -> Spend:
    """The :class:`Spend` of a user message: a turn, nothing spent."""
    return Spend(
        entry_id, timestamp if isinstance(timestamp, str) else None, "user", None, 1, 0, 0, 0, 0, 0, 0.0
    )


def _spend_of(entry: Entry) -> Spend | None:
    turns, usage = _usage_of(entry.body)
    if turns:
        return turn(entry.id, entry.timestamp)
    if usage is None:
        return None
    body = entry.body
    model = None
    if type(body) is MessageBody:
        message = body.message
        if type(message) is AssistantMessage:
            kind = "assistant"
            ref = message.model
            if ref is not None:
                model = model_key(ref.provider, message.response_model or ref.model)
            elif message.response_model:
                model = message.response_model
        else:
            kind = "tool"
    elif type(body) is UsageRecord:
        kind = "usage"
        if body.model is not None:
            model = model_key(body.model.provider, body.model.model)
    else:
        kind = body.kind
    return spend(entry.id, entry.timestamp, kind, model, usage)


def scan_document(doc: Document) -> SessionScan:
    """The :class:`SessionScan` of a whole document: what every reader's session gives,
    and the definition a reader's own ``scan`` is held to."""
    facts = session_facts(doc)
    lineage = lineage_facts(doc)
    spends = tuple(s for s in map(_spend_of, doc.entries) if s is not None)
    session = doc.session
    return SessionScan(
        session.id if isinstance(session.id, str) else None,
        facts["cwd"],
        session.created if isinstance(session.created, str) else None,
        session.parent_session if isinstance(session.parent_session, str) else None,
        facts["name"],
        header_title(doc),
        facts["first_prompt"],
        facts["updated"],
        tuple(facts["models"]),
        spends,
        tuple(lineage["subagent_runs"]),
    )
