"""One call for a whole measurement: server + prefill + load + profile + stats + record.

``run_experiment(ServerConfig(...), LoadParams(...), profile=ProfileParams("cpu"))`` does what an
engineer does by hand in four terminals: fill a fresh data directory (in-process, deterministic),
start the server, sample ``/v0/stats``, hold the load, profile exactly the measured window (after
warm-up), stop everything, and record every number and artifact in a run directory (a
:class:`perflab.core.session.Session`). It is the one front door of a fixed-rate run: given a cluster, the
run is a cluster's (:mod:`perflab.cluster_run`: faults, the consistency checker, per-node profiles, the key
distribution). Any exception, Ctrl-C or SIGTERM stops the server, the generator and the profiler and leaves the
run marked ``failed``/``interrupted``.
"""

from __future__ import annotations

from pathlib import Path

from . import cluster_run, paths
from .config import LoadParams, PrefillParams, ProfileParams, ServerConfig
from .config.target import ForeignServer
from .core.fill import check_fill
from .core.fill import fill as fill_target
from .core.record import ExperimentResult, record_window
from .core.session import Session, SessionOptions, check_load
from .core.window import measure
from .measure.generator import LoadTool
from .targets import target_of


def run_experiment(
    server: ServerConfig | ForeignServer | str,
    load: LoadParams,
    profile: ProfileParams | None = None,
    prefill: PrefillParams | None = None,
    name: str | None = None,
    fill: int | None = None,
    faults=(),
    consistency=None,
    profile_nodes="all",
    keys: int | None = None,
    status_bin: float = 1.0,
    session: SessionOptions | None = None,
) -> ExperimentResult:
    """Start a server with ``server``, optionally prefill, run ``load`` against it, profile the
    measured window with ``profile``, record everything, stop. See the module docstring. A JVM that is
    profiled first gets the unrecorded load a breakpoint search gives it (:func:`perflab.core.probe.jvm_warmup_s`).

    ``fill``: write ``key0 .. key<fill-1>`` through the server's API before the load (any server; the
    built-in one can be prefilled in-process instead, :mod:`perflab.core.fill`).

    ``session``: how and where it measures, :class:`~perflab.core.session.SessionOptions` (``data_root``,
    ``placement``, ``stats_interval``, ``data_dir``, ``keep_data``, ``thresholds``, the hosts). The run's validity record
    (:mod:`perflab.measure.validity`) lands in ``meta.json`` and on the result. ``server`` may also be a
    :class:`~perflab.config.target.ForeignServer` (or a URL): a server perflab did not build; a profile of
    it needs a HotSpot JVM, otherwise the run records everything else and says why there is no profile; or a
    :class:`~perflab.commits.Commit`: the built-in server at that commit, built apart into ``<data
    root>/builds``.

    A cluster (a :class:`~perflab.config.cluster.ClusterConfig`, or a running
    :class:`~perflab.nodes.processes.Cluster`) also takes ``faults`` (strings like ``"at=10s node=2 kill"``,
    :mod:`perflab.nodes.faults`), ``consistency`` (a :class:`~perflab.config.cluster.ConsistencyParams`, ``True``
    for the defaults: the checker during the window and after it), ``profile_nodes`` (``"all"``, an index or a
    list: one recording per node), ``keys`` (the key space of the key distribution; default ``fill``, or the
    load's ``keys=``/``count=``) and ``status_bin`` (seconds per bin of the answers by status); it is filled
    through its API (``fill``), never prefilled, and returns a :class:`~perflab.cluster_run.ClusterResult`.
    """
    session = session or SessionOptions()
    given_root = session.data_root
    target = target_of(server, builds=Path(given_root) / "builds" if given_root is not None else None)
    target.check_prefill(prefill)
    check_fill(fill)
    if not isinstance(load, LoadParams):
        raise ValueError(f"load must be a LoadParams, got {type(load).__name__}")
    if profile is not None and not isinstance(profile, ProfileParams):
        raise ValueError(f"profile must be a ProfileParams or None, got {type(profile).__name__}")
    if target.why_not("faults") is None:  # N nodes: what the run adds around its window is the cluster's
        return cluster_run.run(
            target,
            load,
            faults=faults,
            consistency=consistency,
            profile=profile,
            profile_nodes=profile_nodes,
            fill=fill,
            keys=keys,
            name=name,
            status_bin=status_bin,
            session=session,
        )
    if faults or consistency or profile_nodes != "all" or keys is not None or status_bin != 1.0:
        target.require("faults")
    if prefill is not None and fill is not None:
        raise ValueError(
            "prefill and fill: give one (prefill writes the storage before the server starts, fill "
            "writes through its API after)"
        )
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    name = name or f"{load.workload_name}-{target.mode}-{load.rate:g}rps"
    options = session
    check_load(target, load, options)
    params = {"load": load.to_dict(), "profile": profile.to_dict() if profile else None, "fill": fill}
    if profile is not None:
        paths.async_profiler_lib()  # fail before starting anything when the profiler is not built
    with Session("experiment", name, target, LoadTool.of(load), options, prefill=prefill, params=params) as sess:
        if fill is not None:
            fill_target(sess, fill, load)
        w = measure(sess, load, profile, title=f"{profile.event}: {name}" if profile else "")
        record_window(sess.run, w, target.stats_indexed)
        return ExperimentResult(
            sess.run,
            w.load,
            w.stats,
            sess.handle.info(),
            sess.prefill_result,
            w.validity,
            w.recordings,
            w.events,
            w.attribution,
            w.spike_diff,
        )
