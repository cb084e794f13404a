"""The archive database's schema: its tables, its version and the migrations between versions.

A piconv archive is recognised by ``PRAGMA application_id`` (:data:`APPLICATION_ID`);
``PRAGMA user_version`` is its schema version. Opening an archive brings an older schema
up to :data:`SCHEMA_VERSION` one migration at a time, each in its own transaction; a
newer schema is refused and left as it is. docs/formats/sqlite.md describes every table
and column.
"""

from __future__ import annotations

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
]
SCHEMA_VERSION = len(MIGRATIONS)


class NotAnArchive(Exception):
    """The file is no piconv archive (another program's database) or is damaged."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind  # "foreign" or "corrupt"


class NewerSchema(OutputError):
    """The archive was written by a newer piconv: it is refused and left untouched."""


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
        raise NotAnArchive("corrupt", f"damaged ({exc})") from None
    if verdict != ["ok"]:
        raise NotAnArchive("corrupt", f"damaged ({'; '.join(map(str, verdict[:3]))})")
    return int(version)


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
