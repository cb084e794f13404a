"""Writing archives: a one-session database, and the one database of a directory run.

Each session goes in with one transaction (its old rows out, its new rows in), so an
interrupted run leaves every session either as it was or as it is now. An existing file
that is no piconv archive, or a damaged one, is never written over: it is renamed aside
(``archive.db.foreign``, ``archive.db.corrupt``) and the archive is rebuilt from the
inputs; a schema from a newer piconv is refused and left untouched.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from .schema import (
    ENTRY_COLUMNS,
    SESSION_COLUMNS,
    NotAnArchive,
    inspect,
    migrate,
)

_INSERT_SESSION = (
    f"INSERT INTO sessions ({', '.join(SESSION_COLUMNS)}) VALUES ({', '.join('?' * len(SESSION_COLUMNS))})"
)
_INSERT_ENTRY = f"INSERT INTO entries (session, {', '.join(ENTRY_COLUMNS)}) VALUES (?, {', '.join('?' * len(ENTRY_COLUMNS))})"
_SIDE_FILES = ("-wal", "-shm", "-journal")
# the full-text index of one session's entries, in and out (an external-content index
# is told the text it is to forget)
_INDEX = "INSERT INTO entries_fts (rowid, text) SELECT pk, text FROM entries WHERE session = ?"
_UNINDEX = "INSERT INTO entries_fts (entries_fts, rowid, text) SELECT 'delete', pk, text FROM entries WHERE session = ?"


def connect(path: str) -> sqlite3.Connection:
    """A connection in autocommit mode: every transaction is begun and ended explicitly."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def put(conn: sqlite3.Connection, session: Sequence[Any], entries: Sequence[Sequence[Any]]) -> None:
    """Replace the session whose ``key`` is ``session[0]`` with these rows, in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        old = conn.execute("SELECT pk FROM sessions WHERE key = ?", (session[0],)).fetchone()
        if old is not None:
            conn.execute(_UNINDEX, old)
            conn.execute("DELETE FROM entries WHERE session = ?", old)
            conn.execute("DELETE FROM sessions WHERE pk = ?", old)
        pk = conn.execute(_INSERT_SESSION, tuple(session)).lastrowid
        conn.executemany(_INSERT_ENTRY, ((pk, *row) for row in entries))
        conn.execute(_INDEX, (pk,))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _aside(path: str, kind: str) -> str:
    """Rename ``path`` (and the journal files beside it) to a free ``path.KIND[-N]``."""
    target, n = f"{path}.{kind}", 1
    while os.path.lexists(target):
        n += 1
        target = f"{path}.{kind}-{n}"
    for side in ("", *_SIDE_FILES):
        with contextlib.suppress(FileNotFoundError):
            os.replace(path + side, target + side)  # a link is moved, never followed
    return target


def _planted(path: str) -> bool:
    """Whether the archive or a journal beside it is something SQLite would follow or
    cannot use: a symbolic link (to a place outside OUTDIR, or to nothing, which SQLite
    would create), or not a regular file."""
    for name in (path, *(path + side for side in _SIDE_FILES)):
        if os.path.islink(name) or (os.path.lexists(name) and not os.path.isfile(name)):
            return True
    return False


class Store:
    """The archive database of a directory run (``OUTDIR/archive.db``): opened, checked
    and brought to the current schema once, then given one session at a time."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.notes: list[str] = []
        self.conn = self._open()

    def _open(self) -> sqlite3.Connection:
        path = self.path
        if _planted(path):
            moved = _aside(path, "foreign")
            self.notes.append(
                f"{path}: a link or not a regular file; moved to {os.path.basename(moved)} and rebuilt from the inputs"
            )
        if os.path.exists(path) and os.path.getsize(path) > 0:
            conn = None
            try:
                with open(path, "rb") as fh:
                    if fh.read(16) != b"SQLite format 3\x00":
                        raise NotAnArchive("foreign", "not a SQLite database")
                conn = connect(path)
                version = inspect(conn, path)
            except NotAnArchive as exc:
                if conn is not None:
                    conn.close()
                moved = _aside(path, exc.kind)
                self.notes.append(
                    f"{path}: {exc}; moved to {os.path.basename(moved)} and rebuilt from the inputs"
                )
            except BaseException:
                if conn is not None:
                    conn.close()
                raise
            else:
                migrate(conn, version)
                self._tune(conn)
                return conn
        conn = connect(path)
        migrate(conn, 0)
        self._tune(conn)
        return conn

    @staticmethod
    def _tune(conn: sqlite3.Connection) -> None:
        # one writer, many small transactions: WAL with NORMAL sync is safe against a
        # crash of piconv (each commit is whole) and does not sync per session
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")

    def keys(self) -> dict[str, str | None]:
        """Every session in the archive: its key and the SHA-256 of the file it came from."""
        return dict(self.conn.execute("SELECT key, sha256 FROM sessions"))

    def add(
        self, key: str, rows: tuple[list[Any], list[list[Any]]], sha256: str | None, links: Mapping[str, str]
    ) -> None:
        session, entries = rows
        values = dict(zip(SESSION_COLUMNS, session, strict=True))
        values.update(key=key, sha256=sha256, html=links.get("html"))
        put(self.conn, [values[c] for c in SESSION_COLUMNS], entries)

    def close(self) -> None:
        """Fold the write-ahead log back in: the archive is one file again."""
        try:
            self.conn.execute("PRAGMA optimize")
            self.conn.execute("PRAGMA journal_mode = DELETE")
        finally:
            self.conn.close()
