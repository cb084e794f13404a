"""One error hierarchy. Every message names the file (and the line where there is one)."""

from __future__ import annotations


class PiconvError(Exception):
    """Base of every error piconv raises on purpose. ``exit_code`` is what the CLI exits with."""

    exit_code = 1

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
