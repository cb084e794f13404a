"""A directory run never writes over a file in OUTDIR that piconv did not write.

What piconv wrote is what its manifest records (and, for an index, what carries piconv's
own first bytes). Anything else at an output's place is left as it is and the session
fails with ``bulk:output-exists``, unless ``--overwrite`` asks to replace it; a file holding
exactly the bytes piconv would write there (left by a run stopped before its manifest
line) is taken as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piconv.bulk import run_bulk
from piconv.cli import main
from test_bulk import conversation, make_tree, records

NOTES = b"my precious notes\n"


def test_a_file_piconv_did_not_write_is_left_and_its_session_fails_alone(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    mine = out / "--work-a--" / "2026-01-01_s1.html"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(NOTES)

    summary = run_bulk(str(tmp_path / "in"), str(out), ["html"], quiet=True)

    assert mine.read_bytes() == NOTES
    assert summary.failed == 1 and summary.converted == 2
    (failure,) = summary.failures
    assert failure["code"] == "bulk:output-exists" and "--overwrite" in failure["message"]
    assert "html" not in (records(out)["--work-a--/2026-01-01_s1.jsonl"].get("outputs") or {})
    assert (out / "--work-b--" / "2026-01-03_s3.html").is_file()


def test_overwrite_replaces_it_and_force_alone_does_not(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    mine = out / "--work-a--" / "2026-01-01_s1.md"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(NOTES)

    forced = run_bulk(str(tmp_path / "in"), str(out), ["markdown"], quiet=True, force=True)
    assert forced.failure_codes == {"bulk:output-exists": 1} and mine.read_bytes() == NOTES

    summary = run_bulk(str(tmp_path / "in"), str(out), ["markdown"], quiet=True, overwrite=True)

    assert summary.failed == 0
    assert mine.read_bytes() != NOTES and mine.read_bytes().startswith(b"---\n")


def test_the_command_line_overwrite_flag_replaces_it(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    mine = out / "--work-a--" / "2026-01-01_s1.md"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(NOTES)

    assert main([str(tmp_path / "in"), "--to", "markdown", "-o", str(out), "--quiet", "--force"]) == 1
    assert mine.read_bytes() == NOTES
    assert main([str(tmp_path / "in"), "--to", "markdown", "-o", str(out), "--quiet", "--overwrite"]) == 0
    assert mine.read_bytes().startswith(b"---\n")


def test_an_output_left_behind_by_a_format_not_asked_for_since_is_still_piconvs(tmp_path: Path) -> None:
    """The session changed while html was not asked for: the record no longer counts the
    html page as current, but piconv wrote it, and the next html run replaces it."""
    files = make_tree(tmp_path / "in")
    out = tmp_path / "out"
    rel = "--work-a--/2026-01-01_s1.jsonl"
    page = out / "--work-a--" / "2026-01-01_s1.html"
    run_bulk(str(tmp_path / "in"), str(out), ["markdown", "html"], quiet=True)
    first = page.read_bytes()
    (tmp_path / "in" / rel).write_bytes(files[rel].replace(b"fix the bug", b"fix another bug"))
    assert run_bulk(str(tmp_path / "in"), str(out), ["markdown"], quiet=True).failed == 0
    assert "html" not in records(out)[rel]["outputs"]

    summary = run_bulk(str(tmp_path / "in"), str(out), ["markdown", "html"], quiet=True)

    assert summary.failed == 0, summary.failures
    assert page.read_bytes() != first and b"another bug" in page.read_bytes()


def test_outputs_of_a_run_that_timed_out_on_a_changed_session_are_still_piconvs(tmp_path: Path) -> None:
    files = make_tree(tmp_path / "in")
    out = tmp_path / "out"
    rel = "--work-a--/2026-01-01_s1.jsonl"
    page = out / "--work-a--" / "2026-01-01_s1.md"
    run_bulk(str(tmp_path / "in"), str(out), ["markdown"], quiet=True)
    (tmp_path / "in" / rel).write_bytes(files[rel].replace(b"fix the bug", b"fix another bug"))
    cut = run_bulk(str(tmp_path / "in"), str(out), ["markdown"], jobs=1, quiet=True, timeout=0.000001)
    assert cut.failure_codes.get("bulk:timeout")
    assert "markdown" not in records(out)[rel]["outputs"]

    summary = run_bulk(str(tmp_path / "in"), str(out), ["markdown"], quiet=True)

    assert summary.failed == 0, summary.failures
    assert b"another bug" in page.read_bytes()


def test_every_leaf_written_is_recorded_as_it_lands(tmp_path: Path) -> None:
    """A per-leaf format failing at its second leaf (its place is taken by a directory)
    has written the first: the record names that file as piconv's."""
    example = Path(__file__).resolve().parents[1] / "examples" / "branching.jsonl"
    (tmp_path / "in" / "--p--").mkdir(parents=True)
    (tmp_path / "in" / "--p--" / "tree.jsonl").write_bytes(example.read_bytes())
    out = tmp_path / "out"
    (out / "--p--" / "tree.openai.leaf-2.json").mkdir(parents=True)

    summary = run_bulk(str(tmp_path / "in"), str(out), ["openai"], quiet=True)

    assert summary.failed == 1
    rec = records(out)["--p--/tree.jsonl"]
    assert "openai" not in rec["outputs"]
    assert rec["written"] == ["--p--/tree.openai.leaf-1.json"]
    assert (out / "--p--" / "tree.openai.leaf-1.json").is_file()


def test_an_output_piconv_wrote_is_replaced_when_its_session_changes(tmp_path: Path) -> None:
    files = make_tree(tmp_path / "in")
    out = tmp_path / "out"
    run_bulk(str(tmp_path / "in"), str(out), ["markdown"], quiet=True)
    first = (out / "--work-a--" / "2026-01-01_s1.md").read_bytes()
    rel = "--work-a--/2026-01-01_s1.jsonl"
    (tmp_path / "in" / rel).write_bytes(files[rel].replace(b"fix the bug", b"fix another bug"))

    summary = run_bulk(str(tmp_path / "in"), str(out), ["markdown"], quiet=True)

    assert summary.failed == 0 and summary.converted == 1
    again = (out / "--work-a--" / "2026-01-01_s1.md").read_bytes()
    assert again != first and b"another bug" in again


def test_outputs_a_stopped_run_left_unrecorded_are_taken_as_they_are(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    run_bulk(str(tmp_path / "in"), str(out), ["asf"], quiet=True)
    (out / ".piconv-manifest.jsonl").unlink()  # the manifest lines never reached the disk

    summary = run_bulk(str(tmp_path / "in"), str(out), ["asf"], quiet=True)

    assert summary.failed == 0 and summary.converted == 3


def test_a_run_into_a_folder_of_other_sessions_replaces_none_of_them(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    (sessions / "sub").mkdir(parents=True)
    theirs = conversation("other", "a session of its own")
    (sessions / "a.jsonl").write_bytes(theirs)
    (sessions / "sub" / "a.jsonl").write_bytes(conversation("sub", "the one converted"))

    (sessions / "a.pi.jsonl").write_bytes(theirs)  # a file of its own where the output would go

    code = main([str(sessions / "sub"), "--to", "pi", "-o", str(sessions), "--quiet"])

    assert code != 0
    assert (sessions / "a.jsonl").read_bytes() == theirs  # never an output's name: a.pi.jsonl
    assert (sessions / "a.pi.jsonl").read_bytes() == theirs  # not piconv's: left as it is


def test_an_index_piconv_did_not_write_is_left_with_a_note(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_bytes(NOTES)
    (out / "index.md").write_bytes(NOTES)

    summary = run_bulk(str(tmp_path / "in"), str(out), ["html", "markdown"], quiet=True)

    assert (out / "index.html").read_bytes() == NOTES
    assert (out / "index.md").read_bytes() == NOTES
    assert summary.converted == 3 and sum("not written by piconv" in n for n in summary.notes) == 2

    summary = run_bulk(str(tmp_path / "in"), str(out), ["html", "markdown"], quiet=True, overwrite=True)
    assert (out / "index.html").read_bytes().startswith(b"<!DOCTYPE html>")
    assert (out / "index.md").read_bytes().startswith(b"# pi sessions\n\n")


def test_piconvs_own_index_is_rewritten_as_the_archive_grows(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    run_bulk(str(tmp_path / "in"), str(out), ["html", "markdown"], quiet=True)
    (tmp_path / "in" / "--work-b--" / "s4.jsonl").write_bytes(
        conversation("s4", "a fourth session", cwd="/work/b")
    )

    summary = run_bulk(str(tmp_path / "in"), str(out), ["html", "markdown"], quiet=True)

    assert summary.notes == [] and summary.converted == 1
    assert b"a fourth session" in (out / "index.md").read_bytes()
    assert b"a fourth session" in (out / "index.html").read_bytes()


def test_a_file_of_someone_elses_beside_the_archive_is_left_with_a_note(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    side = out / "archive.metadata.json"
    side.write_bytes(NOTES)

    summary = run_bulk(str(tmp_path / "in"), str(out), ["sqlite"], quiet=True)

    assert side.read_bytes() == NOTES
    assert summary.converted == 3 and any("archive.metadata.json" in n for n in summary.notes)

    summary = run_bulk(str(tmp_path / "in"), str(out), ["sqlite"], quiet=True, overwrite=True)
    assert b"archived by piconv" in side.read_bytes()
    stale = side.read_bytes().replace(b'"title"', b'"title" ', 1)  # an older piconv's
    side.write_bytes(stale)

    summary = run_bulk(str(tmp_path / "in"), str(out), ["sqlite"], quiet=True)
    assert summary.notes == [] and side.read_bytes() != stale


def test_a_fifo_where_the_index_goes_is_left_and_never_read(tmp_path: Path) -> None:
    import os

    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "index.md")  # opening it to read would wait for a writer forever

    summary = run_bulk(str(tmp_path / "in"), str(out), ["markdown"], quiet=True)

    assert (out / "index.md").is_fifo()
    assert summary.converted == 3 and any("index.md" in n for n in summary.notes)


# --------------------------------------------------------------------------- attacks on piconv's own files


def _plant(kind: str, path: Path, victim: Path) -> None:
    import os

    if kind == "symlink":
        path.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:  # a second name of someone's file
        os.link(victim, path)


def test_a_plant_at_the_manifest_or_the_lock_stops_the_run_before_anything_is_written(tmp_path: Path) -> None:
    """A link there would have the run write where it points (outside OUTDIR), a pipe
    would hang it, a directory crashed it; each is one clear error (exit 6), and the file
    it points to is untouched."""
    import pytest
    from piconv.errors import OutputError

    make_tree(tmp_path / "in")
    for name in (".piconv-manifest.jsonl", ".piconv-lock"):
        for kind in ("symlink", "fifo", "directory", "hardlink"):
            out, victim = tmp_path / f"out-{kind}{name}", tmp_path / f"victim-{kind}{name}"
            out.mkdir()
            victim.write_bytes(NOTES)
            _plant(kind, out / name, victim)
            with pytest.raises(OutputError, match="not a plain file"):
                run_bulk(str(tmp_path / "in"), str(out), ["html"], quiet=True)
            assert victim.read_bytes() == NOTES, (name, kind)
            assert not list(out.rglob("*.html")), (name, kind)
    out = tmp_path / "cli"
    out.mkdir()
    (out / ".piconv-manifest.jsonl").symlink_to(tmp_path / "elsewhere")
    assert main([str(tmp_path / "in"), "--to", "html", "-o", str(out), "-q"]) == 6
    assert not (tmp_path / "elsewhere").exists()


def test_a_record_with_leaves_or_written_of_the_wrong_type_is_dropped(tmp_path: Path) -> None:
    import json

    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    run_bulk(str(tmp_path / "in"), str(out), ["openai"], quiet=True)
    manifest = out / ".piconv-manifest.jsonl"
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    lines[0]["outputs"]["openai"]["leaves"] = [1]
    lines[1]["written"] = "a.json"
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for _ in range(2):  # the bad records are dropped, not written back
        again = run_bulk(str(tmp_path / "in"), str(out), ["openai"], quiet=True)
        assert again.failed == 0
    assert again.up_to_date == 3


def test_a_link_or_pipe_put_at_a_place_piconv_wrote_is_left_as_it_is(tmp_path: Path) -> None:
    import os

    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    run_bulk(str(tmp_path / "in"), str(out), ["html"], quiet=True)
    notes = tmp_path / "notes"
    notes.write_bytes(NOTES)
    linked = out / "--work-a--" / "2026-01-01_s1.html"
    piped = out / "--work-b--" / "2026-01-03_s3.html"
    linked.unlink()
    linked.symlink_to(notes)
    piped.unlink()
    os.mkfifo(piped)
    for force in (False, True):
        summary = run_bulk(str(tmp_path / "in"), str(out), ["html"], quiet=True, force=force)
        assert summary.failure_codes == {"bulk:output-exists": 2}, force
        assert linked.is_symlink() and notes.read_bytes() == NOTES and piped.is_fifo()
    replaced = run_bulk(str(tmp_path / "in"), str(out), ["html"], quiet=True, overwrite=True)
    assert (
        replaced.failed == 0 and linked.is_file() and not linked.is_symlink() and notes.read_bytes() == NOTES
    )


def test_moving_someone_s_archive_aside_moves_over_none_of_their_files(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "archive.db").write_bytes(b"my db")
    (out / "archive.db-wal").write_bytes(b"my db wal")
    (out / "archive.db.foreign-wal").write_bytes(b"PRECIOUS")
    run_bulk(str(tmp_path / "in"), str(out), ["sqlite"], quiet=True)
    assert (out / "archive.db.foreign-wal").read_bytes() == b"PRECIOUS"
    assert (out / "archive.db.foreign-2").read_bytes() == b"my db"
    assert (out / "archive.db.foreign-2-wal").read_bytes() == b"my db wal"


def test_a_file_written_for_a_session_since_renamed_is_piconv_s_for_the_one_taking_its_name(
    tmp_path: Path,
) -> None:
    """``index.jsonl`` and ``index.session.jsonl`` both map to ``index.session.html``: the
    first in path order keeps the name, but not the file piconv wrote there for the other
    while that one is there; once it is renamed (as the collision's message advises), the
    file is piconv's to replace."""
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "index.session.jsonl").write_bytes(conversation("first", "one"))
    assert run_bulk(str(src), str(out), ["html"], quiet=True).failed == 0
    (src / "index.jsonl").write_bytes(conversation("second", "two"))
    collided = run_bulk(str(src), str(out), ["html"], quiet=True)
    # the first in path order keeps the name; while the other is there, the file piconv
    # wrote for it stays its (the other's record names it)
    assert collided.failure_codes == {"bulk:name-collision": 1, "bulk:output-exists": 1}
    assert b"one" in (out / "index.session.html").read_bytes()
    (src / "index.session.jsonl").rename(src / "other.jsonl")
    for _ in range(2):
        summary = run_bulk(str(src), str(out), ["html"], quiet=True)
        assert summary.failed == 0, summary.failures
    assert b"two" in (out / "index.session.html").read_bytes()
    assert b"one" in (out / "other.html").read_bytes()
    # a foreign file is still refused: only what the manifest records is piconv's
    (src / "new.jsonl").write_bytes(conversation("third", "three"))
    (out / "new.html").write_bytes(NOTES)
    assert run_bulk(str(src), str(out), ["html"], quiet=True).failure_codes == {"bulk:output-exists": 1}
    assert (out / "new.html").read_bytes() == NOTES


def _grow(path: Path) -> None:
    with path.open("ab") as fh:
        fh.write(
            b'{"type":"thinking_level_change","id":"zz","parentId":null,"timestamp":"2026-01-01T00:00:09.000Z","thinkingLevel":"off"}\n'
        )


def test_an_output_left_by_a_worker_that_died_is_refused_with_a_way_out(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A worker killed after writing an output, before it could say so: piconv cannot tell
    that file from one put there since, so once the session has changed the next run leaves
    it and says how to replace it (recording places before a task runs would let a later
    run replace a file put where a task that never ran would have written)."""
    import os

    from piconv.bulk import worker

    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "a.jsonl").write_bytes(conversation("a", "one"))
    (src / "big.jsonl").write_bytes(conversation("big", "two", turns=40))
    write = worker.write_atomic

    def write_then_die(final: str, *args: Any, **kwargs: Any) -> None:
        write(final, *args, **kwargs)
        if final.endswith("big.html"):
            os._exit(9)  # as kill -9 or the OOM killer would, after the file landed

    monkeypatch.setattr(worker, "write_atomic", write_then_die)
    died = run_bulk(str(src), str(out), ["html"], jobs=2, quiet=True)
    monkeypatch.undo()
    assert set(died.failure_codes) == {"bulk:worker-died"} and (out / "big.html").is_file()
    assert "big.html" not in records(out)["big.jsonl"].get("written", [])
    with (src / "big.jsonl").open("ab") as fh:
        fh.write(
            b'{"type":"thinking_level_change","id":"zz","parentId":null,"timestamp":"2026-01-01T00:00:09.000Z","thinkingLevel":"off"}\n'
        )
    refused = run_bulk(str(src), str(out), ["html"], jobs=2, quiet=True)
    (failure,) = refused.failures
    assert failure["code"] == "bulk:output-exists" and "--overwrite" in failure["message"]
    assert run_bulk(str(src), str(out), ["html"], jobs=2, quiet=True, overwrite=True).failed == 0


def test_a_second_name_of_someone_s_file_beside_the_archive_is_never_written_into(tmp_path: Path) -> None:
    import os

    make_tree(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_bytes(NOTES * 2000)
    os.link(precious, out / "archive.db-shm")
    summary = run_bulk(str(tmp_path / "in"), str(out), ["sqlite"], quiet=True)
    assert summary.failed == 0
    assert precious.read_bytes() == NOTES * 2000


def test_a_format_s_folder_beside_its_output_stays_out_of_the_input_tree(tmp_path: Path) -> None:
    """With OUTDIR around the input, Markdown's images folder (``<output stem>_images``)
    could be the input directory itself: that output fails rather than write into it."""
    import base64
    import json

    work = tmp_path / "w"
    src = work / "s_images"
    src.mkdir(parents=True)
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()
    lines = [
        {"type": "session", "version": 3, "id": "abc", "timestamp": "2026-01-05T10:00:00.000Z", "cwd": "/x"},
        {
            "type": "message",
            "id": "m1",
            "parentId": None,
            "timestamp": "2026-01-05T10:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "data": png, "mimeType": "image/png"},
                ],
                "timestamp": 1,
            },
        },
    ]
    (src / "s.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    summary = run_bulk(str(src), str(work), ["markdown"], quiet=True)
    assert summary.failed == 1 and "inside the input directory" in summary.failures[0]["message"]
    assert sorted(p.name for p in src.iterdir()) == ["s.jsonl"]
