"""The manifest: what each input looked like when it was last converted, and into what.

Stored as JSON Lines in ``OUTDIR/.piconv-manifest.jsonl``, one record per input, the
last record for an input winning. JSONL rather than SQLite because:

- the only writer is the parent process, appending one line after a file's outputs are
  all in place, so a crash loses at most the lines not yet written, and a torn last
  line is recognised and ignored on load (a file simply gets converted again);
- it is plain text: ``grep``/``jq`` answer "when was this session exported, by which
  plugin version", and the archive can be copied or synced as ordinary files;
- SQLite's locking is unreliable on the network file systems archives often live on.

At the end of a run the log is compacted (rewritten with one line per input, by temp
file and rename). A lock file (``flock``) keeps two runs off one OUTDIR at the same time.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import IO, Any

from ..jsonio import dumps, loads

NAME = ".piconv-manifest.jsonl"
LOCK = ".piconv-lock"
VERSION = 1
SYNC_EVERY_S = 1.0
"""fsync the log at most this often: a power cut loses under a second of records, which
the next run redoes; syncing every line would cost a disk flush per session."""


class Manifest:
    def __init__(self, outdir: str) -> None:
        self.outdir = outdir
        self.path = os.path.join(outdir, NAME)
        self.records: dict[str, dict[str, Any]] = {}
        self.ignored_lines = 0
        self._log: IO[bytes] | None = None
        self._last_sync = 0.0
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                for raw in fh:
                    try:
                        rec = loads(raw)
                    except ValueError:  # orjson's and json's decode errors both
                        self.ignored_lines += 1  # torn by a crash mid-append: that file is redone
                        continue
                    if (
                        isinstance(rec, dict)
                        and rec.get("v") == VERSION
                        and isinstance(rec.get("input"), str)
                    ):
                        self.records[rec["input"]] = rec
                    else:
                        self.ignored_lines += 1
        except FileNotFoundError:
            pass

    def get(self, rel: str) -> dict[str, Any] | None:
        return self.records.get(rel)

    def append(self, record: dict[str, Any]) -> None:
        record = {"v": VERSION, **record}
        self.records[record["input"]] = record
        if self._log is None:
            self._log = open(self.path, "ab")  # noqa: SIM115 -- kept open across appends, closed in compact()
            # A torn last line from a crash must not glue itself to the next record.
            if self._log.tell() > 0 and not _ends_with_newline(self.path):
                self._log.write(b"\n")
        self._log.write(dumps(record, sort_keys=True) + b"\n")
        self._log.flush()  # in the kernel: survives kill -9 of this process
        now = time.monotonic()
        if now - self._last_sync >= SYNC_EVERY_S:
            os.fsync(self._log.fileno())
            self._last_sync = now

    def compact(self) -> None:
        """Rewrite the log with one line per input (sorted), atomically."""
        if self._log is not None:
            self._log.close()
            self._log = None
        if not self.records and not os.path.exists(self.path):
            return
        data = b"".join(
            dumps(self.records[k], sort_keys=True) + b"\n" for k in sorted(self.records)
        )
        tmp = self.path + f".{os.getpid()}.piconv-tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


@contextlib.contextmanager
def locked(outdir: str) -> Iterator[None]:
    """Hold an exclusive lock on OUTDIR for the run. The kernel releases it when the
    process dies, so a killed run never leaves a stale lock behind."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock; two runs on one OUTDIR are the user's to avoid
        yield
        return
    from ..errors import UsageError

    fd = os.open(os.path.join(outdir, LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError("another piconv run is writing to this directory", path=outdir) from None
        yield
    finally:
        os.close(fd)
