"""Index pages are the formats' own (``Converter.index``): a third-party format registered
through the hook gets its page written by a directory run, exactly as html and markdown
do; a run whose formats declare none writes none."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from piconv import Converter, ListedSession, hookimpl
from piconv import registry as registry_module
from piconv.bulk import run_bulk
from piconv.registry import Registry, build_registry

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_bulk import conversation, make_tree, snapshot

HEADING = b"sessions listed by the tally format\n"


class TallyPage:
    """A plain-text page: one line per session, with its project, title, turns and link."""

    file_name = "sessions.txt"

    def __init__(self) -> None:
        self.output_dirs: list[str] = []

    def render(self, projects: Mapping[str, Sequence[ListedSession]], output_dir: str) -> bytes:
        self.output_dirs.append(output_dir)
        lines = [
            f"{project}\t{s.title}\t{s.turns}\t{s.output}\t{s.link}"
            for project, sessions in projects.items()
            for s in sessions
        ]
        return HEADING + "".join(line + "\n" for line in lines).encode()

    def owns(self, existing: bytes) -> bool:
        return existing.startswith(HEADING)


def _write(document: Any, out: Any, options: Any, report: Any) -> None:
    out.write(f"{len(document.entries)} entries\n".encode())


class TallyPlugin:
    def __init__(self, page: Any) -> None:
        self.page = page

    @hookimpl
    def register_converters(self, register: Any) -> None:
        register(
            Converter(
                name="tally",
                summary="entries counted, with a page listing the sessions",
                extension=".txt",
                aliases=("txt",),  # the extension names the format: outputs are a.txt
                media_type="text/plain",
                write=_write,
                index=self.page,
            )
        )


@pytest.fixture
def registry_with(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Makes a registry with the given plugins the process's own (the worker asks it)."""

    def install(*plugins: object) -> Registry:
        registry = build_registry(extra_plugins=plugins, third_party=False)
        monkeypatch.setattr(registry_module, "_cached", registry)
        return registry

    yield install


def test_a_third_party_format_gets_its_index_page_written(tmp_path: Path, registry_with: Any) -> None:
    page = TallyPage()
    registry = registry_with(TallyPlugin(page))
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    # a session named like the page keeps out of its way, as index.jsonl does for html
    (src / "sessions.jsonl").write_bytes(conversation("top", "listed too", cwd="/work/top"))
    summary = run_bulk(str(src), str(out), ["tally"], jobs=1, quiet=True, registry=registry)
    assert summary.failed == 0, summary.failures
    assert summary.indexes == [str(out.resolve() / "sessions.txt")]
    assert page.output_dirs == [str(out.resolve())]
    text = (out / "sessions.txt").read_bytes()
    assert text.startswith(HEADING)
    rows = [line.split("\t") for line in text.decode().splitlines()[1:]]
    # grouped by project (sorted), newest first, each with its output and a link to it
    assert rows == [
        ["b", "refactor 0", "2", "--work-b--/2026-01-03_s3.txt", "./--work-b--/2026-01-03_s3.txt"],
        ["p", "write tests 0", "2", "--work-a--/2026-01-02_s2.txt", "./--work-a--/2026-01-02_s2.txt"],
        ["p", "fix the bug 0", "2", "--work-a--/2026-01-01_s1.txt", "./--work-a--/2026-01-01_s1.txt"],
        ["top", "listed too 0", "2", "sessions.session.txt", "./sessions.session.txt"],
    ]
    assert (out / "sessions.session.txt").read_bytes() == b"4 entries\n"

    before = snapshot(out)["sessions.txt"]
    again = run_bulk(str(src), str(out), ["tally"], jobs=1, quiet=True, registry=registry)
    assert again.indexes == summary.indexes and snapshot(out)["sessions.txt"] == before  # not rewritten
    (out / "--work-b--" / "2026-01-03_s3.txt").unlink()  # the user removed an output
    run_bulk(str(src), str(out), ["tally"], jobs=1, quiet=True, registry=registry, force=True)
    assert "refactor" in (out / "sessions.txt").read_text()  # converted again, listed again


def test_a_page_that_is_not_the_formats_own_is_left_with_a_note(tmp_path: Path, registry_with: Any) -> None:
    registry = registry_with(TallyPlugin(TallyPage()))
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    out.mkdir()
    (out / "sessions.txt").write_text("my own notes\n")
    summary = run_bulk(str(src), str(out), ["tally"], jobs=1, quiet=True, registry=registry)
    assert summary.indexes == [] and (out / "sessions.txt").read_text() == "my own notes\n"
    assert any("sessions.txt: not written by piconv" in note for note in summary.notes)


class BrokenPage(TallyPage):
    def render(self, projects: Mapping[str, Sequence[ListedSession]], output_dir: str) -> bytes:
        raise RuntimeError("out of ink")


def test_a_page_that_fails_costs_the_page_not_the_run(tmp_path: Path, registry_with: Any) -> None:
    registry = registry_with(TallyPlugin(BrokenPage()))
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    summary = run_bulk(str(src), str(out), ["tally"], jobs=1, quiet=True, registry=registry)
    assert (summary.converted, summary.failed, summary.fatal) == (3, 0, None)
    assert summary.indexes == [] and not (out / "sessions.txt").exists()
    assert any("could not render its index page: RuntimeError: out of ink" in note for note in summary.notes)


def test_a_run_whose_formats_declare_no_page_writes_none(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "o"
    make_tree(src)
    (src / "index.jsonl").write_bytes(conversation("top", "at the top"))
    summary = run_bulk(str(src), str(out), ["ir", "pi", "sqlite"], jobs=1, quiet=True)
    assert summary.failed == 0, summary.failures
    assert summary.indexes == []
    top = {p.name for p in out.iterdir()}
    assert top == {
        "--work-a--",
        "--work-b--",
        "index.ir.json",
        "index.pi.jsonl",
        "archive.db",
        "archive.metadata.json",
        ".piconv-manifest.jsonl",
        ".piconv-lock",
    }
