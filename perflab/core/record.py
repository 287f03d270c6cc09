"""What a run records of one load: its files, index rows, validity and results (:func:`record_load`), the
server's events on the load's time axis (:func:`load_events`), and what the caller gets back
(:class:`ExperimentResult`). A fixed-rate run and a cluster run record their load through here; a search or
a comparison records its probes through :mod:`.probe`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..measure.attribution import Attribution
from ..measure.events import events_frame, read_events
from ..measure.result import CONSOLE, HDR_LOG, STDERR, SUMMARY, LoadResult
from ..measure.validity import Validity
from ..profiling import codemap
from ..profiling.profile import Profile
from ..profiling.profiler import Recording
from ..records import Run
from ..server import metrics as m

#: the /v0/stats columns a run's index keeps (the rest stay in stats.csv)
_STATS_INDEXED = ("t_s", m.QUEUE_DEPTH, m.REJECTED + "_delta", m.FLUSHES + "_delta", m.COMPACTIONS + "_delta",
                  m.GC_MS + "_delta", "requests_total_delta", m.MEMTABLE_BYTES, m.SSTABLES)


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` returns.

    ``load``: the :class:`~perflab.measure.result.LoadResult`; ``stats``: ``/v0/stats`` samples (``t_s`` on the hdr
    log's time axis: 0 = start of the measured window); ``profile``: the first event's
    :class:`~perflab.profiling.profile.Profile` or ``None`` (``profiles``: every event's, ``recording``: the
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


def window(res: LoadResult, started_at: float) -> tuple[float, float]:
    """The measured window in epoch seconds: from perflab-load's JSON summary, else (wrk2) the measured
    run's own start and end."""
    if res.measure_start and res.measure_end:
        return res.measure_start, res.measure_end
    return started_at, res.ended_at


def load_events(run: Run, recording, t0: float) -> pd.DataFrame:
    """The server's timed events of this run (its ``server-events.jsonl``), plus the JVM's GC pauses from the
    recording when the server does not report its own (a server the user brings)."""
    own = read_events(run.dir / "server-events.jsonl", None)
    extra = []
    if recording is not None and recording.gc_events and not (own["event"] == "gc").any():
        extra = recording.gc_events
    rows = [{"event": r.event, "ts_us": r.ts_us, "dur_us": r.dur_us, **(r.details or {})} for r in own.itertuples()]
    return events_frame(rows + extra, t0)


def record_load(run: Run, res: LoadResult, stats: pd.DataFrame, recording, validity: Validity,
                events: pd.DataFrame, attribution: Attribution | None, diff: dict | None) -> None:
    """Everything one load measured, into ``run``: artifacts, ``stats``/``intervals``/``loads``/``events``/
    ``profiles``/``categories`` index rows, the validity record and the results."""
    for art, f in (("console", CONSOLE), ("load_stderr", STDERR), ("summary", SUMMARY), ("hdr_log", HDR_LOG)):
        if (run.dir / f).exists():
            run.meta["artifacts"][art] = f
    if not stats.empty:
        run.write_frame("stats.csv", stats, artifact="stats")
        cols = [c for c in stats.columns if c in _STATS_INDEXED]
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
    if recording is not None:
        results["profile"] = _record_profiles(run, recording, diff)
    run.set_result(**results)


def _record_profiles(run: Run, rec, diff: dict | None) -> dict:
    run.meta["artifacts"]["jfr"] = rec.jfr_path.name
    run.meta["artifacts"]["code_map"] = codemap.write(rec.code_map, run.dir).name  # to recompute the categories
    if rec.heatmap_path:
        run.meta["artifacts"]["heatmap"] = rec.heatmap_path.name
    out = {"events": list(rec.profiles), "window": [rec.started_at, rec.stopped_at],
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
        out[ev] = {**prof.record(), "categories": dict(zip(cats["category"], cats["share"]))}
    if diff is not None:
        run.meta["artifacts"]["spikes_diff"] = diff["diff_html"].name
    return out
