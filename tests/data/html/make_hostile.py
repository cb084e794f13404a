"""Writes tests/data/hostile/html-*.jsonl: pi sessions whose every field that reaches an
HTML page carries script-injection payloads. Run it after changing the payloads; the
output is committed so the tests need no generation step.

Each payload, if it ever ran, would set ``document.title`` to ``PWNED`` and log
``PWNED`` to the console; the browser tests check that neither happens.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "hostile"

RUN = "document.title='PWNED';console.log('PWNED')"
P = (
    f"<script>{RUN}</script>"
    f'<img src=x onerror="{RUN}">'
    f'<svg onload="{RUN}"><script>{RUN}</script></svg>'
    f"</script><script>{RUN}</script>"
    f'"><script>{RUN}</script>'
    f"'><img src=x onerror={RUN}>"
    f'<a href="javascript:{RUN}">js link</a>'
    f'<iframe srcdoc="<script>{RUN}</script>"></iframe>'
    f"<style>body{{background:url(http://127.0.0.1:9/x)}}</style>"
    f"<!-- --><script>{RUN}</script>"
)
MD = (
    P
    + f"\n\n[md link](javascript:{RUN}) [vb](vbscript:msgbox) [file](file:///etc/passwd) [rel](./x.html)"
    + f"\n\n![md image](javascript:{RUN}) ![remote](http://127.0.0.1:9/x.png) "
    + "![svg](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9ImFsZXJ0KDEpIj48L3N2Zz4=)"
    + f'\n\n<javascript:{RUN}> <http://ok.example/?q="><script>{RUN}</script>>'
    + f'\n\n```"><script>{RUN}</script>\ncode </script><script>{RUN}</script>\n```\n'
    + f"\n| a | b |\n|:-:|--:|\n| <script>{RUN}</script> | `</script>` |\n"
    + f"\n[ref]: javascript:{RUN}\n\n[ref] &lt;script&gt; &#60;script&#62;{RUN}&#60;/script&#62;\n"
)
SVG = base64.b64encode(
    f'<svg xmlns="http://www.w3.org/2000/svg" onload="{RUN}"><script>{RUN}</script></svg>'.encode()
).decode()
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
HTML_B64 = base64.b64encode(f"<html><script>{RUN}</script></html>".encode()).decode()
TS = '2026-01-01T00:00:00.000Z"><script>' + RUN + "</script>"


def _id(n: int) -> str:
    # Entry ids land in id attributes and fragment links: try to break out of both.
    return f'h{n}" onmouseover="{RUN}" x="<script>{RUN}</script>'


def _entries() -> list[dict]:
    e: list[dict] = []
    n = 0

    def add(obj: dict, parent: str | None = "last") -> str:
        nonlocal n
        n += 1
        eid = _id(n)
        obj = {
            **obj,
            "id": eid,
            "parentId": e[-1]["id"] if parent == "last" and e else parent,
            "timestamp": TS,
        }
        e.append(obj)
        return eid

    def msg(m: dict, parent: str | None = "last") -> str:
        return add({"type": "message", "message": {**m, "timestamp": 1767225600000}}, parent)

    add({"type": "model_change", "provider": P, "modelId": P}, None)
    add({"type": "thinking_level_change", "thinkingLevel": P})
    msg(
        {
            "role": "system",
            "content": P,
            "sections": {P: P},
            "toolsAdded": [{"name": P, "description": P, "parameters": {P: P}}],
        }
    )
    first = msg({"role": "user", "content": MD})
    msg(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": MD},
                {"type": "image", "data": SVG, "mimeType": "image/svg+xml"},
                {"type": "image", "data": SVG, "mimeType": "image/png"},
                {"type": "image", "data": HTML_B64, "mimeType": "text/html"},
                {"type": "image", "data": PNG, "mimeType": f'image/png" onerror="{RUN}'},
                {"type": "image", "data": f'"><script>{RUN}</script>', "mimeType": "image/png"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": P, P: P},
            ],
        }
    )
    calls = [
        ("bash", {"command": f"echo '</script><script>{RUN}</script>'", "timeout": P}),
        ("read", {"path": f"</script><script>{RUN}</script>.py", "offset": 1, "limit": 5}),
        ("read", {"path": f"x.md{P}"}),
        ("write", {"path": f"{P}.html", "content": P}),
        ("edit", {"path": P, "oldText": P, "newText": MD}),
        ("edit", {"path": P, "edits": [{"oldText": P, "newText": P}]}),
        ("ls", {"path": P, "limit": P}),
        ("grep", {"pattern": P, "path": P}),
        (P, {P: P, "nested": [P, {P: P}]}),
        ("bash", P),
        ("read", [P]),
    ]
    content = [
        {"type": "thinking", "thinking": P, "thinkingSignature": P},
        {"type": "text", "text": MD},
        {"type": "redacted_thinking", "data": P},
        *(
            {"type": "toolCall", "id": f'c{i}"{P}', "name": name, "arguments": args}
            for i, (name, args) in enumerate(calls)
        ),
    ]
    msg(
        {
            "role": "assistant",
            "content": content,
            "provider": P,
            "model": P,
            "api": P,
            "usage": {
                "input": 1,
                "output": 2,
                "cacheRead": 3,
                "cacheWrite": 4,
                "totalTokens": 10,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.5},
            },
            "stopReason": "error",
            "errorMessage": P,
        }
    )
    for i, (name, _args) in enumerate(calls):
        details = {"diff": f"+{P}\n-{P}\n {P}"} if name == "edit" else {P: P}
        msg(
            {
                "role": "toolResult",
                "toolCallId": f'c{i}"{P}',
                "toolName": name if isinstance(name, str) else P,
                "content": [
                    {"type": "text", "text": f"{P}\n" * 30 + "Command exited with code 7"},
                    {"type": "image", "data": SVG, "mimeType": "image/svg+xml"},
                ],
                "details": details,
                "isError": i % 2 == 0,
            }
        )
    msg({"role": "toolResult", "toolCallId": P, "toolName": P, "content": P, "isError": True})
    msg(
        {
            "role": "bashExecution",
            "command": P,
            "output": P,
            "exitCode": 3,
            "cancelled": False,
            "truncated": True,
            "fullOutputPath": P,
        }
    )
    add({"type": "custom_message", "customType": P, "content": MD, "display": False, "details": {P: P}})
    add({"type": "custom", "customType": P, "data": {P: [P]}})
    add({"type": "label", "targetId": first, "label": P})
    add({"type": "label", "targetId": P, "label": P})
    add({"type": "session_info", "name": P})
    add({"type": "context_edit", "targetId": first, "replacement": {"content": P}})
    add({"type": "usage", "kind": P, "provider": P, "model": P, "usage": {"input": 1, "output": 1}})
    branch_point = e[-1]["id"]
    add({"type": "compaction", "summary": MD, "firstKeptEntryId": P, "tokensBefore": 123})
    msg({"role": "user", "content": MD})
    # A second branch from the same point, with its own hostile content and a summary.
    add({"type": "branch_summary", "fromId": P, "summary": MD}, branch_point)
    msg({"role": "assistant", "content": [{"type": "text", "text": MD}], "stopReason": "aborted"})
    add({"type": P, P: P, "data": MD})
    msg({"role": P, "content": P})
    return e


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": P, "timestamp": TS, "cwd": P, "parentSession": P}
    lines = [header, *_entries()]
    (OUT / "html-every-field.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
    )
    # Broken lines mixed in: a line that is not JSON but looks like markup, and raw
    # control characters / noncharacters that must not break the page's validity.
    raw = [
        json.dumps(
            {"type": "session", "version": 3, "id": "s\u0000\ufdd0\ufffe", "timestamp": TS, "cwd": "\u0007"}
        ),
        f"<script>{RUN}</script>",
        json.dumps(
            {
                "type": "message",
                "id": "a",
                "parentId": None,
                "timestamp": TS,
                "message": {
                    "role": "user",
                    "content": "ctl \u0001\u0008\u000b\u007f\u0085 nonchar \ufdd0\ufffe\U0010ffff lone \ud800 end",
                },
            }
        ),
        json.dumps(
            {
                "type": "message",
                "id": "b",
                "parentId": "a",
                "timestamp": TS,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "```\n\ufdd0</script>\n```\n\ufdd0b>"}],
                },
            }
        ),
        '{"type":"message","id":"c","parentId":"b","message":{"role":"user","content":"trunc',
    ]
    (OUT / "html-broken-lines.jsonl").write_text("\n".join(raw) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
