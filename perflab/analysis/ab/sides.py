"""What a notebook's A/B parameters become: its pairs (``ABParams`` fields), checked, a bad field named with
the parameter it came from, and the tests a comparison makes (its sides are built by
:func:`perflab.lab.notebook.side`)."""

from __future__ import annotations

import dataclasses

from ...config import ABParams
from ...stats.paired import Family


def pairs(fields: dict | None):
    """A notebook's ``pairs`` parameter (``ABParams`` fields: probe lengths, the stop rule, the budget) as the
    :class:`~perflab.config.ABParams` of its interleaved comparisons; a field it does not have is named."""
    if fields is not None and not isinstance(fields, dict):
        raise ValueError(f"pairs: expected a dict of ABParams fields, got {type(fields).__name__}")
    unknown = sorted(set(fields or {}) - {f.name for f in dataclasses.fields(ABParams)})
    if unknown:
        raise ValueError(
            f"pairs: {', '.join(map(repr, unknown))} is no ABParams field (probe_duration, warmup, "
            f"max_pairs, budget, alpha, idle_pairs...)"
        )
    return ABParams(**(fields or {}))


def family(params: ABParams, rates: int = 1) -> Family:
    """The tests a comparison at ``rates`` rates makes with ``params``, with their level (a notebook says it
    before the comparison runs: at which level a claim is made, and how many pairs it needs)."""
    return Family(params.alpha, params.max_pairs, rates, sequential=params.stop_at == "not-worse")
