"""``--to asf`` throughput and memory against the physical limit, and validation's share.

    python bench/asf.py [--size-mb 100] [--runs 3] [--large PATH]

The session is built by bench/make_large.py (at least ``--size-mb`` MiB). Measured, each
in a fresh interpreter (bench/common.py ``measure``):

- physical limit: read the file, ``orjson.loads`` and ``orjson.dumps`` every line;
- convert: load the pi session into the IR, write ASF to a file as entries arrive;
- validate: the ASF validator over that output (schema + ids + references);
- total = convert + validate (what ``--to asf`` does with validation on, the default).

Throughput ratio = physical / total; memory ratio = peak RSS of the conversion / input
size. Prints a Markdown table for docs/performance.md (section "ASF").
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

MiB = 1024 * 1024


def physical(path: str) -> None:
    import orjson

    with open(path, "rb") as fh:
        for line in fh:
            try:  # noqa: SIM105  (cheaper than contextlib.suppress per line)
                orjson.dumps(orjson.loads(line))
            except orjson.JSONDecodeError:
                pass


def _load(path: str):
    try:
        import piconv.reader
    except ImportError:  # the core reader lands separately: parse lines here
        import json

        import orjson
        from piconv.session import build_document

        records = []
        n = 0
        with open(path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                try:
                    value = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    try:
                        value = json.loads(raw)
                    except ValueError:
                        continue
                if type(value) is dict:
                    records.append((n, value))
        return build_document(records, [], n, path)
    import piconv

    return piconv.load(path)


def convert(path: str, out: str) -> None:
    from piconv.converters.asf.writer import write_asf
    from piconv.report import Report

    doc = _load(path)
    with open(out, "wb", buffering=1 << 20) as fh:
        write_asf(doc, fh, {}, Report(format="asf"))


def validate(out: str) -> None:
    from piconv.converters.asf.validate import validate_asf

    issues = validate_asf(out)
    if issues:
        raise SystemExit(f"invalid output: {issues[:3]}")


def convert_and_validate(path: str, out: str) -> None:
    convert(path, out)
    validate(out)


def main() -> int:
    from common import measure  # bench/common.py

    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=float, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--large", type=Path)
    args = parser.parse_args()
    large = args.large
    if large is None:
        cache = Path.home() / ".cache" / "piconv" / "bench"
        cache.mkdir(parents=True, exist_ok=True)
        large = cache / f"large-{int(args.size_mb)}mb.jsonl"
        if not large.exists():
            import subprocess

            subprocess.run([sys.executable, str(HERE / "make_large.py"), "--size-mb", str(args.size_mb), "--out", str(large)], check=True)
    size = large.stat().st_size
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.asf.jsonl")
        phys = measure(physical, name="physical", runs=args.runs, args=(str(large),))
        conv = measure(convert, name="convert", runs=args.runs, args=(str(large), out))
        val = measure(validate, name="validate", runs=args.runs, args=(out,))
        total = measure(convert_and_validate, name="total", runs=args.runs, args=(str(large), out))
        out_size = os.path.getsize(out)
    ratio = phys.wall_s / total.wall_s
    print(f"input {size / MiB:.1f} MiB, output {out_size / MiB:.1f} MiB, runs {args.runs} (median)")
    print("| step | wall s | MiB/s | peak RSS MiB | RSS / input |")
    print("|---|---|---|---|---|")
    for m in (phys, conv, val, total):
        print(f"| {m.name} | {m.wall_s:.2f} | {size / MiB / m.wall_s:.1f} | {m.peak_rss_mib:.0f} | {m.peak_rss_mib * MiB / size:.2f} |")
    print(f"throughput ratio (physical / total): {ratio:.2%}")
    print(f"validation share of total: {val.wall_s / (conv.wall_s + val.wall_s):.1%}")
    print(f"peak memory of the conversion / input: {total.peak_rss_mib * MiB / size:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
