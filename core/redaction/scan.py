"""Finding secrets in many strings at once.

The strings of a session are joined into one text, one string per line block, so each
rule runs where it can match rather than once per string:

- one Aho-Corasick pass (pyahocorasick; gitleaks does the same) over the lower-cased
  text finds where gitleaks' keywords occur; a rule then runs only on the lines holding
  one of its keywords, as gitleaks runs a rule only on a fragment holding its keyword;
- piconv's own rules (:mod:`piconv.redaction.rules`) are a handful of expressions, each run
  once over the text.

A finding is a span of one string: ``(string index, start, end, rule, secret)``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


class Scanner:
    def __init__(self, rules: RuleSet, extra: Sequence[ExtraRule], disabled: frozenset[str]) -> None:
        self.rules = rules
        self.extra = [r for r in extra if r.id not in disabled]
        self.disabled = disabled
        self._short = [k for k in rules.by_keyword if len(k) <= SHORT_KEYWORD]
        self._keywords = None
        long_keywords = [k for k in rules.by_keyword if len(k) > SHORT_KEYWORD]
        if long_keywords:
            import ahocorasick

            self._keywords = ahocorasick.Automaton()
            for keyword in long_keywords:
                self._keywords.add_word(keyword, keyword)
            self._keywords.make_automaton()
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
        # gitleaks' keywords are ASCII: every other character becomes "?", one for one, so
        # offsets stay those of the text, and lower-casing is ASCII's (a fast C loop, where
        # str.lower() of a text holding any non-ASCII character goes character by
        # character: 30 times slower on a real session).
        lowered = text.encode("ascii", "replace").lower().decode("ascii")
        size = len(text)

        def string_span(pos: int) -> tuple[int, int]:
            i = bisect_right(starts, pos) - 1
            return starts[i], starts[i] + len(strings[i])

        for keyword in self._short:
            wanted = [r for r in rules.by_keyword[keyword] if r.id not in disabled]
            pos = lowered.find(keyword)
            while wanted and pos >= 0:
                span = string_span(pos)
                for rule in wanted:
                    units.setdefault(rule.id, set()).add(span)
                pos = lowered.find(keyword, span[1])
        anchored: dict[
            str, dict[tuple[int, int], list[int]]
        ] = {}  # keyword-led rules: line -> keyword places
        if self._keywords is not None:
            by_keyword = rules.by_keyword
            multiline = self._multiline
            led = self._led
            line_end = -1
            line: tuple[int, int] = (0, 0)
            for last, keyword in self._keywords.iter(lowered):
                pos = last - len(keyword) + 1
                if pos > line_end:
                    first = text.rfind("\n", 0, pos) + 1
                    line_end = text.find("\n", pos)
                    if line_end < 0:
                        line_end = size
                    line = (first, line_end)
                for rule in by_keyword[keyword]:
                    if rule.id in disabled:
                        continue
                    if rule.id in led:
                        anchored.setdefault(rule.id, {}).setdefault(line, []).append(pos)
                    else:
                        units.setdefault(rule.id, set()).add(
                            string_span(pos) if rule.id in multiline else line
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
