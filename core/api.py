"""The library's entry points: load a session, convert it, list the formats."""

from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from typing import IO, Any, BinaryIO

from .errors import InputError, ValidationFailed
from .ir import Document
from .registry import Converter, get_registry
from .report import Report

Source = str | os.PathLike[str] | bytes | BinaryIO


def _open(source: Source) -> tuple[BinaryIO | bytes, str]:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), "<bytes>"
    if hasattr(source, "read"):
        return source, getattr(source, "name", "<stream>")  # type: ignore[return-value]
    path = os.fspath(source)  # type: ignore[arg-type]
    if path == "-":
        return sys.stdin.buffer, "<stdin>"
    if not os.path.exists(path):
        raise InputError("no such file", path=path)
    if os.path.isdir(path):
        raise InputError("is a directory, not a session file", path=path)
    try:
        return open(path, "rb"), path
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None


def load(source: Source, *, recover_glued: bool = False) -> Document:
    """Read a pi session (a path, ``"-"`` for stdin, bytes or a binary stream) into the IR.

    Never raises on bad lines: they become :attr:`Document.issues`. Raises
    :class:`InputError` when the input cannot be read or is no pi session at all.
    """
    stream, name = _open(source)
    # Reading allocates hundreds of thousands of long-lived, acyclic objects; the cyclic
    # collector would rescan all of them again and again (measured: 3x slower).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load(stream, name, source, recover_glued)
    finally:
        # The document's objects live as long as it does and hold no cycles (refcounting
        # frees them): moved out of the collector's sight, the next automatic collection
        # does not rescan them all (0.5 s after loading 100 MiB).
        gc.freeze()
        if collecting:
            gc.enable()


def _load(stream: BinaryIO | bytes, name: str, source: Source, recover_glued: bool) -> Document:
    from .reader import iter_lines
    from .session import NotASession, stream_document

    source_path = None if name.startswith("<") else name
    problems: list[Any] = []
    try:
        return stream_document(iter_lines(stream, recover_glued=recover_glued), source_path, problems)
    except NotASession as exc:
        if exc.lines_read == 0:
            raise InputError("empty file: not a pi session", path=name) from None
        first = problems[0] if problems else None
        why = f" (line {first.line}: {first.message})" if first else ""
        raise InputError(f"not a pi session: no session header and no session entries{why}", path=name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=name) from None
    finally:
        if stream is not sys.stdin.buffer and hasattr(stream, "close") and not hasattr(source, "read"):
            stream.close()


def formats() -> list[Converter]:
    """Every registered output format, built-in and from plugins."""
    return get_registry().formats()


def convert(
    document: Document | Source,
    to: str,
    out: IO[bytes] | str | os.PathLike[str],
    options: Mapping[str, Any] | None = None,
    *,
    validate: bool = True,
    recover_glued: bool = False,
) -> Report:
    """Write ``document`` (or the session at a path, or its bytes) as format ``to`` into ``out``.

    With ``validate`` the output is checked with the format's schema or checker before it
    is released: a failure raises :class:`ValidationFailed` and nothing reaches ``out``.
    The output is written to a temporary file first (beside a path ``out``, then renamed
    into place), so a reader of ``out`` never sees half a file.

    Given a path or bytes, a format with a ``write_stream`` converts the session entry by
    entry as it is read, so memory holds one entry rather than the whole document; a file
    that cannot be read that way (see :mod:`piconv.stream`) is converted whole, with the
    same result.
    """
    converter = get_registry().get(to)
    opts = dict(options or {})
    target = os.fspath(out) if isinstance(out, (str, os.PathLike)) else None
    opts.setdefault("output_path", target)
    opts["validate"] = validate
    opts.setdefault("jobs", 1)
    doc = document if isinstance(document, Document) else None
    streamable = doc is None and converter.write_stream is not None and _rereadable(document)
    if doc is None and not streamable:
        doc = load(document, recover_glued=recover_glued)  # type: ignore[arg-type]
    directory = os.path.dirname(os.path.abspath(target)) if target is not None else None
    if directory is not None:
        os.makedirs(directory, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w+b", buffering=1 << 20, dir=directory, prefix=".piconv-", suffix=converter.extension, delete=False
    ) as tmp:
        # The wrapper's every call goes through a Python-level __getattr__ (5% of an ASF
        # conversion, which writes a line at a time): converters get the file itself.
        sink = tmp.file
        try:
            report = _write_streaming(converter, document, sink, opts, recover_glued) if streamable else None  # type: ignore[arg-type]
            if report is None:
                if doc is None:
                    doc = load(document, recover_glued=recover_glued)  # type: ignore[arg-type]
                report = new_report(converter, doc)
                converter.write(doc, sink, opts, report)
            tmp.flush()
            if validate and converter.check is not None and not converter.checks_while_writing:
                tmp.seek(0)
                errors = converter.check(tmp.read())
                if errors:
                    shown = "; ".join(errors[:5])
                    raise ValidationFailed(
                        f"{converter.name} output failed validation ({len(errors)} problems): {shown}",
                        path=report.source,
                    )
            if target is not None:
                os.fsync(tmp.fileno())
                # a temporary file is private (0600); the output gets the usual mode
                os.fchmod(tmp.fileno(), 0o666 & ~_umask())
                tmp.close()
                os.replace(tmp.name, target)
            else:
                tmp.seek(0)
                shutil.copyfileobj(tmp, out)  # type: ignore[arg-type]
        finally:
            if os.path.exists(tmp.name):
                os.unlink(tmp.name)
    return report


def _rereadable(source: Any) -> bool:
    """A source that can be read a second time if streaming has to give way: a path (not
    stdin) or bytes."""
    if isinstance(source, (bytes, bytearray)):
        return True
    return isinstance(source, (str, os.PathLike)) and os.fspath(source) != "-"


def _write_streaming(
    converter: Converter, source: Source, out: IO[bytes], opts: dict[str, Any], recover_glued: bool
) -> Report | None:
    """``converter.write_stream`` over the session at ``source``; ``None`` (and ``out``
    emptied) when the session must be converted whole."""
    from .stream import NeedsWholeSession, SessionStream

    opened, name = _open(source)  # the same errors as load() for a missing or unreadable file
    if hasattr(opened, "close"):
        opened.close()  # type: ignore[union-attr]
    # The stream gets the path itself (or the bytes): a converter may read it a second time.
    stream_source = bytes(source) if isinstance(source, (bytes, bytearray)) else os.fspath(source)  # type: ignore[arg-type]
    start = out.tell()
    try:
        stream = SessionStream(stream_source, None if name.startswith("<") else name, recover_glued=recover_glued)
        report = Report(format=converter.name, source=stream.session.source_path)
        converter.write_stream(stream, out, opts, report)  # type: ignore[misc]
        if not stream.finished:
            for _ in stream:  # a writer that stopped early: the rest is still read and checked
                pass
    except NeedsWholeSession:
        out.seek(start)
        out.truncate()
        return None
    report.lines_read = stream.lines_read
    report.entries_read = stream.entries_read
    report.add_issues(stream.issues)
    return report


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def new_report(converter: Converter, doc: Document) -> Report:
    report = Report(format=converter.name, source=doc.session.source_path)
    report.lines_read = doc.lines_read
    report.entries_read = len(doc.entries)
    report.add_issues(doc.issues)
    return report
