"""The ``sqlite`` format: sessions as a SQLite database with full-text search.

One session converts to a database of that session (``--to sqlite -o s.db``); a directory
run writes one database for the whole archive (``OUTDIR/archive.db``), updated
incrementally with the run's manifest, and the datasette metadata beside it.
``piconv search`` queries it. The stdlib ``sqlite3`` does all of it: every statement is
a few lines of SQL written once in :mod:`.schema` and :mod:`.store`, so sqlite-utils
would add a dependency without removing code. See docs/formats/sqlite.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from piconv import Converter, Report, hookimpl

if TYPE_CHECKING:
    import sqlite3

    from piconv.ir import Document

    from .store import Store

# Every conversion builds the registry, which imports this module: what a sqlite
# conversion needs (sqlite3, the schema, the rows) is imported when it is used.
ARCHIVE_NAME = "archive.db"


def _key(doc: Document) -> str:
    path = doc.session.source_path
    if path:
        return os.path.basename(path)
    return doc.session.id or "session"


def _losses(doc: Document, report: Report) -> None:
    from piconv.ir import Image, MessageBody, SystemMessage

    for entry in doc.entries:
        message = entry.body.message if type(entry.body) is MessageBody else None
        if type(message) is SystemMessage:
            report.add("system-prompt-not-indexed", entry.origin.line)
        content = getattr(message, "content", None)
        if isinstance(content, tuple) and any(type(p) is Image for p in content):
            report.add("image-not-stored", entry.origin.line)


def _to_bytes(fill: Any) -> bytes:
    """A database built by ``fill(conn)``, as the bytes of its file."""
    import sqlite3
    import tempfile

    from .store import connect

    if hasattr(sqlite3.Connection, "serialize"):
        conn = connect(":memory:")
        try:
            fill(conn)
            return conn.serialize()
        finally:
            conn.close()
    with tempfile.TemporaryDirectory(prefix="piconv-sqlite-") as tmp:  # Python 3.10
        path = os.path.join(tmp, "out.db")
        conn = connect(path)
        try:
            fill(conn)
        finally:
            conn.close()
        with open(path, "rb") as fh:
            return fh.read()


def write(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    from . import rows as _rows
    from .schema import migrate
    from .store import put

    entries = [_rows.entry_row(e) for e in doc.entries]
    session = _rows.session_row(doc, _key(doc))

    def fill(conn: sqlite3.Connection) -> None:
        migrate(conn, 0)
        put(conn, session, entries)

    out.write(_to_bytes(fill))
    _losses(doc, report)
    report.entries_written = len(entries)


def check(data: bytes) -> list[str]:
    """A piconv archive of the current schema, whole, with its full-text index in step."""
    import sqlite3
    import tempfile

    from .schema import SCHEMA_VERSION, NotAnArchive, inspect

    with tempfile.TemporaryDirectory(prefix="piconv-sqlite-") as tmp:
        path = os.path.join(tmp, "check.db")
        with open(path, "wb") as fh:
            fh.write(data)
        if data[:16] != b"SQLite format 3\x00":
            return ["line 0: not a SQLite database"]
        conn = sqlite3.connect(path)
        try:
            version = inspect(conn, "<output>")
            if version != SCHEMA_VERSION:
                return [f"line 0: archive schema {version}, expected {SCHEMA_VERSION}"]
            conn.execute("INSERT INTO entries_fts(entries_fts, rank) VALUES ('integrity-check', 1)")
            orphans = conn.execute(
                "SELECT count(*) FROM entries WHERE session NOT IN (SELECT pk FROM sessions)"
            ).fetchone()[0]
            if orphans:
                return [f"line 0: {orphans} entries belong to no session"]
        except NotAnArchive as exc:
            return [f"line 0: {exc}"]
        except sqlite3.DatabaseError as exc:
            return [f"line 0: {exc}"]
        finally:
            conn.close()
    return []


class SqliteArchive:
    """What a directory run needs of an archive format (see docs/plugins.md): a session
    put in by the worker that converted it, or its rows made there for the parent to put
    in (a Dask worker may be on another machine); the store the parent opens; search."""

    file_name = ARCHIVE_NAME

    @staticmethod
    def put(
        path: str,
        key: str,
        doc: Document,
        options: Mapping[str, Any],
        report: Report,
        sha256: str | None,
        links: Mapping[str, str],
    ) -> None:
        from . import rows as _rows
        from .store import put_here

        _losses(doc, report)
        entries = [_rows.entry_row(e) for e in doc.entries]
        put_here(path, _rows.session_row(doc, key, sha256, links.get("html")), entries)

    @staticmethod
    def release() -> None:
        from .store import release

        release()

    @staticmethod
    def payload(doc: Document, options: Mapping[str, Any], report: Report) -> bytes:
        from . import rows as _rows

        _losses(doc, report)
        return _rows.payload(doc)

    @staticmethod
    def open(path: str) -> ArchiveStore:
        return ArchiveStore(path)

    @staticmethod
    def search(
        path: str, query: str, filters: Mapping[str, Any] | None = None, limit: int = 20
    ) -> list[dict[str, Any]]:
        from .search import search

        return search(path, query, filters, limit)

    @staticmethod
    def usage(path: str) -> list[tuple[dict[str, Any], list[tuple[Any, ...]]]]:
        from .usage import usage

        return usage(path)


class ArchiveStore:
    """:class:`.store.Store` fed with the payloads of :meth:`SqliteArchive.payload`; its
    ``close`` hands back the datasette metadata to write beside the database."""

    def __init__(self, path: str) -> None:
        from .store import Store

        self.store: Store = Store(path)
        self.path = path
        self.notes = self.store.notes

    @property
    def conn(self) -> sqlite3.Connection:
        return self.store.conn

    def keys(self) -> dict[str, str | None]:
        return self.store.keys()

    def idle(self) -> None:
        self.store.idle()

    @property
    def late_notes(self) -> list[str]:
        return self.store.late_notes

    def link(self, wanted: Mapping[str, tuple[str | None, str]]) -> None:
        """Which session came from which (:meth:`.store.Store.link`)."""
        self.store.link(wanted)

    def add(self, key: str, payload: bytes, sha256: str | None, links: Mapping[str, str]) -> None:
        from .rows import from_payload

        self.store.add(key, from_payload(payload), sha256, links)

    def close(self) -> dict[str, bytes]:
        """Closes the database; returns the datasette metadata to write beside it."""
        from .metadata import metadata_bytes, metadata_name

        self.store.close()
        return {metadata_name(self.path): metadata_bytes(self.path)}

    @staticmethod
    def owns(existing: bytes) -> bool:
        """Whether a file beside the archive is metadata piconv wrote (any version)."""
        from .metadata import MARK

        return MARK.encode() in existing


ARCHIVE = SqliteArchive()


@hookimpl
def register_converters(register: Any) -> None:
    register(
        Converter(
            name="sqlite",
            summary="a SQLite database with full-text search; one for a whole directory run",
            extension=".db",
            media_type="application/vnd.sqlite3",
            write=write,
            check=check,
            mapping_doc="docs/formats/sqlite.md",
            aliases=("db",),
            archive=ARCHIVE,
            takes_leaf=False,  # the database holds every branch
        )
    )
