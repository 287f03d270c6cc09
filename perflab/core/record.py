"""What a run records of one measured window (:mod:`.window`): its files, index rows, validity, profiles (by
node) and results (:func:`record_window`), the server's events on the load's time axis (:func:`load_events`),
and what the caller gets back (:class:`ExperimentResult`). A fixed-rate run of one server or of a cluster
records its window through here; a search or a comparison records its probes through :mod:`.probe`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..measure.result import CONSOLE, HDR_LOG, STDERR, SUMMARY, LoadResult
from ..measure.validity import Validity
from ..profiling import codemap
from ..profiling.profile import Profile
from ..profiling.profiler import Recording
from ..records import Run
from ..timeline.attribution import Attribution
from ..timeline.events import events_frame, read_events


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` returns.

    ``load``: the :class:`~perflab.measure.result.LoadResult`; ``stats``: ``/v0/stats`` samples (``t_s`` on the hdr
    log's time axis: 0 = start of the measured window); ``server``: what the run recorded about its target;
    ``run``: the record (``run.id``, ``run.dir``); ``prefill``: the prefill tool's JSON; ``validity``: how valid
    the run is as a measure of the server (also in ``meta.json``); ``recordings``: node -> the JFR recording of
    the window (``None``: the one server; :attr:`profile`, :attr:`profiles`: its profiles); ``events``: the
    server's timed events (and the JVM's GC pauses) on the latency timeline's axis; ``attribution``: which events
    the latency spikes overlap (:mod:`perflab.timeline.attribution`); ``spike_diff``: flame graphs of the spikes
    against the rest of the window, when there were spikes.
    """

    run: Run
    load: LoadResult
    stats: pd.DataFrame
    server: dict
    prefill: dict | None
    validity: Validity | None = None
    recordings: dict = field(default_factory=dict)
    events: pd.DataFrame | None = None
    attribution: Attribution | None = None
    spike_diff: dict | None = None

    @property
    def recording(self) -> Recording | None:
        """The one server's recording (``None`` without a profile)."""
        return self.recordings.get(None)

    @property
    def profiles(self) -> dict:
        """event -> the one server's :class:`~perflab.profiling.profile.Profile` ({} without a profile)."""
        return dict(self.recording.profiles) if self.recording is not None else {}

    @property
    def profile(self) -> Profile | None:
        """The first event's profile, or ``None``."""
        return next(iter(self.profiles.values()), None)

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


def load_events(run: Run, recording, t0: float) -> pd.DataFrame:
    """The server's timed events of this run (its ``server-events.jsonl``), plus the JVM's GC pauses from the
    recording when the server does not report its own (a server the user brings)."""
    own = read_events(run.dir / "server-events.jsonl", None)
    extra = []
    if recording is not None and recording.gc_events and not (own["event"] == "gc").any():
        extra = recording.gc_events
    rows = [{"event": r.event, "ts_us": r.ts_us, "dur_us": r.dur_us, **(r.details or {})} for r in own.itertuples()]
    return events_frame(rows + extra, t0)


def record_window(run: Run, w, stats_indexed: tuple[str, ...]) -> None:
    """Everything one measured window (:class:`~perflab.core.window.Window`) gave, into ``run``: artifacts,
    ``stats`` (its ``stats_indexed`` columns: the target's)/``intervals``/``loads``/``events``/``profiles``/
    ``categories`` index rows, the validity record, the profiles by node and the results."""
    res = w.load
    for art, f in (("console", CONSOLE), ("load_stderr", STDERR), ("summary", SUMMARY), ("hdr_log", HDR_LOG)):
        if (run.dir / f).exists():
            run.meta["artifacts"][art] = f
    stats = w.stats
    if not stats.empty:
        run.write_frame("stats.csv", stats, artifact="stats")
        cols = [c for c in stats.columns if c in stats_indexed]
        run.add_rows("stats", stats[cols].rename(columns=lambda c: c.replace(".", "_")).to_dict("records"))
    iv = res.intervals
    if not iv.empty:
        run.write_frame("intervals.csv", iv, artifact="intervals")
        run.add_rows("intervals", iv.to_dict("records"))
    if not res.spectrum.empty:
        run.write_frame("spectrum.csv", res.spectrum, artifact="spectrum")
    run.meta["validity"] = w.validity.to_dict()
    if res.hosts is not None:
        run.meta.setdefault("hosts", {})["load"] = res.hosts
    run.add_rows("loads", [{**res.record(), "validity": str(w.validity.level)}])
    results = dict(res.record())
    results["status_codes"] = res.status_counts
    results["measure_start"] = res.measure_start
    events = w.events
    if len(events):
        run.write_frame(
            "events.csv",
            events.drop(columns=["details"]).assign(
                details=events["details"].map(lambda d: json.dumps(d, default=str))
            ),
            artifact="events",
        )
        run.add_rows("events", [{k: v for k, v in r.items() if k != "details"} for r in events.to_dict("records")])
    if w.attribution is not None:
        a = w.attribution
        results["spikes"] = {
            "count": len(a.spikes),
            "typical_p99_ms": a.typical_ms,
            "threshold_ms": a.threshold_ms,
            "summary": a.summary(),
            "kinds": [vars(k) for k in a.kinds],
        }
    if None in w.recordings:
        results["profile"] = record_profiles(run, w.recordings[None], None, w.spike_diff)
    nodes = {
        **{n: r for n, r in w.recordings.items() if n is not None},
        **{n: why for n, why in w.unavailable.items() if n is not None},
    }
    if nodes:
        results["profiles"] = {
            str(n): record_profiles(run, w.recordings[n], n, None)
            if n in w.recordings
            else {"unavailable": w.unavailable[n]}
            for n in nodes
        }
    run.set_result(**results)


def record_profiles(run: Run, rec, node: int | None, diff: dict | None) -> dict:
    """One recording's files, index rows and results entry: the one server's (``node`` ``None``), with its
    categories and frames tables, or a cluster's node ``node``'s (its files under ``nodes/<i>/``)."""
    run.meta["artifacts"]["code_map"] = codemap.write(rec.code_map, run.dir).name  # to recompute the categories
    if node is None:
        run.meta["artifacts"]["jfr"] = rec.jfr_path.name
        if rec.heatmap_path:
            run.meta["artifacts"]["heatmap"] = rec.heatmap_path.name
    out = {
        "events": list(rec.profiles),
        "window": [rec.started_at, rec.stopped_at],
        "gc_pauses": len(rec.gc_events),
        "warnings": rec.warnings,
    }
    for ev, prof in rec.profiles.items():
        cats = prof.categories()
        if node is None:
            first = ev == next(iter(rec.profiles))
            run.meta["artifacts"]["collapsed" if first else f"collapsed_{ev}"] = prof.collapsed_path.name
            if prof.html_path:
                run.meta["artifacts"]["flamegraph" if first else f"flamegraph_{ev}"] = prof.html_path.name
            run.write_frame(f"categories-{ev}.csv", cats)
            run.write_frame(f"frames-{ev}.csv", prof.frames().head(500))
        else:
            run.meta["artifacts"][f"collapsed_node{node}_{ev}"] = str(prof.collapsed_path.relative_to(run.dir))
            if prof.html_path:
                run.meta["artifacts"][f"flamegraph_node{node}_{ev}"] = str(prof.html_path.relative_to(run.dir))
        at = {} if node is None else {"node": node}
        run.add_rows("profiles", [{**prof.record(), **at}])
        run.add_rows("categories", [{"event": ev, **at, **r} for r in cats.to_dict("records")])
        out[ev] = {**prof.record(), "categories": dict(zip(cats["category"], cats["share"]))}
    if diff is not None:
        run.meta["artifacts"]["spikes_diff"] = diff["diff_html"].name
    return out
