"""What no input and no plugin can do: end piconv silently, or be read as what it is not.

- ASF versions are gated as RFC 0001 says: 0.5 to 0.11 read, anything else one line naming
  the version, exit 3.
- A forced reader that cannot read its input exits 3 with one line.
- A plugin's ``SystemExit`` from a hook is reported and the plugin skipped; from a reader's, filter's or format's code it is a
  ``PluginError`` (exit 4), never a silent exit 0.
- ``--report`` and ``-o`` naming one file is a usage error.
"""

from __future__ import annotations

import contextlib
import io
import json
import types
from pathlib import Path
from typing import Any

import piconv
import piconv.registry
import pytest
from piconv import Converter, Filter, Reader, hookimpl
from piconv.cli import main
from piconv.registry import PluginWarning, build_registry

from .conftest import REPO

EXAMPLE = REPO / "examples" / "basic.jsonl"

HEADER = {
    "type": "session",
    "id": "s",
    "created_at": "2026-01-01T00:00:00Z",
    "harness": {"name": "x", "version": "1"},
}
ITEM = {
    "type": "item",
    "id": "i",
    "parent": None,
    "ts": "2026-01-01T00:00:01Z",
    "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
}


def _asf(fmt: Any) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in ({**HEADER, "format": fmt}, ITEM))


def _cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(argv))
    return code, err.getvalue()


@pytest.mark.parametrize("fmt", ["agentsession/0.5", "agentsession/0.10", "agentsession/0.11"])
def test_the_versions_a_reader_of_0_11_reads(fmt: str) -> None:
    doc = piconv.load(_asf(fmt))
    assert doc.session.source_version == int(fmt.rpartition(".")[2]) and len(doc.entries) == 1


@pytest.mark.parametrize(
    ("fmt", "said"),
    [
        ("agentsession/0.12", "agentsession/0.12 is newer than this piconv reads"),
        ("agentsession/1.0", "agentsession/1.0 is newer than this piconv reads"),
        (
            "agentsession/0.4",
            "agentsession/0.4 is older than 0.5: RFC 0001 reads such a file by migrating it",
        ),
        ("agentsession/0.11.1", "names no agentsession/<major>.<minor> version"),
        ("agentsession/x", "names no agentsession/<major>.<minor> version"),
    ],
)
def test_other_versions_are_refused_naming_them(fmt: str, said: str, tmp_path: Path) -> None:
    with pytest.raises(piconv.InputError, match=said.replace(".", r"\.")):
        piconv.load(_asf(fmt))
    path = tmp_path / "s.jsonl"
    path.write_bytes(_asf(fmt))
    code, err = _cli(str(path), "--to", "ir", "-o", str(tmp_path / "out.json"))
    assert code == 3 and err.count("\n") == 1 and said in err and str(path) in err
    assert not (tmp_path / "out.json").exists()


def test_a_forced_reader_that_cannot_read_its_input_exits_3(tmp_path: Path) -> None:
    asf = tmp_path / "s.asf.jsonl"
    asf.write_bytes(_asf("agentsession/0.11"))
    for source, reader, said in (
        (str(EXAMPLE), "asf", "not an ASF file"),
        (str(asf), "pi", "not a pi session: read it with --from asf"),
    ):
        code, err = _cli(source, "--from", reader, "--to", "markdown", "-o", str(tmp_path / "out.md"))
        assert code == 3 and err.count("\n") == 1 and said in err, err
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    code, err = _cli(str(empty), "--from", "asf", "--to", "ir")
    assert code == 3 and "empty file" in err


@pytest.fixture
def registry_with(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Installs a registry with the given plugins as the process's, for the command line."""

    def install(*plugins: object) -> piconv.registry.Registry:
        with (
            pytest.warns(PluginWarning)
            if any(getattr(p, "warns", False) for p in plugins)
            else contextlib.nullcontext()
        ):
            registry = build_registry(extra_plugins=plugins, third_party=False)
        monkeypatch.setattr(piconv.registry, "_cached", registry)
        return registry

    return install


def _exiting(code: int) -> Any:
    def leave(*_args: object, **_kwargs: object) -> None:
        raise SystemExit(code)

    return leave


def test_a_hook_that_exits_is_reported_and_its_plugin_skipped(registry_with: Any, tmp_path: Path) -> None:
    module = types.ModuleType("leaver")
    module.warns = True  # type: ignore[attr-defined]
    module.register_converters = hookimpl(_exiting(0))  # type: ignore[attr-defined]
    registry = registry_with(module)
    assert any("leaver" in f and "SystemExit" in f for f in registry.failures)
    code, _err = _cli(str(EXAMPLE), "--to", "ir", "-o", str(tmp_path / "out.json"))
    assert code == 0 and (tmp_path / "out.json").exists()  # everything else keeps working


def test_a_format_a_reader_or_a_filter_that_exits_is_a_plugin_error(
    registry_with: Any, tmp_path: Path
) -> None:
    module = types.ModuleType("exits")

    @hookimpl
    def register_converters(register: Any) -> None:
        register(
            Converter(name="leave", summary="s", extension=".x", media_type="text/plain", write=_exiting(0))
        )

    @hookimpl
    def register_readers(register: Any) -> None:
        register(Reader(name="leaving", summary="s", detect=lambda head: 0.0, read=_exiting(0)))

    @hookimpl
    def register_filters(register: Any) -> None:
        register(Filter("leave", "s", _exiting(0)))

    module.register_converters = register_converters  # type: ignore[attr-defined]
    module.register_readers = register_readers  # type: ignore[attr-defined]
    module.register_filters = register_filters  # type: ignore[attr-defined]
    module.PICONV_PLUGIN_API = 2  # type: ignore[attr-defined]
    registry_with(module)
    out = tmp_path / "out.x"
    code, err = _cli(str(EXAMPLE), "--to", "leave", "-o", str(out))
    assert code == 4 and "format 'leave' tried to end piconv (SystemExit: 0)" in err and not out.exists()
    code, err = _cli(str(EXAMPLE), "--from", "leaving", "--to", "ir", "-o", str(tmp_path / "o.json"))
    assert code == 4 and "reader 'leaving' tried to end piconv" in err
    with pytest.raises(piconv.PluginError, match="filter 'leave' tried to end piconv"):
        piconv.apply_filters(piconv.load(EXAMPLE), [("leave", {})])


def test_report_and_output_naming_one_file_is_a_usage_error(tmp_path: Path) -> None:
    out = tmp_path / "out.md"
    code, err = _cli(str(EXAMPLE), "--to", "markdown", "-o", str(out), "--report", str(out))
    assert code == 2 and "--report and -o both name" in err and not out.exists()
    out.write_text("kept")
    link = tmp_path / "link.md"
    link.symlink_to(out)
    code, err = _cli(str(EXAMPLE), "--to", "markdown", "-o", str(link), "--report", str(out))
    assert code == 2 and out.read_text() == "kept"


def test_a_tool_whose_parameters_are_no_object_does_not_spoil_the_request() -> None:
    session = (
        b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}\n'
        b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":'
        b'{"role":"system","content":"hi","toolsAdded":[{"name":"t","description":"d","parameters":"notobj"}]}}\n'
        b'{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:01.000Z","message":'
        b'{"role":"user","content":"q","timestamp":1}}\n'
    )
    sink = io.BytesIO()
    report = piconv.convert(session, "openai", sink)  # validated
    request = json.loads(sink.getvalue())
    assert request["tools"] == [{"type": "function", "function": {"name": "t", "description": "d"}}]
    assert report.losses["openai:tool-parameters-dropped"].count == 1


def test_a_tool_declared_without_a_name_is_left_out_of_the_openai_request() -> None:
    # found by tests/test_fuzz.py: a request with a nameless function fails the format's
    # own validation (exit 5)
    session = (
        b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}\n'
        b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":'
        b'{"role":"system","content":"hi","toolsAdded":[{"d":1},{"name":7},{"name":"t","parameters":{"type":"object"}}]}}\n'
        b'{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:01.000Z","message":'
        b'{"role":"user","content":"q","timestamp":1}}\n'
    )
    sink = io.BytesIO()
    report = piconv.convert(session, "openai", sink)  # validated
    request = json.loads(sink.getvalue())
    assert [tool["function"]["name"] for tool in request["tools"]] == ["t"]
    # the two nameless declarations share a name (None) and, as pi keeps the later of two
    # tools of one name, are one tool: left out once
    assert report.losses["openai:tool-unnamed"].count == 1
