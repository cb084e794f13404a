"""``piconv list``, ``piconv stats``, sessions named by id, ``--latest``, ``--open`` and the
command conventions, over a pi-shaped session directory built from the examples: two
projects, a session and its fork (its copies of the parent's entries), a subagent run, an
extension's log that is no session. Reads nothing outside the repository."""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import piconv
import pytest
from conftest import REPO
from piconv.bulk.select import parse_date
from piconv.catalog.find import pi_folder
from piconv.catalog.render import id_width
from piconv.facts import scan_document

EXAMPLES = REPO / "examples"
FORK_ID = "f0f0f0f0-0000-4000-8000-000000000001"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


def _fork(parent: Path, target: Path, keep: int) -> Path:
    """What pi's /fork writes: a new header naming the parent, the parent's first ``keep``
    entries copied as they are, then a turn of its own."""
    records = _lines(parent)
    header = {
        "type": "session",
        "version": 3,
        "id": FORK_ID,
        "timestamp": "2026-12-01T09:00:00.000Z",
        "cwd": records[0]["cwd"],
        "parentSession": str(parent),
    }
    copied = records[1 : 1 + keep]
    last = copied[-1]["id"]
    own = [
        {
            "type": "message",
            "id": "f0000001",
            "parentId": last,
            "timestamp": "2026-12-01T09:00:01.000Z",
            "message": {"role": "user", "content": "and now the fork's own question", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "f0000002",
            "parentId": "f0000001",
            "timestamp": "2026-12-01T09:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "an answer"}],
                "api": "faux",
                "provider": "faux",
                "model": "faux-coder",
                "usage": {
                    "input": 100,
                    "output": 20,
                    "cacheRead": 5,
                    "cacheWrite": 1,
                    "totalTokens": 126,
                    "cost": {
                        "input": 0.001,
                        "output": 0.002,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "total": 0.003,
                    },
                },
                "stopReason": "stop",
                "timestamp": 2,
            },
        },
    ]
    return _write(target, [header, *copied, *own])


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``sessions/`` as pi lays it out, with a fork, and an extension's log beside them."""
    root = tmp_path / "sessions"
    branching = (
        root / "--home-dev-projects-pisg-branching-s1--" / "2026-11-30T06-42-56-581Z_01a22b31-3bc5.jsonl"
    )
    branching.parent.mkdir(parents=True)
    branching.write_bytes((EXAMPLES / "branching.jsonl").read_bytes())
    basic = root / "--home-dev-projects-pisg-basic-s1--" / "2026-11-30T06-42-56-000Z_01a22b31-3c39.jsonl"
    basic.parent.mkdir(parents=True)
    basic.write_bytes((EXAMPLES / "basic.jsonl").read_bytes())
    _fork(branching, branching.parent / f"2026-12-01T09-00-00-000Z_{FORK_ID}.jsonl", keep=12)
    (branching.parent / "events.jsonl").write_text('{"event":"tool_call","ok":true}\n')
    return root


def run(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piconv", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "100", **(env or {})},
    )


def _pi_home(tmp_path: Path, sessions: Path) -> dict[str, str]:
    """An environment in which pi's session directory is ``sessions``."""
    return {"PI_CODING_AGENT_SESSION_DIR": str(sessions), "HOME": str(tmp_path / "home")}


# --------------------------------------------------------------------------- the list


def test_the_list_shows_each_session_once_forks_under_their_parent(tree: Path) -> None:
    catalog = piconv.sessions(tree)
    assert len(catalog) == 3
    assert [p.rel.rsplit("/", 1)[-1] for p in catalog.passed] == ["events.jsonl"]
    by_id = {s.id: s for s in catalog}
    fork = by_id[FORK_ID]
    parent = next(s for s in catalog if s.rel.endswith("01a22b31-3bc5.jsonl"))
    assert (fork.relation, fork.parent) == ("fork", parent.rel)
    assert fork.copied > 0
    # the fork counts only what it added: one turn, one call
    assert (fork.turns, fork.tokens, fork.input, fork.cost) == (1, 126, 100, 0.003)
    whole = scan_document(piconv.load(fork.path)).spends
    assert sum(s.tokens for s in whole) > fork.tokens  # its file holds the copies too
    nested = catalog.nested()
    at = [s.id for s, _ in nested].index(parent.id)
    assert nested[at + 1] == (fork, 1)
    assert catalog[0].updated >= catalog[-1].updated  # newest first


def test_list_as_json_and_as_a_table_that_fits(tree: Path) -> None:
    result = run("list", str(tree), "--json")
    assert result.returncode == 0, result.stderr
    value = json.loads(result.stdout)
    assert {s["id"] for s in value["sessions"]} >= {FORK_ID}
    fork = next(s for s in value["sessions"] if s["id"] == FORK_ID)
    assert fork["depth"] == 1 and fork["relation"] == "fork" and fork["tokens"] == 126
    assert value["passed"][0]["code"] == "not-a-session"
    for width in ("60", "100", "160"):
        table = run("list", str(tree), env={"COLUMNS": width})
        assert table.returncode == 0, table.stderr
        lines = table.stdout.splitlines()
        assert lines[0].split()[:2] == (["ID", "TITLE"] if width == "60" else ["ID", "PROJECT"])
        assert all(len(line) <= int(width) for line in lines[:-1]), table.stdout
        assert "↳ " in table.stdout and "3 sessions" in table.stdout
    assert "(1 file passed over: --json says why)" in run("list", str(tree)).stdout


def test_list_selects_by_project_and_dates(tree: Path) -> None:
    only = json.loads(run("list", str(tree), "--project", "*basic*", "--json").stdout)["sessions"]
    assert [s["project"] for s in only] == ["pisg-basic-s1"]
    late = json.loads(run("list", str(tree), "--since", "2026-12-01", "--json").stdout)["sessions"]
    assert [s["id"] for s in late] == [FORK_ID]
    early = json.loads(run("list", str(tree), "--until", "2026-11-30", "--json").stdout)["sessions"]
    assert FORK_ID not in {s["id"] for s in early} and len(early) == 2


def test_ids_are_shown_long_enough_to_tell_sessions_apart() -> None:
    assert id_width(["01a22b31-3bc5", "01a22b31-3c39"]) == 11
    assert id_width(["abcdef0123", "99999999"]) == 8


# --------------------------------------------------------------------------- stats


@pytest.mark.parametrize(
    "by",
    [
        ("day",),
        ("week",),
        ("month",),
        ("project",),
        ("model",),
        ("session",),
        ("day", "model"),
        ("month", "project", "session"),
    ],
)
def test_every_row_adds_up_to_the_total(tree: Path, by: tuple[str, ...]) -> None:
    report = piconv.usage(tree, by=by)
    assert report.rows and report.by == by
    for field in ("input", "output", "cache_read", "cache_write", "tokens", "calls"):
        assert sum(getattr(r, field) for r in report.rows) == getattr(report.total, field), field
    assert abs(sum(r.cost for r in report.rows) - report.total.cost) < 1e-9
    assert len({r.key for r in report.rows}) == len(report.rows)
    # the total counts each entry once: the sessions' own figures, forks without their copies
    assert report.total.tokens == sum(s.tokens for s in piconv.sessions(tree))


def test_stats_groups_by_what_it_is_asked(tree: Path) -> None:
    by_day = piconv.usage(tree, by=["day"])
    assert [r.key for r in by_day.rows] == [("2026-11-30",), ("2026-12-01",)]
    assert by_day.rows[1].tokens == 126 and by_day.rows[1].sessions == 1
    weeks = piconv.usage(tree, by=["week"])
    assert [r.key[0] for r in weeks.rows] == ["2026-W49"]
    models = {r.key[0] for r in piconv.usage(tree, by=["model"]).rows}
    assert "faux/faux-coder" in models
    tokyo = piconv.usage(tree, by=["day"], timezone="Asia/Tokyo")
    assert tokyo.total.tokens == by_day.total.tokens and tokyo.timezone == "Asia/Tokyo"
    assert {r.key[0] for r in tokyo.rows} <= {"2026-11-30", "2026-12-01"}
    assert piconv.usage(tree, since="2026-12-01").total.tokens == 126
    assert piconv.usage(tree, until="2026-11").total.tokens == by_day.total.tokens - 126
    assert piconv.usage(tree, project="*basic*").total.tokens == next(
        s.tokens for s in piconv.sessions(tree) if s.project == "pisg-basic-s1"
    )


def test_stats_of_files_and_of_a_directory_agree(tree: Path) -> None:
    files = sorted(str(p) for p in tree.rglob("*_*.jsonl"))
    assert piconv.usage(files, by=["session"]).total.tokens == piconv.usage(tree).total.tokens


def test_stats_on_the_command_line(tree: Path) -> None:
    table = run("stats", str(tree), "--by", "day,model")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[:3] == ["DAY", "MODEL", "INPUT"]
    assert "total" in table.stdout
    as_json = json.loads(run("stats", str(tree), "--by", "model", "--json").stdout)
    assert as_json["by"] == ["model"] and as_json["total"]["tokens"] == sum(
        r["tokens"] for r in as_json["rows"]
    )
    rows = list(csv.reader(io.StringIO(run("stats", str(tree), "--by", "day", "--csv").stdout)))
    assert rows[0][:2] == ["day", "input"] and len(rows) == 3
    assert run("stats", str(tree), "--by", "hour").returncode == 2
    assert run("stats", str(tree), "--json", "--csv").returncode == 2
    assert run("stats", str(tree), "--timezone", "Mars/Olympus").returncode == 2


def test_relative_dates() -> None:
    from datetime import date

    today = date(2026, 3, 1)
    assert parse_date("today", "--since", today) == "2026-03-01"
    assert parse_date("yesterday", "--since", today) == "2026-02-28"
    assert parse_date("7d", "--since", today) == "2026-02-22"
    assert parse_date("2 weeks ago", "--since", today) == "2026-02-15"
    assert parse_date("20260105", "--since", today) == "2026-01-05"
    with pytest.raises(piconv.UsageError, match="last-tuesday"):
        parse_date("last-tuesday", "--since", today)


# --------------------------------------------------------------------------- sessions by name


def test_a_session_named_by_id_or_file_name(tree: Path, tmp_path: Path) -> None:
    env = _pi_home(tmp_path, tree)
    one = run(FORK_ID[:8], "--to", "ir", env=env, cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert json.loads(one.stdout)["session"]["id"] == FORK_ID
    by_stem = run("inspect", "2026-11-30T06-42-56-000Z_01a22b31-3c39", "--json", env=env, cwd=tmp_path)
    assert by_stem.returncode == 0 and json.loads(by_stem.stdout)["reader"] == "pi"
    both = run("01a22b31", "--to", "md", env=env, cwd=tmp_path)
    assert both.returncode == 2
    assert (
        "names 2 sessions" in both.stderr
        and "01a22b31-3bc5" in both.stderr
        and "01a22b31-3c39" in both.stderr
    )
    none = run("deadbeef", "--to", "md", env=env, cwd=tmp_path)
    assert none.returncode == 3 and "no session" in none.stderr
    diff = run("diff", "2026-11-30T06-42-56-000Z_01a22b31-3c39", FORK_ID[:8], "--json", env=env, cwd=tmp_path)
    assert diff.returncode == 0, diff.stderr
    shared = run("share", FORK_ID[:8], "--dry-run", "-o", str(tmp_path / "s.html"), env=env, cwd=tmp_path)
    assert shared.returncode == 0, shared.stderr
    assert (tmp_path / "s.html").is_file()
    stats = run("stats", FORK_ID[:8], "--json", env=env, cwd=tmp_path)
    assert (
        stats.returncode == 0 and json.loads(stats.stdout)["total"]["tokens"] > 126
    )  # the file alone: copies too


def test_latest_is_the_newest_session_of_this_directory(tmp_path: Path) -> None:
    project = tmp_path / "work"
    project.mkdir()
    sessions = tmp_path / "sessions"
    folder = sessions / pi_folder(str(project))
    old = _write(folder / "old.jsonl", _lines(EXAMPLES / "basic.jsonl"))
    new = _write(folder / "new.jsonl", _lines(EXAMPLES / "branching.jsonl"))
    _write(sessions / "--elsewhere--" / "x.jsonl", _lines(EXAMPLES / "basic.jsonl"))
    os.utime(old, (1_000_000_000, 1_000_000_000))
    result = run("--latest", "--to", "ir", cwd=project, env=_pi_home(tmp_path, sessions))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["session"]["id"] == _lines(new)[0]["id"]
    assert "latest session" in result.stderr and str(new) in result.stderr
    inspect = run("inspect", "--latest", "--json", cwd=project, env=_pi_home(tmp_path, sessions))
    assert inspect.returncode == 0
    nowhere = run("--latest", "--to", "ir", cwd=tmp_path, env=_pi_home(tmp_path, sessions))
    assert nowhere.returncode == 3 and "no session of" in nowhere.stderr


def test_open_never_opens_stdout_or_without_a_display(tmp_path: Path) -> None:
    env = {"DISPLAY": "", "WAYLAND_DISPLAY": ""}
    written = run(
        str(EXAMPLES / "basic.jsonl"), "--to", "html", "-o", str(tmp_path / "b.html"), "--open", env=env
    )
    assert written.returncode == 0 and "no display to open" in written.stderr
    piped = run(str(EXAMPLES / "basic.jsonl"), "--to", "md", "--open", env=env)
    assert piped.returncode == 0 and "went to stdout" in piped.stderr


# --------------------------------------------------------------------------- conventions


def test_help_and_a_mistyped_command_say_what_exists() -> None:
    listed = run("help")
    assert listed.returncode == 0
    for name in ("list", "stats", "search", "inspect", "validate"):
        assert f"  {name}" in listed.stdout
    assert run("help", "stats").stdout.startswith("usage: piconv stats")
    typo = run("lsit")
    assert typo.returncode == 2 and "did you mean 'list'" in typo.stderr and "the commands are" in typo.stderr


def test_validate_tells_the_format_by_name_and_counts_after_a_cap(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(f'{{"bad": {i}}}\n' for i in range(40)))
    ambiguous = run("validate", str(bad))
    assert ambiguous.returncode == 2 and "-f FORMAT" in ambiguous.stderr and "asf" in ambiguous.stderr
    capped = run("validate", str(bad), "-f", "asf")
    assert capped.returncode == 5
    problems = [line for line in capped.stderr.splitlines() if line.startswith(str(bad) + ": line")]
    assert len(problems) == 20 and "more problems (--all shows every one)" in capped.stderr
    every = run("validate", str(bad), "-f", "asf", "--all")
    assert len([ln for ln in every.stderr.splitlines() if ln.startswith(str(bad) + ": line")]) > 20
    page = tmp_path / "page.md"
    page.write_bytes(
        subprocess.run(
            [sys.executable, "-m", "piconv", str(EXAMPLES / "basic.jsonl"), "--to", "md"],
            capture_output=True,
            check=True,
        ).stdout
    )
    assert run("validate", str(page)).stdout.strip().endswith("valid markdown")


def test_the_same_options_mean_the_same_everywhere() -> None:
    """``-f`` names the input's format in every command that takes one."""
    for command in (["--help"], ["inspect", "--help"], ["validate", "--help"]):
        text = run(*command).stdout
        assert "-f FORMAT, --from FORMAT" in text or "--from FORMAT, -f FORMAT" in text, command
    for command in ("list", "stats", "search"):
        text = run(command, "--help").stdout
        assert "--since" in text and "--until" in text and "--json" in text, command


def test_usage_counts_each_call_once_whichever_way_it_is_grouped(tree: Path) -> None:
    totals = {
        piconv.usage(tree, by=list(by)).total.tokens
        for by in itertools.combinations(("day", "model", "session"), 2)
    }
    assert len(totals) == 1


def test_stats_from_the_archive_are_the_sessions_figures(tree: Path, tmp_path: Path) -> None:
    from piconv.bulk import run_bulk

    out = tmp_path / "archive"
    summary = run_bulk(str(tree), str(out), ["sqlite"], jobs=1, quiet=True)
    assert summary.failed == 0
    for by in (("day",), ("model", "session"), ("month", "project")):
        archived = piconv.usage(archive=str(out), by=by).to_json()
        read = piconv.usage(tree, by=by).to_json()
        for value in (archived, read):
            value.pop("source")
        assert archived == read, by
    result = run("stats", "--archive", str(out), "--by", "session", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["total"]["tokens"] == piconv.usage(tree).total.tokens
    assert run("stats", "--archive", str(tmp_path / "nothing")).returncode == 3
    assert run("stats", str(tree), "--archive", str(out)).returncode == 2
