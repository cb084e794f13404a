"""The home rule on pi's encoded session folders (``--Users-alice-src--``, Oh-My-Pi's
``-Users-alice-src``): found where such a folder's name may begin, and nowhere else."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from piconv.redaction.rules import HomeRule, encoded_path

HOMES = ["/Users/alice", "/home/al"]
ENCODED = sorted((encoded_path(h) for h in HOMES), key=lambda h: (-len(h), h))
# the rule as one pattern: the name after pi's "--", or after Oh-My-Pi's "-" at the start
# or after a separator, a space, a quote, a bracket, "=" or ":"; then the "-" of the next
# folder
WHOLE = re.compile(rf"""(?:--|(?:^|(?<=[/\\\s"'`(=:]))-)({"|".join(map(re.escape, ENCODED))})(?=-)""")

PIECES = st.sampled_from(
    [
        "-",
        "--",
        "Users-alice",
        "home-al",
        "home-al-ice",
        "-src",
        "/",
        "\\",
        " ",
        "\t",
        '"',
        "'",
        "`",
        "(",
        "=",
        ":",
        "x",
        "é",
        "\u2003",
        "Users-alic",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=12))
def test_encoded_folders_are_found_where_the_whole_pattern_finds_them(pieces: list[str]) -> None:
    text = "".join(pieces)
    rule = HomeRule(HOMES)
    found = [span for span in rule.find(text) if "/" not in text[span[0] : span[1]]]
    assert found == [m.span(1) for m in WHOLE.finditer(text)]


def test_a_folder_name_is_found_after_pi_s_two_dashes_or_oh_my_pi_s_one() -> None:
    rule = HomeRule(HOMES)
    assert list(rule.find("x-home-al-src")) == []  # a "-" inside a word opens no name
    assert list(rule.find("sessions/--home-al-src--/x.jsonl")) == [(11, 18)]
    assert list(rule.find("-home-al-src")) == [(1, 8)]
