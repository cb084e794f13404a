"""Writing archives: a one-session database, and the one database of a directory run.

Each session goes in with one transaction (its old rows out, its new rows in), so an
interrupted run leaves every session either as it was or as it is now. An existing file
that is no piconv archive, or a damaged one, is never written over: it is renamed aside
(``archive.db.foreign``, ``archive.db.corrupt``) and the archive is rebuilt from the
inputs; a schema from a newer piconv is refused and left untouched.

The process that runs a directory conversion opens the archive (:class:`Store`: checked,
migrated, in WAL mode); the worker processes then put their sessions in themselves
(:func:`put_here`), one writer at a time, while the others convert.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from .schema import (
    APPLICATION_ID,
    BUSY_WAIT_S,
    ENTRY_COLUMNS,
    SCHEMA_VERSION,
    SESSION_COLUMNS,
    NotAnArchive,
    bring_up,
    busy,
    inspect,
    migrate,
    refusal,
)

_INSERT_SESSION = (
    f"INSERT INTO sessions ({', '.join(SESSION_COLUMNS)}) VALUES ({', '.join('?' * len(SESSION_COLUMNS))})"
)
_INSERT_ENTRY = f"INSERT INTO entries (session, {', '.join(ENTRY_COLUMNS)}) VALUES (?, {', '.join('?' * len(ENTRY_COLUMNS))})"
_SIDE_FILES = ("-wal", "-shm", "-journal")
# the full-text index of one session's entries, in and out (an external-content index
# is told the text it is to forget)
_INDEX = "INSERT INTO entries_fts (rowid, text) SELECT pk, text FROM entries WHERE session = ?"
_UNINDEX = (
    "INSERT INTO entries_fts (entries_fts, rowid, text) "
    "SELECT 'delete', pk, text FROM entries WHERE session = ? AND NOT inherited"
)


def connect(path: str, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection in autocommit mode: every transaction is begun and ended explicitly.
    ``timeout``: how long a statement waits for another connection's lock."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=timeout)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


WAIT_POLL_S = 0.001
"""How often a writer tries again for the write lock another process holds. SQLite's own
busy handler sleeps in growing steps up to 100 ms, while a session takes about 20 ms to
write: a worker would sit idle for most of its wait."""
WAIT_LIMIT_S = 600.0
"""How long a writer waits for the lock before its session fails (``bulk:archive-error``)."""


def _patiently(conn: sqlite3.Connection, sql: str, limit: float | None = None) -> sqlite3.Cursor:
    """``sql`` executed, tried again while another process holds a lock it needs (the
    write lock, or the shared index of the write-ahead log while a process sets it up),
    for ``limit`` seconds (:data:`WAIT_LIMIT_S`). Some statements (a change of journal
    mode) meet a lock without SQLite's own wait: they wait here too."""
    deadline = None
    while True:
        try:
            return conn.execute(sql)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            now = time.monotonic()
            deadline = deadline or now + (WAIT_LIMIT_S if limit is None else limit)
            if now > deadline:
                raise
            time.sleep(WAIT_POLL_S if limit is None else min(0.05, limit / 10))


def _begin(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``: the write lock, waited for while another process holds it."""
    _patiently(conn, "BEGIN IMMEDIATE")


def put(conn: sqlite3.Connection, session: Sequence[Any], entries: Sequence[Sequence[Any]]) -> None:
    """Replace the session whose ``key`` is ``session[0]`` with these rows, in one transaction."""
    _begin(conn)
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


_HERE: dict[str, sqlite3.Connection] = {}
"""This process's connections to the archives it writes into, by path: a worker keeps its
connection from one session to the next (:func:`release` closes them)."""


def _connect_here(path: str) -> sqlite3.Connection:
    """A worker's connection to the archive the run opened: never through a link, never
    creating a file, and only to an archive of this piconv's schema."""
    _not_through_a_plant(path)
    conn = sqlite3.connect(
        f"file:{quote(os.path.abspath(path))}?mode=rw",
        uri=True,
        isolation_level=None,
        check_same_thread=False,
        timeout=0,  # busy: _begin waits, not SQLite's busy handler
    )
    try:
        found = tuple(
            _patiently(conn, f"PRAGMA {name}").fetchone()[0] for name in ("application_id", "user_version")
        )
        if found != (APPLICATION_ID, SCHEMA_VERSION):
            raise NotAnArchive("foreign", "not the archive this run opened")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")  # the run keeps the archive in WAL mode
    except BaseException:
        conn.close()
        raise
    return conn


def put_here(path: str, session: Sequence[Any], entries: Sequence[Sequence[Any]]) -> None:
    """Put one session into the archive at ``path`` from this process (a worker of the run
    that opened it): one transaction, taken when no other process is writing."""
    conn = _HERE.get(path)
    if conn is None:
        conn = _HERE[path] = _connect_here(path)
    try:
        put(conn, session, entries)
    except BaseException:
        if conn.in_transaction:  # interrupted between its statements: let the lock go
            release(path)
        raise


def release(path: str | None = None) -> None:
    """Close this process's connection to the archive at ``path`` (every one: None)."""
    for name in [path] if path is not None else list(_HERE):
        conn = _HERE.pop(name, None)
        if conn is not None:
            conn.close()


_OWN = "FROM entries WHERE session = :pk AND NOT inherited"
_RELINK = (
    "UPDATE sessions SET parent = :parent, relation = :relation, "
    f"tokens = (SELECT coalesce(sum(tokens), 0) {_OWN}), "
    f"cost = (SELECT round(coalesce(sum(cost), 0.0), 10) {_OWN}), "
    f"turns = (SELECT count(*) {_OWN} AND role = 'user') "
    "WHERE pk = :pk"
)


def _relink(
    conn: sqlite3.Connection, pk: int, parent: str | None, relation: str | None, parent_pk: int | None
) -> None:
    """Set session ``pk``'s link and mark its entries that its parent holds as inherited
    (the others not), keeping the full-text index to the entries not inherited; then its
    tokens, cost and turns are those of the entries it does not inherit."""
    held = set()
    if parent_pk is not None:
        held = set(conn.execute("SELECT id, timestamp FROM entries WHERE session = ?", (parent_pk,)))
    gained, lost = [], []
    for epk, eid, stamp, inherited, text in conn.execute(
        "SELECT pk, id, timestamp, inherited, text FROM entries WHERE session = ?", (pk,)
    ).fetchall():
        copy = (eid, stamp) in held
        if copy and not inherited:
            gained.append((epk, text))
        elif inherited and not copy:
            lost.append((epk, text))
    conn.executemany("UPDATE entries SET inherited = 1 WHERE pk = ?", ((e,) for e, _t in gained))
    conn.executemany(
        "INSERT INTO entries_fts (entries_fts, rowid, text) VALUES ('delete', ?, ?)",
        ((e, t) for e, t in gained if t is not None),
    )
    conn.executemany("UPDATE entries SET inherited = 0 WHERE pk = ?", ((e,) for e, _t in lost))
    conn.executemany(
        "INSERT INTO entries_fts (rowid, text) VALUES (?, ?)", ((e, t) for e, t in lost if t is not None)
    )
    conn.execute(_RELINK, {"parent": parent, "relation": relation, "pk": pk})


def _aside(path: str, kind: str) -> str:
    """Rename ``path`` (and the journal files beside it) to a free ``path.KIND[-N]``: free
    for the journals too, so no file already there is renamed over."""
    target, n = f"{path}.{kind}", 1
    while any(os.path.lexists(target + side) for side in ("", *_SIDE_FILES)):
        n += 1
        target = f"{path}.{kind}-{n}"
    for side in ("", *_SIDE_FILES):
        with contextlib.suppress(FileNotFoundError):
            os.replace(path + side, target + side)  # a link is moved, never followed
    return target


def _planted(path: str) -> bool:
    """Whether the archive or a journal beside it is something SQLite would follow or
    cannot use: a symbolic link (to a place outside OUTDIR, or to nothing, which SQLite
    would create), not a regular file, or a second name (a hard link) of another file,
    which SQLite would write into."""
    for name in (path, *(path + side for side in _SIDE_FILES)):
        try:
            info = os.lstat(name)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            return True
    return False


def _not_through_a_plant(path: str) -> None:
    """Raise OSError where the archive is :func:`_planted`: a database already opened by
    the run is written into, never through whatever took its place since."""
    if _planted(path):
        raise OSError(f"{path}: a link or not a regular file; not written through")


class Store:
    """The archive database of a directory run (``OUTDIR/archive.db``): opened, checked
    and brought to the current schema once, then given one session at a time."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.notes: list[str] = []
        self.late_notes: list[str] = []
        """What closing had to leave undone."""
        self._conn: sqlite3.Connection | None = self._open()

    @property
    def conn(self) -> sqlite3.Connection:
        """The store's connection, opened again (the file checked again) after :meth:`idle`."""
        if self._conn is None:
            _not_through_a_plant(self.path)
            self._conn = connect(self.path, BUSY_WAIT_S)
            self._tune(self._conn)
        return self._conn

    def idle(self) -> None:
        """Close the connection while the workers write. A pool worker may be forked from
        this process, and a database connection open across a fork confuses SQLite's
        locks in the child, whatever connection the child then uses."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _open(self) -> sqlite3.Connection:
        """The archive, checked and brought to this piconv's schema. Another program's
        lock is waited for (:data:`BUSY_WAIT_S`), then refused (:class:`ArchiveBusy`);
        only a file SQLite finds damaged (``PRAGMA quick_check``, or an error saying so)
        or another program's database is moved aside."""
        path = self.path
        if _planted(path):
            moved = _aside(path, "foreign")
            self.notes.append(
                f"{path}: a link or not a regular file; moved to {os.path.basename(moved)} and rebuilt from the inputs"
            )
        conn = None
        try:
            if os.path.exists(path) and os.path.getsize(path) > 0:
                try:
                    with open(path, "rb") as fh:
                        if fh.read(16) != b"SQLite format 3\x00":
                            raise NotAnArchive("foreign", "not a SQLite database")
                    conn = connect(path, BUSY_WAIT_S)
                    version = inspect(conn, path)
                except NotAnArchive as exc:
                    if conn is not None:
                        conn.close()
                        conn = None
                    moved = _aside(path, exc.kind)
                    self.notes.append(
                        f"{path}: {exc}; moved to {os.path.basename(moved)} and rebuilt from the inputs"
                    )
                else:
                    self.notes.extend(bring_up(conn, version, path))
                    self._tune(conn)
                    return conn
            conn = connect(path, BUSY_WAIT_S)
            migrate(conn, 0)
            self._tune(conn)
            return conn
        except sqlite3.OperationalError as exc:
            if conn is not None:
                conn.close()
            if busy(exc):
                raise refusal(exc, path) from None
            raise
        except BaseException:
            if conn is not None:
                conn.close()
            raise

    @staticmethod
    def _tune(conn: sqlite3.Connection) -> None:
        # many small transactions, from several processes: WAL with NORMAL sync is safe
        # against a crash of piconv (each commit is whole) and does not sync per session
        _patiently(conn, "PRAGMA journal_mode = WAL", BUSY_WAIT_S)
        conn.execute("PRAGMA synchronous = NORMAL")

    def link(self, wanted: Mapping[str, tuple[str | None, str]]) -> None:
        """Record which session came from which (``wanted``: a session's key -> its
        parent's key or None, and the relation) and count each copied entry once: a
        linked session's entries that its parent holds too (same id and time stamp) are
        marked ``inherited``, left out of its tokens, cost and turns and out of the
        full-text index. Only sessions whose link is not yet as wanted are looked at (one
        just put in has none), all in one transaction."""
        conn = self.conn
        rows = {
            key: (pk, parent, relation)
            for pk, key, parent, relation in conn.execute("SELECT pk, key, parent, relation FROM sessions")
        }
        todo = []
        for key, (pk, parent, relation) in rows.items():
            want_parent, want_relation = wanted.get(key, (None, None))
            if want_parent not in rows:
                want_parent = None
            if (parent, relation) != (want_parent, want_relation):
                todo.append((pk, want_parent, want_relation, rows[want_parent][0] if want_parent else None))
        if not todo:
            return
        _begin(conn)
        try:
            for pk, parent, relation, parent_pk in todo:
                _relink(conn, pk, parent, relation, parent_pk)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

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
        """Fold the write-ahead log back in: the archive is one file again. While another
        program reads it that cannot be done: it stays in WAL mode, with a note."""
        conn = self.conn
        try:
            conn.execute("PRAGMA optimize")
            _patiently(conn, "PRAGMA journal_mode = DELETE", BUSY_WAIT_S)
        except sqlite3.OperationalError as exc:
            if not busy(exc):
                raise
            self.late_notes.append(
                f"{self.path}: left in WAL mode (with its -wal and -shm files): another program "
                f"holds it ({exc}); the next run folds them in"
            )
        finally:
            conn.close()
            self._conn = None
