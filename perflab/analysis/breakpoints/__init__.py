"""Breakpoint searches: up to which fixed rate a server keeps up, with the interval the probes support, and
how breakpoints compare (a difference only when their intervals do not overlap, the method named).

A notebook tells it with a few calls (``results``: label -> BreakpointResult; ``rows``: their findings'
breakpoint rows, :func:`perflab.analysis.findings.breakpoint_row`)::

    breakpoints.searches(results, rows).show()          # the table, each search in words
    breakpoints.holds(results).show()                   # the sustain windows that held each breakpoint
    breakpoints.breakpoint_curve(results).show()        # latency against the offered rate
    breakpoints.at_limit(results).show()                # the spectrum at each breakpoint
    findings.show(breakpoints.findings(results, rows))
    breakpoints.answer(results, rows).show()

The sentences are :mod:`.sentences`' (also the one-line :func:`estimate` the CLI prints), the figures
:mod:`.figures`', the tables :mod:`.tables`'.
"""

from __future__ import annotations

from collections.abc import Mapping

from ... import fmt
from ..consoles import console
from ..findings import Finding, key_breakpoint, validity_of
from ..latency import describe_spectra, percentile_spectrum
from ..section import Section
from .figures import breakpoint_curve, breakpoint_overview
from .sentences import (
    answer_breakpoints,
    compare_breakpoint_rows,
    compare_breakpoints,
    compare_by_connections,
    conditions_note,
    describe_breakpoint,
    describe_breakpoints,
    describe_ceiling_shares,
    describe_hold,
    describe_search_validity,
    describe_unresolved,
    estimate,
    host_note,
    placement_table,
)
from .tables import at_breakpoints, breakpoint_table, hold_table

__all__ = [
    # what a notebook calls
    "searches",
    "holds",
    "at_limit",
    "findings",
    "answer",
    "breakpoint_curve",
    # what the other subjects, the report and the command line build on
    "breakpoint_table",
    "breakpoint_overview",
    "describe_breakpoint",
    "describe_breakpoints",
    "compare_breakpoints",
    "compare_breakpoint_rows",
    "describe_search_validity",
    "estimate",
    "host_note",
    "conditions_note",
]


def _sla_ms(results: Mapping) -> float | None:
    """The SLA the searches were judged by (their criteria's p99 bound), in ms."""
    return next((r.criteria.sla_p99 * 1000 for r in results.values() if getattr(r, "criteria", None)), None)


def searches(results: Mapping, rows: list[dict]) -> Section:
    """The searches' table, each one in words (its breakpoint, interval, why its first failing probe failed),
    and, when ``rows`` measured several CPU placements, the same searches at each placement side by side."""
    return Section([breakpoint_table(results), *describe_breakpoints(results), placement_table(rows)])


def holds(results: Mapping) -> Section:
    """The held windows beside the searches: every window's rate, length, fresh start and judgement, each search's
    in words (held from fresh starts, or stepped down, with how far the short probes were off), and real wrk2's
    consoles where it gave a second opinion (:mod:`perflab.lab.second_opinion`)."""
    said = [t for t in (describe_hold(k, r) for k, r in results.items()) if t]
    if not said:
        return Section(["No breakpoint was held for a sustain window (sustain = 0, or no search found one)."])
    wrk2 = [
        console(
            (r.run.dir / run["console"]).read_text(errors="replace"),
            title=f"{k}: real wrk2 at {fmt.rate(op.rate)}, run {i + 1} of {len(op.runs)} on a freshly started server",
        )
        for k, r in results.items()
        if (op := getattr(r, "second_opinion", None)) is not None
        for i, run in enumerate(op.runs)
        if (r.run.dir / run["console"]).is_file()
    ]
    return Section([hold_table(results), *said, *wrk2])


def at_limit(results: Mapping) -> Section:
    """The percentile spectrum of each search's highest passing probe, what "keeping up" looks like right
    below the limit, and each one in words."""
    at = at_breakpoints(results)
    if not at:
        return Section(["No search found a passing rate, so there is no spectrum at a breakpoint."])
    sla = _sla_ms(results)
    return Section(
        [
            percentile_spectrum(at, sla_ms=sla, title="Latency by percentile at each breakpoint"),
            describe_spectra(at, sla, compare=()),
        ]
    )


def findings(results: Mapping, rows: list[dict]) -> list[str]:
    """Each search in words, each breakpoint against the request-handling ceiling (the ``status`` workload),
    each workload's connection counts compared, and the searches that did not resolve."""
    return [
        *describe_breakpoints(results),
        *[t for t in (describe_hold(k, r) for k, r in results.items()) if t],
        *describe_ceiling_shares(rows),
        *compare_by_connections(rows),
        describe_unresolved(results),
    ]


def answer(results: Mapping, rows: list[dict]) -> Finding:
    """Every breakpoint in one sentence; the key number the last row's (the notebook's last search: GET with
    the most connections); the curves as the preview."""
    return Finding(
        answer_breakpoints(rows),
        key_number=key_breakpoint(rows[-1] if rows else None, "{workload} breakpoint, {connection_count}"),
        validity=validity_of(*results.values()),
        breakpoints=rows,
        preview=breakpoint_curve(results, sla_ms=_sla_ms(results), title="Breakpoint searches"),
    )
