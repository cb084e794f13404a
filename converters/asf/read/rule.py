"""The ``asf`` reader's context rule: RFC 0001's context at a leaf (``context.py``) as IR
messages, or the rule of the harness that wrote the file when the reader knows it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from piconv import ir

from . import foreign
from .context import AsfFile, Context, build_context


class AsfContext:
    """The ``asf`` reader's context rule for one document. ``ir_id`` maps each ASF id to
    the IR entry it belongs to, ``last_of`` each IR id to the last ASF entry written for
    it; ``harness_rule``, when given, is the rule of the harness that wrote the file."""

    __slots__ = ("_asf", "harness_rule", "ir_id", "last_of")

    def __init__(
        self,
        asf: AsfFile | None,
        ir_id: Mapping[str, str],
        last_of: Mapping[str, str],
        harness_rule: Callable[[ir.Document, str | None], ir.Context] | None = None,
    ) -> None:
        # ``asf`` None: a file piconv wrote from pi, whose context is pi's rule; its
        # entries are not kept (they would double the memory the document takes) and are
        # made again from the document when RFC 0001's context is asked for
        self._asf = asf
        self.ir_id = ir_id
        self.last_of = last_of
        self.harness_rule = harness_rule

    @property
    def asf(self) -> AsfFile:
        if self._asf is None:
            raise LookupError("the ASF entries were not kept: ask request() with the document")
        return self._asf

    def _entries(self, document: ir.Document) -> AsfFile:
        if self._asf is None:
            self._asf, self.ir_id, self.last_of = remade(document)
        return self._asf

    def request(self, document: ir.Document, leaf_id: str | None = None) -> Context:
        """RFC 0001's settings and items at the IR entry ``leaf_id`` (default: the
        document's leaf)."""
        target = document.leaf_id if leaf_id is None else leaf_id
        if target is None:
            return Context({}, [], [], [])
        asf = self._entries(document)
        if target not in self.last_of:
            raise KeyError(f"no entry with id {target!r}")
        return build_context(asf.path(self.last_of[target]))

    def __call__(self, document: ir.Document, leaf_id: str | None = None) -> ir.Context:
        if self.harness_rule is not None:
            return self.harness_rule(document, leaf_id)
        return self.as_ir(document, self.request(document, leaf_id), leaf_id)

    def as_ir(self, document: ir.Document, ctx: Context, leaf_id: str | None) -> ir.Context:
        """The RFC context as IR messages: the instructions and tools in force as one
        system message, then one message per item, each naming the entry it came from."""
        settings = ctx.settings
        messages: list[ir.ContextMessage] = []
        if settings.get("instructions") is not None or settings.get("tools"):
            # at the time of the path's first entry: a harness sends its instructions first
            first = self.asf.index.get(ctx.entries[0]) if ctx.entries else None
            system = foreign.system_message(
                settings.get("instructions"),
                settings.get("tools"),
                None,
                first.get("ts") if first is not None else None,
            )
            messages.append(ir.ContextMessage(system, None))
        tool_names: dict[str, str] = {}
        for item, source in zip(ctx.items, ctx.item_entries, strict=True):
            entry = self.asf.index[source]
            own = self.ir_id.get(source)
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


def remade(document: ir.Document) -> tuple[AsfFile, dict[str, str], dict[str, str]]:
    """The ASF entries of a document read from piconv's ASF of a pi session, written again
    by the registered ``asf`` format (the same entries the file held, but for the ``pi``
    records' spelling), with the maps from ASF ids to IR ids and back. Made from the
    document, never from the file again: a filter (redaction) may have changed it since."""
    asf = AsfFile.of(_written_again(document))
    ir_id: dict[str, str] = {}
    last_of: dict[str, str] = {}
    for entry in asf.entries:
        legacy = entry.get("legacy_id")  # the IR id, as the writer keeps it (normalisation undone)
        if type(legacy) is str:
            ir_id[entry["id"]] = legacy
            last_of[legacy] = entry["id"]  # the chain's last entry comes last
    return asf, ir_id, last_of


def _written_again(document: ir.Document) -> bytes:
    """``document`` as the ``asf`` format writes it, found through the registry as any
    plugin finds a format (a reader does not call the public API above it)."""
    import io

    from piconv.registry import get_registry
    from piconv.report import Report

    out = io.BytesIO()
    get_registry().get("asf").write(document, out, {"validate": False}, Report(format="asf"))
    return out.getvalue()
