"""The C accelerator (core/_speedups.c) builds exactly the IR the Python loaders build.

The Python loaders are the reference. Each file below is loaded in a process with the
accelerator and in one with ``PICONV_PURE_PYTHON=1``; the two ``--to ir`` dumps (every
entry, every ``extra``, every problem) must be the same bytes. Besides the corpora, a
file of mutated entries exercises every way a member can fail the fast path: missing,
null, of another type, unknown members beside it, at each level of an entry.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import corpus_files, session_bytes

_DUMP = r"""
import hashlib, sys, orjson, piconv
from piconv import fastload
from piconv.irformat import document_to_json
out = {"accelerated": fastload.speedups is not None, "files": {}}
for path in sys.argv[1:]:
    doc = piconv.load(path)
    out["files"][path] = orjson.dumps(document_to_json(doc), option=orjson.OPT_SORT_KEYS).decode()
sys.stdout.write(orjson.dumps(out).decode())
"""


def _dump(paths: list[Path], pure: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PICONV_PURE_PYTHON"}
    if pure:
        env["PICONV_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", _DUMP, *map(str, paths)], env=env, capture_output=True, check=True, timeout=300
    )
    return orjson.loads(done.stdout)


# --------------------------------------------------------------------------- mutations

_ODD_VALUES: tuple[Any, ...] = (None, 7, 2.5, True, "text", [], [1, "x"], {}, {"k": "v"})


def _variants(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """``obj`` with one member removed, replaced by each odd value, or one unknown added."""
    out: list[dict[str, Any]] = [{**obj, "unknownMember": {"kept": True}}]
    for key in obj:
        out.append({k: v for k, v in obj.items() if k != key})
        for odd in _ODD_VALUES:
            if obj[key] != odd or type(obj[key]) is not type(odd):
                out.append({**obj, key: odd})
    return out


def _mutated_entries(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """Variants of ``entry`` at the entry, message, content part, usage and cost levels."""
    out = _variants(entry)
    message = entry.get("message")
    if isinstance(message, dict):
        for variant in _variants(message):
            out.append({**entry, "message": variant})
        content = message.get("content")
        if isinstance(content, list):
            for i, part in enumerate(content[:3]):
                if isinstance(part, dict):
                    for variant in _variants(part):
                        new = copy.deepcopy(entry)
                        new["message"]["content"][i] = variant
                        out.append(new)
            new = copy.deepcopy(entry)
            new["message"]["content"].append("a bare string part")
            out.append(new)
        usage = message.get("usage")
        if isinstance(usage, dict):
            for variant in _variants(usage):
                new = copy.deepcopy(entry)
                new["message"]["usage"] = variant
                out.append(new)
            if isinstance(usage.get("cost"), dict):
                for variant in _variants(usage["cost"]):
                    new = copy.deepcopy(entry)
                    new["message"]["usage"]["cost"] = variant
                    out.append(new)
    return out


def _samples() -> list[dict[str, Any]]:
    """One entry of each (type, role) found in the corpora."""
    seen: dict[tuple[Any, Any], dict[str, Any]] = {}
    for path in corpus_files():
        for raw in path.read_bytes().splitlines():
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(value, dict) or value.get("type") == "session":
                continue
            message = value.get("message")
            role = message.get("role") if isinstance(message, dict) else None
            seen.setdefault((value.get("type"), role), value)
    return list(seen.values())


@pytest.fixture(scope="module")
def mutated_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    entries = []
    for sample in _samples():
        entries.extend(_mutated_entries(sample))
    # Unhashable discriminators and roles: the Python loaders must not stumble on them either.
    entries.append(
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "user", "content": [{"type": ["text"], "text": "x"}]},
        }
    )
    entries.append(
        {
            "type": "message",
            "id": "u2",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": {"r": 1}, "content": "x"},
        }
    )
    path = tmp_path_factory.mktemp("speedups") / "mutated.jsonl"
    # fresh ids keep every variant in the tree (a duplicate id renames, which is also fine)
    lines = []
    for n, entry in enumerate(entries):
        if isinstance(entry.get("id"), str):
            entry = {**entry, "id": f"{entry['id']}-{n}"}
        lines.append(entry)
    path.write_bytes(session_bytes(*lines))
    assert len(entries) > 500
    return path


# --------------------------------------------------------------------------- tests


def test_the_accelerator_is_built_and_used() -> None:
    """A machine with a C compiler (CI's) builds it; a silent fallback would hide it."""
    from piconv import fastload, pimodel

    assert fastload.speedups is not None, "core/_speedups.c was not built: pip install -e . with gcc"
    assert type(pimodel.load_usage).__name__ == "TableLoader"


@pytest.mark.shared
def test_accelerated_ir_equals_python_ir(mutated_file: Path, shared: Path) -> None:
    paths = [*corpus_files(), mutated_file]
    assert len(paths) > 20
    fast = _dump(paths, pure=False)
    pure = _dump(paths, pure=True)
    assert fast["accelerated"] and not pure["accelerated"]
    for path in map(str, paths):
        a, b = fast["files"][path], pure["files"][path]
        if a != b:  # name the first difference (pytest's diff of megabytes never ends)
            at = (
                next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
                if a[: len(b)] != b[: len(a)]
                else min(len(a), len(b))
            )
            pytest.fail(
                f"{path}: the IR differs at character {at}: {a[at - 80 : at + 80]!r} vs {b[at - 80 : at + 80]!r}"
            )


def test_fallback_is_the_python_loader() -> None:
    """Whatever the fast path declines reaches the Python loader with the same arguments."""
    from piconv import pimodel

    loader = pimodel.load_usage
    odd = {"input": "one", "surprise": [1]}  # a mistyped member: declined
    assert loader(odd) == loader.fallback(odd)
    assert loader(odd).extra == {"input": "one", "surprise": [1]}
    summary = pimodel._load_summary({"role": "branchSummary", "summary": "s"}, kind="branch")
    assert summary.kind == "branch" and summary.summary == "s"
    with pytest.raises(TypeError):
        pimodel.load_content(5)


@pytest.mark.parametrize(
    "raw",
    [
        {"input": 1, "surprise": [1]},
        {"surprise": 1, "input": 2, "output": 3, "later": {"x": None}},
        {"input": None, "surprise": 1},
        {"input": 1.5, "output": "x", "surprise": 1},
        {"durationMs": 12, "input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3},
    ],
)
def test_unknown_members_are_kept_by_the_accelerator_as_by_python(raw: dict) -> None:
    """pi 1.6.0 writes members the tables do not name (``durationMs``): the C loader keeps
    them in ``extra`` itself, in the same order, rather than handing the object over."""
    from piconv import pimodel

    for loader in (pimodel.load_usage, pimodel.load_cost):
        fast, pure = loader(dict(raw)), loader.fallback(dict(raw))
        assert fast == pure and list(fast.extra) == list(pure.extra)


@pytest.mark.shared
def test_accelerated_string_walk_equals_python_walk(mutated_file: Path, shared: Path) -> None:
    """A redaction's first pass (Redactor._walk, the reference) and the C accelerator's
    StringWalker collect the same strings in the same order, and answer alike whether
    each entry holds something to drop, on every corpus file."""
    import piconv
    from piconv import fastload
    from piconv.redaction.engine import Redactor

    assert fastload.speedups is not None
    paths = [*corpus_files(), mutated_file]
    dropping = 0
    for path in paths:
        doc = piconv.load(path)
        for drop_images in (False, True):
            redactor = Redactor(None, drop_images=drop_images)  # type: ignore[arg-type]
            walk = redactor._walker()
            for value in (doc.session, *doc.entries, doc.issues):
                fast: list[str] = []
                slow: list[str] = []
                answer = walk(value, fast)
                assert (answer, fast) == (redactor._walk(value, slow), slow), f"{path}: {value!r:.200}"
                dropping += answer
    assert dropping > 50  # signatures and images are met, so the answers are compared both ways


@pytest.mark.shared
def test_accelerated_redaction_equals_python_redaction(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Redacting every corpus file (with images dropped and kept) gives the same document
    and the same account with the C accelerator's walk and rebuild as with the Python
    ones, the reference."""
    import piconv
    from piconv import fastload
    from piconv.irformat import document_to_json
    from piconv.redaction import engine
    from piconv.redaction.api import redact

    assert fastload.speedups is not None
    changed = 0
    for path in corpus_files():
        doc = piconv.load(path)
        for images in (False, True):
            fast = redact(doc, images=images, homes=("/Users/badlogic", "/home/user"))
            with monkeypatch.context() as patch:
                patch.setattr(engine, "speedups", None)
                slow = redact(doc, images=images, homes=("/Users/badlogic", "/home/user"))
            assert document_to_json(fast.document) == document_to_json(slow.document), path
            assert fast.to_json() == slow.to_json(), path
            changed += sum(a is not b for a, b in zip(fast.document.entries, doc.entries, strict=True))
    assert changed > 1000  # entries rebuilt, not only kept
