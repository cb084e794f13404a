"""Finding secrets in many strings at once.

The strings of a session are joined into one text, one string per line block, so each
rule runs where it can match rather than once per string:

- one RE2 pass (google-re2) over the lower-cased text finds the lines holding one of
  gitleaks' keywords, and an RE2 set of the keywords tells which each of them holds; a
  rule then runs only on the lines holding one of its keywords, as gitleaks runs a rule
  only on a fragment holding its keyword;
- piconv's own rules (:mod:`piconv.redaction.rules`) are a handful of expressions, each run
  once over the text.

A finding is a span of one string: ``(string index, start, end, rule, secret)``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import re2

from .gitleaks import RuleSet


@dataclass(frozen=True, slots=True)
class Span:
    string: int
    start: int
    end: int
    rule: str
    secret: str


class ExtraRule:
    """A rule of piconv's own: ``find(text)`` yields ``(start, end)`` of each secret in
    ``text`` (the joined strings; a span never crosses a newline it did not match)."""

    id: str = ""

    def find(self, text: str) -> Iterable[tuple[int, int]]:  # pragma: no cover - interface
        raise NotImplementedError


SHORT_KEYWORD = 2
"""Keywords this short (gitleaks' ``s.``, ``sk``, ``ey``) occur on nearly every line of
prose or code: they are looked for per string, and their rules run on whole strings."""


def _is_multiline(pattern: str) -> bool:
    """A rule whose match may span lines (a private-key block) runs on whole strings."""
    return any(token in pattern for token in ("[\\s\\S", "(?s", "\\r", "[\\r\\n]"))


def _keyword_search(keywords: Sequence[str]) -> tuple[Any, Any]:
    """An expression matching any of ``keywords`` (lower-case ASCII), and an RE2 set
    naming the keywords a line holds (by index in ``keywords``). Both run in time linear
    in the text, however many keywords."""
    alternation = "|".join(map(re.escape, sorted(keywords, key=lambda k: (-len(k), k))))
    present = re2.Set.SearchSet(re2.Options())
    for keyword in keywords:
        present.Add(re.escape(keyword).encode())
    present.Compile()
    return re2.compile(alternation.encode()), present


class Scanner:
    def __init__(self, rules: RuleSet, extra: Sequence[ExtraRule], disabled: frozenset[str]) -> None:
        self.rules = rules
        self.extra = [r for r in extra if r.id not in disabled]
        self.disabled = disabled
        self._short = [k for k in rules.by_keyword if len(k) <= SHORT_KEYWORD]
        self._long = [k for k in rules.by_keyword if len(k) > SHORT_KEYWORD]
        self._any, self._present = _keyword_search(self._long) if self._long else (None, None)
        self._multiline = {r.id for r in rules.rules.values() if _is_multiline(r.pattern)}
        self._led: set[str] = set()
        """Keyword-led rules (gitleaks' semi-generic ones): tried only where a keyword
        starts, not at every position of its lines."""
        for rule in rules.rules.values():
            if rule.keyword_led and all(len(k) > SHORT_KEYWORD for k in rule.keywords):
                self._led.add(rule.id)

    def scan(self, strings: Sequence[str]) -> list[Span]:
        text = "\n".join(strings)
        starts = [0] * len(strings)
        offset = 0
        for i, s in enumerate(strings):
            starts[i] = offset
            offset += len(s) + 1
        found: list[tuple[int, int, str, str]] = []  # absolute start, end, rule, secret
        self._gitleaks(text, strings, starts, found)
        for rule in self.extra:
            for start, end in rule.find(text):
                found.append((start, end, rule.id, text[start:end]))
        spans = []
        for start, end, rule_id, secret in found:
            index = bisect_right(starts, start) - 1
            base = starts[index]
            if end - base > len(strings[index]):
                continue  # crosses into the next string: the join made it up
            spans.append(Span(index, start - base, end - base, rule_id, secret))
        return spans

    def _gitleaks(
        self, text: str, strings: Sequence[str], starts: list[int], found: list[tuple[int, int, str, str]]
    ) -> None:
        """Each rule over the lines (or, for a rule spanning lines or keyed by a short
        keyword, the strings) that hold one of its keywords, as gitleaks runs a rule only
        on a fragment holding its keyword."""
        rules = self.rules
        disabled = self.disabled
        units: dict[str, set[tuple[int, int]]] = {}
        # gitleaks' keywords are ASCII: every other character becomes "?", one byte for one,
        # so offsets stay those of the text, and lower-casing is ASCII's.
        lowered = text.encode("ascii", "replace").lower()

        def string_span(pos: int) -> tuple[int, int]:
            i = bisect_right(starts, pos) - 1
            return starts[i], starts[i] + len(strings[i])

        for keyword in self._short:
            wanted = [r for r in rules.by_keyword[keyword] if r.id not in disabled]
            needle = keyword.encode()
            pos = lowered.find(needle)
            while wanted and pos >= 0:
                span = string_span(pos)
                for rule in wanted:
                    units.setdefault(rule.id, set()).add(span)
                pos = lowered.find(needle, span[1])
        anchored: dict[
            str, dict[tuple[int, int], list[int]]
        ] = {}  # keyword-led rules: line -> keyword places
        if self._any is not None:
            by_keyword = rules.by_keyword
            multiline = self._multiline
            led = self._led
            long = self._long
            search = self._any.search
            size = len(lowered)
            pos = 0
            # a line holding a keyword: which keywords it holds, then on to the next line
            while (m := search(lowered, pos)) is not None:
                pos = lowered.find(b"\n", m.end())
                if pos < 0:
                    pos = size
                line = (lowered.rfind(b"\n", 0, m.start()) + 1, pos)
                held = lowered[line[0] : line[1]]
                present = self._present.Match(held)
                if present is None:  # RE2 gave up (its memory bound): each keyword looked for
                    present = [i for i, k in enumerate(long) if k.encode() in held]
                for index in present:
                    keyword = long[index]
                    for rule in by_keyword[keyword]:
                        if rule.id in disabled:
                            continue
                        if rule.id in led:
                            places = anchored.setdefault(rule.id, {}).setdefault(line, [])
                            needle = keyword.encode()
                            at = lowered.find(needle, line[0], line[1])
                            while at >= 0:
                                places.append(at)
                                at = lowered.find(needle, at + 1, line[1])
                        else:
                            units.setdefault(rule.id, set()).add(
                                string_span(line[0]) if rule.id in multiline else line
                            )
        for rule in rules.unconditional:
            if rule.id not in disabled:
                units[rule.id] = {(starts[i], starts[i] + len(s)) for i, s in enumerate(strings)}
        for rule_id in sorted(units):
            rule = rules.rules[rule_id]
            lines = anchored.pop(rule_id, None)
            if lines:  # a keyword-led rule also keyed by a short keyword: lines run whole
                units[rule_id].update(lines)
            for a, b in sorted(units[rule_id]):
                for f in rules.apply(rule, text, a, b):
                    found.append((f.start, f.end, f.rule, f.secret))
        for rule_id in sorted(anchored):
            rule = rules.rules[rule_id]
            for (a, b), places in sorted(anchored[rule_id].items()):
                for f in rules.apply(rule, text, a, b, sorted(set(places))):
                    found.append((f.start, f.end, f.rule, f.secret))
