"""Finding secrets in many strings at once.

The strings of a session are joined into one text, one string per line block (up to
three texts, by the width of their characters: :func:`_groups`), so each rule runs where
it can match rather than once per string:

- an RE2 set (google-re2) of gitleaks' keywords, ignoring case, over the text names the
  keywords it holds; of the rules keyed by those, an RE2 set of their expressions over the
  text (``^`` and ``$`` at each line) names those that match anywhere. Only these run, on
  the lines (or strings) holding one of their keywords, as gitleaks runs a rule only on a
  fragment holding its keyword: on a real session, one or two rules of 221;
- a semi-generic rule is tried at each place where one of its keywords starts, and a
  line is run only where it matches at one of them;
- piconv's own rules (:mod:`piconv.redaction.rules`) are a handful of expressions, each run
  once over the text.

A finding is a span of one string: ``(string index, start, end, rule, secret)``.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from typing import Any, NamedTuple

import re2

from .gitleaks import Rule, RuleSet


class Span(NamedTuple):
    string: int
    start: int
    end: int
    rule: str
    secret: str


class ExtraRule:
    """A rule of piconv's own: ``find(text)`` yields ``(start, end)`` of each secret in
    ``text``: the joined strings (a span crossing from one string into the next is
    dropped), or with ``per_string`` each string alone."""

    id: str = ""
    per_string: bool = False

    def find(self, text: str) -> Iterable[tuple[int, int]]:  # pragma: no cover - interface
        raise NotImplementedError


SHORT_KEYWORD = 2
"""Keywords this short (gitleaks' ``s.``, ``sk``, ``ey``) occur on nearly every line of
prose or code: they are looked for per string, and their rules run on whole strings."""


def _is_multiline(pattern: str) -> bool:
    """A rule whose match may span lines (a private-key block) runs on whole strings."""
    return any(token in pattern for token in ("[\\s\\S", "(?s", "\\r", "[\\r\\n]"))


_NO_PREFILTER = re.compile(r"\\[Az]|\(\?[a-z]*-[a-z]*m")
"""What keeps an expression out of the prefilter: ``\\A`` and ``\\z`` mark the text's
ends, not a line's, and a flag group may turn multi-line mode off."""


def _prefilter_pattern(rule: Rule) -> str | None:
    """The rule's expression as the prefilter runs it over the whole text, ``^`` and
    ``$`` at each line: a unit (a line or a string, bounded by newlines) where the rule
    matches is a place of the text where this matches, so a rule this finds nowhere
    finds nothing in any unit. ``None``: the rule is always run (a keyword-led rule runs
    on Python's ``re``, whose reading differs from RE2's)."""
    if rule.keyword_led or _NO_PREFILTER.search(rule.pattern):
        return None
    return "(?m)" + rule.pattern


def _compiled_set(patterns: Sequence[str], *, any_case: bool = False) -> Any:
    """An RE2 set of ``patterns``, matched unanchored (``any_case``: ignoring case). Once
    compiled, an RE2 set does not give up on a long text (it has no slower engine to fall
    back on, so its automaton keeps going however much it has to rebuild): an empty
    answer means no match."""
    options = re2.Options()
    if any_case:
        options.case_sensitive = False
    found = re2.Set.SearchSet(options)
    for pattern in patterns:
        found.Add(pattern.encode("utf-8", "surrogatepass"))
    found.Compile()
    return found


class _Text:
    """Strings of a session joined into one text, one string per line block: the text;
    its bytes as gitleaks' keywords are looked for (``keys``: every character not ASCII a
    "?", one byte for one, so offsets stay the text's; gitleaks' keywords are ASCII and
    lower-case, and are looked for ignoring ASCII's case); its UTF-8 bytes, as the
    prefilter reads them; where each string starts; which strings (``indices``) they are.

    An ASCII text's bytes are its characters and its keys at once (see :func:`_groups`)."""

    __slots__ = ("_lowered", "data", "indices", "keys", "starts", "strings", "text")

    def __init__(self, strings: Sequence[str], indices: list[int]) -> None:
        self.indices = indices
        self.strings = [strings[i] for i in indices]
        self.text = text = "\n".join(self.strings)
        self.starts = list(accumulate((len(s) + 1 for s in self.strings[:-1]), initial=0))
        if text.isascii():
            self.data = self.keys = text.encode("ascii")
        else:
            self.keys = text.encode("ascii", "replace")
            self.data = text.encode("utf-8", "replace")
        self._lowered: bytes | None = None

    @property
    def lowered(self) -> bytes:
        """``keys`` lower-cased (ASCII's lower case), made when first asked for: what a
        short keyword, looked for at each string, is found in."""
        if self._lowered is None:
            self._lowered = self.keys.lower()
        return self._lowered


def _groups(strings: Sequence[str]) -> tuple[list[int], list[int], list[int]]:
    """The strings (their indices) by the texts they are joined into: the ASCII ones;
    the others whose characters all lie in the first 65,536; the rest. Python stores a
    text with the room its widest character needs: one emoji in a one-character string
    would make the whole joined text four bytes a character, and every copy and every
    pass over it slower (by a few milliseconds on a real session). Only the speed depends
    on the groups: a string in any of them is scanned alike."""
    ascii_strings: list[int] = []
    narrow: list[int] = []
    wide: list[int] = []
    for index, string in enumerate(strings):
        if string.isascii():
            ascii_strings.append(index)
        elif len(string.encode("utf-16-le", "surrogatepass")) > 2 * len(string):
            # a character beyond U+FFFF is four bytes in UTF-16, any other two; a narrow
            # string encodes by a plain copy, several times faster than searching it
            wide.append(index)
        else:
            narrow.append(index)
    return ascii_strings, narrow, wide


class _Plan:
    """The rules a scan runs, the same on each text: the candidates; the keyword-led
    ones; the others by keyword; the long keywords, with an expression finding any of
    them and an RE2 set naming those a line holds."""

    __slots__ = ("by_keyword", "candidates", "led", "line_set", "long", "search")

    def __init__(self) -> None:
        self.candidates: list[Rule] = []
        self.led: list[Rule] = []
        self.by_keyword: dict[str, list[Rule]] = {}
        self.long: list[str] = []
        self.search: Any = None
        self.line_set: Any = None


class Scanner:
    def __init__(self, rules: RuleSet, extra: Sequence[ExtraRule], disabled: frozenset[str]) -> None:
        self.rules = rules
        self.extra = [r for r in extra if r.id not in disabled]
        self.disabled = disabled
        self._keywords = sorted(rules.by_keyword)
        self._all_keywords = _compiled_set([re.escape(k) for k in self._keywords], any_case=True)
        """Which keywords the text holds anywhere: only their rules can find anything."""
        self._line_set: Callable[[Sequence[str]], Any] = _compiled_set
        """Makes the RE2 set naming the keywords a line holds (for each scan, of the
        keywords whose rules are run); tests replace it to check the fallback."""
        self._multiline: dict[str, bool] = {}
        self._led: dict[str, bool] = {}

    def _is_led(self, rule: Rule) -> bool:
        """Keyword-led rules (gitleaks' semi-generic ones) are tried only where a keyword
        starts, not at every position of their lines."""
        led = self._led.get(rule.id)
        if led is None:
            led = self._led[rule.id] = rule.keyword_led and all(len(k) > SHORT_KEYWORD for k in rule.keywords)
        return led

    def _is_multiline(self, rule: Rule) -> bool:
        multiline = self._multiline.get(rule.id)
        if multiline is None:
            multiline = self._multiline[rule.id] = _is_multiline(rule.pattern)
        return multiline

    def scan(self, strings: Sequence[str]) -> list[Span]:
        texts = [_Text(strings, group) for group in _groups(strings) if group]
        plan = self._plan(texts)
        spans = []
        for text in texts:
            found: list[tuple[int, int, str, str]] = []  # absolute start, end, rule, secret
            self._gitleaks(text, plan, found)
            for rule in self.extra:
                if rule.per_string:
                    for base, string in zip(text.starts, text.strings, strict=True):
                        for start, end in rule.find(string):
                            found.append((base + start, base + end, rule.id, string[start:end]))
                    continue
                for start, end in rule.find(text.text):
                    found.append((start, end, rule.id, text.text[start:end]))
            starts, indices = text.starts, text.indices
            for start, end, rule_id, secret in found:
                local = bisect_right(starts, start) - 1
                base = starts[local]
                index = indices[local]
                if end - base > len(strings[index]):
                    continue  # crosses into the next string: the join made it up
                spans.append(Span(index, start - base, end - base, rule_id, secret))
        return spans

    def _candidates(self, texts: Sequence[_Text]) -> list[Rule]:
        """The rules worth running: those holding a keyword the texts hold (or none), and,
        of these, those whose expression matches somewhere in them (one RE2 set over
        each text, as RE2 reads each unit: UTF-8, a lone surrogate as "?")."""
        rules = self.rules
        disabled = self.disabled
        keywords = self._keywords
        held: set[int] = set()
        for text in texts:
            held.update(self._all_keywords.Match(text.keys) or ())
        wanted: dict[str, Rule] = {}
        for index in sorted(held):
            for rule in rules.by_keyword[keywords[index]]:
                if rule.id not in disabled:
                    wanted[rule.id] = rule
        for rule in rules.unconditional:
            if rule.id not in disabled:
                wanted[rule.id] = rule
        checked = [(rule, p) for rule in wanted.values() if (p := _prefilter_pattern(rule)) is not None]
        if checked:
            matched: set[int] = set()
            try:
                found = _compiled_set([p for _, p in checked])
                for text in texts:
                    matched.update(found.Match(text.data) or ())
            except re2.error:  # an expression RE2 refuses: each is run, and apply tells
                matched = set(range(len(checked)))
            for index, (rule, _) in enumerate(checked):
                if index not in matched:
                    del wanted[rule.id]
        return list(wanted.values())

    def _plan(self, texts: Sequence[_Text]) -> _Plan:
        """The rules to run on every text, by how they run."""
        candidates = self._candidates(texts)
        plan = _Plan()
        plan.candidates = candidates
        plan.led = sorted((r for r in candidates if self._is_led(r)), key=lambda r: r.id)
        by_keyword = plan.by_keyword
        for rule in candidates:
            if not self._is_led(rule):
                for keyword in rule.keywords:
                    by_keyword.setdefault(keyword, []).append(rule)
        plan.long = sorted(k for k in by_keyword if len(k) > SHORT_KEYWORD)
        if plan.long:
            plan.search = _alternation(tuple(plan.long)).search
            plan.line_set = self._line_set(["(?i)" + re.escape(k) for k in plan.long])
        return plan

    def _gitleaks(self, text: _Text, plan: _Plan, found: list[tuple[int, int, str, str]]) -> None:
        """Each rule over the lines (or, for a rule spanning lines or keyed by a short
        keyword, the strings) that hold one of its keywords, as gitleaks runs a rule only
        on a fragment holding its keyword."""
        rules = self.rules
        strings, starts, keys = text.strings, text.starts, text.keys
        by_keyword = plan.by_keyword
        units: dict[str, set[tuple[int, int]]] = {}

        def string_span(pos: int) -> tuple[int, int]:
            i = bisect_right(starts, pos) - 1
            return starts[i], starts[i] + len(strings[i])

        for keyword, wanted in by_keyword.items():
            if len(keyword) > SHORT_KEYWORD:
                continue
            needle = keyword.encode()
            lowered = text.lowered
            pos = lowered.find(needle)
            while pos >= 0:
                span = string_span(pos)
                for rule in wanted:
                    units.setdefault(rule.id, set()).add(span)
                pos = lowered.find(needle, span[1])
        long = plan.long
        if long:
            search, line_set = plan.search, plan.line_set
            size = len(keys)
            pos = 0
            # a line holding a keyword: which keywords it holds, then on to the next line
            while (m := search(keys, pos)) is not None:
                pos = keys.find(b"\n", m.end())
                if pos < 0:
                    pos = size
                line = (keys.rfind(b"\n", 0, m.start()) + 1, pos)
                held = keys[line[0] : line[1]]
                present = line_set.Match(held)
                if present is None:  # RE2 gave up (its memory bound): each keyword looked for
                    held = held.lower()
                    present = [i for i, k in enumerate(long) if k.encode() in held]
                for index in present:
                    for rule in by_keyword[long[index]]:
                        units.setdefault(rule.id, set()).add(
                            string_span(line[0]) if self._is_multiline(rule) else line
                        )
        for rule in rules.unconditional:
            if rule in plan.candidates:
                units[rule.id] = {(starts[i], starts[i] + len(s)) for i, s in enumerate(strings)}
        for rule_id in sorted(units):
            rule = rules.rules[rule_id]
            for a, b in sorted(units[rule_id]):
                for f in rules.apply(rule, text.text, a, b):
                    found.append((f.start, f.end, f.rule, f.secret))
        for rule in plan.led:
            self._keyword_led(rule, text.text, keys, found)

    def _keyword_led(
        self, rule: Rule, text: str, keys: bytes, found: list[tuple[int, int, str, str]]
    ) -> None:
        """A keyword-led rule on each line holding one of its keywords, tried where each
        of them starts; a line where the rule matches at none of these places is passed
        over without more ado (most lines: a keyword alone is no secret)."""
        rules = self.rules
        try:
            rule.regex  # noqa: B018 (compiles it)
        except (re.error, re2.error):
            for _ in rules.apply(rule, text, 0, 0):  # records it as skipped
                pass
            return
        match = rule.rest.match
        size = len(keys)
        # by line, the places where the rule matches: the others can find nothing, so
        # the rule run on the line with these alone finds what it finds with them all
        lines: list[tuple[int, list[int]]] = []
        end = -1
        places: list[int] | None = None
        for place in _places(keys, rule.keywords):
            if place >= end:
                end = keys.find(b"\n", place)
                if end < 0:
                    end = size
                places = None
            if match(text, place, end) is not None:
                if places is None:
                    places = []
                    lines.append((end, places))
                places.append(place)
        for end, places in lines:
            start = keys.rfind(b"\n", 0, places[0]) + 1
            for f in rules.apply(rule, text, start, end, places):
                found.append((f.start, f.end, f.rule, f.secret))


@functools.lru_cache(maxsize=32)
def _alternation(keywords: tuple[str, ...]) -> Any:
    """An RE2 expression matching any of ``keywords``, the longest first, in either case
    (kept for a while: a scan runs it on each of its texts, and a directory run's worker
    meets the same rules session after session; bounded, since each holds an automaton)."""
    ordered = sorted(keywords, key=lambda k: (-len(k), k))
    return re2.compile(("(?i)" + "|".join(map(re.escape, ordered))).encode())


def _places(keys: bytes, keywords: Sequence[str]) -> list[int]:
    """Where each of ``keywords`` starts in ``keys``, in either case, in order; two may overlap, as
    "secret" and "token" do in "secretoken", so each search starts one past the last
    place."""
    search = _alternation(tuple(keywords)).search
    places = []
    pos = 0
    while (m := search(keys, pos)) is not None:
        pos = m.start()
        places.append(pos)
        pos += 1
    return places
