"""The neutral intermediate representation (IR) every converter reads.

Neutral means the names here belong to no agent: a reader for another harness could
build the same objects. Lossless means every member of the source survives: members the
IR models get typed fields; everything else (unknown members at any depth, values of an
unexpected type, explicit nulls in optional fields) is kept in the ``extra`` mapping of the
object it was found on, under its original key. A writer for the source format merges
``extra`` back over the typed fields and gets the original JSON value.

Typed fields hold a value only when it has the documented type; otherwise the field is
``None`` and the original value sits in ``extra``. ``None`` in a typed field always means
"absent" (an explicit JSON ``null`` in the source is kept in ``extra``), so converters treat
every typed field as optional.

Three views are offered on :class:`Document`: the whole tree (:attr:`Document.entries`,
:meth:`Document.children`, :meth:`Document.roots`, :meth:`Document.leaves`), the path to a
leaf (:meth:`Document.path`, the transcript as it happened) and the model-visible context
at a leaf (:meth:`Document.context`). The context projection is supplied by the reader
that built the document, because what a model saw is that harness's rule, not the IR's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .records import Frozen, frozen
from .records import replace as replace  # for converters, which import the IR, not the core

IR_VERSION: tuple[int, int] = (1, 0)


class Node(Frozen):
    """The base of every IR object but :class:`Document`: a frozen dataclass with slots
    whose methods are shared (:class:`piconv.records.Frozen`) rather than generated for
    each class at import. ``dataclasses.fields``, ``replace`` and ``is_dataclass`` work
    as on any dataclass."""

    __slots__ = ()


node = frozen
"""Makes a :class:`Node` subclass a dataclass with slots, its methods inherited."""


class _EmptyMapping(Mapping[str, Any]):
    """An immutable, hashable empty mapping (dataclass defaults must be hashable)."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "{}"


EMPTY: Mapping[str, Any] = _EmptyMapping()
"""Shared empty ``extra`` mapping (most objects carry no unknown members)."""

JSON = Any
"""A JSON value as parsed: dict, list, str, int, float, bool or None."""


# --------------------------------------------------------------------------- content parts


@node
class Text(Node):
    """Visible text. ``signature`` is opaque provider replay data for the text."""

    text: str | None = None
    signature: str | None = None
    extra: Mapping[str, JSON] = EMPTY

    type = "text"


@node
class Image(Node):
    """An inline image: base64 ``data`` of media type ``media_type``."""

    data: str | None = None
    media_type: str | None = None
    extra: Mapping[str, JSON] = EMPTY

    type = "image"


@node
class Reasoning(Node):
    """Model reasoning ("thinking"). ``redacted`` reasoning has no readable text; its
    ``signature`` carries the provider's encrypted payload."""

    text: str | None = None
    signature: str | None = None
    redacted: bool | None = None
    extra: Mapping[str, JSON] = EMPTY

    type = "reasoning"


@node
class ToolCall(Node):
    """A request by the model to run a tool. ``arguments`` is the parsed JSON object."""

    call_id: str | None = None
    name: str | None = None
    arguments: JSON = None
    signature: str | None = None
    namespace: str | None = None
    extra: Mapping[str, JSON] = EMPTY

    type = "tool_call"


@node
class UnknownPart(Node):
    """A content part of a type the IR does not model; ``value`` is the part verbatim."""

    value: JSON = None

    @property
    def type(self) -> str | None:  # type: ignore[override]
        """The source's own type of the part (the IR's JSON tags it ``unknown``, as an
        :class:`UnknownMessage`'s ``role`` is the source's role)."""
        return self.value.get("type") if isinstance(self.value, dict) else None


Part = Text | Image | Reasoning | ToolCall | UnknownPart
Content = str | tuple[Part, ...]
"""Message content: a plain string, or a sequence of parts (the source said which)."""


# --------------------------------------------------------------------------- usage


@node
class Cost(Node):
    """Money spent, in the currency the source used (USD for every known harness)."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None
    total: float | None = None
    extra: Mapping[str, JSON] = EMPTY


@node
class Usage(Node):
    """Token usage of one model call. ``reasoning_tokens`` is included in ``output_tokens``."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cache_write_1h_tokens: int | None = None
    reasoning_tokens: int | None = None
    total_tokens: int | None = None
    cost: Cost | None = None
    extra: Mapping[str, JSON] = EMPTY


def _count(value: object) -> int:
    return value if type(value) is int and value >= 0 else 0


def total_tokens(usage: Usage) -> int:
    """The tokens of one model call: ``total_tokens`` when the source gave it, else
    input + output + cache read + cache write, the sum pi's own statistics and export
    count (older pi sessions carry no ``totalTokens``). Only counts of zero or more are
    added. Every total piconv shows (inspect, front matter, the archive index and
    database) is a sum of this."""
    total = usage.total_tokens
    if type(total) is int and total >= 0:
        return total
    return (
        _count(usage.input_tokens)
        + _count(usage.output_tokens)
        + _count(usage.cache_read_tokens)
        + _count(usage.cache_write_tokens)
    )


@node
class ModelRef(Node):
    """Which model: ``provider`` (e.g. "anthropic"), ``model`` id and the wire ``api``."""

    provider: str | None = None
    model: str | None = None
    api: str | None = None


# --------------------------------------------------------------------------- messages


@node
class ToolSpec(Node):
    """A tool declared to the model: name, description and JSON Schema ``parameters``."""

    name: str | None = None
    description: str | None = None
    parameters: JSON = None
    extra: Mapping[str, JSON] = EMPTY


@node
class SystemMessage(Node):
    """Instructions and tool loadout. ``sections`` patches named prompt sections (a
    ``None`` value removes one; a map holding any other kind of value stays raw in
    ``extra``, so every section a converter meets is text); ``tools_added`` / ``tools_removed`` change the tool set
    (a removal names the tool in ``ToolSpec.name``).
    Replaying system messages in order yields the current prompt and tools."""

    content: Content | None = None
    sections: Mapping[str, str | None] | None = None
    tools_added: tuple[ToolSpec, ...] | None = None
    tools_removed: tuple[ToolSpec, ...] | None = None
    timestamp: float | None = None
    extra: Mapping[str, JSON] = EMPTY

    role = "system"


@node
class UserMessage(Node):
    content: Content | None = None
    timestamp: float | None = None
    extra: Mapping[str, JSON] = EMPTY

    role = "user"


@node
class AssistantMessage(Node):
    """A model response. ``stop_reason`` is one of ``stop``, ``length``, ``tool_use``,
    ``error``, ``aborted``, ``pending``, ``deferred`` (unknown values kept verbatim)."""

    content: tuple[Part, ...] | None = None
    model: ModelRef | None = None
    usage: Usage | None = None
    stop_reason: str | None = None
    error_message: str | None = None
    response_id: str | None = None
    response_model: str | None = None
    reasoning_level: str | None = None
    timestamp: float | None = None
    extra: Mapping[str, JSON] = EMPTY

    role = "assistant"


@node
class ToolResult(Node):
    """The output of a tool call, paired with it by ``call_id``. ``details`` is the
    tool's own structured data (not shown to the model)."""

    call_id: str | None = None
    tool_name: str | None = None
    content: Content | None = None
    is_error: bool | None = None
    details: JSON = None
    usage: Usage | None = None
    timestamp: float | None = None
    extra: Mapping[str, JSON] = EMPTY

    role = "tool"


@node
class ShellCommand(Node):
    """A shell command the user ran directly (not a model tool call) and its output.
    ``exclude_from_context`` commands are never shown to the model."""

    command: str | None = None
    output: str | None = None
    exit_code: int | None = None
    cancelled: bool | None = None
    truncated: bool | None = None
    full_output_path: str | None = None
    exclude_from_context: bool | None = None
    timestamp: float | None = None
    extra: Mapping[str, JSON] = EMPTY

    role = "shell"


@node
class ExtensionMessage(Node):
    """A message injected by an extension/plugin of the harness. It reaches the model as
    user text; ``display`` says whether the harness shows it to the person."""

    extension_type: str | None = None
    content: Content | None = None
    display: bool | None = None
    details: JSON = None
    timestamp: float | None = None
    extra: Mapping[str, JSON] = EMPTY

    role = "extension"


@node
class SummaryMessage(Node):
    """Context-only message standing for summarised history: ``kind`` is ``compaction``
    (older history replaced by a summary) or ``branch`` (an abandoned branch)."""

    kind: str = "compaction"
    summary: str | None = None
    tokens_before: int | None = None
    from_id: str | None = None
    timestamp: float | None = None
    extra: Mapping[str, JSON] = EMPTY

    role = "summary"


@node
class UnknownMessage(Node):
    """A message with a role the IR does not model; ``value`` is the message verbatim."""

    value: JSON = None

    @property
    def role(self) -> str | None:  # type: ignore[override]
        return self.value.get("role") if isinstance(self.value, dict) else None


Message = (
    SystemMessage
    | UserMessage
    | AssistantMessage
    | ToolResult
    | ShellCommand
    | ExtensionMessage
    | SummaryMessage
    | UnknownMessage
)


# --------------------------------------------------------------------------- entry bodies


@node
class MessageBody(Node):
    """A conversation message in the tree."""

    message: Message

    kind = "message"


@node
class Compaction(Node):
    """Older history replaced by ``summary``; the kept range starts at ``first_kept_id``
    (``== the compaction's own id``: nothing before it is kept). ``checkpoint`` is the full
    system state (prompt and tools) at the boundary."""

    summary: str | None = None
    first_kept_id: str | None = None
    tokens_before: int | None = None
    checkpoint: SystemMessage | None = None
    usage: Usage | None = None
    details: JSON = None
    by_extension: bool | None = None

    kind = "compaction"


@node
class BranchSummary(Node):
    """Summary of the abandoned branch that ended at ``from_id``; the new branch continues
    below this entry."""

    summary: str | None = None
    from_id: str | None = None
    usage: Usage | None = None
    details: JSON = None
    by_extension: bool | None = None

    kind = "branch_summary"


@node
class ModelChange(Node):
    provider: str | None = None
    model: str | None = None

    kind = "model_change"


@node
class ReasoningLevelChange(Node):
    """The requested reasoning effort: ``off``, ``minimal``, ``low``, ``medium``, ``high``..."""

    level: str | None = None

    kind = "reasoning_level_change"


@node
class Label(Node):
    """A bookmark on ``target_id``; ``label is None`` (or empty) clears it."""

    target_id: str | None = None
    label: str | None = None

    kind = "label"


@node
class SessionName(Node):
    """The session's display name from here on (empty clears it)."""

    name: str | None = None

    kind = "session_name"


@node
class ExtensionState(Node):
    """State an extension persisted; never part of the model's context."""

    extension_type: str | None = None
    data: JSON = None

    kind = "extension_state"


@node
class ContextEdit(Node):
    """Changes what the model sees of ``target_id`` from here on along this branch:
    ``omit`` drops it; otherwise its content becomes ``replacement``."""

    target_id: str | None = None
    omit: bool = False
    replacement: Content | None = None

    kind = "context_edit"


@node
class UsageRecord(Node):
    """Model usage that is not a conversation message (e.g. a cache refresh)."""

    usage_kind: str | None = None
    model: ModelRef | None = None
    usage: Usage | None = None
    note: str | None = None

    kind = "usage"


@node
class UnknownBody(Node):
    """An entry of a type the IR does not model; the whole entry is in ``Entry.extra``."""

    type: str | None = None

    kind = "unknown"


Body = (
    MessageBody
    | Compaction
    | BranchSummary
    | ModelChange
    | ReasoningLevelChange
    | Label
    | SessionName
    | ExtensionState
    | ContextEdit
    | UsageRecord
    | UnknownBody
)


@node
class Origin(Node):
    """Where an entry came from. ``synthesized`` names members the reader made up
    (ids for entries that had none, parents it had to infer); a writer of the source
    format leaves those out. ``source_type`` is the entry type in the source file and
    ``source_role`` the message role there, when the IR renamed them."""

    line: int
    source_type: str | None = None
    source_role: str | None = None
    synthesized: frozenset[str] = frozenset()


@node
class Entry(Node):
    """One node of the conversation tree."""

    id: str
    parent_id: str | None
    timestamp: str | None
    body: Body
    origin: Origin
    extra: Mapping[str, JSON] = EMPTY

    @property
    def kind(self) -> str:
        return self.body.kind

    @property
    def message(self) -> Message | None:
        body = self.body
        return body.message if isinstance(body, MessageBody) else None


# --------------------------------------------------------------------------- context view


@node
class ContextMessage(Node):
    """One model-visible message and the entry it came from (``None`` when synthesised)."""

    message: Message
    entry_id: str | None


@node
class Context(Node):
    """What the model sees at a leaf: messages in order plus the selected settings."""

    messages: tuple[ContextMessage, ...]
    model: ModelRef | None
    reasoning_level: str | None
    leaf_id: str | None


# --------------------------------------------------------------------------- document


@node
class SessionInfo(Node):
    """Session-level metadata from the source's header. ``other_headers`` holds any
    further header lines as ``(line, value)``: they are not part of the tree."""

    id: str | None = None
    created: str | None = None
    cwd: str | None = None
    parent_session: str | None = None
    source_format: str = ""
    source_version: int | None = None
    source_path: str | None = None
    line: int = 0
    other_headers: tuple[tuple[int, JSON], ...] = ()
    extra: Mapping[str, JSON] = EMPTY


@node
class Issue(Node):
    """A problem found while reading: 1-based ``line`` (0 = the whole file), a stable
    ``code`` and a human ``message``."""

    line: int
    code: str
    message: str


ContextBuilder = Callable[["Document", "str | None"], Context]


class SourceLines:
    """How the lines a document was read from were spelled, for a writer of the same
    format: by source line, the object the reader made of the line (an entry, the
    session header, a further header's value) and the line's bytes or its layout
    (the order of its objects' members, :func:`piconv.jsonl.layout_of`) or both.

    A writer asks with the object it is writing (:meth:`of`): only the very object the
    reader made gets the line's bytes, so an entry a filter rebuilt (a new object) is
    never written with the bytes of what it was. :meth:`template` gives any line's
    layout, to write a changed entry with its members in their old order. Readers fill
    it when asked (the ``keep_source`` option, see docs/plugins.md); it is not part of
    the IR's JSON.
    """

    __slots__ = ("_lines",)

    def __init__(self) -> None:
        self._lines: dict[int, tuple[Any, bytes | None, JSON, bool]] = {}

    def add(
        self, line: int, made: Any, raw: bytes | None = None, layout: JSON = None, *, trusted: bool = True
    ) -> None:
        """Line ``line`` was read into ``made``: its bytes ``raw`` and/or its ``layout``.
        ``trusted``: the bytes are the very line ``made`` was read from (a reader reading
        them); ``False`` for bytes a file merely claims to be the line's (a writer then
        checks them against what it writes)."""
        self._lines[line] = (made, None if raw is None else bytes(raw), layout, trusted)

    def of(self, made: Any, line: int) -> tuple[bytes | None, JSON, bool] | None:
        """``(bytes, layout, trusted)`` of line ``line`` when ``made`` is the object the
        reader made of it; else ``None``."""
        found = self._lines.get(line)
        if found is None or found[0] is not made:
            return None
        return found[1], found[2], found[3]

    def template(self, line: int) -> tuple[bytes | None, JSON] | None:
        """``(bytes, layout)`` of line ``line``, whatever became of the object made of it:
        an order to write a changed value in, never its content."""
        found = self._lines.get(line)
        return None if found is None else (found[1], found[2])

    def __len__(self) -> int:
        return len(self._lines)


@dataclass(frozen=True, slots=True)
class Document:
    """A whole session: metadata, every entry in source order, the problems met."""

    session: SessionInfo
    entries: tuple[Entry, ...]
    leaf_id: str | None
    issues: tuple[Issue, ...] = ()
    lines_read: int = 0
    context_builder: ContextBuilder | None = field(default=None, repr=False, compare=False)
    # Where the file was read, when a filter changed ``session.source_path`` (redaction
    # writes ``~`` for the home directory): what still keeps an output off its input.
    # No format writes it.
    input_path: str | None = field(default=None, repr=False, compare=False)
    # What the filters that made this document left out, for the reader of any output:
    # one sentence each, under a key naming what was done (the ``detail`` filter's is
    # ``detail:<level>``, so a format that knows it can say "output left out" where a
    # tool's output was). A format may show the sentences (the HTML page and the
    # Markdown transcript do). Not part of the IR's JSON.
    notes: Mapping[str, str] = field(default=EMPTY, repr=False, compare=False)
    # How the source's lines were spelled, when the reader was asked to keep it: what a
    # writer of the same format needs to give an unchanged line back byte for byte.
    source_lines: SourceLines | None = field(default=None, repr=False, compare=False)
    _index: dict[str, Entry] = field(default_factory=dict, repr=False, compare=False)
    _children: dict[str | None, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = self._index
        children = self._children
        for entry in self.entries:
            index[entry.id] = entry
        for entry in index.values():
            children.setdefault(entry.parent_id, []).append(entry.id)

    # -- tree view
    def get(self, entry_id: str) -> Entry | None:
        return self._index.get(entry_id)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._index

    def children(self, entry_id: str | None) -> list[Entry]:
        """Children of ``entry_id`` (``None``: the roots), in source order."""
        return [self._index[c] for c in self._children.get(entry_id, ())]

    def roots(self) -> list[Entry]:
        return self.children(None)

    def leaves(self) -> list[Entry]:
        """Every entry with no children, in source order."""
        return [e for e in self._index.values() if e.id not in self._children]

    def branch_points(self) -> list[Entry]:
        return [self._index[p] for p, c in self._children.items() if p is not None and len(c) > 1]

    def path(self, leaf_id: str | None = None) -> list[Entry]:
        """Entries from the root down to ``leaf_id`` (default: the document's leaf)."""
        target = self.leaf_id if leaf_id is None else leaf_id
        if target is None:
            return []
        entry = self._index.get(target)
        if entry is None:
            raise KeyError(f"no entry with id {target!r}")
        path: list[Entry] = []
        index = self._index
        while entry is not None:
            path.append(entry)
            entry = index.get(entry.parent_id) if entry.parent_id is not None else None
        path.reverse()
        return path

    def walk(self) -> Iterator[tuple[Entry, int]]:
        """Depth-first over the whole tree, parents before children: ``(entry, depth)``."""
        stack = [(e, 0) for e in reversed(self.roots())]
        while stack:
            entry, depth = stack.pop()
            yield entry, depth
            stack.extend((c, depth + 1) for c in reversed(self.children(entry.id)))

    # -- context view
    def context(self, leaf_id: str | None = None) -> Context:
        """The model-visible context at ``leaf_id`` (default: the document's leaf)."""
        if self.context_builder is None:
            raise NotImplementedError("this document's reader supplied no context projection")
        return self.context_builder(self, leaf_id)

    def labels(self, leaf_id: str | None = None) -> dict[str, str]:
        """Labels in force: target id -> label, applying label entries in source order
        (or along the path to ``leaf_id`` when given)."""
        entries = self.entries if leaf_id is None else self.path(leaf_id)
        labels: dict[str, str] = {}
        for entry in entries:
            body = entry.body
            if isinstance(body, Label) and body.target_id is not None:
                if body.label:
                    labels[body.target_id] = body.label
                else:
                    labels.pop(body.target_id, None)
        return labels

    def session_name(self) -> str | None:
        """The latest session name in the file, stripped; ``None`` when unset or cleared."""
        for entry in reversed(self.entries):
            if isinstance(entry.body, SessionName):
                name = entry.body.name
                return name.strip() or None if isinstance(name, str) else None
        return None
