"""The storage engine's cost in latency (notebook 05): the backends side by side, flushes by memtable size
and flush threads, what a running compaction does to reads.

Each run's own timeline puts its flushes and compactions next to its latency, and an effect is claimed only
with a test inside the run (:mod:`perflab.analysis.latency`); runs of different configurations were
measured one after the other, and a sentence that sets them side by side says so (*sequential runs*); the
backends are also compared interleaved (:mod:`perflab.analysis.ab`)::

    storage.backends(put_runs | get_runs, {"PUT": put_ab, "GET": get_ab}).show()
    storage.flushes(flush_runs).show()
    storage.compaction("ycsb-b.lua on a 1m memtable", comp).show()
    findings.show(storage.findings({"PUT": put_ab, "GET": get_ab}, flush_runs, "ycsb-b.lua", comp))
    storage.answer({"PUT": put_ab, "GET": get_ab}, preview).show()
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from .. import fmt
from . import ab
from .findings import Finding, bullets, validity_of
from .frames import events_of
from .latency import (
    compare_latency,
    describe_events_effect,
    describe_timeline,
    interval_width,
    load_table,
    percentile_spectrum,
    timeline_figure,
)
from .section import Section

__all__ = ["backends", "flushes", "compaction", "findings", "answer", "storage_table"]

#: the events of the server's storage and JVM that :func:`storage_table` counts, with their columns
STORAGE_EVENTS = {"flush": "flushes", "compaction": "compactions", "gc": "GC pauses"}


def storage_table(runs: Mapping, index="run") -> pd.DataFrame:
    """:func:`load_table` with, from each run's own events (:mod:`perflab.timeline.events`), how many
    flushes, compactions and GC pauses the window held, the total write-stall time, and how many latency
    spikes there were (:mod:`perflab.timeline.attribution`)."""
    table = load_table(runs, index)
    validity = table.pop("validity")
    events = [events_of(r) for r in runs.values()]
    for kind, column in STORAGE_EVENTS.items():
        table[column] = [int((ev["event"] == kind).sum()) for ev in events]
    table["write stalls, ms"] = [float(ev.loc[ev["event"] == "write_stall", "dur_ms"].sum()) for ev in events]
    table["spikes"] = [len(r.attribution.spikes) if r.attribution is not None else None for r in runs.values()]
    table["validity"] = validity
    return table


def describe_event_effects(runs: Mapping[str, object], kind: str) -> list[str]:
    """'label: <the effect of the kind of event on its latency>' for each run (label -> ExperimentResult)."""
    return [f"{k}: {describe_events_effect(r.load.intervals, r.events, kind)}" for k, r in runs.items()]


def backends(runs: Mapping, comparisons: Mapping) -> Section:
    """Every backend's runs (label -> ExperimentResult, all at one rate): their spectra, what each run's storage
    did, and each backend against the first interleaved (``comparisons``: what, e.g. ``"PUT"`` -> the
    comparisons of :func:`perflab.lab.notebook.against`)."""
    rate = next(iter(runs.values())).load.target_rate
    return Section(
        [
            percentile_spectrum(runs, title=f"Latency by percentile, by backend, at {fmt.rate(rate)}"),
            storage_table(runs),
            bullets(*(ab.findings(c, what=what) for what, c in comparisons.items())),
        ]
    )


def flushes(runs: Mapping) -> Section:
    """PUT runs of several memtable sizes and flush-thread counts (label -> ExperimentResult): what their storage
    did, their spectra, what the flushes did to each one's latency, and the first one's timeline."""
    first = next(iter(runs))
    return Section(
        [
            storage_table(runs),
            percentile_spectrum(runs, title="PUT: latency by percentile, by memtable size and flush threads"),
            *(describe_timeline(r, ("flush",), trend=False, label=k) for k, r in runs.items()),
            timeline_figure(
                runs[first], title=f"PUT, {first}: latency per {interval_width(runs[first])} and storage events"
            ),
        ]
    )


def compaction(label: str, run) -> Section:
    """A read-mostly run on a small memtable: its timeline with the compactions and flushes, what they did to
    latency, and what its storage did."""
    return Section(
        [
            timeline_figure(run, title=f"{label}: latency per {interval_width(run)} and server events"),
            describe_timeline(run, ("compaction", "flush")),
            storage_table({label: run}),
        ]
    )


def findings(comparisons: Mapping, flush_runs: Mapping, compaction_label: str, compaction_run) -> list[str]:
    """Each backend against the first, interleaved (``comparisons``: what -> comparisons), the flush
    configurations' p99.9 compared (sequential runs), what the flushes did in each run, and what the
    compactions and flushes did to the read-mostly run."""
    return [
        *(line for what, c in comparisons.items() for line in ab.findings(c, what=what)),
        compare_latency(flush_runs, "p999_ms"),
        *describe_event_effects(flush_runs, "flush"),
        f"{compaction_label}: " + describe_timeline(compaction_run, ("compaction", "flush")),
    ]


def answer(comparisons: Mapping, preview) -> Finding:
    """Each backend against the first, for each kind of request (``comparisons``: what -> comparisons); the key
    number the first kind's best ratio; ``preview``: a figure (the backends' spectra)."""
    answers = [ab.answer(c, what=what) for what, c in comparisons.items()]
    return Finding(
        " ".join(a.answer for a in answers),
        key_number=answers[0].key_number,
        validity=validity_of(*(a.validity for a in answers)),
        preview=preview,
    )
