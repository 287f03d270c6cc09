"""Latency of fixed-rate runs: how fast requests were at each percentile, how runs compare, and what the
latency did over the window next to what the server was doing.

A notebook tells it with five calls (``runs``: label -> ExperimentResult; ``sla``: the p99 bound in seconds,
as the config layer reads ``sla_p99``)::

    latency.stable_rate(stable.judge(rate, put, sla)).show()   # how the rate was chosen, whether the runs held it
    latency.fixed_rate(put, sla, "PUT: latency by percentile (corrected, ms)").show()
    latency.timeline("PUT, 64 connections", put["PUT, 64 connections"]).show()
    findings.show(latency.findings(put, get, sla=sla))
    latency.answer(put | get, sla, "GET p99, 64 connections", get["GET, 64 connections"]).show()

The spectrum's sentences and figure are :mod:`.spectra`'s, the timeline's :mod:`.timelines`', the stable rate's
:mod:`.stable`'s; the other subjects (storage, clusters, the report's comparisons) build on the names below.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..consoles import command_line, console
from ..findings import Finding, key_latency, validity_of
from ..section import Section
from .spectra import (
    answer_fixed_rate,
    compare_latency,
    describe_prefill,
    describe_runs,
    describe_spectra,
    levels,
    load_table,
    percentile_spectrum,
)
from .stable import describe_stable_rate, stable_rate
from .timelines import (
    describe_events_effect,
    describe_spikes,
    describe_timeline,
    describe_trend,
    interval_width,
    latency_timelines,
    timeline_figure,
)

__all__ = [
    # what a notebook calls
    "fixed_rate",
    "stable_rate",
    "timeline",
    "findings",
    "answer",
    # what the other subjects and the report build on
    "load_table",
    "percentile_spectrum",
    "levels",
    "describe_spectra",
    "describe_stable_rate",
    "compare_latency",
    "timeline_figure",
    "latency_timelines",
    "describe_timeline",
    "describe_events_effect",
    "describe_trend",
    "interval_width",
]


def _ms(sla: float | None) -> float | None:
    return sla * 1000 if sla else None


def fixed_rate(
    runs: Mapping,
    sla: float | None = None,
    title: str | None = None,
    consoles: bool = False,
    compare: tuple[str, ...] = ("p99_ms",),
) -> Section:
    """Fixed-rate runs (label -> ExperimentResult): their table, each one's console output folded (with
    ``consoles``), what the prefill wrote, the percentile spectrum (``title``; the SLA ``sla`` as a line)
    and each run's spectrum in words, with the per-interval latencies of ``compare`` (columns such as
    ``p99_ms``; ``()``: none) compared run against run."""
    return Section(
        [
            load_table(runs),
            *(
                [console(r.load.console, title=label, command=command_line(r.load)) for label, r in runs.items()]
                if consoles
                else []
            ),
            describe_prefill(runs),
            percentile_spectrum(runs, sla_ms=_ms(sla), title=title),
            describe_spectra(runs, _ms(sla), compare),
        ]
    )


def timeline(label: str, result, kinds: tuple[str, ...] = ()) -> Section:
    """One run's latency per interval with the server's events, titled with ``label``, and what it shows:
    the effect of each event kind in ``kinds`` (``flush``, ``compaction``), the spikes, the trend."""
    return Section(
        [
            timeline_figure(result, title=f"{label}: latency per {interval_width(result)} and server events"),
            describe_timeline(result, kinds),
        ]
    )


def findings(*groups: Mapping, sla: float | None = None) -> list[str]:
    """The findings of groups of fixed-rate runs (each label -> ExperimentResult): every run in full (its
    spectrum, the rate it achieved, errors, validity), the runs of each group compared, every run's spikes."""
    runs = {k: r for g in groups for k, r in g.items()}
    return [*describe_runs(runs, _ms(sla)), *(compare_latency(g) for g in groups), *describe_spikes(runs)]


def answer(runs: Mapping, sla: float, key_label: str, key_run) -> Finding:
    """The answer of fixed-rate runs: whether every run kept p99 within the SLA, the highest p99, the runs that
    fell short of their rate; the key number ``key_run``'s p99 (``key_label``); every run's spectrum as the
    preview."""
    return Finding(
        answer_fixed_rate(runs, _ms(sla)),
        key_number=key_latency(key_label, key_run),
        validity=validity_of(*runs.values()),
        preview=percentile_spectrum(runs, sla_ms=_ms(sla), title="Latency by percentile, every run"),
    )
