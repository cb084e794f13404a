"""The plugin registry: built-ins through the same hook, conflicts, failures, filtering."""

from __future__ import annotations

import types

import piconv
import pytest
from piconv import Converter, PluginError, hookimpl
from piconv.registry import build_registry


def _plugin(name: str, *formats: str) -> types.ModuleType:
    module = types.ModuleType(name)

    @hookimpl
    def register_converters(register):  # type: ignore[no-untyped-def]
        for fmt in formats:
            register(Converter(name=fmt, summary=f"{fmt} test", extension=".x", media_type="text/plain", write=lambda *a: None))

    module.register_converters = register_converters  # type: ignore[attr-defined]
    return module


def test_built_in_formats_are_registered_like_plugins() -> None:
    registry = build_registry()
    names = {c.name for c in registry.formats()}
    assert {"ir", "pi"} <= names
    ir_format = registry.get("ir")
    assert ir_format.plugin == "piconv.irformat" and ir_format.distribution == "piconv"
    assert any(p.name == "piconv.irformat" and "register_converters" in p.hooks for p in registry.plugins)


def test_a_third_party_plugin_adds_a_format() -> None:
    registry = build_registry(extra_plugins=(_plugin("fancy_plugin", "fancy"),))
    assert registry.get("FANCY").summary == "fancy test"


def test_duplicate_format_names_are_an_error_naming_both_plugins() -> None:
    with pytest.raises(PluginError, match=r"'ir'.*piconv\.irformat.*dupe_plugin"):
        build_registry(extra_plugins=(_plugin("dupe_plugin", "ir"),))


def test_unknown_format_lists_the_known_ones() -> None:
    with pytest.raises(PluginError, match=r"known: .*ir"):
        build_registry().get("nope")


def test_a_misspelled_hook_is_caught() -> None:
    module = types.ModuleType("typo_plugin")

    @hookimpl
    def register_convertors(register):  # type: ignore[no-untyped-def]
        pass

    module.register_convertors = register_convertors  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="register_convertors"):
        build_registry(extra_plugins=(module,))


def test_a_failing_plugin_is_reported_and_skipped() -> None:
    module = types.ModuleType("broken_plugin")

    @hookimpl
    def register_converters(register):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    module.register_converters = register_converters  # type: ignore[attr-defined]
    registry = build_registry(extra_plugins=(module,))
    assert any("broken_plugin" in f and "boom" in f for f in registry.failures)
    assert registry.get("ir")


def test_public_api_is_declared() -> None:
    for name in piconv.__all__:
        assert getattr(piconv, name) is not None


def test_every_built_in_format_declares_everything() -> None:
    for conv in build_registry().formats():
        assert conv.name and conv.summary and conv.media_type, conv.name
        assert conv.extension.startswith("."), conv.name
        assert conv.check is not None, f"{conv.name} has no validation"
        assert conv.mapping_doc, conv.name
