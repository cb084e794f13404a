"""What a session list and a usage report need of one session (:class:`SessionScan`),
and its definition on a whole document (:func:`scan_document`), which a reader's own
faster ``scan`` is held to.
"""

from __future__ import annotations

from typing import NamedTuple

from ..ir import Document
from .lineage import subagent_runs
from .spending import Spend, spend_of
from .summary import session_facts
from .titles import header_title


class SessionScan(NamedTuple):
    """What a session list and a usage report need of one session: its header, its name,
    its first prompt and its counted entries (:class:`Spend`). A reader may make it
    without a whole document (``Reader.scan``); :func:`scan_document` makes it from one,
    and the two are held equal by the test suite.

    - ``id``, ``cwd``, ``created`` (the header's time stamp), ``parent_session`` (the
      path of the session it was forked from): strings or None.
    - ``name``: the latest session name, stripped (None when unset or cleared).
    - ``header_title``: a title the file carries beside its header (Oh-My-Pi's).
    - ``first_prompt``: the first user text along the leaf's path
      (:func:`~piconv.facts.titles.first_prompt`).
    - ``updated``: the latest entry time stamp (else ``created``).
    - ``models``: ``provider/model`` in order of first use, as
      :func:`~piconv.facts.summary.session_facts` lists them.
    - ``spends``: the counted entries, in file order.
    - ``subagent_runs``: the run ids of pi-subagents' runs it started
      (:func:`~piconv.facts.lineage.subagent_runs`).
    """

    id: str | None
    cwd: str | None
    created: str | None
    parent_session: str | None
    name: str | None
    header_title: str | None
    first_prompt: str | None
    updated: str | None
    models: tuple[str, ...]
    spends: tuple[Spend, ...]
    subagent_runs: tuple[str, ...]


def scan_document(doc: Document) -> SessionScan:
    """The :class:`SessionScan` of a whole document: what every reader's session gives,
    and the definition a reader's own ``scan`` is held to."""
    facts = session_facts(doc)
    spends = tuple(s for s in map(spend_of, doc.entries) if s is not None)
    session = doc.session
    return SessionScan(
        session.id if isinstance(session.id, str) else None,
        facts["cwd"],
        session.created if isinstance(session.created, str) else None,
        session.parent_session if isinstance(session.parent_session, str) else None,
        facts["name"],
        header_title(doc),
        facts["first_prompt"],
        facts["updated"],
        tuple(facts["models"]),
        spends,
        tuple(subagent_runs(doc)),
    )
