"""ECMAScript's ``Number::toString``: how JavaScript spells a number.

Two formats need it: ASF's canonical JSON (RFC 8785 spells numbers the ECMAScript way)
and the OpenAI request, which must equal what pi's JavaScript ``JSON.stringify`` sends.
"""

from __future__ import annotations

import math

_MAX_SAFE = 2**53


def js_number_text(value: int | float) -> str | None:
    """The spelling of the binary64 nearest ``value``, or ``None`` where JavaScript has
    no finite number (NaN, an infinity, an integer beyond binary64's range)."""
    if isinstance(value, int):
        if -_MAX_SAFE <= value <= _MAX_SAFE:
            return str(int(value))
        try:
            value = float(value)  # JavaScript holds it as the nearest double
        except OverflowError:
            return None
    if not math.isfinite(value):
        return None
    if value == 0:
        return "0"  # -0 too
    sign = "-" if value < 0 else ""
    # repr() gives the shortest digits that round-trip, which is what ECMAScript uses.
    mantissa, _, exp = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        out = f"{mant}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + out
