"""Exit codes: one meaning each, the same in ``--help``, the README and the error classes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from piconv import cli, errors

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = str(REPO / "examples" / "basic.jsonl")


def _help_codes() -> dict[int, str]:
    out = subprocess.run(
        [sys.executable, "-m", "piconv", "--help"], capture_output=True, text=True, check=True
    ).stdout
    section = out.split("exit codes:\n", 1)[1]
    return {int(m[1]): m[2] for m in re.finditer(r"^  (\d+) +(.+)$", section, re.M)}


def test_every_exit_code_is_distinct_and_documented_in_help_and_readme() -> None:
    codes = _help_codes()
    classes = {
        "usage": errors.UsageError,
        "unreadable input": errors.InputError,
        "plugin": errors.PluginError,
        "validation": errors.ValidationFailed,
        "cannot be written": errors.OutputError,
        "not uploaded": errors.ShareError,
    }
    for words, cls in classes.items():
        assert words in codes[cls.exit_code], (cls.__name__, codes)
    assert "some sessions failed" in codes[errors.SOME_FAILED]
    assert "internal error" in codes[errors.INTERNAL_ERROR] and "--debug" in codes[errors.INTERNAL_ERROR]
    wanted = {0, errors.SOME_FAILED, errors.INTERNAL_ERROR, *(c.exit_code for c in classes.values())}
    assert set(codes) == wanted and len(wanted) == 9
    readme = (REPO / "README.md").read_text()
    table = readme.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    assert {int(n) for n in re.findall(r"^\| `(\d+)` \|", table, re.M)} == wanted


def test_an_unexpected_error_exits_70_and_points_to_debug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import piconv.inspect

    def broken(doc: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(piconv.inspect, "summarize", broken)
    assert cli.main(["inspect", EXAMPLE]) == errors.INTERNAL_ERROR == 70
    err = capsys.readouterr().err
    assert err == "piconv: internal error: RuntimeError: a bug (run with --debug for the traceback)\n"
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["inspect", EXAMPLE, "--debug"])


def test_a_directory_run_with_a_failed_session_exits_1(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "good.jsonl").write_bytes((REPO / "examples" / "basic.jsonl").read_bytes())
    (src / "notes.jsonl").write_bytes(b"not a session\n")  # passed over, as pi does: no failure
    (src / "bad.jsonl").symlink_to(REPO / "examples" / "basic.jsonl")  # outside the input: refused
    run = subprocess.run(
        [sys.executable, "-m", "piconv", str(src), "--to", "ir", "-o", str(tmp_path / "out"), "-q"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == errors.SOME_FAILED == 1, run.stderr
    assert (tmp_path / "out" / "good.ir.json").is_file()
