"""The fuzz test of ASF input: hostile ASF files (tests/hostile_asf.py) through the
``asf`` reader and every built-in format, by the public API and by the command line.

What must hold for every input: no exception but ``InputError`` (a file that is no ASF
file, or of a version not read), no hang (each example has a deadline), every line read
is an entry or a reported problem, the tree has no cycle and no id twice, every format
accepts its own output (its validation while converting and its checker), and the command
line exits only with 0 or 3 and never shows a traceback.

And what must hold for every well-formed file another writer could write, alone or
continuing piconv's ASF of a pi session (tests/wellformed_asf.py): RFC 0001's context
made from the document equals the one made from the file's own entries.

The ``piconv-fuzz`` profile of tests/test_fuzz.py bounds the time
(``PICONV_FUZZ_EXAMPLES`` examples per test, default 40).
"""

from __future__ import annotations

import io
from pathlib import Path

import hostile
import hostile_asf
import orjson
import piconv
import pytest
import wellformed_asf
from hypothesis import given
from hypothesis import strategies as st
from test_asf_read import _same_rfc_context, to_asf
from test_fuzz import DOCUMENTED_EXITS, FUZZ, _cli

REPO = Path(__file__).resolve().parent.parent


def read(data: bytes) -> piconv.Document | None:
    """The document of ``data``, checked; ``None`` when it is refused as a whole."""
    try:
        document = piconv.load(data, reader="asf", keep_source="layout")
    except piconv.InputError:
        return None
    ids = [e.id for e in document.entries]
    assert len(ids) == len(set(ids)), "an id twice in the tree"
    made: set[str] = set()
    for entry in document.entries:  # every parent made before its child: no cycle
        assert entry.parent_id is None or entry.parent_id in made, entry
        made.add(entry.id)
    assert document.leaf_id is None or document.leaf_id in made
    for leaf in document.leaves():
        document.path(leaf.id)
        document.context(leaf.id)
    assert document.lines_read == hostile.physical_lines(data)
    return document


@FUZZ
@given(data=hostile_asf.files())
def test_the_reader_reads_any_file_without_a_crash_or_a_loop(data: bytes) -> None:
    read(data)


@pytest.mark.parametrize("name", hostile.CONVERTERS)
@FUZZ
@given(data=hostile_asf.files())
def test_every_format_accepts_what_the_reader_made(name: str, data: bytes) -> None:
    document = read(data)
    if document is None:
        return
    report = piconv.convert(document, name, io.BytesIO(), validate=False)
    assert report.lines_read == document.lines_read
    hostile.convert_checked(document, name)


@pytest.mark.parametrize("name", ("pi", "openai", "ir"))
@FUZZ
@given(data=hostile_asf.files())
def test_the_command_line_exits_with_documented_codes(name: str, data: bytes, tmp_path: Path) -> None:
    source = tmp_path / "hostile.asf.jsonl"
    source.write_bytes(data)
    out = tmp_path / f"out-{name}"
    out.unlink(missing_ok=True)
    code, err = _cli(str(source), "--from", "asf", "--to", name, "-o", str(out))
    assert code in DOCUMENTED_EXITS, err
    assert "Traceback" not in err
    if code == 3:
        assert not out.exists() and err.count("\n") == 1, err
        return
    code, err = _cli("validate", str(out), "--format", name)
    assert code == 0, err
    code, err = _cli("inspect", str(source), "--from", "asf", "--json")
    assert code == 0, err


@FUZZ
@given(data=wellformed_asf.files())
def test_the_context_of_a_well_formed_file_is_the_one_its_own_entries_give(data: bytes) -> None:
    _same_rfc_context(data)


PI_WRITTEN = [
    [orjson.loads(line) for line in to_asf((REPO / "examples" / name).read_bytes()).splitlines()]
    for name in ("basic.jsonl", "branching.jsonl")
]


@FUZZ
@given(data=st.sampled_from(PI_WRITTEN).flatmap(lambda lines: wellformed_asf.files([dict(v) for v in lines])))
def test_the_context_of_a_file_piconv_wrote_that_another_writer_continued_is_its_own(data: bytes) -> None:
    _same_rfc_context(data)
