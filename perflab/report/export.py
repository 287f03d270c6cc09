"""Export executed notebooks to offline HTML pages that lead with results.

A page is written by nbconvert with the ``perflab_offline`` template (``templates/``), which loads
nothing from the network and

* loads plotly.js from ``assets/plotly.min.js`` next to the page, one copy per report folder
  (:func:`ensure_plotly_js`); each figure is drawn from the notebook's own plotly JSON output
  (:class:`PlotlyFigures`), so neither the page nor the executed notebook carries the 4.8 MB bundle;
* hides every cell's code in a ``<details class="perflab-code">`` (closed, "show code"), with a
  "show all code" button in the page's navigation bar;
* shows the notebook's finding (:mod:`.findings`) at the top of the page, linked to the cell;
* copies async-profiler's flame graphs next to the page (``flamegraphs/``) and links them, with the
  preview the notebook drew (:class:`FlameGraphLinks`, see :func:`perflab.analysis.profiles.flamegraph`);
* folds each cell's stderr into a closed ``<details>`` after removing the kernel's start-up warnings
  and progress bars, which say nothing about the experiment (:class:`TidyStderr`); the executed
  notebook keeps them;
* strips ``<script src="http...">`` tags from HTML outputs (:class:`StripExternalScripts`), and checks
  the result with :func:`external_loads`: a page that would still load something from the network
  is not written.

Nothing else is dropped: hidden code and collapsed output stay in the HTML.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import nbformat
import plotly
import plotly.io as pio
from nbconvert import HTMLExporter
from nbconvert.preprocessors import Preprocessor

from ..analysis import findings
from ..analysis.profiles import FLAMEGRAPH_MIME, flamegraph_html

TEMPLATES = Path(__file__).parent / "templates"
TEMPLATE_NAME = "perflab_offline"
PLOTLY_MIME = "application/vnd.plotly.v1+json"
ASSETS = "assets"
PLOTLY_JS = "plotly.min.js"
FLAMEGRAPHS = "flamegraphs"

# A <script> with an absolute or protocol-relative src, with its (normally empty) body.
_EXTERNAL_SCRIPT = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>.*?</script\s*>", re.IGNORECASE | re.DOTALL
)


class OfflineExportError(RuntimeError):
    """The exported page would load something from the network."""


def plotly_js_source() -> Path:
    """The plotly.js bundle shipped inside the installed plotly package."""
    p = Path(plotly.__file__).parent / "package_data" / PLOTLY_JS
    if not p.is_file():
        raise FileNotFoundError(f"plotly.js not found in the plotly package ({p}): reinstall plotly")
    return p


def ensure_plotly_js(folder: Path) -> Path:
    """``folder/assets/plotly.min.js``, copied from the plotly package unless an identical copy is there."""
    src = plotly_js_source()
    dst = Path(folder) / ASSETS / PLOTLY_JS
    if not (dst.is_file() and dst.stat().st_size == src.stat().st_size and dst.read_bytes() == src.read_bytes()):
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    return dst


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


class StripExternalScripts(Preprocessor):
    """Remove ``<script src="http(s)://...">`` from HTML outputs (plotly's MathJax CDN tag)."""

    def preprocess_cell(self, cell, resources, index):
        for out in cell.get("outputs", []):
            data = out.get("data")
            if not data or "text/html" not in data:
                continue
            text = _text(data["text/html"])
            cleaned = _EXTERNAL_SCRIPT.sub("", text)
            if cleaned != text:
                data["text/html"] = cleaned
        return cell, resources


class PlotlyFigures(Preprocessor):
    """Draw each figure from its plotly JSON with the page's shared plotly.js.

    Whatever HTML the kernel's renderer wrote is replaced, and outputs that only carried a copy of
    the plotly.js bundle (the ``notebook`` renderer's first output) are dropped, so notebooks run
    with either renderer export the same way."""

    def preprocess_cell(self, cell, resources, index):
        if cell.get("cell_type") != "code":
            return cell, resources
        kept = []
        for k, out in enumerate(cell.get("outputs", [])):
            data = out.get("data") or {}
            if PLOTLY_MIME in data:
                fig = data[PLOTLY_MIME]
                height = (fig.get("layout") or {}).get("height") or 480
                data["text/html"] = pio.to_html(
                    fig,
                    include_plotlyjs=False,
                    full_html=False,
                    validate=False,
                    div_id=f"figure-{index}-{k}",
                    default_height=f"{int(height)}px",
                    config={"responsive": True, **(fig.get("config") or {})},
                )
            elif set(data) <= {"text/html", "text/plain"} and plotly_js_copies(_text(data.get("text/html"))):
                continue
            kept.append(out)
        cell["outputs"] = kept
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
            if (
                out.get("output_type") == "stream"
                and merged
                and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")
            ):
                merged[-1]["text"] = merged[-1]["text"] + out.get("text", "")
            else:
                merged.append(out)
        for out in merged:
            if out.get("output_type") == "stream" and "\r" in out.get("text", ""):
                lines = out["text"].split("\n")
                out["text"] = "\n".join(ln.rstrip("\r").rsplit("\r", 1)[-1] for ln in lines)
        cell["outputs"] = merged
        return cell, resources


# Kernel start-up noise (ipykernel's transport warning, JPype/JVM banners are *not* matched: a JVM
# warning may matter) and tqdm bars ("desc:  50%|#####     | 1/2 [00:02<00:02, 2.45s/probe]").
_KERNEL_NOISE = re.compile(r"^\[IPKernelApp\] WARNING \| Kernel is running over TCP without encryption\b.*$")
_TQDM_BAR = re.compile(r"^.*\d+%\|.*\|\s*\d+/\d+ \[[\d:<.?, ]+.*\]\s*$")


def is_noise(line: str) -> bool:
    return bool(_KERNEL_NOISE.match(line) or _TQDM_BAR.match(line))


class TidyStderr(Preprocessor):
    """Drop kernel warnings and progress bars from stderr; fold what is left into a closed
    ``<details>`` whose summary is its first line (runs after :class:`CollapseCarriageReturns`)."""

    def preprocess_cell(self, cell, resources, index):
        if cell.get("cell_type") != "code":
            return cell, resources
        outs = []
        for out in cell.get("outputs", []):
            if out.get("output_type") != "stream" or out.get("name") != "stderr":
                outs.append(out)
                continue
            lines = [ln for ln in out.get("text", "").split("\n") if not is_noise(ln)]
            text = "\n".join(lines).strip("\n")
            if not text.strip():
                continue
            first = next(ln for ln in text.splitlines() if ln.strip()).strip()
            n = len(text.splitlines())
            summary = html.escape(first if len(first) <= 110 else first[:107] + "...")
            more = f" <span class='perflab-muted'>({n} lines)</span>" if n > 1 else ""
            outs.append(
                nbformat.v4.new_output(
                    "display_data",
                    data={
                        "text/html": (
                            f"<details class='perflab-stderr'><summary>stderr: {summary}{more}</summary>"
                            f"<pre>{html.escape(text)}</pre></details>"
                        ),
                        "text/plain": text,
                    },
                )
            )
        cell["outputs"] = outs
        return cell, resources


class FlameGraphLinks(Preprocessor):
    """Copy each flame graph a cell showed (:func:`perflab.analysis.profiles.flamegraph`) into the page's
    ``flamegraphs/`` folder and point its link there. A file that no longer exists is named in the
    page (and in ``resources['perflab_missing']``) instead of linked."""

    page_dir: Path | None = None

    def preprocess_cell(self, cell, resources, index):
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            if FLAMEGRAPH_MIME not in data:
                continue
            info = dict(data[FLAMEGRAPH_MIME])
            src = Path(info.get("path", ""))
            href = None
            if src.is_file() and self.page_dir is not None:
                target = self.page_dir / FLAMEGRAPHS / flamegraph_name(src)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
                href = f"{FLAMEGRAPHS}/{target.name}"
                resources.setdefault("perflab_flamegraphs", []).append(href)
            else:
                resources.setdefault("perflab_missing", []).append(str(src))
            data["text/html"] = flamegraph_html(info, href)
        return cell, resources


def flamegraph_name(src: Path) -> str:
    """``<run id>-<file>``: unique in a report, and says which run it came from."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{src.parent.name}-{src.name}")


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


def make_exporter(page_dir: Path | None = None) -> HTMLExporter:
    exporter = HTMLExporter(
        template_name=TEMPLATE_NAME,
        extra_template_basedirs=[str(TEMPLATES)],
        embed_images=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    flames = FlameGraphLinks()
    flames.page_dir = page_dir
    for pre in (StripExternalScripts(), PlotlyFigures(), CollapseCarriageReturns(), TidyStderr(), flames):
        exporter.register_preprocessor(pre, enabled=True)
    return exporter


def export_notebook(
    nb_path: Path, html_path: Path, nav_html: str = "", title: str | None = None, caveat: str = ""
) -> dict:
    """Write ``nb_path`` as an offline page at ``html_path`` (plotly.js and flame graphs next to it), with
    ``caveat`` (the plan's line on what its numbers are not) under its navigation bar.

    Returns ``{"bytes", "plotly_js_copies", "finding", "flamegraphs", "missing"}``: the page's size,
    how many plotly.js bundles it embeds (0: it loads the shared one), the notebook's finding (or
    ``None``), the flame graph files it links and the ones it could not find."""
    nb_path, html_path = Path(nb_path), Path(html_path)
    nb = nbformat.read(str(nb_path), as_version=4)
    if title:
        nb.metadata["title"] = title
    finding = findings.read(nb)
    page_dir = html_path.parent
    page_dir.mkdir(parents=True, exist_ok=True)
    plotly_js = ensure_plotly_js(page_dir)
    resources = {
        "metadata": {"name": title or nb_path.stem, "path": str(nb_path.parent)},
        "perflab_nav": nav_html,
        "perflab_caveat": caveat,
        "perflab_plotly_js": plotly_js.relative_to(page_dir).as_posix(),
        "perflab_finding": findings.summary_html(finding, anchor="#finding") if finding else "",
    }
    body, res = make_exporter(page_dir).from_notebook_node(nb, resources=resources)
    loads = external_loads(body)
    if loads:
        raise OfflineExportError(f"{html_path.name} would load from the network: {', '.join(loads[:5])}")
    html_path.write_text(body, encoding="utf-8")
    return {
        "bytes": len(body.encode("utf-8")),
        "plotly_js_copies": plotly_js_copies(body),
        "finding": finding,
        "flamegraphs": res.get("perflab_flamegraphs", []),
        "missing": res.get("perflab_missing", []),
    }


def plotly_js_copies(page: str) -> int:
    """How many copies of the plotly.js bundle a page embeds (its licence banner opens each one)."""
    return len(re.findall(r"\* plotly\.js v\d+\.\d+\.\d+", page))
