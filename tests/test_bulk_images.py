"""A directory run to Markdown writes a session's images beside its output, as one conversion does.

The images folder is written while the Markdown converts, before the output itself lands; the
output's folder must already be there then, as it is for ``piconv FILE -o DIR/x.md``. A session
alone in its project folder (pi keeps one folder per working directory) is the first thing
written there.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from conftest import session_bytes
from piconv.cli import main

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def image_session(session_id: str) -> bytes:
    return session_bytes(
        {
            "type": "message",
            "id": "m1",
            "parentId": None,
            "timestamp": "2026-01-05T10:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
                ],
                "timestamp": 1,
            },
        },
        header={
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": "2026-01-05T10:00:00.000Z",
            "cwd": "/home/me/proj",
        },
    )


@pytest.mark.parametrize("depth", [1, 3], ids=["project-folder", "nested-folders"])
def test_a_session_first_in_its_folder_gets_its_images_folder(
    tmp_path: Path, depth: int, capsys: pytest.CaptureFixture[str]
) -> None:
    folders = "/".join(f"--home-me-proj{n}--" for n in range(depth))
    sessions, out = tmp_path / "sessions", tmp_path / "out"
    (sessions / folders).mkdir(parents=True)
    (sessions / folders / "s.jsonl").write_bytes(image_session("abc"))
    recursive = ["--recursive"] if depth > 1 else []  # deeper than pi keeps sessions
    assert main([str(sessions), "--to", "markdown", "-o", str(out), "--jobs", "1", *recursive]) == 0, (
        capsys.readouterr().err
    )

    # named after the output (s.md), never after the session's id
    image = f"s_images/{hashlib.sha256(PNG).hexdigest()[:16]}.png"
    written = out / folders / image
    assert written.read_bytes() == PNG
    assert f"]({image})" in (out / folders / "s.md").read_text(encoding="utf-8")

    single = tmp_path / "single"
    single.mkdir()
    assert main([str(sessions / folders / "s.jsonl"), "--to", "markdown", "-o", str(single / "s.md")]) == 0
    assert (single / "s.md").read_bytes() == (out / folders / "s.md").read_bytes()
    assert (single / image).read_bytes() == PNG
