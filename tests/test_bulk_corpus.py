"""End to end: a directory run over the whole corpus equals the single-file conversions.

The sessions directory holds every corpus session (``corpus/pi`` and ``corpus/pi-generated``)
in pi's own layout: ``SESSIONS/--<cwd>--/<file>.jsonl``, one project folder per working
directory, named as pi names it. Several sessions share a folder (the four of pi-mono) and
others are alone in theirs (the generated images session): so a format's files written beside
its output (Markdown's images folder) meet both a folder another session already made and
one not made yet, which is when a directory run and a single conversion differ most.

``piconv SESSIONS --to FORMAT -o OUT`` runs through the command line's entry point, in every
built-in format (taken from the registry, so a new one is covered without editing this file),
each alone and all together (a format whose extension does not name it gets its name in the
file name, whichever formats the run has), with ``--jobs 1`` and ``--jobs 2``. Every output is held byte for byte to
``piconv FILE --to FORMAT -o X`` of the same file, with the files written beside it; a per-leaf
format's outputs to ``--leaf`` conversions of each leaf. The one-database archive format
(sqlite) is compared row by row instead of byte by byte: the archive's rows for a session are
the single database's, except the columns docs/formats/sqlite.md says a directory run fills
differently (``key``, ``sha256``, ``html``; and for the fork of the corpus, linked to its
parent, ``parent``, ``relation``, its own ``tokens``, ``cost`` and ``turns``, and its entries'
``inherited``). Whatever else is in OUT must be exactly what
docs/bulk.md lists under "What OUTDIR holds" for the formats of the run.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import REPO, corpus_files
from piconv import load
from piconv.cli import main
from piconv.registry import build_registry

pytestmark = pytest.mark.shared

BUILT_IN = {conv.name: conv for conv in build_registry(third_party=False).formats()}
FORMATS = sorted(BUILT_IN)
RUNS = [(name,) for name in FORMATS] + [tuple(FORMATS)]
DOCUMENTED = REPO / "docs" / "bulk.md"
SECTION = "## What OUTDIR holds"


def project_folder(cwd: str) -> str:
    """The folder pi keeps a working directory's sessions in (pi's session manager:
    the leading separator dropped, every ``/``, ``\\`` and ``:`` made a ``-``)."""
    return "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"


def header_cwd(path: Path) -> str | None:
    with path.open("rb") as fh:
        first = fh.readline()
    try:
        header = orjson.loads(first)
    except orjson.JSONDecodeError:
        return None
    cwd = header.get("cwd") if isinstance(header, dict) else None
    return cwd if isinstance(cwd, str) and cwd else None


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """The sessions directory and its sessions by path below it."""
    root = Path(os.path.realpath(tmp_path_factory.mktemp("sessions")))
    by_rel: dict[str, Path] = {}
    for source in corpus_files():
        cwd = header_cwd(source)
        folder = project_folder(cwd) if cwd else source.parent.name
        rel = f"{folder}/{source.name}"
        assert rel not in by_rel, f"two corpus sessions would be {rel}"
        (root / folder).mkdir(exist_ok=True)
        shutil.copyfile(source, root / rel)
        by_rel[rel] = root / rel
    assert len(by_rel) >= 20, "the corpus is incomplete"
    shared_folders = {rel.split("/")[0] for rel in by_rel}
    assert len(shared_folders) < len(by_rel), "no project folder holds several sessions"
    return root, by_rel


class Singles:
    """Single-file conversions through the command line, each into a folder of its own
    (so the files it writes beside its output are known), made once and kept."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.made: dict[tuple[str, str, str, str | None], Path] = {}

    def folder(self, session: Path, fmt: str, name: str, leaf: str | None = None) -> Path:
        """The folder holding ``piconv SESSION --to FMT [--leaf LEAF] -o NAME`` and
        whatever it wrote beside NAME."""
        key = (str(session), fmt, name, leaf)
        if key not in self.made:
            folder = self.base / str(len(self.made))
            folder.mkdir()
            args = [os.path.realpath(session), "--to", fmt, "-o", str(folder / name), "-q"]
            code = main([*args, "--leaf", leaf] if leaf is not None else args)
            assert code == 0, f"piconv {' '.join(args)} exited {code}"
            self.made[key] = folder
        return self.made[key]


@pytest.fixture(scope="module")
def singles(tmp_path_factory: pytest.TempPathFactory) -> Singles:
    return Singles(tmp_path_factory.mktemp("single"))


@pytest.fixture(scope="module")
def leaves(sessions: tuple[Path, dict[str, Path]]) -> dict[str, list[str]]:
    """Each session's leaf ids in document order (the order a directory run numbers them)."""
    return {rel: [leaf.id for leaf in load(str(path)).leaves()] for rel, path in sessions[1].items()}


def documented_extras(formats: Sequence[str]) -> set[str]:
    """The run's own files docs/bulk.md lists for a run in ``formats``: the rows of the
    section's table naming one file at the top of OUTDIR, written on "every run" or for
    a ``--to FORMAT`` of the run."""
    text = DOCUMENTED.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/bulk.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    extras = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        named = re.fullmatch(r"`([^`/ ]+)`", cells[0]) if len(cells) >= 3 else None
        if named is None:
            continue
        wanted = set(re.findall(r"`--to (\w+)`", cells[1]))
        if cells[1].startswith("every run") or wanted & set(formats):
            extras.add(named.group(1))
    return extras


def tree(top: Path) -> Iterator[tuple[str, bool]]:
    """Every path below ``top`` (relative, ``/``-separated) and whether it is a directory."""
    for dirpath, dirs, files in os.walk(top):
        here = Path(dirpath).relative_to(top).as_posix()
        for name in dirs:
            yield (name if here == "." else f"{here}/{name}"), True
        for name in files:
            yield (name if here == "." else f"{here}/{name}"), False


def outputs_of(
    formats: Sequence[str], rel: str, leaf_ids: list[str]
) -> Iterator[tuple[str, str, str | None]]:
    """(format, the output's path below OUTDIR, leaf or None) for every output a directory
    run in ``formats`` writes for the session ``rel``, named as docs/bulk.md says: the
    input's path with the format's extension, ``.FORMAT`` before it when two formats of the
    extension does not name it (whatever other formats the run has), ``.leaf-N`` for the
    Nth leaf of a per-leaf format."""
    folder, _, file_name = rel.rpartition("/")
    stem = file_name.removesuffix(".jsonl")
    for name in formats:
        conv = BUILT_IN[name]
        ext = conv.extension
        if conv.archive is not None:
            continue
        names_it = ext.lstrip(".").lower() in (conv.name, *conv.aliases)
        tagged = stem if names_it else f"{stem}.{name}"
        if conv.per_leaf:
            for number, leaf in enumerate(leaf_ids, 1):
                yield name, f"{folder}/{tagged}.leaf-{number}{ext}", leaf
        else:
            yield name, f"{folder}/{tagged}{ext}", None


LINKS = {
    "--home-dev-projects-pisg-branching-s1--/branching-fork.jsonl": (
        "--home-dev-projects-pisg-branching-s1--/branching.jsonl",
        "fork",
    ),
    # forks whose parent (/legacy/parent.jsonl) is not in the corpus
    "--legacy-project--/Whamp__pi-session-recall__pi-v1-canonical-equivalent.jsonl": (None, "fork"),
    "--legacy-project--/Whamp__pi-session-recall__pi-v1-linear.jsonl": (None, "fork"),
}
"""The corpus's sessions whose header names the session they were forked from: the
parent found below the sessions folder (or None) and the relation."""


def rows(database: Path, key: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The session ``key``'s row and its entries' rows (in order), without the row ids
    that only number rows within one database."""
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        cursor = conn.execute("SELECT * FROM sessions WHERE key = ?", (key,))
        names = [d[0] for d in cursor.description]
        found = cursor.fetchall()
        assert len(found) == 1, f"{database.name}: {len(found)} sessions keyed {key}"
        session = dict(zip(names, found[0], strict=True))
        cursor = conn.execute("SELECT * FROM entries WHERE session = ? ORDER BY pk", (session.pop("pk"),))
        names = [d[0] for d in cursor.description]
        entries = [
            {k: v for k, v in zip(names, row, strict=True) if k not in ("pk", "session")}
            for row in cursor.fetchall()
        ]
    finally:
        conn.close()
    return session, entries


def archive_keys(database: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return {key for (key,) in conn.execute("SELECT key FROM sessions")}
    finally:
        conn.close()


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("formats", RUNS, ids=lambda run: "all" if len(run) > 1 else run[0])
def test_directory_run_equals_single_conversions(
    formats: tuple[str, ...],
    jobs: int,
    sessions: tuple[Path, dict[str, Path]],
    singles: Singles,
    leaves: dict[str, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, by_rel = sessions
    out, report_path = tmp_path / "out", tmp_path / "report.json"
    to = [arg for name in formats for arg in ("--to", name)]
    # Relative paths, as typed in a shell: a directory run records each session's
    # absolute path (docs/bulk.md), which the single conversions are given.
    monkeypatch.chdir(tmp_path)
    code = main([os.path.relpath(root), *to, "-o", "out", "--jobs", str(jobs), "--report", "report.json"])
    err = capsys.readouterr().err
    report = orjson.loads(report_path.read_bytes())
    failures = [f"{f['input']} [{f['format']}]: {f['code']}: {f['message']}" for f in report["failures"]]
    assert failures == [], "\n".join(failures)
    assert (code, report["failed"], report["refused"], report["fatal"]) == (0, 0, 0, None), err
    assert report["converted"] == len(by_rel)
    assert re.search(r"^piconv: \d+ converted, 0 skipped as up to date, 0 failed ", err, re.M), err

    compared: set[str] = set()
    mismatches: list[str] = []
    for rel, session in sorted(by_rel.items()):
        folder = rel.rpartition("/")[0]
        for name, rel_out, leaf in outputs_of(formats, rel, leaves[rel]):
            single = singles.folder(session, name, rel_out.rpartition("/")[2], leaf)
            for part, is_dir in tree(single):
                placed = f"{folder}/{part}"
                compared.add(placed)
                if is_dir:
                    if not (out / placed).is_dir():
                        mismatches.append(f"{placed}: no such directory ({name})")
                elif not (out / placed).is_file():
                    mismatches.append(f"{placed}: missing ({name})")
                elif (out / placed).read_bytes() != (single / part).read_bytes():
                    mismatches.append(f"{placed}: differs from the single conversion ({name})")
        compared.add(folder)
    assert mismatches == [], "\n".join(mismatches)

    for name in formats:
        archive = BUILT_IN[name].archive
        if archive is None:
            continue
        database = out / archive.file_name
        assert archive_keys(database) == set(by_rel)
        for rel, session in sorted(by_rel.items()):
            stem = rel.rpartition("/")[2].removesuffix(".jsonl")
            single = singles.folder(session, name, stem + BUILT_IN[name].extension)
            one, one_entries = rows(single / (stem + BUILT_IN[name].extension), session.name)
            many, many_entries = rows(database, rel)
            # keyed by the path below the input, with the file's hash and the html page
            # the same run wrote (docs/formats/sqlite.md); a single database has neither
            html = rel.removesuffix(".jsonl") + ".html" if "html" in formats else None
            assert (many.pop("key"), many.pop("sha256"), many.pop("html")) == (
                rel,
                hashlib.sha256(session.read_bytes()).hexdigest(),
                html,
            ), rel
            assert (one.pop("key"), one.pop("sha256"), one.pop("html")) == (session.name, None, None), rel
            assert (one.pop("parent"), one.pop("relation")) == (None, None), rel  # one session: no link
            parent, relation = many.pop("parent"), many.pop("relation")
            assert (parent, relation) == LINKS.get(rel, (None, None)), rel
            assert not any(e.pop("inherited") for e in one_entries), rel
            if parent is None:  # linked to no session here: as its own database has it
                assert not any(e.pop("inherited") for e in many_entries), rel
                assert many == one, rel
                assert many_entries == one_entries, rel
                continue
            # the fork, linked: its copies of its parent's entries are counted there
            inherited = [e for e in many_entries if e.pop("inherited")]
            assert inherited and many_entries == one_entries, rel
            own = [e for e in many_entries if e not in inherited]
            assert many.pop("tokens") == sum(e["tokens"] or 0 for e in own) < one.pop("tokens"), rel
            assert many.pop("turns") == sum(e["role"] == "user" for e in own), rel
            many.pop("cost"), one.pop("turns"), one.pop("cost")
            assert many == one, rel

    extras = {part for part, _is_dir in tree(out)} - compared
    assert extras == documented_extras(formats)
