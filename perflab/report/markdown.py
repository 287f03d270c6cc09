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
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .. import i18n
from ..analysis import findings
from ..analysis.consoles import CONSOLE_MIME
from ..analysis.profiles import FLAMEGRAPH_MIME
from ..config.profile import EXECUTION_EVENTS, PROFILE_EVENTS
from . import aim, facts, stage
from .browser.cdp import find_chromium
from .export import FLAMEGRAPHS, PLOTLY_MIME, flamegraph_name, plotly_js_source
from .facts import SERVER_FAULT

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


def _finding_line(t: i18n.Language, title: str, f: dict, validity: str | None) -> str:
    key = f.get("key_number")
    extra = [x for x in (f"{key['label']}: {_key(key)}" if key else "", facts.validity(t, validity)) if x]
    return f"- **{_sentence(title)}** {f['answer']} *({'; '.join(extra)})*"


def _sentence(title: str) -> str:
    """A title as the start of a line of the findings: ending with its own stop."""
    return title if title.endswith(("?", ".", "!")) else title + "."


class _Notebook:
    """One executed notebook as Markdown: its cells in order (see the module docstring)."""

    def __init__(
        self,
        name: str,
        out: Path,
        report_dir: Path,
        doc: Document,
        figures: list[Figure],
        t: i18n.Language | None = None,
        runs: list[dict] | None = None,
    ):
        self.name, self.out, self.report_dir, self.doc, self.figures = name, out, report_dir, doc, figures
        self.t, self.runs = t or i18n.language(), runs or []
        self.n = 0

    def measured(self, cell) -> list[str]:
        """What a student's report keeps of a cell: the generator's consoles, the figures and the flame graphs
        (the notebook's sentences are its page's, in English; the report says its own from the records)."""
        parts = []
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = out.get("data") or {}
            if any(k in data for k in (PLOTLY_MIME, FLAMEGRAPH_MIME, CONSOLE_MIME)):
                parts += self.output(data)
        return parts

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
            title = c["title"] if self.t.code == i18n.DEFAULT else _console_title(self.t, c.get("command"))
            return [self.t("**{title}**, the load generator's console output:", title=title), _code(shown)]
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
        if self.t.code != i18n.DEFAULT:  # its title is the notebook's, in English: the figure is numbered instead
            text = self.t("Figure {n}", n=len(self.figures))  # numbered through the report, as the course's are
            return f"![{text}]({path})\n\n*{text}.*"
        alt = re.sub(r"<[^>]+>", " ", text or f"figure {self.n}").replace("[", "(").replace("]", ")").strip()
        return f"![{alt}]({path})"

    def flamegraph(self, info: dict) -> str:
        """The flame graph copied beside the Markdown (async-profiler's HTML, from its run or from the report's
        own copy) and linked, with its preview as an SVG image; named when neither is on disk."""
        src = Path(info.get("path", ""))
        name = flamegraph_name(src)
        found = src if src.is_file() else self.report_dir / FLAMEGRAPHS / name
        title = info.get("title") or src.name
        if self.t.code != i18n.DEFAULT:
            title = _flame_title(self.t, name, self.runs)
        lines = []
        if found.is_file():
            (self.out / FLAMEGRAPHS).mkdir(parents=True, exist_ok=True)
            if found.resolve() != (self.out / FLAMEGRAPHS / name).resolve():
                shutil.copyfile(found, self.out / FLAMEGRAPHS / name)
            self.doc.flamegraphs.append(f"{FLAMEGRAPHS}/{name}")
            lines.append(
                self.t(
                    "[{title}]({href}): async-profiler's interactive page (open it in a browser)",
                    title=title,
                    href=f"{FLAMEGRAPHS}/{name}",
                )
            )
        else:
            self.doc.missing.append(str(src))
            lines.append(
                self.t("{title}: the flame graph {file} is no longer on disk", title=title, file=f"`{src.name}`")
            )
        svg = re.search(r"<svg\b.*?</svg>", info.get("preview_html") or "", re.S)
        if svg:  # under its title: the lowest frames, as an image GitHub shows inline
            preview = Path(name).with_suffix(".svg").name
            (self.out / FLAMEGRAPHS).mkdir(parents=True, exist_ok=True)
            (self.out / FLAMEGRAPHS / preview).write_text(svg.group(0), encoding="utf-8")
            self.doc.flamegraphs.append(f"{FLAMEGRAPHS}/{preview}")
            alt = self.t("{title} (preview: the lowest frames)", title=title)
            lines.append(f"![{alt}]({FLAMEGRAPHS}/{preview})")
        return "\n\n".join(lines)


# --- the document ------------------------------------------------------------------------------------------


def _console_title(t: i18n.Language, command: str | None) -> str:
    """A console's title from its command line: the workload by its script (``-s``), the connections (``-c``)."""
    try:
        args = shlex.split(command or "")
    except ValueError:
        args = []
    given = {a: b for a, b in zip(args, args[1:], strict=False) if a in ("-c", "-s")}
    what = facts.workload(given.get("-s"))
    conns = given.get("-c", "")
    return f"{what}, {facts.connections(t, int(conns))}" if conns.isdigit() else what


#: a flame graph's file in the report: ``<run id>-profile-<events>[-<what>].html``, ``<events>`` the recording's
#: events joined by ``-`` (``cpu-alloc``), ``<what>`` the graph's own event when the recording has several, then
#: ``-heatmap`` or ``-spikes-diff``
_FLAME = re.compile(r"^(?P<run>.+?)-profile-(?P<tail>.+)\.html$")


def _flame_parts(tail: str) -> tuple[str, str]:
    """The graph's event and what is left (``-heatmap``, ``-spikes-diff``, ``""``) of a flame graph file's
    ``<events>[-<what>]``: a recording names each event once, so the graph's event of a recording of several is
    the one named again; the heatmap is the CPU's (the execution event's)."""
    words = tail.split("-")
    events: list[str] = []
    while words and words[0] in PROFILE_EVENTS and words[0] not in events:
        events.append(words.pop(0))
    if not events:
        return tail, ""
    rest = lambda ws: "".join(f"-{w}" for w in ws)  # noqa: E731
    if words and words[0] in events:
        return words[0], rest(words[1:])
    if words == ["heatmap"]:
        return next((e for e in events if e in EXECUTION_EVENTS), events[0]), "-heatmap"
    return events[0], rest(words)


def _flame_title(t: i18n.Language, name: str, runs: list[dict]) -> str:
    """A flame graph's caption in the report's language: the profile (cpu, alloc, lock) of which load."""
    m = _FLAME.match(name)
    if not m:
        return f"`{name}`"
    event, what = _flame_parts(m.group("tail"))
    profile = t(facts.EVENTS[event]) if event in facts.EVENTS else t("{event} profile", event=f"`{event}`")
    if what == "-heatmap":
        profile = t("{profile} over time (heat map)", profile=profile)
    elif what.endswith("spikes-diff"):
        profile = t("{profile}: the latency spikes against the rest of the window", profile=profile)
    elif what:
        profile = f"{profile} (`{what[1:]}`)"
    run = next((x for x in runs if x.get("id") == m.group("run")), None)
    res = (run or {}).get("results") or {}
    if not res:
        return profile
    if "range" in res:  # notebook 10's: one request, no load
        return t("{profile}: the one range read", profile=profile)
    return f"{profile}: {facts.workload(res.get('script'))}, {facts.connections(t, res.get('connections'))}"


def _header(t: i18n.Language, r: dict) -> list[str]:
    what = r.get("target") or t("the built-in server")
    m = r.get("machine") or {}
    machine = ", ".join(
        str(x)
        for x in (
            t.plural("{n} core", "{n} cores", int(m["cores"])) if m.get("cores") else "",
            m.get("cpu_model"),
            m.get("os"),
        )
        if x
    )
    description = t(r["plan_description"]) if r.get("plan_description") else ""
    lines = [
        t("# Load testing report: {name}", name=what.split(" (")[0]),
        "",
        t(
            "Measured with perflab (plan {plan}), started {started} UTC, {seconds} s in all",
            plan=f"**{r.get('plan')}**" + (": " + description if description else ""),
            started=t.timestamp(r.get("started")),
            seconds=t.number(r.get("seconds", 0)),
        )
        + (t(", on {machine}", machine=machine) if machine else "")
        + ".",
    ]
    if r.get("target"):
        lines += ["", t("Server: {server}.", server=f"`{what}`")]
    if r.get("caveat"):
        lines += ["", f"> {t(r['caveat'])}"]
    return lines


def _asks(t: i18n.Language, r: dict, runs: dict[str, list[dict]] | None = None) -> list[str]:
    """What the server's course stage asks its report for, each ask answered (in which section) or why not."""
    asked = stage.of(r.get("stage"))
    if asked is None:
        return []
    ran = {n["notebook"]: n for n in r["notebooks"]}
    lines = ["", t("## What stage {n} asks", n=asked.number), ""]
    before = None
    for a in stage.told(t, asked, ran, runs):
        if a["status"] != "answered" and (a["notebook"], a["status"], a["why"]) == before:
            lines.append(f"- {a['ask'][0].upper()}{a['ask'][1:]}: " + t("not answered, as above") + ".")
            continue
        before = (a["notebook"], a["status"], a["why"])
        if a["status"] == "answered":
            said = t("answered in the section «{title}»", title=t(ran[a["notebook"]]["title"]))
        elif a["status"] == "failed":
            said = t("not answered, the notebook failed: {error}", error=f"`{a['why']}`")
        elif a["status"] == "not measured":
            said = t("not measured: {why}", why=a["why"])
        elif a["status"] == "server fault":
            said = t("not answered: your server is at fault: {fault}", fault=a["why"])
        else:
            said = t("not answered: {why}", why=a["why"])
        lines.append(f"- {a['ask'][0].upper()}{a['ask'][1:]}: {said.rstrip('.')}.")
    return lines


def _findings(t: i18n.Language, r: dict, told: dict[str, str]) -> list[str]:
    """The findings: each notebook's answer (``told``: its sentence in the report's language from the records,
    where the notebook's own English one is not), then the breakpoints in a table."""
    lines = ["", t("## Findings"), ""]
    ran = [n for n in r["notebooks"] if n.get("finding")]
    lead = next((n for n in ran if n["notebook"] == r.get("lead")), None)
    if lead is not None:
        lines += [f"**{told.get(lead['notebook']) or lead['finding']['answer']}**", ""]
    for n in ran:
        if n["notebook"] in told:
            lines.append(
                f"- **{_sentence(t(n['title']))}** {told[n['notebook']]} *({facts.validity(t, n.get('validity'))})*"
            )
        else:
            lines.append(_finding_line(t, n["title"], n["finding"], n.get("validity")))
    lines += [
        f"- **{_sentence(t(n['title']))}** "
        + t("Your server is at fault, as the lab found it: {fault}", fault=facts.server_fault(t, n.get("error")))
        for n in r["notebooks"]
        if n.get("status") == SERVER_FAULT
    ]
    failed = [n for n in r["notebooks"] if n.get("status") not in ("ok", "not applicable", SERVER_FAULT)]
    lines += [f"- **{_sentence(t(n['title']))}** " + t("Failed: {error}", error=f"`{n.get('error')}`") for n in failed]
    bps = [b for b in r.get("breakpoints") or [] if b.get("verdict") != findings.RAMP_ESTIMATE]
    if bps and told:
        lines += ["", *facts.breakpoint_lines(t, bps)]
    elif bps:
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
        for meta in facts.metas(r, report_dir, n):
            v = (meta.get("server") or {}).get("java_version") if isinstance(meta.get("server"), dict) else None
            if v and str(v) not in found:
                found.append(str(v))
    return found


def _tools(t: i18n.Language, r: dict, report_dir: Path) -> str:
    """The tools line: the server's JDK (from its runs), then the lab's own tools but its ``java`` (perflab's
    default JDK, which measured nothing)."""
    jdks = server_jdks(r, report_dir)
    server = (
        [t("the server's JDK {jdk} (as its runs recorded it)", jdk=jdks[0])]
        if len(jdks) == 1
        else [t("the servers' JDKs {jdks} (as their runs recorded them)", jdks=", ".join(jdks))]
        if jdks
        else []
    )
    own = [f"{k} {v}" for k, v in (r.get("tools") or {}).items() if v and k != "java"]
    return ", ".join(server + own)


def _method(t: i18n.Language) -> list[str]:
    return ["", t("## Method"), "", *[f"- {t(line)}" for line in facts.METHOD]]


def _record(t: i18n.Language, r: dict, report_dir: Path) -> list[str]:
    skipped = [n for n in r["notebooks"] if n.get("status") == "not applicable"]
    lines = []
    if skipped:
        lines += ["", t("## Not run, and why"), ""]
        lines += [f"- **{t(n['title'])}**: {t(n.get('error') or '')}" for n in skipped]
    m, g = r.get("machine") or {}, r.get("git") or {}
    tools = _tools(t, r, report_dir)
    load = (
        t(
            "; load average {start} at the start, {end} at the end",
            start=t.number(r["load_start"][0], 2),
            end=t.number((r.get("load_end") or [0])[0], 2),
        )
        if r.get("load_start")
        else ""
    )
    lines += [
        "",
        t("## How it was measured"),
        "",
        t("- Command: {command}", command=f"`{r.get('command')}`"),
        t(
            "- Machine: {cores}, {cpu}, {os}, kernel {kernel}",
            cores=t.plural("{n} core", "{n} cores", int(m.get("cores") or 0)),
            cpu=m.get("cpu_model"),
            os=m.get("os"),
            kernel=m.get("kernel"),
        )
        + load,
        *([t("- Tools: {tools}", tools=tools)] if tools else []),
        t("- perflab at commit {commit}", commit=f"`{(g.get('commit') or 'unknown')[:10]}`"),
        t(
            "- Every run's raw data (console output, latency logs, profiles, validity record) is in the lab's data "
            "folder, named by the run ids above."
        ),
    ]
    return lines


def _question(t: i18n.Language, r: dict, n: dict, nb) -> str:
    """The notebook's question in the report's language: its template translated, filled with what ran."""
    if t.code == i18n.DEFAULT:
        return n.get("question") or ""
    target = aim.YOURS if r.get("target") else aim.BUILTIN
    template = aim.template(nb, target)
    return aim.fill(t(template), n.get("effective_parameters") or {}, t) if template else ""


def _student_section(t: i18n.Language, r: dict, n: dict, nb, page: _Notebook) -> list[str]:
    """A notebook's section of a student's report: its question, its numbers from the records, then the
    generator's consoles, the figures and the flame graphs; its page tells the rest."""
    parts = [t("## {title}", title=t(n["title"]))]
    q = _question(t, r, n, nb)
    if q:
        parts.append(t("**Question:** {question}", question=q))
    table = facts.lines(t, n, page.runs)
    if table:
        parts.append("\n".join(table))
    parts += [part for cell in nb.cells for part in page.measured(cell) if part.strip()]
    if n.get("html"):
        parts.append(t("Every figure with its explanation is on the page {page}.", page=f"`{n['html']}`"))
    return parts


def write(
    report_dir: str | Path, out: str | Path | None = None, chromium: str | None = None, language: str | None = None
) -> Document:
    """Write ``report.md`` for the report in ``report_dir`` into ``out`` (default: the report folder), with its
    figures and flame graphs beside it (see the module docstring), in ``language`` (default: the report's). A
    report about a server of yours (a student's) keeps to what the reader needs: its numbers, consoles,
    figures and flame graphs, then the method in short. A ``ValueError`` names what is missing (no report
    there, no chromium to draw the figures, no such language) before anything is written."""
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
    t = i18n.language(language or r.get("language") or i18n.DEFAULT)
    student = bool(r.get("target")) or t.code != i18n.DEFAULT
    out = Path(out).resolve() if out is not None else report_dir
    out.mkdir(parents=True, exist_ok=True)
    doc = Document(out / FILENAME)
    figures: list[Figure] = []
    runs = {n["notebook"]: facts.metas(r, report_dir, n) for n in r["notebooks"]}
    told = (
        {n["notebook"]: facts.summary(t, n, runs[n["notebook"]]) for n in r["notebooks"] if n.get("finding")}
        if t.code != i18n.DEFAULT
        else {}
    )
    lines = _header(t, r) + _asks(t, r, runs) + _findings(t, r, told)
    for n in r["notebooks"]:
        if not n.get("ipynb") or not (report_dir / n["ipynb"]).is_file():
            continue
        nb = nbformat.read(str(report_dir / n["ipynb"]), as_version=4)
        page = _Notebook(n["notebook"], out, report_dir, doc, figures, t, runs[n["notebook"]])
        if student:
            body = _student_section(t, r, n, nb, page)
        else:
            body = [part for cell in nb.cells for part in page.cell(cell) if part.strip()]
        lines += ["", *("\n\n".join(body)).splitlines()]
    if student:
        lines += _method(t)
    lines += _record(t, r, report_dir)
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
