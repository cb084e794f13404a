"""What an archive says about a session: title, project, dates, models, turns, tokens, cost.

One definition for every place that lists sessions (the directory run's index, the
``sqlite`` format's ``sessions`` table), public as :func:`piconv.session_facts` so a
converter reaches it through the public API; :class:`ListedSession` is one session as a
format's index page gets it (the run keeps the facts in its manifest and hands them to
the formats that declare a page, ``Converter.index``).
"""

from __future__ import annotations

import re
from typing import Any

from .ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Document,
    MessageBody,
    ModelChange,
    Text,
    ToolResult,
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


SHOWN_TITLE_CHARS = 120
"""A title as a page shows it: one line of at most this many characters."""


def session_title(doc: Document) -> str | None:
    """The title every output gives the session: its name (pi's ``session_info``), else
    its first prompt, cleaned (:func:`clean_title`), on one line of at most 120
    characters (a longer one ends with ``…``); ``None`` when it has neither."""
    text = clean_title(doc.session_name() or "") or first_prompt(doc)
    if not text:
        return None
    return text if len(text) <= SHOWN_TITLE_CHARS else text[: SHOWN_TITLE_CHARS - 1] + "\u2026"


def session_facts(doc: Document, source_path: str | None = None) -> dict[str, Any]:
    """The facts an archive lists about ``doc``. ``tokens`` and ``cost`` are totals over
    every entry of the file (all branches), each call counted by
    :func:`piconv.ir.total_tokens`; ``models`` are ``provider/model`` in order of first use."""
    session = doc.session
    models: dict[str, None] = {}
    turns = 0
    tokens = 0
    cost = 0.0
    stamps = []
    for entry in doc.entries:
        if isinstance(entry.timestamp, str):
            stamps.append(entry.timestamp)
        body = entry.body
        usage = None
        if type(body) is MessageBody:
            message = body.message
            if type(message) is UserMessage:
                turns += 1
            elif type(message) is AssistantMessage:
                usage = message.usage
                if message.model is not None and message.model.model:
                    models["/".join(x for x in (message.model.provider, message.model.model) if x)] = None
            elif type(message) is ToolResult:
                usage = message.usage
        elif type(body) in (Compaction, BranchSummary, UsageRecord):
            usage = body.usage  # type: ignore[union-attr]
        elif type(body) is ModelChange and body.model:
            models["/".join(x for x in (body.provider, body.model) if x)] = None
        if usage is not None:
            tokens += total_tokens(usage)
            spent = usage.cost.total if usage.cost is not None else None
            if type(spent) in (int, float) and spent == spent and abs(spent) != float("inf"):
                cost += spent
    name = doc.session_name()
    prompt = first_prompt(doc)
    created = session.created if isinstance(session.created, str) else (stamps[0] if stamps else None)
    path = source_path or session.source_path
    return {
        "id": session.id,
        "name": name,
        "first_prompt": prompt,
        "title": clean_title(name or "") or prompt or None,
        "project": project_name(session.cwd, path),
        "cwd": session.cwd if isinstance(session.cwd, str) else None,
        "created": created,
        "updated": max(stamps) if stamps else created,
        "models": list(models),
        "turns": turns,
        "entries": len(doc.entries),
        "tokens": tokens,
        "cost": round(cost, 10),
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
    - ``turns`` (user messages), ``tokens``, ``cost``: totals over the whole file.
    - ``failed``: the last conversion of the session failed (the output listed is an
      earlier one).
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
