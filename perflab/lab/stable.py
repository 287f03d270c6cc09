"""Notebook 01's stable rate: a fixed rate, or a share of the breakpoint found first, and whether the runs held it.

The course asks for PUT and GET "at a stable rate below the breakpoint". With ``stable_fraction`` (a number in
(0, 1)) 01 first searches each operation's breakpoint at the connection count it profiles (:func:`choose`:
:func:`perflab.lab.notebook.search_breakpoint`, as 02 does), then runs it at that share of it; without one, at
its fixed rate (``put_rate``, ``get_rate``). When the search finds no breakpoint, the rate is that share of the
lower bound it gives (``at_least``: what it kept up with), else the fixed rate, unless the search showed the
breakpoint is below it (then that share of the upper bound); the record says which.

What :func:`choose` decided and what :func:`judge` found of each run are plain dicts (:data:`RECORD`), written into
each stable run's ``meta.json``: the page's sentence (:func:`perflab.analysis.latency.stable_rate`) and the
report's, in the report's language (:func:`perflab.report.facts.stable_rate_lines`), read the same record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from ..analysis import labels
from ..analysis.breakpoints.sentences import row_of
from ..analysis.latency.stable import BREAKPOINT, FIXED, LOWER_BOUND, RECORD, UPPER_BOUND
from ..config import BreakpointCriteria, BreakpointParams
from ..config.fields import param
from ..measure.judgement import evaluate
from . import notebook as nb

__all__ = ["connections", "fraction", "settings", "choose", "pick", "judge"]


def connections(value) -> tuple[int, ...]:
    """The ``connections`` parameter checked: the connection counts each operation runs with (at least one, each
    at least 1, none twice), as given; the most of them is the count profiled and searched."""
    counts = param("connections", value, "ints", min=1)
    if not counts:
        raise ValueError("connections: must name at least one connection count, got an empty list")
    twice = sorted({c for c in counts if counts.count(c) > 1})
    if twice:
        raise ValueError(f"connections: names {', '.join(map(str, twice))} more than once, got {list(counts)}")
    return counts


def fraction(value) -> float | None:
    """The ``stable_fraction`` parameter checked: ``None`` (the fixed rates) or a number strictly between 0 and 1
    (the share of the breakpoint to run at); anything else a ``ValueError`` naming the parameter."""
    if value is None:
        return None
    v = param("stable_fraction", value, "float")
    if not 0 < v < 1:
        raise ValueError(
            f"stable_fraction: must be > 0 and < 1 (the share of the breakpoint to run at), or None, got {value!r}"
        )
    return v


def settings(search, sla_p99: float, seed: int = 0) -> dict:
    """The searches' settings from the ``search`` parameter (a dict of ``BreakpointParams`` fields, ``None`` or
    ``{}`` for the defaults) and the notebook's SLA: ``criteria`` and ``params``, each checked by the config
    layer, a bad key or value named as ``search: ...``."""
    given = {} if search is None else search
    if not isinstance(given, Mapping):
        raise ValueError(f"search: expected a dict of BreakpointParams fields, got {type(given).__name__}")
    known = {f.name for f in dataclasses.fields(BreakpointParams)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise ValueError(
            f"search: {', '.join(map(repr, unknown))} is no BreakpointParams field (the SLA is the notebook's sla_p99)"
        )
    try:
        return {
            "criteria": BreakpointCriteria(sla_p99=sla_p99),
            "params": BreakpointParams(**{"seed": seed, **given}),
        }
    except ValueError as e:
        raise ValueError(f"search: {e}") from None


def choose(
    op: str,
    server,
    load,
    share: float | None,
    fixed: float,
    name: str,
    criteria: BreakpointCriteria | None = None,
    params: BreakpointParams | None = None,
    session=None,
    **data,
) -> dict:
    """The rate ``op``'s stable runs use, and why (see the module docstring): with ``share`` (:func:`fraction`),
    one breakpoint search of ``load`` (its connections: the profiled count) named ``name``, with ``criteria``,
    ``params``, ``session`` and ``data`` (``prefill=`` or ``fill=``); without one, ``fixed``. Prints one line."""
    record = {
        "op": op,
        "fraction": share,
        "fixed_rate": float(fixed),
        "connections": load.connections,
        "search_run": None,
        "breakpoint": None,
    }
    if share is None:
        record.update(basis=FIXED, basis_rate=None, rate=float(fixed))
        return record
    found = nb.search_breakpoint(
        f"{labels.load(op, load.connections)}: breakpoint",
        server,
        load,
        name,
        criteria=criteria,
        params=params,
        session=session,
        **data,
    )
    row = {**row_of(found), "connections": load.connections}
    record.update(search_run=found.run_id, breakpoint=row, **pick(row, share, fixed))
    print(f"{op}: stable rate {record['rate']:,.0f} req/s ({record['basis']})")
    return record


def pick(row: dict, share: float, fixed: float) -> dict:
    """From a search's row (:func:`perflab.analysis.breakpoints.row_of`): ``basis``, ``basis_rate`` and ``rate``:
    ``share`` of its breakpoint, else of the lower bound it gives (what it kept up with, below any upper bound it
    found), else ``fixed``, unless the search showed the breakpoint is below it: then ``share`` of that upper bound
    (a rate known to be above the breakpoint is no stable rate)."""
    if row.get("rate"):
        return {"basis": BREAKPOINT, "basis_rate": row["rate"], "rate": float(max(1, round(share * row["rate"])))}
    lo, hi = (list(row.get("interval") or []) + [None, None])[:2]
    lower = row.get("at_least") or lo
    if lower and (hi is None or lower < hi):
        return {"basis": LOWER_BOUND, "basis_rate": lower, "rate": float(max(1, round(share * lower)))}
    if hi is not None and fixed >= hi:
        return {"basis": UPPER_BOUND, "basis_rate": hi, "rate": float(max(1, round(share * hi)))}
    return {"basis": FIXED, "basis_rate": None, "rate": float(fixed)}


def judge(record: dict, runs: Mapping, sla: float) -> dict:
    """Whether each stable run (label -> ExperimentResult) kept up with ``record``'s rate: its judgement as a
    breakpoint probe's (:func:`perflab.measure.judgement.evaluate`: the rate achieved, p99 within ``sla``, no
    errors, no latency trend, the validity record's doubts), written with the record into its ``meta.json``
    (:data:`RECORD`). ``record`` with ``runs``: each run's label, connections, id and what it showed."""
    criteria = BreakpointCriteria(sla_p99=sla)
    judged = []
    for label, r in runs.items():
        j = evaluate(r.load, criteria, r.validity)
        judged.append(
            {
                "label": label,
                "connections": r.load.params.connections,
                "run": r.run_id,
                "kept_up": j.passed,
                "reason": j.reason,
                "achieved_ratio": j.metrics["achieved_ratio"],
                "p99_ms": j.metrics["p99_ms"],
                "sla_ms": sla * 1000,
                "min_achieved": criteria.min_achieved,
            }
        )
    for r, mine in zip(runs.values(), judged, strict=True):
        r.run.update(**{RECORD: {**record, "run": mine}})
    return {**record, "runs": judged}
