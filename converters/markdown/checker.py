"""The Markdown checker: parses an output as CommonMark and checks its structure.

- the front matter is in the subset :mod:`.frontmatter` writes and validates against
  ``schema/front-matter.schema.json``;
- the body parses (markdown-it-py, CommonMark) into: one level-1 title; one heading per
  turn at the turn level, numbered 1, 2, 3... and as many as the front matter's ``turns``
  (with ``layout: tree``, one level-2 heading per segment, ``segments`` of them); no other
  heading at or above the turn level;
- the only raw HTML is our own ``<details>``/``<summary>`` lines, balanced and at the top
  level; no inline HTML at all;
- no fenced code block runs unterminated to the end;
- every link goes to http(s); every image is http(s), a data URI of a raster type, or a
  file in the images folder.

Links are collected with markdown-it's own link validation switched off, so a
``javascript:`` target that a stricter renderer would drop still counts as a failure.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from piconv.validation import load_schema

from . import frontmatter

MAX_PROBLEMS = 50
SCHEMA = ("piconv.converters.markdown", "schema/front-matter.schema.json")

_DETAILS_OPEN = re.compile(r"^<details>\n<summary>[^<>\n]*</summary>\n?$")
_DETAILS_CLOSE = "</details>"
_HTTP = re.compile(r"^https?://", re.IGNORECASE)
_IMAGE_SRC = re.compile(
    r"^(?:https?://|data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$"
    r"|[A-Za-z0-9][A-Za-z0-9._-]*_images/[0-9a-f]{16}\.(?:png|jpg|gif|webp)$)",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt  # lazy: only the checker needs the full parser

    md = MarkdownIt("commonmark")
    md.validateLink = lambda url: True  # see every link, even those markdown-it would drop
    # Inline parsing is run by hand, only where it can find something (see _parse).
    md.disable("inline")
    return md


def _parse(body: str) -> list[Any]:
    """Block tokens, with inline children for headings and for text that holds ``<`` or
    ``[`` (the only characters that start raw HTML, autolinks, links and images). Skipping
    the rest gives the same verdict in a fraction of the time."""
    md = _parser()
    env: dict[str, Any] = {}
    tokens = md.parse(body, env)
    heading = False
    for tok in tokens:
        if tok.type == "heading_open":
            heading = True
        elif tok.type == "inline":
            if heading or "<" in tok.content or "[" in tok.content:
                tok.children = []
                md.inline.parse(tok.content, md, env, tok.children)
            heading = False
    return tokens


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    schema = load_schema(*SCHEMA)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _inline_text(token: Any) -> str:
    return "".join(c.content for c in token.children or () if c.type in ("text", "code_inline"))


def check(data: bytes) -> list[str]:
    problems: list[str] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"line 1: not UTF-8: {exc}"]
    try:
        fm_lines, body_start = frontmatter.split(text)
        fm = frontmatter.parse(fm_lines)
    except frontmatter.FrontMatterError as exc:
        return [f"front matter: {exc}"]
    for err in _validator().iter_errors(fm):
        path = "/".join(str(p) for p in err.absolute_path) or "(root)"
        problems.append(f"line 1: front matter {path}: {err.message}")
    if problems:
        return problems
    body_lines = text.split("\n")[body_start:]
    problems.extend(check_body("\n".join(body_lines), fm, body_start))
    return problems[:MAX_PROBLEMS]


def check_body(body: str, fm: dict[str, Any], offset: int) -> list[str]:
    """``offset``: lines before the body, so messages give line numbers in the file."""
    problems: list[str] = []
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it starts no new one
    tokens = _parse(body)
    tree = fm.get("layout") == "tree"
    turn_level = 3 if tree else 2
    turns = segments = titles = depth = 0
    pending_heading: tuple[int, int] | None = None  # (level, line) of the heading being read

    def where(tok: Any) -> int:
        return (tok.map[0] if tok.map else 0) + offset + 1

    def problem(line: int, message: str) -> None:
        if len(problems) < MAX_PROBLEMS:
            problems.append(f"line {line}: {message}")

    for tok in tokens:
        if tok.type == "heading_open":
            level = int(tok.tag[1])
            if tok.level == 0:
                pending_heading = (level, where(tok))
            continue
        if tok.type == "inline" and pending_heading is not None:
            level, line = pending_heading
            pending_heading = None
            content = _inline_text(tok)
            if level == 1:
                titles += 1
                if titles > 1 or turns or segments:
                    problem(line, "a second level-1 heading (only the title may be one)")
            elif level == turn_level:
                turns += 1
                if not content.startswith(f"{turns}. "):
                    problem(line, f"turn heading out of sequence (expected number {turns}): {content[:60]!r}")
            elif tree and level == 2:
                segments += 1
                if not (content == "Shared history" or content.startswith("Branch ")):
                    problem(line, f"segment heading that is neither shared history nor a branch: {content[:60]!r}")
            elif level < turn_level:
                problem(line, f"level-{level} heading above the turn level: {content[:60]!r}")
        if tok.type == "inline":
            for child in _walk(tok.children or ()):
                if child.type == "html_inline":
                    problem(where(tok), f"raw inline HTML {child.content[:40]!r}")
                elif child.type == "link_open":
                    href = child.attrGet("href") or ""
                    if not _HTTP.match(href):
                        problem(where(tok), f"link to a non-http(s) target {href[:60]!r}")
                elif child.type == "image":
                    src = child.attrGet("src") or ""
                    if not _IMAGE_SRC.match(src):
                        problem(where(tok), f"image from a disallowed source {src[:60]!r}")
        elif tok.type == "html_block":
            content = tok.content.rstrip("\n")
            if tok.level != 0:
                problem(where(tok), f"raw HTML inside a container: {content[:40]!r}")
            elif _DETAILS_OPEN.match(content):
                depth += 1
            elif content == _DETAILS_CLOSE:
                depth -= 1
                if depth < 0:
                    problem(where(tok), "</details> without an open <details>")
                    depth = 0
            else:
                problem(where(tok), f"raw HTML block {content[:40]!r}")
        elif tok.type == "fence" and tok.map and tok.map[1] >= len(lines):
            last = lines[tok.map[1] - 1] if tok.map[1] - tok.map[0] >= 2 else ""
            closer = last.strip()
            indent = len(last) - len(last.lstrip(" "))
            if not (indent <= 3 and len(closer) >= len(tok.markup) and closer == tok.markup[0] * len(closer)):
                problem(where(tok), "fenced code block runs unterminated to the end")
    if depth:
        problems.append(f"line {offset + len(lines)}: {depth} <details> block(s) not closed")
    if titles != 1:
        problems.append(f"line {offset + 1}: expected one level-1 title, found {titles}")
    if turns != fm.get("turns"):
        problems.append(f"line {offset + 1}: front matter says {fm.get('turns')} turns, found {turns} turn headings")
    if tree and segments != fm.get("segments"):
        problems.append(f"line {offset + 1}: front matter says {fm.get('segments')} segments, found {segments}")
    return problems


def _walk(children: Any) -> Any:
    for child in children:
        yield child
        if child.children:
            yield from _walk(child.children)
