"""The plugin registry: built-ins through the same hook, conflicts, failures, filtering."""

from __future__ import annotations

import types

import piconv
import pytest
from piconv import Converter, PluginError, hookimpl
from piconv.hookspecs import PLUGIN_API_VERSION
from piconv.registry import PluginWarning, build_registry


def _plugin(name: str, *formats: str) -> types.ModuleType:
    module = types.ModuleType(name)

    @hookimpl
    def register_converters(register):  # type: ignore[no-untyped-def]
        for fmt in formats:
            register(
                Converter(
                    name=fmt,
                    summary=f"{fmt} test",
                    extension=".x",
                    media_type="text/plain",
                    write=lambda *a: None,
                )
            )

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


def test_a_clashing_format_is_reported_and_skipped_and_the_plugin_keeps_its_others() -> None:
    with pytest.warns(PluginWarning, match=r"'ir'.*piconv\.irformat.*dupe_plugin.*skipped"):
        registry = build_registry(extra_plugins=(_plugin("dupe_plugin", "ir", "fresh"),))
    assert registry.get("ir").plugin == "piconv.irformat"
    assert registry.get("fresh").plugin == "dupe_plugin"
    assert len(registry.failures) == 1


def test_unknown_format_lists_the_known_ones() -> None:
    with pytest.raises(PluginError, match=r"known: .*ir"):
        build_registry().get("nope")


def test_a_misspelled_hook_is_reported_and_the_plugin_skipped() -> None:
    module = types.ModuleType("typo_plugin")

    @hookimpl
    def register_convertors(register):  # type: ignore[no-untyped-def]
        pass

    module.register_convertors = register_convertors  # type: ignore[attr-defined]
    with pytest.warns(PluginWarning, match="register_convertors is not a piconv hook"):
        registry = build_registry(extra_plugins=(module,))
    assert "typo_plugin" not in {p.name for p in registry.plugins}
    assert registry.get("asf")


def test_a_hook_taking_arguments_its_spec_lacks_is_reported_and_skipped() -> None:
    module = types.ModuleType("wrong_args")

    @hookimpl
    def register_converters(register, colour):  # type: ignore[no-untyped-def]
        raise AssertionError("never called")

    module.register_converters = register_converters  # type: ignore[attr-defined]
    with pytest.warns(PluginWarning, match="wrong_args.*colour"):
        registry = build_registry(extra_plugins=(module,))
    assert registry.get("markdown")


def test_a_failing_plugin_is_reported_and_skipped() -> None:
    module = types.ModuleType("broken_plugin")

    @hookimpl
    def register_converters(register):  # type: ignore[no-untyped-def]
        register(
            Converter(
                name="half", summary="s", extension=".x", media_type="text/plain", write=lambda *a: None
            )
        )
        raise RuntimeError("boom")

    module.register_converters = register_converters  # type: ignore[attr-defined]
    with pytest.warns(PluginWarning, match="broken_plugin.*boom"):
        registry = build_registry(extra_plugins=(module,))
    assert any("broken_plugin" in f and "boom" in f for f in registry.failures)
    assert registry.get("ir") and registry.get("openai")


def test_a_plugin_needing_a_newer_interface_is_skipped() -> None:
    module = _plugin("future_plugin", "future")
    module.PICONV_PLUGIN_API = PLUGIN_API_VERSION + 1  # type: ignore[attr-defined]
    with pytest.warns(PluginWarning, match="needs plugin interface"):
        registry = build_registry(extra_plugins=(module,))
    with pytest.raises(PluginError, match="unknown format 'future'"):
        registry.get("future")
    assert piconv.PLUGIN_API_VERSION == PLUGIN_API_VERSION


def test_hooks_are_dispatched_by_pluggy() -> None:
    """pluggy's own options work: ``specname`` maps another function name onto the hook,
    and ``tryfirst`` runs a plugin registered first before one registered later (pluggy
    otherwise calls the last registered first)."""
    order: list[str] = []

    def plugin(name: str, **opts: object) -> types.ModuleType:
        module = types.ModuleType(name)

        @hookimpl(specname="register_converters", **opts)  # type: ignore[call-overload]
        def add_formats(register):  # type: ignore[no-untyped-def]
            order.append(name)
            register(
                Converter(
                    name=name, summary="s", extension=".x", media_type="text/plain", write=lambda *a: None
                )
            )

        module.add_formats = add_formats  # type: ignore[attr-defined]
        return module

    registry = build_registry(extra_plugins=(plugin("eager", tryfirst=True), plugin("plain")))
    assert registry.get("eager").plugin == "eager" and registry.get("plain").plugin == "plain"
    assert order == ["eager", "plain"]


def test_a_wrapper_sees_every_registration() -> None:
    """pluggy's new-style wrappers (generators) are registered as they are and wrap the call."""
    module = types.ModuleType("wrapping_plugin")
    seen: list[str] = []

    @hookimpl(wrapper=True)
    def register_converters(register):  # type: ignore[no-untyped-def]
        seen.append("before")
        result = yield
        seen.append("after")
        return result

    module.register_converters = register_converters  # type: ignore[attr-defined]
    registry = build_registry(extra_plugins=(module,), third_party=False)
    assert seen == ["before", "after"] and registry.get("asf")
    assert "wrapping_plugin" in {p.name for p in registry.plugins}


def test_public_api_is_declared() -> None:
    for name in piconv.__all__:
        assert getattr(piconv, name) is not None


def test_every_built_in_format_declares_everything() -> None:
    for conv in build_registry().formats():
        assert conv.name and conv.summary and conv.media_type, conv.name
        assert conv.extension.startswith("."), conv.name
        assert conv.check is not None, f"{conv.name} has no validation"
        assert conv.mapping_doc, conv.name
