"""What piconv says about a session, defined once for every place that shows it.

- :mod:`.titles`: what a session is called (its title, first prompt, project);
- :mod:`.spending`: what its entries spend (which entries a total counts, their turns,
  tokens and cost, each counted entry as a :class:`~.spending.Spend`);
- :mod:`.summary`: what an archive lists about it (:func:`~.summary.session_facts`, the
  days it was active on, :class:`~.summary.ListedSession` for an index page);
- :mod:`.lineage`: what links it to the session it came from (entry keys, copies,
  subagent runs);
- :mod:`.scan`: what a list and a usage report need of it (:class:`~.scan.SessionScan`).

The names a reader's ``scan`` and docs/usage.md refer to as ``piconv.facts.X`` stay
importable from here; piconv's own modules import from the module that defines them.
"""

from __future__ import annotations

from .scan import SessionScan as SessionScan
from .scan import scan_document as scan_document
from .spending import Spend as Spend
from .spending import call_spend as call_spend
from .spending import counted as counted

__all__ = ["SessionScan", "Spend", "call_spend", "counted", "scan_document"]
