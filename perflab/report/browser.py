"""Open exported pages in a real headless chromium and check that the plots are drawn.

No WebDriver and no browser download: Debian's ``chromium`` (``scripts/apt-ensure chromium``) is run in
headless mode with ``--dump-dom`` (the DOM after the page's scripts ran, within a virtual-time budget),
``--screenshot`` (a PNG for a person to look at) and ``--enable-logging=stderr`` (the page's console
messages, one ``CONSOLE`` line each, which is where uncaught script errors and failed loads show up).

Every host name resolves to nothing (``--host-resolver-rules``), so a page that tries to fetch anything
from the network shows a ``net::ERR_NAME_NOT_RESOLVED`` error instead of hanging or silently
succeeding. As root chromium needs ``--no-sandbox``; the other flags keep it from phoning home on a
closed network (where it would otherwise hang).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--enable-logging=stderr",
    "--v=1",   # verbose level 1 logs every URL request (NotifyBeforeURLRequest), which the check reads
]

# Requests chromium itself makes (component updater, account probes) even with the flags above; they
# fail at the host resolver. Anything else fetched over the network came from the page.
_BROWSER_INTERNAL = re.compile(r"^https?://([\w.-]+\.)?(google\.com|googleapis\.com|gvt1\.com)(:\d+)?/")
_REQUEST = re.compile(r"NotifyBeforeURLRequest: (?P<url>\S+)")

# "[pid:tid:date:INFO:CONSOLE:12] "message", source: file:///x.html (12)" (older builds: CONSOLE(12))
_CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]\s*\"(?P<msg>.*)\", source: (?P<src>\S*)")
_ERROR_WORDS = re.compile(r"Uncaught|Error|error|Failed to load|net::ERR_|Refused")


@dataclass
class PageCheck:
    page: str
    plot_divs: int = 0            # plotly-graph-div elements in the rendered DOM
    drawn_plots: int = 0          # of them, the ones plotly drew (class js-plotly-plot)
    main_svg: int = 0             # plotly's <svg class="main-svg"> nodes
    modebars: int = 0             # plotly's interactive toolbars (zoom, pan, hover modes)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    network: list[str] = field(default_factory=list)   # URLs the page tried to fetch from the network
    screenshot: str | None = None
    seconds: float = 0.0
    returncode: int | None = None

    @property
    def ok(self) -> bool:
        return (self.returncode == 0 and not self.errors and self.drawn_plots == self.plot_divs
                and (self.plot_divs == 0 or self.main_svg >= self.plot_divs))

    def summary(self) -> str:
        s = f"{self.drawn_plots}/{self.plot_divs} plots drawn ({self.main_svg} main-svg nodes), "
        s += f"{len(self.errors)} errors, {len(self.network)} network requests"
        if self.errors:
            s += ": " + "; ".join(self.errors[:3])
        return s


def find_chromium() -> str | None:
    for name in (os.environ.get("PERFLAB_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def check_page(page: str | os.PathLike, screenshot: str | os.PathLike | None = None, *,
               width: int = 1280, height: int = 2400, budget_ms: int = 8000, timeout: float = 90,
               chromium: str | None = None) -> PageCheck:
    """Render ``page`` (a file path) in headless chromium; count plotly's drawn plots and script errors."""
    chromium = chromium or find_chromium()
    if not chromium:
        raise FileNotFoundError("chromium not found: install it with `scripts/apt-ensure chromium`")
    page = Path(page).resolve()
    if not page.is_file():
        raise FileNotFoundError(f"page {page} does not exist")
    result = PageCheck(page=str(page))
    with tempfile.TemporaryDirectory(prefix="perflab-chromium-") as profile:
        cmd = [chromium, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
               f"--virtual-time-budget={budget_ms}", "--dump-dom"]
        if screenshot:
            screenshot = Path(screenshot).resolve()
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            cmd.append(f"--screenshot={screenshot}")
        cmd.append(page.as_uri())
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            result.errors.append(f"chromium did not finish within {timeout:.0f} s")
        result.seconds = time.monotonic() - t0
        result.returncode = proc.returncode
    dom = out.decode("utf-8", "replace")
    result.plot_divs = len(re.findall(r'class="[^"]*\bplotly-graph-div\b', dom))
    result.drawn_plots = len(re.findall(r'class="[^"]*\bjs-plotly-plot\b', dom))
    result.main_svg = len(re.findall(r'<svg[^>]*class="[^"]*\bmain-svg\b', dom))
    result.modebars = len(re.findall(r'class="[^"]*\bmodebar-container\b', dom))
    for line in err.decode("utf-8", "replace").splitlines():
        r = _REQUEST.search(line)
        if r:
            url = r.group("url")
            if url.startswith(("http:", "https:", "ws:", "wss:")) and not _BROWSER_INTERNAL.match(url):
                if url not in result.network:
                    result.network.append(url)
                    result.errors.append(f"network request from the page: {url}")
            continue
        m = _CONSOLE.search(line)
        if m:
            msg = f"{m.group('msg')} ({m.group('src')})"
            result.console.append(msg)
            if _ERROR_WORDS.search(m.group("msg")):
                result.errors.append(msg)
    if screenshot:
        if Path(screenshot).is_file() and Path(screenshot).stat().st_size > 0:
            result.screenshot = str(screenshot)
        else:
            result.errors.append("chromium wrote no screenshot")
    if result.returncode != 0 and not result.errors:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-5:]
        result.errors.append(f"chromium exited with {result.returncode}: " + " | ".join(tail))
    return result
