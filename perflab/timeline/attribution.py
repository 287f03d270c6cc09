"""Which server events a latency spike overlaps, and when a kind of event explains the spikes.

A **spike** is a latency interval whose p99 is at least ``factor`` times the run's typical interval
p99 (the median over intervals) and at least ``floor_ms`` above it. A request that completed in an
interval with latency up to the interval's p99 was in flight during ``[start - p99, end]``; an event is
a **candidate cause** of the spike when it overlaps that span.

The summary a reader can trust says, per kind: how many of the n spikes overlap such an event, how
often that happens to *any* interval (the chance rate q: the kind's spans, widened the same way), and
the share of the run the kind was running. It says that a kind **explains** the spikes only when a
one-sided binomial test rejects "spikes overlap it no more often than intervals in general" at ``alpha``
(:data:`RULE`); otherwise it reports the counts without a claim.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .events import busy_share

RULE = (
    "a kind explains the spikes when a one-sided binomial test rejects, at alpha = {alpha:g}, that spikes "
    "overlap it no more often than all intervals do"
)


@dataclass(frozen=True)
class KindSummary:
    kind: str
    spikes: int
    overlapping: int
    chance: float
    p_value: float
    busy_share: float
    explains: bool

    def sentence(self) -> str:
        claim = (
            f"more than the {self.chance:.0%} chance rate (binomial p = {self.p_value:.3g})"
            if self.explains
            else f"not more than chance ({self.chance:.0%} of all intervals overlap one; binomial "
            f"p = {self.p_value:.3g})"
        )
        return (
            f"of {self.spikes} spike{'s' if self.spikes != 1 else ''}, {self.overlapping} overlap a {self.kind}, "
            f"{claim}; {self.kind} was running {self.busy_share:.0%} of the time"
        )


@dataclass
class Attribution:
    """``spikes``: the spike intervals with the events overlapping each; ``kinds``: one summary per
    event kind; ``typical_ms``: the run's typical interval p99."""

    typical_ms: float
    threshold_ms: float
    intervals: int
    spikes: pd.DataFrame
    kinds: list[KindSummary] = field(default_factory=list)
    alpha: float = 0.01

    def summary(self) -> str:
        if self.intervals == 0:
            return "No latency intervals were recorded."
        head = (
            f"{len(self.spikes)} of {self.intervals} intervals are spikes (p99 above {self.threshold_ms:.2f} ms, "
            f"against a typical {self.typical_ms:.2f} ms)"
        )
        if len(self.spikes) == 0:
            return head + "."
        if not self.kinds:
            return head + "; the server reported no events to attribute them to."
        unexplained = int((self.spikes["causes"].map(len) == 0).sum())
        parts = [k.sentence() for k in self.kinds]
        tail = f"; {unexplained} spike{'s' if unexplained != 1 else ''} overlap no event" if unexplained else ""
        return head + ": " + "; ".join(parts) + tail + ". Rule: " + RULE.format(alpha=self.alpha) + "."


def spikes(intervals: pd.DataFrame, factor: float = 3.0, floor_ms: float = 1.0) -> tuple[pd.DataFrame, float, float]:
    """The spike intervals, the typical p99 and the spike threshold (see the module docstring)."""
    iv = intervals[intervals["tag"] == "corrected"] if "tag" in intervals else intervals
    iv = iv[iv["count"] > 0] if "count" in iv else iv
    if len(iv) == 0:
        return iv, float("nan"), float("nan")
    typical = float(iv["p99_ms"].median())
    threshold = max(typical * factor, typical + floor_ms)
    return iv[iv["p99_ms"] > threshold].copy(), typical, threshold


def _overlaps(ev_start, ev_end, s, e) -> np.ndarray:
    return (ev_start < e) & (ev_end > s)


def attribute(
    intervals: pd.DataFrame, events: pd.DataFrame, factor: float = 3.0, floor_ms: float = 1.0, alpha: float = 0.01
) -> Attribution:
    """Spikes of ``intervals`` (latency intervals with ``start_s, end_s, p99_ms``) against ``events``
    (:func:`perflab.timeline.events.read_events`), on one time axis."""
    from scipy.stats import binomtest  # in here: scipy.stats takes ~0.9 s to import

    iv = intervals[intervals["tag"] == "corrected"] if "tag" in intervals else intervals
    iv = iv[iv["count"] > 0] if "count" in iv else iv
    sp, typical, threshold = spikes(iv, factor, floor_ms)
    kinds = sorted(set(events["event"])) if events is not None and len(events) else []
    causes = []
    for row in sp.itertuples():
        s, e = row.start_s - row.p99_ms / 1000.0, row.end_s
        hit = events[_overlaps(events["start_s"].to_numpy(), events["end_s"].to_numpy(), s, e)] if kinds else events
        causes.append(sorted(set(hit["event"])) if kinds else [])
    sp = sp.assign(causes=causes) if len(sp) else sp.assign(causes=pd.Series(dtype=object))
    out = []
    if len(iv):
        lo, hi = float(iv["start_s"].min()), float(iv["end_s"].max())
        for kind in kinds:
            ev = events[events["event"] == kind]
            starts, ends = ev["start_s"].to_numpy(), ev["end_s"].to_numpy()
            any_hit = [
                bool(_overlaps(starts, ends, r.start_s - r.p99_ms / 1000.0, r.end_s).any()) for r in iv.itertuples()
            ]
            q = float(np.mean(any_hit))
            k = sum(kind in c for c in causes)
            p = float(binomtest(k, len(sp), q, alternative="greater").pvalue) if len(sp) and 0 < q < 1 else 1.0
            out.append(
                KindSummary(kind, len(sp), k, q, p, busy_share(events, kind, lo, hi), bool(len(sp) >= 3 and p < alpha))
            )
    return Attribution(typical, threshold, len(iv), sp, out, alpha)
