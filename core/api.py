"""The library's entry points: load a session, convert it, list the formats."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from .collector import collector_paused
from .errors import InputError, UsageError, ValidationFailed
from .ir import Document
from .leaf import resolve_leaf
from .output import output_to
from .registry import Converter, get_registry
from .report import Report

if TYPE_CHECKING:
    from .plugins import PluginInfo

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
    with collector_paused():
        return _load(stream, name, source, recover_glued)


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


def get_format(name: str) -> Converter:
    """The output format called ``name`` or one of its aliases (case-insensitive); raises
    :class:`PluginError` naming the known formats."""
    return get_registry().get(name)


def plugins() -> list[PluginInfo]:
    """Every loaded plugin, built-ins first, with the hooks it implements."""
    return get_registry().plugins


def plugin_failures() -> list[str]:
    """What went wrong with plugins so far (each also issued as a :class:`PluginWarning`)."""
    return list(get_registry().failures)


def context_as_pi(document: Document, leaf: str | None = None) -> dict[str, Any]:
    """The model-visible context at ``leaf`` (default: the document's leaf) as JSON in
    pi's own shape, as ``piconv inspect --context`` prints it."""
    from .context import context_to_pi

    return context_to_pi(document.context(leaf))


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
    ``out`` is a binary stream or a path, written as :mod:`piconv.output` says: atomically
    for a regular file (its mode kept), through for a device or FIFO, a symlink's target
    rather than the link, never the input; :class:`OutputError` otherwise.

    ``options["leaf"]`` may name the leaf by entry id, a unique id prefix or a label
    (:func:`piconv.leaf.resolve_leaf`); the format then gets the whole id. A format that
    always writes the whole tree (``takes_leaf`` false) refuses a leaf with
    :class:`UsageError`.

    Given a path or bytes, a format with a ``write_stream`` converts the session entry by
    entry as it is read, so memory holds one entry rather than the whole document; a file
    that cannot be read that way (see :mod:`piconv.stream`) is converted whole, with the
    same result.
    """
    if out is None or not (isinstance(out, (str, os.PathLike)) or hasattr(out, "write")):
        raise TypeError(
            f"convert(): out must be a path or a binary stream, not {type(out).__name__} "
            "(piconv.convert_to_bytes returns the output as bytes)"
        )
    converter = get_registry().get(to)
    opts = dict(options or {})
    if opts.get("leaf") is not None:
        if not converter.takes_leaf:
            raise UsageError(f"--to {converter.name} writes the whole tree; --leaf does not apply to it")
        if not isinstance(document, Document):
            document = load(document, recover_glued=recover_glued)  # a leaf is named in the whole tree
        opts["leaf"] = resolve_leaf(document, str(opts["leaf"]))
    target = os.fspath(out) if isinstance(out, (str, os.PathLike)) else out
    opts.setdefault("output_path", target if isinstance(target, str) else None)
    opts["validate"] = validate
    doc = document if isinstance(document, Document) else None
    inputs = [] if doc is not None or not isinstance(document, (str, os.PathLike)) else [os.fspath(document)]
    if doc is not None and doc.session.source_path:
        inputs.append(doc.session.source_path)
    streamable = doc is None and converter.write_stream is not None and _rereadable(document)
    with collector_paused(), output_to(target, inputs=inputs) as sink:
        report = _write_streaming(converter, document, sink, opts, recover_glued) if streamable else None  # type: ignore[arg-type]
        if report is None:
            if doc is None:
                doc = load(document, recover_glued=recover_glued)  # type: ignore[arg-type]
            report = new_report(converter, doc)
            converter.write(doc, sink, opts, report)
        if validate and converter.check is not None and not converter.checks_while_writing:
            sink.flush()
            sink.seek(0)
            errors = converter.check(sink.read())
            if errors:
                shown = "; ".join(errors[:5])
                raise ValidationFailed(
                    f"{converter.name} output failed validation ({len(errors)} problems): {shown}",
                    path=report.source,
                )
    return report


def convert_to_bytes(
    document: Document | Source,
    to: str,
    options: Mapping[str, Any] | None = None,
    *,
    validate: bool = True,
    recover_glued: bool = False,
) -> bytes:
    """The output of :func:`convert` as bytes, for a caller that keeps it in memory
    (a web handler, a test). The loss report is not returned: call :func:`convert` with
    an ``io.BytesIO`` to have both. Files beside the output cannot be written, so a
    format that makes them falls back as it does for standard output (Markdown's
    ``--images files`` becomes ``omit``)."""
    import io

    buffer = io.BytesIO()
    convert(document, to, buffer, options, validate=validate, recover_glued=recover_glued)
    return buffer.getvalue()


def format_for_path(path: str) -> Converter:
    """The one format whose extension ends ``path`` (``out.md``: markdown), as pandoc
    infers a format from ``-o``. Raises :class:`UsageError` when no format or several
    claim it, naming them."""
    name = os.path.basename(path).lower()
    claims = [c for c in get_registry().formats() if c.extension and name.endswith(c.extension.lower())]
    if len(claims) > 1:  # the longest extension wins (".session.html" over ".html")
        longest = max(len(c.extension) for c in claims)
        claims = [c for c in claims if len(c.extension) == longest]
    if len(claims) == 1:
        return claims[0]
    if claims:
        names = ", ".join(c.name for c in claims)
        raise UsageError(f"-o {path}: {names} all write {claims[0].extension} files; choose one with --to")
    raise UsageError(f"-o {path}: no format writes files named like this; give --to FORMAT (see piconv --list-formats)")


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


def new_report(converter: Converter, doc: Document) -> Report:
    report = Report(format=converter.name, source=doc.session.source_path)
    report.lines_read = doc.lines_read
    report.entries_read = len(doc.entries)
    report.add_issues(doc.issues)
    return report
