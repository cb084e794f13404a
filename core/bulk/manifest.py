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
import errno
import math
import os
import stat
import time
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import OutputError
from ..jsonio import dumps, loads
from ..output import commit, discard, temporary

NAME = ".piconv-manifest.jsonl"
LOCK = ".piconv-lock"
VERSION = 1
SYNC_EVERY_S = 1.0
"""fsync the log at most this often: a power cut loses under a second of records, which
the next run redoes; syncing every line would cost a disk flush per session."""


def open_own(path: str, flags: int) -> int:
    """A descriptor of ``path``, one of piconv's own files in OUTDIR (the manifest, the
    lock), opened without following a link and refused (:class:`OutputError`) unless it
    is a plain file with no other name: a link planted there would have piconv write where
    it points, a pipe would hang the run, a second name (a hard link) of someone's file
    would have it appended to."""
    nofollow = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | nofollow, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise _not_own(path) from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        os.close(fd)
        raise _not_own(path)
    return fd


def _not_own(path: str) -> OutputError:
    return OutputError(
        "not a plain file (a symbolic link, a pipe, a directory or a second name of another file) "
        "where piconv keeps its own: move it away",
        path=path,
    )


class Manifest:
    def __init__(self, outdir: str) -> None:
        self.outdir = outdir
        self.path = os.path.join(outdir, NAME)
        self.records: dict[str, dict[str, Any]] = {}
        self.dropped = 0
        self._lines = 0
        self._appended = False
        self._log: int | None = None
        self._last_sync = 0.0
        self._load()

    def _load(self) -> None:
        try:
            fd = open_own(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        with open(fd, "rb") as fh:
            for raw in fh:
                try:
                    rec = loads(raw)
                except (ValueError, RecursionError):  # orjson's and json's decode errors both
                    self.dropped += 1  # torn by a crash mid-append: that file is redone
                    continue
                if well_formed(rec):
                    self.records[rec["input"]] = rec
                    self._lines += 1
                else:
                    self.dropped += 1  # never fatal: that input is converted again

    def get(self, rel: str) -> dict[str, Any] | None:
        return self.records.get(rel)

    def append(self, record: dict[str, Any]) -> None:
        """Add one record as one line. A failed write (a full disk) is cut back off, so the
        log never holds a torn line of this run; the error is raised for the run to stop."""
        record = finite({"v": VERSION, **record})
        line = dumps(record, sort_keys=True) + b"\n"
        if self._log is None:
            self._log = open_own(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND)  # read: its last byte
            # A torn last line from a crash must not glue itself to the next record.
            size = os.fstat(self._log).st_size
            if size > 0 and os.pread(self._log, 1, size - 1) != b"\n":
                line = b"\n" + line
        start = os.fstat(self._log).st_size
        try:
            view = memoryview(line)
            while view:  # in the kernel once written: survives kill -9 of this process
                view = view[os.write(self._log, view) :]
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._log, start)
            raise
        self.records[record["input"]] = record
        self._appended = True
        now = time.monotonic()
        if now - self._last_sync >= SYNC_EVERY_S:
            os.fsync(self._log)
            self._last_sync = now

    def compact(self) -> None:
        """Rewrite the log with one line per input (sorted), atomically; a log already so
        (nothing appended, nothing dropped, no input twice) is left untouched, so a run
        that changed nothing writes nothing (``piconv watch`` runs often)."""
        self.close()
        if not self._appended and not self.dropped and self._lines == len(self.records):
            return
        if not self.records and not os.path.exists(self.path):
            return
        tmp, name = temporary(self.outdir)
        try:
            for k in sorted(self.records):
                tmp.write(dumps(self.records[k], sort_keys=True) + b"\n")
            commit(tmp, name, self.path, None)
        except BaseException:
            discard(tmp, name)
            raise

    def close(self) -> None:
        if self._log is not None:
            os.close(self._log)
            self._log = None


def finite(value: Any) -> Any:
    """``value`` with every infinite or NaN float replaced by None: JSON has no such
    numbers, and a manifest holding one (``1e400`` tokens in a session) would fail
    whatever reads it next."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def well_formed(rec: Any) -> bool:
    """A record the run and the index can use: the fields they read have their types,
    and no number is infinite (the stdlib reader accepts ``Infinity``)."""
    if not (isinstance(rec, dict) and rec.get("v") == VERSION and isinstance(rec.get("input"), str)):
        return False
    outputs = rec.get("outputs", {})
    if not isinstance(outputs, dict) or not all(
        isinstance(o, dict) and isinstance(o.get("path"), str) and _paths(o.get("leaves", []))
        for o in outputs.values()
    ):
        return False
    if not _paths(rec.get("written", [])):
        return False
    meta = rec.get("meta")
    if meta is not None and not isinstance(meta, dict):
        return False
    return finite(rec) == rec


def _paths(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(rel, str) for rel in value)


def output_links(rec: Mapping[str, Any] | None) -> dict[str, str]:
    """The outputs a record names, by format name: the path below OUTDIR of each."""
    outputs = (rec or {}).get("outputs") or {}
    return {
        name: out["path"]
        for name, out in sorted(outputs.items())
        if isinstance(out, dict) and isinstance(out.get("path"), str)
    }


def output_paths(rec: Mapping[str, Any] | None) -> frozenset[str]:
    """Every file a record names as written for its input: each current output and its
    leaves, and whatever earlier runs wrote (``written``) that the record no longer
    counts as current (a format not asked for since, a session changed, a run cut short)."""
    paths = set(output_links(rec).values())
    for out in ((rec or {}).get("outputs") or {}).values():
        if isinstance(out, dict) and isinstance(out.get("leaves"), list):
            paths.update(rel for rel in out["leaves"] if isinstance(rel, str))
    written = (rec or {}).get("written")
    if isinstance(written, list):
        paths.update(rel for rel in written if isinstance(rel, str))
    return frozenset(paths)


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

    path = os.path.join(outdir, LOCK)
    try:
        fd = open_own(path, os.O_RDWR | os.O_CREAT)
    except OSError:
        # A read-only OUTDIR: a lock file already there is still locked (flock needs no
        # write access), so the run goes on to report what it could not write.
        try:
            fd = open_own(path, os.O_RDONLY)
        except OSError as exc:
            raise OutputError(f"cannot write: {exc.strerror or exc}", path=outdir) from None
    global _lock_fd
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError("another piconv run is writing to this directory", path=outdir) from None
        _lock_fd = fd
        yield
    finally:
        _lock_fd = None
        os.close(fd)


_lock_fd: int | None = None
"""The descriptor holding this process's OUTDIR lock, while it is held."""


def drop_inherited_lock() -> None:
    """In a worker forked from the run: close its copy of the lock's descriptor. A flock
    lasts while any copy is open, so a worker left running after its parent was killed
    would otherwise keep every later run out of OUTDIR."""
    if _lock_fd is not None:
        os.close(_lock_fd)
