"""piconv's own redaction rules, beside gitleaks' rule set: what a key scanner made for
source code does not look for in a session.

- ``value`` / ``env`` / ``user``: literal strings (``--redact-value``, the values of
  secret-looking environment variables with ``--redact-env``, the user name), also in
  their JSON-escaped form, since a session often quotes JSON inside a string.
- ``pattern``: ``--redact-pattern REGEX`` (the first group when it has one, else the match).
- ``url-password``: the password of ``scheme://user:password@host``.
- ``env-assignment``: a high-entropy value in a ``NAME=value`` line, as ``env``,
  ``printenv`` or ``cat .env`` print them.
- ``home``: the home directory, shown as ``~`` (not a placeholder).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .gitleaks import shannon_entropy
from .scan import ExtraRule

GENERIC_USERS = frozenset(
    {
        "root",
        "user",
        "users",
        "admin",
        "ubuntu",
        "debian",
        "runner",
        "node",
        "dev",
        "home",
        "app",
        "pi",
        "guest",
        "test",
    }
)
"""User names too common to replace wherever they appear as a word (the home directory
still becomes ``~``)."""

SECRET_ENV_NAME = (
    r"(?i)(?:key|token|secret|passw(?:or)?d|pwd|credential|auth|session|cookie|private|signature|dsn)"
)
"""Names of environment variables whose values ``--redact-env`` redacts (an expression,
compiled only by a run that asks for them)."""
NOT_SECRET_ENV = frozenset({"PWD", "OLDPWD", "XAUTHORITY", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "KRB5CCNAME"})
"""Names that match :data:`SECRET_ENV_NAME` but hold a directory or a socket's path."""


_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x20)} | {
    ord('"'): '\\"',
    ord("\\"): "\\\\",
    ord("\b"): "\\b",
    ord("\f"): "\\f",
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
}
"""What a JSON writer escapes in a string, as ``json.dumps(..., ensure_ascii=False)``
does: the quote, the backslash and the control characters, five of them by letter."""


def escaped_forms(value: str) -> list[str]:
    """``value`` and its JSON-escaped spellings where they differ: a quote, a backslash or
    a control character escaped (as every JSON writer does), and every character past
    ASCII as ``\\uXXXX`` too (as Python's ``json.dumps`` does by default)."""
    inner = value.translate(_JSON_ESCAPES)
    forms = dict.fromkeys((value, inner))
    if not inner.isascii() or "\x7f" in inner:
        forms[_ascii_json(inner)] = None
    return list(forms)


def _ascii_json(text: str) -> str:
    """``text`` with each character past ASCII as JSON's ``\\uXXXX`` (a pair of them past
    the first 65,536), lower-case hex, as ``json.dumps`` writes it."""
    out = []
    for char in text:
        code = ord(char)
        if code < 0x7F:  # json.dumps escapes DEL too
            out.append(char)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
    return "".join(out)


_WORDISH = re.compile(r"[\w-]")


class LiteralRule(ExtraRule):
    """Literal values. With more than one, each is found where it starts even inside
    another's match ("Codename ACME" and "ACME Falcon Ridge" in "Codename ACME Falcon
    Ridge"), so the overlap is redacted whole; a value holding a line break is looked for
    in each string alone (the text joins strings with line breaks)."""

    def __init__(self, rule_id: str, values: Iterable[str], *, words: bool = False) -> None:
        self.id = rule_id
        forms = sorted({f for v in values if v for f in escaped_forms(v)}, key=lambda v: (-len(v), v))
        self._words = words
        self._overlapping = len(forms) > 1
        self.per_string = any("\n" in f for f in forms)
        self._regex = re.compile("|".join(map(re.escape, forms))) if forms else None

    def find(self, text: str) -> Iterator[tuple[int, int]]:
        if self._regex is None:
            return
        search, pos = self._regex.search, 0
        while (m := search(text, pos)) is not None:
            start, end = m.span()
            pos = start + 1 if self._overlapping else end
            before = start > 0 and _WORDISH.match(text, start - 1) is not None
            if self._words and (before or _WORDISH.match(text, end) is not None):
                continue  # part of a longer word: "alice" in "malice"
            yield start, end


class PatternRule(ExtraRule):
    """``--redact-pattern``, run on each string alone: on the joined text a match could
    begin in one string and run into the next, and hide the real one there."""

    per_string = True

    def __init__(self, rule_id: str, pattern: re.Pattern[str]) -> None:
        self.id = rule_id
        self._regex = pattern

    def find(self, text: str) -> Iterator[tuple[int, int]]:
        group = 1 if self._regex.groups else 0
        for m in self._regex.finditer(text):
            if m.end(group) > m.start(group) >= 0:
                yield m.span(group)


class UrlPasswordRule(ExtraRule):
    id = "url-password"
    _regex = re.compile(r"://[^\s:/@'\"`<>]{1,128}:([^\s@/'\"`<>]{1,256})@[\w.-]")

    def find(self, text: str) -> Iterator[tuple[int, int]]:
        for m in self._regex.finditer(text):
            value = m.group(1)
            if value.startswith(("$", "{", "<", "*")) or value.lower() in (
                "password",
                "pass",
                "pw",
                "secret",
            ):
                continue  # a placeholder in documentation, not a password
            yield m.span(1)


class EnvAssignmentRule(ExtraRule):
    """``NAME=value`` at the start of a line, the value long and random-looking: what
    ``env`` and ``.env`` files hold. Entropy above 3.5 bits per character (gitleaks'
    threshold for a generic key) and both letters and digits."""

    id = "env-assignment"
    # Led by the "=" (a literal: Python's re looks for it, rather than trying every line
    # start); the name before it is checked afterwards.
    _regex = re.compile(r"(?m)=[\"']?([A-Za-z0-9+/=_.~:-]{16,512})[\"']?[ \t]*\r?$")
    _name = re.compile(r"[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]{0,80}")

    def find(self, text: str) -> Iterator[tuple[int, int]]:
        for m in self._regex.finditer(text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            if self._name.fullmatch(text, line_start, m.start()) is None:
                continue
            value = m.group(1)
            if "://" in value or value.startswith(("/", "~", ".")):
                continue  # a URL or a path (a URL's password has its own rule)
            if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):  # ASCII only
                continue
            if shannon_entropy(value) > 3.5:
                yield m.span(1)


def encoded_path(path: str) -> str:
    """``path`` as pi names a session folder after it, without the ``--`` around it:
    ``/Users/alice/src`` → ``Users-alice-src`` (the leading separator dropped, every
    ``/``, ``\\`` and ``:`` a ``-``). Oh-My-Pi writes the same with one ``-`` before it."""
    return re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", path))


class HomeRule(ExtraRule):
    """The home directories, each replaced by ``~``: as paths, and as pi's session
    folders spell them (``--Users-alice-src--`` → ``--~-src--``; Oh-My-Pi's
    ``-Users-alice-src``), wherever such a folder's name appears."""

    id = "home"

    def __init__(self, homes: Iterable[str]) -> None:
        paths = sorted(
            {h.rstrip("/\\") for h in homes if len(h.rstrip("/\\")) > 1}, key=lambda h: (-len(h), h)
        )
        forms = sorted({f for h in paths for f in escaped_forms(h)}, key=lambda h: (-len(h), h))
        self._regex = re.compile(rf"(?:{'|'.join(map(re.escape, forms))})(?![\w.-])") if forms else None
        encoded = sorted({encoded_path(h) for h in paths}, key=lambda h: (-len(h), h))
        # After pi's "--", or Oh-My-Pi's "-" opening a name; followed by the "-" before the
        # next folder (or before pi's closing "--"): "--home-al-ice--" is not al's.
        # The names alone are searched (a pattern opening with literals is scanned fast);
        # what must stand before one is checked where one is found.
        self._encoded = re.compile(rf"(?:{'|'.join(map(re.escape, encoded))})(?=-)") if encoded else None

    def find(self, text: str) -> Iterator[tuple[int, int]]:
        if self._regex is not None:
            for m in self._regex.finditer(text):
                yield m.span()
        if self._encoded is not None:
            for m in self._encoded.finditer(text):
                if _opens_folder_name(text, m.start()):
                    yield m.span()


_BEFORE_OMP_NAME = frozenset("/\\\"'`(=:")


def _opens_folder_name(text: str, at: int) -> bool:
    """Whether an encoded folder name may begin at ``at``: after pi's ``--``, or after
    Oh-My-Pi's ``-`` at the start of the text or after a separator, a space, a quote, a
    bracket, ``=`` or ``:``."""
    if at < 1 or text[at - 1] != "-":
        return False
    if at == 1:
        return True
    before = text[at - 2]
    return before == "-" or before in _BEFORE_OMP_NAME or before.isspace()


_HOME_IN_PATH = re.compile(
    r"^(?:(/home/[^/\s]+)|(/Users/[^/\s]+)|([A-Za-z]:[\\/]Users[\\/][^\\/]+)|(/root))(?:[\\/]|$)"
)


def home_of(path: str) -> tuple[str, str | None] | None:
    """``(home directory, user name)`` when ``path`` lies in a home directory."""
    m = _HOME_IN_PATH.match(path.strip())
    if m is None:
        return None
    home = next(g for g in m.groups() if g)
    user = None if home == "/root" else re.split(r"[\\/]", home)[-1]
    return home, user
