"""A Markdown report as a reader gets it: rendered to HTML by a real CommonMark renderer with GitHub's tables
(markdown-it-py), written next to the Markdown so its relative links resolve as they do on GitHub, and loaded
in headless chromium (perflab's own DevTools driver): which images loaded, which links point nowhere."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from markdown_it import MarkdownIt

from perflab.report.browser.cdp import Chromium

_IMAGES = r"""(() => {
  const imgs = [...document.images];
  return {images: imgs.length,
          broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src')),
          links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))};
})()"""


def render(md_path: Path) -> Path:
    """``report.md`` as ``report.md.html`` beside it."""
    body = MarkdownIt("commonmark").enable("table").render(md_path.read_text(encoding="utf-8"))
    page = md_path.with_name(md_path.name + ".html")
    page.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{md_path.name}</title><style>"
        "body{font:15px/1.5 sans-serif;max-width:980px;margin:24px auto;padding:0 16px}"
        "img{max-width:100%}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px}"
        "pre{background:#f6f8fa;padding:8px;overflow:auto}</style></head><body>"
        f"{body}</body></html>",
        encoding="utf-8",
    )
    return page


def check_markdown(md_path: Path, screenshot: Path | None = None, timeout: float = 60) -> dict:
    """Render ``md_path`` and load it: ``images`` (how many), ``broken_images`` (their src), ``links`` (how many
    point into the report's folder), ``broken_links`` (those whose file is missing, or that leave it),
    ``errors`` (failed loads and requests that would leave the machine), ``screenshot``."""
    page = render(Path(md_path))
    folder = page.parent.resolve()
    with Chromium(timeout=timeout) as browser:
        tab = browser.new_page()
        tab.navigate(page.as_uri(), timeout=timeout)
        tab.wait_for("[...document.images].every(i => i.complete)", timeout)
        found = tab.evaluate(_IMAGES)
        if screenshot is not None:
            tab.screenshot(screenshot, full_page=True)
        errors = [f"failed to load {f}" for f in tab.failed_loads()] + [
            f"network request: {u}" for u in tab.network_requests()
        ]
    local, broken = [], []
    for href in found["links"]:
        if re.match(r"[a-z]+:", href) and not href.startswith("file:"):
            continue  # a link to the web: a reader's choice to follow
        target = (folder / unquote(urlparse(href).path)).resolve()
        local.append(href)
        if not target.is_file() or folder not in target.parents:
            broken.append(href)
    return {
        "images": found["images"],
        "broken_images": found["broken"],
        "links": len(local),
        "broken_links": broken,
        "errors": errors,
        "screenshot": str(screenshot) if screenshot else None,
    }
