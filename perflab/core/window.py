"""One measured window of one target, a server or a cluster's N nodes: the skeleton every fixed-rate run goes
through (:func:`measure`), and what the run does around the window besides the load (:class:`Around`).

The skeleton: prepare the profilers (keyed by node: ``None`` is the one server; a cluster's nodes by index) →
warm a profiled JVM (:func:`perflab.core.probe.jvm_warmup_s`) → start their recordings → start the load (with a start time set ahead when the run needs the window's start:
faults and a checker run on it) → what the run does once it started → wait → what it does once the load
ended → cut every profile to exactly the window → what it does once that is done → the samples →
the machine's speed → the validity → the events on the window's axis → which events the latency spikes
overlap → the spikes' flame graphs. Any exception, Ctrl-C or SIGTERM aborts the profilers and stops the load
(the session stops the rest). What it gives, :class:`Window`, is recorded by
:func:`perflab.core.record.record_window`. What a run does around its window is its target's
(:class:`perflab.targets.base.Around`; a cluster's faults and checker: :class:`perflab.targets.cluster.FaultsAndChecker`):
the window calls down into it, never back up into the strategy that started the run.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import pandas as pd

from ..errors import PerflabError, ProfilerError
from ..measure.result import LoadResult
from ..measure.validity import Validity
from ..targets.base import Around
from ..timeline.attribution import Attribution, attribute
from ..timeline.events import await_delivery
from .probe import WARM_MIN_S, jvm_warmup_s, warm
from .record import load_events

#: the longest unrecorded load a profiled JVM gets first (a slow rate would otherwise wait long for its 5,000 requests)
PROFILE_WARMUP_MAX_S = 10.0


@dataclass
class Window:
    """What one measured window gave: ``load``, ``stats`` (``t_s`` 0 = the window's start, ``t0`` in epoch
    seconds), ``validity``, ``recordings`` (node -> the JFR recording cut to the window; ``None`` is the one
    server), ``unavailable`` (node -> why its profile could not be taken), ``events`` and the ``attribution``
    of the latency spikes to them, ``spike_diff`` (the one server's spikes against the rest, when there were
    spikes); ``started_at`` and ``end``: when the load started and the window ended (epoch seconds)."""

    load: LoadResult
    stats: pd.DataFrame
    validity: Validity
    t0: float
    started_at: float
    end: float
    recordings: dict = field(default_factory=dict)
    unavailable: dict = field(default_factory=dict)
    events: pd.DataFrame | None = None
    attribution: Attribution | None = None
    spike_diff: dict | None = None


def _prepare(sess, profile, nodes, title: str) -> tuple[dict, dict]:
    """The profilers of ``nodes`` (``None``: the one server), attached; and why each that cannot be is not."""
    profilers, unavailable = {}, {}
    if profile is None:
        return profilers, unavailable
    for node in nodes:
        why = sess.handle.profiling_unavailable_on(node)
        if why:
            unavailable[node] = why
            continue
        out = None if node is None else sess.run.dir / "nodes" / str(node)
        profilers[node] = sess.profiler(
            profile, title if node is None else f"{title}, node {node}", node=node, out_dir=out
        ).prepare()
    if None in unavailable:
        warnings.warn(
            f"profiling unavailable: {unavailable[None]}; recording CPU, latency and validity only",
            RuntimeWarning,
            stacklevel=4,
        )
        sess.run.update(profile_unavailable=unavailable[None])
    elif unavailable:
        warnings.warn(f"profiling skipped: {unavailable}", RuntimeWarning, stacklevel=4)
    return profilers, unavailable


def window(res: LoadResult, lp) -> tuple[float, float]:
    """The measured window in epoch seconds: from perflab-load's JSON summary, else (wrk2) the load's own start
    and end."""
    return (res.measure_start or lp.window_start or lp.started_at, res.measure_end or res.ended_at or time.time())


def measure(sess, load, profile=None, nodes=(None,), title: str = "", around: Around | None = None) -> Window:
    """Measure one window of ``load`` against the session's target (see the module docstring): profiled with
    ``profile`` on ``nodes`` (``None``: the one server; a cluster's node indexes), titled ``title``, with
    ``around`` (default: nothing) doing what the run does besides the load."""
    around = around or Around()
    profilers, unavailable = _prepare(sess, profile, nodes, title)
    if profilers and sess.handle.runs_jvm:
        # a profile of a JVM that is still compiling its request path is the JIT compiler's, not the server's;
        # a search's warm-up, bounded by the window it prepares as a search's is by its ramp
        warm_s = jvm_warmup_s(load.rate, min(PROFILE_WARMUP_MAX_S, max(WARM_MIN_S, load.duration)))
        warm(sess, load, warm_s, sess.run.path("server-warmup/x").parent)
        sess.run.update(server_warmup_s=warm_s)
    recordings, lp = {}, None
    try:
        for p in profilers.values():
            # JFR around the whole load, cut to exactly the window when converted: the attach latency of a busy
            # machine cannot shift the window
            p.start_recording()
        lp = sess.start_load(load, out_dir=sess.run.dir, timed=around.timed)
        around.started(sess.handle, lp)
        res = lp.wait()
        around.stopped(sess.handle, res)
        start, end = window(res, lp)
        for node, p in profilers.items():
            try:
                recordings[node] = p.stop_window(start, end)
            except (ProfilerError, PerflabError) as e:
                if node is None:
                    raise
                unavailable[node] = str(e).splitlines()[0]  # a node killed or restarted in the window took it
    except BaseException:
        for p in profilers.values():
            p.abort()
        if lp is not None:
            lp.stop(1)
        raise
    around.settled(sess.handle)
    t0 = res.measure_start or lp.window_start or lp.started_at
    stats = sess.stats_frame(t0)
    around.sampled(sess.handle, t0)
    sess.calibrate()
    validity = sess.validity(res, lp.started_at)
    await_delivery(end)  # the window's last events too
    events = around.events(sess.handle, lp.started_at, t0, end)
    if events is None:  # the one server's own events and its JVM's GC pauses from the recording
        sess.sync_files()
        events = load_events(sess.run, recordings.get(None), t0)
    attribution = attribute(res.intervals, events) if not res.intervals.empty else None
    diff = None
    rec = recordings.get(None)
    if rec is not None and attribution is not None and len(attribution.spikes):
        diff = rec.spike_diff(
            [(t0 + a, t0 + b) for a, b in zip(attribution.spikes["start_s"], attribution.spikes["end_s"])]
        )
    return Window(res, stats, validity, t0, lp.started_at, end, recordings, unavailable, events, attribution, diff)
