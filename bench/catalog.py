"""``piconv list`` and ``piconv stats`` over a directory of sessions, paired with pi's own
listing and ccusage's pi report on the same directory, in one run.

    python bench/catalog.py --python VENV/bin/python [--corpus DIR] [--sessions 1000 --size-mb 300]
                            [--ccusage CCUSAGE_DIR] [--pairs 5] [--archive DIR]

- ``piconv list DIR`` against pi 1.6.0's ``SessionManager.listAll`` over DIR (the oracle's
  ``--list-all``; the pi oracle must be installed: ``python tests/oracle/run.py --install``).
  Goals: at least 2x faster, and under 1 s.
- ``piconv stats DIR`` (cold: no archive, nothing cached) against ccusage's pi report
  (``ccusage pi daily --json --pi-path DIR``; ``--ccusage`` is a folder where
  ``npm install ccusage@19.0.3`` was run; skipped without it). Goal: faster.
- ``piconv stats --archive OUT`` where OUT holds ``archive.db`` of the same directory
  (written first with ``piconv DIR --to sqlite -o OUT`` unless ``--archive`` names one).
  Goal: under 200 ms.

Each figure is a whole process's wall time, the median of ``--pairs`` runs taken in turn
(A, B, A, B...); the oracle also reports pi's time inside the process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import record

REPO = Path(__file__).resolve().parent.parent


def _oracle() -> tuple[Path, Path]:
    sys.path.insert(0, str(REPO / "tests" / "oracle"))
    import run as oracle  # type: ignore[import-not-found]

    node = oracle.ensure_installed()
    return node, oracle.oracle_dir() / "oracle.mjs"


CPU: dict[tuple[str, ...], list[float]] = {}
"""CPU time (user + system) of each command's runs: on a machine others share, wall time
waits for the cores; CPU time does not."""


def _wall(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    CPU.setdefault(tuple(cmd[:4]), []).append(cpu)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def _paired(a: list[str], b: list[str], pairs: int) -> tuple[list[float], list[float], list[str]]:
    ta, tb, outs = [], [], []
    for _ in range(pairs):
        wall, _out = _wall(a)
        ta.append(wall)
        wall, out_b = _wall(b)
        tb.append(wall)
        outs.append(out_b)
    return ta, tb, outs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python", default=sys.executable, help="the interpreter piconv is installed in")
    p.add_argument(
        "--corpus", type=Path, help="the sessions (default: a generated corpus, see bench/bulk.py)"
    )
    p.add_argument("--sessions", type=int, default=1000)
    p.add_argument("--size-mb", type=float, default=300)
    p.add_argument(
        "--ccusage", type=Path, help="a folder holding node_modules/ccusage (npm install ccusage@19.0.3)"
    )
    p.add_argument(
        "--archive", type=Path, help="a directory holding archive.db of the corpus (default: made)"
    )
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--no-record", action="store_true")
    ns = p.parse_args()

    corpus = (
        ns.corpus or Path.home() / ".cache" / "piconv" / "bench" / f"catalog-{ns.sessions}-{int(ns.size_mb)}"
    )
    if not corpus.is_dir() or not any(corpus.iterdir()):
        from bulk import make_corpus

        print(f"generating {ns.sessions} sessions, {ns.size_mb} MB into {corpus}", file=sys.stderr)
        make_corpus(corpus, ns.sessions, ns.size_mb, 1)
    files = list(corpus.rglob("*.jsonl"))
    size = sum(f.stat().st_size for f in files)
    rows: list[dict[str, object]] = [
        {"what": "corpus", "value": f"{len(files)} sessions, {size / 2**20:.0f} MiB"},
    ]
    piconv = [ns.python, "-m", "piconv"]

    node, oracle = _oracle()
    ours, theirs, outs = _paired(
        [*piconv, "list", str(corpus)], [str(node), str(oracle), "--list-all", str(corpus)], ns.pairs
    )
    inside = statistics.median(json.loads(o)["elapsedMs"] for o in outs) / 1000
    listed = len(json.loads(_wall([*piconv, "list", str(corpus), "--json"])[1])["sessions"])
    assert listed == json.loads(outs[0])["count"], (listed, outs[0])
    a, b = statistics.median(ours), statistics.median(theirs)
    ca = statistics.median(CPU[tuple([*piconv, "list", str(corpus)][:4])])
    cb = statistics.median(CPU[(str(node), str(oracle), "--list-all", str(corpus))])
    rows.append({"what": "piconv list", "value": round(a, 3), "unit": "s", "goal": "< 1", "ok": a < 1})
    rows.append({"what": "piconv list (CPU)", "value": round(ca, 3), "unit": "s"})
    rows.append({"what": "pi listAll (CPU)", "value": round(cb, 3), "unit": "s", "ratio": round(cb / ca, 2)})
    rows.append({"what": "pi SessionManager.listAll (process)", "value": round(b, 3), "unit": "s"})
    rows.append(
        {"what": "pi SessionManager.listAll (inside the process)", "value": round(inside, 3), "unit": "s"}
    )
    rows.append(
        {
            "what": "piconv list against pi's listAll",
            "value": round(b / a, 2),
            "unit": "x faster",
            "goal": ">= 2",
            "ok": b / a >= 2,
        }
    )

    if ns.ccusage:
        cli = ns.ccusage / "node_modules" / "ccusage" / "dist" / "cli.js"
        report = [str(node), str(cli), "pi", "daily", "--json", "--offline", "--pi-path", str(corpus)]
        ours, theirs, _ = _paired([*piconv, "stats", str(corpus), "--json"], report, ns.pairs)
        a, b = statistics.median(ours), statistics.median(theirs)
        ca = statistics.median(CPU[tuple([*piconv, "stats", str(corpus)][:4])])
        cb = statistics.median(CPU[tuple(report[:4])])
        rows.append({"what": "piconv stats (cold)", "value": round(a, 3), "unit": "s"})
        rows.append({"what": "piconv stats (cold, CPU)", "value": round(ca, 3), "unit": "s"})
        rows.append(
            {"what": "ccusage pi daily (CPU)", "value": round(cb, 3), "unit": "s", "ratio": round(cb / ca, 2)}
        )
        rows.append({"what": "ccusage pi daily", "value": round(b, 3), "unit": "s"})
        rows.append(
            {
                "what": "piconv stats against ccusage",
                "value": round(b / a, 2),
                "unit": "x faster",
                "goal": "> 1",
                "ok": b > a,
            }
        )

    archive = ns.archive
    if archive is None:
        archive = corpus.parent / f"{corpus.name}-archive"
        if not (archive / "archive.db").is_file():
            print(f"writing the archive into {archive}", file=sys.stderr)
            _wall([*piconv, str(corpus), "--to", "sqlite", "-o", str(archive), "-q"])
    times = [_wall([*piconv, "stats", "--archive", str(archive), "--json"])[0] for _ in range(ns.pairs)]
    a = statistics.median(times)
    rows.append(
        {
            "what": "piconv stats --archive",
            "value": round(a * 1000),
            "unit": "ms",
            "goal": "< 200",
            "ok": a < 0.2,
        }
    )
    if ns.no_record:
        from common import print_table

        print_table("catalog", rows)
    else:
        record("catalog", rows)
    return 0 if all(r.get("ok", True) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
