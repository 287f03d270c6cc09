"""Breakpoint searches as tables: one row per search, and the load at each breakpoint."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ... import fmt
from ..frames import keyed


def breakpoint_table(results: Mapping, index="search") -> pd.DataFrame:
    """One row per breakpoint search (key -> BreakpointResult): the breakpoint (NaN when no rate passed)
    with its interval, the search's outcome, the validity of the probes at the interval's edges, the number
    of probes, the search's seconds and why it stopped."""
    # whole requests per second and tenths of a second: the notebooks' 3-decimal float format is for latencies
    rows = [{"breakpoint, req/s": round(r.rate) if r.rate is not None else None,
             "interval, req/s": fmt.interval(r.interval), "outcome": str(r.outcome),
             "probes' validity": str(r.validity) if r.validity else "not assessed", "probes": len(r.probes),
             "search, s": round(r.seconds, 1), "stopped because": r.stop_reason} for r in results.values()]
    df = keyed(rows, list(results), index)
    df["breakpoint, req/s"] = df["breakpoint, req/s"].astype("Int64")
    return df


def at_breakpoints(results: Mapping) -> dict:
    """The load at each search's breakpoint (:attr:`perflab.breakpoint.BreakpointResult.at_breakpoint`),
    labelled 'GET, 64 connections @ 50,000/s'; searches where nothing passed are left out."""
    return {f"{k} @ {r.rate:,.0f}/s": r.at_breakpoint for k, r in results.items() if r.at_breakpoint is not None}
