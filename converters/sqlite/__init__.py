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
import sqlite3
import tempfile
from collections.abc import Mapping
from typing import IO, Any

from piconv import Converter, Report, hookimpl
from piconv.ir import Document, Image, MessageBody, SystemMessage

from . import rows as _rows
from .metadata import metadata_bytes, metadata_name
from .schema import SCHEMA_VERSION, NotAnArchive, inspect, migrate
from .search import ARCHIVE_NAME, search
from .store import Store, connect, put


def _key(doc: Document) -> str:
    path = doc.session.source_path
    if path:
        return os.path.basename(path)
    return doc.session.id or "session"


def _losses(doc: Document, report: Report) -> None:
    for entry in doc.entries:
        message = entry.body.message if type(entry.body) is MessageBody else None
        if type(message) is SystemMessage:
            report.add("system-prompt-not-indexed", entry.origin.line)
        content = getattr(message, "content", None)
        if isinstance(content, tuple) and any(type(p) is Image for p in content):
            report.add("image-not-stored", entry.origin.line)


def _to_bytes(fill: Any) -> bytes:
    """A database built by ``fill(conn)``, as the bytes of its file."""
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
    """What a directory run needs of an archive format (see docs/plugins.md): the rows of
    one session, made in the worker; the store that takes them, in the parent; search."""

    file_name = ARCHIVE_NAME

    @staticmethod
    def payload(doc: Document, options: Mapping[str, Any], report: Report) -> bytes:
        _losses(doc, report)
        return _rows.payload(doc)

    @staticmethod
    def open(path: str) -> ArchiveStore:
        return ArchiveStore(path)

    @staticmethod
    def search(path: str, query: str, filters: Mapping[str, Any] | None = None, limit: int = 20) -> list[dict[str, Any]]:
        return search(path, query, filters, limit)


class ArchiveStore(Store):
    def add(self, key: str, payload: bytes, sha256: str | None, links: Mapping[str, str]) -> None:  # type: ignore[override]
        super().add(key, _rows.from_payload(payload), sha256, links)

    def close(self) -> dict[str, bytes]:  # type: ignore[override]
        """Closes the database; returns the datasette metadata to write beside it."""
        super().close()
        return {metadata_name(self.path): metadata_bytes(self.path)}


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
        )
    )
