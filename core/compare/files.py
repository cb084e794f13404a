"""Which files a conversation touched, as far as its tool calls and shell commands say.

A file tool names its file in an argument (pi's ``read``, ``write``, ``edit``, ``ls``,
``find``, ``grep``; other harnesses' ``file_path``); a shell command names files among its
words, and writes the targets of its redirections. A command is split as a POSIX shell
splits words (:mod:`shlex`), not run or expanded: a word with ``$``, a glob or a quote left
open names nothing here, and a word is taken as a path only when it looks like one (it
holds a ``/``, or ends in an extension such as ``.py``). What this cannot read, it leaves
out.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

READS = frozenset({"read", "ls", "find", "grep", "glob", "view", "cat", "list_directory", "search"})
WRITES = frozenset(
    {"write", "edit", "multiedit", "multi_edit", "create", "str_replace", "apply_patch", "notebookedit"}
)
PATH_ARGUMENTS = ("path", "file_path", "filePath", "file", "notebook_path", "filename")

# Shell commands whose file words are written (all of them, or the last one).
_SHELL_WRITES = frozenset({"rm", "rmdir", "touch", "mkdir", "truncate", "tee", "chmod", "chown", "shred"})
_SHELL_WRITES_LAST = frozenset({"cp", "mv", "ln", "install", "rsync"})
_SHELL_SKIP = frozenset({"cd", "pushd", "echo", "printf", "export", "set", "unset", "alias", "curl", "wget"})
_PREFIXES = frozenset({"sudo", "time", "command", "exec", "nohup", "env", "xargs", "nice"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;", "\n"})
_REDIRECT_OUT = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_WORD = re.compile(r"[\w.~/@%+,:=-]+")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
MAX_COMMAND = 20_000
"""Longer commands (a heredoc of a whole file) are read up to here only."""


def tool_files(name: str, arguments: Any) -> list[tuple[str, bool, bool]]:
    """``(path, read, written)`` for each file a tool call names: a file tool's path
    arguments, a shell tool's command (:func:`shell_files`)."""
    if not isinstance(arguments, Mapping):
        return []
    tool = name.lower()
    command = arguments.get("command") if tool in ("bash", "shell", "sh", "exec", "run") else None
    if isinstance(command, str):
        return shell_files(command)
    found = []
    for key in PATH_ARGUMENTS:
        value = arguments.get(key)
        for path in value if isinstance(value, list) else (value,):
            if isinstance(path, str) and path.strip():
                found.append((path.strip(), tool in READS, tool in WRITES))
    return found


def shell_files(command: str) -> list[tuple[str, bool, bool]]:
    """``(path, read, written)`` for each file word of a shell command (see the module)."""
    try:
        lexer = shlex.shlex(command[:MAX_COMMAND], posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = ""
        words = list(lexer)
    except ValueError:  # a quote left open: nothing can be read with certainty
        return []
    found: list[tuple[str, bool, bool]] = []
    for argv, outputs, inputs in _simple_commands(words):
        found.extend((path, False, True) for path in outputs if _is_path(path))
        found.extend((path, True, False) for path in inputs if _is_path(path))
        found.extend(_command_files(argv))
    return found


def _simple_commands(words: list[str]) -> Iterable[tuple[list[str], list[str], list[str]]]:
    """Each simple command's words, its redirections' targets out and in."""
    argv: list[str] = []
    outputs: list[str] = []
    inputs: list[str] = []
    redirect: str | None = None
    for word in words:
        if redirect is not None:
            (outputs if redirect == ">" else inputs).append(word)
            redirect = None
            continue
        if word in _REDIRECT_OUT:
            redirect = ">"
        elif word in ("<", "<<<"):
            redirect = "<"
        elif word == "<<":
            redirect = "<<"  # a heredoc's delimiter: no file
        elif word in _SEPARATORS or (word and set(word) <= set(";&|()<>")):
            if argv or outputs or inputs:
                yield argv, outputs, [w for w in inputs if w]
            argv, outputs, inputs = [], [], []
        else:
            argv.append(word)
    if argv or outputs or inputs:
        yield argv, outputs, inputs


def _command_files(argv: list[str]) -> list[tuple[str, bool, bool]]:
    while argv and (argv[0] in _PREFIXES or _ASSIGNMENT.match(argv[0])):
        argv = argv[1:]
    if not argv or argv[0] in _SHELL_SKIP:
        return []
    name = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    if name in ("sed", "awk", "perl") and not any(w in ("-e", "-f") for w in args):
        script = next((k for k, w in enumerate(args) if not w.startswith("-")), None)
        if script is not None:  # the program, not a file
            args = args[:script] + args[script + 1 :]
    words = [w for w in args if _is_path(w)]
    if name == "sed" and any(w.startswith("-i") or w == "--in-place" for w in args):
        return [(w, True, True) for w in words]
    if name in _SHELL_WRITES:
        return [(w, False, True) for w in words]
    if name in _SHELL_WRITES_LAST and words:
        return [(w, True, False) for w in words[:-1]] + [(words[-1], False, True)]
    return [(w, True, False) for w in words]


def _is_path(word: str) -> bool:
    if not word or word.startswith("-") or "://" in word or word in (".", "..", "/dev/null"):
        return False
    if word.startswith(("/dev/", "/proc/")) or _WORD.fullmatch(word) is None or "=" in word:
        return False
    return ("/" in word and word.strip("/") != "") or _EXTENSION.search(word) is not None


def relative(path: str, cwd: str | None) -> str:
    """``path`` below ``cwd`` as a relative path (``./`` left off); any other as it is."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        path = path[len(cwd.rstrip("/")) + 1 :]
    while path.startswith("./"):
        path = path[2:]
    return path or "."
