"""The datasette metadata written beside an archive: ``datasette archive.db -m archive.metadata.json``.

Full-text search over entries, facets by project, model, month and relation (fork,
subagent), and canned queries (full-text search with links, sessions by cost, tool usage,
tokens by month), each counting a fork's copies of its parent's entries once.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

MARK = "archived by piconv"
"""In the metadata's description: how a directory run knows the file beside the archive
as its own, to rewrite it (any other file there is left alone)."""


def metadata_name(db_path: str) -> str:
    stem = os.path.basename(db_path).rsplit(".", 1)[0] or "archive"
    return stem + ".metadata.json"


QUERIES = {
    "search": {
        "title": "Search the archive",
        "description": "Full-text search (FTS5 syntax); best matches first",
        "sql": (
            "select s.title, s.project, e.timestamp, e.role, e.id as entry, "
            "snippet(entries_fts, 0, '«', '»', '…', 16) as snippet, "
            "case when s.html is not null then s.html || '#' || e.anchor end as link "
            "from entries_fts join entries e on e.pk = entries_fts.rowid "
            "join sessions s on s.pk = e.session "
            "where entries_fts match :q order by rank limit 100"
        ),
    },
    "sessions_by_cost": {
        "title": "Sessions by cost",
        "sql": (
            "select title, project, created, models, turns, tokens, round(cost, 4) as cost "
            "from sessions order by cost desc limit 200"
        ),
    },
    "tool_usage": {
        "title": "Tool usage",
        "description": "Tool results by tool, with the sessions that used each (a fork's copies counted once)",
        "sql": (
            "select tool, count(*) as results, count(distinct session) as sessions "
            "from entries where role = 'tool' and tool is not null and not inherited "
            "group by tool order by results desc"
        ),
    },
    "tokens_by_month": {
        "title": "Tokens and cost by month",
        "sql": (
            "select month, count(*) as sessions, sum(tokens) as tokens, round(sum(cost), 2) as cost "
            "from sessions group by month order by month desc"
        ),
    },
}


def metadata(db_path: str) -> dict[str, Any]:
    database = os.path.basename(db_path).rsplit(".", 1)[0] or "archive"
    return {
        "title": "pi sessions",
        "description": "pi coding-agent sessions " + MARK + " (docs/formats/sqlite.md)",
        "databases": {
            database: {
                "tables": {
                    "sessions": {
                        "label_column": "title",
                        "sort_desc": "created",
                        "facets": ["project", {"array": "models"}, "month", "relation"],
                    },
                    "entries": {
                        "fts_table": "entries_fts",
                        "fts_pk": "pk",
                        "searchmode": "raw",
                        "facets": ["role", "model", "tool", "inherited"],
                    },
                },
                "queries": QUERIES,
            }
        },
    }


def metadata_bytes(db_path: str) -> bytes:
    return orjson.dumps(metadata(db_path), option=orjson.OPT_INDENT_2) + b"\n"
