"""datasette opens a directory run's archive usefully, with the metadata written beside
it: full-text search over entries, facets by project, model and month, canned queries.
Run through datasette's own in-process test client (no network)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import REPO
from datasette import app as datasette_app  # a test dependency (pip install -e '.[test]')
from piconv.bulk import run_bulk


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ds")
    src, out = root / "in", root / "out"
    (src / "--home-dev-alpha--").mkdir(parents=True)
    (src / "--home-dev-beta--").mkdir()
    shutil.copy(
        REPO / "examples" / "basic.jsonl", src / "--home-dev-alpha--" / "2026-11-30T06-42-55-389Z_a.jsonl"
    )
    shutil.copy(
        REPO / "examples" / "branching.jsonl", src / "--home-dev-beta--" / "2026-11-30T06-42-56-000Z_b.jsonl"
    )
    run_bulk(str(src), str(out), ["html", "sqlite"], jobs=1, quiet=True)
    return out


def _get(out: Path, path: str) -> Any:
    async def go() -> Any:
        ds = datasette_app.Datasette(
            [str(out / "archive.db")], metadata=orjson.loads((out / "archive.metadata.json").read_bytes())
        )
        await ds.invoke_startup()
        response = await ds.client.get(path)
        assert response.status_code == 200, response.text[:500]
        return response.json()

    return asyncio.run(go())


def test_full_text_search_of_entries(archive: Path) -> None:
    rows = _get(archive, "/archive/entries.json?_search=wrapper&_shape=array")
    assert rows and all("wrapper" in (r["text"] or "").lower() for r in rows)


def test_sessions_facet_by_project_model_and_month(archive: Path) -> None:
    data = _get(archive, "/archive/sessions.json")
    facets = data["facet_results"]
    facets = facets.get("results", facets)  # datasette 1.0 nests them
    assert {"project", "models", "month"} <= set(facets)
    projects = {v["value"] for v in facets["project"]["results"]}
    assert projects == {"pisg-basic-s1", "pisg-branching-s1"}
    assert {v["value"] for v in facets["models"]["results"]} == {"faux/faux-coder"}
    assert {v["value"] for v in facets["month"]["results"]} == {"2026-11"}


def test_canned_queries(archive: Path) -> None:
    by_cost = _get(archive, "/archive/sessions_by_cost.json?_shape=array")
    assert len(by_cost) == 2
    tools = _get(archive, "/archive/tool_usage.json?_shape=array")
    assert {"read", "bash"} <= {t["tool"] for t in tools}
    hits = _get(archive, "/archive/search.json?q=wrapper&_shape=array")
    assert hits and all(h["link"].endswith(".html#e-" + h["entry"]) for h in hits)
    assert all((archive / h["link"].split("#")[0]).is_file() for h in hits)
