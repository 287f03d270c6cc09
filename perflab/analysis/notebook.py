"""What the lab notebooks call around the library: setup, parameters, measuring with a line of output,
display helpers.

A notebook's first code cell after ``parameters`` builds its configs from the parameters
(``pl.ServerConfig(...)``, ``pl.workload(...)``, ...), so the one validation layer of
:mod:`perflab.config` speaks: a bad plan fails in that cell, naming the parameter, before anything
runs. A parameter that is no config's field is checked by the same layer with :func:`param` (and
:func:`placements`); :func:`servers_for_modes` and :func:`prefill_for` build the configs that depend on
more than one parameter.

Then :func:`measure` (one fixed-rate run) and :func:`search_breakpoint` (one breakpoint search) run the
experiments, each saying in one printed line how it went.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

from .. import fmt

#: The plotly renderer of the lab's notebooks: the figure's JSON only. JupyterLab draws it
#: interactively; the report's export draws each figure from it with one shared copy of plotly.js per
#: report folder (:mod:`perflab.report.export`), so no notebook carries the 4.8 MB bundle itself.
RENDERER = "plotly_mimetype"

#: The output a flame graph leaves in the notebook (its file, title and preview), which the export
#: turns into a link to a copy next to the page.
FLAMEGRAPH_MIME = "application/vnd.perflab.flamegraph+json"


def setup() -> None:
    """Configure plotly and pandas the same way in JupyterLab and under papermill."""
    import pandas as pd
    import plotly.io as pio

    pio.renderers.default = RENDERER
    import warnings

    # tqdm.auto falls back to text bars without ipywidgets; its warning about that is noise in a report
    warnings.filterwarnings("ignore", message="IProgress not found")
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.width", 160)
    pd.set_option("display.float_format", lambda v: f"{v:,.3f}")
    show_hosts()


def show_hosts() -> None:
    """Where this notebook's runs measure: on a scheduler's hosts ($PERFLAB_SCHEDULER, as ``perflab report
    --scheduler`` sets it), the scheduler, its hosts and dashboard link; on this machine alone, nothing (the
    in-process hosts start with the first run and have no dashboard)."""
    from ..config.hosts import SCHEDULER_ENV

    if not os.environ.get(SCHEDULER_ENV):
        return
    from ..hosts.inventory import survey
    from ..hosts.pool import connect

    c = connect()
    hosts = survey(c, clocks=False)
    link = c.dashboard_link
    text = (f"Hosts: the Dask scheduler at `{c.address}`, "
            + ", ".join(f"{h.name} ({'+'.join(h.roles) or 'no role'})" for h in hosts)
            + (f"; dashboard: [{link}]({link})" if link else "; no dashboard (install bokeh where the scheduler runs)"))
    show_markdown(text)


# --- parameters that are no config's field ---------------------------------------------------------

def param(name: str, value, kind: str, **spec):
    """``value`` converted and checked by the config layer (:func:`perflab.config.fields.convert`), e.g.
    ``param("max_rows", max_rows, "int", min=1)``; ``kind`` ``"texts"`` or ``"ints"`` checks a list."""
    from ..config.fields import Spec, convert

    if kind == "ints":
        items = convert(name, Spec("texts", ""), value) if not isinstance(value, (list, tuple)) else value
        return tuple(convert(f"{name}[{i}]", Spec("int", "", **spec), v) for i, v in enumerate(items))
    return convert(name, Spec(kind, "", **spec), value)


def placements(value) -> tuple[str, ...]:
    """The CPU placements a notebook measures (its ``placements`` parameter: a list of ``shared``,
    ``split`` or ``server=CPUS;load=CPUS``), each checked by :meth:`perflab.server.placement.Placement.of`
    and returned as written."""
    from ..server.placement import Placement

    found = param("placements", value, "texts")
    if not found:
        raise ValueError("placements: must name at least one placement, got an empty list")
    for p in found:
        Placement.of(p)
    return found


def build(what: str, make, *args, **kwargs):
    """``make(*args, **kwargs)``, with ``what`` (e.g. "PUT load") in front of the config layer's error, so
    a bad notebook parameter is named by the part of the experiment it configures."""
    try:
        return make(*args, **kwargs)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


def server(server_cmd: str | None = None, ready_path: str = "/", server_dir: str | None = None, **built_in):
    """The target of a notebook: your server (``server_cmd``, with ``{port}``, run in ``server_dir``) or
    the built-in one configured by ``built_in`` (``ServerConfig`` fields); printed, so the notebook says
    what it measures."""
    from ..config import ForeignServer, ServerConfig

    target = (ForeignServer(command=server_cmd, ready_path=ready_path, workdir=server_dir) if server_cmd
              else ServerConfig(**built_in))
    print(target)
    return target


def prefill_for(server, **fields):
    """The ``PrefillParams`` (``fields``) for the built-in server, ``None`` for yours: perflab fills only the
    storage of the server it starts itself. The fields are checked either way."""
    from ..config import ForeignServer, PrefillParams

    params = PrefillParams(**fields)
    return None if isinstance(server, ForeignServer) else params


def servers_for_modes(modes, java_home: str | None = None, **fields) -> dict:
    """One ``ServerConfig`` per request-handling mode in ``modes`` (``fields``: the other ServerConfig
    fields), every one checked before anything else, so a bad mode is named at once.

    ``virtual`` needs a JDK of at least :data:`perflab.jdk.VIRTUAL_THREADS`: when ``java_home`` (or the
    default JDK) is older, the newest such JDK under ``/usr/lib/jvm`` runs the virtual-thread server; when
    there is none, ``virtual`` is left out. Prints which JDK runs virtual threads, or why they are skipped,
    and then every config."""
    from .. import jdk
    from ..config import ServerConfig

    servers = {m: ServerConfig(mode=m, java_home=java_home, **fields) for m in param("modes", modes, "texts")}
    if "virtual" in servers:
        home = jdk.find(jdk.VIRTUAL_THREADS, java_home)
        if home is None:
            print(f"No JDK {jdk.VIRTUAL_THREADS}+ found: virtual threads are skipped (install one or set java_home).")
            del servers["virtual"]
        elif home != java_home:
            print(f"virtual threads run on {home} (JDK {jdk.version(home)[0]})")
            servers["virtual"] = servers["virtual"].replace(java_home=home)
    for m, s in servers.items():
        print(m, s)
    return servers


# --- measuring, one line of output each ----------------------------------------------------------------

def measure(label: str, server, load, name: str, **options):
    """One fixed-rate run: ``pl.run_experiment(server, load, name=name, **options)``, once more if the
    profiler failed (:func:`retry_once`), then one printed line: 'PUT, 1 connection: p99 0.92 ms; valid;
    run <id>'."""
    from ..errors import ProfilerError
    from ..experiment import run_experiment

    r = retry_once(lambda: run_experiment(server, load, name=name, **options), (ProfilerError,), label)
    print(f"{label}: p99 {fmt.ms(r.load.p99_ms)}; {r.validity.badge if r.validity else 'not assessed'}; "
          f"run {r.run_id}")
    return r


def search_breakpoint(label: str, server, load, name: str, **options):
    """One breakpoint search: ``pl.find_breakpoint(server, load, name=name, **options)``, then one printed
    line: 'GET, 64 connections: 50,000 req/s (interval [48,000, 52,000], resolved); probes' validity valid;
    41 s; run <id>'."""
    from ..breakpoint import find_breakpoint

    r = find_breakpoint(server, load, name=name, **options)
    print(f"{label}: {r.describe()}; probes' validity {r.validity or 'not assessed'}; {r.seconds:.0f} s; "
          f"run {r.run_id}")
    return r


def scaled_breakpoint(results, factor: float, pick=min, default: float | None = None) -> float:
    """``factor`` times the ``pick`` (``min`` or ``max``) of the breakpoints the searches ``results`` found,
    rounded to a whole rate: the common rate of profiles below every breakpoint (``min``), the overload
    above every one (``max``); ``default`` when no search found one."""
    if pick not in (min, max):
        raise ValueError(f"pick must be min or max, got {pick!r}")
    found = [r.rate for r in results if r.rate]
    if not found:
        if default is None:
            raise ValueError("no search found a breakpoint, and no default rate was given")
        return default
    return round(factor * pick(found))


# --- display helpers ---------------------------------------------------------------------------------

def show_markdown(*paragraphs: str) -> None:
    """The paragraphs (empty ones left out) as one Markdown output; nothing when all are empty."""
    from IPython.display import Markdown, display

    text = "\n\n".join(p for p in paragraphs if p)
    if text:
        display(Markdown(text))


def console_summary(text: str) -> str:
    """One line about a load generator's console output: '3,000 requests in 1.00 s, 2,999.6 req/s,
    p50 0.117 ms, p99 0.720 ms, max 3.49 ms, 0 errors' (whatever of it the text contains)."""
    from ..measure.wrk_output import parse_wrk_output

    try:
        w = parse_wrk_output(text)
    except Exception:  # noqa: BLE001 - any text may be shown; the summary is a courtesy
        return ""
    parts = []
    if w.requests is not None:
        parts.append(f"{w.requests:,} requests" + (f" in {w.measured_s:.2f} s" if w.measured_s else ""))
    if w.requests_per_sec is not None:
        parts.append(f"{w.requests_per_sec:,.1f} req/s")
    for p, name in ((50, "p50"), (99, "p99"), (100, "max")):
        v = w.percentile_ms(p)
        if v == v:  # not NaN
            parts.append(f"{name} {v:.3f} ms" if v < 10 else f"{name} {v:.1f} ms")
    if w.requests is not None:
        parts.append(f"{w.errors_total:,} errors")
    return ", ".join(parts)


def console_html(text: str, title: str | None = None, max_lines: int | None = None) -> str:
    """The console output in a closed ``<details>``; its summary line says what the run did."""
    lines = text.rstrip("\n").splitlines()
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(text.splitlines()) - max_lines} more lines in the run's console.txt)"]
    summary = console_summary(text)
    head = html.escape(title) if title else "console output"
    head = f"<b>{head}</b>" + (f": {html.escape(summary)}" if summary else "")
    return (f"<details class='perflab-console'><summary>{head} "
            f"<span style='color:#888'>({len(text.splitlines())} lines of console output)</span></summary>"
            f"<pre style='font-size:11px;line-height:1.25;max-height:480px;overflow:auto;margin:0;padding:6px'>"
            f"{html.escape(chr(10).join(lines))}</pre></details>")


def show_console(text: str, title: str | None = None, max_lines: int | None = None) -> None:
    """A load generator's console output as a terminal shows it, folded: a closed ``<details>`` whose
    one-line summary gives requests, rate, p50/p99/max and errors; ``max_lines`` cuts it."""
    from IPython.display import HTML, display

    display(HTML(console_html(text, title, max_lines)))


def show_timeline(label: str, result, kinds: tuple[str, ...] = ()) -> None:
    """A run's latency per interval with the server's events (:func:`perflab.analysis.timeline.timeline`),
    titled with ``label``, then what it shows (:func:`perflab.analysis.commentary.describe_timeline`: the
    effect of each event kind in ``kinds``, the spikes, the trend)."""
    from .commentary import describe_timeline
    from .timeline import timeline

    timeline(result, title=f"{label}: latency per 100 ms and server events").show()
    show_markdown(describe_timeline(result, kinds))


def show_consoles(runs: dict) -> None:
    """Every run's console output (label -> ExperimentResult), folded, titled with its label."""
    for label, r in runs.items():
        show_console(r.load.console, title=label)


def flamegraph_html(info: dict, href: str | None) -> str:
    """The block a flame graph leaves in a page: title, link (or why there is none), preview."""
    title = html.escape(info.get("title") or Path(info.get("path", "")).name)
    if href:
        link = (f"<a href='{html.escape(href)}' target='_blank' rel='noopener'>open the interactive flame graph</a>"
                f" <span style='color:#888'>(async-profiler's page: search, zoom)</span>")
    else:
        link = f"<span style='color:#c62828'>flame graph file not found: {html.escape(info.get('path', ''))}</span>"
    return (f"<div class='perflab-flamegraph' style='margin:8px 0'><div style='font-weight:600'>{title}</div>"
            f"<div style='margin:2px 0 6px 0'>{link}</div>{info.get('preview_html', '')}</div>")


def show_flamegraph(path: str | os.PathLike, title: str | None = None, collapsed: str | os.PathLike | None = None,
                    base: str | os.PathLike | None = None, event: str | None = None) -> None:
    """Show async-profiler's HTML flame graph as a link with a preview, instead of embedding it.

    The page stays a separate file: the report copies it next to the notebook's page and links it
    (:mod:`perflab.report.export`); in JupyterLab the link opens the file itself. The preview is a
    small static flame graph and the hottest frames, drawn from ``collapsed`` (default: the
    ``.collapsed`` file next to ``path``, as async-profiler's runs record it); ``base`` (collapsed
    stacks) colours it by the change against a base profile, for differential graphs. Returns nothing
    (no ``Out[...]`` under the cell)."""
    from IPython.display import display

    from ..profiling import flame
    from .flamepreview import preview_svg, top_frames_html

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"flame graph {p} does not exist")
    stacks_path = Path(collapsed) if collapsed else p.with_suffix(".collapsed")
    ev = event or (p.stem.split("-", 1)[1] if p.stem.startswith("profile-") else "cpu")
    if ev not in ("cpu", "alloc", "lock", "wall", "itimer", "ctimer"):
        ev = "cpu"
    preview = ""
    if stacks_path.is_file() and stacks_path.stat().st_size:
        stacks = flame.read_collapsed(stacks_path)
        base_stacks = flame.read_collapsed(Path(base)) if base else None
        preview = ("<div style='display:flex;gap:16px;flex-wrap:wrap;align-items:flex-end'>"
                   f"<div>{preview_svg(stacks, ev, base=base_stacks)}</div><div>{top_frames_html(stacks)}</div></div>")
    info = {"path": str(p.resolve()), "title": title or p.name, "event": ev, "preview_html": preview,
            "collapsed": str(stacks_path.resolve()) if stacks_path.is_file() else None}
    try:   # in JupyterLab the link is relative to the notebook's directory, where the kernel runs
        href = os.path.relpath(p.resolve(), Path.cwd())
    except ValueError:
        href = p.resolve().as_uri()
    display({FLAMEGRAPH_MIME: info, "text/html": flamegraph_html(info, href),
             "text/plain": f"flame graph: {info['title']} ({info['path']})"}, raw=True)


# --- flaky infrastructure -------------------------------------------------------------------------------

def retry_once(fn, errors: tuple[type[BaseException], ...], what: str = "the run"):
    """``fn()``, and once more if it raises one of ``errors`` (e.g. a profiler that could not attach to
    a JVM starved of CPU by other processes). The failed attempt stays recorded as a failed run; the
    retry is announced in the output, so nothing is hidden. A second failure propagates."""
    try:
        return fn()
    except errors as e:
        first_line = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"{what} failed ({type(e).__name__}: {first_line}); retrying once")
        return fn()
