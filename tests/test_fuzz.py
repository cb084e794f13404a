"""The fuzz test: hostile sessions (tests/hostile.py) through the reader and every built-in
format, by the public API and by the command line.

What must hold for every input: no exception but the documented ones (``InputError`` for a
file that is no session at all), every line read is kept or reported, every format accepts
its own output (its validation while converting passes, and so does its checker as
``piconv validate`` runs it), and the command line exits only with a documented code and
never shows a traceback.

The ``piconv-fuzz`` profile bounds the time: ``PICONV_FUZZ_EXAMPLES`` examples per test
(default 40; each runs every variant of its format) and a per-example deadline generous
enough for a busy machine. Set ``PICONV_FUZZ_EXAMPLES=2000`` for a long attack.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import hostile
import piconv
import pytest
from hypothesis import HealthCheck, given, settings
from piconv.cli import main
from piconv.jsonio import loads

settings.register_profile(
    "piconv-fuzz",
    max_examples=int(os.environ.get("PICONV_FUZZ_EXAMPLES", "40")),
    deadline=timedelta(seconds=20),
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
FUZZ = settings.get_profile("piconv-fuzz")

DOCUMENTED_EXITS = {0, 3}
"""0: converted (problems reported); 3: no pi session at all. 5 (the output failed its own
validation) and 1 (an unexpected error) are defects."""


@FUZZ
@given(data=hostile.sessions())
def test_the_reader_accounts_for_every_line(data: bytes) -> None:
    hostile.read(data)


@pytest.mark.parametrize("name", hostile.CONVERTERS)
@FUZZ
@given(data=hostile.sessions())
def test_every_format_accepts_its_own_output(name: str, data: bytes) -> None:
    document = hostile.read(data)
    if document is None:
        return
    for source, options in hostile.variants(document, data, name):
        report = piconv.convert(source, name, io.BytesIO(), options, validate=False)
        assert report.lines_read == document.lines_read
        hostile.convert_checked(source, name, options)


def _cli(*argv: str) -> tuple[int, str]:
    """``piconv ARGV`` in this process (the code behind the command): exit code, stderr."""
    err = io.TextIOWrapper(io.BytesIO(), errors="backslashreplace")
    out = io.TextIOWrapper(io.BytesIO(), errors="backslashreplace")
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(list(argv))
    err.flush()
    return code, err.buffer.getvalue().decode(errors="replace")  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", hostile.CONVERTERS)
@FUZZ
@given(data=hostile.sessions())
def test_the_command_line_exits_with_documented_codes(name: str, data: bytes, tmp_path: Path) -> None:
    source = tmp_path / "hostile.jsonl"
    source.write_bytes(data)
    out = tmp_path / f"out-{name}"
    out.unlink(missing_ok=True)
    report = tmp_path / "report.json"
    report.unlink(missing_ok=True)
    code, err = _cli(str(source), "--to", name, "-o", str(out), "--report", str(report))
    assert code in DOCUMENTED_EXITS, err
    assert "Traceback" not in err
    if code == 3:
        assert not out.exists()
        return
    code, err = _cli("validate", str(out), "--format", name)
    assert code == 0, err
    # the report accounts for every line: those kept and those reported
    accounting = loads(report.read_bytes())
    assert accounting["lines_read"] == hostile.physical_lines(data)
    code, err = _cli("inspect", str(source), "--json")
    assert code == 0, err


@settings(FUZZ, max_examples=max(2, FUZZ.max_examples // 10))
@given(data=hostile.sessions())
def test_the_installed_command_exits_with_documented_codes(data: bytes, tmp_path: Path) -> None:
    """The same through ``python -m piconv`` in a process of its own (what sets up stdout
    and stderr for text that is no UTF-8), every format."""
    source = tmp_path / "hostile.jsonl"
    source.write_bytes(data)
    for name in hostile.CONVERTERS:
        out = tmp_path / f"out-{name}"
        out.unlink(missing_ok=True)
        run = subprocess.run(
            [sys.executable, "-m", "piconv", str(source), "--to", name, "-o", str(out)], capture_output=True
        )
        err = run.stderr.decode(errors="replace")
        assert run.returncode in DOCUMENTED_EXITS, err
        assert "Traceback" not in err
