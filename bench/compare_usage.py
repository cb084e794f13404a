"""piconv's usage figures side by side with pi's own, ccusage's and agentsview's, on the
corpus sessions (the fork pair included), per day and per session: the tables of
docs/usage.md, "Side by side".

    python bench/compare_usage.py --ccusage CCUSAGE_DIR --agentsview AGENTSVIEW_BIN [--out FILE]

``CCUSAGE_DIR`` is a folder where ``npm install ccusage@19.0.3`` was run (its ``pi``
report); ``AGENTSVIEW_BIN`` the ``agentsview`` command of ``pip install agentsview==0.46.1``
in a scratch virtualenv. agentsview syncs a copy of the directory into a scratch data
directory (``AGENTSVIEW_NO_DAEMON=1 agentsview sync``), with ``HOME`` pointed at a scratch
folder so it reads no other agent's sessions. pi's figures come from the oracle
(``tests/oracle/run.py``, ``--usage``). Days are UTC everywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "oracle"))


def layout(shared: Path, into: Path) -> Path:
    """The corpus as pi lays sessions out: one folder per corpus."""
    sessions = into / "sessions"
    for corpus in ("pi", "pi-generated"):
        folder = sessions / f"--corpus-{corpus}--"
        folder.mkdir(parents=True)
        for path in sorted((shared / "corpus" / corpus).glob("*.jsonl")):
            shutil.copy(path, folder / path.name)
    return sessions


def piconv_days(sessions: Path) -> dict[str, tuple[int, float]]:
    import piconv

    report = piconv.usage(sessions, by=["day"])
    return {r.key[0]: (r.input + r.output + r.cache_read + r.cache_write, r.cost) for r in report.rows}


def piconv_sessions(sessions: Path) -> dict[str, tuple[int, float, int, float]]:
    """Per file: the session's own figures and its file's (each entry of the file)."""
    import piconv
    from piconv.facts import scan_document

    out = {}
    for s in piconv.sessions(sessions):
        whole = scan_document(piconv.load(s.path)).spends
        out[Path(s.path).name] = (
            s.input + s.output + s.cache_read + s.cache_write,
            s.cost,
            sum(x.input + x.output + x.cache_read + x.cache_write for x in whole),
            sum(x.cost for x in whole),
        )
    return out


def ccusage_days(cli: Path, node: Path, sessions: Path) -> dict[str, tuple[int, float]]:
    cmd = [str(node), str(cli), "pi", "daily", "--json", "--offline", "-z", "UTC", "--pi-path", str(sessions)]
    data = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return {
        d["date"]: (
            d["inputTokens"] + d["outputTokens"] + d["cacheCreationTokens"] + d["cacheReadTokens"],
            d["totalCost"],
        )
        for d in data["daily"]
    }


def agentsview_days(binary: Path, sessions: Path, scratch: Path) -> dict[str, tuple[int, float]]:
    env = {
        **os.environ,
        "HOME": str(scratch / "home"),
        "AGENTSVIEW_DATA_DIR": str(scratch / "data"),
        "PI_DIR": str(sessions),
        "AGENTSVIEW_NO_DAEMON": "1",
    }
    (scratch / "home").mkdir(parents=True, exist_ok=True)
    subprocess.run([str(binary), "sync"], env=env, capture_output=True, check=True)
    cmd = [str(binary), "usage", "daily", "--all", "--json", "--no-sync", "--offline", "--timezone", "UTC"]
    data = json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout)
    return {
        d["date"]: (
            d["inputTokens"] + d["outputTokens"] + d["cacheCreationTokens"] + d["cacheReadTokens"],
            d["totalCost"]["microdollars"] / 1e6,
        )
        for d in data["daily"]
    }


def pi_sessions(shared: Path) -> dict[str, dict[str, Any]]:
    import run as oracle  # type: ignore[import-not-found]

    files = oracle.corpus_files(shared)
    results = oracle.run_many((path, ("--usage",)) for _c, path in files)
    return {path.name: data["usage"] for (_c, path), data in zip(files, results, strict=True)}


def _money(x: float | None) -> str:
    return "" if x is None else f"${x:,.4f}"


def _tok(x: int | None) -> str:
    return "" if x is None else f"{x:,}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ccusage", type=Path, required=True)
    p.add_argument("--agentsview", type=Path, required=True)
    p.add_argument("--out", type=Path)
    ns = p.parse_args()
    import run as oracle  # type: ignore[import-not-found]

    shared = oracle.shared_dir()
    node = oracle.ensure_installed()
    with tempfile.TemporaryDirectory(prefix="piconv-compare-") as tmp:
        sessions = layout(shared, Path(tmp))
        ours = piconv_days(sessions)
        cc = ccusage_days(ns.ccusage / "node_modules" / "ccusage" / "dist" / "cli.js", node, sessions)
        av = agentsview_days(ns.agentsview, sessions, Path(tmp) / "agentsview")
        per_session = piconv_sessions(sessions)
    pi = pi_sessions(shared)
    lines = [
        "| day (UTC) | piconv tokens | piconv cost | ccusage tokens | ccusage cost | agentsview tokens | agentsview cost |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for day in sorted(set(ours) | set(cc) | set(av)):
        a, b, c = ours.get(day, (None, None)), cc.get(day, (None, None)), av.get(day, (None, None))
        lines.append(
            f"| {day} | {_tok(a[0])} | {_money(a[1])} | {_tok(b[0])} | {_money(b[1])} | {_tok(c[0])} | {_money(c[1])} |"
        )
    totals = [sum(v[0] for v in d.values()) for d in (ours, cc, av)]
    costs = [sum(v[1] for v in d.values()) for d in (ours, cc, av)]
    lines.append(
        f"| **total** | {_tok(totals[0])} | {_money(costs[0])} | {_tok(totals[1])} | {_money(costs[1])} "
        f"| {_tok(totals[2])} | {_money(costs[2])} |"
    )
    lines += [
        "",
        "| session | pi export header tokens | pi /session tokens | pi /session cost | piconv (file) tokens "
        "| piconv (file) cost | piconv (counted once) tokens |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in sorted(per_session):
        usage = pi[name]
        header = usage["exportHeader"]
        stats = usage["sessionStats"]
        head = "fails" if "error" in header else _tok(sum(header["tokens"].values()))
        st = "fails" if "error" in stats else _tok(stats["tokens"]["total"])
        sc = "fails" if "error" in stats else _money(stats["cost"])
        own, _own_cost, whole, whole_cost = per_session[name]
        lines.append(
            f"| {name} | {head} | {st} | {sc} | {_tok(whole)} | {_money(whole_cost)} | {_tok(own)} |"
        )
    text = "\n".join(lines) + "\n"
    if ns.out:
        ns.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
