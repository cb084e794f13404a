"""The GitHub CLI, for ``piconv share``: found on ``PATH``, asked whether it is logged
in, asked to make a secret gist. Nothing else of GitHub is spoken to: ``gh`` holds the
credentials and does the upload, and piconv reads its answer."""

from __future__ import annotations

import re
import shutil
import subprocess

from ..errors import ShareError

INSTALL_HINT = "install the GitHub CLI (https://cli.github.com) and run `gh auth login`"
_URL = re.compile(r"https://\S+")


def find_gh() -> str | None:
    """The ``gh`` program on ``PATH``, or ``None``."""
    return shutil.which("gh")


def logged_in(gh: str) -> bool:
    """Whether ``gh`` has an account to upload with (``gh auth status`` says so)."""
    try:
        done = subprocess.run(
            [gh, "auth", "status"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def create_command(gh: str, path: str, description: str) -> list[str]:
    """The command that uploads ``path`` as a secret gist (``gh gist create`` makes a
    secret gist unless told ``--public``)."""
    return [gh, "gist", "create", "--desc", description, path]


def create(gh: str, path: str, description: str) -> str:
    """Upload ``path`` as a secret gist; its URL. :class:`ShareError` when ``gh`` fails
    or answers without one."""
    try:
        done = subprocess.run(
            create_command(gh, path, description),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=600,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ShareError(f"gh gist create did not run: {exc}; the file is at {path}") from None
    if done.returncode != 0:
        said = " ".join(done.stderr.split())[-300:] or f"exit status {done.returncode}"
        raise ShareError(f"gh gist create failed ({said}); nothing was uploaded; the file is at {path}")
    urls = _URL.findall(done.stdout)
    if not urls:
        raise ShareError(
            f"gh gist create printed no URL; look for the gist with `gh gist list`; the file is at {path}"
        )
    return urls[-1]
