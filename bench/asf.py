"""``--to asf`` throughput and memory against the physical limit, and validation's share.

    python bench/asf.py [--size-mb 100] [--runs 5] [--large PATH]

The session is built by bench/make_large.py (at least ``--size-mb`` MiB). Every step runs
in a fresh interpreter per run (imports excluded from the timings) and reports CPU time
(``time.process_time``: the machine is shared and noisy, so CPU time is the figure to
compare) and wall time, medians over the runs, and the process's peak RSS (VmHWM):

- physical: read the file, ``orjson.loads`` and ``orjson.dumps`` every line;
- load: ``piconv.load`` (read, tree, IR);
- write: ``write_asf`` without validation, to a file as entries arrive;
- write+validate: ``write_asf`` with ``validate`` on (what ``piconv --to asf`` does by
  default: the converter checks each line as it writes it); its peak RSS is the memory
  figure of a conversion;
- check: the complete validator (``piconv validate --format asf``) over the output.

Ratios: physical / (load + write+validate) is the throughput ratio the goal is set on (the
issue asks >= 25%); validation share = (write+validate - write) / (load + write+validate);
memory ratio = peak RSS of the validated conversion / input size. Prints a Markdown table
for docs/performance.md (section "ASF").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MiB = 1024 * 1024

_CHILD = r"""
import json, sys, time
step, path, out = sys.argv[1:4]
import orjson
import piconv
from piconv.converters.asf.writer import write_asf
from piconv.converters.asf.validate import validate_asf
from piconv.report import Report
res = {}
def timed(name, f):
    c, w = time.process_time(), time.perf_counter()
    r = f()
    res[name] = (time.process_time() - c, time.perf_counter() - w)
    return r
if step == "physical":
    def phys():
        with open(path, "rb") as fh:
            for line in fh:
                try:
                    orjson.dumps(orjson.loads(line))
                except orjson.JSONDecodeError:
                    pass
    timed("physical", phys)
elif step == "check":
    issues = timed("check", lambda: validate_asf(out))
    if issues:
        raise SystemExit(f"invalid output: {issues[:3]}")
else:
    doc = timed("load", lambda: piconv.load(path))
    def write():
        with open(out, "wb", buffering=1 << 20) as fh:
            write_asf(doc, fh, {"validate": step == "write+validate"}, Report(format="asf"))
    timed(step, write)
peak = next((int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")), 0)
print(json.dumps({"times": res, "peak_kib": peak}))
"""


def run_step(step: str, path: str, out: str, runs: int) -> tuple[dict[str, tuple[float, float]], float]:
    """Median (cpu, wall) per timed phase over ``runs`` fresh processes (after a warm-up),
    and the largest peak RSS in MiB."""
    samples: dict[str, list[tuple[float, float]]] = {}
    peaks = []
    for i in range(runs + 1):
        proc = subprocess.run([sys.executable, "-c", _CHILD, step, path, out], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{step} failed: {proc.stderr[-2000:]}")
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        if i == 0:
            continue  # page cache and .pyc files warm
        for name, (cpu, wall) in result["times"].items():
            samples.setdefault(name, []).append((cpu, wall))
        peaks.append(result["peak_kib"] / 1024)
    medians = {
        name: (statistics.median(c for c, _ in values), statistics.median(w for _, w in values))
        for name, values in samples.items()
    }
    return medians, max(peaks)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=float, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--large", type=Path)
    args = parser.parse_args()
    large = args.large
    if large is None:
        cache = Path.home() / ".cache" / "piconv" / "bench"
        cache.mkdir(parents=True, exist_ok=True)
        large = cache / f"large-{int(args.size_mb)}mb.jsonl"
        if not large.exists():
            subprocess.run([sys.executable, str(HERE / "make_large.py"), "--size-mb", str(args.size_mb), "--out", str(large)], check=True)
    size = large.stat().st_size
    rows: dict[str, tuple[float, float]] = {}
    peaks: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.asf.jsonl")
        for step in ("physical", "write", "write+validate", "check"):
            medians, peak = run_step(step, str(large), out, args.runs)
            rows.update(medians)
            peaks[step] = peak
        out_size = os.path.getsize(out)
    phys = rows["physical"]
    load = rows["load"]
    write = rows["write"]
    written = rows["write+validate"]
    total = (load[0] + written[0], load[1] + written[1])
    print(f"input {size / MiB:.1f} MiB, output {out_size / MiB:.1f} MiB, {args.runs} runs (medians)")
    print("| step | CPU s | wall s | MiB/s (CPU) | peak RSS MiB | RSS / input |")
    print("|---|---|---|---|---|---|")
    for name, (cpu, wall), peak in (
        ("physical limit (read + loads + dumps)", phys, peaks["physical"]),
        ("load (read, tree, IR)", load, None),
        ("write, no validation", write, peaks["write"]),
        ("write, validating each line", written, peaks["write+validate"]),
        ("**load + validated write (`--to asf`)**", total, peaks["write+validate"]),
        ("complete check of the output (`validate`)", rows["check"], peaks["check"]),
    ):
        mem = f"{peak:.0f} | {peak * MiB / size:.2f}" if peak is not None else "— | —"
        print(f"| {name} | {cpu:.2f} | {wall:.2f} | {size / MiB / cpu:.0f} | {mem} |")
    print(f"throughput ratio physical / (load + validated write): CPU {phys[0] / total[0]:.1%}, wall {phys[1] / total[1]:.1%}")
    print(f"validation share of the conversion: CPU {(written[0] - write[0]) / total[0]:.1%}, wall {(written[1] - write[1]) / total[1]:.1%}")
    print(f"peak memory of the conversion / input: {peaks['write+validate'] * MiB / size:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
