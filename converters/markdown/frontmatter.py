"""YAML front matter, written and read by hand.

The front matter uses a small, JSON-compatible subset of YAML: block mappings with plain
lower-case keys, block sequences, and scalars written as JSON (double-quoted strings,
numbers with a decimal point for floats, ``true``/``false``/``null``). Every YAML 1.1 and
1.2 parser reads it the same way, and no runtime dependency is needed to write it.

Strings are JSON strings with the characters YAML treats specially escaped as ``\\uXXXX``
(line separators, NEL, DEL and the C1 controls, BOM, non-characters), so a value can never
break out of its line, and so are ``<``, ``>``, ``[`` and ``]``, so a Markdown renderer that
does not know front matter (and reads it as a paragraph) finds no HTML and no link in it.
A lone surrogate (a ``\\ud800`` escape in a session) is no character: it is left as it is,
and the writer's one encoding step replaces it with U+FFFD and counts it, in the front
matter as in the body (:func:`.writer.emit`). :func:`parse` reads exactly this subset back,
for the checker; it rejects anything else (a lone surrogate too), which makes it a strict
test of the writer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

DELIMITER = "---"

_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
# json.dumps(ensure_ascii=False) leaves these raw; YAML reads them as line breaks or
# refuses them as non-printable.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
# A CommonMark renderer that does not know front matter reads it as a paragraph: raw HTML
# (``<script>``), autolinks and links (``[x](javascript:…)``) would be live there. These
# characters are written as ``\uXXXX`` too (YAML reads the same value), so the front
# matter holds no markup at all.
_MARKUP = re.compile("[<>\\[\\]]")
# What :func:`scalar` escapes: the above and the markup characters, but not a lone
# surrogate (an escape of one would be read back as one, which no UTF-8 text can hold).
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff<>\\[\\]]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def scalar(value: Any) -> str:
    """One value as a YAML (and JSON) scalar."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "null"
        # Fixed-point with a decimal point: YAML 1.1 parsers read ``1e-05`` as a string.
        text = f"{value:.10f}".rstrip("0")
        return text + "0" if text.endswith(".") else text
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    raise TypeError(f"front matter cannot hold {type(value).__name__}")


def _emit(value: Mapping[str, Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for key, item in value.items():
        if not _KEY.match(key):
            raise ValueError(f"front matter key {key!r} is not a plain name")
        if isinstance(item, Mapping):
            if not item:
                out.append(f"{pad}{key}: {{}}")
            else:
                out.append(f"{pad}{key}:")
                _emit(item, indent + 2, out)
        elif isinstance(item, (list, tuple)):
            if not item:
                out.append(f"{pad}{key}: []")
            else:
                out.append(f"{pad}{key}:")
                out.extend(f"{pad}  - {scalar(v)}" for v in item)
        else:
            out.append(f"{pad}{key}: {scalar(item)}")


def dump(value: Mapping[str, Any]) -> str:
    """The front matter block, delimiters included, ending in a newline."""
    lines = [DELIMITER]
    _emit(value, 0, lines)
    lines.append(DELIMITER)
    return "\n".join(lines) + "\n"


class FrontMatterError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


_LINE = re.compile(r"^( *)(?:- (.*)|([a-z][a-z0-9_]*):(?: (.*))?)$")


def split(text: str) -> tuple[list[str], int]:
    """The front matter lines of a document and the index of the first body line."""
    lines = text.split("\n")
    if not lines or lines[0] != DELIMITER:
        raise FrontMatterError(1, "the document does not start with front matter ('---')")
    for i in range(1, len(lines)):
        if lines[i] == DELIMITER:
            return lines[1:i], i + 1
    raise FrontMatterError(1, "the front matter is not closed by a '---' line")


def locate(text: str, end: int | None = None) -> tuple[list[str], int, int]:
    """:func:`split` without splitting the whole document: the front matter lines, the
    index of the first body line and the offset of the body in ``text``. With ``end``,
    only text before it is read (a closing line must end before it)."""
    stop = len(text) if end is None else end
    if not (text.startswith(DELIMITER) and (len(text) == 3 or text[3] == "\n")):
        raise FrontMatterError(1, "the document does not start with front matter ('---')")
    pos = 3
    while True:
        j = text.find("\n" + DELIMITER, pos, stop)
        if j < 0:
            raise FrontMatterError(1, "the front matter is not closed by a '---' line")
        close = j + 4
        if close == len(text) or (close < stop and text[close] == "\n"):
            lines = text[4:j].split("\n") if j > 3 else []
            return lines, len(lines) + 2, min(close + 1, len(text))
        pos = j + 1


def _value(raw: str, lineno: int) -> Any:
    if raw == "{}":
        return {}
    if raw == "[]":
        return []
    try:
        value = json.loads(raw)
    except ValueError:
        raise FrontMatterError(lineno, f"not a JSON-compatible scalar: {raw[:60]!r}") from None
    if isinstance(value, (dict, list)):
        raise FrontMatterError(lineno, "flow collections are not used in this front matter")
    if isinstance(value, str) and _YAML_UNSAFE.search(raw):
        raise FrontMatterError(lineno, "string holds a character YAML reads differently")
    if isinstance(value, str) and _SURROGATE.search(value):
        raise FrontMatterError(lineno, "string holds an escaped lone surrogate (not a character)")
    if _MARKUP.search(raw):
        raise FrontMatterError(
            lineno,
            "holds a raw '<', '>', '[' or ']' (HTML or a link to a renderer that does not know front matter)",
        )
    if isinstance(value, float) and "." not in raw:
        raise FrontMatterError(lineno, "float without a decimal point")
    return value


def parse(lines: list[str], first_line: int = 2) -> dict[str, Any]:
    """Reads the subset :func:`dump` writes (``lines`` without the delimiters; line numbers
    in errors count from ``first_line``)."""
    root: dict[str, Any] = {}
    # Stack of (indent, container); a None container is a key awaiting its block value.
    stack: list[tuple[int, Any]] = [(0, root)]
    pending: tuple[dict[str, Any], str, int] | None = None
    for offset, line in enumerate(lines):
        lineno = first_line + offset
        m = _LINE.match(line)
        if m is None:
            raise FrontMatterError(lineno, f"not a line of the front matter subset: {line[:60]!r}")
        indent = len(m.group(1))
        if pending is not None:
            parent, key, parent_indent = pending
            pending = None
            if indent > parent_indent:
                container: Any = [] if m.group(2) is not None else {}
                parent[key] = container
                stack.append((indent, container))
            else:
                raise FrontMatterError(lineno - 1, f"key {key!r} has no value")
        while stack and stack[-1][0] > indent:
            stack.pop()
        if not stack or stack[-1][0] != indent:
            raise FrontMatterError(lineno, "inconsistent indentation")
        container = stack[-1][1]
        if m.group(2) is not None:
            if not isinstance(container, list):
                raise FrontMatterError(lineno, "a list item where a key was expected")
            container.append(_value(m.group(2), lineno))
            continue
        if not isinstance(container, dict):
            raise FrontMatterError(lineno, "a key where a list item was expected")
        key = m.group(3)
        if key in container:
            raise FrontMatterError(lineno, f"duplicate key {key!r}")
        if m.group(4) is None:
            container[key] = None
            pending = (container, key, indent)
        else:
            container[key] = _value(m.group(4), lineno)
    if pending is not None:
        raise FrontMatterError(first_line + len(lines) - 1, f"key {pending[1]!r} has no value")
    return root
