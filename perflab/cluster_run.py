"""A cluster's fixed-rate run (:func:`perflab.run_experiment` given a cluster): one load against it, with faults
on schedule, the consistency checker, per-node profiles and the key distribution, recorded as one run.

The flow: check everything (the load with the cluster's ack/from and its split over the generator hosts and
entry nodes, the fault schedule against the nodes and the window, the checker's quorums, the profiled
nodes) before anything starts; start the nodes on the server host (or take a running cluster); fill
through the API if asked (``fill`` keys, PUT through the cluster, then wait until every replica has them);
start the profilers; start the load with a start time set ahead (:class:`perflab.core.load.DistributedLoad`,
one part per generator host and entry node), so the measured window's start is known and the faults and
the checker run on it, next to the nodes; wait; resume a node left paused; read the checker's keys back;
take the samples, events and profiles of every node; judge validity (each part on its own share, and the
share of answers that served the request); record. What touches the nodes runs on the server host
(:class:`perflab.targets.cluster.ClusterHost`), through the session's handle
(:class:`perflab.targets.cluster.ClusterHandle`).

``meta.json`` of a cluster run (kind ``cluster``) holds ``cluster`` (nodes, URLs and ports, ack/from, API
style, entry nodes, every node's incarnations with pids and times), ``params`` (load, faults, checker,
profile, fill), and ``results``: the load's numbers, ``entries`` (offered and achieved per entry node),
``answers`` (totals by status and error kind), ``faults`` (what was applied when), ``recovery``,
``consistency`` (counts, prediction, verdict), ``key_distribution``, ``profiles`` per node. The files:
the generator's (merged, and per entry node under ``entries/node<i>/``), ``stats.csv`` (every node, a ``node``
column), ``cpu.csv``, ``events.csv`` (with ``node``), ``statuses.csv``, ``checker-ops.csv``,
``nodes/<i>/`` (server log and events of a cluster the run started; profiles).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from . import paths
from .config import LoadParams, ProfileParams
from .config.cluster import ClusterRunParams, ConsistencyParams
from .core.fill import check_fill
from .core.fill import fill as fill_target
from .core.record import ExperimentResult, record_window
from .core.session import Session, SessionOptions, check_load
from .core.window import measure
from .measure.generator import LoadTool
from .nodes import faults as faults_mod
from .nodes.checker import frame_of
from .nodes.load import entry_rates
from .nodes.statuses import status_intervals, totals
from .targets.cluster import FaultsAndChecker


@dataclass
class ClusterResult(ExperimentResult):
    """What :func:`perflab.run_experiment` returns for a cluster: an
    :class:`~perflab.core.record.ExperimentResult` (``load`` is the whole run's, ``stats`` every node's with a ``node`` column, ``events`` every node's and the faults', ``recordings``
    the profiled nodes') plus ``entries`` (per entry node: offered and achieved rate), ``cpu`` (per node cores and
    RSS over time), ``faults`` (applied), ``consistency`` (the checker's :class:`~perflab.nodes.checker.Verdict`)
    and ``checker_ops``, ``distribution`` (:class:`~perflab.nodes.distribution.KeyDistribution`) and
    ``status_bin``; from these, ``statuses`` (answers by status per ``status_bin`` seconds) with
    ``statuses_note``, ``answers`` (totals) and ``recovery`` (per fault: when the clients were served again)."""

    entries: list = field(default_factory=list)
    cpu: pd.DataFrame | None = None
    faults: list = field(default_factory=list)
    consistency: object | None = None
    checker_ops: pd.DataFrame | None = None
    distribution: object | None = None
    status_bin: float = 1.0

    @property
    def cluster(self) -> dict:
        """What ``meta.json["cluster"]`` holds: nodes, URLs and ports, ack/from, entry nodes, incarnations."""
        return self.server

    @property
    def nodes(self) -> int:
        return int(self.cluster.get("nodes") or 0)

    @property
    def quorum(self) -> str:
        return f"{self.cluster.get('ack')}/{self.cluster.get('from')}"

    @property
    def node_profiles(self) -> dict:
        """node -> the recording of each profiled node."""
        return {n: r for n, r in self.recordings.items() if n is not None}

    @cached_property
    def _statuses(self) -> tuple[pd.DataFrame, str]:
        return status_intervals(self.load, self.status_bin)

    @property
    def statuses(self) -> pd.DataFrame:
        return self._statuses[0]

    @property
    def statuses_note(self) -> str:
        return self._statuses[1]

    @property
    def answers(self) -> dict:
        return totals(self.load)

    @cached_property
    def recovery(self) -> list:
        return _recovery(self.faults, self.load.intervals, self.statuses)


def _script_keys(load: LoadParams) -> int | None:
    """The key space the load's script names (``keys=``, or ``count=`` of a sequential script)."""
    for a in load.script_args:
        name, _, v = a.partition("=")
        if name in ("keys", "count") and v.isdigit() and int(v) > 0:
            return int(v)
    return None


def run(
    target,
    load: LoadParams,
    faults=(),
    consistency: ConsistencyParams | bool | None = None,
    profile: ProfileParams | None = None,
    profile_nodes="all",
    fill: int | None = None,
    keys: int | None = None,
    name: str | None = None,
    status_bin: float = 1.0,
    session: SessionOptions | None = None,
) -> ClusterResult:
    """Run ``load`` against the cluster ``target`` (:func:`perflab.run_experiment`'s, of a
    :class:`~perflab.config.cluster.ClusterConfig`, started for this run on the server host, or a running
    :class:`~perflab.nodes.processes.Cluster`, left running) and record it (see the module docstring).

    ``faults``: strings like ``"at=10s node=2 kill"`` (:mod:`perflab.nodes.faults`); ``consistency``: a
    :class:`~perflab.config.cluster.ConsistencyParams` (``True``: the defaults) to run the checker during the
    window and after it; ``profile``: async-profiler on ``profile_nodes`` (``"all"``, an index or a list; one
    recording per node); ``fill``: write ``key0 .. key<fill-1>`` through the cluster first, each once, with
    the cluster's ack/from (:mod:`perflab.server.fill`), since prefill cannot prepare a cluster node's storage;
    ``keys``: the key space of the key distribution (default ``fill``, or the load's ``keys=``/``count=``);
    ``status_bin``: seconds per bin of the answers-by-status timeline. ``session``:
    :class:`~perflab.core.session.SessionOptions` (the hosts included). ``load`` and ``profile`` are checked by
    :func:`perflab.run_experiment`, the one caller.
    """
    cfg = target.cluster_config
    options = session or SessionOptions()
    check_load(target, load, options)
    if isinstance(faults, str):
        faults = (faults,)
    check_fill(fill)
    what = ClusterRunParams(faults=tuple(faults), keys=keys, profile_nodes=profile_nodes, status_bin=status_bin)
    schedule = faults_mod.schedule(what.faults, cfg.nodes, load.duration, cfg.one_command)
    consistency = _consistency(consistency, cfg)
    prof_nodes = what.nodes_profiled(cfg.nodes) if profile is not None else []
    if profile is not None:
        paths.async_profiler_lib()  # fail before starting anything when the profiler is not built
    status_bin = what.status_bin
    keys = what.keys or fill or _script_keys(load)
    name = name or f"cluster{cfg.nodes}-{cfg.quorum().replace('/', 'of')}-{load.workload_name}-{load.rate:g}rps"
    params = {
        "load": load.to_dict(),
        "faults": [f.to_dict() for f in schedule],
        "consistency": consistency.to_dict() if consistency else None,
        "profile": profile.to_dict() if profile else None,
        "profile_nodes": prof_nodes,
        "fill": fill,
        "keys": keys,
        "status_bin": status_bin,
    }
    with Session("cluster", name, target, LoadTool.of(load), options, params=params) as sess:
        return _measure(sess, load, schedule, consistency, profile, prof_nodes, fill, keys, status_bin, name)


def _consistency(consistency, cfg) -> ConsistencyParams | None:
    if consistency is True:
        consistency = ConsistencyParams()
    if consistency is not None and not isinstance(consistency, (ConsistencyParams, bool)):
        raise ValueError(f"consistency must be a ConsistencyParams, True or None, got {type(consistency).__name__}")
    consistency = consistency or None
    if consistency is not None:
        for n, a in (("write_ack", consistency.write_ack), ("read_ack", consistency.read_ack)):
            if a is not None and a > cfg.replicas_from:
                raise ValueError(f"consistency.{n}: must not exceed from ({cfg.replicas_from}), got {a}")
    return consistency


def _measure(sess, load, schedule, consistency, profile, prof_nodes, fill, keys, status_bin, name):
    run, cl = sess.run, sess.handle  # cl: the ClusterHandle (its nodes run on the server host)
    around = FaultsAndChecker(schedule, consistency, load, time.time())
    fill_res = fill_target(sess, fill, load) if fill else None
    w = measure(sess, load, profile, prof_nodes, f"{profile.event}: {name}" if profile else "", around)
    dist = None
    if keys:
        try:
            dist = cl.key_distribution(keys)
        except (OSError, RuntimeError, ValueError) as e:
            warnings.warn(f"key distribution not measured: {e}", RuntimeWarning, stacklevel=3)
    record_window(run, w, sess.target.stats_indexed)
    info = cl.info()
    run.update(cluster=info)
    checked = around.checked
    result = ClusterResult(
        run,
        w.load,
        w.stats,
        info,
        None,
        w.validity,
        w.recordings,
        w.events,
        w.attribution,
        None,
        entries=entry_rates(w.load, cl.urls),
        cpu=around.cpu,
        faults=around.applied,
        consistency=checked["verdict"] if checked is not None else None,
        checker_ops=frame_of(checked["ops"]) if checked is not None else None,
        distribution=dist,
        status_bin=status_bin,
    )
    _record_cluster(run, result, around.resumed, fill_res)
    return result


def _recovery(applied: list[dict], intervals: pd.DataFrame, statuses: pd.DataFrame, factor: float = 3.0) -> list[dict]:
    """After each disruption (a kill, stop or pause): when the clients were served as before it, i.e. from then
    on no bin had an error, a 504 or a missing answer and no latency interval's p99 was above the worse of
    ``factor`` x the median interval p99 before the first fault and the worst one before it; ``None`` when
    that did not happen within the window."""
    applied = [a for a in applied if a["ts_us"] is not None and not a["error"]]
    if not applied or intervals is None or intervals.empty:
        return []
    first = min(a["at_s"] for a in applied)
    iv = intervals[intervals["count"] > 0]
    before = iv[iv["end_s"] <= first]
    base = before if len(before) else iv
    limit = max(factor * float(base["p99_ms"].median()), float(base["p99_ms"].max()) if len(before) else 0.0)
    bad_bins = statuses[(statuses["generator_errors"] > 0) | (statuses["504"].fillna(0) > 0)]
    window_end = float(iv["end_s"].max())
    out = []
    for a in applied:
        if a["action"] not in ("kill", "stop", "pause"):
            continue
        at = a["at_s"]
        late_iv = iv[(iv["start_s"] >= at) & (iv["p99_ms"] > limit)]
        late_bins = bad_bins[bad_bins["end_s"] > at]
        last_bad = max(
            [at]
            + ([float(late_iv["end_s"].max())] if len(late_iv) else [])
            + ([float(late_bins["end_s"].max())] if len(late_bins) else [])
        )
        recovered = last_bad < window_end - 1e-9
        out.append(
            {
                "fault": a["fault"],
                "node": a["node"],
                "action": a["action"],
                "at_s": at,
                "recovered_at_s": round(last_bad, 3) if recovered else None,
                "recovery_s": round(last_bad - at, 3) if recovered else None,
                "p99_limit_ms": round(limit, 3),
            }
        )
    return out


def _record_cluster(run, res: ClusterResult, resumed: list[dict], fill: dict | None) -> None:
    """What a cluster run adds to its window's record (:func:`perflab.core.record.record_window`): every node's
    CPU, the answers by status, the checker's operations, and the results (entries, answers, faults, recovery,
    consistency, keys)."""
    if res.cpu is not None and not res.cpu.empty:
        run.write_frame("cpu.csv", res.cpu, artifact="cpu")
    if res.statuses is not None:
        run.write_frame("statuses.csv", res.statuses, artifact="statuses")
    results = {
        "entries": res.entries,
        "answers": res.answers,
        "statuses_note": res.statuses_note,
        "faults": res.faults,
        "resumed_at_end": resumed,
        "recovery": res.recovery,
    }
    if res.checker_ops is not None:
        run.write_frame("checker-ops.csv", res.checker_ops, artifact="checker_ops")
        results["consistency"] = res.consistency.to_dict()
    if res.distribution is not None:
        results["key_distribution"] = res.distribution.to_dict()
    if fill is not None:
        results["fill"] = fill
    run.set_result(
        **json.loads(
            json.dumps(results, default=lambda o: None if isinstance(o, float) and not math.isfinite(o) else str(o))
        )
    )
