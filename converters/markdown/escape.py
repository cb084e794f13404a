"""Making session text safe to place in a Markdown document.

Three kinds of text reach the output:

- *code*: tool output, arguments, shell commands. It goes into a fenced block whose
  fence is one backtick longer than the longest backtick run inside, so nothing in the
  content can close it (:func:`fenced`).
- *plain text* in headings, notes and link text: every ASCII punctuation character is
  backslash-escaped, so CommonMark shows it literally (:func:`inline`); text inside our
  own ``<summary>`` HTML lines is HTML-escaped instead (:func:`summary_text`).
- *Markdown* written by people and models (user and assistant text, thinking, summaries):
  it keeps its formatting, but :func:`markdown` neutralises everything that could escape
  its section or act on a reader: raw HTML (shown as text), links to anything but
  http(s), headings at the level of our own turn headings, setext underlines, and a fence
  left open at the end.

The block structure of Markdown text is taken from cmark-gfm, the CommonMark parser the
checker uses (:mod:`.tokens`), whenever the text contains code in a container, so code
blocks are left byte-for-byte alone; text without any code is handled with regular
expressions alone, which keeps the common case fast.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from piconv.converters.common.htmlescape import escape as html_escape

# -- code ------------------------------------------------------------------------------

_BACKTICK_RUN = re.compile(r"`+")


def normalize_newlines(text: str) -> str:
    """CommonMark treats a lone CR as a line break, so CR and CRLF become LF before any
    line-based reasoning (otherwise a ``\\r# heading`` would hide from it)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        # CommonMark replaces NUL with U+FFFD; doing it here keeps both views equal.
        text = text.replace("\x00", "\ufffd")
    return text


def fence_for(text: str) -> str:
    """A backtick fence one longer than the longest backtick run in ``text`` (min. 3)."""
    if "`" not in text or "```" not in text:
        return "```"  # shorter runs cannot close a fence of three: skip the scan
    return "`" * (_longest_run(text, "`", 3) + 1)


def _longest_run(text: str, char: str, known: int) -> int:
    """The longest run of ``char`` in ``text``, which holds one of ``known`` (> 0).
    Runs of length n exist for every n up to the longest, so the length is found by
    doubling, then halving, with substring searches (much faster than a regex over
    every run)."""
    low, high = known, known * 2  # a run of ``low`` exists; of ``high``, unknown
    while char * high in text:
        low, high = high, high * 2
    # a run of ``low`` exists, none of ``high``
    while high - low > 1:
        mid = (low + high) // 2
        if char * mid in text:
            low = mid
        else:
            high = mid
    return low


def fenced(text: str, language: str = "") -> str:
    """``text`` as a fenced code block. ``language`` must come from piconv, never from the
    session (an info string may not hold backticks; ours are plain words)."""
    if "\r" in text or "\x00" in text:
        text = normalize_newlines(text)
    # (a single-character test first: a substring search is several times slower)
    fence = "```" if "`" not in text or "```" not in text else fence_for(text)
    if not text or text[-1] == "\n":
        return f"{fence}{language}\n{text}{fence}\n"
    return f"{fence}{language}\n{text}\n{fence}\n"  # one copy of the text, not two


# -- plain text --------------------------------------------------------------------------

# Characters with a meaning inside a line of Markdown (emphasis, code, links, HTML,
# entities, a heading's closing #s, GFM tables and strikethrough). Our plain text is never
# placed at the start of a line, so list and block markers need no escaping.
_PUNCT = re.compile(r"([\\`*_\[\]<>&#|~])")
_SPACES = re.compile(r"[\s\u2028\u2029\x85]+")


def one_line(text: str, limit: int = 0) -> str:
    """Collapses whitespace (newlines included) to single spaces and trims to ``limit``
    characters (0: no limit) with an ellipsis."""
    if text.isprintable() and "  " not in text:
        # The common case, with one scan: a printable text holds no white space but the
        # ASCII space (every other white space character is a control or a separator),
        # and no run of two spaces means nothing to collapse.
        text = text.strip(" ")
    else:
        text = _SPACES.sub(" ", normalize_newlines(text)).strip()
    if limit and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def inline(text: str, limit: int = 0) -> str:
    """Plain text for a heading, note or link text (never at the start of a line): one
    line, with every character that means something inside a line backslash-escaped
    (a ``<`` as ``&lt;`` where an autolink could reach it, see :data:`_AUTOLINK`)."""
    text = one_line(text, limit)
    # (a search first: a substitution with a template calls back into Python every time)
    if not _PUNCT.search(text):
        return text
    out = _PUNCT.sub(r"\\\1", text)
    if "<" in text and _AUTOLINK.search(text):
        out = _links_reaching_html(out.replace("\\<", "<")).replace("<", "\\<")
        if _holds_autolink(out):
            # Every backslash of the text is doubled above, so each "\<" is one we wrote.
            out = out.replace("\\<", "&lt;")
    return out


def code_span(text: str, limit: int = 0) -> str:
    """``text`` as an inline code span (one line), with a backtick run longer than any
    inside. Empty text becomes an escaped empty pair of quotes."""
    text = one_line(text, limit)
    if not text:
        return '\\"\\"'
    if "`" not in text:
        return f"`{text}`"
    ticks = "`" * (max((len(m) for m in _BACKTICK_RUN.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def summary_text(text: str, limit: int = 160) -> str:
    """Text for our ``<summary>`` lines. These sit in an HTML block, where Markdown is not
    parsed, so the text is HTML-escaped (quotes too) and kept on one line."""
    return html_escape(one_line(text, limit), apostrophe=True)


# -- Markdown text -----------------------------------------------------------------------

# A ``<`` that could start raw HTML (a tag, closing tag, comment, declaration, processing
# instruction) or an autolink; a backslash before it makes CommonMark show it literally.
# ``(?<!\\)((?:\\\\)*)`` keeps backslash parity: ``\\<b>`` is an escaped backslash
# followed by a real tag.
_EVEN_BS = r"(?<!\\)((?:\\\\)*)"
_HTML_START = re.compile(_EVEN_BS + r"<(?=[A-Za-z/!?])")
# The same ``<``, or one the author escaped with a backslash of their own (group 2).
_HTML_START_ANY = re.compile(_EVEN_BS + r"(\\?)<(?=[A-Za-z/!?])")
# What starts a GFM extended autolink (``www.``, ``http://``, ``https://``, ``ftp://``).
# Such a link runs to the next space or ``<``, a backslash included, so after one
# ``\<b ...>`` is the link's backslash and raw HTML. A link that runs straight into a
# ``<`` has its start escaped (``http\://``, ``www\.``: no link, the same text; it would
# have taken a ``&lt;`` whole and shown those four characters). Any other ``<`` on a line
# still holding a link's start is written as the character reference ``&lt;``, which
# reads the same and which no link can take apart. Other lines keep the backslash.
_AUTOLINK = re.compile(r"(?i)://|www\.")
_SCHEME_COLON = re.compile(_EVEN_BS + r":(?=//)")
_WWW_DOT = re.compile(r"(?i)(?<=www)\.")
# A run of non-space characters holding a link's start and reaching a ``<`` that could
# start raw HTML (backslashes included: the link takes them).
_REACHES_HTML = re.compile(r"(?i)\S*?(?:://|www\.)[^\s<]*(?=<[A-Za-z/!?])")
# ``](`` opens an inline link or image destination; kept only for http(s) targets.
_LINK_DEST = re.compile(_EVEN_BS + r"\]\((?![ \t]*https?://)", re.IGNORECASE)
# ``]:`` is a link reference definition; kept only for http(s) targets.
_LINK_DEF = re.compile(_EVEN_BS + r"\]:(?![ \t]*https?://)", re.IGNORECASE)
_ATX = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)", re.MULTILINE)
# What any match of _ATX implies, at the start and led by the newline before the line
# (a literal first character makes the search several times faster than "^" does).
_ATX_FIRST = re.compile(r" {0,3}#")
_ATX_CANDIDATE = re.compile(r"\n {0,3}#")
# A line that would turn the paragraph above it into a setext heading.
_SETEXT = re.compile(r"(?<=[^\n])\n( {0,3}(?:=+|-+)[ \t]*)(?=\n|$)")
# The same line led by its newline: a fast search that any match of _SETEXT implies.
_SETEXT_CANDIDATE = re.compile(r"\n {0,3}(?:=+|-+)[ \t]*(?=\n|$)")
# Any line that could open a fence, in a container or indented included.
_FENCE_ANYWHERE = re.compile(r"^[ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+[ \t>]*)*(?:`{3,}|~{3,})", re.MULTILINE)


def _defuse(run: re.Match[str]) -> str:
    r"""A run of text holding a link's start with every start escaped (``://`` as
    ``\://``, ``www.`` as ``www\.``), so no link begins there: the same characters."""
    return _WWW_DOT.sub(r"\\.", _SCHEME_COLON.sub(r"\1\\:", run.group()))


def _links_reaching_html(text: str) -> str:
    """``text`` with the links that run straight into a ``<`` defused."""
    return _REACHES_HTML.sub(_defuse, text)


def _holds_autolink(text: str) -> bool:
    """Whether a link still starts in ``text`` (an escaped start is none)."""
    return _SCHEME_COLON.search(text) is not None or _WWW_DOT.search(text) is not None


def _after_autolink(match: re.Match[str]) -> str:
    """A ``<`` (and an author's backslash before it) as ``&lt;`` when its line holds
    the start of an autolink before it, else as before."""
    text, at = match.string, match.start()
    line = text.rfind("\n", 0, at) + 1
    if _SCHEME_COLON.search(text, line, at) or _WWW_DOT.search(text, line, at):
        return match.group(1) + "&lt;"
    return match.group(0) if match.group(2) else match.group(1) + "\\<"


def _escape_inline(segment: str, autolink: bool | None = None) -> str:
    """The inline rules on text known to hold no code span. ``autolink``: whether the
    line the segment belongs to holds the start of an autolink (None: look at the
    segment's own lines)."""
    if "<" in segment:
        if autolink is not False and _AUTOLINK.search(segment):
            segment = _links_reaching_html(segment)
        if autolink is None:
            if _holds_autolink(segment):
                segment = _HTML_START_ANY.sub(_after_autolink, segment)
            else:
                segment = _HTML_START.sub(r"\1\\<", segment)
        elif autolink:
            segment = _HTML_START_ANY.sub(r"\1&lt;", segment)
        else:
            segment = _HTML_START.sub(r"\1\\<", segment)
    if "](" in segment:
        segment = _LINK_DEST.sub(r"\1]\\(", segment)
    if "]:" in segment:
        segment = _LINK_DEF.sub(r"\1]\\:", segment)
    return segment


def _escape_line(line: str) -> tuple[str, bool]:
    """The inline rules on one line, leaving code spans alone; also says whether a
    backtick run was left unmatched (it may open a code span that CommonMark closes on a
    later line of the paragraph, which shifts every pairing after it: the caller then
    treats the following lines as holding no code span).

    Only code spans that open and close on this line are recognised; a line holding ``|``
    is treated as having none, since GFM table cells split code spans at pipes. Both
    choices can only escape too much (a stray backslash inside code), never too little."""
    if "`" not in line:
        return _escape_inline(line), False
    if "|" in line:
        return _escape_inline(line), True
    # An autolink runs over code spans too: the whole line decides.
    autolink = "<" in line and _AUTOLINK.search(line) is not None
    out: list[str] = []
    start = 0  # beginning of the pending non-code segment
    i = 0
    n = len(line)
    dangling = False
    while i < n:
        ch = line[i]
        if ch == "\\":
            i += 2  # an escaped character (a backslash-escaped backtick opens nothing)
            continue
        if ch != "`":
            i += 1
            continue
        j = i
        while j < n and line[j] == "`":
            j += 1
        run = j - i
        k = j
        close = -1
        while k < n:
            if line[k] == "`":
                m = k
                while m < n and line[m] == "`":
                    m += 1
                if m - k == run:
                    close = m
                    break
                k = m
            else:
                k += 1
        if close < 0:
            dangling = True
            i = j  # unmatched on this line: literal here (see the docstring)
            continue
        out.append(_escape_inline(line[start:i], autolink))
        out.append(line[i:close])
        start = i = close
    out.append(_escape_inline(line[start:], autolink))
    return "".join(out), dangling


def _escape_lines(lines: list[str], code: bytes | bytearray | None = None) -> bool:
    """Applies :func:`_escape_line` in place to every line not marked in ``code``. After
    a line with an unmatched backtick run, the rest of the paragraph (up to a blank or
    code line) is escaped as if it held no code span. Returns whether anything changed."""
    changed = False
    unsure = False
    for ln, line in enumerate(lines):
        if (code is not None and code[ln]) or not line.strip():
            unsure = False
            continue
        if unsure:
            new, dangling = _escape_inline(line), True
        elif "<" in line or "]" in line or "`" in line:
            new, dangling = _escape_line(line)
        else:
            continue
        unsure = unsure or dangling
        if new != line:
            lines[ln] = new
            changed = True
    return changed


def _block_tokens(text: str) -> tuple[list[Any], bool]:
    """The parser's records of ``text`` (:mod:`.tokens`), and whether it could hold a
    link reference definition."""
    # Lazy: the parser is only needed for text that contains code.
    from .tokens import may_define, parser

    return parser().parse(text), may_define(text)


# An ATX heading's line, and a setext heading's underline, at the top level.
_ATX_LINE = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")


def _code_lines(tokens: list[Any], lines: list[str]) -> bytearray:
    """1 for each line that belongs to a fenced code block. A fence left open in a
    container ends where the container does, and the parser then counts the line that
    closed the container as the fence's last: that line is the fence's only if it could
    close it (container markers, then the fence's character) and starts no block of its
    own.

    Indented code is not left alone: renderers disagree on it (markdown-it's table rule
    reads ``*     <b>|`` above ``-|-`` as a table row, cmark as a list item holding code),
    so its lines get the escapes of text, as in text without fences (a stray backslash
    where no renderer needed one)."""
    count = len(lines)
    code = bytearray(count)
    starts = {tok.map[0] for tok in tokens}
    for tok in tokens:
        if tok.type == "fence":
            first, end = tok.map
            content = tok.content
            if end - 1 > first + content.count("\n") and end - 1 < count:
                last = lines[end - 1].lstrip(" \t>")
                run = len(last) - len(last.lstrip(tok.markup[0]))
                if end - 1 in starts or run < len(tok.markup) or last[run:].strip(" \t"):
                    end -= 1
            for ln in range(first, min(end, count)):
                code[ln] = 1
    return code


# A fence's opening line: the container prefix (quote markers, list markers,
# indentation; group 1), then the fence.
_CONTAINED_FENCE = re.compile(r"([ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+[ \t>]*)*)(?:`{3,}|~{3,})")
_LIST_MARKER = re.compile(r"[-*+]|\d{1,9}[.)]")


def _close_in_container(tok: Any, lines: list[str]) -> str:
    """The line closing a fence that a list item or quote leaves open at the end of the
    text, or "" when it is closed. Nothing after the text closes the container when the
    text is the document's last, so the fence would run to the end of the file: the
    line is the opener's container prefix (list markers as spaces, quote markers kept)
    and the fence."""
    if tok.map[1] - tok.map[0] - 1 != tok.content.count("\n"):
        return ""  # opener, content and a closing line: closed
    opener = _CONTAINED_FENCE.match(lines[tok.map[0]])
    if opener is None:
        return ""
    prefix = _LIST_MARKER.sub(lambda m: " " * len(m.group()), opener.group(1))
    return prefix + str(tok.markup)


def _is_closing_fence(line: str, marker: str) -> bool:
    stripped = line.rstrip(" \t").lstrip(" ")
    indent = len(line) - len(line.lstrip(" "))
    return indent <= 3 and len(stripped) >= len(marker) and stripped == marker[0] * len(stripped)


def _demote(match: re.Match[str], shift: int) -> str:
    return match.group(1) + "#" * min(6, len(match.group(2)) + shift)


def markdown(text: str, shift: int) -> str:
    """Markdown text made safe to embed below a heading of level ``shift``.

    Returns text with no trailing newline; the caller puts a blank line and a line at
    column 0 after it, which closes any list or block quote the text left open."""
    text = normalize_newlines(text).rstrip("\n")
    if not text or text.isspace():
        return ""
    if ("`" not in text or "```" not in text) and ("~" not in text or "~~~" not in text):
        return _without_fences(text, shift)
    if _fence_in_container(text):
        # A fence inside a list or quote, or indented: take the block structure from
        # the CommonMark parser itself.
        return _markdown_with_code(text, shift)
    return _column0_fences(text, shift)


def _fence_in_container(text: str) -> bool:
    """Whether a line opens a fence after indentation or a container marker (a match of
    ``_FENCE_ANYWHERE`` not at column 0). Only lines holding a run of three fence
    characters can match, so only those are tried."""
    match = _FENCE_ANYWHERE.match
    for run in ("```", "~~~"):
        i = text.find(run)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            if text[start] not in "`~":
                m = match(text, start)
                if m is not None:
                    return True
            end = text.find("\n", i)
            if end < 0:
                break
            i = text.find(run, end)
    return False


def _without_fences(text: str, shift: int) -> str:
    """Text with no fenced code: the rules apply to every line, so whole-text regular
    expressions do the job (code spans are skipped line by line). An indented code block
    may get a backslash it did not need; that costs a stray character, never safety."""
    # (single-character tests: each is a memchr-like scan, much faster than a regex's)
    html_or_link = "<" in text or "]" in text
    heading = "#" in text
    setext = "-" in text or "=" in text
    if not (html_or_link or heading or setext):
        return text
    if html_or_link:
        if "`" in text:
            lines = text.split("\n")
            _escape_lines(lines)
            text = "\n".join(lines)
        else:
            text = _escape_inline(text)
    if heading and (_ATX_FIRST.match(text) or _ATX_CANDIDATE.search(text)):
        text = _ATX.sub(lambda m: _demote(m, shift), text)
    if setext and _SETEXT_CANDIDATE.search(text):
        text = _SETEXT.sub(r"\n\n\1", text)
    return text


def _column0_fences(text: str, shift: int) -> str:
    """Text whose fences all start at column 0, outside any container. Such a line opens
    a fence wherever it stands (fences interrupt paragraphs and end lists and quotes, and
    once HTML is escaped there are no HTML blocks to hide it), so a line scan follows
    CommonMark exactly: code is copied, the rest goes through :func:`_without_fences`.
    The scan jumps from opener to closer with regular expressions (a line of the fence
    character, at least as long, indented by at most three spaces)."""
    out: list[str] = []
    pos = 0  # start of the first line not yet placed
    n = len(text)
    while True:
        line, m = _opener(text, pos)
        if m is None:
            break
        if line > pos:
            out.append(_without_fences(text[pos : line - 1], shift))
        marker = m.group(1)
        closer = _closer_pattern(marker[0], len(marker)).search(text, m.end())
        opener = text[line : m.start(2)] + _safe_info(m.group(2))
        if closer is None:
            out.append(opener + text[m.end() :])
            out.append(marker)  # left open at the end: close it before our next block
            return "\n".join(out)
        out.append(opener + text[m.end() : closer.end()])
        pos = closer.end() + 1
    if pos <= n:
        out.append(_without_fences(text[pos:], shift))
    return "\n".join(out)


_OPENER_AT_START = re.compile(r"(`{3,}|~{3,})(.*)")
_OPENER_LINE = re.compile(r"\n(`{3,}|~{3,})(.*)")


def _opener(text: str, pos: int) -> tuple[int, re.Match[str] | None]:
    """The start of the first line at or after ``pos`` (a line start) that opens a fence
    at column 0, a run of three or more backticks or tildes (a backtick fence's info
    string holds no backtick), and its match (group 1: the run); ``(-1, None)`` if none."""
    if pos == 0:
        m = _OPENER_AT_START.match(text)
        if m is not None and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            return 0, m
        pos = m.end() if m is not None else 0
    else:
        pos -= 1  # the newline before the line
    while True:
        m = _OPENER_LINE.search(text, pos)
        if m is None:
            return -1, None
        if not (m.group(1)[0] == "`" and "`" in m.group(2)):
            return m.start() + 1, m
        pos = m.end()


@functools.lru_cache(maxsize=64)
def _closer_pattern(char: str, length: int) -> re.Pattern[str]:
    """A line that closes a fence of ``length`` ``char``s, led by its newline."""
    return re.compile(rf"\n {{0,3}}{re.escape(char)}{{{length},}}[ \t]*(?=\n|$)")


def _markdown_with_code(text: str, shift: int) -> str:
    lines = text.split("\n")
    stale = False
    for attempt in range(4):
        tokens, references = _block_tokens(text)
        code = bytearray(len(lines))  # 1: the line belongs to a code block
        html_blocks = False
        if attempt < 3:
            code = _code_lines(tokens, lines)
            html_blocks = any(tok.type == "html_block" for tok in tokens)
        # else: the structure kept moving; escape every line (code included). Safe, and
        # only reachable with text built to confuse.
        changed = _escape_lines(lines, code)
        if not changed:
            break
        text = "\n".join(lines)
        if not (html_blocks or references):
            # Escapes inside paragraphs leave the block structure as it was.
            break
        stale = attempt == 3
        # Escaping turned HTML blocks or reference definitions into paragraphs, which can
        # move code blocks and headings: parse again and escape what is no longer code.
    if stale:
        tokens, _references = _block_tokens(text)
    close_fence = ""
    setext: list[tuple[int, int, int]] = []  # (first line, end line, level)
    for tok in tokens:
        if tok.level != 0:
            if tok.type == "fence" and tok.map[1] >= len(lines) and not close_fence:
                close_fence = _close_in_container(tok, lines)
            continue
        if tok.type == "heading":
            ln = tok.map[0]
            if _ATX_LINE.match(lines[ln]):
                lines[ln] = _ATX.sub(lambda m: _demote(m, shift), lines[ln], count=1)
            else:
                # The parser ends a setext heading on its underline, or on the line after
                # it when that line closed it; it starts it at the first line of the
                # paragraph, link reference definitions included: the text is the lines
                # above the underline that hold the heading's content.
                underline = tok.map[1] - 1
                if underline - 1 > ln and _UNDERLINE.match(lines[underline - 1]):
                    underline -= 1
                setext.append((underline - tok.content.count("\n"), underline + 1, tok.heading))
        elif tok.type == "fence" and tok.map[1] >= len(lines):
            last = lines[len(lines) - 1]
            if tok.map[1] - tok.map[0] < 2 or not _is_closing_fence(last, tok.markup):
                close_fence = tok.markup
    for tok in tokens:  # (before the setext headings below change the line numbers)
        if tok.type == "fence":
            line = lines[tok.map[0]]
            opener = _CONTAINED_FENCE.match(line)
            if opener is not None:
                lines[tok.map[0]] = line[: opener.end()] + _safe_info(line[opener.end() :])
    # A setext heading becomes a demoted ATX heading on one line. Unlike a blank line
    # before the underline, this keeps every block after it as it was (an indented line
    # after a heading is code; after a paragraph it would be more paragraph).
    for first, end, level in reversed(setext):
        content = " ".join(line.strip() for line in lines[first : end - 1])
        if content.endswith("#"):
            content = content[:-1] + "\\#"  # not a closing sequence
        lines[first:end] = ["#" * min(6, level + shift) + " " + content]
    if close_fence:
        lines.append(close_fence)
    return "\n".join(lines)


def _safe_info(info: str) -> str:
    """A fence's info string as written, but for ``|``, written as a character reference
    (the same info string to CommonMark): a renderer with tables, markdown-it's among
    them, tries a table before a fence, and an opener line holding a ``|`` above a
    delimiter row would make the fence's code lines table cells, raw HTML live."""
    return info.replace("|", "&#124;") if "|" in info else info


def quote(text: str) -> str:
    """Prefixes every line with ``> `` (a blank line becomes ``>``), so the text, whatever
    it holds, stays inside the block quote."""
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))
