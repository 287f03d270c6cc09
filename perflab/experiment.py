"""One call for a whole measurement: server + prefill + load + profile + stats + record.

``run_experiment(ServerConfig(...), LoadParams(...), profile=ProfileParams("cpu"))`` does what an
engineer does by hand in four terminals: fill a fresh data directory (in-process, deterministic),
start the server, sample ``/v0/stats``, hold the load, profile exactly the measured window (after
warm-up), stop everything, and record every number and artifact in a run directory (a
:class:`perflab.session.Session`). Any exception, Ctrl-C or SIGTERM stops the server, the generator and
the profiler and leaves the run marked ``failed``/``interrupted``.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import paths
from .config import LoadParams, PrefillParams, ProfileParams, ServerConfig
from .measure.attribution import Attribution, attribute
from .measure.generator import LoadTool
from .measure.result import CONSOLE, HDR_LOG, STDERR, SUMMARY, LoadResult
from .measure.validity import Validity
from .profiling.profiler import Profile, Recording
from .records import Run
from .server.events import await_delivery, events_frame, read_events
from .server.foreign import AttachedServer, ForeignProcess
from .session import Session, SessionOptions, as_target


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` returns.

    ``load``: the :class:`~perflab.measure.result.LoadResult`; ``stats``: ``/v0/stats`` samples (``t_s`` on the hdr
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
        return f"<ExperimentResult {self.run.id} {self.validity.level if self.validity else ''} {self.load!r}{' +profile ' + self.profile.event if self.profile else ''}>"


def run_experiment(server: ServerConfig, load: LoadParams, profile: ProfileParams | None = None,
                   prefill: PrefillParams | None = None, name: str | None = None, **options) -> ExperimentResult:
    """Start a server with ``server``, optionally prefill, run ``load`` against it, profile the
    measured window with ``profile``, record everything, stop. See the module docstring.

    ``options``: :class:`~perflab.session.SessionOptions` (``data_root``, ``placement``,
    ``stats_interval``, ``data_dir``, ``keep_data``, ``thresholds``). The run's validity record
    (:mod:`perflab.measure.validity`) lands in ``meta.json`` and on the result. ``server`` may also be a
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
    options = SessionOptions(**options)
    params = {"load": load.to_dict(), "profile": profile.to_dict() if profile else None}
    if profile is not None:
        paths.async_profiler_lib()  # fail before starting anything when the profiler is not built
    with Session("experiment", name, server, LoadTool.of(load), options, prefill=prefill, params=params) as sess:
        run = sess.run
        profiler = None
        if profile is not None:
            why_not = sess.server.profiling_unavailable
            if why_not is None:
                profiler = sess.profiler(profile, title=f"{profile.event}: {name}").prepare()
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
        sess.sync_events()
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
    if res.hosts is not None:
        run.meta.setdefault("hosts", {})["load"] = res.hosts
    run.add_rows("loads", [{**res.record(), "validity": str(validity.level)}])
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
