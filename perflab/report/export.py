"""Export executed notebooks to self-contained, offline HTML.

nbconvert's ``lab`` template pulls require.js, MathJax and mermaid from CDNs, and plotly's notebook
renderer adds a MathJax ``<script src=...cdnjs...>`` to every figure. The report must open without a
network, so the export

* uses the ``perflab_offline`` template (``templates/``): the lab template without those three loads;
* strips ``<script src="http...">`` tags from the notebook's HTML outputs before templating
  (:class:`StripExternalScripts`): plotly.js itself is embedded once per notebook by the
  ``plotly_mimetype+notebook`` renderer (see :func:`perflab.report.notebook.setup`);
* shows progress bars as their final state (:class:`CollapseCarriageReturns`);
* checks the result with :func:`external_loads` and refuses to write a page that would still load
  something from the network.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from nbconvert.preprocessors import Preprocessor

TEMPLATES = Path(__file__).parent / "templates"
TEMPLATE_NAME = "perflab_offline"

# A <script> with an absolute or protocol-relative src, with its (normally empty) body.
_EXTERNAL_SCRIPT = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>.*?</script\s*>", re.IGNORECASE | re.DOTALL
)


class OfflineExportError(RuntimeError):
    """The exported page would load something from the network."""


class StripExternalScripts(Preprocessor):
    """Remove ``<script src="http(s)://...">`` from HTML outputs (plotly's MathJax CDN tag)."""

    def preprocess_cell(self, cell, resources, index):
        for out in cell.get("outputs", []):
            data = out.get("data")
            if not data or "text/html" not in data:
                continue
            src = data["text/html"]
            text = "".join(src) if isinstance(src, list) else src
            cleaned = _EXTERNAL_SCRIPT.sub("", text)
            if cleaned != text:
                data["text/html"] = cleaned
        return cell, resources


class CollapseCarriageReturns(Preprocessor):
    """Show progress bars as a terminal would. tqdm redraws its bar with '\\r', and the kernel sends each
    redraw as its own stream message: consecutive stream outputs of the same stream are merged, then
    each line keeps only the text after its last carriage return."""

    def preprocess_cell(self, cell, resources, index):
        if cell.get("cell_type") != "code":
            return cell, resources
        merged = []
        for out in cell.get("outputs", []):
            if (out.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                    and merged[-1].get("name") == out.get("name")):
                merged[-1]["text"] = merged[-1]["text"] + out.get("text", "")
            else:
                merged.append(out)
        for out in merged:
            if out.get("output_type") == "stream" and "\r" in out.get("text", ""):
                lines = out["text"].split("\n")
                out["text"] = "\n".join(ln.rstrip("\r").rsplit("\r", 1)[-1] for ln in lines)
        cell["outputs"] = merged
        return cell, resources


# Loads of a page: src= on any element, href= on <link>, url(...) and @import in CSS. Anchors
# (<a href="https://...">) are links a reader may follow, not loads, and are allowed.
_SRC = re.compile(r"<(?P<tag>[a-zA-Z][\w-]*)\b[^>]*?\bsrc\s*=\s*[\"']?(?P<url>[^\"'\s>]+)", re.IGNORECASE)
_LINK = re.compile(r"<link\b[^>]*?\bhref\s*=\s*[\"']?(?P<url>[^\"'\s>]+)", re.IGNORECASE)
_CSS_URL = re.compile(r"(?:@import\s+|url\()\s*[\"']?(?P<url>(?:https?:)?//[^\"')\s;]+)", re.IGNORECASE)
_IMPORT = re.compile(r"\bimport\s*\(?\s*[\"'](?P<url>(?:https?:)?//[^\"']+)[\"']")


def _is_external(url: str) -> bool:
    u = html.unescape(url).strip().lower()
    return u.startswith(("http://", "https://", "//", "ftp://"))


def external_loads(page: str) -> list[str]:
    """Every URL the page would fetch from the network (empty for a self-contained page)."""
    found = []
    for rx in (_SRC, _LINK, _CSS_URL, _IMPORT):
        for m in rx.finditer(page):
            url = m.group("url")
            if _is_external(url):
                found.append(url)
    return sorted(set(found))


def make_exporter() -> HTMLExporter:
    exporter = HTMLExporter(
        template_name=TEMPLATE_NAME,
        extra_template_basedirs=[str(TEMPLATES)],
        embed_images=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    exporter.register_preprocessor(StripExternalScripts(), enabled=True)
    exporter.register_preprocessor(CollapseCarriageReturns(), enabled=True)
    return exporter


def export_notebook(nb_path: Path, html_path: Path, nav_html: str = "", title: str | None = None) -> dict:
    """Write ``nb_path`` as offline HTML at ``html_path``; returns ``{"bytes", "plotly_js_copies"}``."""
    nb_path, html_path = Path(nb_path), Path(html_path)
    nb = nbformat.read(str(nb_path), as_version=4)
    if title:
        nb.metadata["title"] = title
    resources = {"metadata": {"name": title or nb_path.stem, "path": str(nb_path.parent)}, "perflab_nav": nav_html}
    body, _ = make_exporter().from_notebook_node(nb, resources=resources)
    loads = external_loads(body)
    if loads:
        raise OfflineExportError(f"{html_path.name} would load from the network: {', '.join(loads[:5])}")
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(body, encoding="utf-8")
    return {"bytes": len(body.encode("utf-8")), "plotly_js_copies": plotly_js_copies(body)}


def plotly_js_copies(page: str) -> int:
    """How many copies of the plotly.js bundle a page embeds (its licence banner opens each one)."""
    return len(re.findall(r"\* plotly\.js v\d+\.\d+\.\d+", page))
