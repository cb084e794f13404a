"""IR content → an ATIF message: a string, or a list of content parts when it holds an
image. Images become files beside the trajectory (``ID_images/HASH.EXT``, the names
Markdown gives them) referenced by relative path, or data URLs when the output has no
place beside it (standard output, bytes in memory)."""

from __future__ import annotations

import os
from typing import Any

from piconv import Report
from piconv.converters.common.images import EXTENSIONS, decode, file_name, folder_name
from piconv.ir import Content, Image, Reasoning, Text, ToolCall

from . import losses

ATIF_IMAGE_TYPES = frozenset(EXTENSIONS)
"""The image types an ATIF content part may name (its ``ImageSource.media_type``)."""


class Media:
    """Where a trajectory's images go: ``directory`` (the folder the trajectory is in),
    or None for data URLs. Remembers what it wrote, so each image is written once."""

    def __init__(self, directory: str | None, session_id: str | None, report: Report) -> None:
        self.directory = directory
        self.folder = folder_name(session_id, None)
        self.report = report
        self.written: set[str] = set()
        if directory is None:
            report.notes["images"] = "no folder beside the output: images are data URLs"

    def image(self, part: Image, line: int | None) -> dict[str, Any]:
        """One image as an ATIF content part, or a text part saying why it is not one."""
        media_type = part.media_type.lower() if isinstance(part.media_type, str) else ""
        if media_type not in ATIF_IMAGE_TYPES:
            self.report.add(losses.IMAGE_TYPE, line, media_type or "no media type")
            return _text(f"[image omitted: {media_type or 'no media type'} is not an ATIF image type]")
        raw = decode(part.data)
        if raw is None:
            self.report.add(losses.IMAGE_INVALID, line, "image data is not valid base64")
            return _text("[image omitted: its data is not valid base64]")
        if self.directory is None:
            path = f"data:{media_type};base64,{''.join((part.data or '').split())}"
        else:
            name = file_name(raw, EXTENSIONS[media_type])
            if name not in self.written:
                from piconv import write_into_folder  # nothing followed; no file replaced

                write_into_folder(os.path.join(self.directory, self.folder), name, raw)
                self.written.add(name)
            path = f"{self.folder}/{name}"
        return {"type": "image", "source": {"media_type": media_type, "path": path}}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def message(content: Content | None, media: Media, line: int | None, report: Report) -> Any:
    """User-side content (a prompt, a tool's output) as an ATIF message: its text parts
    joined as they stand, or a part list when it holds an image."""
    if content is None:
        return ""
    if type(content) is str:
        return content
    parts: list[dict[str, Any]] = []
    images = False
    for part in content:
        cls = type(part)
        if cls is Text:
            parts.append(_text(part.text or ""))
        elif cls is Image:
            shown = media.image(part, line)  # type: ignore[arg-type]
            images = images or shown["type"] == "image"
            parts.append(shown)
        else:
            parts.append(_text(other_part(part, line, report)))
    if not images:
        return "".join(p["text"] for p in parts)
    return parts


def other_part(part: Any, line: int | None, report: Report) -> str:
    """A part user-side content should not hold (reasoning, a tool call, a type the IR
    does not know), kept as text so nothing the model saw is dropped."""
    report.add(losses.PART_AS_TEXT, line, str(getattr(part, "type", None)))
    if type(part) is Reasoning:
        return part.text or ""
    if type(part) is ToolCall:
        return f"{part.name}({_json(part.arguments)})"
    return _json(getattr(part, "value", None))


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
