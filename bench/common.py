"""Helpers every piconv benchmark uses: the physical limit, timing + peak memory of a command,
the machine description, and a results writer (JSON lines + a printed table with ratios)."""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results.jsonl"
MiB = 1024 * 1024


@dataclass
class Measurement:
    name: str
    wall_s: float  # median of the runs
    runs: list[float]
    peak_rss_mib: float | None = None  # of the measured child process, when it ran in one
    extra: dict[str, Any] = field(default_factory=dict)


def _read_and_parse(path: str) -> int:
    import orjson

    with open(path, "rb") as handle:
        data = handle.read()
    n = 0
    for line in data.splitlines():
        if line:
            try:  # noqa: SIM105  (a plain try is cheaper than contextlib.suppress per line)
                orjson.loads(line)
            except orjson.JSONDecodeError:
                pass
            n += 1
    return n


def read_loads_dumps(path: str) -> None:
    """The physical limit of a converter: the file read, every line parsed with
    ``orjson.loads`` and serialised again with ``orjson.dumps``, streamed to /dev/null
    (nothing kept: keeping every line's bytes would make the limit slower and flatter
    every ratio against it). Shared by the converter benchmarks."""
    import orjson

    loads, dumps = orjson.loads, orjson.dumps
    with open(path, "rb") as handle, open("/dev/null", "wb") as sink:
        write = sink.write
        for line in handle:
            if line.strip():
                try:  # noqa: SIM105  (a plain try is cheaper than contextlib.suppress per line)
                    write(dumps(loads(line)) + b"\n")
                except orjson.JSONDecodeError:
                    pass


def physical_limit(path: Path | str, runs: int = 5) -> Measurement:
    """Time to read the file in binary and orjson.loads every line: no session logic at all.

    Measured in-process after one warm-up run, so the page cache is hot for every run and
    the figure is the CPU cost of parsing, the floor any reader of this format pays.
    """
    _read_and_parse(str(path))
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        _read_and_parse(str(path))
        times.append(time.perf_counter() - t0)
    return Measurement("physical limit (read + orjson.loads per line)", statistics.median(times), times)


# Runs one function from a benchmark file in a fresh interpreter. The file is loaded by path
# under a private module name: bench/core.py must never be importable as `core` (that name is
# the repo's source folder, which an installed piconv must not expose).
_CHILD = """
import importlib.util, pickle, resource, sys, time
path, fn, args = pickle.loads(bytes.fromhex(sys.argv[1]))
spec = importlib.util.spec_from_file_location("piconv_bench_child", path)
mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
f = getattr(mod, fn)
t0 = time.perf_counter(); f(*args); t = time.perf_counter() - t0
# VmHWM is this process image's own peak: ru_maxrss keeps the parent's peak across fork+exec
peak = next((int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")), None)
print(t, peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def measure(
    target: Sequence[str] | Callable[..., Any],
    *,
    name: str,
    runs: int = 5,
    args: Sequence[Any] = (),
    env: dict[str, str] | None = None,
    warmup: bool = True,
) -> Measurement:
    """Wall time (median of ``runs``) and peak RSS of a command or a module-level function.

    A command (list of strings) is timed around the whole process; its peak RSS comes from
    wait4()'s rusage. A function runs in a fresh Python per run (so peak memory is its own, not
    this process's), timed inside that process around the call only, imports excluded.
    """
    times: list[float] = []
    peaks: list[float] = []
    full_env = {**os.environ, **(env or {})}
    for i in range(runs + (1 if warmup else 0)):
        if callable(target):
            import inspect
            import pickle

            source = inspect.getsourcefile(target)
            payload = pickle.dumps((source, target.__name__, tuple(args))).hex()
            proc = subprocess.run(
                [sys.executable, "-c", _CHILD, payload],
                capture_output=True,
                text=True,
                env=full_env,
                check=False,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"{name} failed: {proc.stderr[-2000:]}")
            wall, maxrss_kib = proc.stdout.split()[-2:]
            elapsed, peak = float(wall), int(maxrss_kib) / 1024
        else:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                list(target), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=full_env
            )
            _, status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"{' '.join(target)} failed ({proc.returncode}): {stderr[-2000:]}")
            peak = usage.ru_maxrss / 1024  # Linux reports KiB
        if warmup and i == 0:
            continue  # page cache and .pyc files warm
        times.append(elapsed)
        peaks.append(peak)
    return Measurement(name, statistics.median(times), times, max(peaks) if peaks else None)


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = round(int(line.split()[1]) / MiB, 1)  # kB -> GiB
    except OSError:
        pass
    try:
        import orjson

        orjson_version = orjson.__version__
    except ImportError:
        orjson_version = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": ram,
        "python": platform.python_version(),
        "orjson": orjson_version,
        "platform": platform.platform(),
    }


def peak_rss_self_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def record(
    benchmark: str,
    rows: list[dict[str, Any]],
    *,
    results: Path = RESULTS,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Append one JSON record to bench/results.jsonl and print the rows as a table.

    Each row: {"what", "value", "unit", optional "ratio" (float), "goal" (text), "ok" (bool)}.
    """
    entry = {
        "benchmark": benchmark,
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "rows": rows,
        **(extra or {}),
    }
    with results.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
    print_table(benchmark, rows)
    return entry


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    headers = ("what", "value", "ratio", "goal", "ok")
    cells = [
        (
            str(r["what"]),
            f"{r['value']:.3f} {r.get('unit', '')}".strip()
            if isinstance(r["value"], float)
            else f"{r['value']} {r.get('unit', '')}".strip(),
            f"{r['ratio']:.2f}" if isinstance(r.get("ratio"), float) else "",
            str(r.get("goal", "")),
            {True: "yes", False: "NO", None: ""}[r.get("ok")],
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for c in cells:
        print("  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)))


def as_dict(m: Measurement) -> dict[str, Any]:
    return asdict(m)
