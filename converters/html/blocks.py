"""Reusable HTML blocks: collapsible outputs with a preview, code, JSON, images, notes.

The :class:`Ctx` bundles what every renderer needs for one page (highlighter, Markdown
renderer, limits); it is created once per conversion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from piconv.ir import Content, Image, Reasoning, Text, ToolCall, UnknownPart

from .escape import image_src
from .escape import text as esc
from .highlight import Highlighter
from .markdown import MarkdownRenderer
from .readable import Clock

PREVIEW_LINES = 8
PREVIEW_CHARS = 1200
OPEN_LINES = 12
OPEN_CHARS = 2000
# A text longer than LARGE is not rendered into its entry's string: the entry gets a
# placeholder and the page writer renders the text in pieces of about PIECE characters
# straight into the output, so a huge message costs time linear in its size and memory
# of a piece, not several copies of the whole.
LARGE = 1 << 20
PIECE = 1 << 18
_MARK = "\ufdd1"  # a noncharacter: session text holding one ends up as U+FFFD anyway


@dataclass
class Ctx:
    highlighter: Highlighter
    preview_lines: int = PREVIEW_LINES
    _markdown: MarkdownRenderer | None = field(default=None, repr=False)
    images_shown: int = 0
    images_refused: int = 0
    clock: Clock = field(default_factory=Clock)
    # The system entries that start the prompt on their branch (no system state above
    # them): drawn as the prompt; any other system entry is drawn as an update of it.
    leading_system: frozenset[str] = frozenset()
    # The document's tool output was left out (``--detail calls``): where it was, say so.
    output_left_out: bool = False
    _deferred: dict[str, Callable[[], Iterable[str]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.highlighter.defer_plain = self.plain

    def _md(self) -> MarkdownRenderer:
        if self._markdown is None:
            self._markdown = MarkdownRenderer(self.highlighter)
        return self._markdown

    def markdown(self, source: str) -> str:
        if len(source) > LARGE:
            md = self._md()
            return self._defer(lambda: md.render_pieces(source, PIECE))
        return self._md().render(source)

    def plain(self, source: str) -> str:
        """``source`` escaped (deferred to the page writer when it is large)."""
        if len(source) > LARGE:
            return self._defer(lambda: (esc(source[i : i + PIECE]) for i in range(0, len(source), PIECE)))
        return esc(source)

    def _defer(self, pieces: Callable[[], Iterable[str]]) -> str:
        key = str(len(self._deferred))
        self._deferred[key] = pieces
        return f"{_MARK}{key}{_MARK}"

    def expand(self, html: str) -> Iterator[str]:
        """``html`` with its placeholders replaced by their pieces, rendered one at a time."""
        if not self._deferred:
            yield html
            return
        for i, part in enumerate(html.split(_MARK)):
            if i % 2 == 0:
                if part:
                    yield part
            elif part in self._deferred:
                yield from self._deferred.pop(part)()
            else:  # not a placeholder: a noncharacter from the session (cleaned on output)
                yield f"{_MARK}{part}{_MARK}"
        self._deferred.clear()


def collapsible(
    ctx: Ctx,
    label: str,
    source: str,
    *,
    cls: str = "output",
    lang: str | None = None,
    body_html: str | None = None,
    force_closed: bool = False,
    preview_html: Callable[[str], str] | None = None,
) -> str:
    """A ``<details>`` holding ``source`` as a code block: open when short; otherwise
    closed, its summary showing the first lines as a preview (coloured as the block is:
    in ``lang``, or drawn by ``preview_html``) and the line count. ``label`` is trusted
    HTML; ``body_html`` replaces the default code block."""
    n_lines = source.count("\n") + 1 if source else 0
    short = n_lines <= OPEN_LINES and len(source) <= OPEN_CHARS
    body = body_html if body_html is not None else ctx.highlighter.block(source, lang)
    if short and not force_closed:
        return f'<details class="{cls}" open><summary>{label}</summary>{body}</details>'
    # The end of the preview lines, found without splitting (split would copy the rest
    # of a possibly huge output once more).
    end, shown = -1, 0
    while shown < ctx.preview_lines:
        nxt = source.find("\n", end + 1)
        shown += 1
        if nxt < 0:
            end = len(source)
            break
        end = nxt
    preview = source[: min(end, PREVIEW_CHARS)]
    if end > PREVIEW_CHARS:
        preview += "..."
    more = n_lines - shown
    count = f"{n_lines:,} lines" if n_lines > 1 else f"{len(source):,} chars"
    hint = f"&#8230; {more:,} more lines" if more > 0 else "&#8230;"
    shown = preview_html(preview) if preview_html is not None else ctx.highlighter.inline(preview, lang)
    return (
        f'<details class="{cls}"><summary>{label} <span class="count">({count})</span>'
        f'<span class="preview">{shown}</span><span class="more">{hint}</span></summary>{body}</details>'
    )


def json_text(value: Any) -> str:
    """Pretty JSON for display (insertion order kept, so output is deterministic)."""
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # e.g. an integer beyond 64 bits or a lone surrogate
        import json

        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)


def json_block(ctx: Ctx, label: str, value: Any, cls: str = "json") -> str:
    return collapsible(ctx, label, json_text(value), cls=cls, lang="json")


def image(ctx: Ctx, part: Image, cls: str = "msg-image") -> str:
    url, reason = image_src(part.media_type, part.data)
    if url is None:
        ctx.images_refused += 1
        mt = part.media_type if isinstance(part.media_type, str) else "no type"
        return f'<p class="blocked-image">[image not shown: {esc(reason)}; declared type {esc(mt)}]</p>'
    ctx.images_shown += 1
    return f'<img class="{cls}" src="{url}" alt="image ({esc(part.media_type or "")})" loading="lazy">'


def has_text(s: str) -> bool:
    """Whether ``s`` holds anything but white space: ``s.strip()`` without its copy of a
    huge text."""
    return bool(s) and not s.isspace()


def content_text(content: Content | None) -> str:
    """The text of a message content: the string, or its text parts joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text for p in content if isinstance(p, Text) and isinstance(p.text, str))


def content_html(ctx: Ctx, content: Content | None, *, markdown: bool) -> str:
    """Render message content: text (Markdown or preformatted), images, anything else
    as JSON. Reasoning and tool calls are handled by the assistant renderer."""
    if content is None:
        return ""
    if isinstance(content, str):
        return _text(ctx, content, markdown)
    out: list[str] = []
    for part in content:
        if isinstance(part, Text):
            if isinstance(part.text, str) and has_text(part.text):
                out.append(_text(ctx, part.text, markdown))
        elif isinstance(part, Image):
            out.append(image(ctx, part))
        elif isinstance(part, Reasoning):
            out.append(reasoning(ctx, part))
        elif isinstance(part, ToolCall):
            out.append(json_block(ctx, f"Tool call {esc(part.name or '?')}", part.arguments))
        elif isinstance(part, UnknownPart):
            out.append(json_block(ctx, f"Unknown part <code>{esc(str(part.type))}</code>", part.value))
    return "".join(out)


def _text(ctx: Ctx, s: str, markdown: bool) -> str:
    if markdown:
        return f'<div class="md">{ctx.markdown(s)}</div>'
    return f'<div class="plain">{ctx.plain(s)}</div>'


def reasoning(ctx: Ctx, part: Reasoning) -> str:
    if part.redacted or not isinstance(part.text, str):
        return '<details class="thinking"><summary>Thinking (redacted)</summary><p class="note">The provider returned no readable text.</p></details>'
    if not has_text(part.text):
        return ""
    return (
        f'<details class="thinking"><summary>Thinking <span class="count">({len(part.text):,} chars)</span></summary>'
        f'<div class="plain">{ctx.plain(part.text)}</div></details>'
    )
