"""What links a session to the one it came from, and what tells a fork's copies of that
session's entries, so a total over many sessions counts each entry once.

A directory run notes these (:func:`lineage_facts`) in its manifest; the key of a counted
entry (:func:`entry_key`) is what a fork's copy and its parent's entry share.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from ..ir import Document, MessageBody, ToolResult
from .spending import counted
from .summary import day_of

KEY_BYTES = 6
"""Bytes of the hash that names a counted entry (8 characters of base64): a fork and its
parent are compared entry by entry, so 48 bits leave no chance of a false match."""


def entry_key(entry_id: str, timestamp: Any) -> str:
    """A counted entry's key: a hash of its id and its time stamp, which a fork's copy of
    it keeps (pi copies the entry with both)."""
    stamp = timestamp if isinstance(timestamp, str) else ""
    digest = hashlib.blake2b(f"{entry_id}\x00{stamp}".encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES)
    return base64.urlsafe_b64encode(digest.digest()).decode("ascii")


def subagent_runs(doc: Document) -> list[str]:
    """The run ids of pi-subagents' runs the session started (the ``runId`` in a tool
    result's details), which name their artifacts, in order of first mention."""
    runs: dict[str, None] = {}
    for entry in doc.entries:
        body = entry.body
        if type(body) is MessageBody and type(body.message) is ToolResult:
            details = body.message.details
            if isinstance(details, dict) and isinstance(details.get("runId"), str) and details["runId"]:
                runs[details["runId"]] = None
    return list(runs)


def lineage_facts(doc: Document) -> dict[str, Any]:
    """What links a session to the one it was forked from, and what tells its copies of
    that session's entries, so a total counts each entry once:

    - ``parent_session``: the path the header names (pi's ``parentSession``), or None;
    - ``counted``: the keys (:func:`entry_key`) of every counted entry, concatenated;
    - ``copied``: ``[key, turns, tokens, cost, day]`` of each counted entry older than the
      header (a fork's copies of its parent's entries; empty in any other session);
    - ``subagent_runs``: :func:`subagent_runs`.
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
    return {
        "parent_session": doc.session.parent_session,
        "counted": "".join(keys),
        "copied": copied,
        "subagent_runs": subagent_runs(doc),
    }
