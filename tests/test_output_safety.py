"""Where an output goes: never half a file, never over what piconv did not make.

Each case runs the command as a user would (``python -m piconv``) and looks at what is left
on disk afterwards.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO

EXAMPLE = REPO / "examples" / "basic.jsonl"
FORMATS = ("asf", "openai", "ir", "pi", "markdown", "html")


def piconv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "piconv", *args], capture_output=True, text=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root (CI runs as root)")
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_device_is_written_through_not_replaced(tmp_path: Path, fmt: str) -> None:
    device = tmp_path / "null"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    result = piconv(str(EXAMPLE), "--to", fmt, "-o", str(device), "-q")
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(os.stat(device).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["null"]  # no temporary file left behind


def test_a_fifo_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = piconv(str(EXAMPLE), "--to", "ir", "-o", str(fifo), "-q")
    reader.join(timeout=30)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and received[0].startswith(b"{")


def test_a_symlink_stays_and_its_target_is_written(tmp_path: Path) -> None:
    target = tmp_path / "real.md"
    target.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    result = piconv(str(EXAMPLE), "--to", "markdown", "-o", str(link), "-q")
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("---")


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "made.json")
    assert piconv(str(EXAMPLE), "--to", "ir", "-o", str(link), "-q").returncode == 0
    assert link.is_symlink() and (tmp_path / "made.json").read_bytes().startswith(b"{")


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "private.md"
    out.write_text("old")
    out.chmod(0o600)
    assert piconv(str(EXAMPLE), "--to", "markdown", "-o", str(out), "-q").returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and out.read_text() != "old"


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    out = tmp_path / "new.md"
    assert piconv(str(EXAMPLE), "--to", "markdown", "-o", str(out), "-q").returncode == 0
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask


def test_a_missing_directory_is_an_error_not_created(tmp_path: Path) -> None:
    result = piconv(str(EXAMPLE), "--to", "ir", "-o", str(tmp_path / "no" / "such" / "out.json"))
    assert result.returncode == 6
    assert "no such directory" in result.stderr and str(tmp_path / "no" / "such") in result.stderr
    assert not (tmp_path / "no").exists()


def test_a_directory_in_the_way_is_an_error(tmp_path: Path) -> None:
    result = piconv(str(EXAMPLE), "--to", "ir", "-o", str(tmp_path))
    assert result.returncode == 6 and "is a directory" in result.stderr


@pytest.mark.parametrize("fmt", ("pi", "asf"))
def test_the_input_is_never_overwritten(tmp_path: Path, fmt: str) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(EXAMPLE.read_bytes())
    link = tmp_path / "alias.jsonl"
    link.symlink_to(session)
    for out in (session, link):
        result = piconv(str(session), "--to", fmt, "-o", str(out))
        assert result.returncode == 6 and "is the input" in result.stderr
    assert session.read_bytes() == EXAMPLE.read_bytes()


def test_an_unwritable_place_is_one_line_naming_the_path(tmp_path: Path) -> None:
    result = piconv(str(EXAMPLE), "--to", "markdown", "-o", "/proc/piconv-test.md")
    assert result.returncode == 6
    assert result.stderr.startswith("piconv: error: /proc/piconv-test.md: cannot write")
    assert ".piconv-" not in result.stderr and "Traceback" not in result.stderr


def test_a_failed_validation_leaves_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("old")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n")
    assert piconv(str(bad), "--to", "ir", "-o", str(out)).returncode == 3
    assert out.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["bad.jsonl", "out.json"]


@pytest.mark.parametrize("sink", ("memory", "stream"))
def test_a_failed_conversion_writes_nothing_to_a_stream(tmp_path: Path, sink: str) -> None:
    import io

    import piconv

    target = io.BytesIO(b"old") if sink == "memory" else open(tmp_path / "s", "w+b")  # noqa: SIM115
    target.seek(0, 2)
    with pytest.raises(piconv.InputError):
        piconv.convert(b"not json at all\n", "ir", target)
    target.seek(0)
    assert target.read() == (b"old" if sink == "memory" else b"")
    out = io.BytesIO()
    piconv.convert(str(EXAMPLE), "ir", out)
    assert out.getvalue().startswith(b"{")


def test_the_report_never_overwrites_the_input(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(EXAMPLE.read_bytes())
    result = piconv(str(session), "--to", "ir", "-o", str(tmp_path / "out.json"), "--report", str(session))
    assert result.returncode == 6 and "is the input" in result.stderr
    assert session.read_bytes() == EXAMPLE.read_bytes()


def test_a_directory_run_report_never_overwrites_a_session(tmp_path: Path) -> None:
    sessions = tmp_path / "in"
    sessions.mkdir()
    (sessions / "a.jsonl").write_bytes(EXAMPLE.read_bytes())
    result = piconv(
        str(sessions), "--to", "ir", "-o", str(tmp_path / "out"), "-q", "--report", str(sessions / "a.jsonl")
    )
    assert result.returncode == 6 and "input directory" in result.stderr
    assert (sessions / "a.jsonl").read_bytes() == EXAMPLE.read_bytes()
    fine = tmp_path / "report.json"
    assert (
        piconv(
            str(sessions), "--to", "ir", "-o", str(tmp_path / "out"), "-q", "--report", str(fine)
        ).returncode
        == 0
    )
    assert fine.read_bytes().startswith(b"{")


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def _session_with_an_image(path: Path) -> Path:
    from conftest import session_bytes

    path.write_bytes(
        session_bytes(
            {
                "type": "message",
                "id": "a1",
                "parentId": None,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look"},
                        {"type": "image", "data": PNG, "mimeType": "image/png"},
                    ],
                    "timestamp": 1,
                },
            }
        )
    )
    return path


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root (CI runs as root)")
def test_a_device_grows_no_folder_of_images_beside_it(tmp_path: Path) -> None:
    """``-o /dev/null`` and the like: a format's files beside its output have nowhere to go
    (as for stdout), so no ``null_images`` folder appears beside the device."""
    source = _session_with_an_image(tmp_path / "s.jsonl")
    devices = tmp_path / "dev"
    devices.mkdir()
    device = devices / "null"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    for fmt in ("markdown", "atif"):
        result = piconv(str(source), "--to", fmt, "-o", str(device), "-q")
        assert result.returncode == 0 or "pip install" in result.stderr, result.stderr
    assert sorted(os.listdir(devices)) == ["null"]


def test_images_go_beside_a_symlinks_target_where_the_page_is(tmp_path: Path) -> None:
    source = _session_with_an_image(tmp_path / "s.jsonl")
    (tmp_path / "real").mkdir()
    (tmp_path / "links").mkdir()
    target = tmp_path / "real" / "t.md"
    target.write_text("old")
    link = tmp_path / "links" / "l.md"
    link.symlink_to(target)
    result = piconv(str(source), "--to", "markdown", "-o", str(link), "-q")
    assert result.returncode == 0, result.stderr
    assert os.listdir(tmp_path / "links") == ["l.md"]
    images = tmp_path / "real" / "t_images"
    assert images.is_dir() and len(os.listdir(images)) == 1
    assert "t_images/" in target.read_text()
