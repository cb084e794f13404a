"""Markdown export throughput against the physical limit.

    python bench/markdown.py [PATH] [--size-mb 100] [--seed 1] [--runs 3]

Without PATH a session of ``--size-mb`` MB is generated with bench/make_large.py (cached
under ~/.cache/piconv/bench). Measured, each median of ``--runs`` fresh processes:

- the physical limit of a conversion: read the file, ``orjson.loads`` every line and
  ``orjson.dumps`` every value again (the floor of any JSON-to-text converter);
- ``piconv IN --to markdown -o OUT --no-validate`` (load + write) and the same with the
  default validation (the checker, section by section, while writing), end to end from
  the CLI; also their CPU time (user + system, median of ``--runs`` more runs each,
  interleaved) against the validation goals: validated CPU <= 2x the unvalidated, peak
  RSS <= 3x the input;
- in one process, the split: ``piconv.load``, the Markdown writer, the checker.

Goal: the conversion (without validation) at >= 20% of the physical limit, i.e.
``limit time / conversion time >= 0.20``. Appends to bench/results.jsonl; exit status 1
when the goal is missed.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# Python put this script's folder first on sys.path, where bench/html.py would shadow the
# standard library's ``html`` (which the converter uses): take it off.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]


def _common() -> Any:
    """bench/common.py loaded by path: putting bench/ on sys.path would let bench/html.py
    shadow the standard library's ``html`` (and this file, ``markdown``)."""
    spec = importlib.util.spec_from_file_location("piconv_bench_common", REPO / "bench" / "common.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
GOAL = 0.20
VALIDATION_CPU_GOAL = 2.0  # validated CPU time / unvalidated CPU time
VALIDATION_RSS_GOAL = 3.0  # validated peak RSS / input size


def cpu_run(cmd: list[str]) -> tuple[float, float, float]:
    """Wall and CPU (user + system) seconds and peak RSS (MiB) of one run of ``cmd``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def split_timings(path: str) -> dict[str, float]:
    """Load, write and check timed separately in this process."""
    import piconv
    from piconv import Report
    from piconv.converters.markdown import check, write

    t0 = time.perf_counter()
    doc = piconv.load(path)
    t1 = time.perf_counter()
    out = io.BytesIO()
    write(doc, out, {"images": "omit", "all_branches": False, "leaf": None, "output_path": None}, Report("markdown"))
    t2 = time.perf_counter()
    problems = check(out.getvalue())
    t3 = time.perf_counter()
    if problems:
        raise SystemExit(f"checker found problems: {problems[:3]}")
    return {"load": t1 - t0, "write": t2 - t1, "check": t3 - t2, "output_bytes": float(len(out.getvalue()))}


def large_file(size_mb: int, seed: int) -> Path:
    cache = Path.home() / ".cache/piconv/bench"
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"large-{size_mb}mb-s{seed}.jsonl"
    if not path.is_file():
        subprocess.run(
            [sys.executable, str(REPO / "bench/make_large.py"), "--size-mb", str(size_mb), "--seed", str(seed), "--out", str(path)],
            check=True,
        )
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?")
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    common = _common()
    measure, record = common.measure, common.record
    src = Path(args.path) if args.path else large_file(args.size_mb, args.seed)
    size = src.stat().st_size
    out = Path(tempfile.mkdtemp(prefix="piconv-bench-md-")) / "out.md"

    limit = measure(common.read_loads_dumps, name="read + loads + dumps", runs=args.runs, args=(str(src),))
    cli = [sys.executable, "-m", "piconv", str(src), "--to", "markdown", "-o", str(out), "-q"]
    fast = measure([*cli, "--no-validate"], name="piconv --to markdown --no-validate", runs=args.runs)
    checked = measure(cli, name="piconv --to markdown (validated)", runs=args.runs)
    # CPU time, the two commands interleaved (the machine is noisy; its load drifts).
    fast_cpu, checked_cpu = [], []
    for _ in range(args.runs):
        fast_cpu.append(cpu_run([*cli, "--no-validate"]))
        checked_cpu.append(cpu_run(cli))
    nv_cpu = statistics.median(r[1] for r in fast_cpu)
    v_cpu = statistics.median(r[1] for r in checked_cpu)
    v_peak = max(r[2] for r in checked_cpu)
    # In this process, and last: a child forked from a process holding a loaded document
    # would inherit that peak RSS in its own rusage.
    splits = [split_timings(str(src)) for _ in range(args.runs)]
    split = {k: statistics.median(s[k] for s in splits) for k in splits[0]}

    ratio = limit.wall_s / fast.wall_s
    rows = [
        {"what": f"input ({src.name})", "value": size / 1e6, "unit": "MB"},
        {"what": "physical limit: read + loads + dumps", "value": limit.wall_s, "unit": "s"},
        {
            "what": "piconv --to markdown --no-validate (CLI, end to end)",
            "value": fast.wall_s,
            "unit": "s",
            "ratio": ratio,
            "goal": f">= {GOAL:.2f} of the limit",
            "ok": ratio >= GOAL,
        },
        {"what": "  peak RSS", "value": fast.peak_rss_mib or 0.0, "unit": "MiB", "ratio": (fast.peak_rss_mib or 0) * 2**20 / size},
        {"what": "piconv --to markdown, validated (CLI)", "value": checked.wall_s, "unit": "s", "ratio": limit.wall_s / checked.wall_s},
        {"what": "  peak RSS", "value": checked.peak_rss_mib or 0.0, "unit": "MiB"},
        {"what": "CPU (user + sys), --no-validate", "value": nv_cpu, "unit": "s"},
        {
            "what": "CPU (user + sys), validated",
            "value": v_cpu,
            "unit": "s",
            "ratio": v_cpu / nv_cpu,
            "goal": f"<= {VALIDATION_CPU_GOAL:.1f}x the unvalidated",
            "ok": v_cpu / nv_cpu <= VALIDATION_CPU_GOAL,
        },
        {
            "what": "  peak RSS, validated, / input",
            "value": v_peak,
            "unit": "MiB",
            "ratio": v_peak * 2**20 / size,
            "goal": f"<= {VALIDATION_RSS_GOAL:.0f}x the input",
            "ok": v_peak * 2**20 / size <= VALIDATION_RSS_GOAL,
        },
        {"what": "in-process: piconv.load", "value": split["load"], "unit": "s"},
        {"what": "in-process: Markdown writer", "value": split["write"], "unit": "s", "ratio": limit.wall_s / split["write"]},
        {"what": "in-process: checker (whole output, section by section)", "value": split["check"], "unit": "s"},
        {"what": "output", "value": split["output_bytes"] / 1e6, "unit": "MB"},
    ]
    record("markdown", rows, extra={"input_bytes": size, "runs": args.runs})
    return 0 if ratio >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
