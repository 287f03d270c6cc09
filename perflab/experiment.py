"""One call for a whole measurement: server + prefill + load + profile + stats + record.

``run_experiment(ServerConfig(...), LoadParams(...), profile=ProfileParams("cpu"))`` does what an
engineer does by hand in four terminals: fill a fresh data directory (in-process, deterministic),
start the server, sample ``/v0/stats``, hold the load, profile exactly the measured window (after
warm-up), stop everything, and record every number and artifact in a run directory. Any exception,
Ctrl-C or SIGTERM stops the server, the generator and the profiler and leaves the run marked
``failed``/``interrupted``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import paths, procs
from .config import LoadParams, PrefillParams, ProfileParams, ServerConfig
from .config.target import ForeignServer
from .config.validity import ValidityThresholds
from .measure.load import LoadResult, start_load, tool_version
from .measure.attribution import Attribution, attribute
from .measure import hostspeed
from .measure.validity import Validity, assess
from .profiling import bridge
from .profiling.profiler import Profile, Profiler, Recording
from .records import Run, new_run
from .server import Server
from .server.events import await_delivery, events_frame, read_events
from .server.foreign import AttachedServer, ForeignProcess, stats_available
from .server.placement import Placement
from .server.proc import ProcSampler
from .server.stats import StatsSampler


class Session:
    """A recorded run around one server (used by :func:`run_experiment` and the breakpoint search).

    Creates the run, the data directory (``<data root>/scratch/<run id>/db``, deleted at the end
    unless ``keep_data`` or given as ``data_dir``), prefills it, starts the server with its logs in
    the run directory and a stats sampler; on exit stops everything and marks the run.
    """

    def __init__(self, kind: str, name: str, server: ServerConfig | ForeignServer | str,
                 prefill: PrefillParams | None = None, data_root=None, data_dir=None, keep_data: bool = False,
                 stats_interval: float = 1.0, params: dict | None = None, placement: Placement | str | None = None,
                 thresholds: ValidityThresholds | None = None):
        server = as_target(server)
        self.foreign = isinstance(server, ForeignServer)
        if prefill is not None and not isinstance(prefill, PrefillParams):
            raise ValueError(f"prefill must be a PrefillParams, got {type(prefill).__name__}")
        if prefill is not None and self.foreign:
            raise ValueError("prefill: it writes the built-in server's storage files; your server loads its own data")
        if prefill is not None and server.backend == "memory":
            raise ValueError("prefill needs a persistent backend (lsm or rocksdb); backend='memory' starts empty")
        if not (stats_interval > 0):
            raise ValueError(f"stats_interval must be > 0, got {stats_interval!r}")
        self.kind, self.name, self.config = kind, name, server
        self.placement = Placement.of(placement)
        if self.foreign and server.url is not None and self.placement.server_cpus is not None:
            raise ValueError("placement: a server that is already running (url) cannot be placed; use 'shared', or "
                             "a command (--server-cmd) that perflab starts")
        self.thresholds = thresholds or ValidityThresholds()
        self.proc: ProcSampler | None = None
        self.prefill_params = prefill
        self.data_root = paths.data_root(data_root)
        self.given_data_dir = Path(data_dir) if data_dir is not None else None
        self.keep_data = keep_data
        self.stats_interval = stats_interval
        self.extra_params = params or {}
        self.run: Run | None = None
        self.server = None
        self.sampler: StatsSampler | None = None
        self.stats_unavailable: str | None = None
        self.prefill_result: dict | None = None
        self.data_dir: Path | None = None
        self._scratch: Path | None = None
        self._sig = None
        self._servers: list[dict] = []
        self.calibrations: list[hostspeed.Calibration] = []

    def __enter__(self) -> "Session":
        params = {"server": self.config.to_dict(), "target": "foreign" if self.foreign else "built-in",
                  **self.extra_params,
                  "prefill": self.prefill_params.to_dict() if self.prefill_params else None,
                  "stats_interval": self.stats_interval, "validity": self.thresholds.to_dict()}
        self.run = new_run(self.kind, self.name, params, self.data_root)
        self.run.meta["placement"] = self.placement.to_dict()
        self.run.meta["environment"]["tools"]["perflab-load"] = tool_version(self.extra_params.get("_load"))
        self.run.save()
        self._sig = procs.sigterm_as_exception()
        self._sig.__enter__()
        try:
            self._setup()
        except BaseException as e:
            self.__exit__(type(e), e, e.__traceback__)
            raise
        return self

    def _setup(self):
        if not self.foreign and self.config.needs_data_dir:
            if self.given_data_dir is not None:
                self.data_dir = self.given_data_dir
            else:
                self._scratch = self.data_root / "scratch" / self.run.id
                self.data_dir = self._scratch / "db"
            self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.prefill_params is not None:
            p = self.prefill_params
            t = time.monotonic()
            self.prefill_result = bridge.prefill(self.data_dir, p.keys, p.value_size, p.seed, p.key_prefix,
                                                 backend=self.config.backend)
            self.prefill_result["wall_s"] = round(time.monotonic() - t, 3)
            self.run.update(prefill=self.prefill_result)
        self.start_server()
        self.calibrate()

    def start_server(self):
        if self.foreign:
            if self.config.command is not None:
                self.server = ForeignProcess(self.config, self.run.dir, self.placement.prefix("server")).start()
            else:
                self.server = AttachedServer(self.config)
            info = self.server.info()
            self.run.update(server={"java_version": self.server.java_version, "command": self.server.command,
                                    "foreign": info})
            if self.config.command is not None:
                self.run.meta["artifacts"]["server_log"] = "server.log"
        else:
            self.server = Server(self.config, data_dir=self.data_dir, log_dir=self.run.dir, keep_data=True,
                                 cpu_prefix=self.placement.prefix("server")).start()
            self.run.update(server={"java_version": self.server.java_version, "command": self.server.command,
                                    "jvm_flags": self.config.jvm_args(),
                                    "effective_config": self.server.effective_config, "ready": self.server.ready})
            self.run.meta["artifacts"].update({"server_log": "server.log", "server_events": "server-events.jsonl"})
        self._servers.append({"pid": self.server.pid, "started_at": time.time()})
        self.stats_unavailable = stats_available(self.server.url)
        if self.stats_unavailable is None:
            self.sampler = StatsSampler(self.server.url, self.stats_interval).start()
        else:
            self.run.update(stats_unavailable=self.stats_unavailable)
        self.proc = ProcSampler(self.server.pid).start() if self.server.pid else None

    @property
    def load_prefix(self) -> list[str]:
        """The command prefix that places the generator (see :mod:`perflab.server.placement`)."""
        return self.placement.prefix("load")

    def start_load(self, load: LoadParams, out_dir):
        return start_load(self.server.url, load, out_dir=out_dir, cpu_prefix=self.load_prefix)

    def calibrate(self) -> hostspeed.Calibration:
        """Time the fixed loop on every CPU (:mod:`perflab.measure.hostspeed`); call it while no load runs."""
        cal = hostspeed.calibrate()
        self.calibrations.append(cal)
        return cal

    def validity(self, res: LoadResult, started_at: float | None = None) -> Validity:
        """The validity record of a load that ran against this session's server; its ``host_speed`` check
        holds the last calibration before the load (and the first after it, if any) against the session's
        fastest."""
        start = res.measure_start or started_at or res.started_at
        end = res.measure_end or res.ended_at
        window = self.proc.window(start, end) if self.proc is not None and end else None
        began = started_at or start or 0.0
        before = [c for c in self.calibrations if c.at <= began][-1:]
        after = [c for c in self.calibrations if end and c.at >= end][:1]
        host = (before + after, self.calibrations) if before or after else None
        return assess(res, window, self.placement, self.thresholds, host)

    def restart_server(self):
        """Stop and start the server again on the same data (a fresh process per probe)."""
        if self.foreign and self.config.url is not None:
            raise ValueError("restart_server: a server that is already running (url) cannot be restarted")
        self._stop_server()
        self.start_server()

    def _stop_server(self):
        if self.sampler is not None:
            self.sampler.stop()
        if self.proc is not None:
            self.proc.stop()
        if self.server is not None:
            self.server.stop()
            info = self.server.info()
            self._servers[-1].update(exit_code=info.get("exit_code"), stopped=info.get("stopped"))

    def stats_frame(self, t0: float | None = None) -> pd.DataFrame:
        return self.sampler.frame(t0) if self.sampler is not None else pd.DataFrame()

    def __exit__(self, et, ev, tb):
        try:
            samples = list(self.sampler.samples) if self.sampler is not None else []
            self._stop_server()
            if samples and self.run is not None and not (self.run.dir / "stats.csv").exists():
                self.run.write_frame("stats.csv", self.sampler.frame(), artifact="stats")
            if self.run is not None:
                self.run.meta["servers"] = self._servers
                if self.calibrations:
                    self.run.meta["host_speed"] = {"loop": hostspeed.LOOP, "spread": hostspeed.spread(self.calibrations),
                                                   "calibrations": [c.to_dict() for c in self.calibrations]}
        finally:
            if self._scratch is not None and not self.keep_data:
                shutil.rmtree(self._scratch, ignore_errors=True)
            if self._sig is not None:
                self._sig.__exit__(None, None, None)
            if self.run is not None:
                self.run.__exit__(et, ev, tb)
        return False


def as_target(server) -> ServerConfig | ForeignServer:
    """``server`` as a target: a ``ServerConfig`` (the built-in server), a ``ForeignServer``, or a URL
    string (shorthand for ``ForeignServer(url=...)``)."""
    if isinstance(server, str):
        return ForeignServer(url=server)
    if not isinstance(server, (ServerConfig, ForeignServer)):
        raise ValueError(f"server must be a ServerConfig, a ForeignServer or the URL of a running server, "
                         f"got {type(server).__name__}")
    return server


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` returns.

    ``load``: the :class:`~perflab.measure.load.LoadResult`; ``stats``: ``/v0/stats`` samples (``t_s`` on the hdr
    log's time axis: 0 = start of the measured window); ``profile``: the first event's
    :class:`~perflab.profiling.profiler.Profile` or ``None`` (``profiles``: every event's, ``recording``: the
    JFR recording they come from); ``run``: the record (``run.id``, ``run.dir``); ``prefill``: the prefill
    tool's JSON; ``validity``: how valid the run is as a measure of the server (also in ``meta.json``);
    ``events``: the server's timed events (and the JVM's GC pauses) on the latency timeline's axis;
    ``attribution``: which events the latency spikes overlap (:mod:`perflab.measure.attribution`);
    ``spike_diff``: flame graphs of the spikes against the rest of the window, when there were spikes.
    """

    run: Run
    load: LoadResult
    stats: pd.DataFrame
    profile: Profile | None
    server: dict
    prefill: dict | None
    validity: Validity | None = None
    recording: Recording | None = None
    events: pd.DataFrame | None = None
    attribution: Attribution | None = None
    spike_diff: dict | None = None

    @property
    def profiles(self) -> dict:
        return dict(self.recording.profiles) if self.recording is not None else {}

    @property
    def run_id(self) -> str:
        return self.run.id

    @property
    def run_dir(self) -> Path:
        return self.run.dir

    @property
    def categories(self) -> pd.DataFrame | None:
        return self.profile.categories() if self.profile else None

    @property
    def category_shares(self) -> dict[str, float]:
        """category -> share (0..1) of the profile's samples ({} without a profile)."""
        c = self.categories
        return dict(zip(c["category"], c["share"])) if c is not None else {}

    @property
    def frames(self) -> pd.DataFrame | None:
        return self.profile.frames() if self.profile else None

    def __repr__(self):
        return f"<ExperimentResult {self.run.id} {self.validity.verdict if self.validity else ''} {self.load!r}{' +profile ' + self.profile.event if self.profile else ''}>"


def run_experiment(server: ServerConfig, load: LoadParams, profile: ProfileParams | None = None,
                   prefill: PrefillParams | None = None, name: str | None = None, data_root=None,
                   stats_interval: float = 1.0, data_dir=None, keep_data: bool = False,
                   placement: Placement | str | None = None,
                   thresholds: ValidityThresholds | None = None) -> ExperimentResult:
    """Start a server with ``server``, optionally prefill, run ``load`` against it, profile the
    measured window with ``profile``, record everything, stop. See the module docstring.

    ``stats_interval``: seconds between ``/v0/stats`` samples (e.g. 0.25 to pin flushes to latency
    intervals). ``data_dir``: use (and keep) this storage directory instead of a fresh one.
    ``placement``: ``"shared"`` or ``"split"`` CPUs for server and generator
    (:mod:`perflab.server.placement`). The run's validity record (:mod:`perflab.measure.validity`)
    lands in ``meta.json`` and on the result. ``server`` may also be a
    :class:`~perflab.config.target.ForeignServer` (or a URL): a server perflab did not build; a profile of
    it needs a HotSpot JVM, otherwise the run records everything else and says why there is no profile.
    """
    server = as_target(server)
    if not isinstance(load, LoadParams):
        raise ValueError(f"load must be a LoadParams, got {type(load).__name__}")
    if profile is not None and not isinstance(profile, ProfileParams):
        raise ValueError(f"profile must be a ProfileParams or None, got {type(profile).__name__}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    script = Path(load.script).stem if load.script else "path"
    name = name or f"{script}-{server.mode}-{load.rate:g}rps"
    params = {"load": load.to_dict(), "profile": profile.to_dict() if profile else None, "_load": load}
    if profile is not None:
        paths.async_profiler_lib()  # fail before starting anything when the profiler is not built
    with Session("experiment", name, server, prefill=prefill, data_root=data_root, data_dir=data_dir,
                 keep_data=keep_data, stats_interval=stats_interval, params=params, placement=placement,
                 thresholds=thresholds) as sess:
        run = sess.run
        run.meta["params"].pop("_load", None)
        run.save()
        profiler = None
        if profile is not None:
            why_not = profiling_unavailable(sess.server)
            if why_not is None:
                profiler = Profiler(sess.server.pid, profile, out_dir=run.dir,
                                    title=f"{profile.event}: {name}").prepare()
            else:
                warnings.warn(f"profiling unavailable: {why_not}; recording CPU, latency and validity only",
                              RuntimeWarning, stacklevel=2)
                run.update(profile_unavailable=why_not)
        prof = None
        lp = None
        try:
            if profiler is not None:
                # Record JFR around the whole load and keep exactly the measured window when
                # converting: the attach latency of a busy machine cannot shift the window.
                profiler.start_recording()
            lp = sess.start_load(load, out_dir=run.dir)
            res = lp.wait()
            if profiler is not None:
                start, end = _window(res, lp, load)
                prof = profiler.stop_window(start, end)
        except BaseException:
            if profiler is not None:
                profiler.abort()
            if lp is not None:
                lp.stop(1)
            raise
        t0 = res.measure_start or lp.started_at
        stats = sess.stats_frame(t0)
        sess.calibrate()
        validity = sess.validity(res, lp.started_at)
        await_delivery(res.measure_end or res.ended_at or time.time())  # the window's last events too
        events = _events(run, prof, t0)
        attribution = attribute(res.intervals, events) if not res.intervals.empty else None
        diff = None
        if prof is not None and attribution is not None and len(attribution.spikes):
            diff = prof.spike_diff([(t0 + a, t0 + b) for a, b in zip(attribution.spikes["start_s"],
                                                                     attribution.spikes["end_s"])])
        _record(run, res, stats, prof, validity, events, attribution, diff)
        return ExperimentResult(run, res, stats, prof.primary if prof else None, sess.server.info(),
                                sess.prefill_result, validity, prof, events, attribution, diff)


def _events(run: Run, rec, t0: float) -> pd.DataFrame:
    """The server's timed events of this run, plus the JVM's GC pauses from the recording when the server
    does not report its own (a server the user brings)."""
    own = read_events(run.dir / "server-events.jsonl", None)
    extra = []
    if rec is not None and rec.gc_events and not (own["event"] == "gc").any():
        extra = rec.gc_events
    rows = [{"event": r.event, "ts_us": r.ts_us, "dur_us": r.dur_us, **(r.details or {})} for r in own.itertuples()]
    return events_frame(rows + extra, t0)


def profiling_unavailable(server) -> str | None:
    """``None`` when async-profiler can attach to ``server`` (a HotSpot JVM whose pid is known), else why not."""
    pid = server.pid
    if not pid:
        return "the server's pid is unknown (give --pid with --url)"
    if isinstance(server, (ForeignProcess, AttachedServer)) and server.jvm is None:
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            exe = "?"
        return f"pid {pid} ({exe}) is not a JVM; async-profiler profiles HotSpot JVMs"
    return None


def _window(res: LoadResult, lp, load: LoadParams) -> tuple[float, float]:
    """The measured window in epoch seconds: from perflab-load's JSON summary, else (wrk2) the
    measured run's own start and end."""
    if res.measure_start and res.measure_end:
        return res.measure_start, res.measure_end
    return lp.started_at, res.ended_at


def _record(run: Run, res: LoadResult, stats: pd.DataFrame, rec, validity: Validity, events: pd.DataFrame,
            attribution: Attribution | None, diff: dict | None) -> None:
    from .measure.load import CONSOLE, HDR_LOG, STDERR, SUMMARY

    for art, f in (("console", CONSOLE), ("load_stderr", STDERR), ("summary", SUMMARY), ("hdr_log", HDR_LOG)):
        if (run.dir / f).exists():
            run.meta["artifacts"][art] = f
    if not stats.empty:
        run.write_frame("stats.csv", stats, artifact="stats")
        from .server import metrics as m
        cols = [c for c in stats.columns if c in ("t_s", m.QUEUE_DEPTH, m.REJECTED + "_delta", m.FLUSHES + "_delta",
                                                  m.COMPACTIONS + "_delta", m.GC_MS + "_delta", "requests_total_delta",
                                                  m.MEMTABLE_BYTES, m.SSTABLES)]
        run.add_rows("stats", stats[cols].rename(columns=lambda c: c.replace(".", "_")).to_dict("records"))
    iv = res.intervals
    if not iv.empty:
        run.write_frame("intervals.csv", iv, artifact="intervals")
        run.add_rows("intervals", iv.to_dict("records"))
    if not res.spectrum.empty:
        run.write_frame("spectrum.csv", res.spectrum, artifact="spectrum")
    run.meta["validity"] = validity.to_dict()
    run.add_rows("loads", [{**res.record(), "validity": validity.verdict}])
    results = dict(res.record())
    results["status_codes"] = res.status_counts
    results["measure_start"] = res.measure_start
    if len(events):
        run.write_frame("events.csv", events.drop(columns=["details"]).assign(
            details=events["details"].map(lambda d: json.dumps(d, default=str))), artifact="events")
        run.add_rows("events", [{k: v for k, v in r.items() if k != "details"} for r in events.to_dict("records")])
    if attribution is not None:
        results["spikes"] = {"count": len(attribution.spikes), "typical_p99_ms": attribution.typical_ms,
                             "threshold_ms": attribution.threshold_ms, "summary": attribution.summary(),
                             "kinds": [vars(k) for k in attribution.kinds]}
    if rec is not None:
        run.meta["artifacts"]["jfr"] = rec.jfr_path.name
        if rec.heatmap_path:
            run.meta["artifacts"]["heatmap"] = rec.heatmap_path.name
        results["profile"] = {"events": list(rec.profiles), "window": [rec.started_at, rec.stopped_at],
                              "gc_pauses": len(rec.gc_events), "warnings": rec.warnings}
        for ev, prof in rec.profiles.items():
            first = ev == next(iter(rec.profiles))
            run.meta["artifacts"]["collapsed" if first else f"collapsed_{ev}"] = prof.collapsed_path.name
            if prof.html_path:
                run.meta["artifacts"]["flamegraph" if first else f"flamegraph_{ev}"] = prof.html_path.name
            cats = prof.categories()
            run.write_frame(f"categories-{ev}.csv", cats)
            run.write_frame(f"frames-{ev}.csv", prof.frames().head(500))
            run.add_rows("profiles", [prof.record()])
            run.add_rows("categories", [{"event": ev, **r} for r in cats.to_dict("records")])
            results["profile"][ev] = {**prof.record(), "categories": dict(zip(cats["category"], cats["share"]))}
        if diff is not None:
            run.meta["artifacts"]["spikes_diff"] = diff["diff_html"].name
    run.set_result(**results)
