"""``perflab bisect GOOD BAD``: the first commit whose server is slower than GOOD's beyond a margin.

The commits are BAD's first-parent history from GOOD (:func:`.commits.between`): ``c0 = GOOD, c1 .. cn = BAD``.
Every step compares one commit against GOOD, interleaved (:func:`.compare.check`: each commit built apart and
cached, the working tree untouched), and reads the verdict on the deciding metric as a regression check
(:mod:`.verdict`). The search (:func:`search`, the pure part):

0. The likely culprit first, when there is one: each commit's prior weight is half an even share and half the
   share of the lines it changed in code (not in documentation or notes; only in ``java-server/`` for the
   built-in server: :func:`.commits.git.code_changes`, :func:`prior_of`), and a commit before BAD that outweighs
   all the others together (it changed more than ``1 - 1/n`` of the code lines) is compared first. Slower: it
   is ``hi`` at once, and BAD need not be compared; no worse: ``lo`` moves to it.
1. Then BAD against GOOD, unless a slower commit is known already. *Not worse*: no regression; an
   *improvement*: GOOD is slower than BAD, and it says so; *undecided*: it cannot tell BAD from GOOD at this
   precision. Only a *regression* goes on.
2. Then the halving between the last commit shown no worse (``lo``, GOOD at first) and the first shown
   slower (``hi``): the commit that halves the prior's weight of the candidates ``lo + 1 .. hi`` (the middle one
   where every commit changed as much) is compared against GOOD; slower moves ``hi`` to it, no worse (or better)
   moves ``lo``. The slower commits are taken to stay slower (as ``git bisect`` does).
3. A step that cannot decide is compared again with twice the pairs and budget (``retries`` times); if it still
   cannot, the bisection stops and says the first slower commit lies between ``lo`` and ``hi``, and which commit
   could not be told from GOOD at this precision: it never guesses. A commit that does not build is skipped and
   named (another one of the range is tried, as ``git bisect skip`` does); if only skipped commits are left
   before ``hi``, the first slower commit is ``hi`` or one of them.

**False claims.** Each comparison claims a difference between identical servers with probability at most its
``alpha``; a bisection that makes ``k`` comparisons (at most ``(1 + retries) (ceil(log2 n) + 1)`` where every
commit builds and changed as much; a commit the prior favours costs fewer, one it disfavours a step or two
more) reports a regression in a history that has none with probability at most ``k x alpha``
(Bonferroni), the bound its result states.

One run of kind ``bisect`` records it (the commits, every step with its ``ab`` run, the outcome, the first
slower commit with its ratio and interval) with index rows ``bisect_steps``; each comparison is an ``ab`` run
of its own (``perflab compare`` shows it). Its page is :func:`perflab.report.regress.bisect_page`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from ..commits.git import Revision, between, code_changes, dirty, resolve
from ..config import BreakpointParams
from ..config.ab import MAX_PAIRS
from ..config.regress import BisectParams
from ..core.session import SessionOptions
from ..errors import BuildError, PerflabError
from ..records import Run, new_run
from .compare import Setup, check
from .verdict import Check, Outcome


class Found(StrEnum):
    """How a bisection ended."""

    FIRST_SLOWER = "first slower commit"
    NO_REGRESSION = "no regression"
    GOOD_SLOWER = "GOOD slower than BAD"
    CANNOT_TELL = "cannot tell"


@dataclass(frozen=True)
class Step:
    """One comparison of commit ``index`` against GOOD (``attempt`` 0, then each retry), or a commit skipped
    because it does not build (``check`` ``None``, ``skipped`` says why)."""

    index: int
    attempt: int
    check: Check | None
    skipped: str | None = None
    seconds: float | None = None


@dataclass
class Search:
    """Where the search ended: ``found`` (how), ``lo`` (the last commit shown no worse than GOOD) and ``hi`` (the
    first shown slower, or ``None``), the ``steps`` that led there, the ``skipped`` commits and the commit that
    could not be decided (``undecided``)."""

    found: Found
    lo: int
    hi: int | None
    steps: list[Step] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    undecided: int | None = None

    @property
    def first(self) -> int | None:
        """The first slower commit, when the bisection names one commit."""
        if self.found is not Found.FIRST_SLOWER:
            return None
        return self.hi if not [i for i in self.skipped if self.lo < i < self.hi] else None

    @property
    def candidates(self) -> list[int]:
        """Where the first slower commit may be: ``lo + 1 .. hi`` (one commit when found)."""
        return [self.first] if self.first is not None else list(range(self.lo + 1, (self.hi or self.lo) + 1))

    @property
    def comparisons(self) -> int:
        return sum(s.check is not None for s in self.steps)

    def check_of(self, index: int) -> Check | None:
        """The last check of commit ``index``."""
        return next((s.check for s in reversed(self.steps) if s.index == index and s.check is not None), None)


def prior_of(lines: list[int]) -> list[float]:
    """Each commit's weight as the culprit (GOOD's ``0``) from the lines each changed in code: half of it shared
    evenly (a commit that changed nothing but notes may still be the one), half by lines. No commit's weight is
    under ``1 / n`` of the total 2, so a weighted halving still ends within about ``log2(2 n) + 1`` steps."""
    n, total = len(lines) - 1, sum(lines[1:])
    return [0.0] + [1 / n + (c / total if total else 1 / n) for c in lines[1:]]


def likely(prior: list[float] | None, n: int) -> int | None:
    """The commit before BAD that the ``prior`` (a weight per commit, GOOD's first) makes likelier than all the
    others together, if one is."""
    if prior is None:
        return None
    k = max(range(1, n + 1), key=lambda i: prior[i])
    rest = sum(prior[1 : n + 1]) - prior[k]
    return k if k < n and prior[k] > rest else None


def _split(lo: int, hi: int, open_: list[int], prior: list[float] | None) -> int:
    """The commit of ``open_`` (between ``lo`` and ``hi``) whose comparison halves the prior's weight of the
    candidates ``lo + 1 .. hi`` best (the middle where the prior is even or absent; ties to the middle, then
    the earlier)."""
    middle = (lo + hi) / 2
    w = prior if prior is not None else [1.0] * (hi + 1)

    def imbalance(i: int) -> float:
        return round(abs(sum(w[lo + 1 : i + 1]) - sum(w[i + 1 : hi + 1])), 9)  # even weights tie exactly

    return min(open_, key=lambda i: (imbalance(i), abs(i - middle), i))


def search(n: int, step: Callable[[int, int], Check], retries: int = 1, prior: list[float] | None = None) -> Search:
    """The search over commits ``0`` (GOOD) .. ``n`` (BAD) described in the module docstring; ``step(i,
    attempt)`` compares commit ``i`` against GOOD (raising :class:`~perflab.errors.BuildError` for a commit
    that does not build); ``prior``: a weight per commit (GOOD's first), how likely each is the culprit
    (:func:`perflab.commits.git.code_changes`; ``None``: all alike)."""
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"n: at least one commit after GOOD, got {n!r}")
    if prior is not None and (len(prior) != n + 1 or min(prior) < 0):
        raise ValueError(f"prior: {n + 1} weights >= 0 (GOOD's first), got {prior!r}")
    steps: list[Step] = []
    skipped: list[int] = []

    def measure(i: int) -> Check | None:
        for attempt in range(retries + 1):
            t = time.monotonic()
            try:
                c = step(i, attempt)
            except BuildError as e:
                steps.append(Step(i, attempt, None, e.cause, round(time.monotonic() - t, 1)))
                skipped.append(i)
                return None
            steps.append(Step(i, attempt, c, None, round(time.monotonic() - t, 1)))
            if c.outcome is not Outcome.UNDECIDED:
                return c
        return c

    lo, hi = 0, None
    k = likely(prior, n)
    first = measure(k) if k is not None else None
    if first is not None and first.outcome.slower:
        hi = k
    elif first is not None and first.outcome.fine:
        lo = k
    if hi is None:
        last = measure(n)
        if last is None:
            raise BuildError(f"BAD cannot be built: {steps[-1].skipped}")
        if last.outcome.fine:
            found = Found.GOOD_SLOWER if last.outcome is Outcome.IMPROVEMENT else Found.NO_REGRESSION
            return Search(found, n, None, steps, skipped)
        if not last.outcome.slower:
            return Search(Found.CANNOT_TELL, lo, n, steps, skipped, n)
        hi = n
    while True:
        open_ = [i for i in range(lo + 1, hi) if i not in skipped]
        if not open_:
            return Search(Found.FIRST_SLOWER, lo, hi, steps, skipped)
        i = _split(lo, hi, open_, prior)
        c = measure(i)
        if c is None:
            continue
        if c.outcome.slower:
            hi = i
        elif c.outcome.fine:
            lo = i
        else:
            return Search(Found.CANNOT_TELL, lo, hi, steps, skipped, i)


def max_comparisons(n: int, retries: int) -> int:
    """The most comparisons a bisection of ``n`` commits after GOOD makes where every commit builds."""
    return (1 + retries) * (math.ceil(math.log2(n)) + 1) if n > 1 else 1 + retries


@dataclass
class BisectResult:
    """What :func:`run_bisect` returns: the ``run`` that records it, the ``commits`` (GOOD first, BAD last),
    the ``search`` with every step, the deciding metric, notes (the working tree's changes) and its bound."""

    run: Run
    commits: list[Revision]
    search: Search
    params: BisectParams
    metric: str
    seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> Found:
        return self.search.found

    @property
    def first(self) -> Revision | None:
        i = self.search.first
        return self.commits[i] if i is not None else None

    @property
    def first_check(self) -> Check | None:
        """The first slower commit's comparison against GOOD (its ratio and interval)."""
        i = self.search.first
        return self.search.check_of(i) if i is not None else None

    @property
    def bound(self) -> float:
        """The probability that a history without a regression is reported as one: at most the comparisons
        made times alpha."""
        return min(1.0, self.search.comparisons * self.params.alpha)

    @property
    def run_id(self) -> str:
        return self.run.id


def _retry(setup: Setup, attempt: int) -> tuple[BisectParams, BreakpointParams | None]:
    """The parameters of attempt ``attempt``: each retry twice the pairs (or probes) and budget of the last."""
    k = 2**attempt
    p = setup.params
    params = p.replace(max_pairs=min(MAX_PAIRS, p.max_pairs * k), budget=p.budget * k if p.budget else None)
    s = setup.search
    return params, s.replace(max_probes=min(200, s.max_probes * k)) if s is not None else None


def run_bisect(
    good: str,
    bad: str,
    load,
    params: BisectParams | None = None,
    repo=None,
    server=None,
    rate: float | None = None,
    criteria=None,
    search_params: BreakpointParams | None = None,
    prefill=None,
    fill=None,
    name: str | None = None,
    progress: bool = True,
    session: SessionOptions | None = None,
) -> BisectResult:
    """Find the first commit after ``good`` up to ``bad`` whose server is slower than ``good``'s (see the
    module docstring).

    ``load``: the workload (its rate unless ``rate``); ``search_params``: compare breakpoints instead (two
    interleaved searches per step); ``params``: :class:`~perflab.config.regress.BisectParams` (the metric,
    margin, alpha, budget, retries...); ``repo``: :class:`~perflab.config.regress.RepoParams`; ``server``: the
    built-in server's configuration; ``criteria``, ``prefill``, ``fill``, ``session``: as
    :func:`perflab.compare_ab`. Bad input (an unknown commit, GOOD not an ancestor of BAD) raises
    ``ValueError`` before anything is built or recorded; GOOD or BAD that does not build fails the run."""
    setup = Setup.of(
        load, params, BisectParams, repo, server, rate, criteria, search_params, prefill, fill, progress, session
    )
    path = setup.builds.path
    commits = between(path, resolve(path, good, "GOOD"), resolve(path, bad, "BAD"))
    notes = []
    changes = dirty(path)
    if changes:
        notes.append(
            f"the working tree of {path} has {len(changes)} uncommitted change(s); they are in no commit "
            f"measured and were not touched"
        )
    lines = code_changes(path, commits, None if setup.builds.yours else "java-server")
    prior = prior_of(lines)
    run_params = {
        "changed_lines": lines,
        "good": commits[0].to_dict(),
        "bad": commits[-1].to_dict(),
        "repo": setup.builds.to_dict(),
        "commits": [c.to_dict() for c in commits],
        "bisect": setup.params.to_dict(),
        "load": setup.load.to_dict(),
        "rate": setup.rate,
        "metric": setup.metric,
        "breakpoint": setup.search.to_dict() if setup.search else None,
    }
    t0 = time.monotonic()
    run = new_run(
        "bisect", name or f"bisect-{commits[0].short}-{commits[-1].short}", run_params, setup.session.data_root
    )
    with run:
        try:
            base = setup.builds.side(commits[0])
        except BuildError as e:
            raise BuildError(
                f"GOOD {commits[0].short} cannot be built, so nothing can be compared with it: {e.cause}", e.log_tail
            ) from None

        def step(i: int, attempt: int) -> Check:
            try:
                side = setup.builds.side(commits[i])
            except BuildError as e:
                run.add_rows("bisect_steps", [_step_row(commits, i, attempt, None, e.cause)])
                raise
            params, search = _retry(setup, attempt)
            name = f"bisect-{commits[i].short}" + (f"-retry{attempt}" if attempt else "")
            try:
                _, found = check(setup, base, side, name, params, search)
            except PerflabError as e:  # its server does not start: skipped like a commit that does not build
                cause = f"commit {commits[i].short} could not be measured: {e.cause}"
                run.add_rows("bisect_steps", [_step_row(commits, i, attempt, None, cause)])
                raise BuildError(cause, e.log_tail) from None
            run.add_rows("bisect_steps", [_step_row(commits, i, attempt, found, None)])
            return found

        s = search(len(commits) - 1, step, setup.params.retries, prior)
        res = BisectResult(run, commits, s, setup.params, setup.metric, round(time.monotonic() - t0, 1), notes)
        _record(res)
    return res


def _step_row(commits: list[Revision], i: int, attempt: int, c: Check | None, skipped: str | None) -> dict:
    return {
        "position": i,
        "commit": commits[i].sha,
        "subject": commits[i].subject,
        "attempt": attempt,
        "outcome": str(c.outcome) if c else "skipped",
        "metric": c.metric if c else None,
        "ratio": c.ratio if c else None,
        "ci_lo": c.ci[0] if c else None,
        "ci_hi": c.ci[1] if c else None,
        "n": c.n if c else None,
        "p_value": c.p_value if c else None,
        "level": c.level if c else None,
        "ab_run": c.run_id if c else None,
        "skipped": skipped,
    }


def _record(res: BisectResult) -> None:
    s, first, fc = res.search, res.first, res.first_check
    res.run.update(warnings=res.notes)
    res.run.set_result(
        found=str(s.found),
        lo=res.commits[s.lo].sha,
        hi=res.commits[s.hi].sha if s.hi is not None else None,
        first=first.sha if first else None,
        first_subject=first.subject if first else None,
        ratio=fc.ratio if fc else None,
        ci=list(fc.ci) if fc else None,
        metric=res.metric,
        candidates=[res.commits[i].sha for i in s.candidates] if s.hi is not None else [],
        undecided=res.commits[s.undecided].sha if s.undecided is not None else None,
        skipped=[res.commits[i].sha for i in s.skipped],
        comparisons=s.comparisons,
        bound=res.bound,
        alpha=res.params.alpha,
        seconds=res.seconds,
        steps=[
            {
                "position": st.index,
                "commit": res.commits[st.index].sha,
                "attempt": st.attempt,
                "seconds": st.seconds,
                "skipped": st.skipped,
                **(st.check.to_dict() if st.check else {}),
            }
            for st in s.steps
        ],
    )
