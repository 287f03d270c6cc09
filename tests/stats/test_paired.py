"""The paired verdict and its stop rule, fed synthetic pairs with and without a real difference; the rule's
false-claim bound worked out and simulated (seeded, so every run of this file sees the same draws)."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from perflab.stats import paired
from perflab.stats.paired import Conclusion, Family, Stop, StopRule, paired_ratio


def _pairs(seed, n, ratio=1.0, sigma=0.05, bias=1.0, heavy=False):
    """``n`` pairs: A's values log-normal around 2 ms, B's = A's x ratio x bias x noise (Student t with 2
    degrees of freedom when ``heavy``: the p99 of a probe on a machine that stalls)."""
    rng = np.random.default_rng(seed)
    a = 2.0 * np.exp(rng.normal(0, 0.3, n))
    noise = rng.standard_t(2, n) * sigma if heavy else rng.normal(0, sigma, n)
    return a, a * ratio * bias * np.exp(noise)


def test_the_family_splits_alpha_over_every_test_it_makes():
    f = Family()  # 64 pairs: looks 24, 32, 48, 64, the end, 3 metrics, pass/fail
    assert f.tests == 9 and f.level == pytest.approx(1e-6 / 9)
    assert f.first_claim == 32  # 2 / 2^24 = 1.19e-7 > 1.11e-7: 8 .. 24 cannot claim
    assert Family(max_pairs=32).tests == 7 and Family(max_pairs=32).first_claim == 24  # looks 24, 32 only
    assert Family(rates=2).level == pytest.approx(1e-6 / 16) and Family(rates=2).first_claim == 32
    assert Family(max_pairs=16).first_claim > 16  # too few pairs for any claim: the API warns
    fast = Family(alpha=1e-3)  # a looser alpha claims earlier: looks 16 .. 64 can
    assert fast.tests == 10 and fast.first_claim == 16 and 2 / 2**16 <= fast.level
    assert paired.min_pairs_for(0.05) == 6 and paired.min_pairs_for(2 / 2**24) == 24
    for bad, msg in ((dict(alpha=0), "alpha"), (dict(max_pairs=200), "max_pairs"), (dict(rates=0), "rates")):
        with pytest.raises(ValueError, match=msg):
            Family(**bad)


def test_a_real_difference_is_claimed_with_its_method_n_interval_and_p():
    a, b = _pairs(1, 25, ratio=0.8)
    r = paired_ratio(a, b, "p99", level=Family().level)
    assert r.conclusion is Conclusion.DIFFERENT and r.direction == "lower" and r.significant
    assert 0.75 < r.ratio < 0.85 and r.ci[0] < 0.8 < r.ci[1] and r.ci[1] < 1
    assert r.p_value == pytest.approx(2 / 2**25)  # every pair agrees: the exact test's smallest p


def test_the_same_difference_is_not_claimed_without_a_look_or_below_the_first_claim():
    a, b = _pairs(1, 24, ratio=0.8)
    assert paired_ratio(a, b, level=None).conclusion is Conclusion.UNDECIDED  # not a look
    a, b = _pairs(1, 22, ratio=0.8)
    r = paired_ratio(a, b, level=Family().level)  # 22 pairs cannot reach 1.11e-7
    assert r.conclusion is Conclusion.UNDECIDED


def test_identical_sides_conclude_no_difference_beyond_the_margin():
    a, b = _pairs(2, 8, sigma=0.01)
    r = paired_ratio(a, b, "p50", level=Family().level)
    assert r.conclusion is Conclusion.EQUIVALENT and r.direction == "no difference beyond the margin"


def test_a_small_persistent_difference_inside_the_margin_is_never_a_claim():
    # two JVMs of one configuration may stay 3% apart: the interval excludes 1 but the ratio is inside ±5%
    a, b = _pairs(3, 64, bias=1.03, sigma=0.01)
    r = paired_ratio(a, b, level=0.01)
    assert r.ci[0] > 1 and r.conclusion is not Conclusion.DIFFERENT


def test_noise_leaves_it_undecided_and_says_no_difference_detectable():
    a, b = _pairs(4, 24, sigma=0.6, heavy=True)
    r = paired_ratio(a, b, level=Family().level)
    assert r.conclusion is Conclusion.UNDECIDED and r.ci[0] < 1 < r.ci[1]


def test_too_few_pairs_and_missing_values():
    r = paired_ratio([1, 2, 3], [1, 2, 3])
    assert r.conclusion is Conclusion.TOO_FEW
    a, b = _pairs(5, 10)
    a[0], b[1] = math.nan, 0.0  # a pair without a value is left out, not guessed
    assert paired_ratio(a, b, min_pairs=2).n == 8
    with pytest.raises(ValueError, match="one value per pair"):
        paired_ratio([1, 2], [1])


def test_the_wilcoxon_p_is_exact_with_ties_and_zeros():
    d = np.array([0.0] + [0.1] * 23)  # one zero (dropped), 23 equal positive log-ratios
    assert paired._wilcoxon_p(d) == pytest.approx(2 / 2**23)
    assert paired._wilcoxon_p(np.zeros(10)) == 1.0


def test_pass_fail_uses_the_discordant_pairs():
    p = paired.pass_fail([True] * 25, [False] * 25, Family().level)
    assert p.conclusion is Conclusion.DIFFERENT and p.direction == "lower" and p.a_only == 25
    q = paired.pass_fail([True, None, False, True], [True, True, False, False], Family().level)
    assert q.n == 3 and q.conclusion is Conclusion.UNDECIDED and q.a_only == 1  # None: an inconclusive probe


def test_the_stop_rule_stops_for_the_reason_it_gives():
    fam = Family(max_pairs=32)
    rule = StopRule(fam, "p50")
    a, b = _pairs(6, 32, sigma=0.01)
    r, stop = rule.check(a[:8], b[:8], 8)
    assert stop is Stop.EQUIVALENT
    rule = StopRule(fam, "p50")
    a, b = _pairs(7, 32, ratio=1.25, sigma=0.01)
    seen = [rule.check(a[:n], b[:n], n)[1] for n in range(8, 33, 2)]
    assert seen.index(Stop.DIFFERENT) == (24 - 8) // 2 and 24 in rule.looks_done  # the first look that can claim
    rule = StopRule(fam, "p99")
    a, b = _pairs(8, 32, sigma=0.8, heavy=True)
    assert rule.check(a[:10], b[:10], 10, out_of_time=True)[1] is Stop.BUDGET
    assert rule.check(a, b, 32)[1] is Stop.MAX_PAIRS
    with pytest.raises(ValueError, match="metric"):
        StopRule(fam, "p42")


def test_the_looks_are_exact_tests_and_their_false_claims_stay_within_the_bonferroni_bound():
    """The bound behind the default alpha, checked where it can be seen: at a per-test level of 0.005 the
    looks 24, 32, 48, 64 of 20,000 null sequences (any symmetric noise: ranks and signs are all the test
    sees) claim at most 4 x 0.005, allowing for the simulation's own error (binomial, 1e-6 tail)."""
    level, looks = 0.005, paired.looks(64)
    share = paired.sequential_false_claims(level, looks, sequences=20_000, seed=11)
    bound = len(looks) * level
    allowed = binom.ppf(1 - 1e-6, 20_000, bound) / 20_000
    assert 0 < share <= allowed, (share, bound)
    # the first look alone is an exact test: its size is at most the level
    single = paired.sequential_false_claims(level, (24,), sequences=20_000, seed=12)
    assert single <= binom.ppf(1 - 1e-6, 20_000, level) / 20_000


def test_the_whole_rule_on_identical_sides_claims_nothing_and_on_known_truth_finds_it():
    """40 seeded A/A sequences with heavy-tailed noise and a persistent 2% difference between the two
    processes (inside the margin): at the default alpha a chance claim has probability <= 1e-6 per
    comparison (4e-5 for all 40), so any claim would be a defect of the rule. 40 sequences with B at
    0.8x A: every one claims it at the first look that can (n = 32), and the 95% interval holds 0.8 at least as
    often as a 95% interval would with a 1e-6 tail."""
    fam = Family(max_pairs=64)
    for seed in range(40):
        a, b = _pairs(100 + seed, 64, bias=1.02, sigma=0.3, heavy=True)
        rule = StopRule(fam, "p99")
        for n in range(8, 65, 2):
            r, stop = rule.check(a[:n], b[:n], n)
            if stop:
                break
        assert stop in (Stop.EQUIVALENT, Stop.MAX_PAIRS), (seed, r)
    hits = 0
    for seed in range(40):
        a, b = _pairs(1000 + seed, 64, ratio=0.8, sigma=0.05)
        rule = StopRule(fam, "p99")
        for n in range(8, 65, 2):
            r, stop = rule.check(a[:n], b[:n], n)
            if stop:
                break
        assert stop is Stop.DIFFERENT and r.n == 32 and r.direction == "lower", (seed, r)
        hits += r.ci[0] <= 0.8 <= r.ci[1]
    assert hits >= binom.ppf(1e-6, 40, 0.95), hits


def test_interval_ratio_of_two_breakpoints():
    r = paired.interval_ratio(1990, (1900, 2070), 1600, (1500, 1660))
    assert r.conclusion is Conclusion.DIFFERENT and r.interval[0] < 0.8 < r.interval[1]
    same = paired.interval_ratio(2000, (1950, 2050), 2000, (1960, 2040))
    assert same.conclusion is Conclusion.EQUIVALENT
    overlap = paired.interval_ratio(2000, (1800, 2200), 1900, (1700, 2100))
    assert overlap.conclusion is Conclusion.UNDECIDED
    open_end = paired.interval_ratio(2000, (1900, None), 1000, (950, 1050))
    assert open_end.interval[0] == 0 and open_end.conclusion is Conclusion.DIFFERENT
    none = paired.interval_ratio(2000, (1900, 2100), None, (None, 100))
    assert none.conclusion is Conclusion.TOO_FEW


def test_a_paired_difference_claims_only_where_the_test_reaches_the_level():
    """Microseconds per request in one category, pair by pair: a real 3 us more on B is claimed with its
    interval; identical sides (differences symmetric about 0) and a category both sides spend nothing in are
    not; the categories count in the family's tests."""
    rng = np.random.default_rng(21)
    a = rng.normal(10, 1, 32)
    d = paired.paired_difference(a, a + 3 + rng.normal(0, 0.5, 32), "storage", Family(extra=19).level)
    assert d.conclusion is Conclusion.DIFFERENT and d.direction == "higher" and d.ci[0] < 3 < d.ci[1]
    same = paired.paired_difference(a, a + rng.normal(0, 1, 32), "storage", Family(extra=19).level)
    assert same.conclusion is Conclusion.UNDECIDED and same.ci[0] < 0 < same.ci[1]
    zeros = paired.paired_difference(np.zeros(16), np.zeros(16), "GC", 1e-3)
    assert zeros.conclusion is Conclusion.UNDECIDED and zeros.p_value == 1.0
    assert paired.paired_difference([1.0, math.nan], [2.0, 3.0], "x").conclusion is Conclusion.TOO_FEW
    assert Family(extra=19).tests == 27 and Family(extra=19).to_dict()["extra"] == 19  # looks 32, 48, 64, the end,
    # 3 other metrics, pass/fail, 19 categories: the lower level leaves 24 pairs too few
    with pytest.raises(ValueError, match="extra"):
        Family(extra=-1)


def test_a_regression_check_gives_half_its_alpha_to_the_sequential_test():
    f = Family(alpha=1e-3, sequential=True)  # gate and bisect: 64 pairs, alpha 1e-3, the not-worse stop
    assert f.sequential_level == pytest.approx(5e-4) and f.level == pytest.approx(5e-4 / f.tests)
    # the looks keep their first claim (16: 2 / 2^16 <= 5e-5); the sequential test can claim at 12
    assert f.tests == 10 and 2 / 2**16 <= f.level and f.first_claim == 12
    assert Family(alpha=1e-3).sequential_level is None and Family(alpha=1e-3).first_claim == 16
    assert Family(alpha=1e-3, rates=2, sequential=True).sequential_level == pytest.approx(2.5e-4)
    # each pair B slower beyond the margin counts log(2 p1), each other one log(2 (1 - p1))
    d = np.log([1.3] * 10 + [1.01] * 2)
    assert paired.sprt_log_lr(d, 0.05) == pytest.approx(10 * math.log(1.9) + 2 * math.log(0.1))
    with pytest.raises(ValueError, match="p1"):
        paired.sprt_log_lr(d, 0.05, p1=0.5)


def _run(rule, a, b):
    """The rule after every block of two pairs, as a comparison takes it; its last verdict and stop."""
    for n in range(2, len(a) + 1, 2):
        r, stop = rule.check(a[:n], b[:n], n)
        if stop:
            return r, stop
    return r, stop


def test_a_clear_regression_stops_at_12_pairs_where_the_looks_need_16():
    """B at 1.3x A's CPU per request (5% noise a probe): a regression check's sequential test claims it after the
    sixth block, in every one of 20 seeded sequences, where the same rule without it claims at its first look
    (16 pairs); the verdict names the test it rests on and its anytime-valid p."""
    for seed in range(20):
        a, b = _pairs(2000 + seed, 64, ratio=1.3, sigma=0.05)
        r, stop = _run(StopRule(Family(1e-3, sequential=True), "cpu", not_worse=True), a, b)
        assert stop is Stop.DIFFERENT and r.n == 12 and r.direction == "higher", (seed, r)
        assert r.test == paired.SEQUENTIAL_TEST and r.p_value <= r.level == pytest.approx(5e-4), r
        assert 1.2 < r.ratio < 1.4 and r.ci[0] > 1.05
        looks_only, stop = _run(StopRule(Family(1e-3), "cpu", not_worse=True), a, b)
        assert stop is Stop.DIFFERENT and looks_only.n == 16 and looks_only.test == paired.PAIRED_TEST


def test_the_sequential_test_never_alarms_between_identical_sides():
    """60 seeded A/A sequences (heavy-tailed noise; half of them with B 2% slower, inside the margin, as two JVMs
    may be): a regression check claims nothing; each ends no worse or at max_pairs. Then the bound itself: 20,000
    null sequences of 64 pairs taken after every pair, at the margin's hardest case (margin 0: B beyond it in half
    the pairs exactly), at level 0.01: the share that ever reaches 1 / level stays within it (Ville's inequality;
    the simulation's own error allowed for, a 1e-6 binomial tail)."""
    for seed in range(60):
        a, b = _pairs(3000 + seed, 64, bias=1.02 if seed % 2 else 1.0, sigma=0.3, heavy=True)
        r, stop = _run(StopRule(Family(1e-3, sequential=True), "cpu", not_worse=True), a, b)
        assert stop in (Stop.NOT_WORSE, Stop.EQUIVALENT, Stop.MAX_PAIRS), (seed, r)
    rng = np.random.default_rng(13)
    d = rng.standard_t(2, (20_000, 64))
    steps = np.where(d > 0, math.log(2 * paired.SPRT_P1), math.log(2 * (1 - paired.SPRT_P1)))
    crossed = (np.cumsum(steps, axis=1) >= math.log(1 / 0.01)).any(axis=1)
    assert crossed.mean() <= binom.ppf(1 - 1e-6, 20_000, 0.01) / 20_000, crossed.mean()
    # and the per-pair sums are what sprt_log_lr gives
    assert np.cumsum(steps[0])[-1] == pytest.approx(paired.sprt_log_lr(d[0], 0.0))
