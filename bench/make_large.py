"""Build a large, realistic pi session (version 3) for benchmarks, fast and deterministically.

    python bench/make_large.py --size-mb 100 --out /tmp/large.jsonl [--seed 1]

The file is made of real pi content from ../shared/corpus (or $PICONV_SHARED):

- every pi-generated file and castai__kimchi-dev__session.jsonl as a *segment*: its entries
  with their tree shape (branches, labels, branch summaries, compactions, context edits,
  system-prompt patches, custom entries) kept, every id replaced by a fresh one and every
  reference to an id (parentId, compaction.firstKeptEntryId, label/context_edit targetId,
  branch_summary.fromId) rewritten to match;
- the message bodies of the badlogic v1 sessions (long real Claude sessions with thinking,
  bash output and file reads) as linear runs of message entries.

Segments are chosen with random.Random(seed) and chained: each segment's roots hang off the
entry written last (pi's leaf at that point), so the file is one long conversation with side
branches, and pi's leaf is the last line. Tool-call ids get a per-segment suffix so a call
still pairs with exactly one result. Entry timestamps increase monotonically from a fixed
start. Same seed and size, same bytes.

Check that pi loads it: python tests/oracle/run.py OUT.jsonl (no loadError, a context).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
# Top-level entry fields that hold the id of another entry (found by scanning the corpus).
REF_FIELDS = ("parentId", "firstKeptEntryId", "targetId", "fromId")
V3_SEGMENTS = ("pi/castai__kimchi-dev__session.jsonl",)
V1_MESSAGE_SOURCES = (
    "pi/badlogic__pi-mono__before-compaction.jsonl",
    "pi/badlogic__pi-mono__compact.jsonl",
    "pi/badlogic__pi-mono__large-session.jsonl",
    "pi/badlogic__pi-mono__session.jsonl",
)
START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=timezone.utc)


def shared_dir() -> Path:
    env = os.environ.get("PICONV_SHARED")
    return Path(env) if env else REPO.parent / "shared"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # the badlogic files have a malformed line; pi skips it too
        if isinstance(value, dict):
            out.append(value)
    return out


def load_sources(shared: Path) -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]:
    """(v3 segments without their headers, runs of v1 message bodies)."""
    corpus = shared / "corpus"
    v3_paths = sorted((corpus / "pi-generated").glob("*.jsonl")) + [corpus / p for p in V3_SEGMENTS]
    segments = []
    for path in v3_paths:
        entries = [
            e for e in _read_jsonl(path) if e.get("type") != "session" and isinstance(e.get("id"), str)
        ]
        if entries:
            segments.append(entries)
    runs = []
    for rel in V1_MESSAGE_SOURCES:
        messages = [
            e["message"]
            for e in _read_jsonl(corpus / rel)
            if e.get("type") == "message" and isinstance(e.get("message"), dict)
        ]
        # Runs of ~40 messages starting at a user message, so each reads as whole turns.
        starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        for a, b in zip(starts[::8], [*starts[8::8], len(messages)], strict=False):
            if b > a:
                runs.append(messages[a:b])
    if not segments or not runs:
        raise SystemExit(f"corpus not found or empty under {corpus}")
    return segments, runs


class Writer:
    """Hands out fresh ids and timestamps; remembers the last entry written (pi's leaf)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()
        self.tick = 0
        self.leaf: str | None = None
        self.segment = 0

    def new_id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate

    def timestamp(self) -> str:
        self.tick += 1
        moment = START + timedelta(milliseconds=1500 * self.tick)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _suffix_tool_ids(message: dict[str, Any], suffix: str) -> dict[str, Any]:
    # Copy only messages that carry tool-call ids; the rest are shared, never mutated.
    role = message.get("role")
    if role == "toolResult" and isinstance(message.get("toolCallId"), str):
        return {**message, "toolCallId": message["toolCallId"] + suffix}
    content = message.get("content")
    if (
        role == "assistant"
        and isinstance(content, list)
        and any(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)
    ):
        blocks = [
            {**b, "id": b["id"] + suffix}
            if isinstance(b, dict) and b.get("type") == "toolCall" and isinstance(b.get("id"), str)
            else b
            for b in content
        ]
        return {**message, "content": blocks}
    return message


def emit_segment(w: Writer, entries: list[dict[str, Any]]) -> Iterator[bytes]:
    w.segment += 1
    suffix = f"_s{w.segment}"
    mapping = {e["id"]: w.new_id() for e in entries}
    for entry in entries:
        out = dict(entry)
        out["id"] = mapping[entry["id"]]
        out["timestamp"] = w.timestamp()
        for field in REF_FIELDS:
            value = entry.get(field)
            if isinstance(value, str) and value in mapping:
                out[field] = mapping[value]
        if entry.get("parentId") is None:
            out["parentId"] = w.leaf  # a root of the segment continues the conversation
        if isinstance(out.get("message"), dict):
            out["message"] = _suffix_tool_ids(out["message"], suffix)
        w.leaf = out["id"]
        yield orjson.dumps(out)


def emit_run(w: Writer, messages: list[dict[str, Any]]) -> Iterator[bytes]:
    w.segment += 1
    suffix = f"_s{w.segment}"
    for message in messages:
        entry_id = w.new_id()
        out = {
            "type": "message",
            "id": entry_id,
            "parentId": w.leaf,
            "timestamp": w.timestamp(),
            "message": _suffix_tool_ids(message, suffix),
        }
        w.leaf = entry_id
        yield orjson.dumps(out)


def build(out_path: Path, size_mb: float, seed: int, shared: Path) -> dict[str, Any]:
    rng = random.Random(seed)
    segments, runs = load_sources(shared)
    w = Writer(rng)
    header = {
        "type": "session",
        "version": 3,
        "id": f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-8{rng.getrandbits(12):03x}-{rng.getrandbits(48):012x}",
        "timestamp": w.timestamp(),
        "cwd": "/home/dev/projects/piconv-bench",
    }
    target = int(size_mb * 1024 * 1024)
    written = 0
    lines = 0
    tmp = out_path.with_name(out_path.name + ".tmp")
    with open(tmp, "wb", buffering=8 * 1024 * 1024) as handle:
        handle.write(orjson.dumps(header) + b"\n")
        written += handle.tell()
        while written < target:
            # Mostly pi-written segments (all entry kinds), every third pick a long real run.
            source = (
                emit_run(w, rng.choice(runs))
                if rng.random() < 0.35
                else emit_segment(w, rng.choice(segments))
            )
            for line in source:
                handle.write(line)
                handle.write(b"\n")
                written += len(line) + 1
                lines += 1
    tmp.replace(out_path)
    return {"bytes": written, "lines": lines + 1, "segments": w.segment, "leaf": w.leaf}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, required=True, help="stop after at least this many MiB")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    stats = build(args.out, args.size_mb, args.seed, shared_dir())
    print(
        f"{args.out}: {stats['bytes']:,} bytes, {stats['lines']:,} lines, {stats['segments']} segments, "
        f"leaf {stats['leaf']} in {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
