"""A second opinion: the held breakpoint run again by real wrk2, each time on a freshly started server.

A number is only the lab's to print when another tool, from a fresh start, agrees; the course asks students to
attach wrk2's console. When a wrk2 binary is found (given, else ``$WRK2``, else ``wrk2`` on the PATH), the held
rate runs ``runs`` times with it, each a run of its own (:func:`perflab.experiment.run_experiment`: a new server
process on new storage, the same prefill or fill, the same script, arguments, connections and threads), for the
holds' window in whole seconds (:data:`WRK2_MIN_S` at least) after an unrecorded wrk2 run of the holds' warm-up
at the rate, and judged by the search's criteria (no trend check: wrk2 writes no interval log). wrk2 agrees when
most runs keep up; otherwise the number is not confirmed, and the result says so in words. Without wrk2 nothing
runs.
"""

from __future__ import annotations

import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .. import fmt
from ..breakpoint.hold import hold
from ..breakpoint.run import record
from ..breakpoint.search import Estimate
from ..config import BreakpointCriteria, LoadParams
from ..core.session import SessionOptions
from ..experiment import run_experiment
from ..measure.judgement import evaluate

#: the environment variable that names a wrk2 binary
ENV = "WRK2"
#: what a binary on the PATH is called
NAME = "wrk2"
#: the shortest wrk2 run asked for: its first ~10 s calibrate and record no latency (shared/fixtures/wrk2)
WRK2_MIN_S = 12


def find_wrk2(given: str | os.PathLike | None = None) -> Path | None:
    """The wrk2 binary to ask: ``given``, else ``$WRK2``, else ``wrk2`` on the PATH; ``None`` when there is none.
    A binary given or named in ``$WRK2`` that is not an executable file is an error that names it."""
    for what, path in (("second opinion", given), (f"${ENV}", os.environ.get(ENV) or None)):
        if path is not None:
            p = Path(path).expanduser()
            if not p.is_file() or not os.access(p, os.X_OK):
                raise ValueError(
                    f"{what}: {p} is not an executable file (build giltene/wrk2 with make; its binary is called wrk)"
                )
            return p.resolve()
    found = shutil.which(NAME)
    return Path(found) if found else None


def choose(value: str | os.PathLike | None) -> Path | None:
    """The wrk2 a command or a notebook asks for: ``"auto"`` (:func:`find_wrk2` looks), a path, or ``None`` /
    ``"none"``: do not ask."""
    if value is None or str(value) == "none":
        return None
    return find_wrk2(None if str(value) == "auto" else value)


@dataclass
class SecondOpinion:
    """What real wrk2 said of perflab-load's ``rate``, held as perflab-load's was (:mod:`perflab.breakpoint.hold`):
    every run (its rate, run id, whether it kept up by the search's criteria, why, p99, the share of the rate
    achieved, its console), the highest rate wrk2 held (``held``, ``None``: none), its interval, and each rate's
    verdict (``rates``)."""

    tool: str
    rate: float
    runs: list = field(default_factory=list)
    held: float | None = None
    interval: tuple = (None, None)
    rates: list = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        """wrk2 held perflab-load's rate (or a higher one) from fresh starts."""
        return self.held is not None and self.held >= self.rate

    def _at(self, rate: float) -> str:
        at = [r for r in self.runs if r["rate"] == rate and r.get("p99_ms") is not None]
        lo, hi = min(r["p99_ms"] for r in at), max(r["p99_ms"] for r in at)
        p99 = f"p99 {fmt.ms(lo)}" + (f" to {fmt.ms(hi)}" if hi != lo else "")
        ok = [r for r in at if r["passed"]]
        return p99 if ok or not at else f"{p99}; {next(r['reason'] for r in at if r['passed'] is False)}"

    def words(self) -> str:
        """'real wrk2 agrees: it kept up with 20,000 req/s in 2 of 2 runs, each on a freshly started server (p99 ...)',
        or what it held instead ('real wrk2 does not confirm 22,003 req/s: ... it kept up with 18,000 req/s ...')."""
        verdicts = {r["rate"]: r for r in self.rates}
        mine = verdicts.get(self.rate)
        said = (
            f"it {mine['words'].replace('windows', 'runs').replace('window', 'run')} at {fmt.rate(self.rate)}"
            f" ({self._at(self.rate)})"
            if mine
            else f"it could not judge {fmt.rate(self.rate)}"
        )
        fresh = "each on a freshly started server"
        if self.agrees:
            above = f"; it fell behind at {fmt.rate(self.interval[1])}" if self.interval[1] is not None else ""
            return f"real wrk2 agrees: {said}, {fresh}{above}"
        if self.held is not None:
            return (
                f"real wrk2 does not confirm {fmt.rate(self.rate)}: {said}, {fresh}; it kept up with "
                f"{fmt.rate(self.held)} ({self._at(self.held)}): the breakpoint both tools hold is {fmt.rate(self.held)}"
            )
        below = f" down to {fmt.rate(self.interval[1])}" if self.interval[1] is not None else ""
        return f"real wrk2 does not confirm {fmt.rate(self.rate)}: {said}, {fresh}; it kept up with no rate{below}"

    def to_dict(self) -> dict:
        return {
            "tool": self.tool,
            "rate": self.rate,
            "held": self.held,
            "interval": list(self.interval),
            "agrees": self.agrees,
            "rates": self.rates,
            "runs": self.runs,
            "words": self.words(),
        }


def ask(
    server,
    load: LoadParams,
    result,
    wrk2: Path,
    fill: int | None = None,
    prefill=None,
    session: SessionOptions | None = None,
) -> SecondOpinion | None:
    """Hold ``result``'s rate with ``wrk2`` as the search held it with perflab-load (see the module docstring: most
    of ``hold_windows`` runs at a rate, each on a freshly started server; a rate that holds checked from above, one
    that does not stepped down), record what it said in the search's run (``second_opinion`` in its ``meta.json``,
    each console under ``second-opinion/``) and return it; ``None`` when the search reported no number. When wrk2
    held less, its number becomes the result's (a number is the lab's only when another tool agrees), recorded
    again. ``session``: the search's (:class:`~perflab.core.session.SessionOptions`)."""
    if result.rate is None or not result.holds:
        return None
    c = result.conditions or {}
    secs = max(WRK2_MIN_S, math.ceil(result.params.sustain))
    warm = math.ceil(c.get("warmup_s") or 0)
    base = load.replace(
        tool="wrk2",
        wrk_binary=str(wrk2),
        duration=secs,
        warmup=min(warm, secs),
        rate_steps=None,
        ramp=None,
        stop_on_p99=None,
        send_slack=None,
    )
    criteria: BreakpointCriteria = result.criteria.replace(trend=False)
    opinion = SecondOpinion(NAME, result.rate)
    out = result.run.dir / "second-opinion"
    out.mkdir(parents=True, exist_ok=True)

    def window(rate: float, phase: str, seconds: float):
        i = len(opinion.runs)
        exp = run_experiment(
            server,
            base.replace(rate=rate),
            fill=fill,
            prefill=prefill,
            name=f"{result.run.name}-wrk2-{i}",
            session=session,
        )
        j = evaluate(exp.load, criteria, exp.validity)
        console = out / f"{i:02d}-{int(rate)}-console.txt"
        console.write_text(exp.load.console)
        opinion.runs.append(
            {
                "rate": rate,
                "run_id": exp.run.id,
                "passed": j.passed,
                "reason": j.reason,
                "p99_ms": j.metrics.get("p99_ms"),
                "achieved_ratio": j.metrics.get("achieved_ratio"),
                "console": str(console.relative_to(result.run.dir)),
            }
        )
        return j

    found = Estimate(result.rate, result.interval, result.outcome, "perflab-load held it", at_least=result.rate)
    kept = hold(found, result.params.replace(sustain=secs), window)
    opinion.held, opinion.interval = kept.rate, tuple(kept.interval)
    opinion.rates = [{**vars(r), "words": r.words} for r in kept.rates]
    result.second_opinion = opinion
    result.run.update(second_opinion=opinion.to_dict())
    if not opinion.agrees:  # the number both tools hold, or none
        result.rate, result.interval, result.outcome = kept.rate, tuple(kept.interval), kept.outcome
        result.at_least = kept.rate
        result.stop_reason += f"; {opinion.words()}"
        record(result.run, result, load, load.workload_name)
    return opinion
