"""Writing an output safely: never half a file, never over what piconv did not make.

- A regular file (or a new name) is written as a temporary file beside it, flushed to
  disk and renamed into place, so a reader never sees half an output and a failed or
  refused conversion leaves the old file as it was. An existing file keeps its mode; a new
  one gets the usual mode under the umask.
- A symlink is followed: its final target is written (atomically, as above) and the link
  stays a link.
- A device, a FIFO or a socket (``/dev/null``, ``/dev/stdout``, a named pipe) is written
  through, never replaced.
- A missing parent directory, a directory in the way or the input itself is refused with
  :class:`OutputError` naming the path asked for; so is any failure to write.

Until the caller's block ends without an exception, nothing reaches the target: the
output is validated in the temporary file first.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import IO, BinaryIO

from .errors import OutputError

BUFFER_BYTES = 1 << 20


def _refuse(path: str, why: str) -> OutputError:
    return OutputError(why, path=path)


TEMP_NAME = re.compile(r"^\.piconv-[0-9a-f]{12}\.tmp$")
"""Every temporary file piconv makes, single or bulk: short (a 255-byte final name still
fits its directory), and of one pattern, so a killed run's leftovers are recognised and
nothing else ever is."""


def temporary(directory: str | None) -> tuple[BinaryIO, str]:
    """A new file of the :data:`TEMP_NAME` pattern in ``directory`` (the system's
    temporary directory for None), opened for writing, never through a symlink."""
    if directory is None:
        import tempfile

        directory = tempfile.gettempdir()
    for _ in range(100):
        name = os.path.join(directory, f".piconv-{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
        except FileExistsError:
            continue
        return os.fdopen(fd, "w+b", buffering=BUFFER_BYTES), name
    raise FileExistsError(directory)


def _describe(exc: OSError) -> str:
    return f"cannot write: {exc.strerror or exc}"


@contextlib.contextmanager
def output_to(target: str | IO[bytes], *, inputs: Iterable[str] = ()) -> Iterator[BinaryIO]:
    """A binary file to write the output into; when the block ends without an exception
    its bytes become ``target`` (a path, or a binary stream such as ``sys.stdout.buffer``).
    ``inputs`` are paths the output must never replace."""
    if isinstance(target, io.BytesIO):
        # Memory already (a directory run's worker renders each output so): a second
        # buffer, not a round trip through a temporary file.
        buffer = io.BytesIO()
        yield buffer
        target.write(buffer.getbuffer())
        return
    if not isinstance(target, str):
        tmp, name = temporary(None)
        try:
            yield tmp
            tmp.flush()
            tmp.seek(0)
            _copy(tmp, target)
        finally:
            discard(tmp, name)
        return
    through, final, mode = _plan(target, inputs)
    try:
        tmp, name = temporary(None if through else os.path.dirname(final))
    except OSError as exc:
        raise _refuse(target, _describe(exc)) from None
    try:
        yield tmp
        try:
            tmp.flush()
            if through:
                tmp.seek(0)
                with open(target, "r+b" if _seekable(target) else "wb", buffering=0) as sink:
                    _copy(tmp, sink)
            else:
                commit(tmp, name, final, mode)
        except OSError as exc:
            raise _refuse(target, _describe(exc)) from None
    finally:
        discard(tmp, name)


def commit(tmp: BinaryIO, name: str, final: str, mode: int | None) -> None:
    """Make the temporary file ``name`` (open as ``tmp``) the file ``final``: its mode
    set (when not None), its bytes on disk, then the rename, so a reader of ``final``
    sees the old file or the whole new one."""
    tmp.flush()
    if mode is not None:
        os.fchmod(tmp.fileno(), mode)
    os.fsync(tmp.fileno())  # the bytes are on disk before the name points at them
    tmp.close()
    os.replace(name, final)


def discard(tmp: BinaryIO, name: str) -> None:
    """Close and delete a temporary file that will not be committed. Closing flushes
    what is buffered, which fails again on a full disk: that must not keep it on disk."""
    with contextlib.suppress(OSError):
        tmp.close()
    with contextlib.suppress(OSError):
        os.unlink(name)


def _copy(source: BinaryIO, sink: IO[bytes]) -> None:
    while chunk := source.read(BUFFER_BYTES):
        sink.write(chunk)


def _seekable(path: str) -> bool:
    """A block device is overwritten in place; anything else written through is streamed."""
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def _plan(target: str, inputs: Iterable[str]) -> tuple[bool, str, int | None]:
    """(written through, the file to write, the mode to keep or None)."""
    try:
        info = os.stat(target)  # follows links: what a write would reach
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise _refuse(target, f"cannot write: {exc.strerror or exc}") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise _refuse(target, "is a directory")
    if info is not None and not stat.S_ISREG(info.st_mode):
        return True, target, None
    final = os.path.realpath(target)
    parent = os.path.dirname(final)
    if not os.path.isdir(parent):
        raise _refuse(target, f"no such directory: {os.path.dirname(target) or '.'}")
    if info is not None:
        for source in inputs:
            with contextlib.suppress(OSError):
                if os.path.samefile(source, final):
                    raise _refuse(target, "is the input: piconv never writes over its input")
    return False, final, None if info is None else stat.S_IMODE(info.st_mode)


def write_file(target: str, data: bytes, *, inputs: Iterable[str] = ()) -> None:
    """``data`` as the file ``target``, by the rules of :func:`output_to` (a report file,
    say: never over an input, never half written)."""
    with output_to(target, inputs=inputs) as sink:
        sink.write(data)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both resolved by the caller)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def plain_file(path: str) -> bool:
    """A regular file at ``path`` itself: a link there (to a file or not), a pipe or a
    directory is not one."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


_kept_out: ContextVar[str | None] = ContextVar("piconv_kept_out", default=None)


@contextlib.contextmanager
def folders_kept_out_of(root: str | None) -> Iterator[None]:
    """While it lasts, :func:`write_into_folder` refuses a folder inside ``root`` (a
    directory run's input tree, which its outputs' folders must stay out of too)."""
    token = _kept_out.set(os.path.realpath(root) if root else None)
    try:
        yield
    finally:
        _kept_out.reset(token)


_inputs_kept: ContextVar[frozenset[tuple[int, int]]] = ContextVar("piconv_inputs_kept", default=frozenset())


@contextlib.contextmanager
def inputs_kept(paths: Iterable[str | None]) -> Iterator[None]:
    """While it lasts, :func:`write_into_folder` never replaces one of these files (the
    input of the conversion that writes the folder), whatever a format's ``replaces`` says."""
    found = set()
    for path in paths:
        with contextlib.suppress(OSError, TypeError, ValueError):
            info = os.stat(path)  # type: ignore[arg-type]
            found.add((info.st_dev, info.st_ino))
    token = _inputs_kept.set(frozenset(found))
    try:
        yield
    finally:
        _inputs_kept.reset(token)


def write_into_folder(
    folder: str, name: str, data: bytes, *, replaces: Callable[[bytes], bool] | None = None
) -> str:
    """``data`` as the file ``name`` in ``folder`` (made if missing; its parent must
    exist), for the files a format writes beside its output (Markdown's images). Nothing
    is followed: a symlink where the folder or the file should be is refused with
    :class:`OutputError`, so nothing lands outside the folder. The file is written as a
    temporary file of the :data:`TEMP_NAME` pattern (which the next directory run
    cleans up if this one is killed) and renamed into place. The names are content
    hashes: a regular file already there holding ``data`` is kept, one holding anything
    else is someone else's and refused, never replaced, unless ``replaces(its bytes)``
    says it is one this format wrote before (an earlier version of a document it names
    by other means than its content). Returns the file's path."""
    path = os.path.join(folder, name)
    if os.sep in name or name in ("", ".", ".."):
        raise _refuse(path, "not a plain file name")
    root = _kept_out.get()
    if root is not None and inside(os.path.realpath(folder), root):
        raise _refuse(folder, "would be written inside the input directory")
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder)
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
    except OSError as exc:
        if os.path.islink(folder):
            raise _refuse(folder, "is a symlink: piconv writes no file through it") from None
        raise _refuse(folder, _describe(exc)) from None
    try:
        try:
            info = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            info = None
        if info is not None:
            if not stat.S_ISREG(info.st_mode):
                raise _refuse(path, "is not a regular file: piconv does not replace it")
            if (info.st_dev, info.st_ino) in _inputs_kept.get():
                raise _refuse(path, "is the input: piconv never writes over its input")
            same_size = info.st_size == len(data)
            held = _read_at(fd, name, info.st_size) if same_size or replaces is not None else None
            if held == data:
                return path  # written before
            if replaces is None or held is None or not replaces(held):
                raise _refuse(path, "is already there with other content: piconv does not replace it")
        _write_at(fd, name, data, path)
    except OSError as exc:
        raise _refuse(path, _describe(exc)) from None
    finally:
        os.close(fd)
    return path


def _read_at(fd: int, name: str, size: int) -> bytes:
    """At most ``size`` bytes of the regular file ``name`` in the directory open as ``fd``."""
    handle = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=fd)
    with os.fdopen(handle, "rb") as fh:
        return fh.read(size + 1)


def _write_at(fd: int, name: str, data: bytes, path: str) -> None:
    """A temporary file in the directory open as ``fd``, then the rename to ``name``."""
    for _ in range(100):
        tmp = f".piconv-{os.urandom(6).hex()}.tmp"
        try:
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=fd)
            break
        except FileExistsError:
            continue
    else:
        raise _refuse(path, "no temporary name is free")
    try:
        with os.fdopen(out, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=fd)
        raise
