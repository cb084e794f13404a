"""Screenshots of piconv's page beside ``pi --export``'s of the same session, in headless
Chromium, for docs/screens/ (what a reader sees first; kept small: one viewport each).

    python bench/screens.py [--out docs/screens] [--python PY]

Needs Chromium and the pi oracle (``python tests/oracle/run.py --install``). pi rewrites a
version 1 session when it loads it, so it gets a copy. The reader's time zone is set to
Europe/Berlin for both pages, so their times can be compared.
"""

from __future__ import annotations

import argparse
import base64
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from cdp import Browser  # noqa: E402
from make_large import shared_dir  # noqa: E402
from run import NODE, PI_CLI, pi_dir  # noqa: E402

# (session, name, extra piconv arguments, with JavaScript)
SHOTS = (
    ("pi/badlogic__pi-mono__before-compaction.jsonl", "before-compaction", (), True),
    ("pi/badlogic__pi-mono__before-compaction.jsonl", "before-compaction.no-js", (), False),
    (
        "pi/badlogic__pi-mono__before-compaction.jsonl",
        "before-compaction.conversation",
        ("--detail", "conversation"),
        True,
    ),
    ("pi-generated/basic.jsonl", "basic", (), True),
)
SIZE = (1280, 800)
SCALE = 0.75
ZONE = "Europe/Berlin"


def shoot(browser: Browser, page: Path, png: Path, javascript: bool) -> None:
    p = browser.open(page.as_uri(), javascript=javascript, timezone=ZONE)
    time.sleep(1.5)  # the lazy colouring of what is in view
    if p.errors():
        raise SystemExit(f"{page}: {p.errors()}")
    # a quarter fewer pixels each way: readable, and small enough to keep in the repository
    clip = {"x": 0, "y": 0, "width": SIZE[0], "height": SIZE[1] - 90, "scale": SCALE}
    data = p.send("Page.captureScreenshot", {"format": "png", "clip": clip})["data"]
    png.write_bytes(base64.b64decode(data))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(HERE.parent / "docs" / "screens"))
    parser.add_argument("--python", default=sys.executable, help="the interpreter piconv is installed for")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    pi = pi_dir()
    if chromium is None or pi is None:
        raise SystemExit("needs chromium and the pi oracle (python tests/oracle/run.py --install)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, Browser(chromium, *SIZE) as browser:
        work = Path(tmp)
        done_pi: set[str] = set()
        for source, name, extra, javascript in SHOTS:
            src = shared_dir() / "corpus" / source
            ours = work / f"{name}.html"
            subprocess.run(
                [args.python, "-m", "piconv", str(src), "--to", "html", *extra, "-o", str(ours), "-q"],
                check=True,
            )
            shoot(browser, ours, out / f"{name}.piconv.png", javascript)
            stem = name.split(".")[0]
            if stem not in done_pi:
                copy = work / src.name
                shutil.copyfile(src, copy)
                theirs = work / f"{stem}.pi.html"
                subprocess.run([str(pi / NODE), str(pi / PI_CLI), "--export", str(copy), str(theirs)], check=True,
                               stdout=subprocess.DEVNULL)  # fmt: skip
                shoot(browser, theirs, out / f"{stem}.pi.png", True)
                done_pi.add(stem)
    for png in sorted(out.glob("*.png")):
        print(f"{png}  {png.stat().st_size / 1e3:.0f} kB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
