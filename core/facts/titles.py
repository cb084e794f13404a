"""What a session is called: its title, cleaned of pi's markup, and its project.

The one rule for every title piconv shows (:func:`shown_title`, :func:`session_title`)
and the pieces it is made of: the name, a title line beside the header, the first
prompt (:func:`first_prompt`), each cleaned by :func:`clean_title`.
"""

from __future__ import annotations

import re

from ..ir import Document, MessageBody, Text, UserMessage

TITLE_CHARS = 200
"""The most of a first prompt a session keeps (:func:`first_prompt`)."""

# pi wraps metadata it adds to a prompt in tags of its own (``<user_message_time>…``);
# a title shows what the person typed, so such a block goes, and any other bare
# tag of that shape (lower case, underscores) loses its brackets.
_META_BLOCK = re.compile(r"<(user_message_time|system[_-]reminder|environment_details)>.*?</\1>", re.S)
_BARE_TAG = re.compile(r"</?[a-z][a-z0-9]*(?:_[a-z0-9]+)+>")


def clean_title(text: str) -> str:
    """``text`` as a one-line title: pi's metadata blocks and markup tags removed,
    white space collapsed."""
    text = _META_BLOCK.sub(" ", text)
    text = _BARE_TAG.sub(" ", text)
    return " ".join(text.split())


def project_name(cwd: str | None, source_path: str | None) -> str:
    """The project a session belongs to: the last folder of its working directory, or,
    when the session has none, the folder the file is in, without pi's ``--`` marks."""
    if isinstance(cwd, str):
        name = cwd.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        if name:
            return name
    if source_path:
        parts = source_path.replace("\\", "/").rsplit("/", 2)
        if len(parts) >= 2 and parts[-2].strip("-"):
            return parts[-2].strip("-")
    return "(no project)"


PROMPT_PREFIX = 64 * TITLE_CHARS
"""What of a prompt a title is made from: its start, so a prompt of hundreds of megabytes
costs what a short one does (pi's metadata blocks are a few dozen characters)."""


def prompt_text(message: UserMessage) -> str:
    """What the person typed in ``message``, as one line: its text parts joined, then
    cleaned (:func:`clean_title`); ``""`` when it holds no text."""
    content = message.content
    if isinstance(content, str):
        return clean_title(content)
    if content:
        return clean_title(" ".join(p.text for p in content if type(p) is Text and p.text))
    return ""


def first_prompt(doc: Document) -> str | None:
    """The first user text along the leaf's path, cleaned (:func:`clean_title`): made
    from the first :data:`PROMPT_PREFIX` characters of it."""
    for entry in doc.path():
        body = entry.body
        if type(body) is MessageBody and type(body.message) is UserMessage:
            content = body.message.content
            if isinstance(content, str):
                text = content[:PROMPT_PREFIX]
            elif content:
                texts: list[str] = []
                size = 0
                for p in content:
                    if type(p) is Text and p.text:
                        texts.append(p.text[: PROMPT_PREFIX - size])
                        size += len(texts[-1]) + 1
                        if size >= PROMPT_PREFIX:
                            break
                text = " ".join(texts)
            else:
                continue
            text = clean_title(text)
            if text:
                return text[:TITLE_CHARS]
    return None


def header_title(doc: Document) -> str | None:
    """A title the file carries beside its header (Oh-My-Pi's title line, kept in
    ``SessionInfo.other_headers``), stripped; None without one."""
    for _line, value in doc.session.other_headers:
        if isinstance(value, dict) and value.get("type") == "title" and isinstance(value.get("title"), str):
            return value["title"].strip() or None
    return None


SHOWN_TITLE_CHARS = 120
"""A title as a page shows it: one line of at most this many characters."""


def shown_title(*candidates: str | None) -> str:
    """The first candidate that holds text, cleaned (:func:`clean_title`), on one line of
    at most :data:`SHOWN_TITLE_CHARS` characters (a longer one ends with ``…``); ``""``
    when none does. The one rule for every title piconv shows, whatever it is read from
    (a document, a quick scan, the archive, the manifest)."""
    text = next((t for t in (clean_title(c) for c in candidates if c) if t), "")
    return text if len(text) <= SHOWN_TITLE_CHARS else text[: SHOWN_TITLE_CHARS - 1] + "\u2026"


def session_title(doc: Document) -> str | None:
    """The title every output gives the session: its name (pi's ``session_info``, or
    Oh-My-Pi's title line), else its first prompt (:func:`shown_title`); ``None`` when it
    has neither."""
    return shown_title(doc.session_name(), header_title(doc), first_prompt(doc)) or None
