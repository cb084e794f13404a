"""Markdown export throughput against the physical limit.

    python bench/markdown.py [PATH] [--size-mb 100] [--seed 1] [--runs 3]

Without PATH a session of ``--size-mb`` MB is generated with bench/make_large.py (cached
under ~/.cache/piconv/bench). Measured, each median of ``--runs`` fresh processes:

- the physical limit of a conversion: read the file, ``orjson.loads`` every line and
  ``orjson.dumps`` every value again (the floor of any JSON-to-text converter);
- ``piconv IN --to markdown -o OUT --no-validate`` (load + write) and the same with the
  default validation (markdown-it-py parse of the output), end to end from the CLI;
- in one process, the split: ``piconv.load``, the Markdown writer, the checker.

Goal: the conversion (without validation) at >= 20% of the physical limit, i.e.
``limit time / conversion time >= 0.20``. Appends to bench/results.jsonl; exit status 1
when the goal is missed.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
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


def read_loads_dumps(path: str) -> None:
    """The physical limit: bytes in, every line parsed and serialised again."""
    import orjson

    with open(path, "rb") as handle:
        data = handle.read()
    out = []
    for line in data.splitlines():
        if line:
            try:  # noqa: SIM105  (a plain try is cheaper than contextlib.suppress per line)
                out.append(orjson.dumps(orjson.loads(line)))
            except orjson.JSONDecodeError:
                pass
    with open("/dev/null", "wb") as sink:
        sink.write(b"\n".join(out))


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

    limit = measure(read_loads_dumps, name="read + loads + dumps", runs=args.runs, args=(str(src),))
    cli = [sys.executable, "-m", "piconv", str(src), "--to", "markdown", "-o", str(out), "-q"]
    fast = measure([*cli, "--no-validate"], name="piconv --to markdown --no-validate", runs=args.runs)
    checked = measure(cli, name="piconv --to markdown (validated)", runs=args.runs)
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
        {"what": "in-process: piconv.load", "value": split["load"], "unit": "s"},
        {"what": "in-process: Markdown writer", "value": split["write"], "unit": "s", "ratio": limit.wall_s / split["write"]},
        {"what": "in-process: checker (markdown-it-py)", "value": split["check"], "unit": "s"},
        {"what": "output", "value": split["output_bytes"] / 1e6, "unit": "MB"},
    ]
    record("markdown", rows, extra={"input_bytes": size, "runs": args.runs})
    return 0 if ratio >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
