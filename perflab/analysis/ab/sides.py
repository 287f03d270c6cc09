"""What a notebook's A/B parameters become: its sides (``ServerConfig`` fields, or a commit) and its pairs
(``ABParams`` fields), each checked, a bad field named with the parameter it came from."""

from __future__ import annotations

import dataclasses

from ...commits import Commit
from ...config import ABParams, ServerConfig
from ...measure.paired import Family


def side(common: dict | None, fields: dict | None, commit: str | None = None, what: str = "a"):
    """A notebook's side: the built-in server with ``common`` fields updated by the side's own
    (``ServerConfig`` keyword arguments), at ``commit`` when given (a :class:`~perflab.Commit`, built
    apart when the comparison starts). A bad field fails here, named with the side (``a: mode: ...``)."""
    for name, d in (("common", common), (what, fields)):
        if d is not None and not isinstance(d, dict):
            raise ValueError(f"{name}: expected a dict of ServerConfig fields, got {type(d).__name__}")
    known = {f.name for f in dataclasses.fields(ServerConfig)}
    for name, d in (("common", common), (what, fields)):
        unknown = sorted(set(d or {}) - known)
        if unknown:
            raise ValueError(f"{name}: {', '.join(map(repr, unknown))} is no ServerConfig field (a server flag, "
                             f"'-' written '_')")
    try:
        cfg = ServerConfig(**{**(common or {}), **(fields or {})})
        return Commit(commit, cfg) if commit else cfg
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


def pairs(fields: dict | None):
    """A notebook's ``pairs`` parameter (``ABParams`` fields: probe lengths, the stop rule, the budget) as the
    :class:`~perflab.config.ABParams` of its interleaved comparisons; a field it does not have is named."""
    if fields is not None and not isinstance(fields, dict):
        raise ValueError(f"pairs: expected a dict of ABParams fields, got {type(fields).__name__}")
    unknown = sorted(set(fields or {}) - {f.name for f in dataclasses.fields(ABParams)})
    if unknown:
        raise ValueError(f"pairs: {', '.join(map(repr, unknown))} is no ABParams field (probe_duration, warmup, "
                         f"max_pairs, budget, alpha, idle_pairs...)")
    return ABParams(**(fields or {}))


def family(params: ABParams, rates: int = 1) -> Family:
    """The tests a comparison at ``rates`` rates makes with ``params``, with their level (a notebook says it
    before the comparison runs: at which level a claim is made, and how many pairs it needs)."""
    return Family(params.alpha, params.max_pairs, rates)
