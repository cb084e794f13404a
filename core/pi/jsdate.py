"""``new Date(value).getTime()`` as JavaScript (V8) computes it, for the values pi files hold.

pi turns entry timestamps (ISO strings) into message timestamps (milliseconds) this way;
reproducing it exactly keeps piconv's context identical to pi's. Date-time strings
without an offset are local time in JavaScript; piconv reads them as UTC (the zone pi's
own files are written in) and documents it.
"""

from __future__ import annotations

import math
import re
from typing import Any

_ISO = re.compile(
    r"([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?"
    r"([Zz]|[+-]\d{2}:\d{2})?"
)
_MAX_MS = 8.64e15


def _time_clip(ms: float) -> int | None:
    if math.isnan(ms) or math.isinf(ms) or abs(ms) > _MAX_MS:
        return None
    return int(ms)  # ToIntegerOrInfinity truncates toward zero


def js_time(value: Any) -> int | None:
    """Milliseconds since the epoch, or ``None`` where JavaScript gives ``NaN``."""
    if value is None:
        return 0
    if value is True or value is False:
        return int(value)
    if type(value) is int or type(value) is float:
        return _time_clip(float(value))
    if type(value) is not str:
        return None
    m = _ISO.fullmatch(value)
    if m is None:
        return None
    year_s, month_s, day_s, hh, mm, ss, frac, zone = m.groups()
    if year_s == "-000000":
        return None
    year = int(year_s)
    month = int(month_s) if month_s else 1
    day = int(day_s) if day_s else 1
    hour = int(hh) if hh else 0
    minute = int(mm) if mm else 0
    second = int(ss) if ss else 0
    millis = int((frac + "00")[:3]) if frac else 0
    # V8 checks the day against 31 only: 2023-02-30 is 2 March
    if not (1 <= month <= 12) or not (1 <= day <= 31):
        return None
    if hour == 24:
        if minute or second or millis:
            return None
    elif hour > 23 or minute > 59 or second > 59:
        return None
    if hh is None and zone is not None:
        return None  # "2024-01-01Z" is not a valid date-only form
    days = _days_from_civil(year, month, day)
    ms = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    if zone and zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return None
        ms -= sign * (zh * 60 + zm) * 60_000
    return _time_clip(float(ms))


def _days_from_civil(year: int, month: int, day: int) -> int:
    # Proleptic Gregorian day count from 1970-01-01 (works for any year, unlike datetime).
    y = year - (month <= 2)
    era = y // 400  # floor division: correct for negative years too
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468
