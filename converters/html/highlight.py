"""Syntax highlighting with Pygments, capped by size.

Pygments is pure Python: about 1.1 MB/s on TypeScript and JavaScript, 1.3 MB/s on Markdown,
2.8 MB/s on shell (its per-token work dominates, so no regular-expression trick makes it
much faster), plus about 40 ms to import it and build the first lexer. Highlighting all
of the corpus's largest session (865,000 characters of code) would take 0.8 s, many
times the rest of the page. Two caps keep it bounded: a block larger than
``block_limit`` characters is shown as plain escaped text, and once ``budget``
characters have been highlighted in one page the rest is plain too (a block that does
not fit is skipped, a later smaller one may still fit). Both are options of the
converter. The default block limit is above every code block in the corpus (the
largest, a 1,604-line TypeScript file, is 51,266 characters); the default budget
covers the whole of every corpus session up to 100,000 characters of code and the first
100,000 of the larger ones, which keeps the page within its speed goal (about 0.1 s of
Pygments at most).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .escape import text as esc

DEFAULT_BLOCK_LIMIT = 64_000
DEFAULT_BUDGET = 100_000

# Extension → Pygments lexer alias. A fixed table, because Pygments' own filename lookup
# scans every lexer's patterns (slow) and would pick exotic lexers for common names.
_EXT_LANG = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "jsx",
    "ts": "typescript",
    "tsx": "tsx",
    "mts": "typescript",
    "cts": "typescript",
    "json": "json",
    "jsonl": "json",
    "rs": "rust",
    "go": "go",
    "java": "java",
    "kt": "kotlin",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "hpp": "cpp",
    "cs": "csharp",
    "rb": "ruby",
    "php": "php",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "fish": "fish",
    "ps1": "powershell",
    "sql": "sql",
    "html": "html",
    "htm": "html",
    "xml": "xml",
    "svg": "xml",
    "css": "css",
    "scss": "scss",
    "less": "less",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "ini": "ini",
    "md": "markdown",
    "markdown": "markdown",
    "swift": "swift",
    "lua": "lua",
    "pl": "perl",
    "r": "r",
    "scala": "scala",
    "hs": "haskell",
    "ex": "elixir",
    "exs": "elixir",
    "erl": "erlang",
    "dart": "dart",
    "vue": "html",
    "svelte": "html",
    "tf": "terraform",
    "nix": "nix",
    "zig": "zig",
    "diff": "diff",
    "patch": "diff",
    "dockerfile": "docker",
    "makefile": "make",
    "mk": "make",
    "cmake": "cmake",
    "proto": "protobuf",
    "graphql": "graphql",
    "gql": "graphql",
}


def language_for_path(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1].lower()
    if name in ("dockerfile", "makefile"):
        return _EXT_LANG[name]
    if "." not in name:
        return None
    return _EXT_LANG.get(name.rsplit(".", 1)[-1])


# Names a fenced code block or a caller may use, mapped to a Pygments lexer alias. Only
# these are looked up: Pygments' lookup of an unknown name scans every lexer (about
# 0.1 s each), which a session full of made-up fence names would turn into minutes.
_NAMES = {v: v for v in _EXT_LANG.values()} | {
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "node": "javascript",
    "ts": "typescript",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "console": "console",
    "shell-session": "console",
    "yml": "yaml",
    "rs": "rust",
    "golang": "go",
    "c++": "cpp",
    "cxx": "cpp",
    "rb": "ruby",
    "jsonc": "json",
    "json5": "json",
    "text": "",
    "txt": "",
    "plain": "",
    "plaintext": "",
    "patch": "diff",
    "udiff": "diff",
    "docker": "docker",
    "tf": "terraform",
    "hcl": "terraform",
}


@functools.cache
def _lexer(alias: str) -> Any:
    from pygments.lexers import get_lexer_by_name  # lazy: Pygments is a heavy import
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(alias, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@functools.cache
def _css_class(ttype: Any) -> str:
    from pygments.token import STANDARD_TYPES

    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def _format(tokens: Any) -> str:
    """Tokens → ``<span class="…">``: the class names of Pygments' HtmlFormatter, written
    by a loop about twice as fast as HtmlFormatter (no per-line bookkeeping)."""
    parts: list[str] = []
    add = parts.append
    for ttype, value in tokens:
        cls = _css_class(ttype)
        if "&" in value:
            value = value.replace("&", "&amp;")
        if "<" in value:
            value = value.replace("<", "&lt;")
        if ">" in value:
            value = value.replace(">", "&gt;")
        if '"' in value:
            value = value.replace('"', "&quot;")
        add(f'<span class="{cls}">{value}</span>' if cls else value)
    return "".join(parts)


class Highlighter:
    """Highlights code blocks for one page, spending at most ``budget`` characters."""

    def __init__(self, block_limit: int = DEFAULT_BLOCK_LIMIT, budget: int = DEFAULT_BUDGET) -> None:
        self.block_limit = block_limit
        self.remaining = budget
        self.used = False
        # Escapes a block that stays plain; the page's Ctx replaces it with one that
        # renders a huge block in pieces, straight into the output.
        self.defer_plain: Callable[[str], str] = esc

    def code(self, source: str, lang: str | None) -> str:
        """Escaped HTML for ``source`` (content of a ``<code>``), highlighted when the
        language is known and the caps allow."""
        if not lang or not source or len(source) > self.block_limit or len(source) > self.remaining:
            return self.defer_plain(source)
        alias = _NAMES.get(lang.lower())  # looked up before the cache: hostile names stay out of it
        lexer = _lexer(alias) if alias else None
        if lexer is None:
            return self.defer_plain(source)
        self.remaining -= len(source)
        self.used = True
        return _format(lexer.get_tokens(source))


@functools.lru_cache(maxsize=1)
def stylesheet() -> str:
    """Token colours for light and dark schemes, scoped to ``.hl``."""
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="default").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai").get_style_defs(".hl")
    # The styles' own background rules would fight the page theme; keep token colours only.
    light = "\n".join(
        line
        for line in light.splitlines()
        if not line.startswith((".hl {", "pre {", "td.", "span.linenos", ".hl .hll"))
    )
    dark = "\n".join(
        line
        for line in dark.splitlines()
        if not line.startswith((".hl {", "pre {", "td.", "span.linenos", ".hl .hll"))
    )
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"
