"""A lab notebook's plumbing around the library: setup, its parameters checked, what it measures built,
measuring with one printed line, Markdown.

A notebook's first code cell after ``parameters`` builds its configs from the parameters
(``pl.ServerConfig(...)``, ``pl.workload(...)``, ...), so the one validation layer of
:mod:`perflab.config` speaks: a bad plan fails in that cell, naming the parameter, before anything
runs. A parameter that is no config's field is checked by the same layer with :func:`param` (and
:func:`placements`); :func:`measured` (what is measured: the one resolver's answer), :func:`side`, :func:`servers_for_modes` and :func:`data_for` build the
configs that depend on more than one parameter.

Then :func:`measure` (one fixed-rate run), :func:`search_breakpoint` (one breakpoint search), :func:`against`
(several configurations, each compared with one baseline), :func:`measure_history` (a metric across
commits) and :func:`scan` (the whole range read once from a database beyond the heap) run the experiments,
each saying in one printed line how it went; what the runs show is each subject's story
(:mod:`perflab.analysis`, which measures nothing).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import secrets
import tempfile
import warnings
from pathlib import Path

import IPython.display as ipd
import pandas as pd
import plotly.io as pio

from .. import fmt, jdk, paths
from ..ab import compare_ab
from ..analysis.ab import Comparisons, answer_comparison, name_of
from ..analysis.breakpoints import estimate
from ..analysis.history import Source
from ..breakpoint import find_breakpoint
from ..commits import Commit
from ..config import BreakpointCriteria, BreakpointParams, PrefillParams, ProfileParams, ServerConfig
from ..config.fields import param
from ..config.hosts import SCHEDULER_ENV
from ..config.measured import Given, Measured, project_of, resolve
from ..config.regress import HistoryParams, RepoParams
from ..core.session import SessionOptions
from ..errors import ProfilerError
from ..experiment import run_experiment
from ..hosts.inventory import survey
from ..hosts.pool import connect
from ..regress import synthetic
from ..regress.history import HistoryResult, run_history
from ..scan import ScanResult, run_scan
from ..server.foreign import answer_to
from ..server.placement import Placement
from ..targets import target_of
from . import second_opinion

__all__ = [
    "setup",
    "param",
    "placements",
    "build",
    "measured",
    "side",
    "data_for",
    "api_args",
    "profile",
    "ceiling",
    "servers_for_modes",
    "measure",
    "search_breakpoint",
    "against",
    "measure_history",
    "scan",
    "scaled_breakpoint",
    "show_markdown",
    "second_opinion",
]

#: The plotly renderer of the lab's notebooks: the figure's JSON only. JupyterLab draws it
#: interactively; the report's export draws each figure from it with one shared copy of plotly.js per
#: report folder (:mod:`perflab.report.export`), so no notebook carries the 4.8 MB bundle itself.
RENDERER = "plotly_mimetype"


def setup() -> None:
    """Configure plotly and pandas the same way in JupyterLab and under papermill."""
    pio.renderers.default = RENDERER
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
    if not os.environ.get(SCHEDULER_ENV):
        return
    c = connect()
    hosts = survey(c, clocks=False)
    link = c.dashboard_link
    text = (
        f"Hosts: the Dask scheduler at `{c.address}`, "
        + ", ".join(f"{h.name} ({'+'.join(h.roles) or 'no role'})" for h in hosts)
        + (f"; dashboard: [{link}]({link})" if link else "; no dashboard (install bokeh where the scheduler runs)")
    )
    show_markdown(text)


# --- parameters that are no config's field (:func:`param`: the config layer's check) --------------------


def placements(value) -> tuple[str, ...]:
    """The CPU placements a notebook measures (its ``placements`` parameter: a list of ``shared``,
    ``split`` or ``server=CPUS;load=CPUS``), each checked by :meth:`perflab.server.placement.Placement.of`
    and returned as written."""
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


#: how the notebooks name what they measure (their parameters), in the resolver's errors
PARAMETERS = {"command": "server_cmd", "workdir": "server_dir"}


def measured(
    server_cmd: str | None = None,
    ready_path: str | None = None,
    server_dir: str | None = None,
    project: str | None = None,
    script_args=(),
    status_path: str | None = None,
    **built_in,
) -> Measured:
    """What a notebook measures, resolved as the command line and the report resolve it
    (:func:`perflab.config.measured.resolve`: the parameters given, not ``None``, over the project file over the
    defaults): your server started from ``server_cmd`` (with ``{port}``, run in ``server_dir``), the one a
    ``project`` file declares (else ``$PERFLAB_PROJECT``), or the built-in one configured by ``built_in``
    (``ServerConfig`` fields: the notebook's defaults, used when the built-in server is what is measured). Its
    ``target``, its API's ``script_args`` (then ``script_args``), profile ``categories`` and ``status_path``.
    Printed, so the notebook says what it measures."""
    m = resolve(
        Given(
            project=project,
            yours={"command": server_cmd, "ready_path": ready_path, "workdir": server_dir},
            script_args=param("script_args", script_args, "texts"),
            status_path=status_path,
            names=PARAMETERS,
        ),
        kind="server",
        builtin_defaults=built_in,
    )
    t = m.target
    print(t if isinstance(t, ServerConfig) else f"your server: {t.name}\n  {t.command or t.url}")
    return m


def side(common: dict | None, fields: dict | None, commit: str | None = None, what: str = "a"):
    """A notebook's side: the built-in server with ``common`` fields updated by the side's own
    (``ServerConfig`` keyword arguments), at ``commit`` when given (a :class:`~perflab.Commit`, built
    apart when the comparison starts). A bad field fails here, named with the side (``a: mode: ...``)."""
    for name, d in (("common", common), (what, fields)):
        if d is not None and not isinstance(d, dict):
            raise ValueError(f"{name}: expected a dict of ServerConfig fields, got {type(d).__name__}")
    known = {f.name for f in dataclasses.fields(ServerConfig)}
    for name, d in (("common", common), (what, fields)):
        unknown = sorted(set(d or {}) - known)
        if unknown:
            raise ValueError(
                f"{name}: {', '.join(map(repr, unknown))} is no ServerConfig field (a server flag, '-' written '_')"
            )
    try:
        cfg = ServerConfig(**{**(common or {}), **(fields or {})})
        return Commit(commit, cfg) if commit else cfg
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


def data_for(server, **fields) -> dict:
    """How GETs get data to read, as keywords of a run: the built-in server is prefilled in-process
    (``prefill=``, ``fields``: ``PrefillParams``'), any other server filled through its API with the same
    keys (``fill=``). The fields are checked either way."""
    params = PrefillParams(**fields)
    return {"prefill": params} if target_of(server).prefills else {"fill": params.keys}


def api_args(project: str | None, script_args) -> tuple[str, ...]:
    """The workload scripts' arguments of a notebook that takes a project file alone (08, 09: ``None`` is the
    built-in server's, no file looked for): the file's API (``path=``, ``param=``), then ``script_args``."""
    extra = param("script_args", script_args, "texts")
    proj = project_of(Given(project=project, no_project=not project, names=PARAMETERS))
    return (*(proj.script_args if proj is not None else ()), *extra)


def profile(events: str, what: Measured, **fields) -> ProfileParams:
    """The notebook's profile (``ProfileParams``: ``events``, ``fields``), with the categories of ``what`` is
    measured (:func:`measured`: its project file's)."""
    return ProfileParams(events, category=what.categories, **fields)


#: the course API's no-op endpoint, tried on a server of yours that declares none
COURSE_STATUS = "/v0/status"


def ceiling(what: Measured, include: bool = True) -> tuple[str | None, str]:
    """The no-op endpoint the ceiling search loads, and a note on it for the findings: the built-in server's
    ``/v0/status``, the ``status_path`` of ``what`` is measured (:func:`measured`: given, or its project's
    ``[api] status``); a
    server of yours that declares none is
    asked ``GET /v0/status`` (the course API's; the server is started once for the question) and, when it
    answers 200, that is used and the note says so. A server without one gets no ceiling (a search over answers
    that are not successes would be a "ceiling" of errors), and the note says why. ``include``: the notebook
    searches a ceiling at all (otherwise nothing is asked)."""
    server = what.target
    path = what.status_path or target_of(server).status_path
    if path:
        return path, ""
    if not include:
        return None, ""
    with tempfile.TemporaryDirectory(prefix="perflab-status-") as scratch:
        status = answer_to(server, COURSE_STATUS, Path(scratch))
    if status == 200:
        note = (
            f"Ceiling: your server declares no no-op endpoint, and it answered `GET {COURSE_STATUS}` with 200 "
            f'(the course API\'s), so the ceiling search loads that (`status = "{COURSE_STATUS}"` in the [api] '
            f"of its perflab.toml says so ahead)."
        )
        print(note)
        return COURSE_STATUS, note
    answered = f"answered {status}" if status is not None else "did not answer"
    return None, (
        f"No ceiling measured: your server declares no no-op endpoint (status_path, or status in the "
        f"[api] of its perflab.toml), and `GET {COURSE_STATUS}` {answered}; the cheapest request's "
        f"search needs one that answers 200."
    )


def servers_for_modes(modes, java_home: str | None = None, **fields) -> dict:
    """One ``ServerConfig`` per request-handling mode in ``modes`` (``fields``: the other ServerConfig
    fields), every one checked before anything else, so a bad mode is named at once.

    ``virtual`` needs a JDK of at least :data:`perflab.jdk.VIRTUAL_THREADS`: when ``java_home`` (or the
    default JDK) is older, the newest such JDK under ``/usr/lib/jvm`` runs the virtual-thread server; when
    there is none, ``virtual`` is left out. Prints which JDK runs virtual threads, or why they are skipped,
    and then every config."""
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


def measure(
    label: str,
    server,
    load,
    name: str,
    profile: ProfileParams | None = None,
    prefill: PrefillParams | None = None,
    fill: int | None = None,
    session: SessionOptions | None = None,
):
    """One fixed-rate run: ``pl.run_experiment(server, load, profile, prefill, name, fill, session=session)``,
    once more if the profiler failed (:func:`retry_once`), then one printed line: 'PUT, 1 connection: p99
    0.92 ms; valid; run <id>'."""
    r = retry_once(
        lambda: run_experiment(server, load, profile=profile, prefill=prefill, name=name, fill=fill, session=session),
        (ProfilerError,),
        label,
    )
    print(f"{label}: p99 {fmt.ms(r.load.p99_ms)}; {r.validity.badge if r.validity else 'not assessed'}; run {r.run_id}")
    return r


def scan(label: str, server, params, name: str, profile: ProfileParams | None = None) -> ScanResult:
    """The whole range read once from a database beyond the heap: ``pl.run_scan(server, params, profile, name)``,
    once more if the profiler failed, then one printed line: 'range read: 20,421 entries, 79.9 MiB in 0.84 s;
    chunk check passed; heap flat; run <id>'."""
    r = retry_once(lambda: run_scan(server, params, profile=profile, name=name), (ProfilerError,), label)
    g = r.read
    check = "chunk check passed" if g.ok else f"{len(g.faults)} faults{f' ({g.error})' if g.error else ''}"
    flat = {True: "heap flat", False: "heap not flat", None: "heap not judged"}[r.heap_summary.get("flat")]
    print(
        f"{label}: status {g.status}, {g.entries:,} entries, {fmt.mib(g.payload_bytes)} in "
        f"{g.seconds or 0:.2f} s; {check}; {flat}; run {r.run_id}"
    )
    return r


def search_breakpoint(
    label: str,
    server,
    load,
    name: str,
    wrk2=None,
    criteria: BreakpointCriteria | None = None,
    params: BreakpointParams | None = None,
    prefill: PrefillParams | None = None,
    fill: int | None = None,
    session: SessionOptions | None = None,
):
    """One breakpoint search: ``pl.find_breakpoint(server, load, criteria, params, name, prefill, fill=fill,
    session=session)``, then one printed line: 'GET, 64 connections: 50,000 req/s (interval [48,000, 52,000],
    resolved); probes' validity valid; 41 s; run <id>'. ``wrk2``: a real wrk2 binary, ``"auto"`` or ``None`` (:func:`.second_opinion.choose`) that then runs the held number
    from fresh starts (:func:`.second_opinion.ask`), its verdict printed on a second line."""
    wrk2 = second_opinion.choose(wrk2)  # a wrong path: an error before the server starts
    r = find_breakpoint(
        server, load, criteria=criteria, params=params, name=name, prefill=prefill, fill=fill, session=session
    )
    print(f"{label}: {estimate(r)}; probes' validity {r.validity or 'not assessed'}; {r.seconds:.0f} s; run {r.run_id}")
    if wrk2 is not None and r.rate is not None and r.holds:
        said = second_opinion.ask(server, load, r, wrk2, fill=fill, prefill=prefill, session=session)
        print(f"{label}: {said.words()}")
    return r


def against(
    servers: dict, load, name: str, baseline=None, label=None, session: SessionOptions | None = None, **comparison
) -> Comparisons:
    """Every configuration of ``servers`` (key -> ``ServerConfig``, in order) compared with ``baseline`` (a
    key; default the first), interleaved: :func:`perflab.compare_ab` of the baseline (A) and the
    configuration (B) with ``comparison`` (its ``rates`` or ``search``, ``params``, ``criteria``, ``prefill``,
    ``fill``) and ``session``, one ``ab`` run each named ``<name>-<key>``. ``label``: a key's words (called with the
    key, or with its parts when it is a tuple; default the key). Prints one line per comparison: its
    verdict, naming the method, and its run.

    Why against one baseline: a comparison is interleaved only between the two servers it runs side by
    side; two configurations that were each compared with the baseline were measured one after the other,
    so no verdict is drawn between them here."""
    if baseline is None:
        baseline = next(iter(servers), None)
    if baseline not in servers:
        raise ValueError(f"baseline: {baseline!r} is not among the configurations ({', '.join(map(name_of, servers))})")
    words = {k: (label(*k) if isinstance(k, tuple) else label(k)) if label else name_of(k) for k in servers}
    out = Comparisons(baseline, words)
    for key, cfg in servers.items():
        if key == baseline:
            continue
        slug = "-".join(map(str, key)) if isinstance(key, tuple) else str(key)
        with warnings.catch_warnings():
            # notebooks pick few pairs on purpose (the quick plan); the verdict says when none could claim
            warnings.filterwarnings("ignore", message="with at most")
            res = compare_ab(
                servers[baseline], cfg, load, name=f"{name}-{slug}", progress=False, session=session, **comparison
            )
        out[key] = res
        print(f"{words[key]} against {words[baseline]}: {answer_comparison(res)} {res.seconds:.0f} s; run {res.run_id}")
    return out


def measure_history(
    src: Source,
    workload,
    history_params: HistoryParams,
    name: str | None = None,
    session: SessionOptions | None = None,
    **history,
) -> HistoryResult:
    """Measure the history of ``src`` (:func:`perflab.analysis.history.source`; a synthetic one is made first,
    under ``<data root>/synthetic/``): :func:`perflab.regress.history.run_history` with ``history`` (its
    ``rate``, ``criteria``, ``prefill``, ``fill``, ``progress``) and ``session``."""
    if src.synthetic:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        root = paths.data_root(session.data_root if session else None) / "synthetic" / f"{stamp}-{secrets.token_hex(3)}"
        cost = int(src.planted_us) if float(src.planted_us).is_integer() else src.planted_us
        costs = [0] * src.planted + [cost] * (src.commits - src.planted)
        repo, good, bad = synthetic.declared(root, costs), f"HEAD~{src.commits - 1}", "HEAD"
        repo_params = RepoParams(repo=str(repo))
    else:
        good, bad = src.good, src.bad
        repo_params = RepoParams(repo=src.repo, project=src.project)
    return run_history(good, bad, workload, history_params, repo_params, name=name, session=session, **history)


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


# --- Markdown ---------------------------------------------------------------------------------------------


def show_markdown(*paragraphs: str) -> None:
    """The paragraphs (empty ones left out) as one Markdown output; nothing when all are empty."""
    text = "\n\n".join(p for p in paragraphs if p)
    if text:
        ipd.display(ipd.Markdown(text))
