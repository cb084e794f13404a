"""How a pi line was spelled, kept in the ``pi`` record of what it became.

An ASF line is canonical JSON (members sorted), so the member order of pi's line is
lost on the way; the ``pi`` record keeps it as the line's ``layout``
(:func:`piconv.jsonl.layout_of`), or the line's ``text`` where no layout gives its bytes
back (another writer's spaces or escapes). The ``asf`` reader hands them to a pi writer
(:attr:`piconv.ir.Document.source_lines`), which writes the very bytes again.
"""

from __future__ import annotations

from typing import Any

from piconv import ir, jsonl

JSONDict = dict[str, Any]


def spelling(lines: ir.SourceLines | None, made: object, line: int, left: JSONDict) -> None:
    """How the pi line ``made`` was read from was spelled, kept in its ``pi`` record
    ``left`` so the pi file can be written again byte for byte: ``layout`` (the member
    order of its objects, :func:`piconv.jsonl.layout_of`), or ``text`` (the line itself)
    where no layout gives the bytes back. Of a line a filter changed only the layout is
    kept, never the text of what it was."""
    if lines is None:
        return
    own = lines.of(made, line)
    if own is not None:
        raw, layout, _trusted = own
        if layout is None and raw is not None:
            layout = _layout(raw, check=True)
        if layout is not None:
            left["layout"] = layout
        elif raw is not None:
            left["text"] = raw.decode("utf-8")
        return
    found = lines.template(line)
    if found is not None:
        raw, layout = found
        layout = layout if layout is not None else (_layout(raw, check=False) if raw is not None else None)
        if layout is not None:
            left["layout"] = layout


def _layout(raw: bytes, *, check: bool) -> JSONDict | None:
    try:
        value = jsonl.parse(raw)
    except ValueError:
        return None
    if type(value) is not dict:
        return None
    return jsonl.layout_of(value, raw if check else None)
