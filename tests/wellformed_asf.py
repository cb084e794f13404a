"""Well-formed ASF files another writer could write, for the property tests of
tests/test_fuzz_asf.py: trees of every core entry type (ids unique, each parent an earlier
entry), `config` deltas of every member the context algorithm reads (instruction parts
written whole, by hash and by position, `replace`, tools, `extra`, `omit`), items of every
kind, compactions keeping entries from an ancestor (pinned items, checkpoints), branch
summaries, labels, `pi:context_edit` entries, records and extensions.

``files(prefix)`` continues an existing file instead (piconv's ASF of a pi session): the
new entries hang below, and name, the entries the prefix wrote last of each pi entry (a
whole pi entry, which is what the IR holds of it).
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from hypothesis import strategies as st

JSONDict = dict[str, Any]

HEADER = {
    "type": "session",
    "format": "agentsession/0.11",
    "id": "s-generated",
    "created_at": "2026-09-17T12:00:00Z",
    "payload": "openresponses/2026-04-24",
    "harness": {"name": "generated", "version": "1"},
}
text = st.text(max_size=12)


def _sha(value: str) -> str:
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _parts(draw: st.DrawFn, role: str) -> list[JSONDict]:
    kind = "output_text" if role == "assistant" else "input_text"
    out: list[JSONDict] = []
    for _ in range(draw(st.integers(0, 3))):
        which = draw(st.integers(0, 4))
        if which <= 1:
            part: JSONDict = {"type": kind, "text": draw(text)}
            if kind == "output_text" and draw(st.booleans()):
                part["annotations"] = draw(
                    st.sampled_from([[], [{"type": "url_citation", "url": "https://x"}]])
                )
            out.append(part)
        elif which == 2:
            url = draw(
                st.sampled_from(["data:image/png;base64,AAAA", "https://x/y.png", "data:;base64,QQ=="])
            )
            out.append(
                {
                    "type": "input_image",
                    "image_url": url,
                    **({"detail": "low"} if draw(st.booleans()) else {}),
                }
            )
        elif which == 3:
            out.append({"type": "refusal", "refusal": draw(text)})
        else:
            out.append({"type": "input_file", "file_id": "file_1"})
    return out


ARGUMENTS = st.one_of(
    st.dictionaries(
        text, st.one_of(text, st.integers(-5, 5), st.floats(allow_nan=False), st.none()), max_size=3
    ).map(lambda value: orjson.dumps(value).decode()),
    st.sampled_from(
        ['{"a": 1,  "b" : [1, 2]}', '"42"', '"text"', "not json", "", "{}", "null", "1.50", '"{\\"a\\":1}"']
    ),
)


@st.composite
def _item(draw: st.DrawFn, calls: list[str]) -> JSONDict:
    kind = draw(st.integers(0, 5))
    if kind <= 1:
        role = draw(st.sampled_from(["user", "assistant", "system", "developer"]))
        content = draw(text) if draw(st.booleans()) else _parts(draw, role)
        return {
            "type": "message",
            "role": role,
            "content": content,
            **({"id": "msg_1"} if draw(st.booleans()) else {}),
        }
    if kind == 2:
        item: JSONDict = {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": draw(text)} for _ in range(draw(st.integers(0, 3)))],
        }
        if draw(st.booleans()):
            item["encrypted_content"] = draw(text)
        return item
    if kind == 3:
        calls.append(f"call_{len(calls)}")
        return {
            "type": "function_call",
            "call_id": calls[-1],
            "name": draw(st.sampled_from(["sh", "read"])),
            "arguments": draw(ARGUMENTS),
        }
    if kind == 4 and calls:
        output = draw(text) if draw(st.booleans()) else _parts(draw, "user")
        return {"type": "function_call_output", "call_id": draw(st.sampled_from(calls)), "output": output}
    return {"type": "compaction", "encrypted_content": "E"}


def _tool(draw: st.DrawFn) -> JSONDict:
    if draw(st.integers(0, 4)) == 0:
        return {"type": draw(st.sampled_from(["web_search_preview", "file_search"]))}
    tool: JSONDict = {"type": "function", "name": draw(st.sampled_from(["sh", "read", "grep"]))}
    if draw(st.booleans()):
        tool["description"] = draw(st.one_of(text, st.none()))
    if draw(st.booleans()):
        tool["parameters"] = draw(st.sampled_from([{"type": "object"}, None]))
    return tool


@st.composite
def _config(draw: st.DrawFn, known_parts: dict[str, str], ids: list[str]) -> JSONDict:
    """A ``config`` delta's members (``known_parts``: each part id's last text written)."""
    settings = {
        "model": st.sampled_from(["m1", "m2", "m3"]),
        "instructions": text,
        "reasoning": st.sampled_from([{"effort": "low"}, {"effort": "high"}]),
        "text": st.just({"verbosity": "low"}),
    }
    config: JSONDict = {key: draw(value) for key, value in settings.items() if draw(st.integers(0, 2)) == 0}
    if draw(st.integers(0, 3)) == 0:
        config["replace"] = True
    if draw(st.integers(0, 2)) == 0:
        config["tools_added"] = [_tool(draw) for _ in range(draw(st.integers(0, 2)))]
    if draw(st.integers(0, 3)) == 0:
        config["tools_removed"] = draw(st.lists(st.sampled_from(["sh", "read", "grep"]), max_size=2))
    if draw(st.integers(0, 3)) == 0:
        keys = st.sampled_from(["temperature", "top_p", "acme:x"])
        config["extra"] = draw(st.dictionaries(keys, st.one_of(st.none(), st.integers(0, 3)), max_size=2))
    if draw(st.integers(0, 2)) == 0:
        parts: list[JSONDict] = []
        for part_id in draw(
            st.lists(st.sampled_from(["product", "agentsmd", "memory"]), unique=True, max_size=3)
        ):
            how = draw(st.integers(0, 3))
            if how == 0 or part_id not in known_parts:
                known_parts[part_id] = draw(text)
                parts.append({"id": part_id, "text": known_parts[part_id], "source": "s"})
            elif how == 1:
                parts.append({"id": part_id, "hash": _sha(known_parts[part_id])})
            elif how == 2:
                parts.append({"keep": draw(st.integers(1, 2))})
            else:
                parts.append({"id": part_id})  # no text
        config["instructions_parts"] = parts
        if draw(st.booleans()):
            config["instructions"] = "\n\n".join(part.get("text", "") for part in parts)
    if draw(st.integers(0, 3)) == 0:
        config["omit"] = draw(
            st.sampled_from(
                [
                    {},
                    {"reasoning": "other_models"},
                    {"items": ids[-3:]},
                    {"items": ids[:2], "reasoning": "other_models"},
                ]
            )
        )
    return config


@st.composite
def files(draw: st.DrawFn, prefix: list[JSONDict] | None = None) -> bytes:
    """One file's bytes; ``prefix``: the header and entries of a file to continue."""
    header, *entries = prefix if prefix is not None else [HEADER]
    named = _whole_entries(entries) if prefix is not None else []  # what the new entries may name
    index = {entry["id"]: entry for entry in entries}
    known_parts: dict[str, str] = {}
    calls: list[str] = []
    for n in range(draw(st.integers(1, 25))):
        if named and (n == 0 or draw(st.integers(0, 4)) == 0):
            parent = draw(st.sampled_from(named)) if draw(st.integers(0, 3)) else None
        else:
            parent = entries[-1]["id"] if entries else None
        ancestors: list[str] = []
        at = parent
        while at is not None:
            ancestors.insert(0, at)
            at = index[at]["parent"]
        ancestors = [a for a in ancestors if a in named]
        entry: JSONDict = {
            "id": f"e{n}",
            "parent": parent,
            "ts": f"2026-09-17T12:{n // 60:02d}:{n % 60:02d}Z",
        }
        kind = draw(
            st.sampled_from(
                ["item"] * 6
                + ["config"] * 2
                + [
                    "response",
                    "compaction",
                    "branch_summary",
                    "label",
                    "pi:context_edit",
                    "acme:note",
                    "run",
                    "info",
                    "custom",
                ]
            )
        )
        entry = {"type": kind, **entry}
        if kind == "item":
            entry["item"] = draw(_item(calls))
            if draw(st.integers(0, 2)) == 0:
                entry["response"] = f"resp_{draw(st.integers(0, 3))}"
        elif kind == "config":
            entry.update(draw(_config(known_parts, named)))
        elif kind == "response":
            entry.update(
                response_id=f"resp_{draw(st.integers(0, 3))}", model=draw(st.sampled_from(["m1", "m2"]))
            )
        elif kind == "compaction":
            entry["first_kept"] = draw(st.sampled_from([*ancestors, "nowhere"]))
            entry["summary"] = draw(
                st.sampled_from(
                    [
                        {"type": "message", "role": "user", "content": "sum"},
                        {"type": "compaction", "encrypted_content": "E"},
                    ]
                )
            )
            if draw(st.booleans()):
                entry["pinned"] = [draw(_item(calls)) for _ in range(draw(st.integers(0, 2)))]
            if draw(st.booleans()):
                checkpoint = draw(_config(known_parts, named))
                checkpoint.pop("replace", None)
                if "tools_added" in checkpoint:
                    checkpoint["tools"] = checkpoint.pop("tools_added")
                entry["config"] = checkpoint
        elif kind == "branch_summary":
            entry["from"] = draw(st.sampled_from(named)) if named else "nowhere"
            entry["summary"] = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": draw(text)}],
            }
        elif kind == "label":
            entry["target"] = draw(st.sampled_from(named)) if named else "nowhere"
            entry["label"] = draw(st.sampled_from(["leaf", None, "mark"]))
        elif kind == "pi:context_edit":
            items = [a for a in ancestors if index[a]["type"] == "item"] or ["nowhere"]
            entry["items"] = draw(st.lists(st.sampled_from(items), min_size=1, max_size=2, unique=True))
            entry["replacement"] = [{"type": "input_text", "text": draw(text)}]
        elif kind == "run":
            entry.update(run_id="run_1", phase="start", source="input")
        elif kind == "info":
            entry["name"] = draw(text)
        elif kind == "custom":
            entry.update(ns="acme", data={"k": 1})
        else:
            entry.update(note=draw(text))
        entries.append(entry)
        index[entry["id"]] = entry
        named.append(entry["id"])
    return b"".join(orjson.dumps(value) + b"\n" for value in [header, *entries])


def _whole_entries(entries: list[JSONDict]) -> list[str]:
    """The ids of the entries that stand for a whole entry of the IR: for a chain
    piconv wrote of a pi entry (one ``legacy_id``), its last entry."""
    last: dict[Any, str] = {}
    for entry in entries:
        last[entry.get("legacy_id", entry["id"])] = entry["id"]
    return list(last.values())
