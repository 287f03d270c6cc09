"""Paired A/B statistics: B against A pair by pair, the test, the interval, and when to stop.

An interleaved comparison (:mod:`perflab.ab`) measures A and B side by side in balanced blocks
(A B B A, then B A A B) at the same offered rate; each adjacent A-B probe pair gives ``log(B / A)`` of a
metric (p50, p99, p99.9, and the server's CPU time per request: :data:`perflab.config.ab.METRIC`) and
whether each side passed the SLA. The slow phases of a shared machine (seconds at half speed: ``perflab
host``) fall on both probes of a pair and cancel in its ratio.

**The verdict** on one metric after ``n`` pairs (:func:`paired_ratio`), checked in this order:

1. *no difference beyond ±margin* (:attr:`Conclusion.EQUIVALENT`): the bootstrap 95% interval of the
   median ratio (pairs resampled, fixed seed) lies within ``[1 / (1 + margin), 1 + margin]``;
2. *different*: at a *look* (below) the two-sided exact Wilcoxon signed-rank test on the pairs'
   log-ratios has ``p <= level``, the interval excludes 1, and the median ratio itself lies outside the
   margin (two processes of one configuration may differ by a few percent for as long as they live:
   the margin is there so that such a difference is not reported as the change under test);
3. otherwise *no difference detectable* (:attr:`Conclusion.UNDECIDED`), with n and the interval.

**The stop rule** (:class:`StopRule`): after each block, stop as soon as (1) or (2) holds (never before
``min_pairs``), or when ``max_pairs`` pairs are measured, or when the time budget ends; the result says
which. A check for regressions (``not_worse``: ``perflab gate``, ``perflab bisect``) also stops once the
interval's upper end lies within the margin: B is no worse than A beyond it (every metric here is better
lower), whether or not it is better. The test is only consulted at the looks ``n = 8, 12, 16, 24, 32, 48, 64, 96, 128`` (those up
to ``max_pairs``) and once at the end; the interval is checked after every block (an *equivalent* stop
cannot make a false claim).

**A regression check stops a clear regression sooner** (``not_worse``, :attr:`Family.sequential`): beside the
looks, a sequential probability ratio test (Wald's, one-sided: :func:`sprt_log_lr`) is taken after every block
on the pairs' signs beyond the margin: each pair in which B is slower than A by more than the margin counts
``log(2 p1)``, each other pair ``log(2 (1 - p1))``, with ``p1 =`` :data:`SPRT_P1` (a clear regression: B slower
beyond the margin in nearly every pair). It claims B slower once the sum reaches ``log(1 / level)``. Between
identical sides (or whenever B is slower beyond the margin in at most half of the pairs, pair by pair), the
ratio is a nonnegative supermartingale of mean at most 1, so by Ville's inequality it ever reaches ``1 / level``
with probability at most ``level``, however often it is looked at and whatever the noise. It gets half of
``alpha`` (:data:`SEQUENTIAL_SHARE`), the looks and the tests at the end the other half, Bonferroni as above:
at ``alpha = 1e-3`` a regression that every pair shows is claimed at 12 pairs where the looks' first claim is at
16, and a smaller one (the signs alone too weak to tell) is still claimed by the looks.

**False claims.** When A and B are the same (pairs independent, each log-ratio symmetric about 0: what
interleaving two identical servers gives), each exact Wilcoxon test rejects with probability at most its
level whatever the distribution of the noise, heavy tails and ties included. A comparison at ``rates``
rates makes at most ``rates x (looks + 1 + 4)`` tests that can reject (the primary metric at every look
with enough pairs to reach the level, and at the end; the three other metrics and pass/fail once, at the
end), and each gets ``level = alpha / tests``. So the
probability that a comparison of identical sides claims *any* difference is at most ``alpha`` (Bonferroni;
the interval and margin conditions only lower it). The default ``alpha = 1e-6`` makes one false claim in
a million comparisons the worst case, and two in twenty comparisons a ~2e-10 event. The price is a
minimum of pairs for any claim: an exact signed-rank test cannot go below ``2 / 2^n``, so with the
default 64 pairs (9 tests: level 1.11e-7) a claim needs 25 pairs that all agree, at the look at 32
(:meth:`Family.first_claim`; ``alpha = 1e-3``: 16 pairs).
:func:`sequential_false_claims` simulates the looks to show how conservative the bound is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np

from ..config.ab import ALPHA, LOOKS, MARGIN, MAX_PAIRS, METRICS, MIN_PAIRS
from .methods import Method
from .significance import Direction

#: the test named in every paired verdict
PAIRED_TEST = "two-sided exact Wilcoxon signed-rank test on the pairs' log-ratios"
PASS_TEST = "two-sided exact McNemar test (binomial on the discordant pairs)"
CONFIDENCE = 0.95
N_BOOT = 2000
#: the test named in a verdict the sequential test of a regression check claimed
SEQUENTIAL_TEST = "one-sided sequential probability ratio test on the pairs' signs beyond the margin (Ville's bound)"
#: the share of a regression check's alpha its sequential test gets (the looks and the end share the rest)
SEQUENTIAL_SHARE = 0.5
#: the sequential test's alternative: B slower than A beyond the margin in this share of the pairs
SPRT_P1 = 0.95


class Conclusion(StrEnum):
    """What a paired comparison of one metric concluded."""

    DIFFERENT = "different"
    EQUIVALENT = "equivalent"
    UNDECIDED = "undecided"
    TOO_FEW = "too few pairs"


# --- the family of tests one comparison makes ------------------------------------------------------


def looks(max_pairs: int) -> tuple[int, ...]:
    """The scheduled looks up to ``max_pairs``."""
    return tuple(n for n in LOOKS if n <= max_pairs)


def min_pairs_for(level: float) -> int:
    """The fewest pairs with which an exact two-sided signed-rank test can reach ``level`` (all pairs
    agreeing: ``p = 2 / 2^n``)."""
    return max(1, math.ceil(1 - math.log2(level)))


@dataclass(frozen=True)
class Family:
    """The tests of one comparison and the level each gets (see the module docstring)."""

    alpha: float = ALPHA
    max_pairs: int = 64
    rates: int = 1
    #: tests made once at the end besides the metrics and pass/fail, per rate (a profiled comparison's
    #: categories: :func:`paired_difference`)
    extra: int = 0
    #: a regression check: the primary metric's sequential test gets :data:`SEQUENTIAL_SHARE` of alpha
    sequential: bool = False

    def __post_init__(self):
        if not (0 < self.alpha <= 0.05):
            raise ValueError(f"alpha: must be within (0, 0.05], got {self.alpha!r}")
        if not (isinstance(self.max_pairs, int) and 2 <= self.max_pairs <= MAX_PAIRS):
            raise ValueError(f"max_pairs: must be an integer within [2, {MAX_PAIRS}], got {self.max_pairs!r}")
        if not (isinstance(self.rates, int) and self.rates >= 1):
            raise ValueError(f"rates: must be an integer >= 1, got {self.rates!r}")
        if not (isinstance(self.extra, int) and self.extra >= 0):
            raise ValueError(f"extra: must be an integer >= 0, got {self.extra!r}")

    @property
    def tests_per_rate(self) -> int:
        """The looks that can claim, the final look, the other metrics once each and pass/fail. A look with
        too few pairs to reach the level never rejects, so it adds nothing to the false-claim probability:
        the looks counted are the fewest last ones such that every look left out has too few pairs for the
        level they give, ``alpha / (rates x (counted + 1 + metrics))`` (counting a look that cannot reject
        only lowers the level)."""
        scheduled = looks(self.max_pairs)
        end = 1 + len(METRICS) + self.extra  # the final look, the other metrics, pass/fail, the extra tests
        for count in range(len(scheduled) + 1):
            need = min_pairs_for(self.shared_alpha / (self.rates * (count + end)))
            if all(n < need for n in scheduled[: len(scheduled) - count]):
                return count + end
        return len(scheduled) + end

    @property
    def tests(self) -> int:
        return self.rates * self.tests_per_rate

    @property
    def shared_alpha(self) -> float:
        """What the looks and the tests at the end share: alpha, less the sequential test's share."""
        return self.alpha * (1 - SEQUENTIAL_SHARE) if self.sequential else self.alpha

    @property
    def level(self) -> float:
        """The level of each test but the sequential one: ``alpha / tests`` (of the shared part)."""
        return self.shared_alpha / self.tests

    @property
    def sequential_level(self) -> float | None:
        """The sequential test's level at each rate (``None``: not a regression check)."""
        return self.alpha * SEQUENTIAL_SHARE / self.rates if self.sequential else None

    @property
    def first_claim(self) -> int:
        """The fewest pairs with which the rule can claim a difference (its first look at or above
        :func:`min_pairs_for` its level, or the end; sooner where the sequential test can)."""
        need = min_pairs_for(self.level)
        first = next((n for n in looks(self.max_pairs) if n >= need), max(need, self.max_pairs))
        if self.sequential:
            first = min(first, math.ceil(math.log(1 / self.sequential_level) / math.log(2 * SPRT_P1)))
        return first

    def to_dict(self) -> dict:
        return {
            "alpha": self.alpha,
            "tests": self.tests,
            "level": self.level,
            "looks": list(looks(self.max_pairs)),
            "first_claim": self.first_claim,
            "extra": self.extra,
            "sequential_level": self.sequential_level,
        }


# --- one metric ------------------------------------------------------------------------------------


def log_ratios(a, b) -> np.ndarray:
    """``log(b / a)`` of the pairs where both values are finite and positive."""
    x, y = np.asarray(list(a), dtype=float), np.asarray(list(b), dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"a and b must hold one value per pair each, got {len(x)} and {len(y)}")
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return np.log(y[ok]) - np.log(x[ok])


def _wilcoxon_p(d: np.ndarray) -> float:
    if not np.any(d != 0):
        return 1.0  # every pair equal: nothing to test (scipy would warn)
    from scipy.stats import wilcoxon  # in here: scipy.stats takes ~0.9 s to import

    # exact: the sign-flip distribution of the ranks (ties and zeros included), never a normal tail
    return float(wilcoxon(d, zero_method="wilcox", method="exact").pvalue)


def _bootstrap_ci(d: np.ndarray, seed: int, n_boot: int, confidence: float) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    meds = np.median(rng.choice(d, size=(n_boot, len(d)), replace=True), axis=1)
    q = (1 - confidence) / 2
    lo, hi = np.quantile(meds, [q, 1 - q])
    return float(np.exp(lo)), float(np.exp(hi))


def band(margin: float) -> tuple[float, float]:
    """The ratios within ``±margin`` (symmetric on the log scale: 1/1.05 .. 1.05)."""
    return 1 / (1 + margin), 1 + margin


@dataclass(frozen=True)
class PairedRatio:
    """The paired verdict on one ``metric`` after ``n`` pairs: the median ratio B/A, its bootstrap
    interval ``ci``, the Wilcoxon ``p_value``, the ``level`` it was held against (``None``: not a look, no
    claim possible), the equivalence ``margin``, the :class:`Conclusion` and the direction of B against A."""

    metric: str
    n: int
    ratio: float
    ci: tuple[float, float]
    p_value: float
    level: float | None
    margin: float
    conclusion: Conclusion
    direction: Direction
    confidence: float = CONFIDENCE
    method: Method = Method.INTERLEAVED_PAIRS
    min_pairs: int = MIN_PAIRS
    test: str = PAIRED_TEST

    @property
    def significant(self) -> bool:
        return self.conclusion is Conclusion.DIFFERENT

    def to_dict(self) -> dict:
        return {
            "metric": self.metric,
            "n": self.n,
            "ratio": self.ratio,
            "ci": list(self.ci),
            "p_value": self.p_value,
            "level": self.level,
            "margin": self.margin,
            "conclusion": str(self.conclusion),
            "direction": str(self.direction),
            "confidence": self.confidence,
            "method": str(self.method),
            "test": self.test,
        }


def paired_ratio(
    a,
    b,
    metric: str = "p99",
    level: float | None = None,
    margin: float = MARGIN,
    min_pairs: int = MIN_PAIRS,
    seed: int = 0,
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
) -> PairedRatio:
    """The verdict on ``metric`` from its values in each pair (``a[i]``, ``b[i]``; pairs with a missing
    or non-positive value are left out). ``level``: the test's level at this look, ``None`` when it is
    not a look (then only *equivalent* or *undecided* can come out)."""
    if not (0 < margin < 1):
        raise ValueError(f"margin: must be within (0, 1), got {margin!r}")
    if level is not None and not (0 < level < 1):
        raise ValueError(f"level: must be within (0, 1), got {level!r}")
    d = log_ratios(a, b)
    n = len(d)
    if n < min_pairs:
        ratio = float(np.exp(np.median(d))) if n else math.nan
        return PairedRatio(
            metric,
            n,
            ratio,
            (math.nan, math.nan),
            math.nan,
            level,
            margin,
            Conclusion.TOO_FEW,
            Direction.TOO_FEW,
            confidence,
            min_pairs=min_pairs,
        )
    ratio = float(np.exp(np.median(d)))
    lo, hi = _bootstrap_ci(d, seed, n_boot, confidence)
    p = _wilcoxon_p(d)
    inner_lo, inner_hi = band(margin)
    if inner_lo <= lo and hi <= inner_hi:
        conclusion, direction = Conclusion.EQUIVALENT, Direction.EQUIVALENT
    elif level is not None and p <= level and (lo > 1 or hi < 1) and not (inner_lo <= ratio <= inner_hi):
        conclusion = Conclusion.DIFFERENT
        direction = Direction.HIGHER if ratio > 1 else Direction.LOWER
    else:
        conclusion, direction = Conclusion.UNDECIDED, Direction.NONE
    return PairedRatio(
        metric, n, ratio, (lo, hi), p, level, margin, conclusion, direction, confidence, min_pairs=min_pairs
    )


# --- a difference per pair (CPU per request in one category) ------------------------------------------


@dataclass(frozen=True)
class PairedDifference:
    """B - A of a quantity that may be zero on one side (the CPU per request a category takes), pair by pair:
    the median difference, its bootstrap interval ``ci``, the exact Wilcoxon signed-rank test's ``p_value``
    against ``level``; *different* only where the test reaches the level and the interval excludes 0."""

    what: str
    n: int
    difference: float
    ci: tuple[float, float]
    p_value: float
    level: float | None
    conclusion: Conclusion
    direction: Direction
    a_median: float
    b_median: float
    confidence: float = CONFIDENCE

    @property
    def significant(self) -> bool:
        return self.conclusion is Conclusion.DIFFERENT

    def to_dict(self) -> dict:
        return {
            "what": self.what,
            "n": self.n,
            "difference": self.difference,
            "ci": list(self.ci),
            "p_value": self.p_value,
            "level": self.level,
            "conclusion": str(self.conclusion),
            "direction": str(self.direction),
            "a_median": self.a_median,
            "b_median": self.b_median,
            "confidence": self.confidence,
            "method": str(Method.INTERLEAVED_PAIRS),
            "test": "two-sided exact Wilcoxon signed-rank test on the pairs' differences",
        }


def paired_difference(
    a,
    b,
    what: str,
    level: float | None = None,
    min_pairs: int = MIN_PAIRS,
    seed: int = 0,
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
) -> PairedDifference:
    """``b[i] - a[i]`` over the pairs where both are finite (between identical sides the differences are
    symmetric about 0, so the exact test holds its level whatever their distribution)."""
    x, y = np.asarray(list(a), dtype=float), np.asarray(list(b), dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"a and b must hold one value per pair each, got {len(x)} and {len(y)}")
    ok = np.isfinite(x) & np.isfinite(y)
    d, x, y = y[ok] - x[ok], x[ok], y[ok]
    n = len(d)
    med = float(np.median(d)) if n else math.nan
    medians = (float(np.median(x)) if n else math.nan, float(np.median(y)) if n else math.nan)
    if n < min_pairs:
        return PairedDifference(
            what,
            n,
            med,
            (math.nan, math.nan),
            math.nan,
            level,
            Conclusion.TOO_FEW,
            Direction.TOO_FEW,
            *medians,
            confidence,
        )
    rng = np.random.default_rng(seed)
    boot = np.median(rng.choice(d, size=(n_boot, n), replace=True), axis=1)
    q = (1 - confidence) / 2
    lo, hi = (float(v) for v in np.quantile(boot, [q, 1 - q]))
    p = _wilcoxon_p(d)
    if level is not None and p <= level and (lo > 0 or hi < 0):
        conclusion, direction = Conclusion.DIFFERENT, Direction.HIGHER if med > 0 else Direction.LOWER
    else:
        conclusion, direction = Conclusion.UNDECIDED, Direction.NONE
    return PairedDifference(what, n, med, (lo, hi), p, level, conclusion, direction, *medians, confidence)


# --- pass/fail at the SLA --------------------------------------------------------------------------


@dataclass(frozen=True)
class PassFail:
    """Pass/fail at the SLA in the pairs where both probes were conclusive: how many each side passed,
    the discordant pairs and the exact McNemar test's ``p_value`` against ``level``."""

    n: int
    a_passed: int
    b_passed: int
    a_only: int
    b_only: int
    p_value: float
    level: float | None
    conclusion: Conclusion
    direction: Direction

    def to_dict(self) -> dict:
        return {
            "metric": "pass",
            "n": self.n,
            "a_passed": self.a_passed,
            "b_passed": self.b_passed,
            "a_only": self.a_only,
            "b_only": self.b_only,
            "p_value": self.p_value,
            "level": self.level,
            "conclusion": str(self.conclusion),
            "direction": str(self.direction),
            "method": str(Method.INTERLEAVED_PAIRS),
            "test": PASS_TEST,
        }


def pass_fail(a, b, level: float | None = None) -> PassFail:
    """Compare pass/fail per pair (``True``/``False``; ``None``, an inconclusive probe, drops the pair)."""
    pairs = [
        (bool(x), bool(y))
        for x, y in zip(a, b)
        if x is not None
        and y is not None
        and not (isinstance(x, float) and math.isnan(x))
        and not (isinstance(y, float) and math.isnan(y))
    ]
    n = len(pairs)
    a_only = sum(x and not y for x, y in pairs)
    b_only = sum(y and not x for x, y in pairs)
    if a_only + b_only == 0:
        p = 1.0
    else:
        from scipy.stats import binomtest  # in here: scipy.stats takes ~0.9 s to import

        p = float(binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue)
    if level is not None and p <= level:
        conclusion, direction = Conclusion.DIFFERENT, Direction.LOWER if a_only > b_only else Direction.HIGHER
    else:
        conclusion, direction = Conclusion.UNDECIDED, Direction.NONE
    return PassFail(
        n, sum(x for x, _ in pairs), sum(y for _, y in pairs), a_only, b_only, p, level, conclusion, direction
    )


# --- the sequential test of a regression check ----------------------------------------------------------


def sprt_log_lr(d, margin: float, p1: float = SPRT_P1) -> float:
    """The log likelihood ratio of Wald's test on the log-ratios ``d``: "B is slower than A beyond ``margin`` in a
    share ``p1`` of the pairs" against "in half of them" (see the module docstring)."""
    if not (0.5 < p1 < 1):
        raise ValueError(f"p1: must be within (0.5, 1), got {p1!r}")
    d = np.asarray(d, dtype=float)
    over = int(np.sum(d > math.log1p(margin)))
    return over * math.log(2 * p1) + (len(d) - over) * math.log(2 * (1 - p1))


def sequential_claim(r: PairedRatio, d, level: float) -> PairedRatio | None:
    """The verdict ``r`` as a claim that B is slower, where the sequential test at ``level`` makes one on the
    log-ratios ``d`` (with the interval above 1 and the median ratio beyond the margin, as a look's claim needs);
    ``None`` where it does not. Its p-value is the test's own (``1 /`` the likelihood ratio: anytime-valid)."""
    llr = sprt_log_lr(d, r.margin)
    if llr < math.log(1 / level) or not (r.ci[0] > 1 and r.ratio > band(r.margin)[1]):
        return None
    return replace(
        r,
        p_value=min(1.0, math.exp(-llr)),
        level=level,
        conclusion=Conclusion.DIFFERENT,
        direction=Direction.HIGHER,
        test=SEQUENTIAL_TEST,
    )


# --- the stop rule ---------------------------------------------------------------------------------


class Stop(StrEnum):
    """Why a comparison stopped."""

    EQUIVALENT = "equivalent"
    NOT_WORSE = "not-worse"
    DIFFERENT = "different"
    MAX_PAIRS = "max-pairs"
    BUDGET = "budget"


@dataclass
class StopRule:
    """The sequential rule for the primary ``metric`` (see the module docstring): call :meth:`check` after
    every block with the values so far; it returns the verdict and, once it is time to stop, why."""

    family: Family
    metric: str = "p99"
    margin: float = MARGIN
    min_pairs: int = MIN_PAIRS
    seed: int = 0
    not_worse: bool = False
    _next_look: int = field(default=0, repr=False)
    looks_done: list = field(default_factory=list)

    def __post_init__(self):
        if self.metric not in METRICS:
            raise ValueError(f"metric: expected one of {', '.join(METRICS)}, got {self.metric!r}")
        if not (isinstance(self.min_pairs, int) and 2 <= self.min_pairs <= self.family.max_pairs):
            raise ValueError(
                f"min_pairs: must be an integer within [2, max_pairs={self.family.max_pairs}], got {self.min_pairs!r}"
            )

    def check(self, a, b, measured: int, out_of_time: bool = False) -> tuple[PairedRatio, Stop | None]:
        """``a``, ``b``: the metric per pair so far (unusable pairs as NaN); ``measured``: the pairs measured
        (usable or not); ``out_of_time``: the budget has ended."""
        n = len(log_ratios(a, b))
        final = out_of_time or measured >= self.family.max_pairs
        scheduled = looks(self.family.max_pairs)
        look = False
        while self._next_look < len(scheduled) and n >= scheduled[self._next_look]:
            self._next_look += 1  # pairs left out can skip a look; it is then simply not taken
            look = True
        look = look or final
        if look:
            self.looks_done.append(n)
        r = paired_ratio(a, b, self.metric, self.family.level if look else None, self.margin, self.min_pairs, self.seed)
        if self.family.sequential and r.conclusion is Conclusion.UNDECIDED:
            r = sequential_claim(r, log_ratios(a, b), self.family.sequential_level) or r
        if r.conclusion is Conclusion.EQUIVALENT:
            return r, Stop.EQUIVALENT
        if r.conclusion is Conclusion.DIFFERENT:
            return r, Stop.DIFFERENT
        if self.not_worse and r.conclusion is not Conclusion.TOO_FEW and r.ci[1] <= band(self.margin)[1]:
            return r, Stop.NOT_WORSE
        if measured >= self.family.max_pairs:
            return r, Stop.MAX_PAIRS
        if out_of_time:
            return r, Stop.BUDGET
        return r, None


# --- how conservative the bound is -----------------------------------------------------------------


def _null_cdf(n: int) -> np.ndarray:
    """P(W+ <= w) for w = 0 .. n(n+1)/2 under the null (exact, by convolution)."""
    p = np.array([1.0])
    for k in range(1, n + 1):
        nxt = np.zeros(len(p) + k)
        nxt[: len(p)] += p / 2
        nxt[k:] += p / 2
        p = nxt
    return np.cumsum(p)


def critical_value(n: int, level: float) -> int:
    """The largest ``c`` with ``2 P(W+ <= c) <= level`` (``-1``: the test cannot reject with ``n`` pairs)."""
    cdf = _null_cdf(n)
    ok = np.nonzero(2 * cdf <= level)[0]
    return int(ok[-1]) if len(ok) else -1


def sequential_false_claims(level: float, at: tuple[int, ...], sequences: int = 20_000, seed: int = 0) -> float:
    """The share of null sequences (pairs exchangeable: log-ratios symmetric about 0, any continuous
    distribution, since ranks and signs are all the test sees) in which the exact two-sided signed-rank
    test rejects at ``level`` at any of the looks ``at``. The Bonferroni bound is ``len(at) x level``;
    consecutive looks share most of their pairs, so the simulated share is lower."""
    rng = np.random.default_rng(seed)
    d = rng.standard_normal((sequences, max(at)))
    hit = np.zeros(sequences, dtype=bool)
    for n in at:
        c = critical_value(n, level)
        if c < 0:
            continue
        x = d[:, :n]
        ranks = np.argsort(np.argsort(np.abs(x), axis=1), axis=1) + 1
        w_plus = (ranks * (x > 0)).sum(axis=1)
        w = np.minimum(w_plus, n * (n + 1) // 2 - w_plus)
        hit |= w <= c
    return float(hit.mean())


# --- two estimates with intervals (breakpoints of interleaved searches) -----------------------------


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


@dataclass(frozen=True)
class IntervalRatio:
    """B's estimate over A's (two breakpoints), with the interval their intervals allow: from B's lowest
    over A's highest to B's highest over A's lowest (an open end reaches 0 or infinity)."""

    what: str
    a: float | None
    a_interval: tuple
    b: float | None
    b_interval: tuple
    ratio: float | None
    interval: tuple[float, float]
    margin: float
    conclusion: Conclusion
    direction: Direction
    method: Method = Method.INTERLEAVED_SEARCHES

    @property
    def significant(self) -> bool:
        return self.conclusion is Conclusion.DIFFERENT

    def to_dict(self) -> dict:
        return {
            "metric": self.what,
            "a": self.a,
            "a_interval": list(self.a_interval),
            "b": self.b,
            "b_interval": list(self.b_interval),
            "ratio": self.ratio,
            "ci": list(self.interval),
            "margin": self.margin,
            "conclusion": str(self.conclusion),
            "direction": str(self.direction),
            "method": str(self.method),
            "test": "interval of the ratio from both intervals",
        }


def interval_ratio(
    a: float | None,
    a_interval,
    b: float | None,
    b_interval,
    margin: float = MARGIN,
    what: str = "breakpoint",
    method: Method = Method.INTERLEAVED_SEARCHES,
) -> IntervalRatio:
    """B against A by their intervals: *different* when the ratio's interval excludes 1 (the two intervals
    are disjoint) and the ratio lies outside ``±margin``; *no difference beyond ±margin* when the interval
    lies within it; otherwise *no difference detectable*."""
    a_lo, a_hi = (None, None) if not a_interval else a_interval
    b_lo, b_hi = (None, None) if not b_interval else b_interval
    lo = 0.0 if _missing(b_lo) or _missing(a_hi) or not a_hi else b_lo / a_hi
    hi = math.inf if _missing(b_hi) or _missing(a_lo) or not a_lo else b_hi / a_lo
    if _missing(a) or _missing(b) or not a:
        return IntervalRatio(
            what,
            a,
            (a_lo, a_hi),
            b,
            (b_lo, b_hi),
            None,
            (lo, hi),
            margin,
            Conclusion.TOO_FEW,
            Direction.NOT_TESTED,
            method,
        )
    ratio = b / a
    inner_lo, inner_hi = band(margin)
    if inner_lo <= lo and hi <= inner_hi:
        conclusion, direction = Conclusion.EQUIVALENT, Direction.EQUIVALENT
    elif (lo > 1 or hi < 1) and not (inner_lo <= ratio <= inner_hi):
        conclusion, direction = Conclusion.DIFFERENT, Direction.HIGHER if ratio > 1 else Direction.LOWER
    else:
        conclusion, direction = Conclusion.UNDECIDED, Direction.NONE
    return IntervalRatio(what, a, (a_lo, a_hi), b, (b_lo, b_hi), ratio, (lo, hi), margin, conclusion, direction, method)
