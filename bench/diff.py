"""``piconv diff`` on sessions the size of the corpus's largest real one.

    python bench/diff.py [--runs 7]

From ``badlogic__pi-mono__before-compaction.jsonl`` (2.4 MB, 1,003 lines, migrated to
version 3 so every entry has an id), two inputs are made under ~/.cache/piconv/bench:

- ``branches.jsonl``: the session with a second branch from its middle prompt on (the
  rest of the conversation again, its prompts reworded, fresh ids): two leaves whose
  paths are each as long as the original session;
- ``parent.jsonl`` and ``fork.jsonl``: the session, and a fork of it made at its middle
  prompt (its header names the parent, the first half copied) that goes on with the
  reworded second half: two sessions of that size.

Timed: ``piconv diff branches.jsonl --leaf A --against B`` and ``piconv diff parent.jsonl
fork.jsonl``, each a whole process (start-up, reading, comparing, printing: median of
``--runs``), and the same comparisons in-process (``piconv.diff`` with its reading, and
without it on documents already read). Goal: every figure under 0.5 s.
Exit status 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import measure, record
from make_large import shared_dir

GOAL_S = 0.5
SOURCE = "corpus/pi/badlogic__pi-mono__before-compaction.jsonl"
CACHE = Path.home() / ".cache" / "piconv" / "bench" / "diff"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _dump(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def _reworded(entries: list[dict[str, Any]], attach_to: str) -> list[dict[str, Any]]:
    """``entries`` again with fresh ids, the first one under ``attach_to``, and each
    prompt reworded: the other branch of the same work."""
    ids = {e["id"]: f"b{e['id'][1:]}" for e in entries}
    out = []
    for e in entries:
        copy = orjson.loads(orjson.dumps(e))
        copy["id"] = ids[e["id"]]
        copy["parentId"] = ids.get(e.get("parentId"), attach_to)
        message = copy.get("message")
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                message["content"] = "Instead: " + content
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        part["text"] = "Instead: " + part["text"]
                        break
        out.append(copy)
    return out


def make_inputs(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    original = root / "original.v3.jsonl"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "piconv",
            str(shared_dir() / SOURCE),
            "--to",
            "pi",
            "--migrate",
            "-o",
            str(original),
            "-q",
        ],
        check=True,
    )
    lines = _lines(original)
    header, entries = lines[0], lines[1:]
    prompts = [i for i, e in enumerate(entries) if (e.get("message") or {}).get("role") == "user"]
    middle = prompts[len(prompts) // 2]
    first, second = entries[:middle], entries[middle:]
    branch = _reworded(second, first[-1]["id"])
    _dump(root / "branches.jsonl", [header, *entries, *branch])
    _dump(root / "parent.jsonl", lines)
    fork_header = {**header, "id": header["id"][:-4] + "f0f0", "timestamp": branch[0].get("timestamp")}
    fork_header["parentSession"] = str(root / "parent.jsonl")
    _dump(root / "fork.jsonl", [fork_header, *first, *branch])
    return {
        "leaf_a": entries[-1]["id"],
        "leaf_b": branch[-1]["id"],
        "sizes": {n: (root / n).stat().st_size for n in ("branches.jsonl", "parent.jsonl", "fork.jsonl")},
        "entries": len(entries),
        "second_half": len(second),
    }


def _in_process(runs: int, call: Any) -> list[float]:
    call()  # warm: imports, caches
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=7)
    ns = p.parse_args(argv)
    info = make_inputs(CACHE)
    import piconv

    branches, parent, fork = CACHE / "branches.jsonl", CACHE / "parent.jsonl", CACHE / "fork.jsonl"
    a, b = info["leaf_a"], info["leaf_b"]
    cli = [sys.executable, "-m", "piconv", "diff"]
    rows: list[dict[str, Any]] = []

    def row(what: str, seconds: float, spread: list[float]) -> None:
        rows.append(
            {
                "what": what,
                "value": round(seconds, 3),
                "unit": "s",
                "spread": f"{min(spread):.3f}-{max(spread):.3f}",
                "goal": f"< {GOAL_S} s",
                "ok": seconds < GOAL_S,
            }
        )

    m = measure([*cli, str(branches), "--leaf", a, "--against", b], name="branches", runs=ns.runs)
    row(
        f"piconv diff branches.jsonl ({info['sizes']['branches.jsonl'] / 1e6:.1f} MB) --leaf A --against B",
        m.wall_s,
        m.runs,
    )
    m = measure([*cli, str(parent), str(fork)], name="fork", runs=ns.runs)
    row(
        f"piconv diff parent.jsonl fork.jsonl ({info['sizes']['parent.jsonl'] / 1e6:.1f} + "
        f"{info['sizes']['fork.jsonl'] / 1e6:.1f} MB)",
        m.wall_s,
        m.runs,
    )
    t = _in_process(ns.runs, lambda: piconv.diff(branches, leaf=a, against=b))
    row("piconv.diff(branches, leaf=A, against=B), reading included", statistics.median(t), t)
    t = _in_process(ns.runs, lambda: piconv.diff(parent, fork))
    row("piconv.diff(parent, fork), reading included", statistics.median(t), t)
    doc = piconv.load(branches)
    t = _in_process(ns.runs, lambda: piconv.diff(doc, leaf=a, against=b))
    row("piconv.diff of the branches, on the document already read", statistics.median(t), t)
    docs = piconv.load(parent), piconv.load(fork)
    t = _in_process(ns.runs, lambda: piconv.diff(*docs))
    row("piconv.diff of the two sessions, on the documents already read", statistics.median(t), t)
    result = piconv.diff(branches, leaf=a, against=b)
    record(
        "diff",
        rows,
        extra={
            "inputs": {**info, "common_entries": result.common.entries, "pairs": len(result.pairs)},
        },
    )
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
