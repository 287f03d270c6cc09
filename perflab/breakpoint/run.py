"""``find_breakpoint``: the search against a real server, recorded as one run.

One ramp brackets the breakpoint (:mod:`.ramp`), fixed-rate probes bisect it and repeat at both edges
(:mod:`.search`), each probe is judged (:mod:`.criteria`) together with its validity record
(:mod:`perflab.measure.validity`), and everything lands in one run directory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..config import BreakpointCriteria, BreakpointParams, LoadParams, PrefillParams, ServerConfig
from ..config.target import ForeignServer
from ..measure import hostspeed
from ..measure.generator import LoadTool
from ..measure.result import LoadResult
from . import ramp as ramp_mod
from ..measure.validity import Level
from .criteria import Judgement, evaluate
from .search import Estimate, Outcome, search

#: a resolved interval narrower than this (half-width / point) is what the reports call "tight"
TIGHT = 0.10


@dataclass
class Probe:
    """One fixed-rate probe of a search: its rate, what it showed (``judgement``), the search phase that
    asked for it, its load and where its files are."""

    index: int
    rate: float
    judgement: Judgement
    phase: str
    result: LoadResult | None = None
    run_dir: Path | None = None

    @property
    def validity(self) -> dict | None:
        return self.judgement.validity

    def row(self) -> dict:
        host = (((self.validity or {}).get("checks") or {}).get("host_speed") or {}).get("value")
        return {"probe": self.index, "rate": self.rate, "phase": self.phase, "passed": self.judgement.passed,
                "validity": (self.validity or {}).get("verdict"), "reason": self.judgement.reason,
                **self.judgement.metrics, "host_slowdown": host}


@dataclass
class BreakpointResult:
    """``rate``: the breakpoint (point estimate; ``None`` if nothing passed); ``interval``: ``(lo, hi)``
    that the repeated probes support (``hi`` ``None`` when nothing above failed); ``outcome``: how far the
    search got (:class:`~perflab.breakpoint.search.Outcome`); ``probes``: every probe with its judgement and validity
    (also as a DataFrame via :attr:`table`); ``ramp``: what the bracketing ramp estimated; ``edges``: the
    probed rates the interval rests on (all probes passed up to the first, all failed from the second)."""

    rate: float | None
    interval: tuple[float | None, float | None]
    outcome: Outcome
    probes: list[Probe]
    params: BreakpointParams
    criteria: BreakpointCriteria
    stop_reason: str
    ramp: dict | None = None
    run: object | None = None
    seconds: float | None = None
    edges: tuple[float | None, float | None] = (None, None)
    host_spread: float | None = None
    host_limit: float | None = None

    @property
    def lo(self) -> float | None:
        return self.interval[0]

    @property
    def hi(self) -> float | None:
        return self.interval[1]

    @property
    def halfwidth(self) -> float | None:
        """Half the interval relative to the breakpoint (0.04: ±4%)."""
        lo, hi = self.interval
        return (hi - lo) / 2 / self.rate if lo is not None and hi is not None and self.rate else None

    @property
    def converged(self) -> bool:
        """Resolved, with an interval within ±10% (:data:`TIGHT`)."""
        return self.outcome is Outcome.RESOLVED and self.halfwidth is not None and self.halfwidth <= TIGHT

    @property
    def validity(self) -> Level | None:
        """The worst validity among the probes at the interval's edges (what the result rests on)."""
        return Level.worst(p.validity["verdict"] for p in self.probes if p.rate in self.edges and p.validity)

    @property
    def table(self) -> pd.DataFrame:
        return pd.DataFrame([p.row() for p in self.probes])

    @property
    def at_breakpoint(self) -> LoadResult | None:
        """The load of the last probe that passed at the breakpoint's rate (what keeping up looks like right
        below the limit; :attr:`perflab.records.RecordedSearch.at_breakpoint` when read back); ``None`` when
        nothing passed."""
        passing = [p for p in self.probes if p.judgement.passed and p.rate == self.rate and p.result is not None]
        return passing[-1].result if passing else None

    @property
    def run_id(self) -> str | None:
        return self.run.id if self.run is not None else None

    def __repr__(self):
        return f"<BreakpointResult {self.rate} {self.interval} {self.outcome} probes={len(self.probes)}>"


def find_breakpoint(server: ServerConfig | ForeignServer | str, load: LoadParams, criteria: BreakpointCriteria | None = None,
                    params: BreakpointParams | None = None, name: str | None = None,
                    prefill: PrefillParams | None = None, progress: bool = True, **options) -> BreakpointResult:
    """Find the breakpoint of the server started with ``server`` (a ``ServerConfig``, or a
    ``ForeignServer``: your own server's command, or the URL of a running one; or a cluster: a
    ``ClusterConfig``, or a running ``Cluster``, its load split over its entry nodes) under the workload
    ``load`` (its rate, duration and warm-up are the probes').

    Records one run (kind ``breakpoint``) with ``ramp/`` (the bracketing ramp, if any) and a
    ``probes/NN-<rate>/`` directory per probe (raw generator outputs), ``probes.csv``, and index rows in
    ``loads`` (one per probe, with its judgement, validity and reason) and ``breakpoints``. Shows a
    progress bar when ``progress``. ``options``: :class:`~perflab.session.SessionOptions`.
    """
    from ..session import Session, SessionOptions, as_target, check_load

    server = as_target(server)
    options = SessionOptions(**options)
    criteria = criteria or BreakpointCriteria()
    params = params or BreakpointParams()
    for n, v, t in (("load", load, LoadParams), ("criteria", criteria, BreakpointCriteria),
                    ("params", params, BreakpointParams)):
        if not isinstance(v, t):
            raise ValueError(f"{n} must be a {t.__name__}, got {type(v).__name__}")
    script_args = tuple(load.script_args) + ((f"seed={params.seed}",) if params.seed_arg else ())
    base = load.replace(duration=params.probe_duration, warmup=params.warmup, script_args=script_args,
                        rate_steps=None, step_duration=None, ramp=None, ramp_curve="linear", stop_on_p99=None)
    check_load(server, base, options)
    want_ramp = params.bracket == "ramp" and base.tool == "perflab-load"
    script = Path(base.script).stem if base.script else base.path
    name = name or f"breakpoint-{script}-{server.mode}"
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=params.max_probes + int(want_ramp), desc=f"breakpoint {script}", unit="probe")
    t_start = time.monotonic()
    probes: list[Probe] = []
    with Session("breakpoint", name, server, LoadTool.of(base), options, prefill=prefill,
                 params={"load": base.to_dict(), "criteria": criteria.to_dict(),
                         "breakpoint": params.to_dict()}) as sess:
        run = sess.run
        # the ramp stops itself on p99, which one part of a split load cannot do for all: a load split over
        # several generator hosts (or a cluster's entry nodes) brackets by growth, as wrk2 does
        use_ramp = want_ramp and not sess.split
        if want_ramp and not use_ramp:
            run.update(bracket="growth: the ramp cannot stop early when the load is split (several generator hosts "
                               "or entry nodes)")
            if bar is not None:
                bar.total -= 1

        # a JIT-cold first probe fails far below the limit; the ramp warms the server by itself
        warm_s = params.server_warmup if params.server_warmup is not None else (0.0 if use_ramp else params.ramp_duration)

        def warm_server():
            if warm_s:
                out = run.path("server-warmup/x").parent
                sess.start_load(base.replace(rate=params.start_rate, duration=warm_s, warmup=0), out).wait()

        def probe(rate: float, phase: str) -> Judgement:
            idx = len(probes)
            t_idle = time.monotonic()
            if params.restart_server and idx:
                sess.restart_server()
                warm_server()
            sess.calibrate()  # the machine's own speed, while the server is idle
            if idx and params.cooldown:
                time.sleep(max(0.0, params.cooldown - (time.monotonic() - t_idle)))
            out = run.path(f"probes/{idx:02d}-{int(rate)}/x").parent
            lp = sess.start_load(base.replace(rate=rate), out)
            res = lp.wait()
            validity = sess.validity(res, lp.started_at)
            v = evaluate(res, criteria, validity)
            probes.append(Probe(idx, rate, v, phase, res, out))
            run.add_rows("loads", [{**res.record(), "probe": idx, "phase": phase, "passed": v.passed,
                                    "validity": str(validity.level), "reason": v.reason,
                                    "dir": str(out.relative_to(run.dir))}])
            iv = res.intervals
            if not iv.empty:
                run.add_rows("intervals", [{"probe": idx, "rate": rate, **r} for r in iv.to_dict("records")])
            if bar is not None:
                bar.update(1)
                word = "pass" if v.passed else "FAIL" if v.passed is False else "invalid"
                bar.set_postfix_str(f"{rate:g}/s {word}")
            return v

        estimate = None
        try:
            warm_server()
            if use_ramp:
                estimate = _run_ramp(sess, base, params, criteria)
                run.update(ramp=estimate.to_dict())
                if bar is not None:
                    bar.update(1)
            found = search(probe, params, estimate.rate if estimate else None)
        finally:
            if bar is not None:
                bar.close()
        result = _result(found, probes, params, criteria, estimate, run, time.monotonic() - t_start)
        result.host_spread = hostspeed.spread(sess.calibrations)
        result.host_limit = sess.thresholds.host_speed_warn
        _record(run, result, base, script)
    return result


def _run_ramp(sess, base: LoadParams, params: BreakpointParams, criteria: BreakpointCriteria):
    out = sess.run.path("ramp/x").parent
    res = sess.start_load(ramp_mod.ramp_load(base, params, criteria), out).wait()
    return ramp_mod.estimate(res, criteria)


def _result(found: Estimate, probes, params, criteria, ramp, run, seconds) -> BreakpointResult:
    return BreakpointResult(found.rate, found.interval, found.outcome, probes, params, criteria,
                            found.stop_reason, ramp.to_dict() if ramp else None, run, round(seconds, 1),
                            found.edges)


def _record(run, result: BreakpointResult, base: LoadParams, script: str) -> None:
    run.write_frame("probes.csv", result.table, artifact="probes")
    lo, hi = result.interval
    row = {"workload": _method_of(script) or script, "script": script, "breakpoint_rate": result.rate, "lo": lo, "hi": hi,
           "interval": [lo, hi], "edges": list(result.edges), "verdict": str(result.outcome),
           "converged": result.converged,
           "halfwidth": result.halfwidth, "validity": result.validity, "probes": len(result.probes),
           "stop_reason": result.stop_reason, "threads": base.threads, "connections": base.connections,
           "sla_p99_ms": result.criteria.sla_p99 * 1000, "precision": result.params.precision,
           "search_s": result.seconds, "host_spread": result.host_spread}
    run.add_rows("breakpoints", [row])
    edges = [p for p in result.probes if p.rate in result.edges and p.validity]
    reasons = sorted({f"{p.rate:,.0f}/s: {r}" for p in edges for r in p.validity.get("reasons", [])})
    run.meta["validity"] = {"verdict": result.validity, "reasons": reasons,
                            "checks": {"edge_probes": {"status": "ok" if result.validity is Level.VALID else "warn",
                                                       "value": len(edges), "limit": None,
                                                       "note": "validity of the probes at the interval's edges"}}}
    run.set_result(**row)


def _method_of(script: str) -> str | None:
    """What a script sends, as the reports name a workload: GET, PUT, DELETE, status, range, mixed, ycsb."""
    s = script.lower()
    for m in ("get", "put", "delete", "status", "range", "mixed", "ycsb"):
        if m in s:
            return m.upper() if m in ("get", "put", "delete") else m
    return None
