"""What a directory run's index page lists: one :class:`ListedSession` per session.

The run keeps each session's facts in its manifest (:func:`piconv.session_facts`, noted
by the worker while the session was in memory); a format that declares an index page
(``Converter.index``, see docs/plugins.md) gets them as these records, grouped by
project, and writes the page in its own language. The core writes no page itself.
"""

from __future__ import annotations

from .records import Frozen, frozen


@frozen
class ListedSession(Frozen):
    """One session on an index page, with the link to the format's output of it.

    - ``project``: the project it belongs to (:func:`piconv.facts.project_name`).
    - ``title``: its name, else its first prompt, else its file name; one line, at most
      120 characters (a longer one ends with ``…``).
    - ``file``: the session file's name.
    - ``output``: the output's path below the output directory, ``/``-separated.
    - ``link``: the same as a relative URL from the page (``./a%20b/c.html``): each
      component percent-encoded, so any name is an inert path.
    - ``cwd``: the session's working directory, or None.
    - ``created`` / ``updated``: time stamps as recorded (ISO 8601, UTC), or ``""``.
    - ``models``: ``provider/model`` names in order of first use.
    - ``turns`` (user messages), ``tokens``, ``cost``: totals over the whole file.
    - ``failed``: the last conversion of the session failed (the output listed is an
      earlier one).
    """

    project: str
    title: str
    file: str
    output: str
    link: str
    cwd: str | None
    created: str
    updated: str
    models: tuple[str, ...]
    turns: int
    tokens: int
    cost: float
    failed: bool
