"""Worker threads × queue capacity of the ``async`` executor (notebook 04): the breakpoint of every
configuration, each searched against the first interleaved, and what each does under the same overload (503
rejections, p99).

The breakpoints of two configurations that were each compared with the first were searched one after the
other, and a sentence that sets them side by side says so (*sequential intervals*); the overload runs are
one per configuration, one after the other, and no sentence claims a difference between two of them::

    executor.grid(found).show()                    # found: nb.against(...) of every configuration
    executor.overload(over, rate).show()
    findings.show(ab.findings(found), executor.findings(found, over, rate))
    executor.answer(found, "get-random", 64).show()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pandas as pd
import plotly.graph_objects as go

from .. import fmt
from . import ab, labels
from .breakpoints import breakpoint_overview, breakpoint_table, compare_breakpoints, estimate
from .findings import Finding, bullets
from .frames import events_of, keyed, validity_text
from .section import Section

__all__ = ["grid", "overload", "findings", "answer", "overload_table", "executor_heatmap"]

#: the index of the grid's tables
GRID = ("workers", "queue")


def overload_table(runs: Mapping, index="run") -> pd.DataFrame:
    """One row per run above the breakpoint: achieved rate, requests rejected with 503 (the executor's
    full queue) and their share of all responses, p99, the server's ``queue_full`` episodes, validity."""
    rows = []
    for r in runs.values():
        codes = r.load.status_counts
        rejected = codes.get("503", 0)
        rows.append(
            {
                "achieved, req/s": r.load.achieved_rate,
                "rejected (503)": rejected,
                "rejected share": rejected / max(1, sum(codes.values())),
                "p99, ms": r.load.p99_ms,
                "queue_full episodes": int((events_of(r)["event"] == "queue_full").sum()),
                "validity": validity_text(r),
            }
        )
    return keyed(rows, list(runs), index)


def executor_heatmap(
    table: pd.DataFrame, value: str, title: str, text_format: str = ",.0f", colorscale: str = "Viridis"
) -> go.Figure:
    """``value`` (a column of ``table``) over the executor grid: worker threads down, queue capacity across,
    the number written in each cell (``text_format``, a d3 format: ``,.0f``, ``.1%``). ``table`` is indexed
    by ``workers, queue`` (:data:`GRID`); a cell
    without a value (no rate passed) stays empty."""
    if list(table.index.names) != ["workers", "queue"]:
        raise ValueError(f"table must be indexed by workers, queue, got {list(table.index.names)}")
    if value not in table:
        raise ValueError(f"value: {value!r} is not a column of the table ({', '.join(table.columns)})")
    grid = pd.to_numeric(table[value], errors="coerce").astype(float).unstack("queue")
    fig = go.Figure(
        go.Heatmap(
            z=grid.to_numpy(),
            x=[str(q) for q in grid.columns],
            y=[str(w) for w in grid.index],
            colorscale=colorscale,
            texttemplate=f"%{{z:{text_format}}}",
            colorbar=dict(title=value),
            hovertemplate=f"%{{y}} workers, queue %{{x}}<br>{value}: %{{z:{text_format}}}<extra></extra>",
        )
    )
    fig.update_xaxes(title="queue capacity", type="category")
    fig.update_yaxes(title="worker threads", type="category", autorange="reversed")
    fig.update_layout(title=title, template="plotly_white")
    return fig


def _ranked(grid: Mapping) -> list:
    """The keys of the searches that found a breakpoint, highest first."""
    return sorted((k for k, r in grid.items() if r.rate), key=lambda k: grid[k].rate, reverse=True)


def describe_executor_grid(grid: Mapping[tuple[int, int], object]) -> str:
    """The executor grid's breakpoints (``(workers, queue)`` -> BreakpointResult): the best and the worst
    configuration, the worker counts compared at each queue capacity, the configurations that passed no
    probe."""
    ranked = _ranked(grid)
    if not ranked:
        return "No configuration passed even the lowest probe: lower start_rate or raise sla_ms."
    best, worst = ranked[0], ranked[-1]
    parts = [
        f"The best configuration is **{labels.executor(*best)}**: {estimate(grid[best])}; the worst is "
        f"{labels.executor(*worst)}: {estimate(grid[worst])}."
    ]
    workers = list(dict.fromkeys(w for w, _ in grid))
    for q in dict.fromkeys(q for _, q in grid):
        parts.append(
            compare_breakpoints(
                {fmt.count(w, "worker"): grid[(w, q)] for w in workers if (w, q) in grid},
                what=f"breakpoint with queue {q}",
            )
        )
    failed = [labels.executor(*k) for k, r in grid.items() if not r.rate]
    if failed:
        parts.append(f"No rate passed for: {', '.join(failed)}.")
    return " ".join(parts)


def describe_overload(table: pd.DataFrame, rate: float) -> str:
    """'Under overload (3,000 req/s), the share rejected with 503 ranges from 0% (1 worker, queue 1024) to
    41% (4 workers, queue 16); p99 from 2.10 ms to 180 ms.' ``table``:
    :func:`overload_table` indexed by ``workers, queue``."""
    if table.empty:
        return "No overload run was measured."
    o = table.sort_values("rejected share", kind="stable")
    return (
        f"Under overload ({fmt.rate(rate)}), the share rejected with 503 ranges from "
        f"{fmt.pct(o['rejected share'].iloc[0])} ({labels.executor(*o.index[0])}) to "
        f"{fmt.pct(o['rejected share'].iloc[-1])} ({labels.executor(*o.index[-1])}); p99 from "
        f"{fmt.ms(table['p99, ms'].min())} to {fmt.ms(table['p99, ms'].max())}."
    )


def grid(found: ab.Comparisons) -> Section:
    """The breakpoint of every configuration (``found``: each against the first, :func:`perflab.lab.notebook.against` with a
    search): the heatmap over workers and queue capacity, the table, each comparison's verdict, the best and
    the worst configuration and the worker counts compared at each queue capacity, and every search's curve."""
    bps = ab.searches(found)
    table = breakpoint_table(bps, index=GRID)
    return Section(
        [breakpoint_heatmap(table), table, bullets(ab.findings(found)), describe_executor_grid(bps), ab.figure(found)]
    )


def breakpoint_heatmap(table: pd.DataFrame) -> go.Figure | str:
    """The breakpoints over the grid (``table``: :func:`breakpoint_table` indexed by :data:`GRID`), or why there is
    no map: a heatmap of empty cells only would be a figure with nothing in it."""
    if table["breakpoint, req/s"].notna().any():
        return executor_heatmap(table, "breakpoint, req/s", "Breakpoint (requests/s) by workers and queue capacity")
    return (
        "No configuration kept up with any rate it was probed at: there is no breakpoint to map (each search's "
        "probes are in the figure below)."
    )


def overload(runs: Mapping, rate: float) -> Section:
    """Every configuration at the same overload ``rate`` (``(workers, queue)`` -> ExperimentResult): the table
    of rejections and p99, the share rejected and p99 over the grid."""
    table = overload_table(runs, index=GRID)
    return Section(
        [
            f"Overload at {fmt.rate(rate)}.",
            table,
            executor_heatmap(
                table, "rejected share", "Share of requests rejected with 503 under overload", ".1%", "Magma"
            ),
            executor_heatmap(table, "p99, ms", "p99 (ms) under overload", ".1f", "Magma"),
        ]
    )


def findings(found: ab.Comparisons, runs: Mapping, rate: float) -> list[str]:
    """The grid's best and worst configurations and the worker counts compared, and the range of rejections
    and p99 under the overload ``rate``."""
    return [describe_executor_grid(ab.searches(found)), describe_overload(overload_table(runs, index=GRID), rate)]


def answer(found: ab.Comparisons, workload: str, connections: int) -> Finding:
    """:func:`ab.answer` of the configurations against the first, every breakpoint as the preview."""
    f = ab.answer(found, workload, connections)
    return replace(f, preview=breakpoint_overview(f.breakpoints, title="Breakpoint of each executor configuration"))
