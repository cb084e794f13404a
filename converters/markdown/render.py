"""Entries to Markdown: an outline of turns, notes for everything else.

A *turn* starts with what a person did: a user message, a shell command the user ran, or
a summary (compaction or branch summary). It gets a heading at ``level`` with a preview
of the prompt and its time, and an anchor (``turn-N``) the table of contents links to.
What follows until the next turn (assistant responses, their tool calls with their
results paired by call id, extension messages, tool results whose call is not in the
same run) gets a heading one level below. Such a message with no turn open (at the start
of a run) gets a turn heading of its own. Every heading is followed by a line with the
entry's time and id. Headings inside message text are pushed below both (see
:mod:`.escape`). What a heading says comes from :mod:`.headings`, the notes for
settings and bookmarks, summaries and system prompts from :mod:`.notes`, and the shapes
of blocks from :mod:`.blocks`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from piconv import Report
from piconv.ir import (
    EMPTY,
    AssistantMessage,
    BranchSummary,
    Compaction,
    Content,
    ContextEdit,
    Entry,
    ExtensionMessage,
    Image,
    MessageBody,
    Reasoning,
    ShellCommand,
    SummaryMessage,
    SystemMessage,
    Text,
    ToolCall,
    ToolResult,
    UnknownMessage,
    UnknownPart,
    UserMessage,
)

from . import escape as esc
from .blocks import (
    HUGE_TEXT_CHARS,
    Block,
    Pieces,
    collapsed,
    fenced_pieces,
    join_blocks,
    note,
    parts,
)
from .headings import TURN_EVENTS, TURN_MESSAGES, TURN_WHO, short_time, starts_turn, turn_title, when, who
from .images import Images
from .notes import setting_note, summary, system_prompt
from .tools import describe_call, result_language, summary_target
from .tools import pretty_json as _json

_NO_RESULT = note("No result recorded for this call.")
_HUGE_NOTE = note("A very long text, shown as it is (not as Markdown):")

BATCH_ENTRIES = 256
"""Entries rendered per list of blocks (about 0.4 MB of Markdown on a typical session)."""


@dataclass(slots=True)
class Run:
    """A run of entries with its tool results paired (see :meth:`Renderer.plan`)."""

    entries: Sequence[Entry]
    results: dict[tuple[int, int], Entry]  # (id of the calling entry, part index) -> result
    paired: set[int]  # ids of the result entries rendered under their call
    heads: list[Entry]
    """The entries :meth:`Renderer.batches` will give a turn heading, in order: every
    entry that starts a turn, and a message rendered with a heading (not a system
    prompt, not a result rendered under its call) while no turn is open. Known before
    the body is rendered: the front matter states their number and the table of
    contents lists them; the writer compares the number with the headings made."""

    @property
    def turns(self) -> int:
        return len(self.heads)


class Renderer:
    """Renders runs of entries; one instance per document, so turn numbers and image
    numbers run through the whole output."""

    def __init__(
        self,
        report: Report,
        images: Images,
        level: int,
        labels: dict[str, str],
        output_left_out: bool = False,
    ) -> None:
        self.report = report
        # the document's tool output was left out (``--detail calls``): an empty result
        # or shell output says so rather than "empty"
        self._empty = note("Output left out (detail level calls).") if output_left_out else None
        self.images = images
        self.level = level
        self.labels = labels
        self.turns = 0
        self.turn_of: dict[str, int] = {}  # entry id -> turn number, for notes that refer back
        self.opened = False  # a turn is open in the run being rendered
        self._date: str | None = None  # the date of the last turn heading
        self._hashes = "#" * level
        self._sub = "#" * (level + 1)
        self._assistants: dict[str, str] = {}  # model name -> its heading text

    # ------------------------------------------------------------------ driver

    def render(self, entries: Sequence[Entry]) -> list[str]:
        """Markdown blocks for ``entries`` (a path or a segment), each ending in a newline;
        blocks are to be joined with blank lines."""
        out: list[str] = []
        for batch in self.batches(self.plan(entries)):
            out += [block if type(block) is str else "".join(block) for block in batch]
        return out

    def plan(self, entries: Sequence[Entry]) -> Run:
        """The run ``entries`` make (tool results paired with their calls), to count its
        turns before it is rendered and then render it."""
        results, paired, heads = self._pair(entries)
        return Run(entries, results, paired, heads)

    def batches(self, run: Run, size: int = BATCH_ENTRIES) -> Iterator[list[Block]]:
        """The blocks of :meth:`render`, a list per ``size`` entries: the writer writes
        (and a checker reads) each list while the next is rendered, so the body is never
        all in memory. (Within a list, blocks are appended by every method below: cheaper
        than a chain of generators, which pays at every level for every block.)"""
        results, paired = run.results, run.paired
        self.opened = False  # a run starts with no turn open
        out: list[Block] = []
        report = self.report
        message = self._message
        event = self._event
        left = size
        for entry in run.entries:
            if paired and id(entry) in paired:
                continue
            body = entry.body
            extra = entry.extra
            if extra is not EMPTY and extra:  # (EMPTY's length is a Python call)
                report.add("extra-members", entry.origin.line)
            if isinstance(body, MessageBody):
                message(entry, body.message, results, out)
            else:
                event(entry, body, entry.origin.line, out)
            left -= 1
            if not left:
                yield out
                out, left = [], size
        if out:
            yield out

    def _pair(self, entries: Sequence[Entry]) -> tuple[dict[tuple[int, int], Entry], set[int], list[Entry]]:
        """Results by (id of the calling entry, part index); the set of paired result
        entries; the entries with a turn heading (see :attr:`Run.heads`), found in the
        same pass: a result is paired or not when it is met. A result pairs with the
        earliest unanswered call with its id before it."""
        open_calls: dict[str, deque[tuple[int, int]]] = {}
        results: dict[tuple[int, int], Entry] = {}
        paired: set[int] = set()
        heads: list[Entry] = []
        opened = False  # a turn is open: a message below it gets a lower heading
        for entry in entries:
            body = entry.body
            if not isinstance(body, MessageBody):
                if isinstance(body, TURN_EVENTS):
                    heads.append(entry)
                    opened = True
                continue
            msg = body.message
            if isinstance(msg, TURN_MESSAGES):
                heads.append(entry)
                opened = True
                continue
            if isinstance(msg, AssistantMessage):
                if not opened:
                    heads.append(entry)
                    opened = True
                content = msg.content
                if isinstance(content, (tuple, list)):
                    for i, part in enumerate(content):
                        if isinstance(part, ToolCall) and isinstance(part.call_id, str):
                            waiting = open_calls.get(part.call_id)
                            if waiting is None:
                                open_calls[part.call_id] = deque([(id(entry), i)])
                            else:
                                waiting.append((id(entry), i))
            elif isinstance(msg, ToolResult):
                call_id = msg.call_id
                waiting = open_calls.get(call_id) if isinstance(call_id, str) else None
                if waiting:
                    results[waiting.popleft()] = entry
                    paired.add(id(entry))
                elif not opened:
                    heads.append(entry)
                    opened = True
            elif not isinstance(msg, SystemMessage) and not opened:
                heads.append(entry)
                opened = True
        return results, paired, heads

    def heading(self, entry: Entry, speaker: str, out: list[Block]) -> None:
        """The heading of a rendered message (``speaker``: escaped Markdown): a turn heading
        for an entry that starts a turn, or any message while no turn is open; else a
        heading one level below, in the open turn. Then the line with its time and id."""
        time = when(entry)
        meta = (
            f"{time} · entry {esc.code_span(entry.id, 80)}"
            if time
            else f"entry {esc.code_span(entry.id, 80)}"
        )
        if self.opened and not starts_turn(entry):
            self.turn_of[entry.id] = self.turns
            out.append(f"{self._sub} {speaker}\n")
            out.append(f"*{meta}*\n")
            return
        self.opened = True
        self.turns += 1
        turn = self.turns
        self.turn_of[entry.id] = turn
        title = turn_title(entry) if starts_turn(entry) else speaker
        if time:
            short, self._date = short_time(time, self._date)
            out.append(f"{self._hashes} {turn}. {title} · {short}\n")
        else:
            out.append(f"{self._hashes} {turn}. {title}\n")
        kind = TURN_WHO.get(type(entry.message)) if entry.message is not None else None
        lead = f"{kind} · " if kind else ""
        out.append(f'<a id="turn-{turn}"></a>*{lead}{meta}*\n')

    def _ref(self, entry_id: str | None) -> str:
        if entry_id is None:
            return "an unknown entry"
        turn = self.turn_of.get(entry_id)
        return f"turn {turn}" if turn is not None else f"entry {esc.code_span(entry_id, 80)}"

    def last_turn(self, newest_first: Iterable[Entry]) -> str:
        """A reference to the latest turn among entries given newest first (for
        "continues from")."""
        for entry in newest_first:
            if entry.id in self.turn_of:
                return self._ref(entry.id)
        return "the start"

    def _text(self, text: str | None) -> Block:
        """Message text as Markdown with no trailing newline (see :meth:`_block`)."""
        if not text:
            return ""
        if len(text) > HUGE_TEXT_CHARS:
            pieces = self._huge(text)
            pieces[-1] = pieces[-1].rstrip("\n")  # (the last piece ends in its fence)
            return pieces
        # headings in the text go below the turn's and the message's headings
        return esc.markdown(text, self.level + 1)

    def _block(self, text: str) -> Block:
        """Message text as a block ending in a newline, or "" when it shows nothing."""
        if len(text) > HUGE_TEXT_CHARS:
            return self._huge(text)
        body = esc.markdown(text, self.level + 1)
        return body + "\n" if body else ""

    def _huge(self, text: str) -> Pieces:
        """A text too long to be read as Markdown (:data:`HUGE_TEXT_CHARS`), in a fenced
        block: written and checked in time linear in its size, the text itself one of
        the pieces (no copy of it unless it holds a CR or a NUL)."""
        self.report.add("text-as-code", None, f"{len(text):,} characters")
        return Pieces((f"{_HUGE_NOTE}\n", *fenced_pieces(text, "text")))

    def _content(self, content: Content | None, line: int) -> list[Block]:
        """Text parts (joined, as one Markdown text) and images, in order."""
        blocks: list[Block] = []
        if isinstance(content, str):
            if content:
                block = self._block(content)
                if block:
                    blocks.append(block)
            return blocks
        texts: list[str] = []

        def flush() -> None:
            if texts:
                block = self._block("\n\n".join(texts))  # (one text: itself, no copy)
                if block:
                    blocks.append(block)
                texts.clear()

        for part in parts(content):
            if isinstance(part, Text):
                if part.text:
                    texts.append(part.text)
                if part.signature:
                    self.report.add("signatures", line)
            elif isinstance(part, Image):
                flush()
                blocks.append(self.images.render(part.data, part.media_type, line) + "\n")
            else:
                flush()
                blocks.append(self._unknown_part(part, line))
        flush()
        return blocks

    def _unknown_part(self, part: Any, line: int) -> str:
        kind = getattr(part, "type", None) or type(part).__name__
        self.report.add("unknown-part", line, str(kind))
        value = part.value if isinstance(part, UnknownPart) else repr(part)
        return collapsed(
            esc.summary_text(f"Content of unknown type {kind}"), esc.fenced(_json(value), "json")
        )

    # ------------------------------------------------------------------ messages

    def _message(
        self, entry: Entry, msg: Any, results: dict[tuple[int, int], Entry], out: list[Block]
    ) -> None:
        if isinstance(msg, AssistantMessage):
            self._assistant(entry, msg, results, out)
        elif isinstance(msg, UserMessage):
            self.heading(entry, "User", out)
            blocks = self._content(msg.content, entry.origin.line)
            out.extend(blocks or [note("Empty message.")])
        elif isinstance(msg, ToolResult):
            self.heading(entry, who(entry), out)
            out.append(
                note(f"No call with id {esc.code_span(msg.call_id or '', 80)} precedes this result here.")
            )
            out.append(self._result(entry, msg, None))
        elif isinstance(msg, ShellCommand):
            self._shell(entry, msg, out)
        elif isinstance(msg, ExtensionMessage):
            line = entry.origin.line
            self.heading(entry, who(entry), out)
            if msg.display is False:
                out.append(note("Not displayed to the user; sent to the model."))
            if msg.details is not None:
                self.report.add("extension-details", line)
            out.extend(self._content(msg.content, line) or [note("Empty message.")])
        elif isinstance(msg, SummaryMessage):
            kind = "Branch summary" if msg.kind == "branch" else "Compaction summary"
            self.heading(entry, kind, out)
            out.append(self._summary(kind, msg.summary, msg.tokens_before, msg.from_id))
        elif isinstance(msg, SystemMessage):
            out.append(system_prompt(msg, entry.origin.line, self.report))
        else:
            role = msg.role if isinstance(msg, UnknownMessage) else None
            self.report.add("unknown-message", entry.origin.line, str(role))
            self.heading(entry, who(entry), out)
            value = msg.value if isinstance(msg, UnknownMessage) else repr(msg)
            out.append(collapsed(esc.summary_text("Message as recorded"), esc.fenced(_json(value), "json")))

    def _assistant(
        self, entry: Entry, msg: AssistantMessage, results: dict[tuple[int, int], Entry], out: list[Block]
    ) -> None:
        line = entry.origin.line
        model = msg.model.model if msg.model is not None else None
        title = self._assistants.get(model) if model else None
        if title is None:
            title = who(entry)
            if model:
                self._assistants[model] = title  # (one escape per model, not per response)
        self.heading(entry, title, out)
        content = msg.content
        if isinstance(content, str):
            if content:
                block = self._block(content)
                if block:
                    out.append(block)
        elif isinstance(content, (tuple, list)):
            texts: list[str] = []
            key = id(entry)
            for i, part in enumerate(content):
                if isinstance(part, Text):
                    if part.text:
                        texts.append(part.text)
                    if part.signature:
                        self.report.add("signatures", line)
                    continue
                if texts:
                    block = self._block("\n\n".join(texts))
                    texts.clear()
                    if block:
                        out.append(block)
                if isinstance(part, ToolCall):
                    self._call(part, results.get((key, i)), line, out)
                elif isinstance(part, Reasoning):
                    out.append(self._reasoning(part, line))
                elif isinstance(part, Image):
                    out.append(self.images.render(part.data, part.media_type, line) + "\n")
                else:
                    out.append(self._unknown_part(part, line))
            if texts:
                block = self._block("\n\n".join(texts))
                if block:
                    out.append(block)
        stop = msg.stop_reason
        if stop == "error":
            out.append(note("The response failed."))
            if msg.error_message:
                out.append(esc.fenced(msg.error_message, "text"))
        elif stop == "aborted":
            out.append(note("The response was aborted."))
        elif stop == "length":
            out.append(note("The response was cut off at the output token limit."))
        elif not content:
            out.append(note("Empty response."))

    def _reasoning(self, part: Reasoning, line: int) -> Block:
        if part.signature:
            self.report.add("signatures", line)
        if part.redacted:
            return note("Thinking redacted by the provider.")
        body = self._text(part.text) or "*Empty.*"
        return collapsed("Thinking", body)

    def _call(self, call: ToolCall, result: Entry | None, line: int, out: list[Block]) -> None:
        name = call.name
        desc, blocks = describe_call(name, call.arguments)
        res = result.message if result is not None else None
        mark = " — **failed**" if isinstance(res, ToolResult) and res.is_error is True else ""
        span = esc.code_span(name or "unknown tool", 80)
        out.append(f"**Tool call** {span} {desc}{mark}\n" if desc else f"**Tool call** {span}{mark}\n")
        if blocks:
            out.extend(blocks)
        if call.signature:
            self.report.add("signatures", line)
        if result is None or not isinstance(res, ToolResult):
            out.append(_NO_RESULT)
        else:
            self.turn_of[result.id] = self.turns  # notes about the result point to this turn
            out.append(self._result(result, res, call))

    def _result(self, entry: Entry, res: ToolResult, call: ToolCall | None) -> Block:
        line = entry.origin.line
        tool = res.tool_name or (call.name if call else None) or "tool"
        target = summary_target(call.name, call.arguments) if call else ""
        label = ("Error from " if res.is_error else "Result of ") + tool + (f" {target}" if target else "")
        texts: list[str] = []
        media: list[str] = []
        content = res.content
        if isinstance(content, str):
            if content:
                texts.append(content)
        elif isinstance(content, (tuple, list)):
            for part in content:
                if isinstance(part, Text):
                    if part.text:
                        texts.append(part.text)
                elif isinstance(part, Image):
                    media.append(self.images.render(part.data, part.media_type, line) + "\n")
                else:
                    media.append(self._unknown_part(part, line))
        blocks: list[Block] = []
        if texts:
            lang = (
                "text"
                if res.is_error
                else result_language(call.name if call else tool, call.arguments if call else None)
            )
            blocks.append(fenced_pieces("\n".join(texts), lang))
        if media:
            blocks.extend(media)
        details = res.details
        diff = details.get("diff") if isinstance(details, dict) else None
        if isinstance(diff, str) and diff:
            blocks.append(esc.fenced(diff, "diff"))
        elif details not in (None, {}):
            self.report.add("tool-details", line)
        if res.usage is not None:
            self.report.add("per-message-usage", line)
        body = (
            join_blocks(blocks, "\n") if blocks else self._empty or note("Empty result.")
        )  # (one block: no copy)
        if res.is_error:
            # shown, not folded away: a failed call is what a reader looks for
            lead = f"**{esc.inline(label, 200)}:**\n\n"
            return lead + body if type(body) is str else Pieces((lead, *body))
        return collapsed(esc.summary_text(label), body)

    def _shell(self, entry: Entry, msg: ShellCommand, out: list[Block]) -> None:
        self.heading(entry, "Shell command (user)", out)
        out.append(esc.fenced(msg.command or "", "bash"))
        status = []
        if msg.cancelled:
            status.append("cancelled")
        if msg.exit_code is not None:
            status.append(f"exit code {msg.exit_code}")
        if msg.truncated:
            status.append("output truncated")
        label = "Output" + (f" ({', '.join(status)})" if status else "")
        body = fenced_pieces(msg.output, "text") if msg.output else self._empty or note("No output.")
        out.append(collapsed(esc.summary_text(label), body))
        if msg.truncated and msg.full_output_path:
            out.append(note(f"Full output was saved to {esc.code_span(msg.full_output_path, 200)}."))
        if msg.exclude_from_context:
            out.append(note("Not sent to the model."))

    # ------------------------------------------------------------------ other entries

    def _summary(self, kind: str, text: str | None, tokens_before: int | None, from_id: str | None) -> str:
        return summary(kind, self._text(text), tokens_before, self._ref(from_id) if from_id else None)

    def _event(self, entry: Entry, body: Any, line: int, out: list[Block]) -> None:
        if isinstance(body, Compaction):
            self.heading(entry, "Compaction", out)
            out.append(self._summary("Compaction summary", body.summary, body.tokens_before, None))
            if body.checkpoint is not None:
                self.report.add("compaction-checkpoint", line)
            if body.details is not None:
                self.report.add("summary-details", line)
        elif isinstance(body, BranchSummary):
            self.heading(entry, "Branch summary", out)
            out.append(self._summary("Branch summary", body.summary, None, body.from_id))
            if body.details is not None:
                self.report.add("summary-details", line)
        else:
            shown = setting_note(body, self._ref, self.report, line)
            if shown is not None:
                out.append(shown)
            if isinstance(body, ContextEdit) and not body.omit:
                blocks = self._content(body.replacement, line)
                if blocks:
                    text = "\n".join(b if type(b) is str else "".join(b) for b in blocks)
                    out.append(collapsed(esc.summary_text("What the model sees instead"), text))
