"""Markdown transcripts: ``piconv session.jsonl --to markdown`` (alias ``md``).

A readable, diffable transcript of the path to the leaf (or, with ``--all-branches``,
of the whole tree), with YAML front matter. Mapping and losses: ``docs/formats/markdown.md``.

Modules: :mod:`.writer` (the document), :mod:`.render` (entries to Markdown),
:mod:`.headings` (what a heading says), :mod:`.notes` (settings, bookmarks, summaries,
system prompts), :mod:`.blocks` (the shapes of blocks), :mod:`.tools` (tool calls), :mod:`.escape` (text safety), :mod:`.frontmatter`,
:mod:`.images`, :mod:`.tree` (branches); the check of an output: :mod:`.checker` (whole
documents and streams), :mod:`.frontmatter_schema` (the front matter's schema), :mod:`.body` (the
structural checks), :mod:`.tokens` (the parser), :mod:`.sections` and :mod:`.regions`
(the body cut into sections, and what a section may leave out).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from piconv import Converter, Option, hookimpl

if TYPE_CHECKING:
    from piconv import ListedSession, Report, SessionDiff
    from piconv.ir import Document


def write(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    from .writer import write as _write  # lazy: keeps `piconv --help` fast

    _write(doc, out, options, report)


def check(data: bytes) -> list[str]:
    from .checker import check as _check  # lazy: the parser loads only to validate

    return _check(data)


OPTIONS = (
    Option(
        "--images",
        "markdown: images as files beside the output (default), embedded data URIs, or omitted",
        choices=("embed", "files", "omit"),
        default="files",
    ),
    Option(
        "--all-branches",
        "markdown: write every branch of the session tree, not only the path to the leaf",
        takes_value=False,
        default=False,
    ),
)


class IndexPage:
    """The directory run's ``index.md`` (:mod:`.index`, imported when a run writes it)."""

    file_name = "index.md"

    @staticmethod
    def render(projects: Mapping[str, Sequence[ListedSession]], output_dir: str) -> bytes:
        from .index import render

        return render(projects, output_dir)

    @staticmethod
    def owns(existing: bytes) -> bool:
        from .index import owns

        return owns(existing)


class DiffPage:
    """``piconv diff --to markdown`` (:mod:`.diffpage`, imported when a diff is drawn)."""

    @staticmethod
    def render(diff: SessionDiff) -> bytes:
        from .diffpage import render

        return render(diff)


@hookimpl
def register_converters(register: Callable[[Converter], None]) -> None:
    register(
        Converter(
            name="markdown",
            summary="Markdown transcript with YAML front matter, for reading, diffing and publishing",
            extension=".md",
            media_type="text/markdown",
            write=write,
            check=check,
            mapping_doc="docs/formats/markdown.md",
            aliases=("md",),
            options=OPTIONS,
            checks_while_writing=True,
            index=IndexPage(),
            diff=DiffPage(),
        )
    )
