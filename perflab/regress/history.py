"""``perflab history GOOD BAD``: a metric across every commit of a range, its change points, each one checked.

1. **The series.** Each commit of BAD's first-parent history from GOOD (:func:`.commits.between`) is built apart
   and cached (:mod:`.builds`, the working tree untouched), started, warmed, and measured ``repeats`` times at
   one fixed rate: each repeat a probe giving the server's CPU per request, p50 and p99. One run of kind
   ``history-point`` per commit records its probes, keyed by the commit (its ``version``, so the run index finds
   every measurement of a commit). Per commit and metric: the median of the repeats and their range (which
   holds the median with probability ``1 - 2^(1 - repeats)``). A commit that does not build (or whose server
   does not start) is skipped and named. The commits are measured one after the other, so a slow phase of the
   machine can look like a change: that is why step 3 exists.
2. **Change points** of the deciding metric's series (:func:`perflab.stats.changepoints.change_points`,
   ruptures' PELT with a penalty set by the measured noise; steps within the margin are none). At least
   :data:`~perflab.stats.changepoints.MIN_POINTS` commits are needed.
3. **Each change point checked** by one interleaved comparison (:func:`.compare.check`, i.e.
   :func:`perflab.compare_ab`) of the measured commits on both sides of it, on the deciding metric. Only a
   check that claims the later commit slower (:class:`~.verdict.Outcome` ``regression``) reports a regression;
   an ``improvement`` is reported as one, and a candidate the check does not confirm (``not worse``,
   ``undecided``, ``unmeasured``) is named as a candidate, never as a regression.

**False claims.** Each check claims a difference between identical servers with probability at most its
``alpha``; a history whose commits are all alike reports a regression with probability at most the checks made
times alpha (the result states it). A change the series does not show is not checked: change points are
candidates, not proofs.

One run of kind ``history`` records it all (the commits, every point with its interval, the candidates, each
check with its ``ab`` run, the answer) with index rows ``history_points`` (one per commit and metric) and
``history_changes`` (one per candidate). Its words and figure are :mod:`perflab.analysis.history`.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from tqdm.auto import tqdm

from .. import paths
from ..ab.run import value
from ..ab.sides import make_side
from ..commits.git import Revision, between, dirty, resolve
from ..config.regress import HistoryParams
from ..config.version import Version
from ..core.fill import fill as fill_target
from ..core.probe import probe as run_probe
from ..core.probe import warm
from ..core.session import Session, SessionOptions
from ..errors import BuildError, PerflabError
from ..hosts.pool import LOCAL
from ..measure.generator import LoadTool
from ..records import Run, new_run
from ..stats.changepoints import MIN_POINTS, ChangePoints, change_points
from .compare import Setup, check
from .verdict import Check, Outcome

#: the metrics every point measures (the deciding one among them)
METRICS = ("cpu", "p50", "p99")


class Found(StrEnum):
    """How a history ended."""

    REGRESSION = "regression"
    NONE_CONFIRMED = "no regression confirmed"
    NO_CHANGE_POINT = "no change point"
    TOO_FEW = "too few measured commits"


@dataclass
class Point:
    """Commit ``index`` of the history: its repeats of each metric (``values``), the run that recorded them, or
    why it was ``skipped``."""

    index: int
    values: dict[str, list[float]] = field(default_factory=dict)
    run_id: str | None = None
    skipped: str | None = None

    def median(self, metric: str) -> float:
        return statistics.median(self.values[metric])

    def interval(self, metric: str) -> tuple[float, float]:
        """The range of the repeats."""
        return min(self.values[metric]), max(self.values[metric])

    def spread(self, metric: str) -> float | None:
        """The standard error of the repeats' logs (the change-point search's noise of this point)."""
        logs = [math.log(v) for v in self.values[metric] if v > 0]
        return statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) >= 2 else None


@dataclass
class Candidate:
    """A change point: the level changes between commit ``before`` and commit ``index`` (the nearest measured
    commits on each side) by ``step`` (median after / median before, of the series' segments); its ``check``."""

    index: int
    before: int
    step: float
    check: Check | None = None

    @property
    def outcome(self) -> str:
        """What the check says of the later commit: ``regression`` (proven slower), ``improvement``, ``not
        confirmed`` (no worse beyond the margin), ``undecided``, ``unmeasured``, or ``not checked``."""
        if self.check is None:
            return "not checked"
        return "not confirmed" if self.check.outcome is Outcome.NOT_WORSE else str(self.check.outcome)

    @property
    def regression(self) -> bool:
        return self.check is not None and self.check.outcome is Outcome.REGRESSION


@dataclass
class Trace:
    """The pure part's answer: every point, the change points of the deciding metric and the candidates."""

    points: list[Point]
    metric: str
    changes: ChangePoints | None = None
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def measured(self) -> list[Point]:
        return [p for p in self.points if p.skipped is None]

    @property
    def skipped(self) -> list[Point]:
        return [p for p in self.points if p.skipped is not None]

    @property
    def found(self) -> Found:
        if self.changes is None:
            return Found.TOO_FEW
        if any(c.regression for c in self.candidates):
            return Found.REGRESSION
        return Found.NONE_CONFIRMED if self.candidates else Found.NO_CHANGE_POINT

    @property
    def checks(self) -> int:
        return sum(c.check is not None for c in self.candidates)


def trace(
    n: int,
    measure: Callable[[int], tuple[dict[str, list[float]], str | None]],
    compare: Callable[[int, int], Check] | None,
    metric: str = "cpu",
    min_change: float = 0.05,
    progress: Callable[[int], None] | None = None,
) -> Trace:
    """Steps 1-3 of the module docstring over commits ``0 .. n - 1``: ``measure(i)`` gives commit ``i``'s
    repeats of each metric and its run id (raising :class:`~perflab.errors.BuildError` for a commit that does
    not build or start); ``compare(a, b)`` checks commit ``b`` against ``a`` (``None``: candidates only)."""
    points = []
    for i in range(n):
        try:
            values, run_id = measure(i)
            points.append(Point(i, values, run_id))
        except BuildError as e:
            points.append(Point(i, skipped=e.cause))
        if progress is not None:
            progress(i)
    t = Trace(points, metric)
    measured = t.measured
    if len(measured) < MIN_POINTS:
        return t
    t.changes = change_points([p.median(metric) for p in measured], [p.spread(metric) for p in measured], min_change)
    for j, step in zip(t.changes.indices, t.changes.steps):
        c = Candidate(measured[j].index, measured[j - 1].index, step)
        if compare is not None:
            c.check = compare(c.before, c.index)
        t.candidates.append(c)
    return t


@dataclass
class HistoryResult:
    """What :func:`run_history` returns: the ``run`` that records it, the ``commits`` (GOOD first), the
    ``trace`` (points, change points, candidates with their checks), the parameters and notes."""

    run: Run
    commits: list[Revision]
    trace: Trace
    params: HistoryParams
    rate: float
    seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> Found:
        return self.trace.found

    @property
    def metric(self) -> str:
        return self.trace.metric

    @property
    def regressions(self) -> list[Candidate]:
        return [c for c in self.trace.candidates if c.regression]

    @property
    def bound(self) -> float:
        """The probability that a history of identical servers reports a regression: at most the checks made
        times alpha."""
        return min(1.0, self.trace.checks * self.params.alpha)

    @property
    def run_id(self) -> str:
        return self.run.id


def _unmeasured(setup: Setup, why: str) -> Check:
    return Check(
        Outcome.UNMEASURED,
        setup.metric,
        setup.rate,
        None,
        (None, None),
        None,
        None,
        None,
        setup.params.margin,
        "",
        "",
        why=why,
    )


def run_history(
    good: str,
    bad: str,
    load,
    params: HistoryParams | None = None,
    repo=None,
    server=None,
    rate: float | None = None,
    criteria=None,
    prefill=None,
    fill=None,
    name: str | None = None,
    progress: bool = True,
    session: SessionOptions | None = None,
) -> HistoryResult:
    """Measure every commit from ``good`` to ``bad``, find the change points of the deciding metric and check
    each one (see the module docstring).

    ``load``: the workload (its rate unless ``rate``); ``params``: :class:`~perflab.config.regress.HistoryParams`
    (the metric, repeats, margin, the checks' pairs, alpha, budget...); ``repo``:
    :class:`~perflab.config.regress.RepoParams`; ``server``: the built-in server's configuration; ``criteria``,
    ``prefill``, ``fill``, ``session``: as :func:`perflab.compare_ab`. Bad input (an unknown commit, GOOD not
    an ancestor of BAD, fewer commits than change points need) raises ``ValueError`` before anything is built or
    recorded."""
    setup = Setup.of(load, params, HistoryParams, repo, server, rate, criteria, None, prefill, fill, progress, session)
    p, path = setup.params, setup.builds.path
    commits = between(path, resolve(path, good, "GOOD"), resolve(path, bad, "BAD"))
    if len(commits) < MIN_POINTS:
        raise ValueError(
            f"GOOD..BAD holds {len(commits)} commits (GOOD included); change points need at least "
            f"{MIN_POINTS}: give an earlier GOOD, or compare two commits with perflab gate"
        )
    rate = setup.rate if setup.rate is not None else setup.load.rate
    probe_load = setup.load.for_probe(p.probe_duration, p.warmup).replace(rate=rate)
    notes = []
    changes = dirty(path)
    if changes:
        notes.append(
            f"the working tree of {path} has {len(changes)} uncommitted change(s); they are in no commit "
            f"measured and were not touched"
        )
    data_root = paths.data_root(setup.session.data_root)
    run_params = {
        "good": commits[0].to_dict(),
        "bad": commits[-1].to_dict(),
        "repo": setup.builds.to_dict(),
        "commits": [c.to_dict() for c in commits],
        "history": p.to_dict(),
        "load": probe_load.to_dict(),
        "rate": rate,
        "metric": setup.metric,
    }
    t0 = time.monotonic()
    run = new_run("history", name or f"history-{commits[0].short}-{commits[-1].short}", run_params, data_root)
    with run:
        tool = LoadTool.of(probe_load)

        def measure(i: int) -> tuple[dict[str, list[float]], str]:
            rev = commits[i]
            side = make_side("A", setup.builds.side(rev), data_root / "builds")
            opts = setup.session.replace(
                data_root=data_root, scheduler="local", generators=1, server_host=LOCAL, version=Version(commit=rev.sha)
            )
            session = Session(
                "history-point",
                f"history-{rev.short}",
                side.target,
                tool,
                opts,
                prefill=setup.prefill,
                params={"history_run": run.id, "position": i},
            )
            try:
                with session as sess:
                    if setup.fill is not None:
                        sess.run.update(fill=fill_target(sess, setup.fill, probe_load))
                    warm(sess, probe_load, p.server_warmup, sess.run.path("warmup/x").parent)
                    values: dict[str, list[float]] = {m: [] for m in METRICS}
                    for r in range(p.repeats):
                        got = run_probe(
                            sess,
                            probe_load,
                            sess.run.path(f"probes/{r:02d}/x").parent,
                            setup.criteria,
                            row={"repeat": r, "position": i, "history_run": run.id},
                        )
                        for m in METRICS:
                            values[m].append(value(got.load, m))
                    sess.run.set_result(**{m: statistics.median(v) for m, v in values.items()})
            except BuildError:
                raise
            except PerflabError as e:  # its server does not start: skipped like a commit that does not build
                raise BuildError(f"commit {rev.short} could not be measured: {e.cause}", e.log_tail) from None
            bad = [m for m, v in values.items() if not all(math.isfinite(x) and x > 0 for x in v)]
            if setup.metric in bad:
                raise BuildError(f"commit {rev.short} measured no {setup.metric} (a probe without answered requests)")
            return values, session.run.id

        def compare(a: int, b: int) -> Check:
            try:
                sa, sb = setup.builds.side(commits[a]), setup.builds.side(commits[b])
                return check(setup, sa, sb, f"history-{commits[b].short}-against-{commits[a].short}")[1]
            except PerflabError as e:
                return _unmeasured(setup, e.cause)

        bar = tqdm(total=len(commits), desc="history: commits", unit="commit") if progress else None
        try:
            t = trace(
                len(commits),
                measure,
                compare if p.check else None,
                setup.metric,
                p.margin,
                (lambda i: bar.update(1)) if bar is not None else None,
            )
        finally:
            if bar is not None:
                bar.close()
        res = HistoryResult(run, commits, t, p, rate, round(time.monotonic() - t0, 1), notes)
        _record(res)
    return res


def _record(res: HistoryResult) -> None:
    t, commits = res.trace, res.commits
    points = []
    for pt in t.points:
        c = commits[pt.index]
        base = {
            "position": pt.index,
            "commit": c.sha,
            "subject": c.subject,
            "point_run": pt.run_id,
            "skipped": pt.skipped,
        }
        if pt.skipped is not None:
            points.append({**base, "metrics": {}})
            continue
        points.append(
            {
                **base,
                "metrics": {
                    m: {
                        "value": pt.median(m),
                        "lo": pt.interval(m)[0],
                        "hi": pt.interval(m)[1],
                        "repeats": list(pt.values[m]),
                    }
                    for m in METRICS
                },
            }
        )
    res.run.add_rows(
        "history_points",
        [
            {
                "position": x["position"],
                "commit": x["commit"],
                "subject": x["subject"],
                "metric": m,
                "value": v["value"],
                "lo": v["lo"],
                "hi": v["hi"],
                "repeats": len(v["repeats"]),
                "point_run": x["point_run"],
                "skipped": None,
            }
            for x in points
            for m, v in x["metrics"].items()
        ]
        + [
            {
                "position": x["position"],
                "commit": x["commit"],
                "subject": x["subject"],
                "metric": None,
                "value": None,
                "lo": None,
                "hi": None,
                "repeats": 0,
                "point_run": None,
                "skipped": x["skipped"],
            }
            for x in points
            if x["skipped"] is not None
        ],
    )
    candidates = [
        {
            "position": c.index,
            "commit": commits[c.index].sha,
            "subject": commits[c.index].subject,
            "before": commits[c.before].sha,
            "step": c.step,
            "outcome": c.outcome,
            "check": c.check.to_dict() if c.check else None,
        }
        for c in t.candidates
    ]
    if candidates:
        res.run.add_rows(
            "history_changes",
            [
                {k: v for k, v in x.items() if k != "check"}
                | {
                    "metric": t.metric,
                    "ratio": (x["check"] or {}).get("ratio"),
                    "ci_lo": ((x["check"] or {}).get("ci") or [None, None])[0],
                    "ci_hi": ((x["check"] or {}).get("ci") or [None, None])[1],
                    "p_value": (x["check"] or {}).get("p_value"),
                    "n": (x["check"] or {}).get("n"),
                    "ab_run": (x["check"] or {}).get("run_id"),
                }
                for x in candidates
            ],
        )
    ch = t.changes
    res.run.update(warnings=res.notes)
    res.run.set_result(
        found=str(res.found),
        metric=t.metric,
        rate=res.rate,
        points=points,
        candidates=candidates,
        regressions=[commits[c.index].sha for c in res.regressions],
        skipped=[commits[x.index].sha for x in t.skipped],
        measured=len(t.measured),
        min_points=MIN_POINTS,
        checks=t.checks,
        alpha=res.params.alpha,
        bound=res.bound,
        margin=res.params.margin,
        repeats=res.params.repeats,
        sigma=ch.sigma if ch else None,
        penalty=ch.penalty if ch else None,
        seconds=res.seconds,
    )
