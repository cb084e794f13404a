"""Bulk export: mirroring, one read per session, incremental reruns, failures, exit codes, report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson
import piconv
import pytest
from conftest import session_bytes
from piconv import api
from piconv.bulk import run_bulk
from piconv.bulk.discover import UnsafePath, output_rel
from piconv.bulk.manifest import NAME as MANIFEST
from piconv.bulk.progress import Progress
from piconv.cli import main


def conversation(session_id: str, prompt: str = "hello", cwd: str = "/work/p", turns: int = 2) -> bytes:
    header = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": cwd,
    }
    lines: list[object] = []
    parent = None
    for i in range(turns):
        uid, aid = f"u{i}", f"a{i}"
        lines.append(
            {
                "type": "message",
                "id": uid,
                "parentId": parent,
                "timestamp": f"2026-01-01T00:0{i}:00.000Z",
                "message": {"role": "user", "content": f"{prompt} {i}", "timestamp": 1767225600000 + i},
            }
        )
        lines.append(
            {
                "type": "message",
                "id": aid,
                "parentId": uid,
                "timestamp": f"2026-01-01T00:0{i}:30.000Z",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"answer {i}"}],
                    "provider": "faux",
                    "model": "faux-coder",
                    "api": "openai-completions",
                    "usage": {
                        "input": 10,
                        "output": 5,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 15,
                        "cost": {
                            "input": 0.001,
                            "output": 0.002,
                            "cacheRead": 0,
                            "cacheWrite": 0,
                            "total": 0.003,
                        },
                    },
                    "stopReason": "stop",
                    "timestamp": 1767225630000 + i,
                },
            }
        )
        parent = aid
    return session_bytes(*lines, header=header)


def make_tree(root: Path) -> dict[str, bytes]:
    files = {
        "--work-a--/2026-01-01_s1.jsonl": conversation("s1", "fix the bug"),
        "--work-a--/2026-01-02_s2.jsonl": conversation("s2", "write tests"),
        "--work-b--/2026-01-03_s3.jsonl": conversation("s3", "refactor", cwd="/work/b"),
    }
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "--work-a--" / "notes.txt").write_text("not a session")
    return files


def records(outdir: Path) -> dict[str, dict]:
    out = {}
    for line in (outdir / MANIFEST).read_bytes().splitlines():
        rec = json.loads(line)  # the stdlib: lone surrogate escapes are valid JSON
        out[rec["input"]] = rec
    return out


def snapshot(outdir: Path) -> dict[str, tuple[int, bytes]]:
    """Every output file (not the manifest or lock) with its mtime and bytes."""
    return {
        p.relative_to(outdir).as_posix(): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(outdir.rglob("*"))
        if p.is_file() and not p.name.startswith(".piconv-")
    }


# --------------------------------------------------------------------------- mirroring


def test_mirrors_folders_one_output_per_session_and_format(tmp_path: Path) -> None:
    src, out = tmp_path / "sessions", tmp_path / "out"
    files = make_tree(src)
    summary = run_bulk(str(src), str(out), ["ir", "pi"], jobs=1, quiet=True)
    assert (summary.converted, summary.failed, summary.up_to_date) == (3, 0, 0)
    for rel, data in files.items():
        stem = rel[: -len(".jsonl")]
        assert (out / f"{stem}.ir.json").is_file()
        # pi → pi is lossless: the mirrored copy holds the input's values
        lines = (out / f"{stem}.pi.jsonl").read_bytes().splitlines()
        assert [orjson.loads(x) for x in lines] == [orjson.loads(x) for x in data.splitlines()]
    assert not list(out.rglob("notes*"))
    recs = records(out)
    assert sorted(recs) == sorted(files)
    rec = recs["--work-a--/2026-01-01_s1.jsonl"]
    assert rec["size"] == len(files["--work-a--/2026-01-01_s1.jsonl"])
    assert len(rec["sha256"]) == 64 and rec["piconv"] == piconv.__version__
    assert rec["outputs"]["ir"]["path"] == "--work-a--/2026-01-01_s1.ir.json"
    assert rec["outputs"]["ir"]["distribution"] == "piconv" and rec["outputs"]["ir"]["version"]
    assert rec["meta"]["first_prompt"] == "fix the bug 0" and rec["meta"]["turns"] == 2


def test_outputs_equal_single_file_conversion(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    run_bulk(str(src), str(out), ["ir"], jobs=2, quiet=True)
    single = tmp_path / "single.json"
    assert main([str(src / "--work-b--/2026-01-03_s3.jsonl"), "--to", "ir", "-o", str(single), "-q"]) == 0
    assert (out / "--work-b--/2026-01-03_s3.ir.json").read_bytes() == single.read_bytes()


def test_one_read_per_session_for_several_formats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    files = make_tree(src)
    calls: list[object] = []
    real_load = api.load_detected

    def spy(source: object, *args: object, **kw: object) -> object:
        # Only loads of an input count: pi's own checker loads its *output* to validate it.
        if str(getattr(source, "name", source)).startswith(str(src)):
            calls.append(source)
        return real_load(source, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "load_detected", spy)
    opened: list[str] = []
    from piconv.bulk import worker

    real_open = worker.open_session

    def open_spy(root: str, rel: str) -> object:  # the one way a worker opens an input
        opened.append(os.path.join(root, rel))
        return real_open(root, rel)

    monkeypatch.setattr(worker, "open_session", open_spy)
    summary = run_bulk(str(src), str(out), ["ir", "pi", "html"], jobs=1, quiet=True)
    assert summary.converted == 3
    assert len(calls) == len(files)  # three formats, one load per session
    assert sorted(opened) == sorted(
        os.path.join(os.path.realpath(src), r) for r in files
    )  # and one open of each input
    for rel in files:
        assert (out / rel.replace(".jsonl", ".html")).is_file()


def test_output_names_depend_on_the_format_alone(tmp_path: Path) -> None:
    assert output_rel("p/a.jsonl", ".json", "ir") == "p/a.ir.json"
    assert output_rel("p/a.jsonl", "json") == "p/a.json"
    assert output_rel("index.jsonl", ".html") == "index.session.html"  # the index keeps its name
    assert output_rel("p/index.jsonl", ".html") == "p/index.html"
    for bad in (
        "../a.jsonl",
        "p/../a.jsonl",
        "/a.jsonl",
        "p//a.jsonl",
        "p/./a.jsonl",
        "a\x00.jsonl",
    ):
        with pytest.raises(UnsafePath):
            output_rel(bad, ".html")
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    summary = run_bulk(str(src), str(out), ["ir", "pi", "openai"], jobs=1, quiet=True)
    assert summary.failed == 0, summary.failures
    assert (out / "--work-b--/2026-01-03_s3.ir.json").is_file()
    # openai describes one leaf: one output per leaf, numbered
    assert (out / "--work-b--/2026-01-03_s3.openai.leaf-1.json").is_file()
    # a format's outputs keep their names whatever other formats a run asks for: adding
    # or dropping one renames and reconverts none of the others
    before = snapshot(out)
    alone = run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True)
    assert (alone.converted, alone.up_to_date) == (0, 3)
    more = run_bulk(str(src), str(out), ["ir", "asf", "markdown"], jobs=1, quiet=True)
    assert more.converted == 3 and more.failed == 0
    after = snapshot(out)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing renamed or rewritten
    assert (out / "--work-b--/2026-01-03_s3.asf.jsonl").is_file()  # never a .jsonl like its session
    assert (out / "--work-b--/2026-01-03_s3.md").is_file()  # .md names its format
    assert not [k for k in after if k.endswith(".jsonl") and not k.endswith((".asf.jsonl", ".pi.jsonl"))]


# --------------------------------------------------------------------------- incremental


def test_rerun_converts_nothing_then_only_what_changed(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    files = make_tree(src)
    run_bulk(str(src), str(out), ["ir", "pi"], jobs=2, quiet=True)
    before = snapshot(out)

    again = run_bulk(str(src), str(out), ["ir", "pi"], jobs=2, quiet=True)
    assert (again.converted, again.up_to_date, again.failed) == (0, 3, 0)
    assert snapshot(out) == before  # not even rewritten

    grown = src / "--work-a--/2026-01-02_s2.jsonl"
    grown.write_bytes(conversation("s2", "write tests", turns=3))
    third = run_bulk(str(src), str(out), ["ir", "pi"], jobs=2, quiet=True)
    assert (third.converted, third.up_to_date) == (1, 2)
    after = snapshot(out)
    changed = {k for k in after if after[k] != before.get(k)}
    assert changed == {"--work-a--/2026-01-02_s2.ir.json", "--work-a--/2026-01-02_s2.pi.jsonl"}
    assert after["--work-a--/2026-01-02_s2.pi.jsonl"][1].count(b"\n") == grown.read_bytes().count(b"\n")
    assert records(out)["--work-a--/2026-01-02_s2.jsonl"]["size"] == grown.stat().st_size

    # touched, same bytes: hashed again, not converted again
    touched = src / "--work-b--/2026-01-03_s3.jsonl"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 5_000_000_000))
    fourth = run_bulk(str(src), str(out), ["ir", "pi"], jobs=1, quiet=True)
    assert (fourth.converted, fourth.unchanged_content, fourth.up_to_date) == (0, 1, 2)
    assert snapshot(out) == after
    assert records(out)["--work-b--/2026-01-03_s3.jsonl"]["mtime_ns"] == touched.stat().st_mtime_ns
    assert run_bulk(str(src), str(out), ["ir", "pi"], jobs=1, quiet=True).up_to_date == 3

    forced = run_bulk(str(src), str(out), ["ir", "pi"], jobs=2, force=True, quiet=True)
    assert (forced.converted, forced.up_to_date) == (3, 0)
    assert {k: v[1] for k, v in snapshot(out).items()} == {k: v[1] for k, v in after.items()}
    assert len(files) == 3


def test_deleted_output_new_format_and_removed_input(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True)
    (out / "--work-b--/2026-01-03_s3.ir.json").unlink()
    redo = run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True)
    assert (redo.converted, redo.up_to_date) == (1, 2)
    assert (out / "--work-b--/2026-01-03_s3.ir.json").is_file()

    ir_before = snapshot(out)
    added = run_bulk(str(src), str(out), ["ir", "pi"], jobs=1, quiet=True)
    assert added.converted == 3
    assert {k: v for k, v in snapshot(out).items() if k.endswith(".ir.json")} == ir_before  # ir left alone

    (src / "--work-a--/2026-01-01_s1.jsonl").unlink()
    gone = run_bulk(str(src), str(out), ["ir", "pi"], jobs=1, quiet=True)
    assert (gone.converted, gone.up_to_date) == (0, 2)
    assert (out / "--work-a--/2026-01-01_s1.ir.json").is_file()  # never removed unasked
    assert "--work-a--/2026-01-01_s1.jsonl" in records(out)


def test_changed_options_reconvert(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True)
    assert run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True, validate=False).converted == 3


def test_dropping_every_filter_reconverts(tmp_path: Path) -> None:
    """Outputs made through a filter (--redact, --detail) are not what a run without one
    asks for: dropping the last filter converts again, as changing one does."""
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    steps = [("detail", {"level": "prompts"})]
    assert run_bulk(str(src), str(out), ["markdown"], jobs=1, quiet=True, filters=steps).converted == 3
    assert run_bulk(str(src), str(out), ["markdown"], jobs=1, quiet=True, filters=steps).converted == 0
    assert run_bulk(str(src), str(out), ["markdown"], jobs=1, quiet=True).converted == 3
    assert run_bulk(str(src), str(out), ["markdown"], jobs=1, quiet=True).converted == 0


# --------------------------------------------------------------------------- failures


def broken_tree(root: Path) -> None:
    make_tree(root)
    (root / "--work-c--").mkdir()
    (root / "--work-c--" / "empty.jsonl").write_bytes(b"")
    (root / "--work-c--" / "garbage.jsonl").write_bytes(b"this is not json\n\x00\xff\n")
    good = conversation("s4", "truncated")
    (root / "--work-c--" / "truncated.jsonl").write_bytes(good + b'{"type":"message","id":"x","par')


def test_files_that_are_not_sessions_are_listed_never_failed(tmp_path: Path) -> None:
    """As pi lists sessions: a file whose first line is no session header (an empty
    file, an extension's log) is passed over and listed, and the run still succeeds."""
    src, out = tmp_path / "s", tmp_path / "o"
    broken_tree(src)
    summary = run_bulk(str(src), str(out), ["ir", "pi"], jobs=2, quiet=True)
    assert (summary.converted, summary.failed, summary.refused) == (4, 0, 0)
    assert summary.ok
    assert {(s["input"], s["code"]) for s in summary.skipped} == {
        ("--work-c--/empty.jsonl", "empty"),
        ("--work-c--/garbage.jsonl", "not-a-session"),
    }
    assert summary.problems  # the truncated line is reported by code, its session converted
    assert (out / "--work-c--/truncated.ir.json").is_file()
    recs = records(out)
    assert "--work-c--/empty.jsonl" not in recs and "--work-c--/garbage.jsonl" not in recs
    assert (
        recs["--work-c--/truncated.jsonl"]["status"] == "ok"
        and recs["--work-c--/truncated.jsonl"]["problems"]
    )
    again = run_bulk(str(src), str(out), ["ir", "pi"], jobs=2, quiet=True)
    assert (again.converted, again.up_to_date, again.failed, len(again.skipped)) == (0, 4, 0, 2)


def test_cli_exit_codes_summary_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    report = tmp_path / "report.json"
    assert main([str(src), "--to", "ir", "-o", str(out), "--report", str(report), "-j", "2"]) == 0
    err = capsys.readouterr().err
    assert "3 converted, 0 skipped as up to date, 0 failed" in err
    data = json.loads(report.read_text())
    assert data["converted"] == 3 and data["failed"] == 0 and data["formats"] == ["ir"]

    broken_tree(src)
    assert main([str(src), "--to", "ir", "-o", str(out), "--report", str(report)]) == 0
    err = capsys.readouterr().err
    assert "1 converted, 3 skipped as up to date, 0 failed" in err
    assert "2 skipped, not sessions: empty: 1, not-a-session: 1" in err
    assert "--work-c--/empty.jsonl: empty file: not a session" in err
    data = json.loads(report.read_text())
    assert data["failed"] == 0 and {s["input"] for s in data["skipped"]} == {
        "--work-c--/empty.jsonl",
        "--work-c--/garbage.jsonl",
    }
    assert data["problems_by_code"]

    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(conversation("x"))
    (src / "--work-c--" / "link.jsonl").symlink_to(outside)
    assert main([str(src), "--to", "ir", "-o", str(out), "--report", str(report)]) == 1
    err = capsys.readouterr().err
    assert "bulk:symlink-outside: 1" in err
    assert json.loads(report.read_text())["failures_by_code"] == {"bulk:symlink-outside": 1}

    assert main([str(src), "--to", "ir", "-o", str(out), "-q"]) == 1
    assert capsys.readouterr().err == ""  # --quiet: nothing at all
    assert main([str(src), "--to", "ir"]) == 2  # no -o
    assert main([str(src), "--to", "ir", "-o", str(out), "--leaf", "x"]) == 2
    assert main([str(src), "--to", "no-such-format", "-o", str(out)]) == 4
    assert main([str(src), "--to", "ir", "-o", str(out), "--scheduler", "tcp://x:1"]) == 2
    assert main([str(src), "--to", "ir", "-o", str(src)]) == 2  # output = input


def test_output_inside_input_is_not_read_back(tmp_path: Path) -> None:
    src = tmp_path / "s"
    make_tree(src)
    out = src / "archive"
    assert run_bulk(str(src), str(out), ["pi"], jobs=1, quiet=True).converted == 3
    again = run_bulk(str(src), str(out), ["pi"], jobs=1, quiet=True)
    assert (again.converted, again.up_to_date) == (0, 3)  # its own .jsonl outputs are not inputs


def test_second_run_on_same_outdir_is_refused_while_one_runs(tmp_path: Path) -> None:
    fcntl = pytest.importorskip("fcntl")
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    out.mkdir()
    fd = os.open(out / ".piconv-lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(piconv.UsageError, match="another piconv run"):
            run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True)
    finally:
        os.close(fd)
    assert run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True).converted == 3


# --------------------------------------------------------------------------- progress


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.text = ""
        self.tty = tty

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


def test_progress_bar_on_a_terminal_and_log_lines_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    tty = _Stream(True)
    p = Progress(3, 3000, tty)
    p.advance(1000)
    p.advance(1000, "a.jsonl: bulk:not-a-session: empty")
    p.advance(1000)
    p.close()
    assert "\r\x1b[K" in tty.text and "█" in tty.text
    assert (
        "3/3 files" in tty.text
        and "3.0 KB/3.0 KB" in tty.text
        and "1 failed" in tty.text
        and "ETA" in tty.text
    )
    assert "piconv: failed: a.jsonl: bulk:not-a-session: empty\n" in tty.text

    monkeypatch.setattr("piconv.bulk.progress.LOG_EVERY_S", 0.0)
    log = _Stream(False)
    p = Progress(2, 2000, log)
    p.advance(1000)
    p.advance(1000, "b.jsonl: x: y")
    p.close()
    assert "\r" not in log.text and "\x1b" not in log.text
    assert log.text.splitlines()[0].startswith("piconv: 1/2 files")
    assert "piconv: failed: b.jsonl: x: y" in log.text

    quiet = _Stream(True)
    p = Progress(1, 10, quiet, quiet=True)
    p.advance(10, "c: d: e")
    p.close()
    assert quiet.text == ""


def test_a_per_leaf_format_writes_one_output_per_leaf(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    (src / "--p--").mkdir(parents=True)
    example = Path(__file__).resolve().parents[1] / "examples" / "branching.jsonl"
    (src / "--p--" / "tree.jsonl").write_bytes(example.read_bytes())
    summary = run_bulk(str(src), str(out), ["openai"], jobs=1, quiet=True)
    assert (summary.converted, summary.failed) == (1, 0)
    leaves = piconv.load(example).leaves()
    assert len(leaves) == 5
    for n, leaf in enumerate(leaves, 1):
        written = out / "--p--" / f"tree.openai.leaf-{n}.json"
        single = tmp_path / f"single-{n}.json"
        assert main([str(example), "--to", "openai", "--leaf", leaf.id, "-o", str(single), "-q"]) == 0
        assert written.read_bytes() == single.read_bytes()
    rec = records(out)["--p--/tree.jsonl"]
    assert rec["outputs"]["openai"]["leaves"] == [f"--p--/tree.openai.leaf-{n}.json" for n in range(1, 6)]
    # up to date while every leaf output is there; a missing one redoes the format
    assert run_bulk(str(src), str(out), ["openai"], jobs=1, quiet=True).up_to_date == 1
    (out / "--p--" / "tree.openai.leaf-3.json").unlink()
    assert run_bulk(str(src), str(out), ["openai"], jobs=1, quiet=True).converted == 1
    assert (out / "--p--" / "tree.openai.leaf-3.json").is_file()


def test_a_lone_surrogate_in_a_session_reaches_every_output_and_the_manifest(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    (src / "--p--").mkdir(parents=True)
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}'
    user = b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"bad \\ud800 half","timestamp":1}}'
    (src / "--p--" / "x.jsonl").write_bytes(header + b"\n" + user + b"\n")
    summary = run_bulk(str(src), str(out), ["ir", "pi", "markdown", "html"], jobs=1, quiet=True)
    assert (summary.converted, summary.failed) == (1, 0), summary.failures
    rec = records(out)["--p--/x.jsonl"]
    assert rec["meta"]["first_prompt"].startswith("bad ")
    assert run_bulk(str(src), str(out), ["ir", "pi", "markdown", "html"], jobs=1, quiet=True).up_to_date == 1
