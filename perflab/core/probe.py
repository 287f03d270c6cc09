"""One probe: a load at a fixed rate, started, waited for, judged, and written to the run's index.

Every strategy that measures more than one load (a breakpoint search, an A/B comparison, a bisection, a CI
gate) is a sequence of probes; what one probe does is here, once: start the load on the session's hosts,
wait for it, judge its validity (:meth:`perflab.core.session.Session.validity`) and, with criteria, whether
the server kept up (:func:`perflab.measure.judgement.evaluate`), then write its ``loads`` row (and its
``intervals`` rows) into the run that records it. :func:`warm` is the unrecorded load a JVM gets first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import BreakpointCriteria, LoadParams
from ..errors import MissedReadsError
from ..measure.judgement import Judgement, evaluate
from ..measure.result import LoadResult
from ..measure.validity import Validity, reads_check


@dataclass
class ProbeResult:
    """What one probe measured: ``load`` (the generator's result), its ``validity``, its ``judgement``
    (``None`` without criteria), where its files are (``dir``) and when its load was started."""

    load: LoadResult
    validity: Validity
    judgement: Judgement | None
    dir: Path
    started_at: float

    @property
    def rate(self) -> float:
        return self.load.params.rate


def probe(
    sess,
    load: LoadParams,
    out_dir: Path,
    criteria: BreakpointCriteria | None = None,
    run=None,
    row: dict | None = None,
    intervals: dict | None = None,
) -> ProbeResult:
    """Run ``load`` against ``sess``'s target into ``out_dir`` and judge it (see the module docstring).
    ``run``: the run whose index gets the rows (default the session's); ``row``: what the ``loads`` row says
    beyond the load's own numbers (the probe's index, phase, side...); ``intervals``: with it, the load's
    intervals are indexed too, each with these fields."""
    run = run if run is not None else sess.run
    lp = sess.start_load(load, out_dir)  # a start missed (nothing sent) is tried again there
    res = lp.wait()
    validity = sess.validity(res, lp.started_at)
    judgement = evaluate(res, criteria, validity) if criteria is not None else None
    verdict = {"validity": str(validity.level)}
    if judgement is not None:
        verdict.update(passed=judgement.passed, reason=judgement.reason)
    run.add_rows("loads", [{**res.record(), **(row or {}), **verdict, "dir": str(Path(out_dir).relative_to(run.dir))}])
    if intervals is not None and not res.intervals.empty:
        run.add_rows("intervals", [{**intervals, **r} for r in res.intervals.to_dict("records")])
    return ProbeResult(res, validity, judgement, Path(out_dir), lp.started_at)


#: requests a JVM gets before it is measured: HotSpot compiles a hot method with C2 after about 5,000 invocations
#: (Tier4InvocationThreshold), so the request path runs compiled code by the time the window starts
WARM_REQUESTS = 5000
#: and at least this long: a fresh JVM spends its first second loading classes and compiling with C1
WARM_MIN_S = 2.0


def jvm_warmup_s(rate: float, at_most: float) -> float:
    """Seconds of load at ``rate`` that give a JVM :data:`WARM_REQUESTS` requests, at least :data:`WARM_MIN_S`,
    at most ``at_most`` (a JIT-cold server fails its first probe far below its limit, and its profile is the
    compiler's)."""
    return min(at_most, max(WARM_MIN_S, WARM_REQUESTS / rate))


def warm(sess, load: LoadParams, seconds: float, out_dir: Path) -> LoadResult | None:
    """``seconds`` of ``load`` at its rate, unrecorded (a JIT-cold JVM fails its first probe far below its
    limit); nothing when ``seconds`` is 0."""
    if seconds > 0:
        return sess.start_load(load.replace(duration=seconds, warmup=0), out_dir, timed=False).wait()
    return None


def require_reads(sess, res: LoadResult | None, what: str) -> None:
    """Stop where a load's reads did not find their keys (an unfilled store, or a script reading a key space the
    fill did not write): every rate of such a load measures 404s, so a search or comparison over it could only
    wander; raises :class:`~perflab.errors.MissedReadsError` naming the keys the script read."""
    check = reads_check(res, sess.thresholds) if res is not None else None
    if check is None or check.status != "fail":
        return
    keys = res.params.script_arg("keys")
    read = f"keys={keys}" if keys is not None else "no keys= (the script's default key space)"
    raise MissedReadsError(
        f"{what}: {check.note.split(':')[0]}: the store does not hold the keys the script "
        f"reads ({res.params.workload_name} with {read}); fill them first (--fill N or --prefill N, "
        f"which also set its keys=N; in Python fill= or prefill= and keys=) or allow misses "
        f"(--allow-misses)"
    )
