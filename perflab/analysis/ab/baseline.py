"""Several configurations, each compared with one baseline interleaved (notebook 03: each mode against
sync, 04: each executor configuration against the first, 05: each backend against lsm), each pair of
servers in an ``ab`` run of its own (measured by :func:`perflab.lab.notebook.against`), told."""

from __future__ import annotations

from ... import fmt
from .reading import answer_comparison, key_number, stop_ratio, validity


def name_of(key) -> str:
    """How a configuration's key reads when no label was given: the key, or its parts joined."""
    return key if isinstance(key, str) else " ".join(map(str, key if isinstance(key, tuple) else (key,)))


def label_of(results, key) -> str:
    """How a comparison's key reads: its label when ``results`` came from :func:`perflab.lab.notebook.against`,
    else the key."""
    return getattr(results, "labels", {}).get(key) or name_of(key)


class Comparisons(dict):
    """What :func:`perflab.lab.notebook.against` returns: key -> ``ABResult`` of each configuration against the
    ``baseline`` key (which has none), with every key's label (``labels``, the baseline's included)."""

    def __init__(self, baseline, labels: dict):
        super().__init__()
        self.baseline = baseline
        self.labels = labels

    @property
    def validity(self) -> str | None:
        """The worst validity level of the comparisons (``None`` when there are none)."""
        return validity(self) if self else None


def searches(results: Comparisons) -> dict:
    """Each configuration's breakpoint search from breakpoint comparisons against one baseline
    (:func:`perflab.lab.notebook.against` with ``search``): the baseline's from the first comparison (every comparison searched
    it again, side by side with its B), then each B's. Key -> ``BreakpointResult``."""
    found = {k: r for k, r in results.items() if r.mode == "breakpoint"}
    if not found:
        return {}
    return {
        results.baseline: next(iter(found.values())).searches["A"],
        **{k: r.searches["B"] for k, r in found.items()},
    }


def search_rows(results: Comparisons, workload: str, connections: int | None = None) -> list[dict]:
    """The findings' breakpoint rows of breakpoint comparisons against one baseline (one per configuration,
    as :func:`searches` picks them; ``mode``: its label; ``run_id``: the comparison that searched it)."""
    runs = {results.baseline: next(iter(results.values()), None), **results}
    return [
        {
            "workload": workload,
            "connections": connections,
            "mode": label_of(results, k),
            "rate": s.rate,
            "interval": list(s.interval),
            "verdict": str(s.outcome),
            "validity": runs[k].run.validity,
            "run_id": runs[k].run_id,
        }
        for k, s in searches(results).items()
    ]


def best(results: dict):
    """The key of the comparison whose B did best against A by its stop rule's ratio (the highest
    breakpoint ratio, or the lowest latency ratio); ``None`` when none has a ratio."""
    scored = {}
    for k, r in results.items():
        v = stop_ratio(r)
        if v is not None:
            scored[k] = v if getattr(r, "mode", None) == "breakpoint" else 1 / v
    return max(scored, key=scored.get) if scored else None


def answer_against(results: Comparisons, what: str = "") -> str:
    """The finding of comparisons against one baseline (``what``: a prefix naming them, e.g. ``"PUT"``):
    with one, its answer; with several, how many differ from the baseline and the verdict of the one that
    did best against it, naming its method; with none, that only the baseline was measured."""
    base = label_of(results, results.baseline)
    lead = f"{what}: " if what else ""
    if not results:
        return f"{lead}Only {base} was measured, so nothing was compared."
    if len(results) == 1:
        return lead + answer_comparison(next(iter(results.values())))
    differ = sum(bool(r.significant) for r in results.values())
    top = best(results)
    text = (
        f"{lead}Against {base}, {differ} of {fmt.count(len(results), 'configuration')} "
        f"{'differs' if differ == 1 else 'differ'} (each compared with it interleaved, in a run of its own)"
    )
    if top is None:
        return text + "; none has a ratio to rank."
    return text + f"; the best, {label_of(results, top)}: {answer_comparison(results[top])}"


def key_against(results: Comparisons) -> dict:
    """The finding's key number of comparisons against one baseline: :func:`key_number` of the best one
    (:func:`best`), its label naming the configuration when there are several."""
    top = best(results)
    if top is None:
        return {"label": "B/A", "value": None, "unit": "x", "interval": None}
    k = key_number(results[top])
    return {**k, "label": f"{k['label']} ({label_of(results, top)})"} if len(results) > 1 else k


def verdict_lines(results: dict, what: str = "") -> list[str]:
    """One line per comparison (key -> comparison): its label (after ``what``, e.g. ``"PUT"``) and its answer,
    naming its method."""
    lead = f"{what}, " if what else ""
    return [f"**{lead}{label_of(results, k)}**: {answer_comparison(r)}" for k, r in results.items()]
