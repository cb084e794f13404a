"""Bulk export safety: hostile names, symlinks, temporary files, and a run killed with -9."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SHARED
from piconv.bulk import run_bulk
from piconv.bulk.worker import clean_temps
from piconv.output import TEMP_NAME

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
from test_bulk import conversation, make_tree, records, snapshot  # noqa: E402

HOSTILE_NAMES = [
    "<script>alert(1)<\\script>.jsonl",
    '" onmouseover="alert(1).jsonl',
    "-rf --no-preserve-root.jsonl",
    "..jsonl",
    "...jsonl",
    "line\nbreak.jsonl",
    "ünïcødé 会话 🚀.jsonl",
    "javascript:alert(1).jsonl",
    "%2e%2e%2f%2e%2e%2fetc.jsonl",
    "index.jsonl",
    ".hidden.jsonl",
]


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def test_hostile_names_stay_inside_outdir(tmp_path: Path) -> None:
    src, out, outside = tmp_path / "s", tmp_path / "o", tmp_path / "outside"
    outside.mkdir()
    (src / "--proj--").mkdir(parents=True)
    for i, name in enumerate(HOSTILE_NAMES):
        hostile = "../../outside/pwned"  # a session can say anything: it must steer nothing
        data = conversation(f"{hostile}-{i}", prompt="</td><script>alert(1)</script>", cwd="../../outside")
        (src / name).write_bytes(data)
        (src / "--proj--" / name).write_bytes(data)
    summary = run_bulk(str(src), str(out), ["html", "ir"], jobs=2, quiet=True)
    assert summary.failed == 0, summary.failures
    assert summary.converted == 2 * len(HOSTILE_NAMES)
    assert files_under(outside) == set()
    written = files_under(out)
    for name in HOSTILE_NAMES:
        stem = name[: -len(".jsonl")]
        html = "index.session.html" if name == "index.jsonl" else f"{stem}.html"
        assert html in written and f"--proj--/{stem}.html" in written
        assert f"{stem}.ir.json" in written
    assert "index.html" in written  # the archive's index, not index.jsonl's page
    index = (out / "index.html").read_text()
    assert "<script>alert(1)" not in index and 'onmouseover="alert' not in index
    assert 'href="javascript' not in index and 'href="./javascript%3Aalert%281%29.html"' in index
    for rel in written:
        assert (out / rel).resolve().is_relative_to(out.resolve())


def test_symlinks_outside_are_refused_inside_followed(tmp_path: Path) -> None:
    src, out, outside = tmp_path / "s", tmp_path / "o", tmp_path / "outside"
    make_tree(src)
    outside.mkdir()
    secret = outside / "secret.jsonl"
    secret.write_bytes(conversation("secret", "private"))
    (outside / "more").mkdir()
    (outside / "more" / "x.jsonl").write_bytes(conversation("x"))
    (src / "--work-a--" / "escape.jsonl").symlink_to(secret)
    (src / "--work-a--" / "dotdot.jsonl").symlink_to("../../outside/secret.jsonl")
    (src / "linked-dir").symlink_to(outside / "more", target_is_directory=True)
    (src / "--work-b--" / "alias.jsonl").symlink_to(src / "--work-a--" / "2026-01-01_s1.jsonl")
    (src / "--work-b--" / "dangling.jsonl").symlink_to(src / "nowhere.jsonl")
    summary = run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True)
    assert summary.converted == 4  # three sessions and the in-tree alias
    assert summary.refused == 4 and not summary.ok
    codes = {f["input"]: f["code"] for f in summary.failures}
    assert codes == {
        "--work-a--/escape.jsonl": "bulk:symlink-outside",
        "--work-a--/dotdot.jsonl": "bulk:symlink-outside",
        "linked-dir": "bulk:symlink-outside",
        "--work-b--/dangling.jsonl": "bulk:unreadable",
    }
    assert not (out / "--work-a--" / "escape.ir.json").exists()
    assert not (out / "linked-dir").exists()
    assert (out / "--work-b--" / "alias.ir.json").is_file()
    assert secret.read_bytes() == conversation("secret", "private")  # inputs never modified


def test_symlink_planted_in_outdir_is_not_written_through(tmp_path: Path) -> None:
    src, out, elsewhere = tmp_path / "s", tmp_path / "o", tmp_path / "elsewhere"
    make_tree(src)
    out.mkdir()
    elsewhere.mkdir()
    (out / "--work-b--").symlink_to(elsewhere, target_is_directory=True)
    summary = run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True)
    assert summary.converted == 2 and summary.failed == 1
    assert summary.failure_codes == {"bulk:unsafe-path": 1}
    assert files_under(elsewhere) == set()


def test_inputs_are_never_modified(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in src.rglob("*") if p.is_file()}
    run_bulk(str(src), str(out), ["ir", "pi", "html"], jobs=2, quiet=True)
    run_bulk(str(src), str(out), ["ir", "pi", "html"], jobs=2, quiet=True, force=True)
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in src.rglob("*") if p.is_file()} == before


def test_leftover_temporary_files_are_cleaned_and_only_those(tmp_path: Path) -> None:
    out = tmp_path / "o"
    (out / "p").mkdir(parents=True)
    ours = [
        out / "p" / ".piconv-0123456789ab.tmp",
        out / "p" / ".a.html.4242-deadbeef.piconv-tmp",
    ]  # now, earlier
    for o in ours:
        o.write_bytes(b"half")
    users = [
        out / "p" / ".notes.tmp",
        out / "p" / "mine.piconv-tmp",
        out / "p" / ".piconv-mine.tmp",
        out / "p" / "a.html.123.tmp",
    ]
    for u in users:
        u.write_bytes(b"keep")
    assert clean_temps(str(out)) == 2
    assert not any(o.exists() for o in ours) and all(u.exists() for u in users)


def test_torn_manifest_line_is_ignored(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True)
    manifest = out / ".piconv-manifest.jsonl"
    lines = manifest.read_bytes().splitlines(keepends=True)
    manifest.write_bytes(b"".join(lines[:-1]) + lines[-1][:25])  # power cut mid-append
    again = run_bulk(str(src), str(out), ["ir"], jobs=1, quiet=True)
    assert (again.converted, again.up_to_date) == (1, 2)
    assert len(records(out)) == 3


# --------------------------------------------------------------------------- kill -9


def _corpus(root: Path, copies: int) -> None:
    big = SHARED / "corpus" / "pi" / "castai__kimchi-dev__session.jsonl"
    for i in range(copies):
        folder = root / f"--proj-{i % 3}--"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(big, folder / f"s{i:03d}.jsonl")


def _piconv(src: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "piconv",
        str(src),
        "--to",
        "html",
        "--to",
        "ir",
        "-o",
        str(out),
        "-j",
        "2",
        "-q",
    ]


@pytest.mark.shared
def test_kill_9_mid_run_leaves_no_partial_output_and_rerun_repairs(tmp_path: Path) -> None:
    src, out, ref = tmp_path / "s", tmp_path / "o", tmp_path / "ref"
    _corpus(src, 12)
    assert subprocess.run(_piconv(src, ref), check=False).returncode == 0
    expected = {k: v[1] for k, v in snapshot(ref).items()}

    proc = subprocess.Popen(_piconv(src, out), start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(p.suffix == ".html" for p in out.rglob("*.html")):
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)  # the whole group: parent and pool workers, like a power cut
    proc.wait()
    assert proc.returncode == -signal.SIGKILL

    seen = snapshot(out)
    finals = {k: v[1] for k, v in seen.items() if not TEMP_NAME.match(k.rsplit("/", 1)[-1])}
    assert finals, "the run was killed before writing anything: make the corpus larger"
    assert len([k for k in finals if k.endswith(".html")]) < 12, "the run finished before the kill"
    for rel, data in finals.items():
        assert data == expected[rel], f"{rel} is visible but not complete"

    rerun = subprocess.run([*_piconv(src, out), "--report", str(tmp_path / "r.json")], check=False)
    assert rerun.returncode == 0
    assert {k: v[1] for k, v in snapshot(out).items()} == expected  # repaired, temporaries gone
    assert not [p for p in out.rglob("*") if TEMP_NAME.match(p.name)]
    assert len(records(out)) == 12
