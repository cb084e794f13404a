"""Finding secrets in many strings at once.

The strings of a session are joined into one text, one string per line block, so each
rule runs where it can match rather than once per string:

- a keyword trie over each lower-cased string finds which gitleaks keywords it holds;
  a rule then runs only on the strings holding one of its keywords, as gitleaks runs a
  rule only on a fragment (a file) holding its keyword;
- piconv's own rules (:mod:`piconv.redaction.rules`) are a handful of expressions, each run
  once over the text.

A finding is a span of one string: ``(string index, start, end, rule, secret)``.
"""

from __future__ import annotations

import re
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


def keyword_trie(words: Iterable[str]) -> re.Pattern[str]:
    """One expression matching any of ``words`` (longest first at each place), built as
    a trie so each position of the text costs a few character tests, not one per word."""
    root: dict[str, dict] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        ends = "" in node
        alternatives = [re.escape(c) + build(sub) for c, sub in sorted(node.items()) if c]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        if ends:
            body = f"(?:{body})?" if len(alternatives) > 1 or len(alternatives[0]) > 1 else body + "?"
        return body

    return re.compile(build(root))


class Scanner:
    def __init__(self, rules: RuleSet, extra: Sequence[ExtraRule], disabled: frozenset[str]) -> None:
        self.rules = rules
        self.extra = [r for r in extra if r.id not in disabled]
        self.disabled = disabled
        self._trie = keyword_trie(rules.by_keyword) if rules.by_keyword else None

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

    def _gitleaks(self, text: str, strings: Sequence[str], starts: list[int], found: list[tuple[int, int, str, str]]) -> None:
        """Each rule over each string holding one of its keywords (gitleaks' fragment is
        a file; here it is one string of the session)."""
        rules = self.rules
        units: dict[str, list[int]] = {}
        if self._trie is not None:
            findall = self._trie.findall
            by_keyword = rules.by_keyword
            disabled = self.disabled
            for index, string in enumerate(strings):
                seen: set[str] = set()
                for keyword in set(findall(string.lower())):
                    for rule in by_keyword.get(keyword, ()):
                        if rule.id not in seen and rule.id not in disabled:
                            seen.add(rule.id)
                            units.setdefault(rule.id, []).append(index)
        for rule in rules.unconditional:
            if rule.id not in self.disabled:
                units[rule.id] = list(range(len(strings)))
        for rule_id in sorted(units):
            rule = rules.rules[rule_id]
            for index in units[rule_id]:
                start = starts[index]
                for f in rules.apply(rule, text, start, start + len(strings[index])):
                    found.append((f.start, f.end, f.rule, f.secret))
