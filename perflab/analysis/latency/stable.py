"""Notebook 01's stable rate in words: how each operation's rate was chosen (a fixed rate, or a share of the
breakpoint searched first) and whether each run at it held it.

It reads the record :mod:`perflab.lab.stable` writes (a dict, also in each stable run's ``meta.json`` under
:data:`RECORD`, where the report reads it for its own language: :func:`perflab.report.facts.stable_rate_lines`).
"""

from __future__ import annotations

from ... import fmt
from ..findings import headline, no_breakpoint
from ..section import Section

#: the key of a stable run's ``meta.json`` that holds how its rate was chosen and whether the run held it
RECORD = "stable_rate"
#: where a rate came from: the breakpoint; a search without one: the lower bound it gives, else the upper bound when
#: the fixed rate is not below it; else the fixed rate
BREAKPOINT, LOWER_BOUND, UPPER_BOUND, FIXED = "breakpoint", "lower bound", "upper bound", "fixed"


def describe_choice(record: dict) -> str:
    """'**PUT**: the breakpoint with 16 connections is 10,000 req/s (interval [9,600, 10,400], resolved); the
    stable rate is 70% of it, 7,000 req/s.' (or the lower bound, or the fixed rate, and why)."""
    op, rate, row = record["op"], fmt.rate(record["rate"]), record.get("breakpoint") or {}
    conns = fmt.count(int(record["connections"]), "connection")
    share = fmt.pct(record["fraction"]) if record.get("fraction") is not None else None
    if share is None:
        return f"**{op}** runs at its fixed rate, {rate} (no breakpoint searched: `stable_fraction` is not set)."
    if record["basis"] == BREAKPOINT:
        return f"**{op}**: the breakpoint with {conns} is {headline(row)}; the stable rate is {share} of it, {rate}."
    if record["basis"] == LOWER_BOUND:
        return (
            f"**{op}**: no breakpoint with {conns}: {no_breakpoint(row)}; the stable rate is {share} of the lower "
            f"bound the search gives, {fmt.rate(record['basis_rate'])}: {rate}."
        )
    if record["basis"] == UPPER_BOUND:
        return (
            f"**{op}**: no breakpoint with {conns}: {no_breakpoint(row)}; no lower bound either, and its fixed rate, "
            f"{fmt.rate(record['fixed_rate'])}, is not below the upper bound the search gives, so the stable rate is "
            f"{share} of that bound, {fmt.rate(record['basis_rate'])}: {rate}."
        )
    return (
        f"**{op}**: no breakpoint with {conns}: {no_breakpoint(row)}; no lower bound either, so it runs at its "
        f"fixed rate, {rate}."
    )


def describe_run(run: dict) -> str:
    """'with 1 connection it held it (achieved 100%, p99 1.20 ms within the 10 ms SLA)', from a run's judgement
    (:func:`perflab.lab.stable.judge`: a breakpoint probe's)."""
    conns = fmt.count(int(run["connections"]), "connection")
    if run.get("kept_up"):
        return (
            f"with {conns} it held it (achieved {fmt.pct(run['achieved_ratio'])}, p99 {fmt.ms(run['p99_ms'])} "
            f"within the {fmt.ms(run['sla_ms'])} SLA)"
        )
    if run.get("kept_up") is False:
        return f"with {conns} it did not hold it ({run['reason']})"
    return f"with {conns} it could not be judged ({run['reason']})"


def describe_stable_rate(record: dict) -> str:
    """How the rate was chosen, then what each run at it showed (:func:`describe_choice`, :func:`describe_run`)."""
    runs = [describe_run(r) for r in record.get("runs") or []]
    return describe_choice(record) + (f" At that rate, {'; '.join(runs)}." if runs else "")


def stable_rate(record: dict) -> Section:
    """An operation's stable rate and whether its runs held it, in words (:func:`describe_stable_rate`)."""
    return Section([describe_stable_rate(record)])
