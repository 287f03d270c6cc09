"""``find_breakpoint``: the search against a real server, recorded as one run.

One ramp brackets the breakpoint (:mod:`.ramp`), fixed-rate probes bisect it and repeat at both edges
(:mod:`.search`), each probe is one probe of the measurement core (:mod:`perflab.core.probe`: judged by
:mod:`perflab.measure.judgement` together with its validity record), and everything lands in one run
directory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from ..config import BreakpointCriteria, BreakpointParams, LoadParams, PrefillParams, ServerConfig
from ..config.target import ForeignServer
from ..core.fill import check_fill
from ..core.fill import fill as fill_target
from ..core.probe import probe as run_probe
from ..core.probe import warm
from ..core.session import Session, SessionOptions, check_load
from ..measure import hostspeed
from ..measure.generator import LoadTool
from ..measure.judgement import Judgement
from ..measure.result import LoadResult
from ..measure.validity import Level, Validity
from ..targets import target_of
from . import ramp as ramp_mod
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
        """The worst validity among the probes at the interval's edges (what the result rests on), and no
        better than suspect when a ramp on a server that had no warm-up broke at once (a cold JVM:
        :data:`.ramp.COLD_BREAK_S`)."""
        level = Level.worst(p.validity["verdict"] for p in self.probes if p.rate in self.edges and p.validity)
        if level is not None and self.cold_start:
            level = Level.worst([level, Level.SUSPECT])
        return level

    @property
    def cold_start(self) -> bool:
        """The search began with a ramp that broke at once on a server that had no warm-up."""
        return bool(self.ramp and self.ramp.get("cold") and not self.ramp.get("warmed_s"))

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
                    prefill: PrefillParams | None = None, progress: bool = True, fill: int | None = None,
                    **options) -> BreakpointResult:
    """Find the breakpoint of the server started with ``server`` (a ``ServerConfig``, or a
    ``ForeignServer``: your own server's command, or the URL of a running one; or a cluster: a
    ``ClusterConfig``, or a running ``Cluster``, its load split over its entry nodes) under the workload
    ``load`` (its rate, duration and warm-up are the probes').

    Records one run (kind ``breakpoint``) with ``ramp/`` (the bracketing ramp, if any) and a
    ``probes/NN-<rate>/`` directory per probe (raw generator outputs), ``probes.csv``, and index rows in
    ``loads`` (one per probe, with its judgement, validity and reason) and ``breakpoints``. Shows a
    progress bar when ``progress``. ``fill``: write ``key0 .. key<fill-1>`` through the server's API first
    (any server: :mod:`perflab.core.fill`). ``options``: :class:`~perflab.core.session.SessionOptions`.
    """
    target = target_of(server)
    check_fill(fill)
    if prefill is not None and fill is not None:
        raise ValueError("prefill and fill: give one (prefill writes the storage before the server starts, fill "
                         "writes through its API after)")
    options = SessionOptions(**options)
    criteria = criteria or BreakpointCriteria()
    params = params or BreakpointParams()
    for n, v, t in (("load", load, LoadParams), ("criteria", criteria, BreakpointCriteria),
                    ("params", params, BreakpointParams)):
        if not isinstance(v, t):
            raise ValueError(f"{n} must be a {t.__name__}, got {type(v).__name__}")
    script_args = tuple(load.script_args) + ((f"seed={params.seed}",) if params.seed_arg else ())
    base = load.for_probe(params.probe_duration, params.warmup).replace(script_args=script_args)
    check_load(target, base, options)
    if params.restart_server:
        target.require("restart")
    script = base.workload_name
    name = name or f"breakpoint-{script}-{target.mode}"
    t_start = time.monotonic()
    with Session("breakpoint", name, target, LoadTool.of(base), options, prefill=prefill,
                 params={"load": base.to_dict(), "criteria": criteria.to_dict(),
                         "breakpoint": params.to_dict(), "fill": fill}) as sess:
        if fill is not None:
            fill_target(sess, fill, base)
        search_run = _Search(sess, base, criteria, params, progress)
        found, estimate = search_run.run()
        result = BreakpointResult(found.rate, found.interval, found.outcome, search_run.probes, params, criteria,
                                  found.stop_reason, estimate.to_dict() if estimate else None, sess.run,
                                  round(time.monotonic() - t_start, 1), found.edges,
                                  hostspeed.spread(sess.calibrations), sess.thresholds.host_speed_warn)
        _record(sess.run, result, base, script)
    return result


class _Search:
    """One search in a session: the warm-up, the ramp, and the probes :func:`.search.search` asks for."""

    def __init__(self, sess, base: LoadParams, criteria: BreakpointCriteria, params: BreakpointParams,
                 progress: bool):
        self.sess, self.base, self.criteria, self.params = sess, base, criteria, params
        self.probes: list[Probe] = []
        want = params.bracket == "ramp" and base.tool == "perflab-load"
        self.use_ramp = ramp_mod.use_ramp(params, base, sess.split)
        if want and not self.use_ramp:
            sess.run.update(bracket="growth: the ramp cannot stop early when the load is split (several generator "
                                    "hosts or entry nodes)")
        self.warm_s = ramp_mod.server_warmup(params, sess.handle.runs_jvm)
        if self.warm_s:
            sess.run.update(server_warmup_s=self.warm_s)
        self.bar = tqdm(total=params.max_probes + int(self.use_ramp), desc=f"breakpoint {base.workload_name}",
                        unit="probe") if progress else None

    def run(self) -> tuple[Estimate, ramp_mod.RampEstimate | None]:
        estimate = None
        try:
            self.warm()
            if self.use_ramp:
                load = ramp_mod.ramp_load(self.base, self.params, self.criteria)
                estimate, first = ramp_mod.bracket(
                    lambda name: self.sess.start_load(load, self.sess.run.path(f"{name}/x").parent, timed=False).wait(),
                    self.warm, self.criteria, self.warm_s)
                if first is not None:
                    self.sess.run.update(cold_ramp=first.to_dict())
                self.sess.run.update(ramp=estimate.to_dict())
                self._tick("cold ramp: growth" if estimate.cold else None)
            # a ramp that broke in its first second brackets nothing: the search grows from start_rate
            return search(self.probe, self.params, estimate.rate if estimate else None), estimate
        finally:
            if self.bar is not None:
                self.bar.close()

    def warm(self) -> None:
        warm(self.sess, self.base.replace(rate=self.params.start_rate), self.warm_s,
             self.sess.run.path("server-warmup/x").parent)

    def probe(self, rate: float, phase: str) -> Judgement:
        idx, sess = len(self.probes), self.sess
        t_idle = time.monotonic()
        if self.params.restart_server and idx:
            sess.restart_target()
            self.warm()
        sess.calibrate()  # the machine's own speed, while the server is idle
        if idx and self.params.cooldown:
            time.sleep(max(0.0, self.params.cooldown - (time.monotonic() - t_idle)))
        out = sess.run.path(f"probes/{idx:02d}-{int(rate)}/x").parent
        got = run_probe(sess, self.base.replace(rate=rate), out, self.criteria, row={"probe": idx, "phase": phase},
                        intervals={"probe": idx, "rate": rate})
        v = got.judgement
        self.probes.append(Probe(idx, rate, v, phase, got.load, out))
        self._tick(f"{rate:g}/s {'pass' if v.passed else 'FAIL' if v.passed is False else 'invalid'}")
        return v

    def _tick(self, note: str | None = None) -> None:
        if self.bar is not None:
            self.bar.update(1)
            if note:
                self.bar.set_postfix_str(note)


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
    if result.cold_start:
        reasons.insert(0, result.ramp["reason"] + ", with no warm-up before it")
    run.meta["validity"] = Validity.of_probes(result.validity, reasons, "edge_probes", len(edges),
                                              "validity of the probes at the interval's edges").to_dict()
    run.set_result(**row)


def _method_of(script: str) -> str | None:
    """What a script sends, as the reports name a workload: GET, PUT, DELETE, status, range, mixed, ycsb."""
    s = script.lower()
    for m in ("get", "put", "delete", "status", "range", "mixed", "ycsb"):
        if m in s:
            return m.upper() if m in ("get", "put", "delete") else m
    return None
