"""When may a sentence say that two measurements differ? Only when a stated test supports it.

Two kinds of evidence occur in the lab:

* **samples** -- e.g. the per-interval p99s of two runs, or of the intervals with and without a flush.
  :func:`compare_samples` claims a difference only when *both* a two-sided Mann-Whitney U test rejects
  "same distribution" at ``alpha`` *and* a bootstrap confidence interval of the ratio of medians
  excludes 1. It always reports ``n`` on each side, and with fewer than ``min_n`` samples on a side
  it claims nothing. Latency intervals of one run are not independent (a slow second tends to follow
  a slow second), which makes any such test somewhat optimistic; requiring the two criteria together
  and a minimum n keeps the claims conservative.
* **intervals** -- e.g. two breakpoints, each with the interval its repeated probes support.
  :func:`compare_intervals` calls them different only when the intervals do not overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from .. import fmt


class Direction(StrEnum):
    """What a comparison of B with A found."""

    HIGHER = "higher"
    LOWER = "lower"
    NONE = "no difference detectable"
    #: a paired comparison whose interval lies within its equivalence margin (:mod:`.paired`)
    EQUIVALENT = "no difference beyond the margin"
    TOO_FEW = "too few samples"
    NOT_TESTED = "not tested"

    @property
    def significant(self) -> bool:
        return self in (Direction.HIGHER, Direction.LOWER)


#: the test named in every sentence that claims a difference between samples
SAMPLE_TEST = "two-sided Mann-Whitney U test and a bootstrap interval of the ratio of medians"
ALPHA = 0.05
MIN_N = 5
N_BOOT = 2000


@dataclass(frozen=True)
class Difference:
    """The outcome of comparing sample ``a`` with sample ``b``.

    ``direction``: b compared with a (:class:`Direction`: higher, lower, no difference detectable, too few
    samples). ``ratio`` is median(b) / median(a); ``ratio_ci`` its bootstrap interval
    at ``1 - alpha``; ``p_value`` the Mann-Whitney U test's.
    """

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float
    ratio_ci: tuple[float, float]
    p_value: float
    alpha: float
    direction: Direction

    @property
    def significant(self) -> bool:
        return self.direction.significant

    @property
    def evidence(self) -> str:
        """'n = 12 vs 40, Mann-Whitney p = 0.003, ratio 2.10x (95% CI 1.40x-3.00x)'."""
        if self.direction is Direction.TOO_FEW:
            return f"n = {self.n_a} vs {self.n_b}"
        lo, hi = self.ratio_ci
        conf = f"{100 * (1 - self.alpha):g}%"
        return (
            f"n = {self.n_a} vs {self.n_b}, Mann-Whitney {fmt.p_value(self.p_value)}, ratio "
            f"{fmt.ratio(self.ratio)} ({conf} CI {fmt.ratio(lo)}-{fmt.ratio(hi)})"
        )

    def to_dict(self) -> dict:
        return {
            "n_a": self.n_a,
            "n_b": self.n_b,
            "median_a": self.median_a,
            "median_b": self.median_b,
            "ratio": self.ratio,
            "ratio_ci": list(self.ratio_ci),
            "p_value": self.p_value,
            "alpha": self.alpha,
            "direction": str(self.direction),
            "test": SAMPLE_TEST,
        }


def _clean(values) -> np.ndarray:
    a = np.asarray(list(values), dtype=float)
    return a[np.isfinite(a)]


def compare_samples(a, b, alpha: float = ALPHA, min_n: int = MIN_N, n_boot: int = N_BOOT, seed: int = 0) -> Difference:
    """Compare sample ``b`` with sample ``a`` (NaN/inf dropped). See the module docstring for the rule.

    The bootstrap resamples each side independently ``n_boot`` times with a fixed ``seed``, so the
    same data always give the same sentence.
    """
    if not (0 < alpha < 0.5):
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}")
    if not (isinstance(min_n, int) and min_n >= 2):
        raise ValueError(f"min_n must be an integer >= 2, got {min_n!r}")
    if not (isinstance(n_boot, int) and n_boot >= 100):
        raise ValueError(f"n_boot must be an integer >= 100, got {n_boot!r}")
    x, y = _clean(a), _clean(b)
    ma = float(np.median(x)) if len(x) else math.nan
    mb = float(np.median(y)) if len(y) else math.nan
    ratio = mb / ma if len(x) and len(y) and ma > 0 else (math.inf if len(y) and mb > 0 else math.nan)
    if len(x) < min_n or len(y) < min_n:
        return Difference(len(x), len(y), ma, mb, ratio, (math.nan, math.nan), math.nan, alpha, Direction.TOO_FEW)
    from scipy.stats import mannwhitneyu  # in here: scipy.stats takes ~0.9 s to import

    if np.ptp(np.concatenate([x, y])) == 0:
        p = 1.0  # every value equal: nothing to test (scipy would warn)
    else:
        p = float(mannwhitneyu(x, y, alternative="two-sided", method="auto").pvalue)
    rng = np.random.default_rng(seed)
    bx = np.median(rng.choice(x, size=(n_boot, len(x)), replace=True), axis=1)
    by = np.median(rng.choice(y, size=(n_boot, len(y)), replace=True), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(bx > 0, by / bx, np.where(by > 0, np.inf, 1.0))
    lo, hi = (float(v) for v in np.quantile(ratios, [alpha / 2, 1 - alpha / 2]))
    if p < alpha and lo > 1:
        direction = Direction.HIGHER
    elif p < alpha and hi < 1:
        direction = Direction.LOWER
    else:
        direction = Direction.NONE
    return Difference(len(x), len(y), ma, mb, ratio, (lo, hi), p, alpha, direction)


@dataclass(frozen=True)
class IntervalComparison:
    """Two estimates with intervals: ``direction`` higher or lower (b compared with a) only when the
    intervals are disjoint, else no difference detectable."""

    a: tuple[float, float]
    b: tuple[float, float]
    direction: Direction

    @property
    def significant(self) -> bool:
        return self.direction.significant

    @property
    def evidence(self) -> str:
        rel = "do not overlap" if self.significant else "overlap"
        return f"intervals {fmt.interval(self.a)} and {fmt.interval(self.b)} {rel}"


def _open_ended(iv):
    """``(lo, hi)`` with a missing end (``None`` or NaN, as a search that found no failing rate above, or
    no passing one below, reports it) as 0 or infinity."""
    if iv is None or len(iv) != 2:
        return iv
    missing = [v is None or (isinstance(v, float) and math.isnan(v)) for v in iv]
    return (0.0 if missing[0] else iv[0], math.inf if missing[1] else iv[1])


def compare_intervals(a: tuple[float, float], b: tuple[float, float]) -> IntervalComparison:
    """Compare estimate ``b`` with ``a`` by their intervals ``(lo, hi)``; an open end (``None``/NaN)
    reaches 0 or infinity, so it never supports a difference on that side."""
    given = {"a": a, "b": b}
    a, b = _open_ended(a), _open_ended(b)
    for name, iv in (("a", a), ("b", b)):
        if (
            iv is None
            or len(iv) != 2
            or not all(isinstance(v, (int, float)) and not math.isnan(v) for v in iv)
            or iv[0] > iv[1]
            or iv[0] < 0
        ):
            raise ValueError(f"{name} must be an interval (lo, hi) with 0 <= lo <= hi, got {given[name]!r}")
    if b[0] > a[1]:
        direction = Direction.HIGHER
    elif b[1] < a[0]:
        direction = Direction.LOWER
    else:
        direction = Direction.NONE
    return IntervalComparison(tuple(a), tuple(b), direction)


#: the test named in every sentence about a trend over time
TREND_TEST = "Kendall's tau test against time, with the Theil-Sen slope for the size of the change"


@dataclass(frozen=True)
class Trend:
    """Whether ``values`` (in time order) trend: ``p_value`` of Kendall's tau against time, ``change``
    the Theil-Sen slope times the span relative to the median (0.5: +50% over the run), ``n``."""

    n: int
    p_value: float
    change: float
    first: float
    last: float

    def significant(self, alpha: float = 0.01, min_change: float = 0.5) -> bool:
        return self.n >= MIN_N and self.p_value < alpha and abs(self.change) > min_change

    @property
    def evidence(self) -> str:
        return f"n = {self.n}, Kendall {fmt.p_value(self.p_value)}, Theil-Sen change {self.change:+.0%}"


def trend(values) -> Trend:
    """The trend of ``values`` taken at equal time steps (NaN dropped, positions kept)."""
    y = np.asarray(list(values), dtype=float)
    x = np.arange(len(y), dtype=float)
    keep = np.isfinite(y)
    x, y = x[keep], y[keep]
    n = len(y)
    if n < 3 or np.ptp(y) == 0:
        v = float(y[0]) if n else math.nan
        return Trend(n, 1.0, 0.0, v, v)
    from scipy.stats import kendalltau, theilslopes  # in here: scipy.stats takes ~0.9 s to import

    p = float(kendalltau(x, y).pvalue)
    slope = float(theilslopes(y, x)[0])
    med = float(np.median(y))
    change = slope * (x[-1] - x[0]) / med if med > 0 else math.inf
    k = max(1, n // 3)
    return Trend(n, p, change, float(np.median(y[:k])), float(np.median(y[-k:])))
