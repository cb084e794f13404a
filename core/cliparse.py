"""What the command line's commands share: a parser whose errors are usage errors, the
help layout, a format's own options, and the process a conversion owns."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from .errors import UsageError

COMMANDS = {
    "list": "the sessions of a directory, newest first (piconv list [DIR])",
    "stats": "tokens and cost by day, week, month, project, model or session",
    "search": "full-text search of an archive written with --to sqlite",
    "inspect": "what a session holds, or what the model saw (--context)",
    "validate": "check a file against a format's schema and checks",
    "diff": "two branches of a session, or two sessions, compared side by side",
    "watch": "a directory run kept current while pi writes (piconv watch DIR --to FORMAT -o OUTDIR)",
    "share": "one redacted page of a session, uploaded as a secret gist through gh",
    "help": "this list; piconv help COMMAND shows a command's options",
}
"""The commands besides converting (``piconv SESSION --to FORMAT``), for ``piconv help``."""


class UsageParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see piconv --help)")


def help_formatter(prog: str) -> argparse.HelpFormatter:
    # argparse asks shutil for the width each time it makes a formatter, which it does for
    # every add_argument: terminal_width finds it without importing shutil
    from .terminal import terminal_width

    columns = terminal_width(80)
    return argparse.RawDescriptionHelpFormatter(prog, width=max(columns, 20) - 2)


def add_format_options(parser: argparse.ArgumentParser, converters: Sequence[Any]) -> dict[str, set[str]]:
    """Adds every format's own options; returns format name -> the dests it declared."""
    seen: dict[str, Any] = {}
    dests: dict[str, set[str]] = {}
    for conv in converters:
        group = None
        for opt in conv.options:
            dests.setdefault(conv.name, set()).add(opt.dest)
            if opt.flag in seen:
                continue  # shared by several formats: declared once, passed to each
            if group is None:
                group = parser.add_argument_group(f"{conv.name} options")
            seen[opt.flag] = opt
            kwargs: dict[str, Any] = {"dest": opt.dest, "help": opt.help}
            if not opt.takes_value:
                kwargs["action"] = "store_true"
            else:
                kwargs["metavar"] = opt.metavar or opt.dest.upper()
                if opt.choices:
                    kwargs["choices"] = opt.choices
                if opt.repeatable:
                    kwargs["action"] = "append"
            kwargs["default"] = opt.default if opt.takes_value else False
            group.add_argument(opt.flag, **kwargs)
    return dests


def filter_steps(ns: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """The filters the arguments ask for, in the order they run: the detail level first
    (what it leaves out is never scanned, and the redaction report then counts what the
    output holds), then redaction."""
    from .detail.cli import detail_steps
    from .redaction.cli import redaction_steps

    return detail_steps(ns) + redaction_steps(ns)


_owns_process = False
"""True under :func:`piconv.cli.run`: this process converts and exits, and may be set up for that."""


def one_shot() -> None:
    """For one conversion in a process that ends with it: the cyclic collector off for
    good. The session's objects hold no cycles; each automatic collection would only scan
    them all again and free nothing. The library leaves the collector alone; this is the
    command line's own choice, never made when :func:`piconv.cli.main` is called as a function."""
    if _owns_process:
        import gc

        gc.disable()


def own_process() -> None:
    """This process converts and exits (the console entry point): :func:`one_shot` may
    set it up for that."""
    global _owns_process
    _owns_process = True


def open_in_viewer(path: str | None) -> str | None:
    """Open ``path`` in the user's viewer (``webbrowser``: a browser for HTML, the
    system's viewer otherwise); returns why it was not opened, or None. Never for stdout
    (``path`` None), never where there is no display to open it on."""
    if path is None:
        return "the output went to stdout; nothing to open"
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return f"no display to open {path} on"
    import pathlib
    import webbrowser

    try:
        opened = webbrowser.open(pathlib.Path(path).resolve().as_uri())
    except webbrowser.Error as exc:
        return f"cannot open {path}: {exc}"
    return None if opened else f"no viewer found for {path}"
