"""The archive database's schema: its tables, its version and the migrations between versions.

A piconv archive is recognised by ``PRAGMA application_id`` (:data:`APPLICATION_ID`);
``PRAGMA user_version`` is its schema version. Opening an archive brings an older schema
up to :data:`SCHEMA_VERSION` one migration at a time, each in its own transaction; a
newer schema is refused and left as it is. docs/formats/sqlite.md describes every table
and column.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable

from piconv.errors import OutputError

APPLICATION_ID = 0x7069636F
"""``pico`` in ASCII: marks a database as a piconv archive."""

SESSION_COLUMNS = (
    "key",
    "id",
    "project",
    "cwd",
    "title",
    "name",
    "created",
    "updated",
    "month",
    "models",
    "turns",
    "entries",
    "tokens",
    "cost",
    "source",
    "reader",
    "sha256",
    "html",
)
ENTRY_COLUMNS = (
    "id",
    "parent",
    "kind",
    "role",
    "timestamp",
    "text",
    "tool",
    "model",
    "tokens",
    "cost",
    "anchor",
    "line",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
)

_V1 = """
CREATE TABLE sessions (
    pk INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    id TEXT,
    project TEXT,
    cwd TEXT,
    title TEXT,
    name TEXT,
    created TEXT,
    updated TEXT,
    month TEXT,
    models TEXT,
    turns INTEGER,
    entries INTEGER,
    tokens INTEGER,
    cost REAL,
    source TEXT,
    reader TEXT,
    sha256 TEXT,
    html TEXT
);
CREATE INDEX sessions_project ON sessions(project);
CREATE INDEX sessions_created ON sessions(created);
CREATE TABLE entries (
    pk INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(pk),
    id TEXT,
    parent TEXT,
    kind TEXT,
    role TEXT,
    timestamp TEXT,
    text TEXT,
    tool TEXT,
    model TEXT,
    tokens INTEGER,
    cost REAL,
    anchor TEXT,
    line INTEGER
);
CREATE INDEX entries_session ON entries(session);
"""

_V2 = """
CREATE VIRTUAL TABLE entries_fts USING fts5(
    text, content='entries', content_rowid='pk', tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO entries_fts(entries_fts) VALUES ('rebuild');
"""
# No triggers: piconv keeps the index in step as it writes a session (store.put), which
# costs a third of what a per-row trigger does. After editing ``entries`` by other means,
# ``INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')`` brings the index back in step.

_V3 = """
DROP TABLE entries_fts;
CREATE VIRTUAL TABLE entries_fts USING fts5(
    text, content='entries', content_rowid='pk', tokenize='unicode61 remove_diacritics 2',
    prefix='2 3 4'
);
INSERT INTO entries_fts(entries_fts, rank) VALUES ('automerge', 16);
INSERT INTO entries_fts(entries_fts) VALUES ('rebuild');
CREATE INDEX entries_filters ON entries(pk, session, role, timestamp);
"""
# An FTS5 table's options are fixed when it is made, so the prefix indexes mean making it
# again. With them ``se*``, ``ses*`` and ``sess*`` read one list of matches instead of
# merging the lists of every word they begin (a two-letter prefix begins thousands);
# longer prefixes begin few enough words to merge. Each session's transaction writes the
# index a new segment, and FTS5 merges a level's segments once it has ``automerge`` of
# them, rewriting each entry once a level: merging 16 rather than 4 at a time halves the
# levels, and about halves what the prefix indexes add to writing; a search reads the
# extra segments no slower. entries_filters holds the columns a
# search filter reads of each match, ordered by pk: a filtered search reads a few of its
# small pages instead of one page of the entries table (where the text is) per match.

_V4 = """
DROP TABLE entries_fts;
CREATE VIRTUAL TABLE entries_fts USING fts5(
    text, content='entries', content_rowid='pk', tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO entries_fts(entries_fts, rank) VALUES ('automerge', 16);
INSERT INTO entries_fts(entries_fts) VALUES ('rebuild');
"""
# The prefix indexes of schema 3 more than doubled what writing the archive costs (every
# word went into the index four times: itself and its first 2, 3 and 4 letters) and made
# it a third larger. Without them a prefix query merges the lists of the words it begins:
# on the 1 GB bench archive ``sess* AND error`` takes about 75 ms instead of 40, ``se*``
# about 200 ms instead of 40; a whole word or phrase costs the same.


_V5 = """
ALTER TABLE sessions ADD COLUMN parent TEXT;
ALTER TABLE sessions ADD COLUMN relation TEXT;
ALTER TABLE entries ADD COLUMN inherited INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_parent ON sessions(parent);
"""
# A session's link to the one it came from (a fork to its parent, a subagent to the
# session that ran it), set by a directory run once every session is in; and, per entry,
# whether it is a fork's copy of its parent's entry: such an entry is counted under the
# parent alone (the session's tokens, cost and turns leave it out) and is not in the
# full-text index (the parent's is).

_V6 = """
ALTER TABLE entries ADD COLUMN input_tokens INTEGER;
ALTER TABLE entries ADD COLUMN output_tokens INTEGER;
ALTER TABLE entries ADD COLUMN cache_read_tokens INTEGER;
ALTER TABLE entries ADD COLUMN cache_write_tokens INTEGER;
CREATE INDEX entries_usage ON entries(
    session, inherited, timestamp, kind, model, input_tokens, output_tokens, cache_read_tokens,
    cache_write_tokens, tokens, cost, id
) WHERE tokens IS NOT NULL;
"""
# Each call's tokens split as pi reports them (input, output, cache read, cache write), for
# `piconv stats --archive`; entries_usage holds every column a usage report reads of the
# entries that spent something, so the report reads that small index and never a page of
# the entries table (where the text is). Rows written before have no split (NULL): their
# sessions are written again with it by a directory run with --force.

FTS = """
CREATE VIRTUAL TABLE entries_fts USING fts5(
    text, content='entries', content_rowid='pk', tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO entries_fts(entries_fts, rank) VALUES ('automerge', 16);
"""
"""The full-text index as schema 4 made it, made again when it was dropped (:func:`repair_fts`)."""


def _script(sql: str) -> Callable[[sqlite3.Connection], None]:
    def step(conn: sqlite3.Connection) -> None:
        for statement in _statements(sql):
            conn.execute(statement)

    return step


def _statements(sql: str) -> list[str]:
    """``sql`` split into statements (``executescript`` would commit; a migration must not)."""
    out, current = [], ""
    for line in sql.strip().splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    return out


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _script(_V1),  # 0 -> 1: sessions and entries
    _script(_V2),  # 1 -> 2: full-text index over entries.text
    _script(_V3),  # 2 -> 3: prefix indexes; the columns filters read, indexed by pk
    _script(_V4),  # 3 -> 4: the prefix indexes dropped
    _script(_V5),  # 4 -> 5: forks and subagents linked; a fork's copies counted once
    _script(_V6),  # 5 -> 6: each call's tokens split; the index a usage report reads
]
SCHEMA_VERSION = len(MIGRATIONS)


class NotAnArchive(Exception):
    """The file is no piconv archive (another program's database) or is damaged."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind  # "foreign" or "corrupt"


class NewerSchema(OutputError):
    """The archive was written by a newer piconv: it is refused and left untouched."""


class ArchiveBusy(OutputError):
    """Another program holds the archive (a write, or a read left open) for longer than
    piconv waits: refused, left untouched."""


class Unreadable(OutputError):
    """The archive cannot be read for a reason that is not damage (no permission, an I/O
    error): refused, left untouched."""


BUSY_WAIT_S = 30.0
"""How long opening, upgrading or folding up the archive waits for another program's lock."""


def busy(exc: BaseException) -> bool:
    """Whether SQLite raised ``exc`` because another connection holds a lock."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def damaged(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite says the file itself is damaged or no database (``SQLITE_CORRUPT``,
    ``SQLITE_NOTADB``), rather than that it could not read it now."""
    name = getattr(exc, "sqlite_errorname", None)  # Python 3.11+
    if isinstance(name, str):
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "encrypted" in text


def refusal(exc: sqlite3.DatabaseError, path: str) -> OutputError:
    if busy(exc):
        return ArchiveBusy(
            f"in use by another program ({exc}) for more than {BUSY_WAIT_S:g} s: left untouched; "
            "close what holds it (a datasette, a query left open) and run again",
            path=path,
        )
    return Unreadable(f"cannot be read ({exc}): left untouched", path=path)


def versions(conn: sqlite3.Connection) -> tuple[int, int]:
    return conn.execute("PRAGMA application_id").fetchone()[0], conn.execute(
        "PRAGMA user_version"
    ).fetchone()[0]


def inspect(conn: sqlite3.Connection, path: str) -> int:
    """The schema version of the database on ``conn``: 0 when it is empty, else its
    version. Raises :class:`NotAnArchive` for another program's database or a damaged
    one, :class:`NewerSchema` for a schema this piconv does not know."""
    try:
        app, version = versions(conn)
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        if not damaged(exc):
            raise refusal(exc, path) from None
        raise NotAnArchive("corrupt", f"not a readable SQLite database ({exc})") from None
    if app != APPLICATION_ID:
        if app == 0 and version == 0 and tables == 0:
            return 0  # an empty database: made into an archive
        raise NotAnArchive("foreign", "not a piconv archive (another program's database)")
    if version > SCHEMA_VERSION:
        raise NewerSchema(
            f"written by a newer piconv (archive schema {version}; this piconv knows {SCHEMA_VERSION}): "
            "left untouched; upgrade piconv or write the archive elsewhere",
            path=path,
        )
    try:
        verdict = [row[0] for row in conn.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as exc:
        if not damaged(exc):
            raise refusal(exc, path) from None
        raise NotAnArchive("corrupt", f"damaged ({exc})") from None
    if verdict != ["ok"]:
        raise NotAnArchive("corrupt", f"damaged ({'; '.join(map(str, verdict[:3]))})")
    return int(version)


_V1_SESSIONS = frozenset(("pk", *SESSION_COLUMNS))
_V6_ENTRIES = frozenset({"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"})
_V1_ENTRIES = frozenset(("pk", "session", *ENTRY_COLUMNS)) - _V6_ENTRIES


def _columns(conn: sqlite3.Connection, table: str) -> frozenset[str]:
    return frozenset(row[1] for row in conn.execute(f"PRAGMA table_info({table})"))


def found_version(conn: sqlite3.Connection) -> int | None:
    """The schema the database's tables are, whatever its ``user_version`` says: 0 for
    none of them, a version for the tables of that version (its full-text index may be
    missing: :func:`repair_fts` makes it again), None for tables of no version."""
    names = {name: sql for name, sql in conn.execute("SELECT name, sql FROM sqlite_master")}
    if "sessions" not in names and "entries" not in names:
        return 0
    sessions, entries = _columns(conn, "sessions"), _columns(conn, "entries")
    linked = {"parent", "relation"} <= sessions and "inherited" in entries
    split = entries >= _V6_ENTRIES
    if (
        sessions - _V1_SESSIONS - {"parent", "relation"}
        or entries - _V1_ENTRIES - {"inherited"} - _V6_ENTRIES
    ):
        return None  # columns no piconv made
    if not (sessions >= _V1_SESSIONS and entries >= _V1_ENTRIES):
        return None  # columns missing
    if split:
        return 6 if linked and "entries_usage" in names else None
    if entries & _V6_ENTRIES:
        return None  # half of schema 6
    if linked:
        return 5
    if {"parent", "relation"} & sessions or "inherited" in entries:
        return None  # half of schema 5
    if "entries_filters" in names:
        return 3 if "prefix" in (names.get("entries_fts") or "") else 4
    return 2 if "entries_fts" in names else 1


def has_fts(conn: sqlite3.Connection) -> bool:
    """Whether the full-text index is there and readable."""
    try:
        conn.execute("SELECT rowid FROM entries_fts LIMIT 0").fetchall()
    except sqlite3.DatabaseError:
        return False
    return True


def repair_fts(conn: sqlite3.Connection) -> None:
    """Make the full-text index again, from the entries (a fork's copies left out, as
    the run that linked them left them), in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        with contextlib.suppress(sqlite3.DatabaseError):  # a virtual table whose storage is gone
            conn.execute("DROP TABLE IF EXISTS entries_fts")  # its shadow tables go below
        for name in ("entries_fts_data", "entries_fts_idx", "entries_fts_docsize", "entries_fts_config"):
            conn.execute(f"DROP TABLE IF EXISTS {name}")  # what a dropped index's storage left
        for statement in _statements(FTS):
            conn.execute(statement)
        conn.execute("INSERT INTO entries_fts (rowid, text) SELECT pk, text FROM entries WHERE NOT inherited")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def bring_up(conn: sqlite3.Connection, version: int, path: str) -> list[str]:
    """Bring the archive on ``conn`` (of schema ``version``, :func:`inspect`) to this
    piconv's schema: a schema number that does not match its tables is corrected, the
    migrations from there are run, a missing full-text index is made again. What was
    done, as notes; :class:`OutputError` for tables of no piconv schema (left untouched)."""
    notes = []
    found = found_version(conn)
    if found is None:
        raise OutputError(
            "its tables are not those of any piconv archive schema: left untouched "
            "(move it away, and the next run writes a new archive)",
            path=path,
        )
    if found != version:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(f"PRAGMA user_version = {found}")
        conn.execute("COMMIT")
        notes.append(
            f"{path}: its schema number ({version}) did not match its tables (schema {found}); corrected"
        )
    migrate(conn, found)
    if not has_fts(conn):
        repair_fts(conn)
        notes.append(f"{path}: its full-text index was missing or unreadable; made again from its entries")
    return notes


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Apply every migration from ``version`` up, each in one transaction with the
    version it reaches, so an interrupted upgrade leaves a whole older version."""
    for step in range(version, SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        try:
            MIGRATIONS[step](conn)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {step + 1}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
