"""The separately installable example plugin: installed for real, found through its entry point."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

PLUGIN = REPO / "plugins" / "piconv-example"
EXAMPLE = REPO / "examples" / "basic.jsonl"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(PLUGIN),
        ],
        check=True,
    )
    return target


def run(args: list[str], path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")]),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "piconv", *args], capture_output=True, text=True, env=environ
    )


def test_installed_plugin_is_listed(plugin_path: Path) -> None:
    formats = run(["--list-formats"], plugin_path)
    assert formats.returncode == 0, formats.stderr
    assert "turns" in formats.stdout and "piconv-turns" in formats.stdout
    plugins = run(["--list-plugins"], plugin_path)
    assert (
        "turns  piconv-turns 0.1.0  [plugin]  hooks: register_converters, register_readers" in plugins.stdout
    )
    assert "chat-request" in formats.stdout.split("output formats")[0]  # listed among the input formats


def test_installed_plugin_converts(plugin_path: Path) -> None:
    result = run([str(EXAMPLE), "--to", "turns", "--quiet"], plugin_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) > 10
    assert any("  user " in line for line in lines) and any("  assistant " in line for line in lines)


def test_installed_plugin_reads_a_chat_request(plugin_path: Path, tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(
        '{"model": "gpt-4o", "messages": [{"role": "system", "content": "Be brief."}, '
        '{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4."}]}'
    )
    result = run([str(request), "--to", "markdown", "--quiet"], plugin_path)  # detected: no --from
    assert result.returncode == 0, result.stderr
    assert "What is 2+2?" in result.stdout and "4." in result.stdout
    inspect = run(["inspect", str(request)], plugin_path)
    assert inspect.returncode == 0 and "format:         chat-request" in inspect.stdout
    # without the plugin no reader recognises the file: one line naming it and the readers tried
    missing = run([str(request), "--to", "markdown"], plugin_path, PICONV_LOAD_PLUGINS="")
    assert missing.returncode == 3
    assert missing.stderr.strip() == (
        f"piconv: error: {request}: no reader recognises this input (readers tried: asf, pi); name one with --from"
    )


def test_load_plugins_variable_restricts_third_party_plugins(plugin_path: Path) -> None:
    assert "turns" not in run(["--list-formats"], plugin_path, PICONV_LOAD_PLUGINS="").stdout
    assert "turns" in run(["--list-formats"], plugin_path, PICONV_LOAD_PLUGINS="turns").stdout


def test_a_plugin_that_fails_to_import_is_reported_and_skipped(tmp_path: Path) -> None:
    dist = tmp_path / "broken_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[piconv]\nbroken = no_such_module_anywhere\n")
    result = run(["--list-formats"], tmp_path)
    assert result.returncode == 0
    assert "plugin 'broken' (broken-plugin) failed to load" in result.stderr
    assert "ir" in result.stdout


def test_the_plugins_own_test_suite_passes(plugin_path: Path) -> None:
    tests = PLUGIN / "tests"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(PLUGIN),
            str(tests),
        ],
        capture_output=True,
        text=True,
        cwd=PLUGIN,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")]),
        },
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
