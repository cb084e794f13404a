"""HTML escaping: the one function that turns text into HTML element content or a
double-quoted attribute value, for every format that writes HTML (the HTML pages, the
``<summary>`` lines of Markdown, the directory run's index pages).

Forbidden code points are not handled here: a page writer replaces them once over its
whole output (see ``piconv.converters.html.escape``), which is much cheaper than doing
it for every string.
"""

from __future__ import annotations


def escape(s: str, *, apostrophe: bool = False) -> str:
    """``s`` with ``&``, ``<``, ``>`` and ``"`` as character references: safe as element
    content and inside a double-quoted attribute. ``apostrophe``: ``'`` as ``&#x27;``
    too (what ``html.escape`` writes; the Markdown format's summaries always had it)."""
    # str.replace chains run in C and beat html.escape's per-call overhead on small
    # strings while doing the same work on large ones.
    if "&" in s:
        s = s.replace("&", "&amp;")
    if "<" in s:
        s = s.replace("<", "&lt;")
    if ">" in s:
        s = s.replace(">", "&gt;")
    if '"' in s:
        s = s.replace('"', "&quot;")
    if apostrophe and "'" in s:
        s = s.replace("'", "&#x27;")
    return s
