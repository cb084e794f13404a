"""``piconv search``: ranked full-text hits over an archive database, read-only.

The query is FTS5's own syntax (words, ``"a phrase"``, ``prefix*``, ``AND``/``OR``/``NOT``,
``NEAR``). Hits are ranked by BM25; each carries its session's title, project and date,
the entry's id, role and time, a snippet with the matches between :data:`MARK` and
:data:`END`, and, when the html format's page of the session sits beside the database,
the link to the entry in it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import unicodedata
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from piconv.errors import InputError, UsageError

from . import ARCHIVE_NAME
from .schema import APPLICATION_ID, BUSY_WAIT_S, SCHEMA_VERSION, busy, found_version, has_fts, versions

MARK, END = "«", "»"
SNIPPET_TOKENS = 16
MAX_LIMIT = 1000
"""The most hits one search returns (a larger ``--limit`` is taken as this)."""
SNIPPET_TERMS = 32
"""Up to this many words in a query, FTS5's ``snippet()`` marks the matches; past it,
piconv does (:func:`highlight`): FTS5's costs about the square of the words for each hit
(a query of 2,000 words took minutes), piconv's one pass over the entry's words."""
RANK_WINDOW = 20_000
"""A query ranks at most this many matches: the newest (by row) that its filters admit.
BM25 costs time for every match it scores: a word in 64,000 entries of the 1 GB bench
archive took 140 ms of CPU to rank in full, its newest 20,000 about 50. A query that
matches more is too broad to rank well anyway; more words or a filter narrow it."""


def archive_path(path: str) -> str:
    """The database ``path`` names: the file itself, or ``archive.db`` in a directory."""
    return os.path.join(path, ARCHIVE_NAME) if os.path.isdir(path) else path


def _open(path: str) -> sqlite3.Connection:
    if not os.path.isfile(path):
        raise InputError("no archive database here (make one with --to sqlite)", path=path)
    try:
        conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, timeout=BUSY_WAIT_S)
        app, version = versions(conn)
    except sqlite3.DatabaseError as exc:
        if busy(exc):
            raise InputError(f"in use by another program ({exc}); try again", path=path) from None
        raise InputError(f"not a readable SQLite database ({exc})", path=path) from None
    if app != APPLICATION_ID:
        conn.close()
        raise InputError("not a piconv archive", path=path)
    if version > SCHEMA_VERSION:
        conn.close()
        raise InputError(
            f"written by a newer piconv (archive schema {version}; this piconv knows {SCHEMA_VERSION})",
            path=path,
        )
    if version < SCHEMA_VERSION:
        conn.close()
        raise InputError(
            f"an older archive (schema {version}): convert into it once with this piconv to upgrade it",
            path=path,
        )
    try:
        found = found_version(conn)
        indexed = has_fts(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise InputError(f"not a readable SQLite database ({exc})", path=path) from None
    if found != SCHEMA_VERSION or not indexed:
        conn.close()
        what = (
            "its full-text index is missing"
            if found == SCHEMA_VERSION
            else "its tables do not match its schema"
        )
        raise InputError(f"{what}: a directory run into it repairs it", path=path)
    return conn


def _until(value: str) -> str:
    """An inclusive upper bound: ``2026-01`` admits every time stamp of January."""
    return value + "\uffff"


def _filters(filters: Mapping[str, Any]) -> tuple[str, list[Any], str]:
    """The SQL conditions of ``filters`` (each after ``AND``), their arguments, and the
    joins they need: entries_filters for an entry's own columns, sessions for its
    session's."""
    where, args = [], []
    if filters.get("project"):
        where.append("(s.project GLOB ? OR s.cwd GLOB ?)")
        args += [filters["project"], filters["project"]]
    if filters.get("since"):
        where.append("e.timestamp >= ?")
        args.append(filters["since"])
    if filters.get("until"):
        where.append("e.timestamp <= ?")
        args.append(_until(filters["until"]))
    if filters.get("role"):
        where.append("e.role = ?")
        args.append(filters["role"])
    if filters.get("model"):
        where.append("instr(s.models, ?) > 0")
        args.append(filters["model"])
    joins = ""
    if where:
        # the planner would read the entries table by rowid; the index has every column
        # a filter needs, in a fraction of the pages
        joins = "JOIN entries e INDEXED BY entries_filters ON e.pk = entries_fts.rowid "
    if filters.get("project") or filters.get("model"):
        joins += "JOIN sessions s ON s.pk = e.session "
    return "".join(f" AND {w}" for w in where), args, joins


def search(
    path: str, query: str, filters: Mapping[str, Any] | None = None, limit: int = 20
) -> list[dict[str, Any]]:
    """The best ``limit`` hits for ``query`` in the archive at ``path``. ``filters``:
    ``project`` (a glob over the project name or the working directory), ``since`` and
    ``until`` (ISO dates or times, both inclusive, over the entry's time stamp), ``role``
    (``user``, ``assistant``, ``tool``...), ``model`` (a substring of a model the session
    used, ``provider/model``)."""
    filters = filters or {}
    limit = max(1, min(int(limit), MAX_LIMIT))
    db = archive_path(path)
    terms = query_terms(query)
    ours = len(terms) > SNIPPET_TERMS
    where, args, joins = _filters(filters)
    # The filters are applied as the matches are read, newest first, and only the first
    # RANK_WINDOW matches they admit are scored, so a filter costs a look-up in the small
    # entries_filters index per match, never a score, and never loses its matches to a
    # window over the unfiltered ones. Equal scores keep the order the rows were written in.
    rank_sql = (
        "SELECT pk, score FROM (SELECT entries_fts.rowid AS pk, bm25(entries_fts) AS score "
        f"FROM entries_fts {joins}WHERE entries_fts MATCH ?{where} "
        "ORDER BY entries_fts.rowid DESC LIMIT ?) ORDER BY score, pk LIMIT ?"
    )
    # The snippets and columns of those hits alone, from one pass over their range of
    # matches: looking each up by rowid would parse the query (and merge a prefix's lists)
    # once a hit.
    snippet = "e.text" if ours else f"snippet(entries_fts, 0, '{MARK}', '{END}', '…', {SNIPPET_TOKENS})"
    hits_sql = (
        "SELECT entries_fts.rowid, s.title, s.project, s.created, s.key, s.html, s.source, e.id, e.role, e.kind, "
        f"e.timestamp, e.anchor, {snippet} "
        "FROM entries_fts JOIN entries e ON e.pk = entries_fts.rowid JOIN sessions s ON s.pk = e.session "
        "WHERE entries_fts MATCH ? AND entries_fts.rowid BETWEEN ? AND ? "
        "AND +entries_fts.rowid IN (SELECT value FROM json_each(?))"
    )
    conn = _open(db)
    try:
        ranked = conn.execute(rank_sql, [query, *args, RANK_WINDOW, limit]).fetchall()
        rows: dict[int, tuple[Any, ...]] = {}
        if ranked:
            pks = [pk for pk, _ in ranked]
            rows = {
                row[0]: row[1:]
                for row in conn.execute(hits_sql, [query, min(pks), max(pks), json.dumps(pks)])
            }
    except sqlite3.OperationalError as exc:
        raise UsageError(
            f"cannot search for {query!r}: {exc} (FTS5 query syntax: docs/formats/sqlite.md)"
        ) from None
    finally:
        conn.close()
    base = os.path.dirname(db)
    hits = []
    for pk, score in ranked:
        if pk not in rows:
            continue  # an entry whose row or session is gone (the database edited by other means)
        title, project, created, key, html, source, eid, role, kind, stamp, anchor, snippet = rows[pk]
        if ours:
            snippet = highlight(snippet or "", terms)
        link = None
        if html and os.path.isfile(os.path.join(base, *html.split("/"))):
            link = os.path.join(base, *html.split("/")) + "#" + anchor
        hits.append(
            {
                "title": title,
                "project": project,
                "session_created": created,
                "session": key,
                "path": source,
                "entry": eid,
                "role": role,
                "kind": kind,
                "timestamp": stamp,
                "snippet": snippet,
                "score": round(-score, 6),
                "link": link,
            }
        )
    return hits


_QUERY_TOKEN = re.compile(r'"((?:[^"]|"")*)"|([^\s"()^:+*]+)(\*?)')
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_WORD = re.compile(r"\w+")


def _fold(word: str) -> str:
    """A word as FTS5's ``unicode61 remove_diacritics 2`` compares it: lower case,
    without its diacritics."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def query_terms(query: str) -> list[tuple[str, bool]]:
    """The words of an FTS5 query, folded, each with whether it is a prefix
    (``sess*``): its phrases' words and its bare words, without its operators and
    column names. Enough to mark the matches; FTS5 itself decides what matches."""
    terms: list[tuple[str, bool]] = []
    for phrase, bare, star in _QUERY_TOKEN.findall(query):
        if bare in _OPERATORS:
            continue
        words = _WORD.findall(phrase.replace('""', '"') if phrase else bare)
        for i, word in enumerate(words):
            terms.append((_fold(word), bool(star) and i == len(words) - 1))
    return terms


def highlight(text: str, terms: list[tuple[str, bool]], width: int = SNIPPET_TOKENS) -> str:
    """A snippet of ``text`` as FTS5's ``snippet()`` makes one (``width`` words around
    the most matches, each match between :data:`MARK` and :data:`END`, ``…`` where text
    was cut), in one pass over its words: a word matches when it is one of ``terms`` or
    begins with one of its prefixes."""
    whole = {word for word, prefix in terms if not prefix}
    prefixes = {word for word, prefix in terms if prefix}
    lengths = sorted({len(p) for p in prefixes})
    words = list(_WORD.finditer(text))
    if not words:
        return text[:200]
    hit = []
    for m in words:
        folded = _fold(m.group())
        hit.append(folded in whole or any(folded[:n] in prefixes for n in lengths if n <= len(folded)))
    best, count = 0, sum(hit[:width])
    running = count
    for start in range(1, max(1, len(words) - width + 1)):
        running += hit[start + width - 1] - hit[start - 1]
        if running > count:
            best, count = start, running
    chosen = words[best : best + width]
    out = ["…" if best > 0 else text[: chosen[0].start()]]
    at = chosen[0].start()
    for i, m in enumerate(chosen, best):
        out.append(text[at : m.start()])
        out.append(f"{MARK}{m.group()}{END}" if hit[i] else m.group())
        at = m.end()
    last = best + len(chosen)
    out.append("…" if last < len(words) else text[at:])
    return "".join(out)
