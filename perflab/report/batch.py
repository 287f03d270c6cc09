"""The batch: run a plan's notebooks through papermill, export them, write the index.

``run_plan(plan)`` makes ``<report root>/<timestamp>/`` with

* ``notebooks/<name>.ipynb``  each executed notebook (outputs included, also when it failed);
* ``<name>.html``             each exported to offline HTML (see :mod:`perflab.report.export`);
* ``assets/plotly.min.js``    the one copy of plotly.js every page loads;
* ``flamegraphs/*.html``      async-profiler's flame graphs the pages link;
* ``index.html``, ``report.json``  the findings first (each notebook's answer, key number, validity,
  the breakpoints), then what was run: plan, parameters, versions, machine, git commit, status and
  error of each notebook, links to its runs under the data root;
* ``screenshots/<name>.png``  chromium's rendering of each page (when chromium is installed),

then points ``<report root>/latest`` at it. A failing notebook does not stop the batch: it is exported
up to its error, listed as failed with the error in the index, and the batch goes on; the caller
(``perflab report``, :mod:`perflab.cli.commands`) exits non-zero at the end.

The report root is ``$PERFLAB_REPORT`` or ``<repo>/report``; runs go where the library records them
(``$PERFLAB_DATA`` or ``<repo>/data``). Notebooks run with their own directory as the working
directory, as in JupyterLab, so an interactive run and a batch run behave the same.
"""

from __future__ import annotations

import datetime as dt
import html
import os
import shutil
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from .. import i18n, paths
from ..analysis import findings
from ..config.hosts import GENERATORS_ENV, SCHEDULER_ENV, TLS_ENV, generators_of
from ..core.sweep import disjoint_sets
from ..errors import ServerFault
from ..hosts.inventory import survey
from ..hosts.pool import connect
from ..measure.generator import LoadTool
from ..measure.validity import Level
from ..records import environment, iter_runs, run_names
from . import aim, export, index_page, markdown
from .browser import check as br
from .browser.cdp import Chromium, find_chromium
from .facts import SERVER_FAULT
from .plans import NotebookSpec, Plan, notebooks_dir


@dataclass
class NotebookResult:
    notebook: str
    title: str
    question: str
    status: str = "pending"  # ok | failed | not applicable | server fault (SERVER_FAULT)
    error: str | None = None  # "ename: evalue" of the failing cell, or the runner's error
    error_cell: int | None = None
    seconds: float = 0.0
    started: str = ""
    parameters: dict = field(default_factory=dict)  # the plan's overrides
    effective_parameters: dict = field(default_factory=dict)  # notebook defaults + overrides
    html: str | None = None  # relative to the report folder
    ipynb: str | None = None
    html_bytes: int | None = None
    plotly_js_copies: int | None = None
    export_error: str | None = None
    runs: list[dict] = field(default_factory=list)  # {"id", "path" (relative link), "status", "validity"}
    browser: dict | None = None
    finding: dict | None = None  # what the notebook's answer left (findings.read)
    flamegraphs: list[str] = field(default_factory=list)  # flame graph files the page links
    missing_files: list[str] = field(default_factory=list)  # files the page should link but could not find

    @property
    def runs_validity(self) -> str | None:
        """The worst validity level among the runs this notebook recorded (None: none recorded one)."""
        return Level.worst(r.get("validity") for r in self.runs)

    @property
    def validity(self) -> str | None:
        """The finding's validity level, else the runs'."""
        return (self.finding or {}).get("validity") or self.runs_validity


@dataclass
class Report:
    plan: str
    plan_description: str
    folder: str
    started: str
    target: str = ""  # empty: the built-in server
    lead: str | None = None  # the notebook whose finding heads the index (your stages compared)
    stage: int | None = None  # the course stage whose asks the report answers (perflab.report.stage)
    caveat: str = ""  # the plan's line on what its numbers are not (every page shows it)
    language: str = (
        i18n.DEFAULT
    )  # what report.md and the index are written in (perflab.i18n; the notebook pages: English)
    finished: str = ""
    seconds: float = 0.0
    command: str = ""
    data_root: str = ""
    # the environment record (perflab.records.environment), field by field
    git: dict = field(default_factory=dict)
    machine: dict = field(default_factory=dict)
    python: dict = field(default_factory=dict)
    tools: dict = field(default_factory=dict)
    notebooks: list[NotebookResult] = field(default_factory=list)
    browser_check: str = "not run"
    markdown: str = "not written"  # report.md (perflab.report.markdown): what was written, or why not
    index_browser: dict | None = None
    load_start: list | None = None  # the machine's load average (1, 5, 15 min) when the batch began
    load_end: list | None = None  # ... and when it ended

    @property
    def failed(self) -> list[NotebookResult]:
        return [n for n in self.notebooks if n.status not in ("ok", "not applicable", SERVER_FAULT) or n.export_error]

    @property
    def breakpoints(self) -> list[dict]:
        """Every notebook's breakpoint rows, each with the notebook it came from."""
        return [{**b, "notebook": n.notebook} for n in self.notebooks for b in (n.finding or {}).get("breakpoints", [])]

    def to_json(self) -> dict:
        d = asdict(self)
        d["failed"] = [n.notebook for n in self.failed]
        for n, src in zip(d["notebooks"], self.notebooks):
            if n.get("finding"):
                n["finding"] = {k: v for k, v in n["finding"].items() if k != "preview"}  # figures: index.html
            n["validity"] = src.validity
            n["runs_validity"] = src.runs_validity
        d["breakpoints"] = self.breakpoints
        return d


def _notebook_info(path: Path, target: str = aim.BUILTIN, effective: dict | None = None) -> tuple[str, str]:
    """(title, question) of the notebook as its page for ``target`` shows them (:mod:`perflab.report.aim`: the
    question with the ``effective`` parameters), from its first markdown cell: '# Title' and a '**Question:**'
    line."""

    nb = aim.aimed(nbformat.read(str(path), as_version=4), target, effective or {})
    title, question = path.stem, ""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            s = line.strip()
            if s.startswith("# ") and title == path.stem:
                title = s[2:].strip()
            elif s.lower().startswith("**question") and not question:
                question = s.split(":**", 1)[-1].strip() if ":**" in s else s.strip("*")
        break
    return title, question


def _effective(src: Path, overrides: dict, target: str = aim.BUILTIN) -> dict:
    """Every parameter that reaches ``target`` as Python source text: the notebook's default, or the plan's
    override (the other target's parameters are left out: they did not reach this one)."""
    try:
        params = aim.parameters(src)
    except Exception:  # noqa: BLE001 - the defaults are information only
        params = {}
    theirs = aim.foreign(params, target)
    out = {k: str(v.get("default")) for k, v in params.items() if k not in theirs}
    for k, v in overrides.items():
        if k not in theirs:
            out[k] = repr(v)
    return out


def _timestamp() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")


def _new_folder(root: Path) -> Path:
    stamp = _timestamp()
    folder = root / stamp
    n = 1
    while folder.exists():
        n += 1
        folder = root / f"{stamp}-{n}"
    folder.mkdir(parents=True)
    return folder


def point_latest(root: Path, folder: Path) -> Path:
    """``root/latest`` -> ``folder`` (a relative symlink, replaced atomically)."""
    link = root / "latest"
    tmp = root / f".latest-{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(folder.name, tmp)
    os.replace(tmp, link)
    return link


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


#: the longest path of a Unix socket (``sun_path``'s 108 bytes with its NUL)
UNIX_SOCKET_PATH_MAX = 107
#: the longest name the kernel's sockets take in their directory (``kernel-ipc-5``, with room to spare)
_SOCKET_NAME = "kernel-ipc-99999"


def _ipc_dir() -> str:
    """A directory of this kernel's own for its sockets: in ``$TMPDIR`` when their paths fit a Unix socket's, else
    in ``/tmp`` (a deep ``$TMPDIR``, as pytest's under xdist, made the kernel's socket paths too long to bind:
    the kernel never answered and the report waited on it)."""
    d = tempfile.mkdtemp(prefix="perflab-kernel-")
    if len(os.path.join(d, _SOCKET_NAME).encode()) <= UNIX_SOCKET_PATH_MAX:
        return d
    os.rmdir(d)
    return tempfile.mkdtemp(prefix="perflab-kernel-", dir="/tmp")


def _unlingering_context() -> zmq.asyncio.Context:
    ctx = zmq.asyncio.Context()
    ctx.linger = 0  # the default of every socket it makes
    return ctx


class _UnlingeringClient(AsyncKernelClient):
    """A kernel client whose sockets linger for nothing (see :func:`_kernel_manager_class`)."""

    @default("context")
    def _default_context(self):
        self._created_context = True
        return _unlingering_context()


def _kernel_manager_class(ipc_dir: str, env: dict | None = None):
    """A kernel manager whose kernels talk to the batch over local IPC sockets: the batch and its kernels
    share one machine, so no TCP port is opened (and the kernel does not warn about TCP without
    encryption once per notebook). ``env``: variables the kernel gets besides the batch's own (its hosts
    and its run tag when notebooks run side by side: the process environment is shared by all of them);
    ``ipc_dir``: where its sockets go, a directory of this kernel's own (kernels started at once in one
    directory pick the same socket names and read each other's messages: two reports at once in one
    checkout failed with "Invalid Signature"). The manager's and its client's ZeroMQ sockets linger for nothing: a
    context left to the garbage collector after a failed start (a message queued to a kernel that never
    answered) otherwise blocks its finalizer forever, wherever the collector happens to run."""

    extra = dict(env or {})

    class IpcKernelManager(AsyncKernelManager):
        @default("transport")
        def _default_transport(self):
            return "ipc"

        @default("context")
        def _default_context(self):
            self._created_context = True
            return _unlingering_context()

        @default("client_factory")
        def _default_client_factory(self):
            return _UnlingeringClient

        @default("ip")
        def _default_ip(self):
            return os.path.join(ipc_dir, "kernel-ipc")

        async def _async_pre_start_kernel(self, **kw):
            if extra:
                kw["env"] = {**os.environ, **(kw.get("env") or {}), **extra}
            return await super()._async_pre_start_kernel(**kw)

    return IpcKernelManager


def execute(
    spec: NotebookSpec,
    src: Path,
    out: Path,
    progress: bool,
    cell_timeout: float | None,
    kernel_name: str | None,
    env: dict | None = None,
    target: str = aim.BUILTIN,
    effective: dict | None = None,
) -> tuple[str, str | None, int | None]:
    """Run one notebook with papermill, as its page for ``target`` says it (:func:`perflab.report.aim.aimed`):
    (status, error, failing cell index)."""

    import papermill  # in here: ~0.3 s to import, and only running notebooks needs it
    from papermill.exceptions import PapermillExecutionError

    ipc_dir = _ipc_dir()
    # the kernel's $TMPDIR is in its directory too, removed with it: what a kernel killed mid-cell could not remove
    # itself (its hosts' work directory, removed at its exit) goes with the kernel, not into the user's $TMPDIR
    kernel_tmp = os.path.join(ipc_dir, "tmp")
    os.mkdir(kernel_tmp)
    env = {**(env or {}), "TMPDIR": kernel_tmp}
    try:
        node = aim.aimed(nbformat.read(str(src), as_version=4), target, effective or {})
        papermill.execute_notebook(
            node,
            str(out),
            parameters=dict(spec.parameters),
            cwd=str(src.parent),
            progress_bar=progress,
            log_output=False,
            kernel_name=kernel_name,
            execution_timeout=cell_timeout,
            request_save_on_cell_execute=True,
            kernel_manager_class=_kernel_manager_class(ipc_dir, env),
        )
        return "ok", None, None
    except PapermillExecutionError as e:
        return "failed", f"{e.ename}: {e.evalue}", e.cell_index
    except Exception as e:  # noqa: BLE001 - a dead kernel or a timeout must not stop the batch
        return "failed", f"{type(e).__name__}: {e}", None
    finally:
        shutil.rmtree(ipc_dir, ignore_errors=True)


def run_plan(
    plan: Plan,
    *,
    root: str | os.PathLike | None = None,
    progress: bool = True,
    browser: bool | None = None,
    cell_timeout: float | None = None,
    kernel_name: str | None = None,
    command: str = "",
    hosts: dict | None = None,
) -> tuple[Report, Path]:
    """Run every notebook of ``plan``; write the report folder. Returns (report, folder).

    ``hosts``: HostOptions fields (``scheduler``, ``generators``): the notebooks then run side by side,
    as many at once as the scheduler has disjoint host sets (:func:`perflab.core.sweep.disjoint_sets`), each
    run leasing its hosts; a notebook marked ``after`` (the summary) runs once the others are done."""
    root_dir = paths.report_root(root)
    folder = _new_folder(root_dir)
    t_start = time.monotonic()
    # Progress bars inside the notebooks have no one to watch them in a batch; in the executed
    # notebooks and the pages they would only leave their last frame behind.
    saved_tqdm = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        return _run_plan(
            plan, root_dir, folder, progress, browser, cell_timeout, kernel_name, command, t_start, hosts or {}
        )
    finally:
        if saved_tqdm is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = saved_tqdm


def _run_plan(plan, root_dir, folder, progress, browser, cell_timeout, kernel_name, command, t_start, hosts):

    nb_dir = notebooks_dir()
    loadgen = LoadTool("perflab-load", paths.loadgen_binary())
    env = environment.environment(
        {
            loadgen.name: loadgen.version(),
            "java": environment.java_version(),
            "chromium": environment.chromium_version(),
        }
    )
    report = Report(
        plan=plan.name,
        plan_description=plan.description,
        folder=str(folder),
        target=plan.target,
        lead=plan.lead,
        stage=plan.stage,
        caveat=plan.caveat,
        language=plan.language,
        started=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        command=command,
        data_root=str(paths.data_root()),
        **env,
        load_start=environment.load_average(),
    )
    # resolve every notebook first: a plan naming a missing notebook fails before anything runs
    sources = [(spec, spec.path(nb_dir)) for spec in plan.notebooks]
    width = _width(hosts)
    _say(
        f"perflab report: plan {plan.name}, {len(sources)} notebooks -> {folder}"
        + (f" ({width} at once on {hosts.get('scheduler')})" if width > 1 else "")
    )
    (folder / "notebooks").mkdir()
    total = len(sources)
    results = []
    for i, (spec, src) in enumerate(sources, 1):
        effective = _effective(src, spec.parameters, plan.aim)
        title, question = _notebook_info(src, plan.aim, effective)
        res = NotebookResult(
            notebook=spec.name,
            title=spec.title or title,
            question="" if spec.not_applicable else question,  # its reason says what it would ask
            parameters=dict(spec.parameters),
        )
        res.effective_parameters = {} if spec.not_applicable else effective  # nothing of it ran
        report.notebooks.append(res)
        results.append((i, spec, src, res))

    def one(i, spec, src, res):
        _say(f"[{i}/{total}] {spec.name}: {res.title}")
        if spec.not_applicable:
            res.status, res.error = "not applicable", spec.not_applicable
            _say(f"[{i}/{total}] {spec.name}: skipped, {spec.not_applicable}")
            return
        before = run_names()
        out = folder / "notebooks" / f"{spec.name}.ipynb"
        res.started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        t0 = time.monotonic()
        tag = f"{folder.name}/{spec.name}"
        # the kernels measure on the scheduler's hosts (one at a time, or side by side tagged by notebook)
        kernel_env = {**_host_env(hosts), **({"PERFLAB_RUN_TAG": tag} if width > 1 else {})} or None
        res.status, res.error, res.error_cell = execute(
            spec,
            src,
            out,
            progress and width == 1,
            cell_timeout,
            kernel_name,
            kernel_env,
            plan.aim,
            res.effective_parameters,
        )
        if res.status == "failed" and (res.error or "").startswith(f"{ServerFault.__name__}:"):
            res.status = SERVER_FAULT  # the student's bug, found: a finding of the report, not its failure
        res.seconds = round(time.monotonic() - t0, 1)
        res.runs = _new_runs(before, folder, tag if width > 1 else None)
        if out.exists():
            res.ipynb = os.path.relpath(out, folder)
            try:
                res.finding = findings.read(out)
            except Exception as e:  # noqa: BLE001 - an unreadable finding must not stop the batch
                res.export_error = f"finding: {type(e).__name__}: {e}"
            nav = _nav(sources, i - 1)
            try:
                info = export.export_notebook(
                    out, folder / f"{spec.name}.html", nav_html=nav, title=res.title, caveat=plan.caveat
                )
                res.html = f"{spec.name}.html"
                res.html_bytes, res.plotly_js_copies = info["bytes"], info["plotly_js_copies"]
                res.flamegraphs, res.missing_files = info["flamegraphs"], info["missing"]
            except Exception as e:  # noqa: BLE001
                res.export_error = f"{type(e).__name__}: {e}"
                _say(traceback.format_exc())
        state = {"ok": "ok", SERVER_FAULT: f"stopped at a fault of your server ({res.error})"}.get(
            res.status, f"FAILED ({res.error})"
        )
        _say(f"[{i}/{total}] {spec.name}: {state} in {res.seconds:.0f} s, {len(res.runs)} runs recorded")

    # notebooks that read what the others recorded (the summary) wait for them, one at a time or side by side
    first = [r for r in results if not r[1].after]
    if width == 1:
        for item in first:
            one(*item)
    else:
        with ThreadPoolExecutor(max_workers=width, thread_name_prefix="perflab-report") as pool:
            for f in [pool.submit(one, *item) for item in first]:
                f.result()
    for item in results:
        if item[1].after:
            one(*item)
    report.finished = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    report.seconds = round(time.monotonic() - t_start, 1)
    report.load_end = environment.load_average()
    index_page.write(report, folder)

    if browser is None:
        browser = find_chromium() is not None
    if browser:
        _say("checking the pages in headless chromium ...")
        report.browser_check = _browser_check(report, folder)
        _say(f"chromium: {report.browser_check}")
        report.markdown = _markdown(folder)
        _say(f"markdown: {report.markdown}")
        index_page.write(report, folder)
    point_latest(root_dir, folder)
    return report, folder


def _markdown(folder: Path) -> str:
    """``report.md`` beside the pages (:mod:`perflab.report.markdown`): what was written, or why it was not (a
    report is still complete without it)."""
    try:
        doc = markdown.write(folder)
    except Exception as e:  # noqa: BLE001 - the HTML report stands without its Markdown twin
        _say(traceback.format_exc())
        return f"not written: {type(e).__name__}: {e}"
    return (
        f"{doc.path.name}, with {len(doc.figures)} figures and {len(doc.flamegraphs)} flame graph files beside "
        f"it (perflab markdown {folder} --out DIR copies it where you hand it in)"
    )


def _new_runs(before: set[str], folder: Path, tag: str | None = None) -> list[dict]:
    """The runs a notebook recorded (those that were not there before it ran and, when notebooks run side by
    side, carry its tag), as the index page lists them."""
    return [
        {
            "id": run.id,
            "path": os.path.relpath(run.dir, folder),
            "status": run.status,
            "label": run.name,
            "kind": run.kind,
            "validity": run.validity,
            "validity_reasons": run.validity_reasons,
        }
        for run in iter_runs(names=sorted(run_names() - before))
        if tag is None or run.meta.get("tag") == tag
    ]


def _width(hosts: dict) -> int:
    """How many notebooks run at once: one on this machine, else the scheduler's disjoint host sets."""
    if not hosts.get("scheduler"):
        return 1
    n = generators_of(hosts.get("generators"))
    return disjoint_sets(
        survey(connect(hosts["scheduler"], hosts.get("tls")), clocks=False), n if isinstance(n, int) else 1
    )


def _host_env(hosts: dict) -> dict:
    """The hosts as the kernels' environment (HostOptions reads PERFLAB_SCHEDULER, PERFLAB_GENERATORS,
    PERFLAB_TLS); none for this machine's."""
    if not hosts.get("scheduler"):
        return {}
    out = {SCHEDULER_ENV: hosts["scheduler"], **({TLS_ENV: hosts["tls"]} if hosts.get("tls") else {})}
    if hosts.get("generators") is not None:
        g = hosts["generators"]
        out[GENERATORS_ENV] = ",".join(g) if isinstance(g, (list, tuple)) else str(g)
    return out


def _nav(sources: list, index: int) -> str:

    parts = ['<a href="index.html">&larr; report index</a>']
    if index > 0:
        prev = sources[index - 1][0].name
        parts.append(f'<a href="{html.escape(prev)}.html">previous: {html.escape(prev)}</a>')
    if index + 1 < len(sources):
        nxt = sources[index + 1][0].name
        parts.append(f'<a href="{html.escape(nxt)}.html">next: {html.escape(nxt)}</a>')
    return " &middot; ".join(parts)


def _browser_check(report: Report, folder: Path) -> str:
    """Render every page in headless chromium (two at a time: two browsers, each checking its pages one after
    another in a tab of its own, since starting a chromium costs more CPU than most pages; the index last, in the
    first one's), screenshots in ``screenshots/``."""

    def check(page: Path, name: str, browser: Chromium | None = None) -> dict:
        try:
            chk = br.check_page(page, folder / "screenshots" / f"{name}.png", browser=browser)
            return {
                "ok": chk.ok,
                "summary": chk.summary(),
                "plots": chk.plot_divs,
                "drawn": chk.drawn_plots,
                "untitled_plots": chk.untitled_plots,
                "unlabelled_axes": chk.unlabelled_axes,
                "code": chk.code,
                "consoles": {k: v for k, v in chk.consoles.items() if k != "summaries"},
                "network": chk.network,
                "errors": chk.errors[:10],
                "screenshot": os.path.relpath(chk.screenshot, folder) if chk.screenshot else None,
            }
        except Exception as e:  # noqa: BLE001 - a browser problem is a finding of the report, not a crash
            return {"ok": False, "summary": f"{type(e).__name__}: {e}", "errors": [str(e)], "screenshot": None}

    kept: list[Chromium] = []  # the first chunk's browser, left open for the index

    def check_all(chunk: list[NotebookResult], keep: bool = False) -> list[dict]:
        out, browser = [], None
        try:
            for n in chunk:
                if browser is None:
                    try:
                        browser = Chromium(timeout=br.PAGE_TIMEOUT)
                    except Exception as e:  # noqa: BLE001 - as check(): a finding of the report, not a crash
                        out.append({"ok": False, "summary": f"{type(e).__name__}: {e}", "errors": [str(e)]})
                        continue
                out.append(check(folder / n.html, n.notebook, browser))
                if not out[-1]["ok"]:  # whatever went wrong, the next page gets a browser of its own
                    browser.close()
                    browser = None
        finally:
            if browser is not None and keep:
                kept.append(browser)
            elif browser is not None:
                browser.close()
        return out

    pages = [n for n in report.notebooks if n.html]
    chunks = [pages[0::2], pages[1::2]]
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            for chunk, infos in zip(chunks, pool.map(check_all, chunks, (True, False))):
                for n, info in zip(chunk, infos):
                    n.browser = {"screenshot": None, **info}
        good = sum(1 for n in pages if n.browser["ok"])
        # the index last, so that its screenshot shows the notebooks' results (a chromium fewer to start: the first
        # chunk's, unless a page that went wrong closed it)
        report.browser_check = f"{good}/{len(pages)} notebook pages rendered without errors"
        index_page.write(report, folder)
        report.index_browser = check(folder / "index.html", "index", kept[0] if kept else None)
    finally:
        for b in kept:
            b.close()
    good += 1 if report.index_browser["ok"] else 0
    return (
        f"{good}/{len(pages) + 1} pages (the notebooks and this index) rendered in headless chromium "
        f"without script errors or network requests; plots drawn: "
        f"{sum((n.browser or {}).get('drawn', 0) for n in pages)}/"
        f"{sum((n.browser or {}).get('plots', 0) for n in pages)}; code hidden and its toggles working on "
        f"{sum(1 for n in pages if ((n.browser or {}).get('code') or {}).get('works'))}/{len(pages)} pages"
    )
