"""One session file's :class:`~piconv.facts.SessionScan`, read the way a directory run
reads a session (opened safely, detected by its reader), and many of them at once.

A reader with a ``scan`` of its own (pi's) gives it from the file's bytes; otherwise, or
when its scan declines the file, the whole document is read and
:func:`piconv.facts.scan_document` takes the same from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..bulk.discover import NamedBytes, Source, open_session
from ..errors import PiconvError
from ..facts.scan import SessionScan


@dataclass(frozen=True, slots=True)
class Scanned:
    """A session file and its scan (``scan``), or why it could not be read (``error``);
    ``reader``: the input format it was read as."""

    source: Source
    scan: SessionScan | None
    reader: str = ""
    error: str = ""


def scan_bytes(data: bytes, path: str) -> tuple[SessionScan, str]:
    """The scan of a session's bytes, and the name of the reader it was read with.
    Raises :class:`piconv.PiconvError` when no reader takes it."""
    from .. import api
    from ..facts.scan import scan_document

    reader = api.detect(data)
    if reader.scan is not None:
        found = reader.scan(data, {"source_path": path})
        if found is not None:
            return found, reader.name
    doc = api.load(NamedBytes(data, path), reader=reader.name)
    return scan_document(doc), reader.name


def scan_source(root: str, src: Source) -> Scanned:
    """One file below ``root``, opened as a directory run opens it (no link followed)."""
    try:
        with open_session(root, src.open_rel or src.rel) as fh:
            data = fh.read()
        found, reader = scan_bytes(data, src.path)
    except OSError as exc:
        return Scanned(src, None, error=f"cannot read: {exc.strerror or exc}")
    except PiconvError as exc:
        return Scanned(src, None, error=str(exc))
    return Scanned(src, found, reader)


def _scan_chunk(root: str, sources: Sequence[Source]) -> list[Scanned]:
    return [scan_source(root, src) for src in sources]


def scan_all(root: str, sources: Sequence[Source], jobs: int | None = None) -> list[Scanned]:
    """Every source's scan, in the order given. ``jobs``: worker processes (default:
    the cores this process may use; 1 scans in this process). A small directory is
    scanned in this process whatever ``jobs`` says: starting workers would cost more."""
    from ..bulk.executors import default_jobs, pool_context

    workers = default_jobs() if jobs is None else max(1, jobs)
    total = sum(src.size for src in sources)
    if workers == 1 or len(sources) < 2 or total < _PARALLEL_BYTES:
        return _scan_chunk(root, sources)
    # Deal the files out largest first, so each worker gets a like share of the bytes.
    order = sorted(range(len(sources)), key=lambda i: -sources[i].size)
    chunks = [[sources[i] for i in order[w::workers]] for w in range(workers)]
    from concurrent.futures import ProcessPoolExecutor

    results: dict[str, Scanned] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=pool_context()) as pool:
        for done in pool.map(_scan_chunk, [root] * len(chunks), chunks):
            for item in done:
                results[item.source.rel] = item
    return [results[src.rel] for src in sources]


_PARALLEL_BYTES = 32 * 1024 * 1024
"""Below this many bytes, one process scans faster than a pool starts."""
