"""The ``asf`` reader's context rule: RFC 0001's context at a leaf (``context.py``) as IR
messages, or the rule of the harness that wrote the file when the reader knows it.

The context is made from the document it is asked of, never from the file (a filter may
have changed the document since it was read, and the file's entries are not kept):
another writer's entries are seen as the entries they were read from (``views.py``);
entries piconv wrote from pi are written again by the ``asf`` format (``remade``); a file
piconv wrote that another writer continued is seen both ways, entry by entry
(``AsfContext._joined``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from piconv import ir

from . import foreign
from .context import AsfFile, Context, build_context
from .views import entry_view, path_views

JSONDict = dict


class AsfContext:
    """The ``asf`` reader's context rule for the documents made from one file.
    ``harness_rule``, when given, is the rule of the harness that wrote the file (pi's,
    for a file piconv wrote from pi); ``from_pi``: whether any entry was read back from
    piconv's ``pi`` records (the RFC context then needs the file written again);
    ``pi_ids``, for a file piconv wrote that another writer continued: the ids the file
    gave the entries written of each IR entry read back from pi, in file order (the
    other writer's entries name them)."""

    __slots__ = ("_remade", "from_pi", "harness_rule", "pi_ids")

    def __init__(
        self,
        *,
        from_pi: bool,
        pi_ids: Mapping[str, tuple[str, ...]] | None = None,
        harness_rule: Callable[[ir.Document, str | None], ir.Context] | None = None,
    ) -> None:
        self.from_pi = from_pi
        self.pi_ids = pi_ids
        self.harness_rule = harness_rule
        # the entries written again, for the entries of one document (a filter makes
        # another document, which is written again in its turn)
        self._remade: tuple[tuple[ir.Entry, ...], Remade] | None = None

    def _path(self, document: ir.Document, target: str) -> tuple[list[JSONDict], Mapping[str, str]]:
        """The ASF entries from the root down to the IR entry ``target``, and the IR id
        of each."""
        if not self.from_pi:
            if document.get(target) is None:
                raise KeyError(f"no entry with id {target!r}")
            path = path_views(document, target)
            return path, {e["id"]: e["id"] for e in path}
        if self._remade is None or self._remade[0] is not document.entries:
            self._remade = (document.entries, remade(document))
        written = self._remade[1]
        if self.pi_ids is not None and document.get(target) is not None:
            return self._joined(document, target, written, self.pi_ids)
        if self.pi_ids is not None or target not in written.chains:
            raise KeyError(f"no entry with id {target!r}")
        return written.asf.path(written.chains[target][-1]["id"]), written.ir_id

    @staticmethod
    def _joined(
        document: ir.Document, target: str, written: Remade, pi_ids: Mapping[str, tuple[str, ...]]
    ) -> tuple[list[JSONDict], dict[str, str]]:
        """The path to ``target`` of a file piconv wrote that another writer continued:
        each entry read back from pi as the entries the ``asf`` format writes of it,
        under the ids the file gave them (the pi records' spelling, which an id hashes,
        may differ), which the other writer's entries name; each of the other writer's as
        it was read (``views.entry_view``), a compaction keeping entries from the one of a
        pi entry's that the file named."""
        path: list[JSONDict] = []
        owners: list[str] = []  # the IR id of each
        in_file: dict[str, str] = {}  # the id of an entry written again -> the file's
        for entry in document.path(target):
            file_ids = pi_ids.get(entry.id)
            if file_ids is None:  # the other writer's
                view = entry_view(entry)
                kept = view.get("first_kept")
                if view.get("type") == "compaction" and kept in pi_ids:
                    named = entry.extra.get("first_kept")  # kept there when it is no IR id
                    view["first_kept"] = named if named in pi_ids[kept] else pi_ids[kept][0]
                path.append(view)
                owners.append(entry.id)
                continue
            chain = written.chains.get(entry.id, [])
            if len(chain) == len(file_ids):  # as the file wrote them (a filter may change that)
                in_file.update(zip((value["id"] for value in chain), file_ids, strict=True))
            path.extend(chain)
            owners.extend(entry.id for _value in chain)
        if in_file:
            path = [_renamed(value, in_file) if value["id"] in in_file else value for value in path]
        return path, {value["id"]: owner for value, owner in zip(path, owners, strict=True)}

    def ir_ids(self, document: ir.Document, leaf_id: str | None = None) -> Mapping[str, str]:
        """The IR id of each ASF entry on the path to ``leaf_id`` (the ids
        :meth:`request`'s context names are ASF ids)."""
        return self._request(document, leaf_id)[2]

    def request(self, document: ir.Document, leaf_id: str | None = None) -> Context:
        """RFC 0001's settings and items at the IR entry ``leaf_id`` (default: the
        document's leaf)."""
        return self._request(document, leaf_id)[0]

    def _request(
        self, document: ir.Document, leaf_id: str | None
    ) -> tuple[Context, dict[str, JSONDict], Mapping[str, str]]:
        target = document.leaf_id if leaf_id is None else leaf_id
        if target is None:
            return Context({}, [], [], []), {}, {}
        path, ir_id = self._path(document, target)
        return build_context(path), {e["id"]: e for e in path}, ir_id

    def __call__(self, document: ir.Document, leaf_id: str | None = None) -> ir.Context:
        if self.harness_rule is not None:
            return self.harness_rule(document, leaf_id)
        ctx, index, ir_id = self._request(document, leaf_id)
        return self.as_ir(document, ctx, index, ir_id, leaf_id)

    @staticmethod
    def as_ir(
        document: ir.Document,
        ctx: Context,
        index: Mapping[str, JSONDict],
        ir_id: Mapping[str, str],
        leaf_id: str | None,
    ) -> ir.Context:
        """The RFC context as IR messages: the instructions and tools in force as one
        system message, then one message per item, each naming the entry it came from.
        ``index``: the path's ASF entries by id; ``ir_id``: the IR id of each."""
        settings = ctx.settings
        messages: list[ir.ContextMessage] = []
        if settings.get("instructions") is not None or settings.get("tools"):
            # at the time of the path's first entry: a harness sends its instructions first
            first = index.get(ctx.entries[0]) if ctx.entries else None
            system = foreign.system_message(
                settings.get("instructions"),
                settings.get("tools"),
                None,
                first.get("ts") if first is not None else None,
            )
            messages.append(ir.ContextMessage(system, None))
        tool_names: dict[str, str] = {}
        for item, source in zip(ctx.items, ctx.item_entries, strict=True):
            entry = index[source]
            own = ir_id.get(source)
            kind = entry.get("type")
            if kind in ("compaction", "branch_summary") and item is entry.get("summary"):
                ir_entry = document.get(own) if own is not None else None
                from_id = ir_entry.body.from_id if ir_entry is not None and kind == "branch_summary" else None  # type: ignore[union-attr]
                tokens = entry.get("tokens_before") if type(entry.get("tokens_before")) is int else None
                summary = ir.SummaryMessage(
                    "compaction" if kind == "compaction" else "branch",
                    foreign.summary_text(item),
                    tokens,
                    from_id,
                )
                messages.append(ir.ContextMessage(summary, own))
                continue
            if item.get("type") == "function_call" and type(item.get("call_id")) is str:
                tool_names[item["call_id"]] = item.get("name") if type(item.get("name")) is str else ""
            ir_entry = document.get(own) if own is not None else None
            message = ir_entry.message if ir_entry is not None and item is entry.get("item") else None
            if message is None or (type(message) is ir.ToolResult and message.tool_name is None):
                message = foreign.item_message(item, entry, tool_names)
            messages.append(ir.ContextMessage(message, own))
        model = settings.get("model")
        reasoning = settings.get("reasoning")
        effort = reasoning.get("effort") if type(reasoning) is dict else None
        target = document.leaf_id if leaf_id is None else leaf_id
        return ir.Context(
            tuple(messages),
            ir.ModelRef(None, model) if type(model) is str else None,
            effort if type(effort) is str else None,
            target,
        )


def _renamed(value: JSONDict, in_file: Mapping[str, str]) -> JSONDict:
    """An entry the ``asf`` format wrote again under the ids the file gave it and the
    entries it names (the members the context algorithm reads ids from)."""
    value = {**value, "id": in_file[value["id"]]}
    if type(value.get("first_kept")) is str:
        value["first_kept"] = in_file.get(value["first_kept"], value["first_kept"])
    if type(value.get("items")) is list:  # a pi:context_edit's
        value["items"] = [in_file.get(name, name) if type(name) is str else name for name in value["items"]]
    omit = value.get("omit")
    if type(omit) is dict and type(omit.get("items")) is list:
        items = [in_file.get(name, name) if type(name) is str else name for name in omit["items"]]
        value["omit"] = {**omit, "items": items}
    return value


class Remade(NamedTuple):
    """A document written again by the ``asf`` format: its entries, the IR id of each
    (``ir_id``) and the entries written of each IR entry, in file order (``chains``)."""

    asf: AsfFile
    ir_id: dict[str, str]
    chains: dict[str, list[JSONDict]]


def remade(document: ir.Document) -> Remade:
    """The ASF entries of a document read from piconv's ASF of a pi session, written again
    by the registered ``asf`` format: the same entries the file held, but for the ``pi``
    records' spelling (``layout``, ``text``: the document keeps no source lines), and so
    for the ids, which hash it."""
    asf = AsfFile.of(_written_again(document))
    ir_id: dict[str, str] = {}
    chains: dict[str, list[JSONDict]] = {}
    for entry in asf.entries:
        legacy = entry.get("legacy_id")  # the IR id, as the writer keeps it (normalisation undone)
        if type(legacy) is str:
            ir_id[entry["id"]] = legacy
            chains.setdefault(legacy, []).append(entry)
    return Remade(asf, ir_id, chains)


def _written_again(document: ir.Document) -> bytes:
    """``document`` as the ``asf`` format writes it, found through the registry as any
    plugin finds a format (a reader does not call the public API above it)."""
    import io

    from piconv.registry import get_registry
    from piconv.report import Report

    out = io.BytesIO()
    get_registry().get("asf").write(document, out, {"validate": False}, Report(format="asf"))
    return out.getvalue()
