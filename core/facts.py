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
from typing import Any

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
    """The first user text along the leaf's path, cleaned (:func:`clean_title`)."""
    for entry in doc.path():
        body = entry.body
        if type(body) is MessageBody and type(body.message) is UserMessage:
            text = prompt_text(body.message)
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


def _spent(usage: Any) -> float:
    spent = usage.cost.total if usage.cost is not None else None
    if type(spent) in (int, float) and spent == spent and abs(spent) != float("inf"):
        return float(spent)
    return 0.0


def counted_usage(entries: Iterable[Entry]) -> Iterator[tuple[Entry, int, Usage | None]]:
    """The entries a total counts, each with what it adds: ``(entry, 1, None)`` for a user
    message (a turn); ``(entry, 0, usage)`` for an assistant message, a tool result, a
    compaction or branch summary, a usage record that carries its call's usage. Every
    total piconv shows of a session, of a branch or of any run of entries is a sum of
    these (:func:`usage_totals`)."""
    for entry in entries:
        body = entry.body
        usage = None
        if type(body) is MessageBody:
            message = body.message
            if type(message) is UserMessage:
                yield entry, 1, None
                continue
            if type(message) is AssistantMessage or type(message) is ToolResult:
                usage = message.usage
        elif type(body) in (Compaction, BranchSummary, UsageRecord):
            usage = body.usage  # type: ignore[union-attr]
        if usage is not None:
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
    - ``copied``: ``[key, turns, tokens, cost]`` of each counted entry older than the
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
            copied.append([key, turns, tokens, round(cost, 10)])
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
