"""RFC 0001's context algorithm: the settings and item list a request at a leaf carries.

``AsfFile`` holds the header and the entries of a file in file order with an index by id;
``AsfFile.context(leaf)`` walks ``parent`` from the leaf to the root (``parents`` is
provenance and never walked), replays ``config`` entries into settings (honouring
``replace``, ``instructions_parts``, ``omit``), starts from the last ``compaction``'s
checkpoint and summary when there is one, and collects the items of ``item``,
``branch_summary`` and the selected ``compaction`` entries. Record entries and unknown
extensions contribute nothing; one extension is known: ``pi:context_edit`` with
``items`` and ``replacement`` (pi's context edit that replaces a message's content, see
``docs/formats/asf.md``) puts the replacement in place of the items it names.

``resume_leaf`` is the RFC's resume rule. ``rule.py`` turns a context into IR messages.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

JSONDict = dict[str, Any]

__all__ = ["NOT_LABEL", "AsfFile", "Context", "Node", "build_context", "node", "resume_leaf"]

_SETTINGS = ("model", "instructions", "reasoning", "text")


@dataclass(slots=True)
class Context:
    settings: JSONDict
    items: list[JSONDict]
    entries: list[str]  # ids of the entries the context was built from, in order
    item_entries: list[str]  # ids of the entries each item came from
    omitted: list[str] = field(default_factory=list)


@dataclass(slots=True)
class AsfFile:
    header: JSONDict | None
    entries: list[JSONDict]
    index: dict[str, JSONDict]

    @classmethod
    def of(cls, source: Any) -> AsfFile:
        """The header and entries of an ASF file (a path, bytes or a binary stream) as RFC
        0001's context algorithm reads them: every line that is an object with a string
        ``id``, undone from normalisation (no other check: the reader's job)."""
        from ..lines import iter_lines
        from .unnormalise import restore

        header = None
        entries = []
        for line in iter_lines(source):
            value = line.value
            if value is None:
                continue
            if value.get("type") == "session":
                header = header or value
            elif type(value.get("id")) is str:
                entries.append(restore(value))
        return cls(header, entries, {e["id"]: e for e in entries})

    def leaf(self) -> str | None:
        """The leaf RFC 0001's resume rule gives."""
        return resume_leaf([node(e) for e in self.entries])

    def path(self, leaf: str) -> list[JSONDict]:
        out = []
        node = self.index.get(leaf)
        seen: set[str] = set()
        while node is not None and node["id"] not in seen:
            seen.add(node["id"])
            out.append(node)
            parent = node.get("parent")
            node = self.index.get(parent) if type(parent) is str else None
        out.reverse()
        return out

    def context(self, leaf: str | None = None) -> Context:
        leaf = leaf or self.leaf()
        if leaf is None:
            return Context({}, [], [], [])
        return build_context(self.path(leaf))


NOT_LABEL = object()
"""The label of a node that is no label entry (:data:`Node`)."""

Node = tuple[str, Any, Any, Any]
"""What the resume rule reads of an entry: its id, its parent, its label (``NOT_LABEL``
for an entry that is no ``label``) and the label's target."""


def node(entry: JSONDict) -> Node:
    """An ASF entry as the resume rule reads it."""
    is_label = entry.get("type") == "label"
    return (
        entry["id"],
        entry.get("parent"),
        entry.get("label") if is_label else NOT_LABEL,
        entry.get("target"),
    )


def resume_leaf(nodes: list[Node]) -> str | None:
    """RFC 0001's resume rule over the entries of a file in file order: the newest entry
    that descends from the target of the last ``leaf`` label in force and was written
    after that label (the label itself excepted), else that target; the last entry
    without such a label. A leaf found that is itself a ``leaf`` label resolves to its
    nearest other ancestor."""
    if not nodes:
        return None
    index = {n[0]: n for n in nodes}
    position = {n[0]: i for i, n in enumerate(nodes)}

    def is_leaf_label(n: Node) -> bool:
        return n[2] == "leaf"

    target: str | None = None
    at = -1
    for i, (_id, _parent, label, aim) in enumerate(nodes):
        if label is NOT_LABEL or type(aim) is not str:
            continue
        if label == "leaf" and aim in index and not is_leaf_label(index[aim]):
            target, at = aim, i
        elif label is None and aim == target:
            target, at = None, -1
    if target is None:
        found = nodes[-1][0]
    else:
        # Whether each entry descends from the target, its parents walked while each is
        # written before its child; one pass in file order (a walk up from every entry
        # after the label took a time quadratic in the entries below a long path).
        descends: dict[str, bool] = {}
        for i, (entry_id, parent, _label, _aim) in enumerate(nodes):
            if position[entry_id] == i:  # the entry an id names (the last of its lines)
                descends[entry_id] = entry_id == target or (
                    type(parent) is str and position.get(parent, -1) < i and descends.get(parent, False)
                )
        found = target
        for entry_id, parent, label, _aim in nodes[at + 1 :]:
            if label == "leaf":
                continue
            if entry_id == target or (
                type(parent) is str
                and position.get(parent, -1) < position[entry_id]
                and descends.get(parent, False)
            ):
                found = entry_id
    current = index[found]
    while is_leaf_label(current):
        parent = current[1]
        if type(parent) is not str or position.get(parent, len(nodes)) >= position[current[0]]:
            break  # no parent written before it (labels naming each other would loop)
        current = index[parent]
    return current[0]


# --------------------------------------------------------------------------- settings


def _sha(text: Any) -> str:
    if type(text) is not str:
        return ""  # no part's text: matches no hash
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _objects(value: Any) -> list[JSONDict]:
    """The objects of a list (anything else: none)."""
    return [v for v in value if type(v) is dict] if type(value) is list else []


def _named(part: JSONDict) -> bool:
    """Whether a part's ``id`` can name it: a string, or none at all."""
    return part.get("id") is None or type(part.get("id")) is str


class _Settings:
    """Replay state: the request settings plus what resolving parts and omit needs."""

    def __init__(self) -> None:
        self.values: JSONDict = {}
        self.tools: list[JSONDict] = []
        self.extra: JSONDict = {}
        self.parts: list[JSONDict] | None = None
        self.left_force: dict[tuple[str, str], JSONDict] = {}  # (id, hash) -> part
        self.omit_reasoning: str | None = None
        self.omit_items: set[str] = set()

    def start_from(self, checkpoint: Any) -> None:
        self.__init__()  # type: ignore[misc]
        if type(checkpoint) is not dict:
            return  # a checkpoint that is no object sets nothing
        for key in _SETTINGS:
            if checkpoint.get(key) is not None:
                self.values[key] = checkpoint[key]
        self.tools = _objects(checkpoint.get("tools"))
        self.extra = dict(checkpoint["extra"]) if type(checkpoint.get("extra")) is dict else {}
        if isinstance(checkpoint.get("instructions_parts"), list):
            self.parts = [dict(p) for p in _objects(checkpoint["instructions_parts"]) if _named(p)]
        self._omit(checkpoint.get("omit"))

    def apply(self, delta: JSONDict) -> None:
        if delta.get("replace") is True:
            self.__init__()  # type: ignore[misc]
        for key in _SETTINGS:
            if key in delta and delta[key] is not None:
                self.values[key] = delta[key]
        removed = delta.get("tools_removed")
        for name in removed if type(removed) is list else ():
            self.tools = [t for t in self.tools if t.get("name") != name]
        for tool in _objects(delta.get("tools_added")):
            names = [t.get("name") for t in self.tools]
            if tool.get("name") in names:
                self.tools[names.index(tool.get("name"))] = tool
            else:
                self.tools.append(tool)
        extra = delta.get("extra")
        for key, value in (extra if type(extra) is dict else {}).items():
            if value is None:
                self.extra.pop(key, None)
            else:
                self.extra[key] = value
        if isinstance(delta.get("instructions_parts"), list):
            self._parts(delta["instructions_parts"], delta.get("instructions"))
        if "omit" in delta:
            self._omit(delta["omit"])

    def _parts(self, elements: list[Any], instructions: Any) -> None:
        current = self.parts or []
        by_id = {p.get("id"): p for p in current}  # ids are strings or absent (_named)
        cursor = 0
        resolved: list[JSONDict] = []
        ok = True
        for el in elements:
            if not isinstance(el, dict) or not _named(el):
                ok = False
                continue
            pid = el.get("id")
            if pid is None:
                keep = el.get("keep")
                if type(keep) is int and keep > 0 and cursor + keep <= len(current):
                    resolved.extend(current[cursor : cursor + keep])
                    cursor += keep
                else:
                    ok = False
                continue
            if pid in by_id:
                cursor = current.index(by_id[pid]) + 1
            if "text" in el:
                resolved.append({k: v for k, v in el.items() if k != "hash"})
            elif type(el.get("hash")) is str:
                mine = by_id.get(pid)
                if mine is not None and _sha(mine.get("text", "")) == el["hash"]:
                    resolved.append({**mine, **({"source": el["source"]} if "source" in el else {})})
                elif (pid, el["hash"]) in self.left_force:
                    resolved.append(self.left_force[(pid, el["hash"])])
                else:
                    ok = False
            else:
                resolved.append({"id": pid, "text": ""})
        for part in current:
            self.left_force[(part.get("id"), _sha(part.get("text", "")))] = part
        self.parts = resolved
        if type(instructions) is str:
            self.values["instructions"] = instructions
        elif ok:
            self.values["instructions"] = "\n\n".join(
                p["text"] if type(p.get("text")) is str else "" for p in resolved
            )

    def _omit(self, omit: Any) -> None:
        if not isinstance(omit, dict):
            return
        items = omit.get("items") if type(omit.get("items")) is list else []
        if not omit.get("reasoning") and not [i for i in items if i]:
            self.omit_reasoning = None
            self.omit_items = set()
            return
        if omit.get("reasoning") == "other_models":
            self.omit_reasoning = "other_models"
        self.omit_items |= {i for i in items if type(i) is str and i}

    def result(self) -> JSONDict:
        out = {k: v for k, v in self.values.items()}
        if self.tools:
            out["tools"] = self.tools
        if self.extra:
            out["extra"] = self.extra
        return out


# --------------------------------------------------------------------------- algorithm


def build_context(path: list[JSONDict]) -> Context:
    last = -1
    for i, entry in enumerate(path):
        if entry.get("type") == "compaction":
            last = i
    settings = _Settings()
    model_at: dict[str, Any] = {}
    selected: list[JSONDict] = []
    items: list[tuple[JSONDict, str]] = []
    if last >= 0:
        compaction = path[last]
        # Settings before the fold are replayed only to know the model in force at each
        # entry (for omit.reasoning); the request starts from the checkpoint.
        for entry in path[:last]:
            if entry.get("type") == "config":
                settings.apply(entry)
            model_at[entry["id"]] = settings.values.get("model")
        settings.start_from(compaction.get("config"))
        ids = [e["id"] for e in path[:last]]
        first_kept = compaction.get("first_kept")
        start = ids.index(first_kept) if first_kept in ids else last
        selected = [compaction, *path[start:last], *path[last + 1 :]]
        if isinstance(compaction.get("summary"), dict):
            items.append((compaction["summary"], compaction["id"]))
        items.extend((p, compaction["id"]) for p in _objects(compaction.get("pinned")))
        body = [*path[start:last], *path[last + 1 :]]
        replay = path[last + 1 :]
    else:
        selected = list(path)
        body = path
        replay = path
    for entry in replay:
        if entry.get("type") == "config":
            settings.apply(entry)
        model_at[entry["id"]] = settings.values.get("model")
    final_model = settings.values.get("model")
    omitted: list[str] = []
    replaced = _replacements(selected)
    for entry in body:
        type_ = entry.get("type")
        if type_ == "item" and isinstance(entry.get("item"), dict):
            item = entry["item"]
            if entry["id"] in settings.omit_items:
                omitted.append(entry["id"])
                continue
            edit = replaced.get(entry["id"])
            if edit is not None:
                if entry["id"] == edit["items"][0]:
                    items.append((_replaced(item, entry, edit["replacement"]), entry["id"]))
                continue
            if (
                settings.omit_reasoning == "other_models"
                and item.get("type") == "reasoning"
                and entry.get("response")
                and final_model
                and model_at.get(entry["id"])
                and model_at.get(entry["id"]) != final_model
            ):
                omitted.append(entry["id"])
                continue
            items.append((item, entry["id"]))
        elif type_ == "branch_summary" and isinstance(entry.get("summary"), dict):
            items.append((entry["summary"], entry["id"]))
    return Context(
        settings=settings.result(),
        items=[i for i, _ in items],
        entries=[e["id"] for e in selected],
        item_entries=[src for _, src in items],
        omitted=omitted,
    )


# --------------------------------------------------------------------------- pi:context_edit


def _replacements(selected: list[JSONDict]) -> dict[str, JSONDict]:
    """Item entry id -> the ``pi:context_edit`` replacing it: the latest on the selected
    entries wins, wherever it stands among them (pi's rule)."""
    out: dict[str, JSONDict] = {}
    for entry in selected:
        if entry.get("type") != "pi:context_edit":
            continue
        names, replacement = entry.get("items"), entry.get("replacement")
        if isinstance(names, list) and names and isinstance(replacement, list):
            for name in names:
                if type(name) is str:
                    out[name] = entry
    return out


def _replaced(item: JSONDict, entry: JSONDict, parts: list[Any]) -> JSONDict:
    """The first item of an edited message, carrying the replacement content: a user
    message keeps its role, a tool output its call id; a model turn (items of a
    ``response``) becomes one assistant message (the edit replaced all its parts)."""
    if item.get("type") == "function_call_output":
        return {**item, "output": parts}
    if item.get("type") == "message" and item.get("role") != "assistant" and not entry.get("response"):
        return {**item, "content": parts}
    content = [
        {"type": "output_text", "text": p.get("text", ""), "annotations": []}
        if isinstance(p, dict) and p.get("type") == "input_text"
        else p
        for p in parts
    ]
    return {"type": "message", "role": "assistant", "status": "completed", "content": content}
