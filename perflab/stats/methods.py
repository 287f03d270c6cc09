"""How two things were compared: the one list of the lab's comparison methods, named in every verdict.

A verdict ("B's p99 is 0.72x A's", "no difference detectable") is only as good as the design that
produced it, so every sentence, table row and index row that states one carries its :class:`Method`:

* ``interleaved pairs`` -- A and B measured side by side in balanced blocks (A B B A, then B A A B) at
  the same offered rates; each adjacent A-B pair gives a ratio, tested with a Wilcoxon signed-rank test
  on the pairs' log-ratios and a bootstrap interval of the median ratio (:mod:`.paired`). The slow
  phases of a shared machine fall on both sides of a pair and cancel.
* ``interleaved searches`` -- two breakpoint searches whose probes alternate A B B A; the ratio of the
  breakpoints carries the interval both searches' intervals allow.
* ``sequential runs`` -- two runs one after the other, their per-interval values compared (Mann-Whitney U
  and a bootstrap interval of the ratio of medians, :func:`.significance.compare_samples`): what the lab
  did before interleaving; a slow phase of the machine during one run and not the other shows up as a
  difference.
* ``sequential intervals`` -- two estimates with intervals measured one after the other (two breakpoint
  searches, or the ratios of two A/B runs), different only when their intervals are disjoint
  (:func:`.significance.compare_intervals`).
* ``single values`` -- one number per run side by side, not tested.
"""

from __future__ import annotations

from enum import StrEnum


class Method(StrEnum):
    """A comparison method; ``str(m)`` is its short name, :attr:`description` says what it does."""

    INTERLEAVED_PAIRS = "interleaved pairs"
    INTERLEAVED_SEARCHES = "interleaved searches"
    SEQUENTIAL_RUNS = "sequential runs"
    SEQUENTIAL_INTERVALS = "sequential intervals"
    SINGLE_VALUES = "single values"

    @property
    def interleaved(self) -> bool:
        return self in (Method.INTERLEAVED_PAIRS, Method.INTERLEAVED_SEARCHES)

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    Method.INTERLEAVED_PAIRS: "interleaved A/B: A and B side by side in balanced A B B A blocks at the same rates; "
    "Wilcoxon signed-rank test on the pairs' log-ratios, bootstrap interval of the median "
    "ratio",
    Method.INTERLEAVED_SEARCHES: "interleaved breakpoint searches (probes in A B B A order); the ratio's interval "
    "from both searches' intervals",
    Method.SEQUENTIAL_RUNS: "sequential runs, not interleaved: Mann-Whitney U test on per-interval values and a "
    "bootstrap interval of the ratio of medians (a slow phase of the machine during one run "
    "counts as a difference)",
    Method.SEQUENTIAL_INTERVALS: "sequential estimates, not interleaved (two searches, or two A/B runs' ratios): "
    "intervals compared, different only when disjoint",
    Method.SINGLE_VALUES: "one value per run, not tested",
}
