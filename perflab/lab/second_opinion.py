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
from ..breakpoint.hold import needed
from ..config import BreakpointCriteria, LoadParams
from ..experiment import run_experiment
from ..measure.judgement import evaluate

#: the environment variable that names a wrk2 binary
ENV = "WRK2"
#: what a binary on the PATH is called
NAME = "wrk2"
#: runs of wrk2 at the held rate
RUNS = 3
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
    """What wrk2 said of the held ``rate``: one entry per run (its run id and directory, whether it kept up by the
    search's criteria, why, p99 and the share of the rate it achieved, its console)."""

    tool: str
    rate: float
    runs: list = field(default_factory=list)

    @property
    def kept_up(self) -> int:
        return sum(r["passed"] is True for r in self.runs)

    @property
    def fell_behind(self) -> int:
        return sum(r["passed"] is False for r in self.runs)

    @property
    def agrees(self) -> bool | None:
        """wrk2 kept up in most runs (``None``: too few could be judged to say)."""
        judged = self.kept_up + self.fell_behind
        if self.kept_up >= needed(len(self.runs)):
            return True
        if self.fell_behind > len(self.runs) - needed(len(self.runs)):
            return False
        return None if judged < len(self.runs) else False

    def words(self) -> str:
        """'real wrk2 agrees: it kept up with 20,000 req/s in 3 of 3 runs, each on a freshly started server (p99
        2.10 to 3.40 ms)', or that it does not, and so the number is not confirmed."""
        p99 = [r["p99_ms"] for r in self.runs if r.get("p99_ms") is not None]
        spread = (
            (f"p99 {fmt.ms(min(p99))}" + (f" to {fmt.ms(max(p99))}" if max(p99) != min(p99) else "")) if p99 else ""
        )
        n = len(self.runs)
        if self.agrees:
            return (
                f"real wrk2 agrees: it kept up with {fmt.rate(self.rate)} in {self.kept_up} of {n} runs, each on a "
                f"freshly started server ({spread})"
            )
        why = next((r["reason"] for r in self.runs if r["passed"] is False), None)
        if self.agrees is False:
            return (
                f"real wrk2 does not confirm {fmt.rate(self.rate)}: it fell behind in {self.fell_behind} of {n} "
                f"runs, each on a freshly started server ({spread}; {why}): the number is perflab-load's alone"
            )
        return (
            f"real wrk2 could not judge {fmt.rate(self.rate)}: {n - self.kept_up - self.fell_behind} of {n} runs "
            f"were inconclusive"
        )

    def to_dict(self) -> dict:
        return {"tool": self.tool, "rate": self.rate, "runs": self.runs, "agrees": self.agrees, "words": self.words()}


def ask(
    server, load: LoadParams, result, wrk2: Path, fill: int | None = None, prefill=None, runs: int = RUNS, **options
) -> SecondOpinion | None:
    """Run ``result``'s held rate with ``wrk2`` ``runs`` times (see the module docstring), record what it said in
    the search's run (``second_opinion`` in its ``meta.json``, each console under ``second-opinion/``) and return
    it; ``None`` when the search reported no number. ``options``: the session's, as the search had them."""
    if result.rate is None or not result.holds:
        return None
    c = result.conditions or {}
    secs = max(WRK2_MIN_S, math.ceil(result.params.sustain))
    warm = math.ceil(c.get("warmup_s") or 0)
    base = load.replace(
        tool="wrk2",
        wrk_binary=str(wrk2),
        rate=result.rate,
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
    for i in range(runs):
        exp = run_experiment(server, base, fill=fill, prefill=prefill, name=f"{result.run.name}-wrk2-{i}", **options)
        j = evaluate(exp.load, criteria, exp.validity)
        console = out / f"{i:02d}-console.txt"
        console.parent.mkdir(parents=True, exist_ok=True)
        console.write_text(exp.load.console)
        opinion.runs.append(
            {
                "run_id": exp.run.id,
                "passed": j.passed,
                "reason": j.reason,
                "p99_ms": j.metrics.get("p99_ms"),
                "achieved_ratio": j.metrics.get("achieved_ratio"),
                "console": str(console.relative_to(result.run.dir)),
            }
        )
    result.second_opinion = opinion
    result.run.update(second_opinion=opinion.to_dict())
    return opinion
