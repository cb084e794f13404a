"""Which ASF versions the reader reads (RFC 0001, "Versioning").

``format`` is ``agentsession/<major>.<minor>``. Until 1.0 a reader supports the minors it
names rather than every minor of its major: this reader is a reader of 0.11, which
reads a 0.5 to 0.10 file as it stands (later minors add optional members, and the
hashes did not change). A 0.x minor it does not name (0.12 adds a ``withdraw`` entry a
0.11 reader must not misread) is refused, as is another major; a file before 0.5 needs
the RFC's in-memory migration, which piconv does not make, and is refused too, rather
than misread. Refused means :class:`piconv.InputError` (exit 3) naming the version.
"""

from __future__ import annotations

import re
from typing import Any

from piconv.errors import InputError

READS = ((0, 5), (0, 11))
"""The oldest and newest version read, both included."""

_FORMAT = re.compile(r"agentsession/(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})")


def version(fmt: Any) -> tuple[int, int] | None:
    """``(major, minor)`` of a header's ``format``; ``None`` when it names no version."""
    if type(fmt) is not str:
        return None
    found = _FORMAT.fullmatch(fmt)
    return (int(found.group(1)), int(found.group(2))) if found else None


def _shown(fmt: Any) -> str:
    text = repr(fmt)
    return text if len(text) <= 60 else text[:57] + "..."


def gate(fmt: Any) -> tuple[int, int]:
    """The version of a header's ``format``; :class:`InputError` for one this reader does
    not read."""
    found = version(fmt)
    oldest, newest = READS
    supported = f"piconv reads agentsession/{oldest[0]}.{oldest[1]} to {newest[0]}.{newest[1]}"
    if found is None:
        raise InputError(
            f"the header's format {_shown(fmt)} names no agentsession/<major>.<minor> version; {supported}"
        )
    name = f"agentsession/{found[0]}.{found[1]}"
    if found > newest:
        raise InputError(f"{name} is newer than this piconv reads ({supported}): a later piconv may read it")
    if found < oldest:
        raise InputError(
            f"{name} is older than 0.5: RFC 0001 reads such a file by migrating it, "
            f"which piconv does not do ({supported})"
        )
    return found
