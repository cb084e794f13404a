"""Input formats: what a reader declares (:class:`Reader`), the table of registered
readers, and picking the reader for an input from its first bytes.

Readers come from plugins through the ``register_readers`` hook, as output formats come
through ``register_converters``; the built-in ``pi`` and ``asf`` readers register through
it too. A reader is a declaration: nothing of its implementation is imported until it
detects or reads, so registering every reader costs a conversion nothing measurable.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from .errors import InputError
from .records import Frozen, frozen

if TYPE_CHECKING:
    from .facts.scan import SessionScan
    from .ir import Context, Document

HEAD_SIZE = 64 * 1024
"""How many bytes of the input a reader's ``detect`` is shown (fewer when the input is
shorter): enough for the first lines of any session file."""

DetectFunction = Callable[[bytes], float]
"""``detect(head) -> confidence``: 0 means "not mine", 1 "certainly mine"; ``head`` is
the input's first :data:`HEAD_SIZE` bytes, possibly cut inside a line."""

ReadFunction = Callable[[IO[bytes], Mapping[str, Any]], "Document"]
"""``read(stream, options) -> Document``: the whole input into the IR. Problems with
lines become ``Document.issues`` (``Issue(line, code, message)``) and never raise;
:class:`piconv.InputError` (without a path: the caller adds it) when the input is not
this format at all. ``options``: ``source_path`` (``str`` or ``None``),
``recover_glued`` (``bool``)."""

ScanFunction = Callable[[bytes, Mapping[str, Any]], "SessionScan | None"]
"""``scan(data, options) -> SessionScan | None``: what ``piconv list`` and ``piconv stats``
need of a session (:class:`piconv.facts.SessionScan`), taken from its bytes faster than a
whole document is read; None when the input is not a shape it covers. It must give what
:func:`piconv.facts.scan_document` gives of the document ``read`` makes. ``options``:
``source_path``."""

ContextFunction = Callable[["Document", "str | None"], "Context"]
"""``context(document, leaf_id) -> Context``: what the model saw at a leaf, by the rule
of the harness that wrote the input."""


@frozen
class Reader(Frozen):
    """An input format.

    - ``name``: what ``--from`` takes; ``aliases`` are accepted too.
    - ``summary``: one line for ``--list-formats``.
    - ``detect``: how the reader recognises its input (see :data:`DetectFunction`).
    - ``read``: the reading (see :data:`ReadFunction`).
    - ``extensions``: file extensions this format usually has, with the dot.
    - ``context``: the model-visible context rule of the format's harness (see
      :data:`ContextFunction`); given to every document ``read`` returns without one.
    - ``mapping_doc``: the document saying what maps where into the IR and what is lost.
    - ``scan``: optional; a faster way to what a session list and a usage report need
      (see :data:`ScanFunction`); without it they read the whole document.
    - ``plugin`` / ``distribution`` / ``version``: filled in by the registry.
    """

    name: str
    summary: str
    detect: DetectFunction
    read: ReadFunction
    extensions: tuple[str, ...] = ()
    context: ContextFunction | None = None
    mapping_doc: str = ""
    aliases: tuple[str, ...] = ()
    scan: ScanFunction | None = None
    plugin: str = ""
    distribution: str = ""
    version: str = ""


class Prefixed(io.RawIOBase):
    """A stream that cannot be rewound (a pipe, stdin) read again from its start: the
    bytes already taken for detection, then the rest, without holding the whole input."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        super().__init__()
        self._head = memoryview(head)
        self._rest = rest
        self.name = getattr(rest, "name", "<stream>")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def rewound(head: bytes, rest: IO[bytes]) -> BinaryIO:
    """``rest`` with ``head`` (what was read of it) put back in front."""
    return io.BufferedReader(Prefixed(head, rest), buffer_size=HEAD_SIZE)


def choose(readers: list[Reader], head: bytes, name: str, fail: Callable[[str], None]) -> Reader:
    """The reader whose ``detect`` is most confident about ``head``. No reader above
    zero, or two sharing the top, is an :class:`InputError` naming the file and the
    readers tried. A ``detect`` that raises counts as zero and is reported."""
    scores: list[tuple[float, Reader]] = []
    for reader in readers:
        try:
            score = float(reader.detect(head))
        except (Exception, SystemExit) as exc:  # a plugin's bug (an exit too) must not stop another reading
            fail(
                f"reader {reader.name!r} ({reader.distribution}): detect failed: {type(exc).__name__}: {exc}"
            )
            score = 0.0
        if score == score and score > 0:  # NaN never wins
            scores.append((score, reader))
    tried = ", ".join(r.name for r in readers)
    if not scores:
        what = "empty file" if not head.strip() else "no reader recognises this input"
        raise InputError(f"{what} (readers tried: {tried}); name one with --from", path=name)
    scores.sort(key=lambda s: -s[0])
    best = scores[0][0]
    top = [r.name for s, r in scores if s == best]
    if len(top) > 1:
        raise InputError(
            f"readers {' and '.join(top)} claim this input equally (readers tried: {tried}); choose one with --from",
            path=name,
        )
    return scores[0][1]
