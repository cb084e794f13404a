"""False positives of ``--redact`` on a corpus of real sessions: every value redacted, by
rule, with the text around it (the corpus holds no real secret, so each one is either the
home directory or user name, which are meant, or a false positive).

    python bench/redaction_fp.py ../shared/corpus/pi ../shared/corpus/pi-generated
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import piconv
from piconv.redaction import RedactOptions, gitleaks
from piconv.redaction.engine import Redactor


def main(folders: list[str]) -> None:
    by_rule: Counter[str] = Counter()
    distinct: dict[str, set[str]] = {}
    files = sorted(p for folder in folders for p in Path(folder).glob("*.jsonl"))
    for path in files:
        doc = piconv.load(str(path))
        result = piconv.redact(doc, RedactOptions(homes=None, users=None))
        for rule, count in result.outcome.rules.items():
            by_rule[rule] += count.count
            distinct.setdefault(rule, set()).update(f"{path.name}:{v}" for v in count.values)
        # the values themselves, to judge each one by eye
        for span in _spans(doc):
            print(f"{path.name}\t{span.rule}\t{span.secret[:60]!r}")
    print(f"\n{len(files)} sessions; values replaced by rule (occurrences, distinct values):")
    for rule, count in by_rule.most_common():
        print(f"  {rule}: {count} occurrences, {len(distinct[rule])} distinct")


def _spans(doc: piconv.ir.Document) -> list:  # type: ignore[name-defined]
    from piconv.redaction.rules import EnvAssignmentRule, UrlPasswordRule
    from piconv.redaction.scan import Scanner

    redactor = Redactor(
        Scanner(gitleaks.load(), [UrlPasswordRule(), EnvAssignmentRule()], frozenset()), drop_images=False
    )
    redactor._collect(doc.session)
    for entry in doc.entries:
        redactor._collect(entry)
    return redactor.scanner.scan(list(redactor._strings))


if __name__ == "__main__":
    main(sys.argv[1:] or ["../shared/corpus/pi", "../shared/corpus/pi-generated"])
