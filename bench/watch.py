"""``piconv watch``: how soon an append by pi reaches the archive, and what watching costs
while nothing happens.

    python bench/watch.py [--sessions 0,1000] [--appends 100] [--idle 60] [--to html]

For each size of folder (``--sessions``: how many other sessions it holds, generated as
bench/bulk.py generates its corpus, 50 KiB on average), ``piconv watch FOLDER --to html -o
OUT`` runs as a user runs it (a separate process). A real session
(``castai__kimchi-dev__session.jsonl``, pi 3 with ids) is then written into the folder line by
line, ``--appends`` lines, at pi's own pace (the gaps its time stamps show, at most 1 s);
after each line the time until the session's page shows that entry is the latency (polled
every 2 ms). Reported: median, 90th percentile and worst (goal: worst under 2 s). Then,
with nothing changing, the CPU time of the watching process over ``--idle`` seconds
(goal: under 1 % of a core), and the time Ctrl-C takes (the plain run that ends the watch).
Exit status 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bulk import make_corpus
from common import record
from make_large import shared_dir

REPLAYED = "corpus/pi/castai__kimchi-dev__session.jsonl"
LATENCY_GOAL_S = 2.0
IDLE_GOAL = 0.01
MAX_GAP_S = 1.0


def _seconds(stamp: Any) -> float | None:
    import datetime

    if not isinstance(stamp, str):
        return None
    try:
        return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _lines(limit: int) -> list[tuple[bytes, str | None, float]]:
    out = []
    last = None
    for raw in (shared_dir() / REPLAYED).read_bytes().splitlines(keepends=True)[: limit + 1]:
        value = orjson.loads(raw)
        stamp = _seconds(value.get("timestamp"))
        gap = 0.0 if last is None or stamp is None else min(max(stamp - last, 0.0), MAX_GAP_S)
        last = stamp if stamp is not None else last
        out.append((raw, value.get("id") if value.get("type") != "session" else None, gap))
    return out


def _cpu(pid: int) -> float:
    """User + system seconds of process ``pid`` and of its children it has waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / ticks


def _wait(condition: Any, timeout: float) -> float:
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > timeout:
            raise TimeoutError
        time.sleep(0.002)
    return time.perf_counter() - start


def _shows(page: Path, entry_id: str) -> Any:
    """Whether the page, rewritten since last asked, shows the entry ``entry_id``."""
    marker = f'id="e-{entry_id}"'.encode()
    seen = [0]

    def check() -> bool:
        try:
            stamp = page.stat().st_mtime_ns
        except FileNotFoundError:
            return False
        if stamp == seen[0]:
            return False
        seen[0] = stamp
        return marker in page.read_bytes()

    return check


def one(folder: Path, out: Path, formats: list[str], appends: int, idle: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "piconv", "watch", str(folder), "-o", str(out)]
    for f in formats:
        cmd += ["--to", f]
    log = out.parent / f"{out.name}.log"
    started = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    try:
        _wait(lambda: "first run" in log.read_text(), 1800)
        first = time.perf_counter() - started
        project = next(p for p in sorted(folder.iterdir()) if p.is_dir()) if any(folder.iterdir()) else folder
        target = project / "2026-02-01T00-00-00-000Z_replayed.jsonl"
        page = out / target.relative_to(folder).with_suffix(".html")
        latencies = []
        for raw, entry_id, gap in _lines(appends):
            time.sleep(gap)
            with open(target, "ab") as fh:
                fh.write(raw)
            if entry_id is None:
                continue
            latencies.append(_wait(_shows(page, entry_id), 60))
        time.sleep(2.0)  # the runs the last append started are over
        cpu0, wall0 = _cpu(proc.pid), time.perf_counter()
        time.sleep(idle)
        idle_share = (_cpu(proc.pid) - cpu0) / (time.perf_counter() - wall0)
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(600)
        stop = time.perf_counter() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    latencies.sort()
    return {
        "first_run_s": first,
        "latencies": latencies,
        "median": statistics.median(latencies),
        "p90": latencies[int(0.9 * (len(latencies) - 1))],
        "worst": latencies[-1],
        "idle_share": idle_share,
        "stop_s": stop,
        "exit": code,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", default="0,1000", help="other sessions in the folder, comma-separated sizes")
    p.add_argument("--appends", type=int, default=100)
    p.add_argument("--idle", type=float, default=60.0)
    p.add_argument("--to", action="append", dest="formats")
    p.add_argument("--keep", action="store_true")
    ns = p.parse_args(argv)
    formats = ns.formats or ["html"]
    rows: list[dict[str, Any]] = []
    raw: dict[str, Any] = {}
    for n in (int(x) for x in ns.sessions.split(",")):
        root = Path(tempfile.mkdtemp(prefix="piconv-bench-watch-"))
        try:
            folder = root / "sessions"
            folder.mkdir()
            if n:
                make_corpus(folder, n, n * 50 / 1024, seed=7)
            else:
                (folder / "--home-dev-projects-p0--").mkdir()
            got = one(folder, root / "out", formats, ns.appends, ns.idle)
        finally:
            if not ns.keep:
                shutil.rmtree(root, ignore_errors=True)
        raw[str(n)] = got
        where = f"{n:,} other sessions" if n else "the session alone"
        for what, key in (("median", "median"), ("90th percentile", "p90"), ("worst", "worst")):
            rows.append(
                {
                    "what": f"latency, {where}: {what} of {len(got['latencies'])} appends",
                    "value": round(got[key], 3),
                    "unit": "s",
                    "goal": f"< {LATENCY_GOAL_S} s" if key == "worst" else "",
                    "ok": got[key] < LATENCY_GOAL_S if key == "worst" else None,
                }
            )
        rows.append(
            {
                "what": f"CPU while idle, {where}, over {ns.idle:g} s",
                "value": round(100 * got["idle_share"], 3),
                "unit": "% of a core",
                "goal": "< 1 %",
                "ok": got["idle_share"] < IDLE_GOAL,
            }
        )
        rows.append({"what": f"first run, {where}", "value": round(got["first_run_s"], 2), "unit": "s"})
        rows.append(
            {
                "what": f"Ctrl-C to exit (the last plain run), {where}",
                "value": round(got["stop_s"], 2),
                "unit": "s",
                "ok": got["exit"] == 0,
            }
        )
    record("watch", rows, extra={"formats": formats, "raw": raw})
    return 0 if all(r.get("ok") is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
