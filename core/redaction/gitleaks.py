"""gitleaks' rule set, read from the ``gitleaks.toml`` shipped beside this module and
applied as gitleaks applies it: a rule runs only on text holding one of its keywords
(lower-cased), its regular expression finds the match, the secret is the rule's
``secretGroup`` or else the first non-empty group, a rule with an ``entropy`` keeps only
secrets whose Shannon entropy is above it, and the global and rule allowlists (regexes
on the secret, the match or the line; stopwords in the secret) let a finding go.

Path-only rules (a file name, not text) and the commit and path parts of allowlists do
not apply to a session's strings and are left out. gitleaks' expressions are written for
Go's regexp, which is RE2: a rule runs on RE2 itself (google-re2), as written, in time
linear in the text (``\\w``, ``\\s`` and ``\\b`` are ASCII's there, as in gitleaks). The
semi-generic rules (:attr:`Rule.keyword_led`) run on Python's ``re``, tried only where
a keyword starts: RE2 would build a large automaton for each of them in every process.
For ``re`` and for the allowlists the few constructs Python spells differently are
translated (:func:`to_python`). A rule that does not compile is left out and counted
(:attr:`RuleSet.skipped`).

Rules (and allowlists) are compiled the first time they are needed, so a session that
mentions no Slack token never pays for compiling Slack's expressions.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import re2

from ..records import Mutable

SOURCE = "gitleaks.toml"
"""gitleaks' ``config/gitleaks.toml``, shipped unchanged with gitleaks' MIT licence
(``GITLEAKS-LICENSE`` beside it)."""
COMPILED = "gitleaks.json"
"""``gitleaks.toml`` as JSON (``scripts/gen_gitleaks_rules.py``; a test holds the two
equal): read in a millisecond where parsing the TOML takes thirty."""
SOURCE_VERSION = "v8.30.0-27-gb58d3f10"
"""The gitleaks release (``git describe``) whose ``config/gitleaks.toml`` is shipped."""

_POSIX = {
    "[:alnum:]": "a-zA-Z0-9",
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:lower:]": "a-z",
    "[:upper:]": "A-Z",
    "[:space:]": r"\s",
    "[:xdigit:]": "0-9A-Fa-f",
    "[:word:]": r"\w",
}
_LAZY_LEAD = re.compile(r"^((?:\(\?[imsx]+\))?)(\[[^\]]+\])\{0,(\d+)\}\?(.*)$", re.S)
"""A pattern opening with a lazy bounded run of one character class."""
_LATE_GLOBAL_FLAG = re.compile(r"(?<!^)\(\?([imsx]+)\)")


def to_python(pattern: str) -> str:
    """An RE2 pattern as Python's ``re`` reads it: ``\\z`` is ``\\Z``, POSIX classes are
    spelt out, and a flag group such as ``(?i)`` found after the start (RE2 applies it
    from there on; Python refuses it) applies to the whole pattern, a little broader."""
    out = pattern.replace(r"\z", r"\Z")
    for posix, plain in _POSIX.items():
        out = out.replace(posix, plain)
    late = _LATE_GLOBAL_FLAG.findall(out)
    if late:
        out = f"(?{''.join(sorted(set(''.join(late))))})" + _LATE_GLOBAL_FLAG.sub("", out)
    return out


def shannon_entropy(data: str) -> float:
    """Bits per character, as gitleaks computes it."""
    if not data:
        return 0.0
    counts: dict[str, int] = {}
    for char in data:
        counts[char] = counts.get(char, 0) + 1
    size = len(data)
    return -sum(c / size * math.log2(c / size) for c in counts.values())


class Allowlist(Mutable):
    __slots__ = ("_regexes", "all_of", "patterns", "stopwords", "target")
    _fields = ("target", "patterns", "stopwords", "all_of")

    def __init__(
        self, target: str, patterns: tuple[str, ...], stopwords: tuple[str, ...], all_of: bool
    ) -> None:
        self.target = target  # "secret", "match" or "line"
        self.patterns = patterns
        self.stopwords = stopwords
        self.all_of = all_of  # condition = "AND"
        self._regexes: tuple[re.Pattern[str], ...] | None = None

    @property
    def regexes(self) -> tuple[re.Pattern[str], ...]:
        """Compiled on first use (most allowlists are never consulted in a session)."""
        if self._regexes is None:
            compiled = []
            for pattern in self.patterns:
                try:
                    compiled.append(re.compile(pattern))
                except re.error:
                    continue
            self._regexes = tuple(compiled)
        return self._regexes

    def allows(self, secret: str, match: str, line: str) -> bool:
        target = match if self.target == "match" else line if self.target == "line" else secret
        by_regex = bool(target) and any(r.search(target) for r in self.regexes)
        lowered = secret.lower()
        by_word = bool(secret) and any(w in lowered for w in self.stopwords)
        if self.all_of:
            checks = ([by_regex] if self.patterns else []) + ([by_word] if self.stopwords else [])
            return bool(checks) and all(checks)
        return by_regex or by_word


Match = Any
"""A match of ``re`` or of ``re2`` (the same methods)."""


class Rule(Mutable):
    __slots__ = (
        "_allowlists",
        "_led",
        "_regex",
        "_split",
        "description",
        "entropy",
        "id",
        "keywords",
        "pattern",
        "raw_allowlists",
        "secret_group",
    )
    _fields = ("id", "description", "pattern", "keywords", "entropy", "secret_group", "raw_allowlists")

    def __init__(
        self,
        id: str,
        description: str,
        pattern: str,
        keywords: tuple[str, ...],
        entropy: float,
        secret_group: int,
        raw_allowlists: tuple[dict[str, Any], ...],
    ) -> None:
        self.id = id
        self.description = description
        self.pattern = pattern  # as gitleaks writes it (RE2)
        self.keywords = keywords
        self.entropy = entropy
        self.secret_group = secret_group
        self.raw_allowlists = raw_allowlists
        self._allowlists: tuple[Allowlist, ...] | None = None
        self._regex: Any = None
        self._split: tuple[re.Pattern[str], re.Pattern[str], int] | None = None
        self._led: bool | None = None

    @property
    def allowlists(self) -> tuple[Allowlist, ...]:
        """Read on first use: most rules never find anything to let go."""
        if self._allowlists is None:
            self._allowlists = tuple(a for a in map(_allowlist, self.raw_allowlists) if a is not None)
        return self._allowlists

    @property
    def regex(self) -> Any:
        """The compiled expression: RE2's; for a :attr:`keyword_led` rule ``re``'s, without
        its lazy lead, which :meth:`finditer` matches by hand (raises ``re2.error`` or
        ``re.error``)."""
        if self._regex is None:
            if not self.keyword_led:
                self._regex = re2.compile(self.pattern)
                return self._regex
            pattern = to_python(self.pattern)
            lead = _LAZY_LEAD.match(pattern)
            assert lead is not None
            flags, chars, most, rest = lead.groups()
            self._split = (re.compile(flags + rest), re.compile(flags + chars), int(most))
            self._regex = self._split[0]
        return self._regex

    @property
    def rest(self) -> re.Pattern[str]:
        """A :attr:`keyword_led` rule's expression without its lazy lead (compiled with
        :attr:`regex`): a match starts where a keyword does."""
        self.regex  # noqa: B018 (compiles it)
        assert self._split is not None
        return self._split[0]

    @property
    def keyword_led(self) -> bool:
        """The pattern is a lazy run and then an alternation of the rule's keywords (how
        gitleaks writes its semi-generic rules): a match can only start where a keyword
        does, so :meth:`finditer` may be given those places (``anchors``)."""
        if self._led is None:
            self._led = bool(self.keywords) and _LAZY_LEAD.match(to_python(self.pattern)) is not None
        return self._led

    def finditer(
        self, text: str, pos: int, endpos: int, anchors: Iterable[int] | None = None
    ) -> Iterator[tuple[int, Match, int]]:
        """The matches of the rule in ``text[pos:endpos]``, each as ``(start, match,
        shift)``: the match's offsets plus ``shift`` are the text's, and ``start`` is
        where it begins.

        An RE2 rule runs on ``text[pos:endpos]`` alone (its ``$`` is the end of that).
        A :attr:`keyword_led` rule opens with a lazy run such as ``[\\w.-]{0,50}?``: it
        is run without it, and each match widened to the left over at most that many
        such characters afterwards: the same matches, without trying the run at every
        position of the text (15 times faster on a real session; tested equal). With
        ``anchors`` (the places, in order, where one of the rule's keywords starts) the
        rest of the pattern is tried there alone."""
        regex = self.regex
        if self._split is None:
            unit = text[pos:endpos]
            try:
                matches = list(regex.finditer(unit))
            except UnicodeEncodeError:
                # a lone surrogate (JSON allows one) has no UTF-8 form: "?" stands for it
                matches = list(regex.finditer(unit.encode("utf-8", "replace").decode("utf-8")))
            for m in matches:
                yield m.start() + pos, m, pos
            return
        rest, char, most = self._split
        floor = pos
        if anchors is not None:
            found: Iterable[re.Match[str] | None] = (
                rest.match(text, a, endpos) for a in anchors if a >= floor
            )
        else:
            found = rest.finditer(text, pos, endpos)
        for m in found:
            if m is None or m.start() < floor:
                continue
            start = m.start()
            low = max(floor, start - most)
            while start > low and char.match(text, start - 1):
                start -= 1
            floor = m.end()
            yield start, m, 0


class Finding(NamedTuple):
    rule: str
    start: int
    end: int
    secret: str


def _allowlist(raw: dict[str, Any]) -> Allowlist | None:
    patterns = tuple(to_python(p) for p in raw.get("regexes", ()))
    stopwords = tuple(w.lower() for w in raw.get("stopwords", ()))
    if not patterns and not stopwords:
        return None  # paths or commits alone: nothing a string can match
    return Allowlist(raw.get("regexTarget", "secret"), patterns, stopwords, raw.get("condition") == "AND")


class RuleSet:
    """Every text rule of ``gitleaks.toml``, with the keyword index gitleaks uses."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.rules: dict[str, Rule] = {}
        self.skipped: list[str] = []
        """Rules whose expression does not compile (found on first use; none in the
        shipped file, as a test checks)."""
        self.unconditional: list[Rule] = []  # rules without keywords run on every string
        self.by_keyword: dict[str, list[Rule]] = {}
        glob = data.get("allowlist") or {}
        self.global_allowlists = tuple(a for a in (_allowlist(glob),) if a is not None)
        for raw in data.get("rules", ()):
            pattern = raw.get("regex")
            if not pattern:
                continue  # a path-only rule
            rule = Rule(
                id=raw["id"],
                description=raw.get("description", ""),
                pattern=pattern,
                keywords=tuple(k.lower() for k in raw.get("keywords", ())),
                entropy=float(raw.get("entropy", 0.0)),
                secret_group=int(raw.get("secretGroup", 0)),
                raw_allowlists=tuple(raw.get("allowlists", ())),
            )
            self.rules[rule.id] = rule
            if not rule.keywords:
                self.unconditional.append(rule)
            for keyword in rule.keywords:
                self.by_keyword.setdefault(keyword, []).append(rule)

    def apply(
        self,
        rule: Rule,
        text: str,
        pos: int = 0,
        endpos: int | None = None,
        anchors: Iterable[int] | None = None,
    ) -> Iterator[Finding]:
        """The findings of ``rule`` in ``text[pos:endpos]`` (positions in ``text``);
        ``anchors`` as :meth:`Rule.finditer` takes them."""
        end_of_unit = len(text) if endpos is None else endpos
        try:
            rule.regex  # noqa: B018 (compiles it)
        except (re.error, re2.error):
            self.skipped.append(rule.id)
            self.unconditional = [r for r in self.unconditional if r is not rule]
            for rules in self.by_keyword.values():
                if rule in rules:
                    rules.remove(rule)
            return
        for begin, m, shift in rule.finditer(text, pos, end_of_unit, anchors):
            whole = text[begin : m.end() + shift]
            matched = whole.strip("\n")
            start = begin + (len(whole) - len(whole.lstrip("\n")))
            end = start + len(matched)
            secret, s_start = matched, start
            groups = m.re.groups
            if groups:
                group = rule.secret_group if 0 < rule.secret_group <= groups else 0
                if not group:
                    group = next((i for i in range(1, groups + 1) if m.group(i)), 0)
                if group and m.group(group):
                    s_start = m.start(group) + shift
                    secret = text[s_start : m.end(group) + shift]
            if rule.entropy and shannon_entropy(secret) <= rule.entropy:
                continue
            line = _line_at(text, start, end, pos, end_of_unit)
            # the rule's own allowlists first: they let most findings go (a generic key that
            # is a word), and the global one's dozen expressions are then never compiled
            if any(a.allows(secret, matched, line) for a in (*rule.allowlists, *self.global_allowlists)):
                continue
            yield Finding(rule.id, s_start, s_start + len(secret), secret)


def _line_at(text: str, start: int, end: int, pos: int, endpos: int) -> str:
    first = max(text.rfind("\n", pos, start) + 1, pos)
    last = text.find("\n", end, endpos)
    return text[first : endpos if last < 0 else last]


_loaded: RuleSet | None = None


def load() -> RuleSet:
    """The shipped rule set, read once per process."""
    global _loaded
    if _loaded is None:
        from ..jsonio import loads

        # a plain file beside this module (importlib.resources would cost its imports)
        with open(os.path.join(os.path.dirname(__file__), COMPILED), "rb") as fh:
            _loaded = RuleSet(loads(fh.read()))
    return _loaded
