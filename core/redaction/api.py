"""Redaction's library API: the options, :func:`redact`, its result. See
docs/redaction.md.

    import piconv
    doc = piconv.load("session.jsonl")
    result = piconv.redact(doc, values=["Project Nightingale"])
    piconv.convert(result.document, "html", "share.html")

The rule set is gitleaks' (``gitleaks.toml``, read lazily) plus piconv's own rules
(:mod:`.rules`); nothing here is imported by ``piconv --help``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..records import Frozen, Mutable, frozen

if TYPE_CHECKING:
    from ..ir import Document
    from ..report import Report
    from .engine import Outcome

RULES_VERSION = 1
"""The version of piconv's own rules; with gitleaks' version it names the rule set."""
OWN_RULES = ("url-password", "env-assignment", "home", "user", "value", "pattern", "env")


@frozen
class RedactOptions(Frozen):
    """What to redact.

    - ``values``: literal strings, redacted wherever they appear (``--redact-value``).
    - ``patterns``: regular expressions (``--redact-pattern``), Python's, ``^`` and ``$``
      marking each line's start and end: the first group if the expression has one, else
      the whole match.
    - ``environ``: an environment (``os.environ`` for ``--redact-env``): the values of its
      variables whose names look secret (key, token, secret, password, ...), 8 characters
      or longer.
    - ``images``: drop image data (``--redact-images``).
    - ``disabled``: rule ids to leave out (``--redact-skip``): a gitleaks id such as
      ``generic-api-key``, or one of piconv's (``url-password``, ``env-assignment``,
      ``home``, ``user``).
    - ``homes`` / ``users``: home directories shown as ``~`` and user names replaced;
      ``None`` finds them in the session's cwd and this process's home directory.
    """

    values: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    environ: Mapping[str, str] | None = None
    images: bool = False
    disabled: tuple[str, ...] = ()
    homes: tuple[str, ...] | None = None
    users: tuple[str, ...] | None = None

    def _values(self) -> tuple[Any, ...]:
        # the environment is neither compared nor shown: its values are what is redacted
        return tuple(getattr(self, name) for name in self._names if name != "environ")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names if name != "environ")
        return f"RedactOptions({shown})"

    def env_values(self) -> list[str]:
        from .rules import NOT_SECRET_ENV, SECRET_ENV_NAME

        if not self.environ:
            return []
        return sorted(
            {
                v
                for k, v in self.environ.items()
                if re.search(SECRET_ENV_NAME, k) and k not in NOT_SECRET_ENV and len(v) >= 8
            }
        )

    def fingerprint(self) -> str:
        """A hash naming the rule set and these options (no secret can be read from it):
        a bulk run reconverts a session when it changes."""
        import hashlib  # here: the other paths of a conversion may not need OpenSSL loaded

        from .gitleaks import SOURCE_VERSION

        parts = [
            f"gitleaks {SOURCE_VERSION}",
            f"piconv-rules {RULES_VERSION}",
            *(f"value {v}" for v in sorted(self.values)),
            *(f"pattern {p}" for p in self.patterns),
            *(f"env {v}" for v in self.env_values()),
            f"images {self.images}",
            *(f"skip {d}" for d in sorted(self.disabled)),
            *(f"home {h}" for h in sorted(self.homes or ())),
            *(f"user {u}" for u in sorted(self.users or ())),
        ]
        return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def rule_set_name() -> str:
    from .gitleaks import SOURCE_VERSION

    return f"gitleaks {SOURCE_VERSION} + piconv rules {RULES_VERSION}"


def rule_ids() -> list[str]:
    """Every rule id ``disabled`` accepts: gitleaks' and piconv's."""
    from .gitleaks import load

    return sorted({*load().rules, *OWN_RULES})


class Redaction(Mutable):
    """A redacted document and what was removed."""

    __slots__ = ("document", "options", "outcome")
    _fields = ("document", "outcome", "options")

    def __init__(self, document: Document, outcome: Outcome, options: RedactOptions) -> None:
        self.document = document
        self.outcome = outcome
        self.options = options

    def to_json(self) -> dict[str, Any]:
        """Counts by rule with entry ids and lines, never a secret."""
        return {
            "rule_set": rule_set_name(),
            "fingerprint": self.options.fingerprint(),
            "replaced": sum(r.count for r in self.outcome.rules.values()),
            "rules": {
                rule: {"count": c.count, "values": len(c.values), "entries": c.entries, "lines": c.lines}
                for rule, c in sorted(self.outcome.rules.items())
            },
            "dropped": {
                what: {"count": c.count, "entries": c.entries, "lines": c.lines}
                for what, c in sorted(self.outcome.dropped.items())
            },
        }

    def add_to(self, report: Report) -> None:
        """Into a conversion's report: a loss code per rule (``redact:<rule>``, with the
        lines and entry ids) and the whole account under ``notes["redaction"]``."""
        for table in (self.outcome.rules, self.outcome.dropped):
            for rule, c in sorted(table.items()):
                code = f"redact:{rule}"
                report.add(code, None, None, count=c.count)
                item = report.losses[code]
                item.lines.extend(c.lines[: 1000 - len(item.lines)])
                for entry in c.entries[:5]:
                    if len(item.examples) < 5:
                        item.examples.append(f"entry {entry}")
        report.notes["redaction"] = self.to_json()


def redact(document: Document, options: RedactOptions | None = None, **kwargs: Any) -> Redaction:
    """``document`` with its secrets replaced (see :class:`RedactOptions`; keyword
    arguments are its fields). Never changes ``document`` itself."""
    if options is None:
        options = RedactOptions(
            **{k: tuple(v) if isinstance(v, (list, set)) else v for k, v in kwargs.items()}
        )
    elif kwargs:
        raise TypeError("give either options or keyword arguments, not both")
    from .engine import Redactor
    from .gitleaks import load
    from .rules import EnvAssignmentRule, HomeRule, LiteralRule, PatternRule, UrlPasswordRule
    from .scan import Scanner

    homes, users = _homes_and_users(document, options)
    extra = [
        LiteralRule("value", options.values),
        LiteralRule("env", options.env_values()),
        *(PatternRule("pattern", _compile(p)) for p in options.patterns),
        UrlPasswordRule(),
        EnvAssignmentRule(),
        HomeRule(homes),
        LiteralRule("user", users, words=True),
    ]
    scanner = Scanner(load(), extra, frozenset(options.disabled))
    redactor = Redactor(scanner, drop_images=options.images)
    return Redaction(redactor.run(document), redactor.outcome, options)


def name_redactor(options: RedactOptions | None = None, paths: Iterable[str] = ()) -> Callable[[str], str]:
    """What redaction leaves of a name piconv makes from a session file's path (an
    output's folders below OUTDIR, the archive's key) or of a path a session's header
    names: the home directory of the user running piconv (and ``options.homes``, and the
    home directories ``paths`` lie in) becomes ``~``, as a path and as pi spells it in a
    session folder's name (``--Users-alice-app--`` → ``--~-app--``), and each
    ``--redact-value`` and user name found there becomes ``REDACTED``. Decided before any
    session is read, so it is the same for every format and every run."""
    from .rules import GENERIC_USERS, HomeRule, LiteralRule, home_of

    options = options or RedactOptions()
    homes = list(options.homes or ())
    users = list(options.users or ())
    here = os.path.expanduser("~")
    found_homes = [home_of(p) for p in paths]
    if here != "~":
        found_homes.append(home_of(here.rstrip("/") + "/"))
    for found in found_homes:
        if found is None:
            continue
        if options.homes is None:
            homes.append(found[0])
        user = found[1]
        if options.users is None and user and user.lower() not in GENERIC_USERS and len(user) >= 3:
            users.append(user)
    rules = (
        (HomeRule(homes), "~"),
        (LiteralRule("value", options.values), "REDACTED"),
        (LiteralRule("user", users, words=True), "REDACTED"),
    )

    def redact_name(name: str) -> str:
        spans = sorted((a, b, replacement) for rule, replacement in rules for a, b in rule.find(name))
        out, at = [], 0
        for start, end, replacement in spans:
            if start < at:
                continue  # inside a span already replaced
            out += [name[at:start], replacement]
            at = end
        return "".join(out) + name[at:]

    return redact_name


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        compiled = re.compile(pattern, re.MULTILINE)  # ^ and $ at each line of the session's text
    except re.error as exc:
        raise UsageError(f"--redact-pattern {pattern!r}: not a regular expression: {exc}") from None
    if compiled.search(""):
        raise UsageError(f"--redact-pattern {pattern!r} matches the empty string")
    return compiled


def _homes_and_users(document: Document, options: RedactOptions) -> tuple[list[str], list[str]]:
    from .rules import GENERIC_USERS, home_of

    homes: list[str] = list(options.homes or ())
    users: list[str] = list(options.users or ())
    if options.homes is None or options.users is None:
        found = []
        cwd = document.session.cwd
        if isinstance(cwd, str):
            found.append(home_of(cwd))
        here = os.path.expanduser("~")
        if here != "~":
            found.append(home_of(here.rstrip("/") + "/"))
        for item in found:
            if item is None:
                continue
            home, user = item
            if options.homes is None:
                homes.append(home)
            if options.users is None and user and user.lower() not in GENERIC_USERS and len(user) >= 3:
                users.append(user)
    return homes, users


def unknown_rules(ids: Iterable[str]) -> list[str]:
    """The ids of ``ids`` that name no rule (for a clear message)."""
    known = set(rule_ids())
    return [i for i in ids if i not in known]
