"""The documents keep up with the code: every hook, option and problem code is documented."""

from __future__ import annotations

import inspect
import re

import pytest
from conftest import REPO
from piconv import hookspecs
from piconv.inputformat import Reader
from piconv.problems import PROBLEM_CODES
from piconv.registry import Archive, ArchiveStore, Converter, IndexPage, build_registry

PLUGINS_DOC = (REPO / "docs" / "plugins.md").read_text()


def _hooks() -> list[str]:
    return [name for name, fn in vars(hookspecs).items() if callable(fn) and hasattr(fn, "piconv_spec")]


def test_there_are_hooks() -> None:
    assert "register_converters" in _hooks()


@pytest.mark.parametrize("hook", _hooks())
def test_every_hook_is_documented_with_its_full_signature(hook: str) -> None:
    params = ", ".join(inspect.signature(getattr(hookspecs, hook)).parameters)
    assert f"### {hook}({params})" in PLUGINS_DOC


@pytest.mark.parametrize(
    "field", [f for f in Converter.__dataclass_fields__ if f not in ("plugin", "distribution", "version")]
)
def test_every_converter_field_is_documented(field: str) -> None:
    assert f"| `{field}` |" in PLUGINS_DOC


def _methods(protocol: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(protocol).items()
        if callable(member) and not name.startswith("_")
    }


def _call(name: str, signature: inspect.Signature) -> str:
    """``name(a, b=1)``: the parameters after ``self``, defaults as written in Python."""
    params = list(signature.parameters.values())[1:]
    shown = [p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}" for p in params]
    return f"{name}({', '.join(shown)})"


def test_every_index_page_member_is_documented_with_its_full_signature() -> None:
    section = PLUGINS_DOC.split("### Index pages", 1)[1].split("\n### ", 1)[0]
    methods = _methods(IndexPage)
    assert set(methods) == {"render", "owns"}
    for name, signature in methods.items():
        assert f"`{_call(name, signature)} -> {signature.return_annotation}`" in section
    for name, annotation in IndexPage.__annotations__.items():
        assert f"`{name}: {annotation}`" in section


@pytest.mark.parametrize("protocol", [Archive, ArchiveStore])
def test_every_archive_method_is_documented_with_its_parameters(protocol: type) -> None:
    section = PLUGINS_DOC.split("### Archive formats", 1)[1].split("\n### ", 1)[0]
    methods = _methods(protocol)
    assert methods
    for name, signature in methods.items():
        assert _call(name, signature) in section


@pytest.mark.parametrize(
    "field", [f for f in Reader.__dataclass_fields__ if f not in ("plugin", "distribution", "version")]
)
def test_every_reader_field_is_documented(field: str) -> None:
    table = PLUGINS_DOC.split("## The Reader declaration", 1)[1].split("\n## ", 1)[0]
    assert f"| `{field}` |" in table


def test_every_reader_has_its_mapping_document() -> None:
    readers = build_registry(third_party=False).readers(third_party=False)
    assert {"pi", "asf"} <= {r.name for r in readers}
    for reader in readers:
        assert (REPO / reader.mapping_doc).is_file(), f"{reader.name}: {reader.mapping_doc} missing"


def test_every_problem_code_is_documented() -> None:
    text = (REPO / "docs" / "formats" / "pi.md").read_text() + (
        REPO / "docs" / "formats" / "pi-reader.md"
    ).read_text()
    missing = [code for code in PROBLEM_CODES if f"`{code}`" not in text]
    assert not missing, missing


def test_every_format_has_its_mapping_document_and_options_documented() -> None:
    for conv in build_registry().formats():
        if conv.distribution != "piconv":
            continue
        doc = REPO / conv.mapping_doc
        assert doc.is_file(), f"{conv.name}: {conv.mapping_doc} missing"
        text = doc.read_text()
        for option in conv.options:
            assert option.flag in text, f"{conv.name}: {option.flag} not in {conv.mapping_doc}"


def test_readme_set_up_is_two_commands_and_the_second_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text()
    setup = readme.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", setup, re.S)
    assert len(commands) == 2
    # a virtual environment first: recent Debian and Ubuntu refuse pip outside one
    assert commands[0].startswith(
        "python3 -m venv .venv && . .venv/bin/activate && pip install . && piconv examples/"
    )
    assert commands[1] == (REPO / ".ci" / "test-command").read_text().strip()
    assert ".ci/test-command" in (REPO / ".ci" / "run").read_text()
