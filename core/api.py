"""The library's entry points: load a session, convert it, list the formats."""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from .errors import InputError, PluginError, UsageError, ValidationFailed
from .ir import Document
from .leaf import resolve_leaf
from .output import inputs_kept, output_to
from .outputformat import Converter
from .registry import get_registry
from .report import Report

if TYPE_CHECKING:
    from .compare.model import SessionDiff
    from .filters import Filter, FilterStep
    from .inputformat import ContextFunction, Reader
    from .plugins import PluginInfo
    from .redaction.api import Redaction, RedactOptions

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


def load(
    source: Source, *, recover_glued: bool = False, reader: str | None = None, keep_source: str | None = None
) -> Document:
    """Read a session (a path, ``"-"`` for stdin, bytes or a binary stream) into the IR.

    ``reader`` names the input format (``"pi"``, ``"asf"``, a plugin's); without it the
    format is detected from the first bytes (:func:`detect`). Never raises on bad lines:
    they become :attr:`Document.issues`. Raises :class:`InputError` when the input cannot
    be read, no reader recognises it, or it is not the format named.

    ``keep_source`` (``"bytes"`` or ``"layout"``) asks the reader to keep how the lines
    were spelled (:attr:`Document.source_lines`), for a writer of the same format to give
    unchanged lines back byte for byte (a format's ``Converter.source_lines`` says which
    it needs; :func:`convert` asks for it when it reads the input itself).
    """
    return load_detected(source, recover_glued, reader, keep_source)[0]


def load_detected(
    source: Source, recover_glued: bool = False, reader: str | None = None, keep_source: str | None = None
) -> tuple[Document, Reader]:
    """As :func:`load`, with the reader that read the input."""
    stream, name = _open(source)
    try:
        chosen, stream = _choose(stream, name, reader)
        return _read(chosen, stream, name, recover_glued, keep_source), chosen
    finally:
        if stream is not sys.stdin.buffer and hasattr(stream, "close") and not hasattr(source, "read"):
            stream.close()  # type: ignore[union-attr]


@contextmanager
def plugin_code(what: str, path: str | None) -> Iterator[None]:
    """Runs a reader's, filter's or format's code: an attempt to end the process from it
    (``SystemExit``) is a :class:`PluginError` naming ``what``, never a silent exit.
    ``KeyboardInterrupt`` passes (the user's), as do the escapes piconv raises on purpose
    (a directory run's time limit)."""
    try:
        yield
    except SystemExit as exc:
        raise PluginError(f"{what} tried to end piconv ({type(exc).__name__}: {exc})", path=path) from None


def _read(
    chosen: Reader, stream: BinaryIO | bytes, name: str, recover_glued: bool, keep_source: str | None = None
) -> Document:
    source_path = None if name.startswith("<") else name
    if isinstance(stream, (bytes, bytearray)):
        stream = io.BytesIO(stream)
    try:
        options = {
            "source_path": source_path,
            "recover_glued": recover_glued,
            "context_rules": _context_rules(),
        }
        if keep_source is not None:
            options["keep_source"] = keep_source
        with plugin_code(f"reader {chosen.name!r}", name):
            doc = chosen.read(stream, options)  # type: ignore[arg-type]
    except InputError as exc:
        if exc.path is None:
            raise InputError(str(exc), path=name) from None
        raise
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=name) from None
    if doc.context_builder is None and chosen.context is not None:
        object.__setattr__(doc, "context_builder", chosen.context)  # the reader's harness rule
    return doc


def _context_rules() -> dict[str, ContextFunction]:
    """The context rule of every reader by its name, handed to the reader at work: a file
    of one format may record a session of another harness (piconv's ASF of a pi session),
    whose own rule then says what the model saw."""
    return {r.name: r.context for r in get_registry().readers(third_party=False) if r.context is not None}


def _head(stream: BinaryIO | bytes) -> tuple[bytes, BinaryIO | bytes]:
    """The first bytes of ``stream`` and the stream to read from the start: a file is
    read and rewound; what cannot be rewound (a pipe, stdin) gets the bytes read put back
    in front of the rest."""
    from .inputformat import HEAD_SIZE, rewound

    if isinstance(stream, (bytes, bytearray)):
        return bytes(stream[:HEAD_SIZE]), stream
    try:
        if stream.seekable():
            start = stream.tell()
            head = stream.read(HEAD_SIZE)
            stream.seek(start)
            return head, stream
    except (OSError, ValueError):
        pass
    head = b""
    while len(head) < HEAD_SIZE:  # a pipe gives what it has: read until the head is whole or the input ends
        more = stream.read(HEAD_SIZE - len(head))
        if not more:
            return head, head
        head += more
    return head, rewound(head, stream)


def _choose(stream: BinaryIO | bytes, name: str, reader: str | None) -> tuple[Reader, BinaryIO | bytes]:
    registry = get_registry()
    if reader is not None:
        return registry.reader(reader), stream
    try:
        head, stream = _head(stream)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=name) from None
    from .inputformat import choose

    # The built-in readers first: the installed plugins are loaded (and their readers
    # asked) only for an input no built-in reader recognises.
    builtin = registry.readers(third_party=False)
    try:
        return choose(builtin, head, name, registry.fail), stream
    except InputError:
        everything = registry.readers()
        if len(everything) == len(builtin):
            raise
        return choose(everything, head, name, registry.fail), stream


def detect(source: Source) -> Reader:
    """The reader piconv would pick for ``source`` (a path, bytes or a binary stream,
    read from its start and rewound when it can be): the one whose ``detect`` is most
    confident. :class:`InputError` when none recognises it, or two claim it equally."""
    stream, name = _open(source)
    try:
        return _choose(stream, name, None)[0]
    finally:
        if hasattr(stream, "close") and not hasattr(source, "read") and stream is not sys.stdin.buffer:
            stream.close()  # type: ignore[union-attr]


def input_formats() -> list[Reader]:
    """Every registered input format, built-in and from plugins."""
    return get_registry().readers()


def get_input_format(name: str) -> Reader:
    """The input format called ``name`` or one of its aliases (case-insensitive); raises
    :class:`PluginError` naming the known ones."""
    return get_registry().reader(name)


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


def convert(
    document: Document | Source,
    to: str,
    out: IO[bytes] | str | os.PathLike[str],
    options: Mapping[str, Any] | None = None,
    *,
    validate: bool = True,
    recover_glued: bool = False,
    reader: str | None = None,
    filters: Sequence[FilterStep] = (),
) -> Report:
    """Write ``document`` (or the session at a path, or its bytes) as format ``to`` into ``out``.

    A path or bytes is read by the reader called ``reader``, or the one :func:`detect`
    picks.

    With ``validate`` the output is checked with the format's schema or checker before it
    is released: a failure raises :class:`ValidationFailed` and nothing reaches ``out``.
    ``out`` is a binary stream or a path, written as :mod:`piconv.output` says: atomically
    for a regular file (its mode kept), through for a device or FIFO, a symlink's target
    rather than the link, never the input; :class:`OutputError` otherwise.

    A format that writes a session as several files (``Converter.write_directory``: ATIF
    writes one trajectory per leaf) writes them into ``out`` when it names a directory
    (one that exists, or a path ending in ``/``, then made).

    ``options["leaf"]`` may name the leaf by entry id, a unique id prefix or a label
    (:func:`piconv.leaf.resolve_leaf`); the format then gets the whole id. A format that
    always writes the whole tree (``takes_leaf`` false) refuses a leaf with
    :class:`UsageError`.

    ``filters`` are ``(name, options)`` steps applied to the document, in order, before
    the converter sees it (``[("redact", {...})]``, see :func:`apply_filters`); what they
    did is in the returned report.
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
            document = load(
                document, recover_glued=recover_glued, reader=reader, keep_source=converter.source_lines
            )  # a leaf is named in the whole tree
        opts["leaf"] = resolve_leaf(document, str(opts["leaf"]))
    target = os.fspath(out) if isinstance(out, (str, os.PathLike)) else out
    if isinstance(target, str) and converter.write_directory is not None and names_directory(target):
        return _convert_into_directory(
            converter, document, target, opts, validate, recover_glued, reader, filters
        )
    opts.setdefault("output_path", _beside_path(target))
    opts["validate"] = validate
    read_from = os.fspath(document) if isinstance(document, (str, os.PathLike)) else None
    doc = (
        document
        if isinstance(document, Document)
        else load(document, recover_glued=recover_glued, reader=reader, keep_source=converter.source_lines)
    )
    inputs = [p for p in (read_from, doc.input_path, doc.session.source_path) if p]
    with output_to(target, inputs=inputs) as sink:
        filtered = Report(format=converter.name)
        if filters:
            doc = apply_filters(doc, filters, filtered)
        report = new_report(converter, doc)
        report.losses.update(filtered.losses)
        report.notes.update(filtered.notes)
        with plugin_code(f"format {converter.name!r}", report.source):
            converter.write(doc, sink, opts, report)
        if validate and converter.check is not None and not converter.checks_while_writing:
            sink.flush()
            sink.seek(0)
            with plugin_code(f"format {converter.name!r}", report.source):
                errors = converter.check(sink.read())
            if errors:
                shown = "; ".join(errors[:5])
                raise ValidationFailed(
                    f"{converter.name} output failed validation ({len(errors)} problems): {shown}",
                    path=report.source,
                )
    return report


def names_directory(path: str) -> bool:
    """Whether an output path names a directory: one that exists, or a path ending in a
    separator (``out/``), made when missing."""
    return path.endswith(("/", os.sep)) or os.path.isdir(path)


def _convert_into_directory(
    converter: Converter,
    document: Document | Source,
    directory: str,
    opts: dict[str, Any],
    validate: bool,
    recover_glued: bool,
    reader: str | None,
    filters: Sequence[FilterStep],
) -> Report:
    """:func:`convert` for a format that writes a session as several files into
    ``directory`` (``Converter.write_directory``): the directory is made when missing (its
    parent must exist); each file is written by :func:`piconv.write_into_folder`'s rules."""
    from .errors import OutputError

    read_from = os.fspath(document) if isinstance(document, (str, os.PathLike)) else None
    doc = (
        document
        if isinstance(document, Document)
        else load(document, recover_glued=recover_glued, reader=reader)
    )
    folder = directory.rstrip("/" + os.sep) or directory
    for source in (read_from, doc.input_path, doc.session.source_path):
        if source and os.path.exists(folder) and os.path.samefile(source, folder):
            raise OutputError("is the input: piconv never writes over its input", path=directory)
    try:
        os.mkdir(folder)
    except FileExistsError:
        if not os.path.isdir(folder):
            raise OutputError("is not a directory", path=directory) from None
    except OSError as exc:
        raise OutputError(f"cannot make the directory: {exc.strerror or exc}", path=directory) from None
    filtered = Report(format=converter.name)
    if filters:
        doc = apply_filters(doc, filters, filtered)
    report = new_report(converter, doc)
    report.losses.update(filtered.losses)
    report.notes.update(filtered.notes)
    opts["output_path"] = None
    opts["validate"] = validate
    assert converter.write_directory is not None
    with inputs_kept((read_from, doc.input_path, doc.session.source_path)):
        converter.write_directory(doc, folder, opts, report)
    return report


def convert_to_bytes(
    document: Document | Source,
    to: str,
    options: Mapping[str, Any] | None = None,
    *,
    validate: bool = True,
    recover_glued: bool = False,
    reader: str | None = None,
) -> bytes:
    """The output of :func:`convert` as bytes, for a caller that keeps it in memory
    (a web handler, a test). The loss report is not returned: call :func:`convert` with
    an ``io.BytesIO`` to have both. Files beside the output cannot be written, so a
    format that makes them falls back as it does for standard output (Markdown's
    ``--images files`` becomes ``omit``)."""
    import io

    buffer = io.BytesIO()
    convert(document, to, buffer, options, validate=validate, recover_glued=recover_glued, reader=reader)
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
    raise UsageError(
        f"-o {path}: no format writes files named like this; give --to FORMAT (see piconv --list-formats)"
    )


def filters() -> list[Filter]:
    """Every registered filter (IR -> IR), built-in and from plugins, by name."""
    registry = get_registry()
    registry._load_third_party()
    return [registry.filters[k] for k in sorted(registry.filters)]


def apply_filters(document: Document, steps: Sequence[FilterStep], report: Report | None = None) -> Document:
    """``document`` through the filters ``steps`` names (``(name, options)`` pairs), in
    order; what they removed goes into ``report`` when given."""
    registry = get_registry()
    report = report if report is not None else Report(format="")
    read_from = document.input_path or document.session.source_path
    for name, options in steps:
        with plugin_code(f"filter {name!r}", read_from):
            document = registry.get_filter(name).apply(document, options, report)
        if read_from and document.input_path is None and document.session.source_path != read_from:
            # a filter may rewrite the session's path (redaction writes ``~`` for the home
            # directory) without knowing the file it came from: the document keeps it, and
            # with it what keeps an output off its input
            object.__setattr__(document, "input_path", read_from)
    return document


def redact(document: Document, options: RedactOptions | None = None, **kwargs: Any) -> Redaction:
    """``document`` with secrets, home paths and named values replaced; the result has
    ``.document`` and ``.to_json()`` (what was removed, by rule). See docs/redaction.md."""
    from .redaction.api import redact as run

    return run(document, options, **kwargs)


def _beside_path(target: IO[bytes] | str) -> str | None:
    """The output path a format may put files beside (Markdown's images): a regular file's
    real path (a symlink's target, where the output goes), or a path not there yet; None
    for a stream, a device or a FIFO, which have nowhere to put them (``/dev/null`` must
    not grow a ``/dev/null_images`` folder)."""
    if not isinstance(target, str):
        return None
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError:
        return None
    return os.path.realpath(target) if stat.S_ISREG(info.st_mode) else None


def new_report(converter: Converter, doc: Document) -> Report:
    report = Report(format=converter.name, source=doc.session.source_path)
    report.lines_read = doc.lines_read
    report.entries_read = len(doc.entries)
    report.add_issues(doc.issues)
    return report


def diff(
    a: Document | Source,
    b: Document | Source | None = None,
    *,
    leaf: str | None = None,
    against: str | None = None,
    reader: str | None = None,
    recover_glued: bool = False,
) -> SessionDiff:
    """Two conversations compared (docs/diff.md): with ``b`` None, two leaves of session
    ``a``, ``leaf`` (default: its leaf) against ``against``; else session ``a`` against
    session ``b``, at their leaves or at ``leaf`` (in ``a``) and ``against`` (in ``b``).
    A leaf is named by an entry id, a unique id prefix or a label. Each source is a
    document, a path or bytes, read as :func:`load` reads it. The result holds the
    common part, each side's figures (turns, tokens and cost counted as
    :func:`piconv.usage_totals` counts them) and the turns aligned side by side;
    :class:`UsageError` when a leaf names nothing or, with one session, ``against`` is
    missing."""
    from .compare import diff_documents, diff_leaves

    def doc_of(source: Document | Source) -> Document:
        if isinstance(source, Document):
            return source
        return load(source, recover_glued=recover_glued, reader=reader)

    if b is None:
        if against is None:
            raise UsageError("two leaves of one session: name the other one with against= (--against)")
        return diff_leaves(doc_of(a), leaf, against)
    return diff_documents(doc_of(a), doc_of(b), leaf, against)


def render_diff(result: SessionDiff, to: str) -> bytes:
    """``result`` drawn as a page by the format ``to`` (its ``Converter.diff``: ``html``
    and ``markdown`` have one); :class:`UsageError` for a format without one."""
    converter = get_registry().get(to)
    if converter.diff is None:
        able = ", ".join(c.name for c in get_registry().formats() if c.diff is not None) or "none"
        raise UsageError(f"--to {converter.name} draws no diff page (formats that do: {able})")
    return converter.diff.render(result)
