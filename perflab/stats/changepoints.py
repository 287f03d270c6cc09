"""Change points of a metric across commits: where a series of measurements (one value per commit, in commit
order) steps to another level, found by ``ruptures`` (PELT, an exact search of the penalised least-squares
segmentation), the one place perflab calls it.

Only candidates: each is checked by an interleaved comparison before anything is called a regression
(:mod:`perflab.regress.history`). What is searched and how much a change must explain, once:

* the series is taken in logs, so a step is a ratio (CPU per request 1.2x is the same step at 20 us as at 200 us);
* its noise ``sigma`` (log units) is the largest of: the points' own spread (the median standard error of each
  commit's repeats), the spread between neighbouring commits (``1.4826 x median |x[i+1] - x[i]| / sqrt 2``, a
  robust estimate a few steps do not move: commits measured one after the other differ by more than one commit's
  repeats do), and a floor of a third of ``min_change`` (a series that barely moves has no noise to scale by);
* a segmentation pays ``penalty = sigma^2 x max(Z^2, 2 ln n)`` per change point (``Z = 3``): a change is kept
  only when it explains more of the squared deviations than a three-sigma jump at one point would (or the
  BIC's ``2 ln n`` where a long series offers many places to split by chance);
* a change whose step (the median of the segment after it over the median of the one before) lies within
  ``±min_change`` is dropped: smaller changes are no one's regression.

At least :data:`MIN_POINTS` points are needed (fewer leave nothing to estimate the noise between commits from).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: the fewest points a series needs for change points (three differences between neighbours for the noise)
MIN_POINTS = 4
#: how many sigmas a jump at one point must exceed to be a change point (see the module docstring)
Z = 3.0


@dataclass(frozen=True)
class ChangePoints:
    """What :func:`change_points` found: ``indices`` (each the first point of a new level: the change lies
    between points ``i - 1`` and ``i``), each one's ``steps`` (median after / median before, of the adjacent
    segments), the noise ``sigma`` in log units and the ``penalty`` it set."""

    indices: list[int] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)
    sigma: float = math.nan
    penalty: float = math.nan


def noise(logs: np.ndarray, spread: Sequence[float | None] | None, min_change: float) -> float:
    """The series' noise in log units (the module docstring says which)."""
    within = [s for s in (spread or ()) if s is not None and math.isfinite(s)]
    diffs = np.abs(np.diff(logs))
    between = 1.4826 * float(np.median(diffs)) / math.sqrt(2) if len(diffs) else 0.0
    return max(float(np.median(within)) if within else 0.0, between, math.log1p(min_change) / 3)


def change_points(
    values: Sequence[float], spread: Sequence[float | None] | None = None, min_change: float = 0.05
) -> ChangePoints:
    """The change points of ``values`` (one positive number per commit, in order); ``spread``: each point's
    standard error in log units (``None`` where unknown); ``min_change``: the smallest step worth a candidate
    (a ratio's distance from 1). A ``ValueError`` for fewer than :data:`MIN_POINTS` values or one that is not
    a positive number."""
    import ruptures  # in here: only a history needs it

    x = [float(v) for v in values]
    if len(x) < MIN_POINTS:
        raise ValueError(f"change points need at least {MIN_POINTS} measured commits, got {len(x)}")
    if not all(math.isfinite(v) and v > 0 for v in x):
        raise ValueError(f"values must be positive numbers, got {values!r}")
    if spread is not None and len(spread) != len(x):
        raise ValueError(f"spread: one per value ({len(x)}), got {len(spread)}")
    if not (isinstance(min_change, (int, float)) and 0 <= min_change < 1):
        raise ValueError(f"min_change: a fraction in [0, 1), got {min_change!r}")
    logs = np.log(np.asarray(x))
    sigma = noise(logs, spread, min_change)
    penalty = sigma**2 * max(Z**2, 2 * math.log(len(x)))
    ends = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(logs.reshape(-1, 1)).predict(pen=penalty)
    bounds = [0, *ends]
    indices, steps = [], []
    for k in range(1, len(bounds) - 1):
        before, after = logs[bounds[k - 1] : bounds[k]], logs[bounds[k] : bounds[k + 1]]
        step = math.exp(float(np.median(after)) - float(np.median(before)))
        if abs(math.log(step)) >= math.log1p(min_change):
            indices.append(bounds[k])
            steps.append(step)
    return ChangePoints(indices, steps, sigma, penalty)
