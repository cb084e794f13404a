"""Core benchmark: piconv.load() (read + migrate + tree + IR) against the physical limit,
peak memory against file size, and `piconv --help` start-up time.

    python bench/make_large.py --size-mb 100 --out /tmp/piconv-large.jsonl
    python bench/core.py /tmp/piconv-large.jsonl [--runs 5]

Goals: load throughput >= 40% of the physical limit (read + orjson.loads per line), peak RSS
<= 3x the file size, `piconv --help` < 150 ms. Appends a record to bench/results.jsonl.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
from pathlib import Path

_here = Path(__file__).resolve().parent
# Loaded by path (not `import common`), so this file also works when run as a child by measure().
_spec = importlib.util.spec_from_file_location("piconv_bench_common", _here / "common.py")
assert _spec and _spec.loader
common = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = common
_spec.loader.exec_module(common)

LOAD_GOAL = 0.40  # fraction of the physical limit's throughput
MEMORY_GOAL = 3.0  # peak RSS / file size
HELP_GOAL_S = 0.150


def load(path: str) -> None:
    """What is measured: piconv's public entry point, which reads, migrates and builds the IR."""
    import piconv

    piconv.load(path)


def baseline(path: str) -> None:
    """The interpreter plus piconv's import, without loading: the fixed part of peak memory."""
    import piconv  # noqa: F401  (imported for its memory only)


def help_command() -> list[str]:
    exe = shutil.which("piconv")
    return [exe, "--help"] if exe else [sys.executable, "-m", "piconv", "--help"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="a large pi session (see bench/make_large.py)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    path = str(args.file)
    size = args.file.stat().st_size
    size_mib = size / common.MiB

    limit = common.physical_limit(path, runs=args.runs)
    loaded = common.measure(load, name="piconv.load", runs=args.runs, args=(path,))
    base = common.measure(baseline, name="python + import piconv", runs=3, args=(path,))
    help_run = common.measure(help_command(), name="piconv --help", runs=10)

    limit_mbs = size_mib / limit.wall_s
    load_mbs = size_mib / loaded.wall_s
    ratio = load_mbs / limit_mbs
    mem_ratio = (loaded.peak_rss_mib or 0) / size_mib
    rows = [
        {"what": "file", "value": round(size_mib, 1), "unit": "MiB"},
        {"what": "physical limit", "value": limit_mbs, "unit": "MiB/s"},
        {
            "what": "piconv.load",
            "value": load_mbs,
            "unit": "MiB/s",
            "ratio": ratio,
            "goal": f">= {LOAD_GOAL:.0%} of the limit",
            "ok": ratio >= LOAD_GOAL,
        },
        {
            "what": "piconv.load peak RSS",
            "value": loaded.peak_rss_mib,
            "unit": "MiB",
            "ratio": mem_ratio,
            "goal": f"<= {MEMORY_GOAL:g}x file size",
            "ok": mem_ratio <= MEMORY_GOAL,
        },
        {"what": "  of which python + import piconv", "value": base.peak_rss_mib, "unit": "MiB"},
        {
            "what": "piconv --help",
            "value": help_run.wall_s * 1000,
            "unit": "ms",
            "ratio": help_run.wall_s / HELP_GOAL_S,
            "goal": f"< {HELP_GOAL_S * 1000:.0f} ms",
            "ok": help_run.wall_s < HELP_GOAL_S,
        },
    ]
    common.record(
        "core",
        rows,
        extra={
            "file": {"name": args.file.name, "bytes": size},
            "measurements": [common.as_dict(m) for m in (limit, loaded, base, help_run)],
        },
    )
    return 0 if all(r.get("ok", True) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
