"""The summary tables a notebook displays: one row per run or per search, every number next to how far
it can be trusted (the validity level).

* :func:`load_table`        fixed-rate runs: offered and achieved rate, percentiles, errors, validity
* :func:`storage_table`     the same with what the storage did: flushes, compactions, stalls, GC, spikes
* :func:`overload_table`    runs above the breakpoint: 503 rejections, p99, full-queue episodes
* :func:`breakpoint_table`  breakpoint searches: the rate with its interval, outcome, probes
* :func:`at_breakpoints`    the load of each search's last passing probe at its breakpoint

Each takes a dict of results. Its keys become the table's index: a label (index ``run`` or ``search``),
or a tuple such as ``(workers, queue)`` with ``index=("workers", "queue")``.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from .. import fmt

#: the events of the server's storage and JVM that :func:`storage_table` counts, with their columns
STORAGE_EVENTS = {"flush": "flushes", "compaction": "compactions", "gc": "GC pauses"}


def _frame(rows: list[dict], keys: list, index) -> pd.DataFrame:
    names = [index] if isinstance(index, str) else list(index)
    for row, key in zip(rows, keys):
        parts = key if isinstance(key, tuple) else (key,)
        if len(parts) != len(names):
            raise ValueError(f"index {tuple(names)} does not fit the key {key!r}")
        row.update(dict(zip(names, parts)))
    columns = names + [c for c in (rows[0] if rows else {}) if c not in names]
    return pd.DataFrame(rows, columns=columns).set_index(names)


def _validity(r) -> str:
    v = getattr(r, "validity", None)
    return v.badge if v is not None else "not assessed"


def _events(r) -> pd.DataFrame:
    ev = getattr(r, "events", None)
    return ev if ev is not None and len(ev) else pd.DataFrame(columns=["event", "dur_ms"])


def load_table(runs: Mapping, index="run") -> pd.DataFrame:
    """One row per fixed-rate run (key -> ExperimentResult): offered and achieved rate, p50/p99/p99.9/max,
    errors (socket errors and 5xx) and the validity level with its first reason."""
    rows = [{"offered, req/s": r.load.target_rate, "achieved, req/s": r.load.achieved_rate,
             "p50, ms": r.load.p50_ms, "p99, ms": r.load.p99_ms, "p99.9, ms": r.load.p999_ms, "max, ms": r.load.max_ms,
             "errors": r.load.server_errors, "validity": _validity(r)} for r in runs.values()]
    return _frame(rows, list(runs), index)


def storage_table(runs: Mapping, index="run") -> pd.DataFrame:
    """:func:`load_table` with, from each run's own events (:mod:`perflab.measure.events`), how many
    flushes, compactions and GC pauses the window held, the total write-stall time, and how many latency
    spikes there were (:mod:`perflab.measure.attribution`)."""
    table = load_table(runs, index)
    validity = table.pop("validity")
    events = [_events(r) for r in runs.values()]
    for kind, column in STORAGE_EVENTS.items():
        table[column] = [int((ev["event"] == kind).sum()) for ev in events]
    table["write stalls, ms"] = [float(ev.loc[ev["event"] == "write_stall", "dur_ms"].sum()) for ev in events]
    table["spikes"] = [len(r.attribution.spikes) if r.attribution is not None else None for r in runs.values()]
    table["validity"] = validity
    return table


def overload_table(runs: Mapping, index="run") -> pd.DataFrame:
    """One row per run above the breakpoint: achieved rate, requests rejected with 503 (the executor's
    full queue) and their share of all responses, p99, the server's ``queue_full`` episodes, validity."""
    rows = []
    for r in runs.values():
        codes = r.load.status_counts
        rejected = codes.get("503", 0)
        rows.append({"achieved, req/s": r.load.achieved_rate, "rejected (503)": rejected,
                     "rejected share": rejected / max(1, sum(codes.values())), "p99, ms": r.load.p99_ms,
                     "queue_full episodes": int((_events(r)["event"] == "queue_full").sum()),
                     "validity": _validity(r)})
    return _frame(rows, list(runs), index)


def breakpoint_table(results: Mapping, index="search") -> pd.DataFrame:
    """One row per breakpoint search (key -> BreakpointResult): the breakpoint (NaN when no rate passed)
    with its interval, the search's outcome, the validity of the probes at the interval's edges, the number
    of probes, the search's seconds and why it stopped."""
    rows = [{"breakpoint, req/s": r.rate if r.rate is not None else float("nan"),
             "interval, req/s": fmt.interval(r.interval), "outcome": str(r.outcome),
             "probes' validity": str(r.validity) if r.validity else "not assessed", "probes": len(r.probes),
             "search, s": r.seconds, "stopped because": r.stop_reason} for r in results.values()]
    return _frame(rows, list(results), index)


def at_breakpoints(results: Mapping) -> dict:
    """The load at each search's breakpoint (:attr:`perflab.breakpoint.BreakpointResult.at_breakpoint`),
    labelled 'GET, 64 connections @ 50,000/s'; searches where nothing passed are left out."""
    return {f"{k} @ {r.rate:,.0f}/s": r.at_breakpoint for k, r in results.items() if r.at_breakpoint is not None}
