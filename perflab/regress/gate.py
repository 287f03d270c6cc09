"""``perflab gate BASE HEAD``: may this pull request go in? One interleaved comparison of HEAD's server against
BASE's, for CI.

Both commits are built apart (:mod:`.builds`), then compared once (:func:`perflab.compare_ab`, stopping as
soon as HEAD is shown no worse than BASE beyond the margin, or slower, or when its pairs or budget end), and
the verdict on the deciding metric (:mod:`.verdict`) is the gate's answer and exit status:

* ``0`` HEAD is no worse than BASE beyond the margin (or better);
* ``1`` HEAD is slower beyond the margin, and the comparison's test claims it: a regression, proven;
* ``2`` undecided within the budget: neither could be shown at this precision;
* ``3`` could not measure: a commit that does not build, a server that does not start, most probes invalid.

**False alarms.** The gate fails a pull request only on a claim of the comparison, and between identical
servers every claim of the comparison together has probability at most ``alpha`` (half to the sequential test
that stops a clear regression early, half to the exact signed-rank tests, Bonferroni over every test:
:mod:`perflab.stats.paired`), whatever the noise: with the default
``alpha = 1e-3``, at most one in a thousand pull requests that change nothing is failed.

One run of kind ``gate`` records it: both commits, the outcome and exit status, the deciding verdict and the
comparison's ``ab`` run (its pairs and every other verdict), and an index row ``gate``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..ab.result import ABResult
from ..commits.git import Revision, resolve
from ..config.regress import GateParams
from ..core.session import SessionOptions
from ..errors import PerflabError
from ..records import Run, new_run
from .compare import Setup, check
from .verdict import Check, Outcome

#: the gate's exit status of each outcome
EXIT = {
    Outcome.NOT_WORSE: 0,
    Outcome.IMPROVEMENT: 0,
    Outcome.REGRESSION: 1,
    Outcome.UNDECIDED: 2,
    Outcome.UNMEASURED: 3,
}


@dataclass
class GateResult:
    """What :func:`run_gate` returns: the ``run`` that records it, both commits, the deciding ``check`` and
    the ``comparison`` (``None`` when it could not run: ``error`` says why), the exit status."""

    run: Run
    base: Revision
    head: Revision
    params: GateParams
    check: Check | None
    comparison: ABResult | None
    seconds: float
    error: str | None = None

    @property
    def outcome(self) -> Outcome:
        return self.check.outcome if self.check is not None else Outcome.UNMEASURED

    @property
    def exit_code(self) -> int:
        return EXIT[self.outcome]

    @property
    def bound(self) -> float:
        """The probability that a gate of identical servers fails: at most alpha."""
        return self.params.alpha

    @property
    def run_id(self) -> str:
        return self.run.id


def run_gate(
    base: str,
    head: str,
    load,
    params: GateParams | None = None,
    repo=None,
    server=None,
    rate: float | None = None,
    criteria=None,
    prefill=None,
    fill=None,
    name: str | None = None,
    progress: bool = True,
    session: SessionOptions | None = None,
) -> GateResult:
    """Check HEAD (``head``: any revision git resolves) against BASE (``base``) as the module docstring says.

    ``load``: the workload (its rate unless ``rate``); ``params``: :class:`~perflab.config.regress.GateParams`
    (the metric, margin, alpha, budget...); ``repo``: :class:`~perflab.config.regress.RepoParams` (default: the
    built-in server of this checkout); ``server``: the built-in server's configuration (its other fields);
    ``criteria``, ``prefill``, ``fill``, ``session``: as :func:`perflab.compare_ab`. Bad input raises
    ``ValueError`` before anything is built or recorded."""
    setup = Setup.of(load, params, GateParams, repo, server, rate, criteria, None, prefill, fill, progress, session)
    b, h = resolve(setup.builds.path, base, "BASE"), resolve(setup.builds.path, head, "HEAD")
    run_params = {
        "base": b.to_dict(),
        "head": h.to_dict(),
        "repo": setup.builds.to_dict(),
        "gate": setup.params.to_dict(),
        "load": setup.load.to_dict(),
        "rate": setup.rate,
        "metric": setup.metric,
    }
    t0 = time.monotonic()
    run = new_run("gate", name or f"gate-{b.short}-{h.short}", run_params, setup.session.data_root)
    with run:
        failure = comparison = found = None
        try:
            a_side, h_side = setup.builds.side(b), setup.builds.side(h)
            comparison, found = check(setup, a_side, h_side, f"gate-{h.short}-against-{b.short}")
        except PerflabError as e:  # a commit that does not build, a server that does not start
            failure = e
        res = GateResult(
            run,
            b,
            h,
            setup.params,
            found,
            comparison,
            round(time.monotonic() - t0, 1),
            failure.cause if failure else None,
        )
        _record(res)
        if failure is not None:  # recorded as what it is: a gate that could not measure
            run.finish("failed", failure)
    return res


def _record(res: GateResult) -> None:
    c = res.check
    row = {
        "base": res.base.sha,
        "head": res.head.sha,
        "metric": c.metric if c else res.params.metric,
        "rate": c.rate if c else None,
        "outcome": str(res.outcome),
        "exit_code": res.exit_code,
        "ratio": c.ratio if c else None,
        "ci_lo": c.ci[0] if c else None,
        "ci_hi": c.ci[1] if c else None,
        "n": c.n if c else None,
        "p_value": c.p_value if c else None,
        "level": c.level if c else None,
        "alpha": res.params.alpha,
        "margin": res.params.margin,
        "ab_run": res.comparison.run_id if res.comparison else None,
        "seconds": res.seconds,
        "error": res.error,
    }
    res.run.add_rows("gate", [row])
    res.run.set_result(**row, check=c.to_dict() if c else None, bound=res.bound)
