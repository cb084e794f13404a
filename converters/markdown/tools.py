"""How a tool call's arguments and its result look in Markdown.

The common coding tools (read, write, edit, bash, grep, find, ls) get a readable form:
the path or pattern on the call line, commands and file contents in fenced blocks with a
language taken from the file extension, edits as a diff. Any other tool, or a known tool
called with arguments of an unexpected shape, shows its arguments as JSON, so nothing the
model sent is hidden.
"""

from __future__ import annotations

import json
import os
from typing import Any

import orjson

from .escape import code_span, fenced

LANGUAGES = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "jsx",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "json": "json",
    "jsonl": "json",
    "md": "markdown",
    "markdown": "markdown",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "fish": "fish",
    "ps1": "powershell",
    "rs": "rust",
    "go": "go",
    "java": "java",
    "kt": "kotlin",
    "swift": "swift",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "hpp": "cpp",
    "cs": "csharp",
    "rb": "ruby",
    "php": "php",
    "html": "html",
    "htm": "html",
    "css": "css",
    "scss": "scss",
    "xml": "xml",
    "svg": "xml",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "ini": "ini",
    "sql": "sql",
    "lua": "lua",
    "r": "r",
    "dart": "dart",
    "scala": "scala",
    "ex": "elixir",
    "exs": "elixir",
    "erl": "erlang",
    "hs": "haskell",
    "ml": "ocaml",
    "vue": "vue",
    "svelte": "svelte",
    "dockerfile": "dockerfile",
    "makefile": "makefile",
    "diff": "diff",
    "patch": "diff",
    "txt": "text",
    "csv": "csv",
    "tex": "latex",
    "zig": "zig",
    "nix": "nix",
    "tf": "hcl",
    "proto": "protobuf",
    "graphql": "graphql",
}

# Arguments each known tool is drawn from; anything beyond them adds a JSON block.
KNOWN_ARGS = {
    "bash": {"command", "timeout", "cwd"},
    "read": {"path", "offset", "limit"},
    "write": {"path", "content"},
    "edit": {"path", "edits", "oldText", "newText"},
    "grep": {"pattern", "path", "glob", "limit", "-i", "ignoreCase", "literal", "context"},
    "find": {"pattern", "path", "limit"},
    "ls": {"path", "limit"},
}


def language_for_path(path: object) -> str:
    if not isinstance(path, str):
        return ""
    name = os.path.basename(path).lower()
    if name in ("dockerfile", "makefile"):
        return LANGUAGES[name]
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    return LANGUAGES.get(ext, "")


def result_language(tool: str | None, arguments: Any) -> str:
    """The info string of a result block: the read file's language, else plain text."""
    if tool == "read" and isinstance(arguments, dict):
        return language_for_path(arguments.get("path")) or "text"
    return "text"


def pretty_json(value: Any) -> str:
    """Indented JSON in the source's key order. orjson (a core dependency) is ten times
    faster than the standard library with ``indent``; values it refuses (integers beyond
    64 bits) go through ``json``."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)


_json = pretty_json


def _diff(old: str, new: str) -> str:
    """Every line of ``old`` prefixed with ``-``, then every line of ``new`` with ``+``."""
    return "-" + old.replace("\n", "\n-") + "\n+" + new.replace("\n", "\n+")


def describe_call(name: str | None, arguments: Any) -> tuple[str, list[str]]:
    """A short description for the call line (Markdown, already escaped) and the blocks
    that follow it."""
    args = arguments if isinstance(arguments, dict) else None
    tool = name or ""
    if args is None or tool not in KNOWN_ARGS or not args.keys() <= KNOWN_ARGS[tool]:
        blocks = [] if arguments in (None, {}) else [fenced(_json(arguments), "json")]
        return "", blocks
    str_path = args.get("path")
    if not isinstance(str_path, str):
        str_path = None
    desc: list[str] = []
    blocks: list[str] = []
    if str_path is not None:
        desc.append(code_span(str_path, 200))
    if tool == "bash" and isinstance(args.get("command"), str):
        blocks.append(fenced(args["command"], "bash"))
        if args.get("timeout") is not None:
            desc.append(f"timeout {code_span(str(args['timeout']))}")
        if isinstance(args.get("cwd"), str):
            desc.append(f"in {code_span(args['cwd'], 200)}")
    elif tool == "read":
        if args.get("offset") is not None:
            desc.append(f"from line {code_span(str(args['offset']))}")
        if args.get("limit") is not None:
            desc.append(f"limit {code_span(str(args['limit']))}")
    elif tool == "write" and isinstance(args.get("content"), str):
        blocks.append(fenced(args["content"], language_for_path(str_path)))
    elif tool == "edit":
        edits = args.get("edits")
        pairs: list[tuple[Any, Any]] = []
        if isinstance(edits, list):
            pairs = [
                (e.get("oldText"), e.get("newText")) if isinstance(e, dict) else (None, None) for e in edits
            ]
        elif "oldText" in args or "newText" in args:
            pairs = [(args.get("oldText"), args.get("newText"))]
        if all(isinstance(o, str) and isinstance(n, str) for o, n in pairs) and pairs:
            blocks.append(fenced("\n".join(_diff(o, n) for o, n in pairs), "diff"))
        else:
            blocks.append(fenced(_json(arguments), "json"))
    elif tool in ("grep", "find"):
        if isinstance(args.get("pattern"), str):
            desc.insert(0, code_span(args["pattern"], 200))
            if str_path is not None:
                desc[1] = f"in {desc[1]}"
        for key in ("glob", "limit", "-i", "ignoreCase", "literal", "context"):
            if key in args:
                desc.append(f"{key} {code_span(_json(args[key]))}")
    elif tool == "ls" and args.get("limit") is not None:
        desc.append(f"limit {code_span(str(args['limit']))}")
    if not desc and not blocks and args:
        blocks.append(fenced(_json(arguments), "json"))
    return " ".join(desc), blocks


def summary_target(name: str | None, arguments: Any) -> str:
    """A few words naming what the call acted on, for the result's ``<summary>``."""
    if isinstance(arguments, dict):
        for key in ("path", "command", "pattern"):
            value = arguments.get(key)
            if isinstance(value, str) and value:
                return value
    return ""
