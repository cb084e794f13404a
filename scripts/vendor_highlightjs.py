"""Development tool (not imported at runtime): refresh the vendored highlight.js.

    npm pack @highlightjs/cdn-assets@VERSION
    tar xzf highlightjs-cdn-assets-VERSION.tgz
    .venv/bin/python scripts/vendor_highlightjs.py package

Copies, from the unpacked npm package ``@highlightjs/cdn-assets``, its LICENSE, the core
(``es/core.min.js``: the only core-without-languages build the package has) and the
grammar of every language converters/html/highlight.py can name
(``languages/NAME.min.js``) into converters/html/static/highlightjs/, and writes
VERSION. Files are copied unchanged; hljs.py turns the core module into a plain script
when it builds a page. Then run tests/test_html.py: it checks every grammar is there and
that the page's script stays inside its <script> element.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from piconv.converters.html.highlight import LANGUAGES  # run with piconv installed (editable)

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "converters" / "html" / "static" / "highlightjs"


def main(package: Path) -> None:
    meta = json.loads((package / "package.json").read_text(encoding="utf-8"))
    if meta.get("name") != "@highlightjs/cdn-assets":
        raise SystemExit(f"{package} is not the @highlightjs/cdn-assets package")
    if (DEST / "languages").exists():
        shutil.rmtree(DEST / "languages")
    (DEST / "languages").mkdir(parents=True)
    shutil.copyfile(package / "LICENSE", DEST / "LICENSE")
    shutil.copyfile(package / "es" / "core.min.js", DEST / "core.min.js")
    for name in sorted(LANGUAGES):
        shutil.copyfile(package / "languages" / f"{name}.min.js", DEST / "languages" / f"{name}.min.js")
    (DEST / "VERSION").write_text(meta["version"] + "\n", encoding="utf-8")
    print(f"highlight.js {meta['version']}: core and {len(LANGUAGES)} languages in {DEST}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "package"))
