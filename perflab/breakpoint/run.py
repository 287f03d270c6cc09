"""``find_breakpoint``: the search against a real server, recorded as one run.

One ramp brackets the breakpoint (:mod:`.ramp`), fixed-rate probes bisect it and repeat at both edges
(:mod:`.search`), each probe is one probe of the measurement core (:mod:`perflab.core.probe`: judged by
:mod:`perflab.measure.judgement` together with its validity record), and everything lands in one run
directory. Before each probe the session waits for a quiet moment (:mod:`perflab.core.quiet`); a failure
while other programs took more CPU than at the quietest is the machine's and is probed again. Then the
breakpoint is *held* (:mod:`.hold`): windows of ``sustain`` seconds at its rate, each on a fresh start of the
server (a new process, the storage as before the search, the fill and the warm-up again), a higher rate that must
fail and lower ones when it does not keep up, so the number reported is one the server held from fresh starts, as
another tool that starts the server itself finds it, not only one it reached in short probes on a server that
had run for minutes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from .. import hostspeed
from ..config import BreakpointCriteria, BreakpointParams, LoadParams, PrefillParams, ServerConfig
from ..config.target import ForeignServer
from ..core.fill import check_fill
from ..core.fill import fill as fill_target
from ..core.probe import probe as run_probe
from ..core.probe import require_reads, warm
from ..core.session import Session, SessionOptions, check_load
from ..measure.generator import LoadTool
from ..measure.judgement import Judgement
from ..measure.result import LoadResult
from ..measure.validity import Level, Validity
from ..targets import target_of
from . import hold as hold_mod
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
    #: a failure the search stopped counting: it ran while other programs took more CPU than at the quietest
    discounted: bool = False

    @property
    def validity(self) -> dict | None:
        return self.judgement.validity

    def row(self) -> dict:
        host = (((self.validity or {}).get("checks") or {}).get("host_speed") or {}).get("value")
        return {
            "probe": self.index,
            "rate": self.rate,
            "phase": self.phase,
            "passed": self.judgement.passed,
            "validity": (self.validity or {}).get("verdict"),
            "reason": self.judgement.reason,
            **self.judgement.metrics,
            "host_slowdown": host,
            "discounted": self.discounted,
        }


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
    #: what the server kept up with when the search shows no breakpoint (cannot tell, generator-limited)
    at_least: float | None = None
    #: the search's own point estimate, before the hold (``rate`` is what held)
    search_rate: float | None = None
    #: the sustain windows, in order (:mod:`.hold`); empty when none ran
    holds: list = field(default_factory=list)
    #: the session's quiet checks: how many, how long they waited, the quiet level (:mod:`perflab.core.quiet`)
    quiet: dict | None = None
    #: each held rate's verdict (:class:`.hold.RateHeld`), in order
    rates_held: list = field(default_factory=list)
    #: what a reader needs to reproduce the holds: fresh starts or not, the storage they began on, the fill,
    #: the warm-up, the windows and their length
    conditions: dict | None = None
    #: what real wrk2 said of the held rate from fresh starts (:mod:`perflab.lab.second_opinion`), when asked
    second_opinion: object | None = None

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
    def decisive(self) -> list[Probe]:
        """The probes the result rests on: the conclusive ones at the interval's edges, and the windows that held
        the reported rate."""
        held = [
            p for p in self.probes if p.phase.startswith(hold_mod.PHASE) and p.judgement.passed and p.rate == self.rate
        ]
        return [
            p
            for p in self.probes
            if p.rate in self.edges
            and p.judgement.conclusive
            and not p.discounted
            and not p.phase.startswith(hold_mod.PHASE)
        ] + held

    @property
    def validity(self) -> Level | None:
        """The worst validity among the probes the result rests on (:attr:`decisive`), and no better than
        suspect when a ramp on a server that had no warm-up broke at once (a cold JVM:
        :data:`.ramp.COLD_BREAK_S`). A search that could not tell is invalid."""
        if self.outcome in (Outcome.CANNOT_TELL, Outcome.GENERATOR_LIMITED):
            return Level.INVALID
        level = Level.worst(p.validity["verdict"] for p in self.decisive if p.validity)
        if level is not None and self.cold_start:
            level = Level.worst([level, Level.SUSPECT])
        return level

    @property
    def why(self) -> str | None:
        """Why a search that measured shows no breakpoint, in words: the generator at its limit, or the machine
        (``None`` for the other outcomes)."""
        if self.outcome is Outcome.GENERATOR_LIMITED:
            return (
                f"the generator reached its own limit at {self.hi:,.0f}/s (its busiest thread saturated a core)"
                if self.hi
                else "the generator reached its own limit"
            )
        if self.outcome is not Outcome.CANNOT_TELL:
            return None
        spoiled = [p for p in self.probes if p.judgement.passed is None or p.discounted]
        causes = sorted(
            {p.judgement.cause or "it failed while the machine was busier than at its quietest" for p in spoiled}
        )
        text = f"{len(spoiled)} of {len(self.probes)} probes could not be judged ({'; '.join(causes)})"
        others = [p.judgement.metrics.get("others_cores") for p in self.probes]
        others = [o for o in others if o is not None]
        if others:
            level = (self.quiet or {}).get("level_cores")
            text += f"; other programs used up to {max(others):.2f} CPUs" + (
                f" ({level:.2f} at the quietest)" if level is not None else ""
            )
        waited = (self.quiet or {}).get("waited_s")
        if waited:
            text += f"; it waited {waited:.0f} s in all for quiet moments"
        return text

    @property
    def held(self) -> bool | None:
        """Whether the reported rate held in most of its windows (perflab-load's, or real wrk2's when it gave a
        second opinion: :mod:`perflab.lab.second_opinion`); ``None``: no window ran."""
        if not self.holds:
            return None
        wrk2 = getattr(self.second_opinion, "held", None)
        return any(r.held and r.rate == self.rate for r in self.rates_held) or (wrk2 is not None and wrk2 == self.rate)

    @property
    def others(self) -> dict | None:
        """Other programs' CPU over the search's and the holds' windows (cores): the most, the median, and the
        session's quiet level; ``None`` when nothing was read."""
        seen = sorted(o for p in self.probes if (o := p.judgement.metrics.get("others_cores")) is not None)
        if not seen:
            return None
        return {
            "max_cores": round(seen[-1], 2),
            "median_cores": round(seen[len(seen) // 2], 2),
            "level_cores": (self.quiet or {}).get("level_cores"),
        }

    @property
    def overestimate(self) -> float | None:
        """How much higher the search's short probes put the breakpoint than the rate that held (0.18: 18 %)."""
        if self.rate and self.search_rate and self.held and self.search_rate > self.rate:
            return self.search_rate / self.rate - 1
        return None

    @property
    def cold_start(self) -> bool:
        """The search began with a ramp that broke at once on a server that had no warm-up."""
        return bool(self.ramp and self.ramp.get("cold") and not self.ramp.get("warmed_s"))

    @property
    def table(self) -> pd.DataFrame:
        return pd.DataFrame([p.row() for p in self.probes])

    @property
    def at_breakpoint(self) -> LoadResult | None:
        """The load of the last probe that passed at the breakpoint's rate (the held window when one ran: what
        keeping up looks like right below the limit; :attr:`perflab.records.RecordedSearch.at_breakpoint` when
        read back); ``None`` when nothing passed."""
        passing = [p for p in self.probes if p.judgement.passed and p.rate == self.rate and p.result is not None]
        return passing[-1].result if passing else None

    @property
    def run_id(self) -> str | None:
        return self.run.id if self.run is not None else None

    def __repr__(self):
        return f"<BreakpointResult {self.rate} {self.interval} {self.outcome} probes={len(self.probes)}>"


def find_breakpoint(
    server: ServerConfig | ForeignServer | str,
    load: LoadParams,
    criteria: BreakpointCriteria | None = None,
    params: BreakpointParams | None = None,
    name: str | None = None,
    prefill: PrefillParams | None = None,
    progress: bool = True,
    fill: int | None = None,
    session: SessionOptions | None = None,
) -> BreakpointResult:
    """Find the breakpoint of the server started with ``server`` (a ``ServerConfig``, or a
    ``ForeignServer``: your own server's command, or the URL of a running one; or a cluster: a
    ``ClusterConfig``, or a running ``Cluster``, its load split over its entry nodes) under the workload
    ``load`` (its rate, duration and warm-up are the probes').

    Records one run (kind ``breakpoint``) with ``ramp/`` (the bracketing ramp, if any) and a
    ``probes/NN-<rate>/`` directory per probe (raw generator outputs), ``probes.csv``, and index rows in
    ``loads`` (one per probe, with its judgement, validity and reason) and ``breakpoints``. Shows a
    progress bar when ``progress``. ``fill``: write ``key0 .. key<fill-1>`` through the server's API first
    (any server: :mod:`perflab.core.fill`). ``session``: how and where it measures,
    :class:`~perflab.core.session.SessionOptions`.
    """
    target = target_of(server)
    check_fill(fill)
    if prefill is not None and fill is not None:
        raise ValueError(
            "prefill and fill: give one (prefill writes the storage before the server starts, fill "
            "writes through its API after)"
        )
    options = session or SessionOptions()
    criteria = criteria or BreakpointCriteria()
    params = params or BreakpointParams()
    for n, v, t in (
        ("load", load, LoadParams),
        ("criteria", criteria, BreakpointCriteria),
        ("params", params, BreakpointParams),
    ):
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
    with Session(
        "breakpoint",
        name,
        target,
        LoadTool.of(base),
        options,
        prefill=prefill,
        params={"load": base.to_dict(), "criteria": criteria.to_dict(), "breakpoint": params.to_dict(), "fill": fill},
    ) as sess:
        if fill is not None:
            fill_target(sess, fill, base)
        search_run = _Search(sess, base, criteria, params, progress, fill)
        found, estimate = search_run.run()
        for p in search_run.probes:
            p.discounted = p.judgement.passed is False and search_run.doubtful(p.judgement)
        kept = hold_mod.hold(found, params, search_run.window)
        result = BreakpointResult(
            kept.rate,
            kept.interval,
            kept.outcome,
            search_run.probes,
            params,
            criteria,
            kept.stop_reason,
            estimate.to_dict() if estimate else None,
            sess.run,
            round(time.monotonic() - t_start, 1),
            found.edges,
            hostspeed.spread(sess.calibrations),
            sess.thresholds.host_speed_warn,
            kept.at_least,
            found.rate,
            kept.holds,
            sess.quiet.summary(),
            kept.rates,
            search_run.conditions() if kept.holds else None,
        )
        record(sess.run, result, base, script)
    return result


class _Search:
    """One search in a session: the warm-up, the ramp, and the probes :func:`.search.search` asks for."""

    def __init__(
        self,
        sess,
        base: LoadParams,
        criteria: BreakpointCriteria,
        params: BreakpointParams,
        progress: bool,
        fill: int | None = None,
    ):
        self.sess, self.base, self.criteria, self.params, self.fill = sess, base, criteria, params, fill
        self.probes: list[Probe] = []
        #: requests sent to the server since it (last) started: for writes, the data the next window starts on
        self.sent = 0
        #: why held windows do not start fresh (``None``: they do), and what the last fresh start began on
        self.not_fresh = sess.target.why_not("restart") or (None if params.fresh_start else "fresh_start is off")
        self.storage: str | None = None
        want = params.bracket == "ramp" and base.tool == "perflab-load"
        self.use_ramp = ramp_mod.use_ramp(params, base, sess.split)
        if want and not self.use_ramp:
            sess.run.update(
                bracket="growth: the ramp cannot stop early when the load is split (several generator "
                "hosts or entry nodes)"
            )
        self.warm_s = ramp_mod.server_warmup(params, sess.handle.runs_jvm)
        if self.warm_s:
            sess.run.update(server_warmup_s=self.warm_s)
        self.bar = (
            tqdm(total=params.max_probes + int(self.use_ramp), desc=f"breakpoint {base.workload_name}", unit="probe")
            if progress
            else None
        )

    def run(self) -> tuple[Estimate, ramp_mod.RampEstimate | None]:
        estimate = None
        try:
            self.sess.wait_quiet(self.params.cooldown, self.params.quiet_wait)  # learns the machine's quiet level
            self.warm()
            if self.use_ramp:
                load = ramp_mod.ramp_load(self.base, self.params, self.criteria)
                estimate, first = ramp_mod.bracket(self.ramp_once(load), self.warm, self.criteria, self.warm_s)
                if first is not None:
                    self.sess.run.update(cold_ramp=first.to_dict())
                self.sess.run.update(ramp=estimate.to_dict())
                self._tick("cold ramp: growth" if estimate.cold else None)
            # a ramp that broke in its first second brackets nothing: the search grows from start_rate
            return search(
                self.probe, self.params, estimate.rate if estimate else None, doubtful=self.doubtful
            ), estimate
        finally:
            if self.bar is not None:
                self.bar.close()

    def warm(self) -> None:
        res = warm(
            self.sess,
            self.base.replace(rate=self.params.start_rate),
            self.warm_s,
            self.sess.run.path("server-warmup/x").parent,
        )
        self._sent(res)
        require_reads(self.sess, res, "the server's warm-up")

    def _sent(self, res: LoadResult | None) -> None:
        if res is not None:  # the measured window's requests and its warm-up's, sent at the same rate
            self.sent += res.requests + round(res.params.rate * res.params.warmup)

    def window(self, rate: float, phase: str, duration: float) -> Judgement:
        """One held window (:mod:`.hold`): on a fresh start of the server when it can have one (a new process on
        the storage as before the search, the fill written again, the server's warm-up run again)."""
        fresh = self.not_fresh is None
        if fresh:
            self.storage = self.sess.fresh_start()["storage"]
            self.sent = 0
            if self.fill is not None:
                fill_target(self.sess, self.fill, self.base)
                self.sent += self.fill
            self.warm()
        return self.probe(rate, phase, duration, fresh=fresh)

    def conditions(self) -> dict:
        """What a reader needs to reproduce the holds (:attr:`BreakpointResult.conditions`)."""
        return {
            "fresh_start": self.not_fresh is None,
            "not_fresh": self.not_fresh,
            "storage": self.storage,
            "fill": self.fill,
            "prefill": self.sess.prefill_params.keys if self.sess.prefill_params else None,
            "warmup_s": self.warm_s,
            "warmup_rate": self.params.start_rate if self.warm_s else None,
            "windows": self.params.hold_windows,
            "sustain_s": self.params.sustain,
            "connections": self.base.connections,
            "threads": self.base.threads,
            "script": self.base.workload_name,
        }

    def ramp_once(self, load: LoadParams):
        def ramp(name: str) -> LoadResult:
            res = self.sess.start_load(load, self.sess.run.path(f"{name}/x").parent, timed=False).wait()
            self._sent(res)
            require_reads(self.sess, res, "the bracketing ramp")
            return res

        return ramp

    def probe(self, rate: float, phase: str, duration: float | None = None, fresh: bool = False) -> Judgement:
        """One fixed-rate probe at ``rate`` (``duration``: its window, default the search's probe_duration;
        ``fresh``: the server was just started afresh for it)."""
        idx, sess = len(self.probes), self.sess
        t_idle = time.monotonic()
        if self.params.restart_server and idx and not fresh:
            sess.restart_target()
            self.sent = 0
            self.warm()
        sess.calibrate()  # the machine's own speed, while the server is idle
        # the rest of the idle time between probes is the first look at other programs' CPU
        quiet = sess.wait_quiet(max(0.0, self.params.cooldown - (time.monotonic() - t_idle)), self.params.quiet_wait)
        out = sess.run.path(f"probes/{idx:02d}-{int(rate)}/x").parent
        load = self.base.replace(rate=rate, **({"duration": duration} if duration else {}))
        got = run_probe(
            sess,
            load,
            out,
            self.criteria,
            row={"probe": idx, "phase": phase, **quiet.row()},
            intervals={"probe": idx, "rate": rate},
        )
        v = got.judgement
        v.metrics.update(quiet.row(), fresh_start=fresh, sent_before=self.sent)
        self._sent(got.load)
        self.probes.append(Probe(idx, rate, v, phase, got.load, out))
        self._tick(f"{rate:g}/s {'pass' if v.passed else 'FAIL' if v.passed is False else 'invalid'}")
        require_reads(sess, got.load, f"the probe at {rate:,.0f}/s")  # no other rate would find them either
        return v

    def doubtful(self, j: Judgement) -> bool:
        """A failure while other programs used more CPU than the session's quiet level allows (the level may
        have dropped since the probe ran): the machine's, not the server's."""
        others, checks = j.metrics.get("others_cores"), self.sess.quiet.checks
        if others is None or not checks:
            return False
        return others > self.sess.quiet.level + self.sess.thresholds.others_fail * checks[-1].others.cpus

    def _tick(self, note: str | None = None) -> None:
        if self.bar is not None:
            self.bar.update(1)
            if note:
                self.bar.set_postfix_str(note)


def record(run, result: BreakpointResult, base: LoadParams, script: str) -> None:
    """Record ``result`` in ``run``: probes.csv, the breakpoints row, the holds, the validity (again, when a second
    opinion changed the result)."""
    run.write_frame("probes.csv", result.table, artifact="probes")
    lo, hi = result.interval
    row = {
        "workload": _method_of(script) or script,
        "script": script,
        "breakpoint_rate": result.rate,
        "lo": lo,
        "hi": hi,
        "interval": [lo, hi],
        "edges": list(result.edges),
        "verdict": str(result.outcome),
        "converged": result.converged,
        "halfwidth": result.halfwidth,
        "validity": result.validity,
        "probes": len(result.probes),
        "stop_reason": result.stop_reason,
        "threads": base.threads,
        "connections": base.connections,
        "sla_p99_ms": result.criteria.sla_p99 * 1000,
        "precision": result.params.precision,
        "search_s": result.seconds,
        "host_spread": result.host_spread,
        "at_least": result.at_least,
        "search_rate": result.search_rate,
        "sustain_s": result.params.sustain if result.holds else None,
        "held": result.held,
        "overestimate": result.overestimate,
        "why": result.why,
        "quiet_waited_s": (result.quiet or {}).get("waited_s"),
        "others_max_cores": (result.others or {}).get("max_cores"),
        "others_median_cores": (result.others or {}).get("median_cores"),
        "held_windows": next((r.words for r in result.rates_held if r.rate == result.rate and r.held), None),
        "fresh_start": (result.conditions or {}).get("fresh_start"),
    }
    run.set_rows("breakpoints", [row])
    if result.holds:
        run.update(
            holds=[h.to_dict() for h in result.holds],
            hold_conditions=result.conditions,
            rates_held=[vars(r) for r in result.rates_held],
        )
    edges = [p for p in result.decisive if p.validity]
    reasons = sorted({f"{p.rate:,.0f}/s: {r}" for p in edges for r in p.validity.get("reasons", [])})
    if result.cold_start:
        reasons.insert(0, result.ramp["reason"] + ", with no warm-up before it")
    if result.outcome in (Outcome.CANNOT_TELL, Outcome.GENERATOR_LIMITED):
        reasons.insert(0, result.why or result.stop_reason)
    run.meta["validity"] = Validity.of_probes(
        result.validity,
        reasons,
        "edge_probes",
        len(edges),
        "validity of the conclusive probes at the interval's edges and of the held window",
    ).to_dict()
    run.set_result(**row)


def _method_of(script: str) -> str | None:
    """What a script sends, as the reports name a workload: GET, PUT, DELETE, status, range, mixed, ycsb."""
    s = script.lower()
    for m in ("get", "put", "delete", "status", "range", "mixed", "ycsb"):
        if m in s:
            return m.upper() if m in ("get", "put", "delete") else m
    return None
