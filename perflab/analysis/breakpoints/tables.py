"""Breakpoint searches as tables: one row per search, and the load at each breakpoint."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ... import fmt
from ..findings import hold_note, no_breakpoint
from ..frames import keyed
from .sentences import row_of


def breakpoint_table(results: Mapping, index="search") -> pd.DataFrame:
    """One row per breakpoint search (key -> BreakpointResult): the breakpoint (NaN when there is none) with
    its interval, the search's outcome, whether it held for a sustain window, the validity of the probes it
    rests on, the number of probes, the search's seconds and why it stopped (or why it cannot tell)."""
    # whole requests per second and tenths of a second: the notebooks' 3-decimal float format is for latencies
    rows = [
        {
            "breakpoint, req/s": round(r.rate) if r.rate is not None else None,
            "interval, req/s": fmt.interval(r.interval),
            "outcome": str(r.outcome),
            "held": hold_note(row_of(r)) or ("" if r.rate is not None or not r.holds else no_breakpoint(row_of(r))),
            "probes' validity": str(r.validity) if r.validity else "not assessed",
            "probes": len(r.probes),
            "search, s": round(r.seconds, 1),
            "stopped because": r.stop_reason + (f"; {r.why}" if r.why else ""),
        }
        for r in results.values()
    ]
    df = keyed(rows, list(results), index)
    df["breakpoint, req/s"] = df["breakpoint, req/s"].astype("Int64")
    return df


def at_breakpoints(results: Mapping) -> dict:
    """The load at each search's breakpoint (:attr:`perflab.breakpoint.BreakpointResult.at_breakpoint`),
    labelled 'GET, 64 connections @ 50,000/s'; searches where nothing passed are left out."""
    return {f"{k} @ {r.rate:,.0f}/s": r.at_breakpoint for k, r in results.items() if r.at_breakpoint is not None}


def hold_table(results: Mapping, index="search") -> pd.DataFrame:
    """Every held window of every search (key -> BreakpointResult), in order: its rate, length, whether it began on
    a fresh start, whether the server kept up, p99, the share of the rate achieved, other programs' CPU and the
    machine's slowdown beside it, and the judgement's reason (empty: no search held one)."""
    rows, keys = [], []
    for k, r in results.items():
        for h in r.holds:
            keys.append(k)
            rows.append(
                {
                    "rate, req/s": round(h.rate),
                    "window, s": h.seconds,
                    "fresh start": {True: "yes", False: "no"}.get(h.fresh, ""),
                    "kept up": {True: "yes", False: "no"}.get(h.passed, "inconclusive"),
                    "p99, ms": h.p99_ms,
                    "achieved": fmt.pct(h.achieved_ratio) if h.achieved_ratio else "",
                    "other programs, cores": h.others_cores,
                    "machine slowdown": h.host_slowdown,
                    "reason": h.reason,
                }
            )
    return keyed(rows, keys, index)
