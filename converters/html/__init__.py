"""HTML output: one self-contained, server-side rendered page per session.

Registered through the ``piconv`` entry-point group like any plugin. Heavy modules
(cmark-gfm) load only when a page is written. Code is coloured in the browser by the
highlight.js the page embeds. See docs/formats/html.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from piconv import Converter, Report, hookimpl

if TYPE_CHECKING:
    from piconv import ListedSession, SessionDiff
    from piconv.ir import Document


def write(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    from .page import write_page

    write_page(doc, out, options, report)


def check(data: bytes) -> list[str]:
    from .check import check_page

    return check_page(data)


class IndexPage:
    """The directory run's ``index.html`` (:mod:`.index`, imported when a run writes it)."""

    file_name = "index.html"

    @staticmethod
    def render(projects: Mapping[str, Sequence[ListedSession]], output_dir: str) -> bytes:
        from .index import render

        return render(projects, output_dir)

    @staticmethod
    def owns(existing: bytes) -> bool:
        from .index import owns

        return owns(existing)


class DiffPage:
    """``piconv diff --to html`` (:mod:`.diffpage`, imported when a diff is drawn)."""

    @staticmethod
    def render(diff: SessionDiff) -> bytes:
        from .diffpage import render

        return render(diff)


@hookimpl
def register_converters(register: Any) -> None:
    register(
        Converter(
            name="html",
            summary="Self-contained HTML page: whole tree, readable without JavaScript, strict CSP",
            extension=".html",
            media_type="text/html",
            write=write,
            check=check,
            # The page checks its body piece by piece as it writes it, so it is not read back.
            checks_while_writing=True,
            mapping_doc="docs/formats/html.md",
            index=IndexPage(),
            diff=DiffPage(),
        )
    )
