"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (standard
library only), for the browser tests: open a page with or without JavaScript, collect
console errors and exceptions, query the DOM, click where a user would.

Messages are JSON objects separated by NUL bytes: commands go to the browser's file
descriptor 3, replies and events come back on 4.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import subprocess
import tempfile
import time
from typing import Any


class CDPError(RuntimeError):
    pass


class Browser:
    def __init__(self, chromium: str, width: int = 1400, height: int = 900) -> None:
        self._profile = tempfile.TemporaryDirectory()
        to_browser, self._w = os.pipe()
        self._r, from_browser = os.pipe()
        # Above 9, so that putting them on 3 and 4 cannot overwrite one with the other.
        for name in ("to_browser", "from_browser"):
            fd = locals()[name]
            high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
            os.close(fd)
            if name == "to_browser":
                to_browser = high
            else:
                from_browser = high
        cmd = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile.name}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        # The browser expects the pipe on descriptors 3 and 4; bash puts them there (dash
        # cannot name descriptors above 9).
        self._proc = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{to_browser} 4>&{from_browser}', "bash", *cmd],
            pass_fds=(to_browser, from_browser),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buf = b""
        self._n = 0
        self.events: list[dict[str, Any]] = []
        self.size = (width, height)

    def close(self) -> None:
        with contextlib.suppress(CDPError, OSError, TimeoutError, EOFError):
            self.send("Browser.close", timeout=5)
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._w)
        os.close(self._r)
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = 60,
    ) -> Any:
        self._n += 1
        msg: dict[str, Any] = {"id": self._n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        while True:
            reply = self._read(end)
            if reply.get("id") == self._n:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str, timeout: float = 60) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev.get("method") == method and ev.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._read(end))

    def _read(self, end: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise TimeoutError("the browser did not answer")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise EOFError("the browser closed the pipe")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)

    def open(self, url: str, *, javascript: bool = True, timezone: str | None = None) -> Page:
        """``url`` in a new tab, with or without script, in the IANA ``timezone`` given
        (default: the machine's)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "DOM"):
            page.send(f"{domain}.enable")
        if not javascript:
            page.send("Emulation.setScriptExecutionDisabled", {"value": True})
        if timezone is not None:
            page.send("Emulation.setTimezoneOverride", {"timezoneId": timezone})
        page.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired", session)
        return page


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self.browser.send(method, params, self.session)

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (CSP refusals among
        them) reported so far."""
        self.send("Runtime.evaluate", {"expression": "1"})  # let pending events arrive
        found: list[str] = []
        for ev in self.browser.events:
            if ev.get("sessionId") != self.session:
                continue
            p = ev.get("params", {})
            if ev.get("method") == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                found.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
            elif ev.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                found.append(
                    "console: "
                    + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", []))
                )
            elif ev.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                found.append("log: " + str(p["entry"].get("text")))
        return found

    def node(self, selector: str) -> int:
        root = self.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = self.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        if not node:
            raise CDPError(f"nothing matches {selector!r}")
        return int(node)

    def box(self, selector: str) -> tuple[float, float, float, float] | None:
        """The border box (x, y, width, height) of the first match, ``None`` when it is
        not rendered (display: none, or inside a closed <details>)."""
        try:
            quad = self.send("DOM.getBoxModel", {"nodeId": self.node(selector)})["model"]["border"]
        except CDPError as e:
            if "box model" in str(e).lower():
                return None
            raise
        xs, ys = quad[0::2], quad[1::2]
        return min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)

    def evaluate(self, expression: str) -> Any:
        """The value of ``expression``, evaluated by the test (also on a page whose own
        script is disabled)."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in reply:
            raise CDPError(f"{expression}: {reply['exceptionDetails'].get('text')}")
        return reply["result"].get("value")

    def visible(self, selector: str) -> bool:
        """Rendered: not display:none, not hidden, not inside a closed <details>
        (Element.checkVisibility)."""
        return bool(
            self.evaluate(
                f"(function () {{ var e = document.querySelector({json.dumps(selector)});"
                " return !!e && e.checkVisibility({visibilityProperty: true}); })()"
            )
        )

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element (scrolled into view first)."""
        self.send("DOM.scrollIntoViewIfNeeded", {"nodeId": self.node(selector)})
        b = self.box(selector)
        if b is None:
            raise CDPError(f"{selector!r} is not rendered")
        x, y = b[0] + min(b[2] / 2, 40), b[1] + b[3] / 2
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}
            )
        self.send("Runtime.evaluate", {"expression": "1"})
        time.sleep(0.3)  # the navigation to the fragment, and the script's response to it

    def html(self) -> str:
        root = self.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        return str(self.send("DOM.getOuterHTML", {"nodeId": root})["outerHTML"])

    def screenshot(self, path: str) -> None:
        import base64

        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
