"""ATIF, Harbor's Agent Trajectory Interchange Format v1.8: ``piconv s.jsonl --to atif``.

One trajectory per root-to-leaf path of the session: the model's context at the leaf as
steps (system, user and agent turns, tool calls answered by observations), per-step and
final metrics, the agent and its tools. A single conversion writes the current leaf's
trajectory (or the one ``--leaf`` names) to a file or standard output; ``-o DIR/`` writes
every leaf's into a directory, as agentsession's ``export`` does. Each trajectory is
validated by the ``atif`` package's Pydantic models (an optional dependency:
``pip install 'piconv[atif]'``), imported only when the format is used.

Modules: :mod:`.writer` (the files), :mod:`.trajectory` (one document),
:mod:`.steps` (the context as steps), :mod:`.content` (messages and images),
:mod:`.metrics` (usage), :mod:`.branches` (continued and abandoned branches, file names),
:mod:`.validate` (the reference models), :mod:`.losses` (the loss codes).
Mapping and losses: docs/formats/atif.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any

from piconv import Converter, hookimpl

if TYPE_CHECKING:
    from piconv import Report
    from piconv.ir import Document

MAPPING_DOC = "docs/formats/atif.md"


def write(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    from .writer import write_one  # lazy: keeps `piconv --help` fast

    write_one(doc, out, options, report)


def write_directory(doc: Document, directory: str, options: Mapping[str, Any], report: Report) -> None:
    from .writer import write_directory as _write_directory

    _write_directory(doc, directory, options, report)


def check(data: bytes) -> list[str]:
    from .validate import check as _check

    return _check(data)


@hookimpl
def register_converters(register: Callable[[Converter], None]) -> None:
    register(
        Converter(
            name="atif",
            summary="ATIF v1.8 trajectory (Harbor's Agent Trajectory Interchange Format), one per leaf",
            extension=".json",
            media_type="application/json",
            write=write,
            check=check,
            checks_while_writing=True,
            per_leaf=True,
            mapping_doc=MAPPING_DOC,
            write_directory=write_directory,
        )
    )
