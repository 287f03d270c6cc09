"""Change points across commits (perflab.stats.changepoints, ruptures' PELT) on synthetic series with a fixed
seed: a step of known size is found at its index, a flat noisy series gives none. The margins cannot be missed:
the steps are 8 to 20 times the noise, the flat series' noise a quarter of the smallest step worth a candidate."""

import math

import numpy as np
import pytest

from perflab.stats.changepoints import MIN_POINTS, change_points


def _series(n: int, steps: dict[int, float], noise: float, seed: int = 7) -> list[float]:
    rng = np.random.default_rng(seed)
    level, out = 20.0, []
    for i in range(n):
        level *= steps.get(i, 1.0)
        out.append(level * math.exp(rng.normal(0, noise)))
    return out


@pytest.mark.parametrize("n,at", [(6, 3), (6, 5), (6, 1), (16, 11), (40, 20)])
def test_a_step_is_found_at_its_commit(n, at):
    found = change_points(_series(n, {at: 1.5}, 0.02))
    assert found.indices == [at] and found.steps[0] == pytest.approx(1.5, rel=0.06)


def test_two_steps_and_an_improvement():
    found = change_points(_series(20, {6: 1.4, 14: 0.6}, 0.015))
    assert found.indices == [6, 14] and found.steps[0] > 1.3 and found.steps[1] < 0.7


def test_a_flat_noisy_series_has_none():
    for seed in range(20):
        assert change_points(_series(12, {}, 0.02, seed)).indices == [], seed
    # a noisy machine: the spread of each point's repeats sets the noise
    noisy = _series(8, {}, 0.08, seed=3)
    assert change_points(noisy, spread=[0.08] * 8).indices == []


def test_a_step_within_the_smallest_change_worth_a_candidate_is_none():
    assert change_points(_series(10, {5: 1.03}, 0.001), min_change=0.05).indices == []
    assert change_points(_series(10, {5: 1.2}, 0.001), min_change=0.05).indices == [5]


def test_bad_input():
    with pytest.raises(ValueError, match=f"at least {MIN_POINTS} measured commits, got 3"):
        change_points([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="positive numbers"):
        change_points([1.0, 2.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="one per value"):
        change_points([1.0, 1.0, 1.0, 1.0], spread=[0.1])
