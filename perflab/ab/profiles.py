"""Where does B spend more CPU per request than A? A profiled comparison, by category.

With ``ABParams.profile``, async-profiler samples each side's CPU (every millisecond) for as long as the pairs
run: one recording per side, each pair probe's window cut from it afterwards. A probe's CPU per request (the
server's own CPU clock over the window, :mod:`perflab.server.cpu`) times a category's share of the probe's
samples (the categories of :mod:`perflab.profiling.flame`: HTTP parsing in one-nio, network read and write,
storage and its parts, GC, JIT, your code...) is the microseconds per request that category took; each pair
gives B - A of it, and :func:`perflab.stats.paired.paired_difference` tests the pairs (an exact Wilcoxon
signed-rank test at the comparison's level, the categories counted in its family of tests, so every claim
of the comparison together still has probability at most alpha between identical sides) with a bootstrap
interval of the median difference. The profiler costs both sides alike, and the pairs' CPU per request is
measured with it running.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..config import ProfileParams
from ..profiling import flame
from ..stats import paired

#: what each side records: CPU samples every millisecond, no GC pauses (the categories hold GC)
PROFILE = ProfileParams(event="cpu", interval=0.001, gc=False)
#: the categories a profiled comparison may test (each counts in the comparison's family of tests)
CATEGORIES = flame.CATEGORY_ORDER


class SideProfiles:
    """One CPU recording per side over the pairs (see the module docstring): :meth:`start` after the
    warm-up, :meth:`stop` after the last pair, then :meth:`shares` of each probe."""

    def __init__(self, run, sessions: dict):
        self.run, self.sessions = run, sessions
        self.profilers: dict = {}
        self.recordings: dict = {}
        self.unavailable: dict[str, str] = {}

    def start(self) -> SideProfiles:
        for side, sess in self.sessions.items():
            why = sess.handle.profiling_unavailable
            if why is not None:
                self.unavailable[side] = why
                continue
            out = self.run.path(f"profiles/{side}/x").parent
            self.profilers[side] = sess.profiler(PROFILE, title=f"cpu: side {side}", out_dir=out).prepare()
            self.profilers[side].start_recording()
        return self

    def stop(self, windows: dict[str, tuple[float, float]]) -> None:
        """Stop each side's recording, kept over ``windows[side]`` (its first probe's start to its last one's
        end)."""
        for side, prof in list(self.profilers.items()):
            self.recordings[side] = prof.stop_window(*windows[side])
        self.profilers.clear()

    def abort(self) -> None:
        for prof in self.profilers.values():
            prof.abort()
        self.profilers.clear()

    def shares(self, side: str, seq: int, window: tuple[float, float]) -> dict[str, float]:
        """Each category's share of side ``side``'s CPU samples in one probe's ``window`` ({} without any)."""
        rec = self.recordings.get(side)
        if rec is None:
            return {}
        prof = rec.convert(rec.primary.event, [window], f"probe-{seq:04d}", html=False)
        cats = prof.categories()
        if not prof.samples:
            return {}
        return dict(zip(cats["category"], cats["share"]))


def per_request(cpu_us: float, shares: dict[str, float]) -> dict[str, float]:
    """Microseconds per request each category took: the probe's CPU per request times its share (NaN for
    every category when either is missing)."""
    if not shares or cpu_us is None or not math.isfinite(cpu_us):
        return {c: math.nan for c in CATEGORIES}
    return {c: cpu_us * shares.get(c, 0.0) for c in CATEGORIES}


def verdicts(table: pd.DataFrame, level: float, min_pairs: int, seed: int) -> dict:
    """Each category's paired verdict over ``table`` (one row per pair: ``a_<category>``, ``b_<category>`` in
    microseconds per request); categories neither side spent anything in are left out."""
    out = {}
    for c in CATEGORIES:
        a, b = table.get(f"a_{c}"), table.get(f"b_{c}")
        if a is None or b is None or not (a.fillna(0).sum() > 0 or b.fillna(0).sum() > 0):
            continue
        out[c] = paired.paired_difference(a, b, c, level, min_pairs, seed)
    return out


def write(run, table: pd.DataFrame) -> Path:
    """``categories.csv``: every pair's microseconds per request per category, both sides."""
    return run.write_frame("categories.csv", table, artifact="categories")
