"""The rule every commentary sentence about a difference goes through, fed synthetic data with and
without a real difference."""

import numpy as np
import pytest

from perflab.stats.significance import compare_intervals, compare_samples


def _lognormal(seed, n, median):
    return np.random.default_rng(seed).lognormal(mean=np.log(median), sigma=0.4, size=n)


def test_a_real_threefold_difference_is_claimed_with_its_evidence():
    d = compare_samples(_lognormal(1, 30, 1.0), _lognormal(2, 30, 3.0))
    assert d.direction == "higher" and d.significant
    assert d.p_value < 0.001 and 2.0 < d.ratio < 4.5 and d.ratio_ci[0] > 1
    assert "n = 30 vs 30" in d.evidence and "Mann-Whitney" in d.evidence


def test_lower_is_reported_as_lower():
    assert compare_samples(_lognormal(3, 25, 5.0), _lognormal(4, 25, 1.0)).direction == "lower"


def test_same_distribution_claims_nothing_in_most_draws():
    # With alpha = 0.05 a few false claims in 200 null draws are expected; requiring the bootstrap
    # interval as well must keep them at or below the nominal rate.
    claims = sum(
        compare_samples(_lognormal(s, 20, 2.0), _lognormal(10_000 + s, 20, 2.0), n_boot=400).significant
        for s in range(200)
    )
    assert claims <= 10, claims


def test_too_few_samples_claim_nothing_even_when_far_apart():
    d = compare_samples([1.0, 1.1, 0.9], [10.0, 11.0, 12.0, 13.0, 12.5, 11.5])
    assert d.direction == "too few samples" and not d.significant
    assert d.evidence == "n = 3 vs 6"


def test_nan_values_are_dropped_before_counting():
    d = compare_samples([1, 2, np.nan, 3, 4, 5], [1, 2, 3, 4, 5, np.inf])
    assert (d.n_a, d.n_b) == (5, 5)


def test_identical_constant_samples_are_no_difference():
    d = compare_samples([2.0] * 8, [2.0] * 8)
    assert d.direction == "no difference detectable" and d.p_value == 1.0


def test_same_data_same_verdict():
    a, b = _lognormal(5, 15, 1.0), _lognormal(6, 15, 1.3)
    assert compare_samples(a, b) == compare_samples(a, b)


@pytest.mark.parametrize("kw", [{"alpha": 0}, {"alpha": 0.7}, {"min_n": 1}, {"n_boot": 10}])
def test_bad_settings_are_refused(kw):
    with pytest.raises(ValueError):
        compare_samples([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], **kw)


def test_intervals_differ_only_when_disjoint():
    assert compare_intervals((48_000, 52_000), (55_000, 58_000)).direction == "higher"
    assert compare_intervals((48_000, 52_000), (40_000, 45_000)).direction == "lower"
    overlap = compare_intervals((48_000, 52_000), (51_000, 56_000))
    assert overlap.direction == "no difference detectable" and "overlap" in overlap.evidence
    with pytest.raises(ValueError):
        compare_intervals((5, 1), (1, 2))


def test_an_open_interval_never_supports_a_difference_on_its_open_side():
    above = compare_intervals((31_000, None), (20_000, 25_000))  # a search that never failed
    assert (
        above.direction == "lower" and above.evidence == "intervals [31,000, open) and [20,000, 25,000] do not overlap"
    )
    assert compare_intervals((31_000, float("nan")), (40_000, 45_000)).direction == "no difference detectable"
    assert compare_intervals((None, 1_250), (2_000, 2_400)).direction == "higher"  # nothing passed: (0, 1250)
    with pytest.raises(ValueError, match=r"0 <= lo <= hi, got \(-1, 2\)"):
        compare_intervals((-1, 2), (1, 2))
