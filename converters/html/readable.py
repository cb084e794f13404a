"""Times and paths as a reader wants them, with the exact value one hover away.

A time stamp becomes ``<time datetime="…" title="…">``: the page says it in UTC, in
words a person reads (``2025-12-08 22:41:05 UTC``, the date only when the day changes),
and its script says it again in the reader's own time zone; the exact stamp, as the
session recorded it, is the element's title (shown on hover) and is printed after it.
A stamp that is not an ISO 8601 date and time is shown as it is.

A path is shown with its home directory as ``~`` (the full path is its title) and may
wrap after each separator (``<wbr>``), never inside a name.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from piconv.converters.common.paths import home_short

from .escape import attr
from .escape import text as esc

_ISO = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


_PI_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\Z")


def parse(stamp: str) -> datetime | None:
    """``stamp`` as an aware UTC datetime, or ``None`` when it is not ISO 8601 with a zone."""
    m = _ISO.match(stamp)
    if m is None:
        return None
    date, clock, fraction, zone = m.groups()
    fraction = (fraction or "")[:7]  # whole microseconds at most
    zone = "+00:00" if zone in ("Z", "z") else zone
    try:
        return datetime.fromisoformat(f"{date}T{clock}{fraction}{zone}").astimezone(timezone.utc)
    except ValueError:  # a month 13, an hour 25
        return None


def _datetime_attr(when: datetime) -> str:
    """The ``datetime`` attribute: UTC to the millisecond (HTML allows three digits)."""
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


class Clock:
    """Writes the time stamps of one page, in page order: an entry's time carries its
    date only when the day differs from the entry before's."""

    def __init__(self) -> None:
        self.day = ""

    def entry(self, stamp: object) -> str:
        """An entry's time (``class="ts"``): the time of day, with the date when it changed."""
        if not isinstance(stamp, str):
            return ""
        if _PI_STAMP.match(stamp):  # what pi writes, already UTC to the millisecond: no parsing
            day, clock = stamp[:10], stamp[11:19]
            shown = f"{clock} UTC" if day == self.day else f"{day} {clock} UTC"
            self.day = day
            return f'<time class="ts" datetime="{stamp}" title="{stamp}">{shown}</time>'
        when = parse(stamp)
        if when is None:
            return f'<span class="ts">{esc(stamp)}</span>'
        day = when.strftime("%Y-%m-%d")
        shown = when.strftime("%H:%M:%S UTC") if day == self.day else when.strftime("%Y-%m-%d %H:%M:%S UTC")
        self.day = day
        return f'<time class="ts" datetime="{_datetime_attr(when)}" title="{attr(stamp)}">{shown}</time>'


def full_time(stamp: str, cls: str = "ts-full") -> str:
    """A time with its date (the page's header, a branch's end)."""
    when = parse(stamp)
    if when is None:
        return esc(stamp)
    shown = when.strftime("%Y-%m-%d %H:%M UTC")
    return f'<time class="{cls}" datetime="{_datetime_attr(when)}" title="{attr(stamp)}">{shown}</time>'


_SEGMENT = re.compile(r"[^/\\]*[/\\]|[^/\\]+")  # a name and the separator after it
KEEP_WHOLE = 40
"""A name up to this long never breaks (not at a hyphen either); a longer one may break
anywhere rather than run out of its box."""


def path_text(path: str) -> str:
    """``path`` escaped, home as ``~``, breaking only after a separator."""
    return _wrappable(home_short(path))


def path_html(path: str, cls: str) -> str:
    """``path`` in a ``<span class="cls">``: shown by :func:`path_text`, the full path
    as its title when the home directory was shortened."""
    shown = home_short(path)
    title = f' title="{attr(path)}"' if shown != path else ""
    return f'<span class="{cls}"{title}>{_wrappable(shown)}</span>'


def _wrappable(path: str) -> str:
    """A line break allowed after each separator (``<wbr>``), and a name that holds a
    hyphen or a space kept on one line (``<span class="nb">``)."""
    out = []
    for seg in _SEGMENT.findall(path):
        # only a name a browser could break inside (at a hyphen, a space...) needs the span
        whole = len(seg) <= KEEP_WHOLE and _BREAKABLE.search(seg) is not None
        out.append(f'<span class="nb">{esc(seg)}</span>' if whole else esc(seg))
    return "<wbr>".join(out)


_BREAKABLE = re.compile(r"[^A-Za-z0-9._~/\\]")
