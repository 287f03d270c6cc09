"""One call for a whole measurement: server + prefill + load + profile + stats + record.

``run_experiment(ServerConfig(...), LoadParams(...), profile=ProfileParams("cpu"))`` does what an
engineer does by hand in four terminals: fill a fresh data directory (in-process, deterministic),
start the server, sample ``/v0/stats``, hold the load, profile exactly the measured window (after
warm-up), stop everything, and record every number and artifact in a run directory (a
:class:`perflab.core.session.Session`). Given a cluster, it runs :func:`perflab.cluster_run.run_cluster`
(which also takes faults, the consistency checker and a fill). Any exception, Ctrl-C or SIGTERM stops the server, the generator and
the profiler and leaves the run marked ``failed``/``interrupted``.
"""

from __future__ import annotations

import time
import warnings

from . import paths
from .cluster_run import run_cluster
from .config import LoadParams, PrefillParams, ProfileParams, ServerConfig
from .config.target import ForeignServer
from .core.fill import check_fill
from .core.fill import fill as fill_target
from .core.record import ExperimentResult, load_events, record_load, window
from .core.session import Session, SessionOptions, check_load
from .measure.attribution import attribute
from .measure.events import await_delivery
from .measure.generator import LoadTool
from .targets import target_of


def run_experiment(server: ServerConfig | ForeignServer | str, load: LoadParams, profile: ProfileParams | None = None,
                   prefill: PrefillParams | None = None, name: str | None = None, fill: int | None = None,
                   **options) -> ExperimentResult:
    """Start a server with ``server``, optionally prefill, run ``load`` against it, profile the
    measured window with ``profile``, record everything, stop. See the module docstring.

    ``fill``: write ``key0 .. key<fill-1>`` through the server's API before the load (any server; the
    built-in one can be prefilled in-process instead, :mod:`perflab.core.fill`).

    ``options``: :class:`~perflab.core.session.SessionOptions` (``data_root``, ``placement``,
    ``stats_interval``, ``data_dir``, ``keep_data``, ``thresholds``, the hosts). The run's validity record
    (:mod:`perflab.measure.validity`) lands in ``meta.json`` and on the result. ``server`` may also be a
    :class:`~perflab.config.target.ForeignServer` (or a URL): a server perflab did not build; a profile of
    it needs a HotSpot JVM, otherwise the run records everything else and says why there is no profile.
    """
    target = target_of(server)
    target.check_prefill(prefill)
    check_fill(fill)
    if target.kind == "cluster":   # N nodes: a cluster's run (faults and the checker: call run_cluster directly)
        return run_cluster(target, load, profile=profile, name=name, fill=fill, **options)
    if prefill is not None and fill is not None:
        raise ValueError("prefill and fill: give one (prefill writes the storage before the server starts, fill "
                         "writes through its API after)")
    if not isinstance(load, LoadParams):
        raise ValueError(f"load must be a LoadParams, got {type(load).__name__}")
    if profile is not None and not isinstance(profile, ProfileParams):
        raise ValueError(f"profile must be a ProfileParams or None, got {type(profile).__name__}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    name = name or f"{load.workload_name}-{target.mode}-{load.rate:g}rps"
    options = SessionOptions(**options)
    check_load(target, load, options)
    params = {"load": load.to_dict(), "profile": profile.to_dict() if profile else None, "fill": fill}
    if profile is not None:
        paths.async_profiler_lib()  # fail before starting anything when the profiler is not built
    with Session("experiment", name, target, LoadTool.of(load), options, prefill=prefill, params=params) as sess:
        run = sess.run
        if fill is not None:
            fill_target(sess, fill, load)
        profiler = None
        if profile is not None:
            why_not = sess.handle.profiling_unavailable
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
            lp = sess.start_ready(load, out_dir=run.dir)
            res = lp.wait()
            if profiler is not None:
                prof = profiler.stop_window(*window(res, lp.started_at))
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
        sess.sync_files()
        events = load_events(run, prof, t0)
        attribution = attribute(res.intervals, events) if not res.intervals.empty else None
        diff = None
        if prof is not None and attribution is not None and len(attribution.spikes):
            diff = prof.spike_diff([(t0 + a, t0 + b) for a, b in zip(attribution.spikes["start_s"],
                                                                     attribution.spikes["end_s"])])
        record_load(run, res, stats, prof, validity, events, attribution, diff)
        return ExperimentResult(run, res, stats, prof.primary if prof else None, sess.handle.info(),
                                sess.prefill_result, validity, prof, events, attribution, diff)
