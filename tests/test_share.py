"""``piconv share``: the file it makes (redacted by default), what it says before any
upload, and the upload through the GitHub CLI. A stand-in ``gh`` on ``PATH`` (the only
program on it) records how it was called and answers as ``gh`` does; nothing goes over
the network."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from piconv import cli
from piconv.errors import ShareError
from redact_seed import HOME, SECRETS, forms, seeded_session

URL = "https://gist.github.com/someone/0123456789abcdef"

STAND_IN = f"""#!{sys.executable}
import json, os, sys
args = sys.argv[1:]
with open(os.environ["GH_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if args[:2] == ["auth", "status"]:
    sys.exit(int(os.environ.get("GH_AUTH", "0")))
if args[:2] == ["gist", "create"]:
    if os.environ.get("GH_FAIL"):
        print("HTTP 422: Validation Failed", file=sys.stderr)
        sys.exit(1)
    with open(args[-1], "rb") as f, open(os.environ["GH_LOG"] + ".uploaded", "wb") as out:
        out.write(f.read())
    print("- Creating gist " + os.path.basename(args[-1]), file=sys.stderr)
    print("{URL}")
    sys.exit(0)
sys.exit(2)
"""


@pytest.fixture
def gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in ``gh``, alone on ``PATH``; returns its log (one JSON list of arguments
    per call; the uploaded file's bytes beside it, ``.uploaded``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "gh"
    program.write_text(STAND_IN)
    program.chmod(0o755)
    log = tmp_path / "gh.log"
    log.touch()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("GH_LOG", str(log))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no config file of the user's
    return log


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "2026-01-01_seeded.jsonl"
    path.write_bytes(seeded_session())
    return path


def _calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _leaks(data: bytes) -> list[str]:
    return [
        rule
        for rule, secret in SECRETS.items()
        if rule not in ("value", "pattern") and any(f in data for f in forms(secret))
    ]


def _written(err: str) -> Path:
    line = next(x for x in err.splitlines() if x.startswith("piconv: share: wrote "))
    return Path(line.split(" wrote ", 1)[1].rsplit(" (", 1)[0])


def test_dry_run_writes_a_redacted_page_and_uploads_nothing(
    gh: Path, session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["share", str(session), "--dry-run"]) == 0
    out, err = capsys.readouterr()
    page = _written(err)
    assert page.name == "2026-01-01_seeded.html" and page.parent.name.startswith("piconv-share-")
    data = page.read_bytes()
    assert data.startswith(b"<!DOCTYPE html>") and _leaks(data) == [] and HOME.encode() not in data
    assert "piconv: share: redacted " in err and "check the file before sharing" in err
    assert "dry run, nothing uploaded; would run: " in err and " gist create --desc " in err
    assert "(a secret gist)" in err and "--public" not in err
    assert _calls(gh) == [] and out == ""


def test_with_yes_the_file_goes_up_as_a_secret_gist(
    gh: Path, session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["share", str(session), "--yes", "--detail", "calls"]) == 0
    out, err = capsys.readouterr()
    page = _written(err)
    calls = _calls(gh)
    assert calls[0] == ["auth", "status"]
    assert calls[1][:3] == ["gist", "create", "--desc"] and calls[1][-1] == str(page)
    assert "--public" not in calls[1] and len(calls) == 2
    description = calls[1][3]
    assert description and _leaks(description.encode()) == [] and "alicewonder" not in description
    uploaded = Path(str(gh) + ".uploaded").read_bytes()
    assert uploaded == page.read_bytes() and _leaks(uploaded) == []
    assert out == URL + "\n"
    # what was redacted and left out is said before the upload
    assert err.index("piconv: share: redacted") < err.index("uploaded as a secret gist")
    assert "piconv: share: left out: shell-output x1, tool-output x1\n" in err


def test_markdown_and_a_file_named_with_o(
    gh: Path, session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "shared.md"
    assert cli.main(["share", str(session), "--to", "markdown", "-o", str(target), "--yes"]) == 0
    assert _written(capsys.readouterr().err) == target
    data = target.read_bytes()
    assert data.startswith(b"---\n") and _leaks(data) == []
    assert _calls(gh)[1][-1] == str(target)


def test_without_gh_the_message_says_how_and_where_the_file_is(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert cli.main(["share", str(session)]) == ShareError.exit_code == 7
    err = capsys.readouterr().err
    page = _written(err)
    assert page.is_file()
    last = err.strip().splitlines()[-1]
    assert "the GitHub CLI (gh) is not installed" in last and "https://cli.github.com" in last
    assert "gh auth login" in last and f"the file is at {page}" in last


def test_logged_out_failing_and_unconfirmed_uploads_stop_with_the_file_kept(
    gh: Path, session: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GH_AUTH", "1")
    assert cli.main(["share", str(session), "--yes"]) == 7
    assert "gh is not logged in" in capsys.readouterr().err and _calls(gh) == [["auth", "status"]]
    monkeypatch.delenv("GH_AUTH")
    monkeypatch.setenv("GH_FAIL", "1")
    assert cli.main(["share", str(session), "--yes"]) == 7
    err = capsys.readouterr().err
    assert "gh gist create failed (HTTP 422: Validation Failed); nothing was uploaded" in err
    monkeypatch.delenv("GH_FAIL")
    # no terminal to ask on, and no --yes: nothing goes up
    monkeypatch.setattr(sys, "stdin", _Answer(None))
    assert cli.main(["share", str(session)]) == 7
    assert "add --yes to upload" in capsys.readouterr().err
    assert [c[0] for c in _calls(gh)] == ["auth", "auth", "gist", "auth"]


class _Answer:
    """Standard input as a terminal answering ``text`` (``None``: not a terminal)."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self.buffer = io.BytesIO()

    def isatty(self) -> bool:
        return self.text is not None

    def readline(self) -> str:
        return self.text or ""


def test_the_prompt_asks_before_anything_leaves(
    gh: Path, session: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", _Answer("n\n"))
    assert cli.main(["share", str(session)]) == 0
    out, err = capsys.readouterr()
    assert (
        "Upload " in err and "as a secret GitHub gist? [y/N]" in err and "not uploaded; the file is at" in err
    )
    assert out == "" and [c[:2] for c in _calls(gh)] == [["auth", "status"]]
    monkeypatch.setattr(sys, "stdin", _Answer("y\n"))
    assert cli.main(["share", str(session)]) == 0
    assert capsys.readouterr().out == URL + "\n"
    assert [c[:2] for c in _calls(gh)][-1] == ["gist", "create"]


def test_no_redact_warns_and_keeps_the_secrets(
    gh: Path, session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["share", str(session), "--no-redact", "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("piconv: warning: sharing without redaction")
    assert "piconv: share: not redacted" in err
    assert _leaks(_written(err).read_bytes()) != []
