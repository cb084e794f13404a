"""The searchable archive: what ``--to sqlite`` adds to a directory run, the database's size,
and how fast ``piconv search`` answers.

    python bench/archive.py --sessions 1000 --size-mb 1024 [--pairs 2] [--corpus DIR] [--keep]

On the bulk corpus of bench/bulk.py (generated into /tmp unless --corpus names one):

- ``html + sqlite`` against ``html`` alone: separate ``piconv`` processes, run in turn
  A B A B so a drift of the shared machine hits both; the goal is a median ratio of at
  most 1.3. Their CPU seconds (every process of the run, the pool's workers included)
  are compared too: on a busy shared machine the steadier figure.
- the database's size against the sessions' size (the JSONL files) and against the text
  it holds (``entries.text``): goal at most 1.5x the sessions.
- search latency: each query of :data:`QUERIES` timed in-process (the median of 15 after a
  warm-up: what the query costs) and as a whole ``piconv search`` process (what a user
  waits for, start-up included); goal under 100 ms for the query.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bulk import make_corpus
from common import record

QUERIES = [
    ("a rare word", "quokka OR zyzzyva", {}),
    ("a common word", "function", {}),
    ("a phrase", '"export function"', {}),
    ("a prefix, two words", "sess* AND error", {}),
    ("a common word, filtered", "function", {"role": "assistant", "project": "p1*"}),
    ("NEAR", "NEAR(read file, 3)", {}),
]


def run(args: list[str]) -> float:
    return run_cpu(args)[0]


def _adopt_orphans() -> bool:
    """Make this process the reaper of its children's orphans (Linux). A pool's workers are
    children of a forkserver that outlives piconv's main process: adopted and reaped here,
    their CPU seconds are counted in ``RUSAGE_CHILDREN`` with the rest of the run."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(36, 1, 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


WHOLE_RUN = _adopt_orphans()


def run_cpu(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one ``piconv`` run: every process of it
    where this process can adopt orphans (Linux), else the main process alone (all of
    the work with ``--jobs 1``). The CPU time does not depend on what else the shared
    machine is running."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "piconv", *args], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    while WHOLE_RUN:
        try:
            os.waitpid(-1, 0)  # the forkserver, which exits after piconv, and what it left
        except ChildProcessError:
            break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=1000)
    p.add_argument("--size-mb", type=float, default=1024)
    p.add_argument("--pairs", type=int, default=2, help="html / html+sqlite pairs (0: skip the comparison)")
    p.add_argument(
        "--jobs", type=int, default=2, help="--jobs of the runs (1: all in one process, CPU time measured)"
    )
    p.add_argument("--corpus", type=Path)
    p.add_argument(
        "--archive", type=Path, help="with --pairs 0: a directory run's output of this corpus to measure"
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep", action="store_true")
    p.add_argument("--no-record", action="store_true")
    ns = p.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="piconv-bench-archive-"))
    corpus = ns.corpus or work / "corpus"
    if not corpus.is_dir() or not any(corpus.rglob("*.jsonl")):
        corpus.mkdir(parents=True, exist_ok=True)
        info = make_corpus(corpus, ns.sessions, ns.size_mb, ns.seed)
        print(f"corpus: {info['files']} sessions, {info['bytes'] / 2**20:.0f} MiB in {corpus}", flush=True)
    jsonl_bytes = sum(f.stat().st_size for f in corpus.rglob("*.jsonl"))
    files = sum(1 for _ in corpus.rglob("*.jsonl"))
    rows: list[dict] = [{"what": "corpus", "value": f"{files} sessions, {jsonl_bytes / 2**20:.0f} MiB"}]

    ratios, cpu_ratios, runs = [], [], []
    for n in range(ns.pairs):
        both = ["--to", "html", "--to", "sqlite", "-o", str(work / f"both{n}"), "-j", str(ns.jobs), "-q"]
        a, a_cpu = run_cpu([str(corpus), *both])
        b, b_cpu = run_cpu(
            [str(corpus), "--to", "html", "-o", str(work / f"html{n}"), "-j", str(ns.jobs), "-q"]
        )
        ratios.append(a / b)
        cpu_ratios.append(a_cpu / b_cpu)
        runs.append(
            {
                "html_sqlite_s": round(a, 1),
                "cpu_s": round(a_cpu, 1),
                "html_s": round(b, 1),
                "html_cpu_s": round(b_cpu, 1),
            }
        )
        print(
            f"pair {n + 1}: html+sqlite {a:.1f} s ({a_cpu:.1f} s CPU), html {b:.1f} s ({b_cpu:.1f} s CPU), "
            f"ratio {a / b:.2f} (CPU {a_cpu / b_cpu:.2f})",
            flush=True,
        )
        if n + 1 < ns.pairs:
            shutil.rmtree(work / f"both{n}")
        shutil.rmtree(work / f"html{n}")
    if ratios:
        ratio, cpu = statistics.median(ratios), statistics.median(cpu_ratios)
        rows.append(
            {
                "what": f"html + sqlite run / html run, wall (--jobs {ns.jobs}, median of pairs)",
                "value": round(ratio, 3),
                "unit": "x",
                "spread": f"{min(ratios):.2f}-{max(ratios):.2f}",
                "runs": runs,
                "goal": "<= 1.3",
                "ok": ratio <= 1.3,
            }
        )
        if ns.jobs == 1 or WHOLE_RUN:
            rows.append(
                {
                    "what": f"html + sqlite run / html run, CPU seconds (--jobs {ns.jobs}, median of pairs)",
                    "value": round(cpu, 3),
                    "unit": "x",
                    "spread": f"{min(cpu_ratios):.2f}-{max(cpu_ratios):.2f}",
                    "goal": "<= 1.3",
                    "ok": cpu <= 1.3,
                }
            )
        out = work / f"both{ns.pairs - 1}"
    elif ns.archive:
        out = ns.archive
    else:
        out = work / "sqlite"
        run([str(corpus), "--to", "sqlite", "-o", str(out), "-j", "2", "-q"])

    db = out / "archive.db"
    conn = sqlite3.connect(db)
    text_bytes = conn.execute("SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM entries").fetchone()[
        0
    ]
    conn.close()
    size = db.stat().st_size
    rows.append(
        {
            "what": "database / sessions (JSONL bytes)",
            "value": round(size / jsonl_bytes, 3),
            "unit": "x",
            "db_mib": round(size / 2**20, 1),
            "goal": "<= 1.5",
            "ok": size <= 1.5 * jsonl_bytes,
        }
    )
    rows.append(
        {
            "what": "database / text it indexes",
            "value": round(size / max(text_bytes, 1), 3),
            "unit": "x",
            "text_mib": round(text_bytes / 2**20, 1),
        }
    )

    from piconv.converters.sqlite import ARCHIVE

    for label, query, filters in QUERIES:
        hits = ARCHIVE.search(str(db), query, filters)
        times, cpu = [], []
        for _ in range(15):
            started, started_cpu = time.perf_counter(), time.process_time()
            ARCHIVE.search(str(db), query, filters)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
        args = ["search", query, str(db)]
        for key, value in filters.items():
            args += [f"--{key}", value]
        process = statistics.median(run(args) * 1000 for _ in range(5))
        median = statistics.median(times)
        rows.append(
            {
                "what": f"search: {label} ({query!r}), {len(hits)} hits",
                "cpu_ms": round(statistics.median(cpu), 1),
                "value": round(median, 1),
                "unit": "ms",
                "process_ms": round(process, 1),
                "goal": "< 100",
                "ok": median < 100,
            }
        )

    if not ns.no_record:
        record("archive", rows)
    else:
        for row in rows:
            print(row)
    if not ns.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept: {work}")
    return 0 if all(r.get("ok", True) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
