"""Regenerate every oracle golden under tests/oracle/goldens/ and tests/oracle/variants.json.

    python tests/oracle/regenerate.py

Goldens are what pi 1.6.0 itself (through oracle.mjs, run with --deterministic-ids) makes of
each file of ../shared/corpus/{pi,pi-generated}:

- ``goldens/<corpus>/<stem>.json``: default target (gpt-4o, chat compat of api.openai.com) at pi's
  own leaf; keys run.BASE_KEYS.
- ``goldens/<corpus>/<stem>.<variant>.json``: another target model or compat (table VARIANTS
  below) on the richest files; keys run.VARIANT_KEYS, where openai_chat/responses_input are only
  stored when they differ from the base golden; the others are named in its "sameAsBase" list
  (run.expected_variant() gives the complete expected keys).
- ``goldens/<corpus>/<stem>.leaf-<id>.json``: every leaf (entry without children) of the small
  files that have more than one; keys run.BASE_KEYS.

tests/test_oracle_live.py re-runs the oracle and asserts the same output, so goldens cannot drift
from pi. Regenerate only on purpose (a new pi pin, a new corpus file, a new variant).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # the sibling module, importable once its folder is on sys.path

# Files the target variants run on: the richest ones (system-message patches, custom messages,
# images in user and tool results, thinking with signatures, model switches, a v1 session).
VARIANT_FILES: dict[str, dict[str, Any]] = {
    # The model that wrote the session, so pi-ai's cross-model rule keeps its thinking blocks.
    "pi-generated/basic.jsonl": {"provider": "faux", "api": "faux", "id": "faux-coder"},
    "pi-generated/extensions.jsonl": {"provider": "faux", "api": "faux", "id": "faux-coder"},
    "pi-generated/images.jsonl": {"provider": "faux", "api": "faux", "id": "faux-coder"},
    "pi-generated/models.jsonl": {"provider": "faux", "api": "faux", "id": "faux-coder"},
    "pi/badlogic__pi-mono__before-compaction.jsonl": {
        "provider": "anthropic",
        "api": "anthropic-messages",
        "id": "claude-opus-4-5",
    },
}


def _same_model(own: dict[str, Any]) -> str:
    # reasoning:true as a thinking model; a neutral baseUrl so detectCompat sees no known host.
    return json.dumps({**own, "name": own["id"], "reasoning": True, "baseUrl": "http://localhost:8080/v1"})


# name -> (options, description); options may use {same_model} for the file's own model.
VARIANTS: dict[str, tuple[list[str], str]] = {
    "o3-mini": (
        ["--target", "openai/o3-mini"],
        "pi-ai catalog model openai/o3-mini: reasoning, so instructions go out as role developer; text-only input",
    ),
    "groq-llama": (
        ["--target", "groq/llama-3.3-70b-versatile"],
        "pi-ai catalog model on a non-OpenAI host: role system, no images, provider-specific tool-call ids",
    ),
    "no-image": (
        ["--model-json", '{"input":["text"]}'],
        "default gpt-4o without image input: images become pi-ai's placeholder texts",
    ),
    "tool-result-name": (
        ["--compat", "requiresToolResultName=true"],
        "compat requiresToolResultName",
    ),
    "assistant-after-tool-result": (
        ["--compat", "requiresAssistantAfterToolResult=true"],
        "compat requiresAssistantAfterToolResult: synthetic assistant between a tool result and a user message",
    ),
    "mid-convo-system": (
        ["--compat", "supportsMidConvoSystemMessages=true"],
        "compat supportsMidConvoSystemMessages: later system messages stay in place instead of being folded",
    ),
    "mid-convo-tools": (
        ["--compat", "supportsMidConvoSystemMessages=true", "--compat", "supportsMidConvoToolAdditions=true"],
        "compat supportsMidConvoSystemMessages + supportsMidConvoToolAdditions: tool additions as system tool messages",
    ),
    "same-model": (
        ["--model-json", "{same_model}"],
        "the session's own provider/api/model as target (reasoning): thinking blocks are replayed",
    ),
    "thinking-as-text": (
        ["--model-json", "{same_model}", "--compat", "requiresThinkingAsText=true"],
        "the session's own model with compat requiresThinkingAsText: thinking replayed as plain text",
    ),
}
# Leaf goldens: files up to this size with more than one leaf.
LEAF_MAX_BYTES = 100_000


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _write(path: Path, data: dict[str, Any], written: set[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = run.dump_golden(data)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    written.add(path)


def regenerate() -> dict[str, int]:
    files = run.corpus_files()
    if not files:
        raise SystemExit(f"no corpus files under {run.shared_dir() / 'corpus'}")
    written: set[Path] = set()
    manifest: list[dict[str, Any]] = []

    # 1. Base goldens, all files in parallel.
    bases = run.run_many((path, ()) for _, path in files)
    base_by_file: dict[str, dict[str, Any]] = {}
    for (corpus, path), data in zip(files, bases, strict=True):
        golden = run.keep(data, run.BASE_KEYS)
        base_by_file[f"{corpus}/{path.name}"] = golden
        _write(run.base_golden(corpus, path), golden, written)

    # 2. Variant and leaf jobs.
    jobs: list[dict[str, Any]] = []
    for rel, own in VARIANT_FILES.items():
        corpus, name = rel.split("/", 1)
        path = run.shared_dir() / "corpus" / corpus / name
        for variant, (options, description) in VARIANTS.items():
            opts = [o.replace("{same_model}", _same_model(own)) for o in options]
            jobs.append(
                {
                    "kind": "variant",
                    "name": variant,
                    "corpus": corpus,
                    "file": name,
                    "options": opts,
                    "golden": f"{corpus}/{path.stem}.{variant}.json",
                    "description": description,
                }
            )
    small = [(c, p) for c, p in files if p.stat().st_size <= LEAF_MAX_BYTES]
    listings = run.run_many((p, ("--list-leaves",)) for _, p in small)
    for (corpus, path), listing in zip(small, listings, strict=True):
        leaves = [leaf for leaf in listing["leaves"] if isinstance(leaf, str)]
        if len(leaves) < 2:
            continue
        for leaf in leaves:
            jobs.append(
                {
                    "kind": "leaf",
                    "name": f"leaf-{leaf}",
                    "corpus": corpus,
                    "file": path.name,
                    "options": ["--leaf", leaf],
                    "golden": f"{corpus}/{path.stem}.leaf-{_safe(leaf)}.json",
                    "description": f"context at leaf {leaf} (an entry without children)",
                }
            )
    results = run.run_many(
        (run.shared_dir() / "corpus" / j["corpus"] / j["file"], j["options"]) for j in jobs
    )
    for job, data in zip(jobs, results, strict=True):
        if job["kind"] == "leaf":
            golden = run.keep(data, run.BASE_KEYS)
        else:
            base = base_by_file[f"{job['corpus']}/{job['file']}"]
            # Store the conversions only where they differ from the base golden, and say which
            # ones are the base's (sameAsBase) so a reader of this file alone is not misled.
            golden = {k: data[k] for k in ("leafId", "target") if k in data}
            same = []
            for k in ("openai_chat", "responses_input"):
                if k in data and data[k] == base.get(k):
                    same.append(k)
                elif k in data:
                    golden[k] = data[k]
            golden["sameAsBase"] = same
        _write(run.GOLDENS / job["golden"], golden, written)
        manifest.append(job)

    run.MANIFEST.write_text(
        json.dumps({"goldens": manifest}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    # Drop goldens no longer produced (a removed corpus file or variant).
    stale = [p for p in run.GOLDENS.rglob("*.json") if p not in written]
    for path in stale:
        path.unlink()
    size = sum(p.stat().st_size for p in written)
    return {"goldens": len(written), "stale_removed": len(stale), "bytes": size}


def main() -> int:
    t0 = time.perf_counter()
    run.ensure_installed()
    stats = regenerate()
    print(
        f"{stats['goldens']} goldens ({stats['bytes'] / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s"
        f"; {stats['stale_removed']} stale removed"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
