"""Peak memory of reading ASF, against the file's size (goal: at most 3x).

    python bench/asf_memory.py --python VENV/bin/python [--sizes 10,100,600] [--baseline OTHER/bin/python]

For each size (MB of pi session, built by ``bench/make_large.py`` from the corpus), two ASF
files: piconv's own (``--to asf``) and the same entries as another writer's (harness
renamed, every ``pi`` record and ``legacy_id`` dropped, so nothing is read back as pi).
Each is read with ``piconv X --to ir -o /dev/null``, whose peak RSS is the document's:
the ``ir`` writer writes entry by entry. An empty conversion is measured too (the
interpreter and piconv), and the peak is given both against the file and, above that
floor, against the file. One run each: peak memory does not vary between runs as time
does.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import orjson
from common import measure, record

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "piconv" / "bench" / "asf-memory"


def another_writers(own: Path, out: Path) -> None:
    """piconv's ASF ``own`` as another writer's file, line by line."""
    with own.open("rb") as source, out.open("wb") as sink:
        for number, line in enumerate(source):
            value = orjson.loads(line)
            value.pop("pi", None)
            value.pop("legacy_id", None)
            if number == 0:
                value["harness"] = {"name": "another-agent", "version": "1"}
            sink.write(orjson.dumps(value) + b"\n")


def files(python: str, size_mb: int) -> dict[str, Path]:
    CACHE.mkdir(parents=True, exist_ok=True)
    pi = CACHE / f"pi-{size_mb}.jsonl"
    own = CACHE / f"own-{size_mb}.asf.jsonl"
    foreign = CACHE / f"foreign-{size_mb}.asf.jsonl"
    if not pi.exists():
        subprocess.run(
            [
                sys.executable,
                str(REPO / "bench" / "make_large.py"),
                "--size-mb",
                str(size_mb),
                "--out",
                str(pi),
            ],
            check=True,
        )
    if not own.exists():
        subprocess.run([python, "-m", "piconv", str(pi), "--to", "asf", "-o", str(own), "-q"], check=True)
    if not foreign.exists():
        another_writers(own, foreign)
    return {"piconv's": own, "another writer's": foreign}


def peak(python: str, path: Path) -> tuple[float, float]:
    m = measure(
        [python, "-m", "piconv", str(path), "--to", "ir", "-o", "/dev/null", "-q"],
        name=path.name,
        runs=1,
        warmup=False,
    )
    assert m.peak_rss_mib is not None
    return m.peak_rss_mib * 1024 * 1024 / 1e6, m.wall_s


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--sizes", default="10,100,600", help="MB of pi session, comma separated")
    parser.add_argument("--baseline", help="another installation's python, measured on the same files")
    args = parser.parse_args()
    empty = CACHE / "empty.asf.jsonl"
    CACHE.mkdir(parents=True, exist_ok=True)
    empty.write_bytes(
        orjson.dumps(
            {
                "type": "session",
                "format": "agentsession/0.11",
                "id": "empty",
                "created_at": "2026-01-01T00:00:00Z",
            }
        )
        + b"\n"
    )
    floor, _ = peak(args.python, empty)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        for writer, path in files(args.python, size).items():
            mb = path.stat().st_size / 1e6
            top, wall = peak(args.python, path)
            row = {
                "what": f"{writer} ASF, {mb:.0f} MB: peak / file",
                "value": round(top / mb, 2),
                "unit": "x",
                "peak_mb": round(top, 1),
                "above_floor": round((top - floor) / mb, 2),
                "floor_mb": round(floor, 1),
                "wall_s": round(wall, 2),
                "goal": "<= 3",
                "ok": top / mb <= 3,
            }
            if args.baseline:
                base, base_wall = peak(args.baseline, path)
                row["baseline_peak_mb"] = round(base, 1)
                row["baseline_wall_s"] = round(base_wall, 2)
            rows.append(row)
    record("asf_memory", rows)


if __name__ == "__main__":
    main()
