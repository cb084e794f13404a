"""The Markdown writer's output, byte for byte: SHA-256 digests of every corpus and hostile
output (path and tree layouts, images embedded and omitted) and of the escaping of a
fixed set of generated Markdown texts, recorded in ``tests/data/markdown/digests.json``.

Speed work on the writer must leave these unchanged. After an intended change of the
output, regenerate with ``PICONV_UPDATE_GOLDENS=1 python -m pytest tests/test_markdown_bytes.py``
and say why in the commit.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from piconv import Report
from piconv.converters.markdown import write

from .conftest import REPO, corpus_files, corpus_ids

DIGESTS = REPO / "tests" / "data" / "markdown" / "digests.json"
HOSTILE = sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl"))
SOURCES = corpus_files() + HOSTILE
IDS = corpus_ids() + [f"hostile/{p.stem}" for p in HOSTILE]
VARIANTS = {
    "path-embed": {"images": "embed", "all_branches": False},
    "tree-embed": {"images": "embed", "all_branches": True},
    "path-omit": {"images": "omit", "all_branches": False},
}
UPDATE = bool(os.environ.get("PICONV_UPDATE_GOLDENS"))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _recorded() -> dict[str, str]:
    return json.loads(DIGESTS.read_text(encoding="utf-8")) if DIGESTS.is_file() else {}


def _record(key: str, value: str) -> None:
    digests = _recorded()
    digests[key] = value
    DIGESTS.parent.mkdir(parents=True, exist_ok=True)
    DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _compare(key: str, value: str) -> None:
    if UPDATE:
        _record(key, value)
        return
    recorded = _recorded()
    assert key in recorded, f"no digest recorded for {key} (PICONV_UPDATE_GOLDENS=1 records it)"
    assert value == recorded[key], f"{key}: the output changed"


@pytest.mark.shared
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_output_bytes_unchanged(path: Path, variant: str) -> None:
    import piconv

    out = io.BytesIO()
    opts: dict[str, Any] = {"leaf": None, "output_path": None, "validate": False, **VARIANTS[variant]}
    write(piconv.load(path), out, opts, Report("markdown"))
    name = f"{path.parent.name}/{path.stem}"
    _compare(f"{name}:{variant}", _digest(out.getvalue()))


# Lines that exercise every branch of escape.markdown: fences at column 0 and in
# containers, HTML, links, headings, setext underlines, code spans, tables, CRs, NULs.
FRAGMENTS = [
    "```", "````", "~~~", "```js", "``` `x`", "  ```", "- ```", "> ```", "1. ```", "    ```",
    "<div>", "</details>", "<script>x</script>", "<!-- c -->", "<https://x.y>", "# h", "## h",
    "### h3", "#### deep #", "---", "===", "- - -", "text", "", "- item", "> quote",
    "    code <b>", "`<b>`", "``a`<i>``", "[x](javascript:y)", "[x](https://ok)",
    "[r]: javascript:z", "[r]: http://fine", "[r]:", "javascript:w", "![i](file:///x)",
    "\\`<u>`", "| `a|<b>` |", "\t<tab>", "a\r# b", "x\r\ny", "nul\x00here", "plain words only",
    "a < b and c > d", "x = y - z", "*emph* _u_ **b**", "trailing \\", "\\\\<b>", "`unclosed <i>",
    "é ü 中文 <p>", "1) item", "+ plus", "<?php ?>", "<!DOCTYPE x>", "&amp; &#x3c;",
]  # fmt: skip


def _texts() -> list[str]:
    rnd = random.Random(20240601)
    return ["\n".join(rnd.choice(FRAGMENTS) for _ in range(rnd.randint(1, 14))) for _ in range(3000)]


@pytest.mark.parametrize("shift", [2, 3])
def test_escaped_markdown_bytes_unchanged(shift: int) -> None:
    from piconv.converters.markdown import escape

    h = hashlib.sha256()
    for text in _texts():
        h.update(escape.markdown(text, shift).encode("utf-8", "surrogatepass") + b"\0")
    _compare(f"escape.markdown:{shift}", h.hexdigest())


def test_escaping_helpers_bytes_unchanged() -> None:
    from piconv.converters.markdown import escape

    h = hashlib.sha256()
    for text in _texts():
        for part in (
            escape.fenced(text, "text"),
            escape.inline(text, 80),
            escape.code_span(text, 80),
            escape.summary_text(text),
            escape.one_line(text),
            escape.quote(text),
        ):
            h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    _compare("escape.helpers", h.hexdigest())


# -------------------------------------------------------------------------- fast paths


def test_fence_for_matches_the_longest_run() -> None:
    """fence_for finds the longest backtick run by substring searches: the same as
    scanning every run."""
    import re

    from piconv.converters.markdown.escape import fence_for

    rnd = random.Random(7)
    pieces = ["`", "a", "```", "\n", "é", "~~~"] + [
        "`" * n for n in (2, 4, 5, 7, 8, 9, 15, 16, 17, 33, 64, 100)
    ]
    for _ in range(5000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        longest = max((len(m) for m in re.findall("`+", text)), default=0)
        assert fence_for(text) == "`" * max(3, longest + 1), text


def test_one_line_fast_path_matches_the_regex() -> None:
    """one_line skips its regex for printable text without double spaces: the result is
    the same on text with every kind of white space."""
    import re

    from piconv.converters.markdown.escape import normalize_newlines, one_line

    spaces = re.compile(r"[\s\u2028\u2029\x85]+")
    rnd = random.Random(11)
    pieces = [
        " ",
        "  ",
        "a",
        "b c",
        "\t",
        "\n",
        "\r",
        "\x00",
        "\u00a0",
        "\u2003",
        "\u2028",
        "\x85",
        "\x0b",
        "é",
        "中",
        "\U0001f600",
    ]
    for _ in range(5000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10)))
        for limit in (0, 3, 80):
            want = spaces.sub(" ", normalize_newlines(text)).strip()
            if limit and len(want) > limit:
                want = want[: limit - 1].rstrip() + "…"
            assert one_line(text, limit) == want, (text, limit)
