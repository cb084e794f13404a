"""``piconv share SESSION``: make one self-contained file of a session, say what was
redacted and left out, and upload it as a secret gist when asked.

1. The session goes through ``--detail`` and redaction (on by default: ``--no-redact``
   turns it off and is warned about) and is written as HTML (or ``--to markdown``) to
   ``-o FILE`` or to a new folder in the temporary directory: never over a file there.
2. What redaction replaced (by rule, never a secret) and what the detail level left
   out are printed before anything leaves the machine.
3. ``--dry-run`` stops there and prints the upload it would run. Otherwise the GitHub
   CLI uploads the file as a secret gist, after a yes at the prompt (or ``--yes``), and
   the gist's URL is printed on standard output. Without ``gh``, or logged out, a
   message says how to get it going and where the file is (exit 7).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from ..cliparse import UsageParser, one_shot
from ..errors import ShareError
from ..terminal import shown

FORMATS = {"html": "html", "markdown": "markdown", "md": "markdown"}


def _parser() -> UsageParser:
    p = UsageParser(
        prog="piconv share",
        description="Share a session: one self-contained HTML page (or Markdown), redacted by default, "
        "uploaded as a secret GitHub gist with the GitHub CLI (gh). See docs/sharing.md.",
    )
    p.add_argument("input", metavar="SESSION", help="the session file ('-' for stdin)")
    p.add_argument(
        "--to", "-t", default="html", choices=sorted(FORMATS), help="html (default) or markdown (alias md)"
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to write the file (default: a new folder in the temporary directory)",
    )
    p.add_argument("--from", "-f", dest="from_", metavar="FORMAT", help="input format (default: detected)")
    p.add_argument("--leaf", metavar="ID", help="the branch ending at this entry is the one open")
    p.add_argument("--desc", metavar="TEXT", help="the gist's description (default: the session's title)")
    p.add_argument("--dry-run", action="store_true", help="write the file and say what would be uploaded")
    p.add_argument("--yes", "-y", action="store_true", help="upload without asking")
    p.add_argument("--recover-glued", action="store_true", help="recover glued JSON objects")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    from ..detail.cli import add_arguments as add_detail
    from ..redaction.cli import add_arguments as add_redaction

    add_detail(p)
    add_redaction(p)
    return p


def _say(line: str) -> None:
    print(shown(line), file=sys.stderr)


def main(args: Sequence[str]) -> int:
    ns = _parser().parse_args(args)
    one_shot()
    if ns.input != "-" and not os.path.exists(ns.input):
        from ..catalog.cli import resolve_input

        ns.input = resolve_input(ns.input)  # the start of a session's id or file name
    fmt = FORMATS[ns.to]
    if ns.redact is None:
        ns.redact = True  # sharing redacts unless told not to
    elif ns.redact is False:
        _say(
            "piconv: warning: sharing without redaction: the secrets, home paths and user names "
            "in the session go into the shared file"
        )
    from ..api import apply_filters, convert, load
    from ..cliparse import filter_steps
    from ..facts.titles import session_title
    from ..report import Report

    steps = filter_steps(ns)
    doc = load(ns.input, recover_glued=ns.recover_glued, reader=ns.from_)
    filtered = Report(format=fmt)
    if steps:
        doc = apply_filters(doc, steps, filtered)
    path = ns.output or _new_place(ns.input, ".html" if fmt == "html" else ".md")
    options: dict[str, Any] = {"leaf": ns.leaf}
    if fmt == "markdown":
        # a gist is one file, and GitHub shows no image embedded in Markdown
        options["images"] = "omit"
    convert(doc, fmt, path, options)
    title = ns.desc or session_title(doc) or "pi session"  # from the redacted document
    size = os.path.getsize(path)
    _say(f"piconv: share: wrote {path} ({_size(size)}, {fmt})")
    for line in _account(filtered, redacted=bool(ns.redact)):
        _say(f"piconv: share: {line}")

    from .gist import INSTALL_HINT, create, create_command, find_gh, logged_in

    gh = find_gh()
    if ns.dry_run:
        command = " ".join(_quoted(a) for a in create_command(gh or "gh", path, title))
        _say(f"piconv: share: dry run, nothing uploaded; would run: {command} (a secret gist)")
        return 0
    if gh is None:
        raise ShareError(
            f"the GitHub CLI (gh) is not installed, so nothing was uploaded: {INSTALL_HINT}; the file is at {path}"
        )
    if not logged_in(gh):
        raise ShareError(
            f"gh is not logged in, so nothing was uploaded: run `gh auth login`; the file is at {path}"
        )
    if not ns.yes and not _confirmed(path):
        _say(f"piconv: share: not uploaded; the file is at {path}")
        return 0
    url = create(gh, path, title)
    print(url)
    _say("piconv: share: uploaded as a secret gist: anyone with the link can read it")
    return 0


def _new_place(source: str, extension: str) -> str:
    """A path in a new folder of the temporary directory, named after the session file."""
    name = os.path.basename(source) if source != "-" else "session"
    for suffix in (".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    folder = tempfile.mkdtemp(prefix="piconv-share-")
    return os.path.join(folder, name + extension)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB" if n >= 1e3 else f"{n} bytes"


def _account(report: Any, redacted: bool) -> list[str]:
    """What was redacted (by rule) and left out (by the detail level), in a few lines."""
    lines = []
    redaction: Mapping[str, Any] | None = report.notes.get("redaction")
    if redaction is not None:
        rules = redaction.get("rules") or {}
        dropped = redaction.get("dropped") or {}
        parts = [f"{name} x{item['count']}" for name, item in rules.items()]
        parts += [f"{name} dropped x{item['count']}" for name, item in dropped.items()]
        if parts:
            lines.append(
                f"redacted {redaction.get('replaced', 0):,} ({', '.join(parts)}); check the file before sharing"
            )
        else:
            lines.append("redaction found nothing to replace; check the file before sharing")
    elif not redacted:
        lines.append("not redacted")
    left = [item for code, item in sorted(report.losses.items()) if code.startswith("detail:")]
    if left:
        lines.append("left out: " + ", ".join(f"{i.code.split(':', 1)[1]} x{i.count}" for i in left))
    return lines


def _quoted(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def _confirmed(path: str) -> bool:
    """A yes at the prompt; without a terminal to ask on, :class:`ShareError`."""
    if not sys.stdin.isatty():
        raise ShareError(
            f"not uploaded: no terminal to confirm on (add --yes to upload); the file is at {path}"
        )
    sys.stderr.write(f"Upload {shown(path)} as a secret GitHub gist? [y/N] ")
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, KeyboardInterrupt):
        return False
    return answer.strip().lower() in ("y", "yes")
