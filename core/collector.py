"""Pausing the cyclic garbage collector while a session is read and converted.

Reading builds many long-lived objects that hold no reference cycles (the parsed lines and
the IR), and each automatic collection rescans all of them: on the corpus's 2.4 MB
session, loading takes about 20 % less with the collector paused. Reference counting still
frees everything; only the cycle search waits. The caller's state is restored exactly,
and nothing is frozen or retuned.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the ``with`` block, then as the caller had it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
