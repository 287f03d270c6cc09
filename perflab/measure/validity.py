"""How valid a run is as a measure of the server: the validity record of every run and probe.

``assess(load, server, placement)`` runs the checks below and gives a level:

The level (:class:`Level`):

* ``invalid`` -- a check failed: the generator, not the server, set the numbers (its own schedule lag
  is most of the measured latency, or one of its threads was saturated). Such a run says nothing about
  the server; a breakpoint probe that is invalid is never counted as the server failing.
* ``suspect`` -- a check warned: the numbers stand, but something may have moved them (the offered rate
  was not delivered, the machine's CPUs were all busy, the first interval is a warm-up outlier,
  latency trends during the window, errors, the machine itself ran slower than its best in the session:
  :mod:`perflab.hostspeed`).
* ``valid`` -- nothing to report.

The thresholds are the fields of :class:`perflab.config.ValidityThresholds`, documented there once.
Checks that need data a tool does not give (wrk2 reports neither its lag nor its CPU) are ``n/a``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from ..config.validity import ValidityThresholds
from ..stats.significance import trend


class Level(StrEnum):
    """How far a run can be trusted as a measure of the server, best first."""

    VALID = "valid"
    SUSPECT = "suspect"
    INVALID = "invalid"

    @classmethod
    def worst(cls, levels: Iterable) -> Level | None:
        """The worst of ``levels`` (strings or levels; anything else is ignored), ``None`` if none is one."""
        order = list(cls)
        known = [cls(v) for v in levels if v in cls._value2member_map_]
        return max(known, key=order.index) if known else None


#: checks that, when they fail, mean the generator was the bottleneck
GENERATOR_CHECKS = ("schedule_lag", "generator_cpu")
#: checks that, when they fail, mean other programs on the machine took the CPU the server or the generator needed
MACHINE_CHECKS = ("others", "others_burst")
#: doubts about a measurement that cannot void a probe that kept up: they can only make the server look worse
NOT_AGAINST_A_PASS = GENERATOR_CHECKS + MACHINE_CHECKS
#: what an overloaded server shows by itself: in a breakpoint probe that failed, these are what the probe
#: found, not doubts about the measurement (which the other checks, the generator's above all, still raise)
OVERLOAD_SYMPTOMS = ("achieved_rate", "served", "stationarity", "errors")


@dataclass(frozen=True)
class Check:
    """One check: ``status`` ``ok`` / ``warn`` / ``fail`` / ``n/a``, the measured ``value``, the ``limit``
    it was held against and a ``note`` in words."""

    status: str
    value: float | bool | None = None
    limit: float | None = None
    note: str = ""

    def to_dict(self) -> dict:
        v = self.value
        if isinstance(v, float) and math.isfinite(v):
            v = round(v, 6)
        return {"status": self.status, "value": v, "limit": self.limit, "note": self.note}


@dataclass
class Validity:
    """The validity record: its ``level``, the ``reasons`` (failed checks first) and every check.
    Stored in ``meta.json`` as ``{"verdict": level, "reasons": [...], "checks": {...}}``."""

    level: Level
    reasons: list[str]
    checks: dict[str, Check] = field(default_factory=dict)

    @property
    def generator_bound(self) -> bool:
        """Whether the generator was the bottleneck (a generator check failed)."""
        return any(self.checks.get(n) is not None and self.checks[n].status == "fail" for n in GENERATOR_CHECKS)

    @property
    def badge(self) -> str:
        """'valid', or 'suspect: <first reason>' / 'invalid: <first reason>'."""
        return str(self.level) if not self.reasons else f"{self.level}: {self.reasons[0]}"

    def ignoring(self, names) -> Validity:
        """This record with the checks ``names`` kept but left out of the level and the reasons."""
        return _judge({k: c for k, c in self.checks.items() if k not in names}, self.checks)

    def to_dict(self) -> dict:
        return {
            "verdict": str(self.level) if self.level is not None else None,
            "reasons": list(self.reasons),
            "checks": {k: c.to_dict() for k, c in self.checks.items()},
        }

    @classmethod
    def of_probes(cls, level: Level | None, reasons: list[str], check: str, value, note: str) -> Validity:
        """A run's record built from its probes' records (a search's edges, a comparison's probes): ``level``
        (``None``: no probe), their ``reasons``, and one check ``check`` saying which probes it rests on."""
        return cls(level, list(reasons), {check: Check("ok" if level is Level.VALID else "warn", value, None, note)})

    @classmethod
    def lost(cls, cause: str) -> Validity:
        """The record of a run that lost a host: nothing it measured can be trusted."""
        return cls(Level.INVALID, [cause], {"hosts": Check("fail", None, None, cause)})

    @classmethod
    def from_dict(cls, d: dict | None) -> Validity | None:
        if not d:
            return None
        checks = {
            k: Check(c.get("status", "n/a"), c.get("value"), c.get("limit"), c.get("note", ""))
            for k, c in (d.get("checks") or {}).items()
        }
        return cls(Level(d.get("verdict", "suspect")), list(d.get("reasons") or []), checks)


def _fmt_ms(ms: float) -> str:
    return f"{ms * 1000:.0f} us" if ms < 0.1 else f"{ms:.2f} ms" if ms < 10 else f"{ms:.1f} ms"


def _achieved(load, t: ValidityThresholds) -> Check:
    r = load.achieved_ratio
    if not math.isfinite(r):
        return Check("n/a", note="no achieved rate reported")
    note = f"achieved {load.achieved_rate:,.0f}/s of {load.target_rate:,.0f}/s offered ({r:.1%})"
    return Check("warn" if r < t.min_achieved else "ok", r, t.min_achieved, note)


def _served(load, t: ValidityThresholds) -> Check:
    """How many answers served the request: a run answered with 504s (a cluster without its quorum), 503s (a
    full queue) or 400s (a request the server does not take) achieves its rate in answers, and its latency is
    of those answers. A GET's 404 is a miss, judged by :func:`reads_check`."""
    codes = load.status_counts
    if not codes or set(codes) <= {"non-2xx/3xx"}:
        return Check("n/a", note=f"{load.params.tool} does not count answers by status")
    n = sum(codes.values())
    bad = {k: v for k, v in codes.items() if not (k.isdigit() and (int(k) < 400 or k == "404"))}
    ratio = sum(bad.values()) / n if n else 0.0
    if not bad:
        return Check("ok", 0.0, t.max_error_ratio, f"every one of {n:,} answers was 2xx/3xx (or a GET's 404: a miss)")
    what = ", ".join(f"{v:,} x {k}" for k, v in sorted(bad.items(), key=lambda kv: -kv[1]))
    served = (n - sum(bad.values())) / load.duration_s if load.duration_s else math.nan
    note = (
        f"{ratio:.1%} of {n:,} answers were not a success ({what}): {served:,.0f}/s served of "
        f"{load.target_rate:,.0f}/s offered, and the latency figures include those answers"
    )
    if ratio >= 1.0:
        return Check("fail", ratio, t.max_error_ratio, note + "; not one request was served")
    return Check("warn" if ratio > t.max_error_ratio else "ok", ratio, t.max_error_ratio, note)


def reads_check(load, t: ValidityThresholds) -> Check:
    """Whether the reads found data: a GET load on an empty or unfilled store measures 404s, not reads."""
    ratio = load.hit_ratio
    if ratio is None:
        return Check("n/a", note="no reads (200 or 404 answers) to judge")
    n = load.hits + load.misses
    note = f"{ratio:.1%} of {n:,} reads found their key ({load.misses:,} answered 404)"
    if load.params.allow_misses:
        return Check("n/a", ratio, None, note + "; the workload asks for misses")
    if ratio < t.min_hit_ratio:
        return Check(
            "fail",
            ratio,
            t.min_hit_ratio,
            note + ": the store did not hold the keys read, so these are "
            "not reads of data; fill it first (prefill, or fill through the API), or give allow_misses",
        )
    return Check("ok", ratio, t.min_hit_ratio, note)


def _lag(load, t: ValidityThresholds) -> Check:
    lag = load.schedule_lag
    if not lag or "p99" not in lag:
        return Check("n/a", note=f"{load.params.tool} does not report its schedule lag")
    lag_ms, p99 = lag["p99"] / 1000.0, load.p99_ms
    share = lag_ms / p99 if p99 and p99 > 0 else math.inf
    note = f"generator's own send lag p99 {_fmt_ms(lag_ms)} against measured p99 {_fmt_ms(p99)} ({share:.0%})"
    if lag_ms * 1e-3 < t.lag_floor:
        return Check("ok", share, t.lag_share_warn, note)
    status = "fail" if share > t.lag_share_fail else "warn" if share > t.lag_share_warn else "ok"
    return Check(status, share, t.lag_share_fail if status == "fail" else t.lag_share_warn, note)


def _threads(load) -> list[dict]:
    cpu = load.generator_cpu or {}
    return [th for th in cpu.get("threads") or [] if isinstance(th, dict)]


def _generator_cpu(load, t: ValidityThresholds) -> Check:
    threads, dur = _threads(load), load.duration_s
    if not threads or not dur:
        return Check("n/a", note=f"{load.params.tool} does not report its CPU per thread")
    busiest = max(threads, key=lambda th: th.get("user_s", 0) + th.get("sys_s", 0))
    share = (busiest.get("user_s", 0) + busiest.get("sys_s", 0)) / dur
    total = sum(th.get("user_s", 0) + th.get("sys_s", 0) for th in threads)
    note = (
        f"busiest generator thread used {share:.0%} of a core ({len(threads)} threads, "
        f"{total / max(load.requests, 1) * 1e6:.1f} us CPU per request)"
    )
    status = "fail" if share > t.generator_cpu_fail else "warn" if share > t.generator_cpu_warn else "ok"
    return Check(status, share, t.generator_cpu_fail if status == "fail" else t.generator_cpu_warn, note)


def _runqueue(load, t: ValidityThresholds) -> Check:
    threads, dur = _threads(load), load.duration_s
    waits = [th["runqueue_wait_s"] for th in threads if th.get("runqueue_wait_s") is not None]
    if not waits or not dur:
        return Check("n/a", note="no run-queue times reported")
    share = max(waits) / dur
    note = f"a generator thread waited {share:.0%} of the window for a CPU"
    return Check("warn" if share > t.runqueue_warn else "ok", share, t.runqueue_warn, note)


def _server_cpu(server, placement) -> Check:
    if server is None:
        return Check("n/a", note="the server's CPU was not sampled")
    if placement is not None and placement.server_cpus:
        cpus = len(placement.server_cpus)
        where = f"the {cpus} CPU{'s' if cpus > 1 else ''} it was placed on"
    else:
        cpus, where = server.cpus, f"the machine's {server.cpus} CPUs"
    return Check(
        "ok", server.cores, None, f"the server used {server.cores:.2f} cores ({server.cores / cpus:.0%} of {where})"
    )


def _machine(server, t: ValidityThresholds) -> Check:
    if server is None or not math.isfinite(server.machine_busy):
        return Check("n/a", note="the machine's CPU was not sampled")
    note = f"{server.machine_busy:.0%} of all CPUs were busy"
    if server.machine_busy > t.machine_busy_warn:
        note += ": server and generator competed for CPU"
    return Check(
        "warn" if server.machine_busy > t.machine_busy_warn else "ok", server.machine_busy, t.machine_busy_warn, note
    )


def _others(server, quiet: float | None, t: ValidityThresholds) -> Check:
    """Other programs' CPU over the window (:mod:`perflab.server.machine`) against the session's quiet level
    (:mod:`perflab.core.quiet`): more than at the quietest moment means the machine changed under the probe.
    Its value is their cores, its limit the cores it was held to."""
    others = getattr(server, "others", None)
    if others is None:
        return Check("n/a", note="other programs' CPU was not read at the window's edges")
    note = f"other programs used {others.describe()} over the window"
    if quiet is not None:
        note += f", {quiet:.2f} at the session's quietest"
        for status, share, why in (
            ("fail", t.others_fail, "the machine, not the server, set these numbers"),
            ("warn", t.others_warn, "the machine was busier than at its quietest"),
        ):
            if others.cores > quiet + share * others.cpus:
                return Check(status, others.cores, round(quiet + share * others.cpus, 3), f"{note}: {why}")
    if others.share > t.shared_warn:
        return Check("warn", others.cores, t.shared_warn * others.cpus, note + ": a shared machine")
    bound = quiet + t.others_warn * others.cpus if quiet is not None else t.shared_warn * others.cpus
    return Check("ok", others.cores, round(bound, 3), note)


def _burst(server, quiet: float | None, t: ValidityThresholds) -> Check:
    """Other programs' CPU in the busiest stretch of the window (a quarter of a second): a burst its mean hides,
    which is enough to push a p99 over the SLA on its own."""
    peak, cpus = getattr(server, "others_peak", None), getattr(server, "cpus", None)
    if peak is None or quiet is None or not cpus:
        return Check("n/a", note="other programs' CPU was not read through the window")
    bound = round(quiet + t.others_fail * cpus, 3)
    if peak > bound:
        return Check(
            "warn",
            peak,
            bound,
            f"in a stretch of the window other programs took {peak:.2f} CPUs "
            f"({quiet:.2f} at the session's quietest): a burst its mean hides",
        )
    return Check("ok", peak, bound, f"other programs took at most {peak:.2f} CPUs in any stretch of the window")


def _sharing(placement) -> Check:
    if placement is None:
        return Check("n/a", note="placement not recorded")
    if placement.shares_cpus:
        return Check("ok", True, None, "server and generator shared the CPUs")
    return Check(
        "ok", False, None, f"server on CPUs {list(placement.server_cpus)}, generator on {list(placement.load_cpus)}"
    )


def _intervals(load):
    iv = load.intervals
    if iv is None or len(iv) == 0:
        return None
    return iv[iv["count"] > 0].reset_index(drop=True)


def _first_interval(load, t: ValidityThresholds) -> Check:
    iv = _intervals(load)
    if iv is None or len(iv) < 3:
        return Check("n/a", note="too few latency intervals")
    first, rest = float(iv["p99_ms"].iloc[0]), float(iv["p99_ms"].iloc[1:].median())
    ratio = first / rest if rest > 0 else math.inf
    bad = ratio > t.first_interval_factor and (first - rest) / 1000.0 > t.first_interval_floor
    note = f"first interval p99 {_fmt_ms(first)} against {_fmt_ms(rest)} in the others ({ratio:.1f}x)"
    if bad:
        note += ": a warm-up (JIT) outlier"
    return Check("warn" if bad else "ok", ratio, t.first_interval_factor, note)


def _stationarity(load, t: ValidityThresholds) -> Check:
    if load.params.ramp is not None or load.params.rate_steps is not None:
        return Check("n/a", note="the rate changes by design (ramp or steps)")
    iv = _intervals(load)
    if iv is None or len(iv) < t.min_intervals:
        return Check("n/a", note=f"fewer than {t.min_intervals} latency intervals")
    tr = trend(iv["p50_ms"])
    bad = tr.significant(t.trend_alpha, t.trend_change)
    word = "rises" if tr.change > 0 else "falls"
    note = (
        f"p50 {word} by {abs(tr.change):.0%} over the window ({tr.evidence})"
        if bad
        else f"no trend in p50 ({tr.evidence})"
    )
    return Check("warn" if bad else "ok", tr.p_value, t.trend_alpha, note)


def _errors(load, t: ValidityThresholds) -> Check:
    n = load.offered
    errs = load.unserved
    ratio = errs / n if n else (0.0 if errs == 0 else math.inf)
    note = f"{errs:,} of the {n:,} requests offered were not served (socket errors, 4xx but a GET's 404, 5xx)"
    return Check("warn" if ratio > t.max_error_ratio else "ok", ratio, t.max_error_ratio, note)


def _host_speed(host, t: ValidityThresholds) -> Check:
    if host is None or not host[0] or not host[1]:
        return Check("n/a", note="the machine's speed was not calibrated")
    around, session = host
    ratio = max(c.slowest for c in around) / min(c.fastest for c in session)
    note = (
        f"a fixed loop on each CPU took up to {ratio:.2f}x its fastest time of the session around the window "
        f"({min(c.fastest for c in session):.0f} us)"
    )
    if ratio > t.host_speed_warn:
        note += ": the machine itself ran slower (another tenant or its frequency), and the numbers with it"
    return Check("warn" if ratio > t.host_speed_warn else "ok", ratio, t.host_speed_warn, note)


def assess(
    load,
    server=None,
    placement=None,
    thresholds: ValidityThresholds | None = None,
    host=None,
    quiet: float | None = None,
) -> Validity:
    """The validity record of one load (a :class:`~perflab.measure.result.LoadResult`); ``server``: the
    server's :class:`~perflab.server.cpu.CpuWindow` over the measured window; ``placement``: the
    :class:`~perflab.server.placement.Placement` used; ``host``: ``(calibrations around the window, all
    of the session's)`` (:class:`~perflab.hostspeed.Calibration`); ``quiet``: the cores other programs
    used at the session's quietest (:mod:`perflab.core.quiet`; ``None``: not checked)."""
    t = thresholds or ValidityThresholds()  # a session's, checked once by SessionOptions
    checks = {
        "achieved_rate": _achieved(load, t),
        "served": _served(load, t),
        "hits": reads_check(load, t),
        "schedule_lag": _lag(load, t),
        "generator_cpu": _generator_cpu(load, t),
        "generator_runqueue": _runqueue(load, t),
        "server_cpu": _server_cpu(server, placement),
        "machine_cpu": _machine(server, t),
        "others": _others(server, quiet, t),
        "others_burst": _burst(server, quiet, t),
        "cpu_sharing": _sharing(placement),
        "first_interval": _first_interval(load, t),
        "stationarity": _stationarity(load, t),
        "errors": _errors(load, t),
        "host_speed": _host_speed(host, t),
    }
    return _judge(checks, checks)


def _judge(counted: dict, checks: dict) -> Validity:
    """The level from the ``counted`` checks (a failed check: invalid; a warning: suspect)."""
    fails = [c.note for c in counted.values() if c.status == "fail"]
    warns = [c.note for c in counted.values() if c.status == "warn"]
    level = Level.INVALID if fails else Level.SUSPECT if warns else Level.VALID
    return Validity(level, fails + warns, checks)


#: the checks each generator host is judged on by itself (its own share, lag, CPU and errors)
HOST_CHECKS = ("achieved_rate", "schedule_lag", "generator_cpu", "generator_runqueue", "errors")
_RANK = {"n/a": 0, "ok": 1, "warn": 2, "fail": 3}


def _load_share(v: Validity) -> float:
    """How close a generator host came to being the bottleneck: the larger of its lag share and its busiest
    thread's share of a core."""
    vals = [v.checks[n].value for n in ("schedule_lag", "generator_cpu") if n in v.checks]
    return max(
        [float(x) for x in vals if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)]
        or [0.0]
    )


def with_hosts(merged: Validity, hosts: dict[str, Validity], sharing: str | None = None) -> tuple[Validity, dict]:
    """The validity of one run from several generator hosts (or, in general, a load's parts: one per host and
    entry node of a cluster, :mod:`perflab.core.load`): ``merged`` (the merged load against the server's
    CPU, the machine's speed...) with each generator check replaced by the worst host's own (each host held
    to its own share of the rate, its own lag and CPU: :func:`assess` of its part), a ``generator_hosts``
    check (every host's verdict: the run is valid only if every host is) and ``cpu_sharing`` saying where
    things ran. Returns it and the bottleneck: the host that came closest to saturating (and whether it did)."""
    checks = dict(merged.checks)
    for name in HOST_CHECKS:
        worst = max(
            ((h, v.checks[name]) for h, v in hosts.items() if name in v.checks),
            key=lambda hc: (
                _RANK.get(hc[1].status, 0),
                hc[1].value if isinstance(hc[1].value, (int, float)) and name != "achieved_rate" else 0,
            ),
            default=None,
        )
        if worst is None:
            continue
        h, c = worst
        if name == "achieved_rate":
            # the merged rate against the whole run's stays; a host that fell short of its share is added
            if c.status == "warn":
                checks["host_achieved_rate"] = Check(c.status, c.value, c.limit, f"{h}: {c.note}")
            continue
        if name == "errors":
            continue  # the merged count already holds every host's errors
        checks[name] = Check(c.status, c.value, c.limit, f"{h}: {c.note}")
    levels = {h: v.level for h, v in hosts.items()}
    worst_level = Level.worst(levels.values())
    note = "generator hosts: " + "; ".join(
        f"{h} {lv}" + (f" ({hosts[h].reasons[0]})" if hosts[h].reasons else "") for h, lv in levels.items()
    )
    # counted only through the checks above: its own status would repeat their reasons
    checks["generator_hosts"] = Check("ok", len(hosts), None, note)
    if sharing is not None:
        checks["cpu_sharing"] = Check("ok", False, None, sharing)
    judged = _judge(checks, checks)
    if Level.worst([judged.level, worst_level]) != judged.level:
        # a host judged worse on a check that is not one of the above (its own first interval or trend)
        extra = [f"{h}: {r}" for h, v in hosts.items() if v.level == worst_level for r in v.reasons]
        judged = Validity(worst_level, judged.reasons + extra, checks)
    top = max(hosts, key=lambda h: _load_share(hosts[h]))
    bottleneck = {
        "host": top,
        "generator_bound": hosts[top].generator_bound,
        "load": round(_load_share(hosts[top]), 4),
        "why": "; ".join(
            hosts[top].checks[n].note for n in ("schedule_lag", "generator_cpu") if n in hosts[top].checks
        ),
    }
    return judged, bottleneck
