"""Which highlight.js language a code block gets; the colouring itself happens in the browser.

The converter only names a block's language (``<code class="language-NAME">``) and the
page embeds highlight.js with just the grammars its blocks name (hljs.py); the page's
script colours each block as it comes near the viewport. So conversion costs nothing
per character of code, and every block of every page can be coloured.

Names come from two fixed tables: file extensions (a ``read``/``write`` tool's path) and
fence info strings. A name outside them gets no language: a session full of made-up
fence names cannot pull in grammars or reach highlight.js's own lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from .escape import text as esc

# Extension → highlight.js language (the name its grammar registers, which is also its
# file name under static/highlightjs/languages/).
_EXT_LANG = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "tsx": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "json": "json",
    "jsonl": "json",
    "rs": "rust",
    "go": "go",
    "java": "java",
    "kt": "kotlin",
    "kts": "kotlin",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "cs": "csharp",
    "rb": "ruby",
    "php": "php",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "ps1": "powershell",
    "sql": "sql",
    "html": "xml",
    "htm": "xml",
    "xml": "xml",
    "svg": "xml",
    "vue": "xml",
    "svelte": "xml",
    "css": "css",
    "scss": "scss",
    "less": "less",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "ini",
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
    "nix": "nix",
    "diff": "diff",
    "patch": "diff",
    "dockerfile": "dockerfile",
    "makefile": "makefile",
    "mk": "makefile",
    "cmake": "cmake",
    "proto": "protobuf",
    "graphql": "graphql",
    "gql": "graphql",
}

# Fence info strings (lower-cased) → language. "" means "plain on purpose".
_NAMES = {v: v for v in _EXT_LANG.values()} | {
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "jsx": "javascript",
    "node": "javascript",
    "ts": "typescript",
    "tsx": "typescript",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "console": "shell",
    "shell-session": "shell",
    "shellsession": "shell",
    "yml": "yaml",
    "rs": "rust",
    "golang": "go",
    "c++": "cpp",
    "cxx": "cpp",
    "cs": "csharp",
    "c#": "csharp",
    "rb": "ruby",
    "kt": "kotlin",
    "jsonc": "json",
    "json5": "json",
    "html": "xml",
    "htm": "xml",
    "svg": "xml",
    "vue": "xml",
    "toml": "ini",
    "md": "markdown",
    "ps1": "powershell",
    "pwsh": "powershell",
    "hs": "haskell",
    "ex": "elixir",
    "erl": "erlang",
    "pl": "perl",
    "patch": "diff",
    "udiff": "diff",
    "docker": "dockerfile",
    "make": "makefile",
    "mk": "makefile",
    "proto": "protobuf",
    "gql": "graphql",
    "text": "",
    "txt": "",
    "plain": "",
    "plaintext": "",
}

# Grammars another one hands parts of its text to (highlight.js "subLanguage"): the
# shell-session grammar colours each command as bash.
REQUIRES = {"shell": ("bash",)}

# Every grammar the tables can name: what static/highlightjs/languages/ must hold.
LANGUAGES = frozenset(v for v in _NAMES.values() if v) | {d for ds in REQUIRES.values() for d in ds}


def language_for_path(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1].lower()
    if name in ("dockerfile", "makefile"):
        return _EXT_LANG[name]
    if "." not in name:
        return None
    return _EXT_LANG.get(name.rsplit(".", 1)[-1])


def language_for_name(name: str) -> str | None:
    """The language a fence info string or a caller's name stands for, if any."""
    return _NAMES.get(name.lower()) or None


def with_requirements(languages: Collection[str]) -> list[str]:
    """``languages`` and the grammars they hand text to, sorted (the same set gives the
    same script, so the same CSP hash)."""
    out: set[str] = set()
    for lang in languages:
        out.add(lang)
        out.update(REQUIRES.get(lang, ()))
    return sorted(out)


class Highlighter:
    """Writes code blocks for one page, naming the language of each block whose
    grammar the page embeds (``allowed``); ``used`` collects the languages named."""

    def __init__(self, allowed: Collection[str] = ()) -> None:
        self.allowed = frozenset(allowed)
        self.used: set[str] = set()
        # Escapes a block's text; the page's Ctx replaces it with one that renders a huge
        # block in pieces, straight into the output.
        self.defer_plain: Callable[[str], str] = esc

    def block(self, source: str, lang: str | None, cls: str = "hl") -> str:
        """``<pre><code>`` holding ``source`` escaped, its language named when known
        and embedded (the browser colours it; without script it is plain text)."""
        name = language_for_name(lang) if lang and source else None
        body = self.defer_plain(source)
        if name is None or name not in self.allowed:
            return f'<pre class="{cls}"><code>{body}</code></pre>'
        self.used.add(name)
        return f'<pre class="{cls}"><code class="language-{name}">{body}</code></pre>'

    def inline(self, source: str, lang: str | None) -> str:
        """A short ``source`` (a collapsed block's preview) escaped, in a ``<code>``
        naming its language as :meth:`block` would name the whole block's, so the page's
        script colours the preview as it colours the block."""
        name = language_for_name(lang) if lang and source else None
        if name is None or name not in self.allowed:
            return esc(source)
        self.used.add(name)
        return f'<code class="language-{name}">{esc(source)}</code>'
