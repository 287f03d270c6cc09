"""Open report pages in a real headless chromium and check what a reader would see.

:func:`check_page` loads a page from ``file://`` through the DevTools protocol (:mod:`.cdp`), waits
until every plotly figure is drawn, and records

* the figures: how many, how many drawn, which lack a title or an axis title, which have an axis whose range
  no measured quantity has (not finite, more than 12 decades on a log axis, beyond 1e15 on a linear one),
  which are drawn with no data at all;
* what went wrong: uncaught exceptions, ``console.error``, failed loads (a missing local file too);
* every request that would leave ``file://`` (none may: the report is read offline);
* the code toggles of notebook pages: code hidden at first, the page's "show all code" button shows
  every cell's code and hides it again, one cell's "show code" opens that cell alone; all by real
  mouse clicks;
* the collapsed console outputs (``<details>``): closed at first, each with a one-line summary;
* a screenshot of the first screen (``screenshot=``) and optionally of the whole page.
"""

from __future__ import annotations

import os
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .cdp import BrowserError, Chromium

#: how long a page may take to load and draw (each wait), in seconds
PAGE_TIMEOUT = 90.0

# Figures drawn: plotly marks a div it has drawn with js-plotly-plot and gives it an svg.main-svg.
_FIGURES = r"""(() => {
  const divs = [...document.querySelectorAll('.plotly-graph-div')];
  const out = {divs: divs.length, drawn: 0, main_svg: document.querySelectorAll('svg.main-svg').length,
               modebars: document.querySelectorAll('.modebar-container').length, untitled: [], unlabelled: [],
               absurd: [], empty: []};
  const points = t => ['x', 'y', 'z', 'values', 'labels'].reduce((n, k) =>
      Math.max(n, (t[k] && t[k].length) || 0), 0);
  divs.forEach((d, i) => {
    if (!d.classList.contains('js-plotly-plot') || !d.querySelector('svg.main-svg')) return;
    out.drawn += 1;
    const name = (d.id || ('figure ' + i));
    const shownTraces = (d._fullData || []).filter(t => t.visible !== false);
    if (!shownTraces.some(t => points(t) > 0)) out.empty.push(name);
    const title = d.querySelector('.gtitle');
    if (!title || !title.textContent.trim()) out.untitled.push(name);
    const fl = d._fullLayout || {};
    for (const key of Object.keys(fl)) {
      if (!/^[xy]axis\d*$/.test(key)) continue;
      const ax = fl[key];
      if (!ax || ax.visible === false || !ax._id) continue;
      const hasData = (d._fullData || []).some(t => t.visible !== false &&
          ((key[0] === 'x' ? t.xaxis : t.yaxis) === ax._id));
      if (!hasData) continue;
      // an axis shares the title of the subplot below it when it is matched to it (shared x)
      const titled = ax.title && ax.title.text && String(ax.title.text).trim();
      const shared = key[0] === 'x' && ax.matches;
      if (!titled && !shared) out.unlabelled.push(name + ' ' + key);
      // a range no measured quantity has: not finite, over 12 decades on a log axis, beyond 1e15 on a linear one
      const r = ax.range;
      if (ax.type === 'date' || ax.type === 'category' || !r || r.length !== 2) continue;
      const lo = Number(r[0]), hi = Number(r[1]);
      const span = ax.type === 'log' ? Math.abs(hi - lo) : Math.max(Math.abs(lo), Math.abs(hi));
      if (!isFinite(lo) || !isFinite(hi) || (ax.type === 'log' ? span > 12 : span > 1e15))
        out.absurd.push(name + ' ' + key + ' [' + r[0] + ', ' + r[1] + ']' + (ax.type === 'log' ? ' (log)' : ''));
    }
  });
  return out;
})()"""

_CODE_STATE = r"""(() => {
  const cells = [...document.querySelectorAll('details.perflab-code')];
  const shown = d => { const c = d.querySelector('.jp-InputArea'); return !!c && c.checkVisibility({visibilityProperty: true, opacityProperty: true}) && c.offsetHeight > 0; };
  return {cells: cells.length, open: cells.filter(d => d.open).length, visible: cells.filter(shown).length,
          button: (document.querySelector('.perflab-code-all') || {}).textContent || null};
})()"""

_CONSOLES = r"""(() => {
  const all = [...document.querySelectorAll('details.perflab-console')];
  return {count: all.length, open: all.filter(d => d.open).length,
          summaries: all.map(d => (d.querySelector('summary') || {}).textContent || '').map(s => s.trim()),
          text_chars: all.reduce((n, d) => n + ((d.querySelector('pre') || {}).textContent || '').length, 0)};
})()"""


@dataclass
class PageCheck:
    page: str
    title: str = ""
    plot_divs: int = 0  # plotly-graph-div elements in the page
    drawn_plots: int = 0  # of them, the ones plotly drew (js-plotly-plot with an svg.main-svg)
    main_svg: int = 0
    modebars: int = 0  # plotly's interactive toolbars
    untitled_plots: list[str] = field(default_factory=list)
    unlabelled_axes: list[str] = field(default_factory=list)
    absurd_axes: list[str] = field(default_factory=list)  # a range no measured quantity has (non-finite, 10^270)
    empty_plots: list[str] = field(default_factory=list)  # drawn with no data at all
    code: dict = field(default_factory=dict)  # the toggle checks (empty when the page has no code)
    consoles: dict = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)  # every URL the page loaded
    network: list[str] = field(default_factory=list)  # of them, the ones that would leave the machine
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    screenshot: str | None = None
    full_screenshot: str | None = None
    seconds: float = 0.0

    @property
    def toggles_work(self) -> bool:
        c = self.code
        return not c or c.get("works", False)

    @property
    def ok(self) -> bool:
        return (
            not self.errors
            and not self.network
            and self.drawn_plots == self.plot_divs
            and self.main_svg >= self.plot_divs
            and self.toggles_work
            and not self.consoles.get("open")
            and not self.absurd_axes
            and not self.empty_plots
        )

    def summary(self) -> str:
        s = f"{self.drawn_plots}/{self.plot_divs} plots drawn, "
        if self.code:
            s += f"{self.code['cells']} code cells hidden and toggled {'correctly' if self.toggles_work else 'WRONGLY'}, "
        s += f"{len(self.errors)} errors, {len(self.network)} network requests"
        if self.absurd_axes:
            s += f", absurd axes: {'; '.join(self.absurd_axes[:3])}"
        if self.empty_plots:
            s += f", empty figures: {', '.join(self.empty_plots[:3])}"
        if self.errors:
            s += ": " + "; ".join(self.errors[:3])
        return s

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok, "summary": self.summary()}


def check_page(
    page: str | os.PathLike,
    screenshot: str | os.PathLike | None = None,
    *,
    full_screenshot: str | os.PathLike | None = None,
    width: int = 1280,
    height: int = 1600,
    timeout: float = PAGE_TIMEOUT,
    chromium: str | None = None,
    toggles: bool = True,
    browser: Chromium | None = None,
) -> PageCheck:
    """Render ``page`` (a file) in headless chromium and check it (see the module docstring).

    ``timeout`` bounds each wait (loading, drawing); a page whose plots are not drawn by then is
    reported with an error, not waited for forever. ``browser``: a chromium already running (its own size and
    timeout), the page checked in a tab of its own that is closed after; else one started for this page."""
    page = Path(page).resolve()
    if not page.is_file():
        raise FileNotFoundError(f"page {page} does not exist")
    result = PageCheck(page=str(page))
    t0 = time.monotonic()
    shared = browser is not None
    with nullcontext(browser) if shared else Chromium(chromium, width=width, height=height, timeout=timeout) as browser:
        tab = browser.new_page()
        try:
            tab.navigate(page.as_uri(), timeout=timeout)
            drawn = tab.wait_for(
                "document.querySelectorAll('.plotly-graph-div').length === "
                "document.querySelectorAll('.plotly-graph-div.js-plotly-plot').length",
                timeout,
            )
            if not drawn:
                result.errors.append(f"plots not drawn within {timeout:.0f} s")
            figs = tab.evaluate(_FIGURES)
            result.title = tab.evaluate("document.title") or ""
            result.plot_divs, result.drawn_plots = figs["divs"], figs["drawn"]
            result.main_svg, result.modebars = figs["main_svg"], figs["modebars"]
            result.untitled_plots, result.unlabelled_axes = figs["untitled"], figs["unlabelled"]
            result.absurd_axes, result.empty_plots = figs["absurd"], figs["empty"]
            result.consoles = tab.evaluate(_CONSOLES)
            if screenshot:
                result.screenshot = str(tab.screenshot(screenshot))
            if full_screenshot:
                result.full_screenshot = str(tab.screenshot(full_screenshot, full_page=True))
            if toggles:
                result.code = _check_code_toggles(tab)
            browser.pump(0.2)  # late console messages
        except BrowserError as e:
            result.errors.append(str(e))
        result.requests = tab.requests()
        result.network = tab.network_requests()
        result.errors += tab.errors() + [f"failed to load {f}" for f in tab.failed_loads()]
        result.errors += [f"network request from the page: {u}" for u in result.network]
        result.console = tab.console()
        if shared:
            tab.close()
    result.seconds = round(time.monotonic() - t0, 2)
    return result


def _check_code_toggles(tab) -> dict:
    """Code hidden at first; the page button shows all and hides all; a cell's summary opens that cell."""
    first = tab.evaluate(_CODE_STATE)
    if not first["cells"]:
        return {}
    n = first["cells"]
    out = {"cells": n, "hidden_at_load": first["open"] == 0 and first["visible"] == 0, "button": first["button"]}
    tab.click(".perflab-code-all")
    shown = tab.evaluate(_CODE_STATE)
    out["all_shown_by_button"] = shown["open"] == n and shown["visible"] == n
    out["button_after_click"] = shown["button"]
    tab.click(".perflab-code-all")
    hidden = tab.evaluate(_CODE_STATE)
    out["all_hidden_again"] = hidden["open"] == 0 and hidden["visible"] == 0
    tab.click("details.perflab-code > summary", index=n - 1)
    one = tab.evaluate(_CODE_STATE)
    last_open = tab.evaluate(
        "(() => { const a = document.querySelectorAll('details.perflab-code'); return a[a.length - 1].open; })()"
    )
    out["one_cell_opens_alone"] = one["open"] == 1 and one["visible"] == 1 and bool(last_open)
    tab.click("details.perflab-code > summary", index=n - 1)
    out["one_cell_closes"] = tab.evaluate(_CODE_STATE)["open"] == 0
    out["works"] = all(
        out[k]
        for k in (
            "hidden_at_load",
            "all_shown_by_button",
            "all_hidden_again",
            "one_cell_opens_alone",
            "one_cell_closes",
        )
    )
    return out
