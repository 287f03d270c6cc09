"""The report as Markdown to hand in: ``report.md`` in the course's shape, with its files beside it.

The course hands in Markdown in the student's own package (``reports/stageN/report.md``, images and flame graphs
beside it). :func:`write` turns a report folder (``report.json`` and the executed notebooks) into

* ``report.md``: the findings first (your stages compared, when they were, then each notebook's answer with its
  key number and validity), then each notebook that ran: its question, its text, its tables as Markdown tables,
  the load generator's console output in code blocks (as the course's reports show wrk2's), its figures and its
  flame graphs; what was not run, and why; where and how it was measured;
* ``figures/*.png``: every figure, drawn by plotly's static export (kaleido driving the chromium the report
  already uses, offline: plotly.js from the plotly package, no MathJax);
* ``flamegraphs/``: async-profiler's flame graphs (HTML, to open in a browser) and a preview of each as SVG,
  which GitHub shows inline.

Every link in it is relative, to a file it wrote, so the folder renders as committed (GitHub, or any Markdown
viewer) wherever it is put: ``perflab markdown REPORT_DIR --out src/main/java/.../reports/stage6``.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..analysis import findings
from ..analysis.consoles import CONSOLE_MIME
from ..analysis.profiles import FLAMEGRAPH_MIME
from .browser.cdp import find_chromium
from .export import FLAMEGRAPHS, PLOTLY_MIME, flamegraph_name, plotly_js_source

FILENAME = "report.md"
FIGURES = "figures"
#: a figure's size when its layout gives none, and the scale of its PNG (sharp on a high-density screen)
WIDTH, HEIGHT, SCALE = 900, 480, 1.5


@dataclass
class Figure:
    """A figure to draw: its plotly JSON and the file it goes to (relative to the Markdown's folder)."""

    fig: dict
    path: str


@dataclass
class Document:
    """What :func:`write` wrote: the Markdown file, its figures and its flame graphs."""

    path: Path
    figures: list[str] = field(default_factory=list)
    flamegraphs: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # flame graphs no longer on disk (named, not linked)


# --- the notebooks' outputs as Markdown ----------------------------------------------------------------------


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


def _shift(markdown: str) -> str:
    """A notebook's headings one level down (its ``#`` title is a section of the report)."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        out.append("#" + line if not fenced and re.match(r"#{1,5} ", line) else line)
    return "\n".join(out)


def _code(text: str, lang: str = "text") -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _key(k: dict | None) -> str:
    return findings.key_number_text(k) if k else ""


def _finding_line(title: str, f: dict, validity: str | None) -> str:
    key = f.get("key_number")
    extra = [x for x in (f"{key['label']}: {_key(key)}" if key else "", validity or "not assessed") if x]
    return f"- **{_sentence(title)}** {f['answer']} *({'; '.join(extra)})*"


def _sentence(title: str) -> str:
    """A title as the start of a line of the findings: ending with its own stop."""
    return title if title.endswith(("?", ".", "!")) else title + "."


class _Notebook:
    """One executed notebook as Markdown: its cells in order (see the module docstring)."""

    def __init__(self, name: str, out: Path, report_dir: Path, doc: Document, figures: list[Figure]):
        self.name, self.out, self.report_dir, self.doc, self.figures = name, out, report_dir, doc, figures
        self.n = 0

    def cell(self, cell) -> list[str]:
        if cell.cell_type == "markdown":
            return [_shift(cell.source)]
        if cell.cell_type != "code":
            return []
        parts, stdout = [], []
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                if out.get("name") == "stdout":
                    stdout.append(_text(out.get("text")))
                continue
            if stdout:
                parts.append(_code("".join(stdout)))
                stdout = []
            if kind == "error":
                parts.append(f"**This cell failed:** `{out.get('ename')}: {out.get('evalue')}`")
            elif kind in ("display_data", "execute_result"):
                parts += self.output(out.get("data") or {})
        if stdout:
            parts.append(_code("".join(stdout)))
        return parts

    def output(self, data: dict) -> list[str]:
        if findings.MIME in data:
            f = data[findings.MIME]
            key = f.get("key_number")
            return [f"> **Answer.** {f['answer']}" + (f" *({key['label']}: {_key(key)})*" if key else "")]
        if PLOTLY_MIME in data:
            return [self.figure(data[PLOTLY_MIME])]
        if FLAMEGRAPH_MIME in data:
            return [self.flamegraph(data[FLAMEGRAPH_MIME])]
        if CONSOLE_MIME in data:
            c = data[CONSOLE_MIME]
            shown = f"$ {c['command']}\n{c['text']}" if c.get("command") else c["text"]
            return [f"**{c['title']}**, the load generator's console output:", _code(shown)]
        if "text/markdown" in data:
            return [_shift(_text(data["text/markdown"]))]
        if "text/plain" in data and "text/html" not in data:
            return [_code(_text(data["text/plain"]))]
        return []

    def figure(self, fig: dict) -> str:
        self.n += 1
        path = f"{FIGURES}/{self.name}-{self.n}.png"
        self.figures.append(Figure(fig, path))
        title = (fig.get("layout") or {}).get("title") or {}
        text = title.get("text") if isinstance(title, dict) else str(title)
        alt = re.sub(r"<[^>]+>", " ", text or f"figure {self.n}").replace("[", "(").replace("]", ")").strip()
        return f"![{alt}]({path})"

    def flamegraph(self, info: dict) -> str:
        """The flame graph copied beside the Markdown (async-profiler's HTML, from its run or from the report's
        own copy) and linked, with its preview as an SVG image; named when neither is on disk."""
        src = Path(info.get("path", ""))
        name = flamegraph_name(src)
        found = src if src.is_file() else self.report_dir / FLAMEGRAPHS / name
        title = info.get("title") or src.name
        lines = []
        if found.is_file():
            (self.out / FLAMEGRAPHS).mkdir(parents=True, exist_ok=True)
            if found.resolve() != (self.out / FLAMEGRAPHS / name).resolve():
                shutil.copyfile(found, self.out / FLAMEGRAPHS / name)
            self.doc.flamegraphs.append(f"{FLAMEGRAPHS}/{name}")
            lines.append(f"[{title}]({FLAMEGRAPHS}/{name}): async-profiler's interactive page (open it in a browser)")
        else:
            self.doc.missing.append(str(src))
            lines.append(f"{title}: the flame graph `{src.name}` is no longer on disk")
        svg = re.search(r"<svg\b.*?</svg>", info.get("preview_html") or "", re.S)
        if svg:  # under its title: the lowest frames, as an image GitHub shows inline
            preview = Path(name).with_suffix(".svg").name
            (self.out / FLAMEGRAPHS).mkdir(parents=True, exist_ok=True)
            (self.out / FLAMEGRAPHS / preview).write_text(svg.group(0), encoding="utf-8")
            self.doc.flamegraphs.append(f"{FLAMEGRAPHS}/{preview}")
            lines.append(f"![{title} (preview: the lowest frames)]({FLAMEGRAPHS}/{preview})")
        return "\n\n".join(lines)


# --- the document ------------------------------------------------------------------------------------------


def _header(r: dict) -> list[str]:
    what = r.get("target") or "the built-in server"
    m = r.get("machine") or {}
    machine = ", ".join(
        str(x) for x in (f"{m.get('cores')} cores" if m.get("cores") else "", m.get("cpu_model"), m.get("os")) if x
    )
    lines = [
        f"# Load testing report: {what.split(' (')[0]}",
        "",
        f"Measured with perflab (plan **{r.get('plan')}**{': ' + r['plan_description'] if r.get('plan_description') else ''}), "
        f"started {r.get('started')} UTC, {r.get('seconds', 0):.0f} s in all"
        + (f", on {machine}" if machine else "")
        + ".",
    ]
    if r.get("target"):
        lines += ["", f"Server: `{what}`."]
    if r.get("caveat"):
        lines += ["", f"> {r['caveat']}"]
    return lines


def _findings(r: dict) -> list[str]:
    lines = ["", "## Findings", ""]
    ran = [n for n in r["notebooks"] if n.get("finding")]
    lead = next((n for n in ran if n["notebook"] == r.get("lead")), None)
    if lead is not None:
        lines += [f"**{lead['finding']['answer']}**", ""]
    lines += [_finding_line(n["title"], n["finding"], n.get("validity")) for n in ran]
    failed = [n for n in r["notebooks"] if n.get("status") not in ("ok", "not applicable")]
    lines += [f"- **{_sentence(n['title'])}** Failed: `{n.get('error')}`" for n in failed]
    bps = [b for b in r.get("breakpoints") or [] if b.get("verdict") != findings.RAMP_ESTIMATE]
    if bps:
        lines += [
            "",
            "| workload | connections | breakpoint, req/s | interval | outcome | validity |",
            "| --- | ---: | ---: | --- | --- | --- |",
        ]
        for b in bps:
            rate = f"{b['rate']:,.0f}" if b.get("rate") is not None else "none passed"
            iv = b.get("interval") or [None, None]
            interval = "[" + ", ".join("-" if v is None else f"{v:,.0f}" for v in iv) + "]"
            lines.append(
                f"| {b['workload']} | {b.get('connections') or ''} | {rate} | {interval} | "
                f"{b.get('verdict') or ''} | {b.get('validity') or 'not assessed'} |"
            )
    return lines


def server_jdks(r: dict, report_dir: Path) -> list[str]:
    """The JDKs the measured servers ran on, as their runs recorded them (``meta.json``'s
    ``server.java_version``: the built-in server's own report, or the JVM a server of yours ran on), in the order
    first met. Not perflab's own ``java`` (the report's ``tools``): a course server runs on the JDK its classes
    need, which need not be perflab's."""
    found: list[str] = []
    for n in r.get("notebooks") or []:
        for run in n.get("runs") or []:
            for d in (
                report_dir / run["path"] if run.get("path") else None,
                Path(r["data_root"]) / "runs" / run["id"] if r.get("data_root") and run.get("id") else None,
            ):
                meta = d / "meta.json" if d is not None else None
                if meta is None or not meta.is_file():
                    continue
                try:
                    v = (json.loads(meta.read_text()).get("server") or {}).get("java_version")
                except (OSError, ValueError, AttributeError):
                    continue
                if v and str(v) not in found:
                    found.append(str(v))
                break
    return found


def _tools(r: dict, report_dir: Path) -> str:
    """The tools line: the server's JDK (from its runs), then the lab's own tools but its ``java`` (perflab's
    default JDK, which measured nothing)."""
    jdks = server_jdks(r, report_dir)
    server = (
        [f"the server's JDK {jdks[0]} (as its runs recorded it)"]
        if len(jdks) == 1
        else [f"the servers' JDKs {', '.join(jdks)} (as their runs recorded them)"]
        if jdks
        else []
    )
    own = [f"{k} {v}" for k, v in (r.get("tools") or {}).items() if v and k != "java"]
    return ", ".join(server + own)


def _record(r: dict, report_dir: Path) -> list[str]:
    skipped = [n for n in r["notebooks"] if n.get("status") == "not applicable"]
    lines = []
    if skipped:
        lines += ["", "## Not run, and why", ""]
        lines += [f"- **{n['title']}**: {n.get('error')}" for n in skipped]
    m, g = r.get("machine") or {}, r.get("git") or {}
    tools = _tools(r, report_dir)
    lines += [
        "",
        "## How it was measured",
        "",
        f"- Command: `{r.get('command')}`",
        f"- Machine: {m.get('cores')} cores, {m.get('cpu_model')}, {m.get('os')}, kernel {m.get('kernel')}"
        + (
            f"; load average {r['load_start'][0]} at the start, {(r.get('load_end') or ['?'])[0]} at the end"
            if r.get("load_start")
            else ""
        ),
        *([f"- Tools: {tools}"] if tools else []),
        f"- perflab at commit `{(g.get('commit') or 'unknown')[:10]}`",
        "- Every run's raw data (console output, latency logs, profiles, validity record) is in the lab's data "
        "folder, named by the run ids above.",
    ]
    return lines


def write(report_dir: str | Path, out: str | Path | None = None, chromium: str | None = None) -> Document:
    """Write ``report.md`` for the report in ``report_dir`` into ``out`` (default: the report folder), with its
    figures and flame graphs beside it (see the module docstring). A ``ValueError`` names what is missing
    (no report there, no chromium to draw the figures) before anything is written."""
    report_dir = Path(report_dir).resolve()
    data_file = report_dir / "report.json"
    if not data_file.is_file():
        raise ValueError(f"{report_dir}: no report.json (give a report folder that `perflab report` wrote)")
    chromium = chromium or find_chromium()
    if chromium is None:
        raise ValueError(
            "chromium is not installed: the figures are drawn by plotly's static export in headless "
            "chromium (scripts/apt-ensure chromium)"
        )
    r = json.loads(data_file.read_text())
    out = Path(out).resolve() if out is not None else report_dir
    out.mkdir(parents=True, exist_ok=True)
    doc = Document(out / FILENAME)
    figures: list[Figure] = []
    lines = _header(r) + _findings(r)
    for n in r["notebooks"]:
        if not n.get("ipynb") or not (report_dir / n["ipynb"]).is_file():
            continue
        nb = nbformat.read(str(report_dir / n["ipynb"]), as_version=4)
        page = _Notebook(n["notebook"], out, report_dir, doc, figures)
        body = [part for cell in nb.cells for part in page.cell(cell) if part.strip()]
        lines += ["", *("\n\n".join(body)).splitlines()]
    lines += _record(r, report_dir)
    _draw(figures, out, chromium)
    doc.figures = [f.path for f in figures]
    doc.path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return doc


def _draw(figures: list[Figure], out: Path, chromium: str) -> None:
    """Every figure to its PNG file in one headless chromium (kaleido), offline: plotly.js from the installed
    plotly package, MathJax off (it would be fetched from the network)."""
    if not figures:
        return
    import kaleido  # in here: only drawing figures needs it

    (out / FIGURES).mkdir(parents=True, exist_ok=True)
    specs = []
    for f in figures:
        layout = f.fig.get("layout") or {}
        specs.append(
            {
                "fig": f.fig,
                "path": out / f.path,
                "opts": {
                    "format": "png",
                    "width": int(layout.get("width") or WIDTH),
                    "height": int(layout.get("height") or HEIGHT),
                    "scale": SCALE,
                },
            }
        )
    kaleido.write_fig_from_object_sync(
        specs, kopts={"path": _browser(chromium), "mathjax": False, "plotlyjs": str(plotly_js_source())}
    )
    missing = [f.path for f in figures if not (out / f.path).is_file()]
    if missing:
        raise RuntimeError(f"the static export wrote no file for {', '.join(missing[:5])}")


def _browser(chromium: str) -> str:
    """The browser binary itself: Debian's ``/usr/bin/chromium`` is a shell script that starts
    ``/usr/lib/chromium/chromium``, and kaleido talks to the browser over pipes that the script's own output
    would disturb."""
    real = Path("/usr/lib/chromium/chromium")
    return str(real) if Path(chromium).resolve() == Path("/usr/bin/chromium").resolve() and real.is_file() else chromium
