"""Counts and costs as the comparison pages of every format show them (the words of
``piconv diff``'s text, ``piconv.compare``, which formats do not import)."""

from __future__ import annotations


def plural(n: int, one: str, many: str = "") -> str:
    """``1 turn``, ``2 turns``, ``3 entries`` (``many`` given)."""
    return f"{n:,} {one}" if n == 1 else f"{n:,} {many or one + 's'}"


def money(cost: float) -> str:
    """A cost in US dollars to four places: a branch's differences are often cents."""
    return f"${cost:,.4f}"
