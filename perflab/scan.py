"""The course's stage 6 measured: a server filled beyond its heap, then the whole range read once, profiled.

``run_scan(server, ScanParams(...), profile=ProfileParams("cpu,alloc,lock"))`` starts the server (a session, as
every run), asks its JVM for its heap (``-Xmx``: :func:`perflab.server.heap.max_heap`), writes ``fill_factor`` x
that many bytes through its API (``key0 ..``, values of ``value_size`` bytes: :mod:`perflab.server.fill`, every
write checked and retried), then sends **one** ``GET /v0/entities?start=key0`` and reads it to its end
(:mod:`perflab.server.range`: timed, checked chunk by chunk), while async-profiler records exactly that read and
``jstat`` samples the heap (:mod:`perflab.server.heap`). What the server did wrong (no range endpoint, a body that
is not chunked, a truncated one, a timeout) is the result's ``read.faults``/``read.error``, never an exception.
Recorded as run ``scan``: ``results.range`` (the read), ``results.heap`` (the heap's summary), ``results.fill``,
``heap.csv``, the profiles as any run's, index rows ``scans`` and ``scan_heap``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import pandas as pd

from . import paths
from .config import ProfileParams
from .config.scan import ScanParams
from .core.record import record_profiles
from .core.session import Session, SessionOptions
from .i18n import Sentence
from .measure.generator import LoadTool
from .profiling.profiler import Recording
from .records import Run
from .server import heap as jheap
from .server.range import Expected, RangeRead, deadline_s, read_range
from .targets import target_of

#: the keys' prefix: the fill's and the load scripts' default
PREFIX = "key"


@dataclass
class ScanResult:
    """What :func:`run_scan` gives: ``run`` (the record), ``read`` (:class:`~perflab.server.range.RangeRead`),
    ``heap_bytes`` (the JVM's ``-Xmx``), ``fill`` (the fill's row plus its ``bytes``), ``heap`` (the samples:
    ``t_s`` 0 = the request sent, ``used_bytes``, ``old_bytes``...), ``heap_summary``
    (:func:`perflab.server.heap.summary`, ``unavailable`` when not sampled), ``recording`` (the profile of the
    read, ``None`` without one) and ``profile_unavailable`` (why not)."""

    run: Run
    read: RangeRead
    heap_bytes: int | None
    fill: dict
    heap: pd.DataFrame
    heap_summary: dict
    recording: Recording | None = None
    profile_unavailable: str | None = None

    #: a fixed-rate run's latency spikes against the rest; a scan has no latency timeline
    spike_diff = None

    @property
    def run_id(self) -> str:
        return self.run.id

    @property
    def profiles(self) -> dict:
        """event -> the read's :class:`~perflab.profiling.profile.Profile` ({} without a profile)."""
        return dict(self.recording.profiles) if self.recording is not None else {}

    def __repr__(self):
        r = self.read
        return f"<ScanResult {self.run.id} {r.entries} entries {r.payload_bytes} bytes in {r.seconds or 0:.2f} s>"


def keys_for(target_bytes: float, value_size: int, prefix: str = PREFIX) -> int:
    """Keys enough for at least ``target_bytes`` of range (each key, its ``\\n`` and its value), few more."""
    per_key = value_size + len(prefix) + 1
    keys = max(1, math.floor(target_bytes / (per_key + len(str(int(target_bytes / per_key))))))
    while Expected(keys, value_size, prefix=prefix).payload_bytes < target_bytes:
        keys += 1 + int((target_bytes - Expected(keys, value_size, prefix=prefix).payload_bytes) // (2 * per_key))
    return keys


def run_scan(
    server,
    params: ScanParams | None = None,
    profile: ProfileParams | None = None,
    name: str | None = None,
    session: SessionOptions | None = None,
) -> ScanResult:
    """Fill ``server`` beyond its heap and read the whole range once, profiled with ``profile`` (see the module
    docstring); ``session``: how and where (:class:`~perflab.core.session.SessionOptions`). The heap is sampled
    when the server runs on this machine (jstat reads its JVM's counters here)."""
    params = params or ScanParams()
    if not isinstance(params, ScanParams):
        raise ValueError(f"params must be a ScanParams, got {type(params).__name__}")
    if profile is not None and not isinstance(profile, ProfileParams):
        raise ValueError(f"profile must be a ProfileParams or None, got {type(profile).__name__}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    target = target_of(server)
    if target.why_not("faults") is None:
        raise ValueError("server: a range scan reads one server; give one node, not a cluster")
    if profile is not None:
        paths.async_profiler_lib()  # fail before starting anything when the profiler is not built
    name = name or f"range-{params.fill_factor:g}x-heap"
    tool = LoadTool("perflab-load", paths.loadgen_binary())  # the session's; the scan sends no load of it
    run_params = {"scan": params.to_dict(), "profile": profile.to_dict() if profile else None}
    with Session("scan", name, target, tool, session, params=run_params) as sess:
        here = sess.hosts.shares_files
        pid = sess.handle.pid
        heap_bytes = jheap.max_heap(pid) if here and pid else None
        if heap_bytes is None:
            heap_bytes = getattr(target.config, "heap", None)
        if heap_bytes is None:
            raise ValueError(
                "server: its heap could not be asked of its JVM (jcmd VM.flags) and its configuration names none"
            )
        keys = keys_for(params.fill_factor * heap_bytes, params.value_size)
        expected = Expected(keys, params.value_size, params.seed, PREFIX)
        fill = {
            **sess.handle.fill(keys, params.value_size, params.seed, PREFIX, "/v0/entity", "id"),
            "bytes": expected.payload_bytes,
            "heap_bytes": heap_bytes,
            "value_size": params.value_size,
        }
        sess.run.update(fill=fill)
        profiler, why_not = None, None
        if profile is not None:
            why_not = sess.handle.profiling_unavailable
            if why_not is None:
                profiler = sess.profiler(profile, f"{profile.event}: {name}").prepare()
            else:
                sess.run.update(profile_unavailable=why_not)
        sampler = jheap.HeapSampler(pid if here else None, params.heap_interval)
        if not here:
            sampler.samples.unavailable = Sentence(
                "the server runs on host `{host}`, not here: `jstat` reads a JVM on its own machine",
                host=sess.hosts.server.name,
            )
        recording = None
        try:
            with sampler:
                if profiler is not None:
                    profiler.start_recording()
                read = read_range(sess.handle.url, expected, params.timeout)
            # epoch seconds of the request sent and its last byte (the values are checked after it): the profile is
            # cut to them on the server host's clock, this machine's
            started = read.started_at or time.time()
            ended = read.ended_at or time.time()
            if profiler is not None:
                recording = profiler.stop_window(started, max(ended, started + 1e-3))
        except BaseException:
            if profiler is not None:
                profiler.abort()
            raise
        # the heap around the read: a little before it (what it started from) and after it, not the values' check
        margin = max(1.0, 5 * params.heap_interval)
        rows = [r for r in sampler.samples.rows if started - margin <= r["t"] <= ended + margin]
        heap = pd.DataFrame(rows)
        if not heap.empty:
            heap.insert(0, "t_s", heap.pop("t") - started)
        summary = (
            jheap.summary(rows, started, ended, expected.payload_bytes)
            if sampler.samples.unavailable is None
            else {"unavailable": sampler.samples.unavailable.record(), "flat": None}
        )
        _record(sess.run, read, fill, heap, summary, recording, deadline_s(expected, params.timeout))
        return ScanResult(sess.run, read, heap_bytes, fill, heap, summary, recording, why_not)


def _record(run: Run, read: RangeRead, fill: dict, heap: pd.DataFrame, summary: dict, recording, deadline: float):
    results = {"range": {**read.record(), "deadline_s": deadline}, "heap": summary, "fill": fill}
    if not heap.empty:
        run.write_frame("heap.csv", heap, artifact="heap")
        run.add_rows("scan_heap", heap.to_dict("records"))
    if recording is not None:
        results["profile"] = record_profiles(run, recording, None, None)
    row = {
        **{k: v for k, v in read.record().items() if k not in ("faults", "quote")},
        "faults": len(read.faults),
        "fill_bytes": fill["bytes"],
        "fill_keys": fill["keys"],
        "heap_bytes": fill["heap_bytes"],
        **{f"heap_{k}": v for k, v in summary.items() if k not in ("unavailable", "range_bytes", "flat_share")},
    }
    run.add_rows("scans", [row])
    run.set_result(**results)
