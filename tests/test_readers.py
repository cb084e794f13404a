"""Readers are plugins: the register_readers hook, detection, --from, and what goes
wrong with a reader plugin (reported and skipped, never fatal)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import types
from collections.abc import Iterator
from typing import Any

import piconv
import pytest
from conftest import session_bytes
from piconv import PluginError, Reader, hookimpl, ir
from piconv import registry as registry_module
from piconv.registry import PluginWarning, build_registry

PI = session_bytes(
    {
        "type": "message",
        "id": "a",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "hi"},
    }
)


def _notes(head: bytes) -> float:
    return 1.0 if head.startswith(b"NOTES\n") else 0.0


def _read_notes(stream: Any, options: Any) -> ir.Document:
    lines = stream.read().decode().splitlines()[1:]
    issues, entries = [], []
    for n, text in enumerate(lines, 2):
        if not text.strip():
            issues.append(ir.Issue(n, "blank", "a blank note; skipped"))
            continue
        parent = entries[-1].id if entries else None
        entries.append(ir.Entry(f"n{n}", parent, None, ir.MessageBody(ir.UserMessage(text)), ir.Origin(n)))
    return ir.Document(
        ir.SessionInfo(source_format="notes", source_path=options["source_path"]),
        tuple(entries),
        entries[-1].id if entries else None,
        tuple(issues),
        len(lines) + 1,
    )


def _every_note(document: ir.Document, leaf_id: str | None) -> ir.Context:
    return ir.Context(
        tuple(ir.ContextMessage(e.message, e.id) for e in document.path(leaf_id)), None, None, leaf_id
    )


NOTES = Reader(
    name="notes",
    summary="one note a line",
    detect=_notes,
    read=_read_notes,
    extensions=(".notes",),
    context=_every_note,
    mapping_doc="docs/notes.md",
)


def _plugin(name: str, *readers: Any, fails: bool = False) -> types.ModuleType:
    module = types.ModuleType(name)

    @hookimpl
    def register_readers(register):  # type: ignore[no-untyped-def]
        for reader in readers:
            register(reader)
        if fails:
            raise RuntimeError("broken on purpose")

    module.register_readers = register_readers  # type: ignore[attr-defined]
    module.PICONV_PLUGIN_API = 2  # type: ignore[attr-defined]
    return module


@pytest.fixture
def with_registry() -> Iterator[Any]:
    """Makes a registry built with extra plugins the process-wide one for a test."""
    saved = registry_module._cached

    def use(*plugins: object) -> Any:
        registry_module._cached = build_registry(extra_plugins=plugins, third_party=False)
        return registry_module._cached

    try:
        yield use
    finally:
        registry_module._cached = saved


def test_built_in_readers_register_through_the_hook() -> None:
    registry = build_registry(third_party=False)
    assert [r.name for r in registry.readers()] == ["asf", "pi"]
    assert registry.reader("pi").plugin == "piconv.pi.read" and registry.reader("agentsession").name == "asf"
    assert any(p.name == "piconv.pi.read" and p.hooks == ("register_readers",) for p in registry.plugins)
    assert piconv.PLUGIN_API_VERSION == 2


def test_a_plugin_reader_is_detected_read_and_given_its_context_rule(
    with_registry: Any, tmp_path: Any
) -> None:
    with_registry(_plugin("notes_plugin", NOTES))
    path = tmp_path / "today.notes"
    path.write_bytes(b"NOTES\nbuy milk\n\ncall Ann\n")
    assert piconv.detect(path).name == "notes" and piconv.detect(PI).name == "pi"
    doc = piconv.load(path)
    assert [e.message.content for e in doc.entries] == ["buy milk", "call Ann"]
    assert [(i.line, i.code) for i in doc.issues] == [(3, "blank")]
    assert doc.context_builder is _every_note and [m.entry_id for m in doc.context().messages] == ["n2", "n4"]
    out = io.BytesIO()
    report = piconv.convert(path, "markdown", out)  # a path goes through the same reader
    assert b"call Ann" in out.getvalue() and report.entries_read == 2


def test_two_readers_claiming_equally_is_one_clear_error(with_registry: Any) -> None:
    twin = Reader(name="notes-twin", summary="the same", detect=_notes, read=_read_notes)
    with_registry(_plugin("notes_plugin", NOTES, twin))
    with pytest.raises(piconv.InputError) as caught:
        piconv.load(b"NOTES\nx\n")
    assert str(caught.value) == (
        "<bytes>: readers notes and notes-twin claim this input equally (readers tried: asf, notes, notes-twin, pi); "
        "choose one with --from"
    )
    assert piconv.load(b"NOTES\nx\n", reader="notes-twin").entries[0].message.content == "x"


def test_a_detect_that_raises_counts_as_no_and_is_reported(with_registry: Any) -> None:
    def broken(head: bytes) -> float:
        raise ValueError("oops")

    with_registry(_plugin("bad_detect", Reader(name="bad", summary="", detect=broken, read=_read_notes)))
    with pytest.warns(PluginWarning, match=r"reader 'bad' \(-\): detect failed: ValueError: oops"):
        assert piconv.load(PI).entries[0].id == "a"


def test_clashing_raising_and_malformed_reader_plugins_are_reported_and_skipped() -> None:
    clash = Reader(name="PI", summary="not pi", detect=_notes, read=_read_notes, aliases=("mine",))
    with pytest.warns(PluginWarning):
        registry = build_registry(
            extra_plugins=(
                _plugin("clash_plugin", clash, NOTES),
                _plugin("raising_plugin", fails=True),
                _plugin("wrong_plugin", "not a reader"),
            ),
            third_party=False,
        )
    failures = "\n".join(registry.failures)
    assert "reader name 'pi' is registered twice: by plugin 'piconv.pi.read'" in failures
    assert "raising_plugin" in failures and "RuntimeError: broken on purpose" in failures
    assert "wrong_plugin" in failures and "registered str as a reader" in failures
    assert registry.reader("pi").plugin == "piconv.pi.read"
    assert registry.reader("notes").plugin == "clash_plugin"  # the plugin's other reader stays
    with pytest.raises(PluginError, match=r"unknown input format 'mine' \(known: asf, notes, pi\)"):
        registry.reader("mine")


def test_no_reader_recognises_binary_nor_an_empty_file() -> None:
    with pytest.raises(
        piconv.InputError, match=r"^<bytes>: no reader recognises this input \(readers tried: asf, pi\)"
    ):
        piconv.load(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(piconv.InputError, match=r"^<bytes>: empty file \(readers tried: asf, pi\)"):
        piconv.load(b"")


def test_a_forced_reader_that_cannot_read_its_input_says_so() -> None:
    with pytest.raises(piconv.InputError, match="not an ASF file: line 1 is a session header"):
        piconv.load(PI, reader="asf")
    asf = piconv.convert_to_bytes(PI, "asf")
    with pytest.raises(piconv.InputError, match=r"an ASF file \(agentsession/0\.11\), not a pi session"):
        piconv.load(asf, reader="pi")
    with pytest.raises(PluginError, match="unknown input format 'nope'"):
        piconv.load(PI, reader="nope")


def _cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "piconv", *args], input=stdin, capture_output=True)


def test_list_formats_lists_readers_and_writers() -> None:
    result = _cli("--list-formats", "--json")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert [r["name"] for r in listed["input"]] == ["asf", "pi"]
    assert {"asf", "markdown", "pi"} <= {c["name"] for c in listed["output"]}
    assert listed["input"][1]["mapping_doc"] == "docs/formats/pi.md" and listed["input"][0]["aliases"] == [
        "agentsession"
    ]
    text = _cli("--list-formats").stdout.decode()
    assert (
        text.index("input formats (--from):")
        < text.index("  pi  .jsonl")
        < text.index("output formats (--to):")
    )


def test_from_forces_a_reader_and_a_directory_refuses_it(tmp_path: Any) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(PI)
    forced = _cli(str(path), "--from", "asf", "--to", "ir", "-q")
    assert forced.returncode == 3 and forced.stdout == b""
    assert forced.stderr.count(b"\n") == 1 and forced.stderr.startswith(b"piconv: error: ")
    assert b"not an ASF file" in forced.stderr and str(path).encode() in forced.stderr
    assert _cli(str(path), "-f", "pi", "--to", "ir", "-q").stdout.count(b'"source_format":"pi"') == 1
    unknown = _cli(str(path), "--from", "nope", "--to", "ir")
    assert unknown.returncode == 4 and b"unknown input format 'nope' (known: asf, pi)" in unknown.stderr
    directory = _cli(str(tmp_path), "--from", "pi", "--to", "ir", "-o", str(tmp_path / "out"))
    assert directory.returncode == 2 and b"--from applies to one input" in directory.stderr


def test_a_directory_mixing_pi_and_asf_files_converts_both_and_records_the_reader(tmp_path: Any) -> None:
    from piconv.bulk import run_bulk

    src, out = tmp_path / "sessions", tmp_path / "out"
    src.mkdir()
    (src / "a.jsonl").write_bytes(PI)
    asf = io.BytesIO()
    piconv.convert(PI.replace(b'"hi"', b'"hello from asf"'), "asf", asf)
    (src / "b.asf.jsonl").write_bytes(asf.getvalue())
    (src / "c.jsonl").write_bytes(b"neither pi nor asf\n")
    summary = run_bulk(str(src), str(out), ["markdown"], jobs=1, quiet=True)
    assert (summary.converted, summary.failed) == (2, 0)
    assert [(s["input"], s["code"]) for s in summary.skipped] == [("c.jsonl", "not-a-session")]
    assert "hello from asf" in (out / "b.asf.md").read_text()
    records = {
        r["input"]: r for r in map(json.loads, (out / ".piconv-manifest.jsonl").read_text().splitlines())
    }
    assert records["a.jsonl"]["reader"] == "pi" and records["b.asf.jsonl"]["reader"] == "asf"
    assert "c.jsonl" not in records  # its first line is no session header: passed over, as pi does
    # inspect works on whatever a reader reads
    shown = _cli("inspect", str(src / "b.asf.jsonl"), "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["reader"] == "asf"


def test_a_pipe_is_detected_without_being_read_whole_first(tmp_path: Any) -> None:
    # Standard input cannot be rewound: the bytes read for detection are put back in
    # front of the rest. A session well past the 64 KiB head, as pi and as ASF.
    lines = [
        {
            "type": "message",
            "id": f"m{n}",
            "parentId": f"m{n - 1}" if n else None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "x" * 500 + str(n)},
        }
        for n in range(400)
    ]
    pi = session_bytes(*lines)
    asf = io.BytesIO()
    piconv.convert(pi, "asf", asf)
    for data, reader in ((pi, "pi"), (asf.getvalue(), "asf")):
        assert len(data) > 3 * 64 * 1024
        shown = _cli("inspect", "-", "--json", stdin=data)
        assert shown.returncode == 0, shown.stderr
        info = json.loads(shown.stdout)
        assert (info["reader"], info["entries"], info["leaf"]) == (reader, 400, "m399")
