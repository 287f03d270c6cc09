"""A small DevTools-protocol client for Debian's chromium, in plain Python.

Chromium started with ``--remote-debugging-pipe`` reads protocol commands from file descriptor 3 and
writes replies and events to descriptor 4, each message a JSON object ended by a NUL byte. That needs
no port, no websocket library and no browser download, and it lets the report's checks do what
``--dump-dom`` cannot: click a button and look again, read console messages and exceptions as they
happen, list every request the page makes, and take screenshots of any size.

    with Chromium() as browser:
        page = browser.new_page()
        page.navigate(Path("index.html").resolve().as_uri())
        page.evaluate("document.title")
        page.screenshot("index.png")

Every host name resolves to nothing (``--host-resolver-rules``), so a page that tries the network
fails at once instead of hanging; the requests it tried are still listed by :meth:`Page.requests`.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

#: Headless, offline, and quiet: without the last five flags chromium tries to reach Google's services
#: on start and, on a closed network, waits for them.
FLAGS = [
    "--headless",
    "--no-sandbox",  # root in CI and containers
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: URL schemes a page may load from without leaving the machine.
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


class BrowserError(RuntimeError):
    """Chromium could not be started, died, or did not answer in time."""


def find_chromium() -> str | None:
    for name in (os.environ.get("PERFLAB_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Chromium:
    """One headless chromium process with a fresh profile, driven over the DevTools pipe."""

    def __init__(self, chromium: str | None = None, width: int = 1280, height: int = 1600, timeout: float = 60.0):
        self.binary = chromium or find_chromium()
        if not self.binary:
            raise FileNotFoundError("chromium not found: install it with `scripts/apt-ensure chromium`")
        self.width, self.height, self.timeout = width, height, timeout
        self._profile = tempfile.mkdtemp(prefix="perflab-chromium-")
        self._log = open(Path(self._profile) / "stderr.log", "w+b")  # noqa: SIM115 - closed in close()
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        self._proc = self._start()

    def _start(self) -> subprocess.Popen:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The pipe ends must become fds 3 and 4 in the child. bash does the renumbering (dash cannot
        # name fds above 9); moving them above 9 first keeps the two dups from clobbering each other.
        r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)
        argv = [
            self.binary,
            *FLAGS,
            f"--user-data-dir={self._profile}",
            "--remote-debugging-pipe",
            f"--window-size={self.width},{self.height}",
            "about:blank",
        ]
        script = f'exec "$@" 3<&{r} 4>&{w} {r}<&- {w}>&-'
        try:
            proc = subprocess.Popen(
                ["bash", "-c", script, "chromium", *argv],
                pass_fds=(r, w),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
                start_new_session=True,
            )
        finally:
            os.close(r)
            os.close(w)
        return proc

    # --- protocol ---------------------------------------------------------------------------------

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._to_browser, data) :]
        except (BrokenPipeError, OSError) as e:
            raise BrowserError(f"chromium is gone ({e}); its log: {self.log_tail()}") from None
        return self._id

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"chromium did not answer within {self.timeout:.0f} s")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium closed the DevTools pipe; its log: {self.log_tail()}")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(
        self, method: str, params: dict | None = None, session: str | None = None, timeout: float | None = None
    ) -> dict:
        """Send a command and return its result; events that arrive meanwhile go to :attr:`events`."""
        want = self.send(method, params, session)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._read_message(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise BrowserError(
                        f"{method}: {msg['error'].get('message')} {msg['error'].get('data', '')}".strip()
                    )
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def pump(self, seconds: float) -> None:
        """Collect the events that arrive within ``seconds``."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                msg = self._read_message(deadline)
                if "method" in msg:
                    self.events.append(msg)
        except BrowserError as e:
            if "did not answer" not in str(e):
                raise

    def new_page(self) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session, target)
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable", session=session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        return page

    # --- lifetime ---------------------------------------------------------------------------------

    def log_tail(self, lines: int = 5) -> str:
        try:
            self._log.flush()
            text = Path(self._log.name).read_text(errors="replace")
        except OSError:
            return ""
        return " | ".join(text.strip().splitlines()[-lines:])

    def _exited(self) -> bool:
        """Whether chromium has exited, without reaping it (its pid stays reserved until wait())."""
        try:
            return os.waitid(os.P_PID, self._proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def close(self) -> None:
        if not self._exited():
            try:
                self.call("Browser.close", timeout=10)
            except BrowserError:
                pass
            self._wait_exit_unreaped(10)
        # Helper processes (renderer, zygote) share chromium's process group. The leader is not reaped
        # yet (see _wait_exit_unreaped), so the group id still belongs to this chromium alone.
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _wait_exit_unreaped(self, seconds: float) -> None:
        """Wait until chromium has exited, leaving it a zombie (WNOWAIT) so its pid is not reused."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self._exited():
            time.sleep(0.05)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    """One tab, attached in flat mode (its messages carry its session id)."""

    def __init__(self, browser: Chromium, session: str, target: str | None = None):
        self.browser, self.session, self.target = browser, session, target

    def close(self) -> None:
        """Close this tab and forget its events (a browser that checks page after page keeps only its own)."""
        if self.target is not None:
            self.browser.call("Target.closeTarget", {"targetId": self.target})
        self.browser.events = [e for e in self.browser.events if e.get("sessionId") != self.session]

    def call(self, method: str, params: dict | None = None, timeout: float | None = None) -> dict:
        return self.browser.call(method, params, self.session, timeout)

    def _events(self, *methods: str) -> list[dict]:
        return [
            e["params"]
            for e in self.browser.events
            if e.get("sessionId") == self.session and e.get("method") in methods
        ]

    def navigate(self, url: str, timeout: float | None = None) -> None:
        """Open ``url`` and wait for its load event."""
        before = len(self._events("Page.loadEventFired"))
        res = self.call("Page.navigate", {"url": url})
        if res.get("errorText"):
            raise BrowserError(f"could not open {url}: {res['errorText']}")
        deadline = time.monotonic() + (timeout or self.browser.timeout)
        while len(self._events("Page.loadEventFired")) == before:
            if time.monotonic() > deadline:
                raise BrowserError(f"{url} did not finish loading within {timeout or self.browser.timeout:.0f} s")
            self.browser.pump(0.1)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (promises awaited); a thrown error raises."""
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise BrowserError(f"script error: {(d.get('exception') or {}).get('description') or d.get('text')}")
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 30.0, interval: float = 0.1):
        """Evaluate ``expression`` until it is truthy; returns its value, or the last one on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value or time.monotonic() > deadline:
                return value
            self.browser.pump(interval)

    def click(self, selector: str, index: int = 0) -> None:
        """A real mouse click (press and release) in the middle of the ``index``-th match of
        ``selector``, scrolled into view first; fails if nothing matches or it has no size."""
        sel = json.dumps(selector)
        rect = self.evaluate(f"""(() => {{
            const el = document.querySelectorAll({sel})[{int(index)}];
            if (!el) return null;
            el.scrollIntoView({{block: 'center'}});
            const r = el.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2, r.width, r.height];
        }})()""")
        if not rect:
            raise BrowserError(f"click: nothing matches {selector!r} (index {index})")
        if rect[2] <= 0 or rect[3] <= 0:
            raise BrowserError(f"click: {selector!r} (index {index}) is not visible")
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": rect[0], "y": rect[1], "button": "left", "clickCount": 1},
            )

    def screenshot(self, path: str | os.PathLike, full_page: bool = False) -> Path:
        params: dict = {"format": "png"}
        if full_page:
            size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params.update(
                captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
            )
        data = self.call("Page.captureScreenshot", params)["data"]
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(data))
        return out

    # --- what the page did ------------------------------------------------------------------------

    def requests(self) -> list[str]:
        """Every URL the page requested (documents, scripts, images, fetches), in order."""
        out = []
        for p in self._events("Network.requestWillBeSent"):
            url = p["request"]["url"]
            if url not in out:
                out.append(url)
        return out

    def network_requests(self) -> list[str]:
        """The requests that would leave the machine (anything but file:, data:, blob:, about:)."""
        return [u for u in self.requests() if not u.startswith(LOCAL_SCHEMES)]

    def failed_loads(self) -> list[str]:
        failed = {p["requestId"]: p.get("errorText", "failed") for p in self._events("Network.loadingFailed")}
        urls = {p["requestId"]: p["request"]["url"] for p in self._events("Network.requestWillBeSent")}
        return [f"{urls.get(r, '?')}: {why}" for r, why in failed.items()]

    def errors(self) -> list[str]:
        """Uncaught exceptions, console.error/assert calls and error-level log entries."""
        out = []
        for p in self._events("Runtime.exceptionThrown"):
            d = p["exceptionDetails"]
            out.append(
                "uncaught: " + ((d.get("exception") or {}).get("description") or d.get("text", "")).splitlines()[0]
            )
        for p in self._events("Runtime.consoleAPICalled"):
            if p.get("type") in ("error", "assert"):
                out.append(
                    "console.error: "
                    + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                )
        for p in self._events("Log.entryAdded"):
            e = p["entry"]
            if e.get("level") == "error":
                out.append(f"log: {e.get('text', '')} ({e.get('url', '')})")
        return out

    def console(self) -> list[str]:
        return [
            f"{p.get('type')}: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            for p in self._events("Runtime.consoleAPICalled")
        ]
