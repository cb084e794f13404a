"""One error hierarchy. Every message names the file (and the line where there is one)."""

from __future__ import annotations

SOME_FAILED = 1
"""Exit code of a directory run in which some sessions failed (the rest were written)."""

INTERNAL_ERROR = 70
"""Exit code of an error piconv did not expect (a bug in piconv or a plugin): ``EX_SOFTWARE``
of ``sysexits.h``. Every error raised on purpose is a :class:`PiconvError` with its own code."""


class PiconvError(Exception):
    """Base of every error piconv raises on purpose. ``exit_code`` is what the CLI exits with
    (each subclass has its own; the base class raised as such counts as internal)."""

    exit_code = INTERNAL_ERROR

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = path or ""
        if path and line:
            where = f"{path}:{line}"
        super().__init__(f"{where}: {message}" if where else message)


class InputError(PiconvError):
    """The input cannot be read as a session at all (missing, a directory, empty, not pi)."""

    exit_code = 3


class PluginError(PiconvError):
    """A plugin or format problem: unknown format, duplicate name, bad registration."""

    exit_code = 4


class ValidationFailed(PiconvError):
    """An output did not pass its format's schema or checker."""

    exit_code = 5


class UsageError(PiconvError):
    exit_code = 2


class OutputError(PiconvError):
    """The output cannot be written where it was asked for (no such directory, a
    directory in the way, the input itself, no permission, a full disk)."""

    exit_code = 6


class ShareError(PiconvError):
    """``piconv share`` wrote its file but could not upload it (no GitHub CLI, not logged
    in, the upload failed, or no confirmation): the message says where the file is."""

    exit_code = 7
