"""``compare_ab``: two servers (or configurations, or commits) measured interleaved, with a paired verdict.

Both servers are started side by side (each in its own :class:`~perflab.core.session.Session`, prefilled
identically when asked) and kept running; optionally restarted before every block. After a warm-up of
each, probes alternate in balanced blocks (:mod:`.design`) at the same offered rates, every probe with
its validity record; each adjacent A-B pair gives ratios of p50, p99, p99.9 and the server's CPU per
request (:data:`perflab.config.ab.METRIC`) and pass/fail at the SLA, and the stop rule
(:mod:`perflab.stats.paired`) decides after every block whether to go on. A pair
with an invalid probe (the generator, not the server, set its numbers) counts in the test by default:
the generator's lateness is in both sides' latency, which pulls the ratio toward 1, and under A/A the
pairs stay exchangeable, so the false-claim bound holds (``drop_invalid`` leaves such pairs out); the
run's validity says how many there were. Afterwards the idle side's cost is measured: A's probes with B
idle but running against A's probes with B frozen by SIGSTOP, interleaved the same way. In breakpoint mode two searches run with
their probes interleaved (:mod:`.searches`) and the ratio of the breakpoints carries an interval.

Everything is one run of kind ``ab`` (:mod:`.result`). Bad input raises ``ValueError`` naming it before
any process starts; a side that fails to start raises :class:`SideError`, the run is marked failed and
nothing is recorded as a comparison. Ctrl-C or SIGTERM stops both servers and the generator and marks
the run interrupted; a frozen server is always thawed first.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import time
import warnings

import pandas as pd
from tqdm.auto import tqdm

from .. import children, fmt, hostspeed, paths
from ..breakpoint import ramp as ramp_mod
from ..breakpoint.run import BreakpointResult, Probe
from ..config import BreakpointCriteria, BreakpointParams, LoadParams, PrefillParams
from ..config.ab import METRIC, ABParams
from ..config.fields import Spec, convert
from ..config.version import Version
from ..core.fill import check_fill
from ..core.fill import fill as fill_target
from ..core.probe import probe as run_probe
from ..core.probe import require_reads, warm
from ..core.session import HOST_KEYWORDS, Session, SessionOptions
from ..errors import PerflabError
from ..hosts.pool import LOCAL
from ..measure.generator import LoadTool
from ..measure.validity import Level, Validity
from ..records import new_run
from ..records.environment import environment
from ..stats import paired
from ..stats.methods import Method
from . import design
from . import profiles as profiles_mod
from . import result as result_mod
from . import sides as sides_mod
from .result import ABResult, IdleCost, RateVerdict
from .searches import interleaved


def value(res, metric: str) -> float:
    """``metric``'s value in one probe's result (:data:`perflab.config.ab.METRIC` says where it is)."""
    v = res.record()[METRIC[metric].key]
    return math.nan if v is None else float(v)


class SideError(PerflabError):
    """A side could not be started (its server exited or never answered)."""


def _rates(rates, load: LoadParams) -> tuple[float, ...]:
    if rates is None:
        return (load.rate,)
    if isinstance(rates, (int, float, str)):
        rates = [rates]
    out = tuple(convert(f"rates[{i}]", Spec("rate", "", min=0, min_open=True), r) for i, r in enumerate(rates))
    if not out:
        raise ValueError("rates: give at least one rate")
    if len(set(out)) != len(out):
        raise ValueError(f"rates: each rate once, got {list(out)}")
    return out


def _check(load, rates, params, criteria, search, name, session: SessionOptions):
    """Every argument checked before anything starts: the rates, the probes' load (one per rate), what of the
    session options a comparison cannot take. Returns ``(rates, probe load)``."""
    for n, v, t in (
        ("load", load, LoadParams),
        ("params", params, ABParams),
        ("criteria", criteria, BreakpointCriteria),
    ):
        if not isinstance(v, t):
            raise ValueError(f"{n} must be a {t.__name__}, got {type(v).__name__}")
    if search is not None:
        if not isinstance(search, BreakpointParams):
            raise ValueError(f"search must be a BreakpointParams, got {type(search).__name__}")
        if rates is not None:
            raise ValueError("rates and search are exclusive: compare at fixed rates, or compare breakpoints")
        if params.profile:
            raise ValueError("profile: the CPU per request by category is compared at fixed rates, not by breakpoints")
    rate_list = _rates(rates, load) if search is None else ()
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if session.data_dir is not None:
        raise ValueError("data_dir: an A/B comparison gives each side a storage directory of its own")
    if session.version != Version():
        raise ValueError(
            "version: a comparison measures two versions; each side's run records its own (a commit's build its commit)"
        )
    hosts = [k for k in HOST_KEYWORDS if getattr(session, k) is not None]
    if hosts:
        raise ValueError(
            f"{', '.join(hosts)}: an A/B comparison runs both servers and the generator on this machine "
            f"(its in-process hosts); comparisons on a scheduler's hosts are not supported"
        )
    if search is None:
        probe = load.for_probe(params.probe_duration, params.warmup)
        for r in rate_list:
            probe.replace(rate=r)  # every probe's load is valid before anything starts
        probe = probe.replace(rate=rate_list[0])  # the record's load_rate is the first rate compared
    else:
        script_args = tuple(load.script_args) + ((f"seed={search.seed}",) if search.seed_arg else ())
        probe = load.for_probe(search.probe_duration, search.warmup).replace(script_args=script_args)
    return rate_list, probe


def _check_sides(side_list, prefill, restarts: bool):
    """What each side's target can do, against what the comparison asks of it."""
    if prefill is not None and not isinstance(prefill, PrefillParams):
        raise ValueError(f"prefill must be a PrefillParams, got {type(prefill).__name__}")
    for s in side_list:
        for feature, asked in (("prefill", prefill is not None), ("restart", restarts)):
            why = s.spec.why_not(feature) if asked else None
            if why is not None:
                raise ValueError(
                    f"{'restart_per_block' if feature == 'restart' else feature}: side {s.name} ({s.label}): {why}"
                )


def _notes(side_list, params: ABParams, family) -> list[str]:
    """What the caller should know before the comparison runs (warned, and recorded in the run)."""
    notes = []
    if sides_mod.identical(*side_list):
        notes.append(
            "A and B are the same configuration: this is an A/A comparison (it measures the method's "
            "own noise and what differs between two processes of one configuration, not a change: two "
            "JVMs' CPU per request can differ for good, their JIT having compiled differently)"
        )
    if family is not None and family.first_claim > params.max_pairs:
        notes.append(
            f"with at most {params.max_pairs} pairs no difference can be claimed: at level "
            f"{fmt.p_sci(family.level)} a claim needs {family.first_claim} pairs (raise max_pairs or alpha)"
        )
    return notes


def compare_ab(
    a,
    b,
    load: LoadParams,
    rates=None,
    params: ABParams | None = None,
    criteria: BreakpointCriteria | None = None,
    search: BreakpointParams | None = None,
    prefill: PrefillParams | None = None,
    name: str | None = None,
    progress: bool = True,
    fill: int | None = None,
    session: SessionOptions | None = None,
) -> ABResult:
    """Compare B with A, measured interleaved (see the module docstring).

    ``a``, ``b``: a ``ServerConfig``, a ``ForeignServer`` (your server's command, or a URL), or a
    :class:`~perflab.commits.Commit`. ``load``: the workload (script, connections...); its rate is the
    one compared unless ``rates`` gives one or several. ``search``: compare breakpoints instead, with two
    interleaved searches of these parameters. ``params``: :class:`~perflab.config.ABParams` (probe
    length, stop rule, budget, restarts, idle-cost pairs); ``criteria``: the SLA of pass/fail (and of the
    searches). ``session``: :class:`~perflab.core.session.SessionOptions` (``data_root``, ``placement``...; not
    its host fields: both servers and the generator run on this machine, on its in-process hosts).
    Returns an :class:`~perflab.ab.result.ABResult`; its ``lines()`` are the verdicts in words.
    """
    params = params or ABParams()
    criteria = criteria or BreakpointCriteria()
    check_fill(fill)
    if prefill is not None and fill is not None:
        raise ValueError(
            "prefill and fill: give one (prefill writes the storage before a server starts, fill "
            "writes through its API after)"
        )
    sess_opts = session or SessionOptions()
    rate_list, probe = _check(load, rates, params, criteria, search, name, sess_opts)
    data_root = paths.data_root(sess_opts.data_root)
    side_list = (sides_mod.make_side("A", a, data_root / "builds"), sides_mod.make_side("B", b, data_root / "builds"))
    sides_mod.label(side_list)
    _check_sides(side_list, prefill, params.restart_per_block or (search is not None and search.restart_server))
    extra = len(profiles_mod.CATEGORIES) if params.profile else 0  # each category is a test of the family
    family = (
        paired.Family(params.alpha, params.max_pairs, len(rate_list), extra, params.stop_at == "not-worse")
        if search is None
        else None
    )
    notes = _notes(side_list, params, family)
    for n in notes:
        warnings.warn(n, UserWarning, stacklevel=2)

    name = name or f"ab-{load.workload_name}-{'breakpoint' if search else 'rates'}"
    tool = LoadTool.of(probe)
    run_params = {
        "a": side_list[0].to_dict(),
        "b": side_list[1].to_dict(),
        "load": probe.to_dict(),
        "rates": list(rate_list),
        "mode": "breakpoint" if search else "rates",
        "ab": params.to_dict(),
        "criteria": criteria.to_dict(),
        "breakpoint": search.to_dict() if search else None,
        "prefill": prefill.to_dict() if prefill else None,
        "validity": sess_opts.thresholds.to_dict(),
    }
    run = new_run("ab", name, run_params, data_root, environment=environment({tool.name: tool.version()}))
    run.meta["placement"] = sess_opts.placement.to_dict()
    run.update(warnings=notes)
    t_start = time.monotonic()
    with run, children.sigterm_as_exception(), contextlib.ExitStack() as stack:
        sessions = _start_sides(stack, run, side_list, tool, sess_opts, prefill, data_root)
        if fill is not None:  # each side through its own API, with the probes' keys and values
            run.update(fill={n: fill_target(x, fill, probe) for n, x in sessions.items()})
        m = _Measure(run, side_list, sessions, params, criteria, progress)
        if search is None:
            res = m.rates(probe, rate_list, family)
        else:
            res = m.breakpoints(probe, search)
        res.warnings = notes
        res.seconds = round(time.monotonic() - t_start, 1)
        result_mod.record(res)
        m.record_validity()
    return res


def _start_sides(stack, run, side_list, tool, sess_opts, prefill, data_root) -> dict[str, Session]:
    """Prefill (each side with its own build) and start both sessions, A first."""
    scratch = data_root / "scratch" / run.id
    if not sess_opts.keep_data:
        stack.callback(shutil.rmtree, scratch, ignore_errors=True)
    dirs, filled = {}, {}
    if prefill is not None:
        for s in side_list:
            dirs[s.name] = scratch / s.name / "db"
            filled[s.name] = sides_mod.prefill(s, dirs[s.name], prefill)
        run.update(prefill={k: v for k, v in filled.items()})
    sessions = {}
    for s in side_list:
        # both sides on this machine's in-process hosts, whatever $PERFLAB_SCHEDULER and its kin say (a report
        # on a scheduler's hosts runs this notebook's comparison here): one lease-free host for two servers
        opts = sess_opts.replace(
            data_root=run.dir / "sides", data_dir=dirs.get(s.name), scheduler="local", generators=1, server_host=LOCAL
        )
        sess = Session(
            "ab-side", f"{s.name}-{s.label}", s.target, tool, opts, params={"side": s.to_dict(), "ab_run": run.id}
        )
        try:
            stack.enter_context(sess)
        except PerflabError as e:
            raise SideError(f"side {s.name} ({s.label}) did not start: {e.cause}", e.log_tail) from None
        if s.name in filled:
            sess.run.update(prefill=filled[s.name])
        sessions[s.name] = sess
    run.update(
        sides={
            n: {"run": os.path.relpath(x.run.dir, run.dir), "url": x.handle.url, "pid": x.handle.pid}
            for n, x in sessions.items()
        }
    )
    return sessions


class _Measure:
    """The measuring part of one comparison: probes, blocks, the idle cost, the searches."""

    def __init__(self, run, side_list, sessions, params: ABParams, criteria: BreakpointCriteria, progress: bool):
        self.run, self.sides, self.sess = run, {s.name: s for s in side_list}, sessions
        self.side_list = side_list
        self.params, self.criteria = params, criteria
        self.progress = progress
        self.probes: list[dict] = []
        self.bar = None

    # --- one probe -------------------------------------------------------------------------------
    def calibrate(self):
        """The machine's speed once for both sides (they share it), while no load runs."""
        cal = self.sess["A"].calibrate()
        self.sess["B"].calibrations.append(cal)

    def probe(
        self,
        side: str,
        load: LoadParams,
        phase: str,
        block: int | None = None,
        position: int | None = None,
        cooldown: float | None = None,
    ) -> dict:
        time.sleep(self.params.cooldown if cooldown is None else cooldown)
        seq = len(self.probes)
        out = self.run.path(f"probes/{seq:04d}-{side}-{int(load.rate)}/x").parent
        got = run_probe(
            self.sess[side],
            load,
            out,
            self.criteria,
            run=self.run,
            row={
                "probe": seq,
                "side": side,
                "label": self.sides[side].label,
                "phase": phase,
                "block": block,
                "position": position,
            },
        )
        rec = {
            "seq": seq,
            "side": side,
            "rate": load.rate,
            "phase": phase,
            "block": block,
            "position": position,
            "result": got.load,
            "validity": got.validity,
            "judgement": got.judgement,
            "dir": out,
        }
        self.probes.append(rec)
        return rec

    def warm(self, load: LoadParams, seconds: float):
        for side in ("A", "B"):
            self.warm_one(side, load, seconds)

    def warm_one(self, side: str, load: LoadParams, seconds: float):
        res = warm(self.sess[side], load, seconds, self.run.path(f"warmup/{len(self.probes):04d}-{side}/x").parent)
        require_reads(self.sess[side], res, f"side {side}'s warm-up ({self.sides[side].label})")

    def restart(self):
        for side in ("A", "B"):
            try:
                self.sess[side].restart_target()
            except PerflabError as e:
                raise SideError(
                    f"side {side} ({self.sides[side].label}) did not restart: {e.cause}", e.log_tail
                ) from None

    # --- fixed rates -----------------------------------------------------------------------------
    def rates(self, probe_load: LoadParams, rates: tuple, family: paired.Family) -> ABResult:
        p = self.params
        rules = {
            r: paired.StopRule(family, p.metric, p.margin, p.min_pairs, p.seed, p.stop_at == "not-worse") for r in rates
        }
        pairs = {r: [] for r in rates}
        blocks = {r: 0 for r in rates}
        done: dict[float, RateVerdict] = {}
        if self.progress:
            self.bar = tqdm(total=p.max_pairs * len(rates), desc="A/B pairs", unit="pair")
        t0 = time.monotonic()
        self.warm(probe_load.replace(rate=rates[0]), p.server_warmup)
        profiles = profiles_mod.SideProfiles(self.run, self.sess).start() if p.profile else None
        try:
            block = 0
            while len(done) < len(rates):
                if p.restart_per_block and block:
                    self.restart()
                    self.warm(probe_load.replace(rate=rates[0]), p.server_warmup)
                self.calibrate()
                for r in rates:
                    if r in done:
                        continue
                    out_of_time = p.budget is not None and time.monotonic() - t0 >= p.budget
                    if not out_of_time:
                        pairs[r] += self._block(probe_load.replace(rate=r), blocks[r])
                        blocks[r] += 1
                        out_of_time = p.budget is not None and time.monotonic() - t0 >= p.budget
                    verdict, stop = self._check(rules[r], pairs[r], out_of_time)
                    if self.bar is not None:
                        self.bar.n = sum(len(v) for v in pairs.values())
                        self.bar.set_postfix_str(f"{fmt.rate(r)}: {p.metric} B/A {fmt.ratio(verdict.ratio)}")
                    if stop is not None:
                        done[r] = self._finish(r, pairs[r], verdict, stop, family)
                block += 1
        except BaseException:
            if profiles is not None:
                profiles.abort()
            raise
        finally:
            if self.bar is not None:
                self.bar.close()
        if profiles is not None:
            self._categories(profiles, pairs, done, family)
        idle = self.idle_cost(probe_load.replace(rate=max(rates)))
        table = pd.DataFrame([row for r in rates for row in pairs[r]])
        return ABResult(
            self.run,
            self.side_list,
            "rates",
            Method.INTERLEAVED_PAIRS,
            [done[r] for r in rates],
            idle_cost=idle,
            pairs=table,
            family=family,
            metric=p.metric,
            margin=p.margin,
            sla_ms=self.criteria.sla_p99 * 1000,
        )

    def _block(self, load: LoadParams, block: int) -> list[dict]:
        order = design.block_order(block)
        recs = [self.probe(side, load, "pair", block, pos) for pos, side in enumerate(order)]
        rows = []
        for slot in design.pairs_of(order):
            ra, rb = recs[slot.a_pos], recs[slot.b_pos]
            bad = [x["side"] for x in (ra, rb) if x["validity"].level is Level.INVALID]
            drop = bool(bad) and self.params.drop_invalid
            row = {
                "rate": load.rate,
                "block": block,
                "pair": 2 * block + slot.index,
                "first": slot.first,
                "a_probe": ra["seq"],
                "b_probe": rb["seq"],
                "used": not drop,
                "invalid": ",".join(bad) or None,
                "why_not": f"{' and '.join(bad)} invalid: the generator set the numbers" if drop else None,
            }
            for m in METRIC.values():
                va, vb = value(ra["result"], m.name), value(rb["result"], m.name)
                row[f"a_{m.column}"], row[f"b_{m.column}"] = va, vb
                row[f"log_ratio_{m.name}"] = math.log(vb / va) if va > 0 and vb > 0 else math.nan
            row.update(
                a_passed=ra["judgement"].passed,
                b_passed=rb["judgement"].passed,
                a_validity=str(ra["validity"].level),
                b_validity=str(rb["validity"].level),
            )
            rows.append(row)
        return rows

    @staticmethod
    def _values(rows: list[dict], metric: str) -> tuple[list, list]:
        col = METRIC[metric].column
        a = [r[f"a_{col}"] if r["used"] else math.nan for r in rows]
        b = [r[f"b_{col}"] if r["used"] else math.nan for r in rows]
        return a, b

    def _check(self, rule: paired.StopRule, rows: list[dict], out_of_time: bool):
        a, b = self._values(rows, rule.metric)
        return rule.check(a, b, len(rows), out_of_time)

    def _finish(self, rate, rows, primary, stop, family) -> RateVerdict:
        p = self.params
        others = {}
        for m in paired.METRICS:
            if m != p.metric:
                a, b = self._values(rows, m)
                others[m] = paired.paired_ratio(a, b, m, family.level, p.margin, p.min_pairs, p.seed)
        used = [r for r in rows if r["used"]]
        passing = paired.pass_fail([r["a_passed"] for r in used], [r["b_passed"] for r in used], family.level)
        return RateVerdict(rate, primary, others, passing, stop, p.budget, len(rows))

    # --- where the CPU goes, by category ------------------------------------------------------------
    def _categories(self, profiles, pairs: dict, done: dict, family: paired.Family) -> None:
        """Each pair's microseconds per request by category (:mod:`.profiles`), and each rate's verdicts."""
        probes = {r["seq"]: r for r in self.probes if r["phase"] == "pair"}
        windows = {}
        for side in ("A", "B"):
            mine = [r["result"] for r in probes.values() if r["side"] == side]
            windows[side] = (min(x.measure_start for x in mine), max(x.measure_end for x in mine))
        profiles.stop(windows)
        if profiles.unavailable:
            self.run.update(
                warnings=[
                    *self.run.meta.get("warnings", []),
                    *(
                        f"side {s}: no profile, so no CPU per request by category ({why})"
                        for s, why in profiles.unavailable.items()
                    ),
                ]
            )
            return
        rows = []
        for rate, rate_pairs in pairs.items():
            for pr in rate_pairs:
                row = {"rate": rate, "pair": pr["pair"], "used": pr["used"]}
                for side in ("a", "b"):
                    rec = probes[pr[f"{side}_probe"]]
                    res = rec["result"]
                    shares = profiles.shares(rec["side"], rec["seq"], (res.measure_start, res.measure_end))
                    for c, us in profiles_mod.per_request(res.cpu_us_per_request, shares).items():
                        row[f"{side}_{c}"] = us if pr["used"] else math.nan
                rows.append(row)
        table = pd.DataFrame(rows)
        profiles_mod.write(self.run, table)
        p = self.params
        for rate, verdict in done.items():
            verdict.categories = profiles_mod.verdicts(table[table["rate"] == rate], family.level, p.min_pairs, p.seed)

    # --- what the idle side costs ----------------------------------------------------------------
    def idle_cost(self, load: LoadParams) -> IdleCost | None:
        """A's probes with B idle but running against A's with B frozen, ``idle_pairs`` pairs in the same
        balanced order (condition "A" = B running, "B" = B frozen)."""
        p = self.params
        if not p.idle_pairs or self.sides["B"].spec.why_not("pause") is not None:
            return None
        self.calibrate()
        rows, block = [], 0
        while len(rows) < p.idle_pairs:
            order = design.block_order(block)
            recs = []
            for pos, cond in enumerate(order):
                if cond == "B":
                    with sides_mod.frozen(self.sess["B"]):
                        recs.append(self.probe("A", load, "idle-cost-frozen", block, pos))
                else:
                    recs.append(self.probe("A", load, "idle-cost-running", block, pos))
            for slot in design.pairs_of(order):
                rows.append((recs[slot.a_pos], recs[slot.b_pos]))
            block += 1
        rows = rows[: p.idle_pairs]
        ratios = {}
        ok = [
            (r, f_)
            for r, f_ in rows
            if not p.drop_invalid or Level.INVALID not in (r["validity"].level, f_["validity"].level)
        ]
        for m in METRIC:
            # one test per metric at the comparison's alpha: with a few pairs it cannot claim (and says so)
            ratios[m] = paired.paired_ratio(
                [value(x["result"], m) for _, x in ok],
                [value(x["result"], m) for x, _ in ok],
                m,
                p.alpha,
                p.margin,
                min_pairs=2,
                seed=p.seed,
            )
        return IdleCost(load.rate, ratios)

    # --- breakpoints -----------------------------------------------------------------------------
    def breakpoints(self, probe_load: LoadParams, search: BreakpointParams) -> ABResult:
        use_ramp = ramp_mod.use_ramp(search, probe_load, split=False)
        warm_s = ramp_mod.server_warmup(search, all(x.handle.runs_jvm for x in self.sess.values()))
        self.warm(probe_load.replace(rate=search.start_rate), warm_s)
        estimates, ramps, cold = {}, {}, {}
        ramp_load = ramp_mod.ramp_load(probe_load, search, self.criteria)
        for side in ("A", "B"):
            if use_ramp:
                ramps[side], first = ramp_mod.bracket(
                    lambda name: (
                        self.sess[side]
                        .start_load(ramp_load, self.run.path(f"{name}-{side}/x").parent, timed=False)
                        .wait()
                    ),
                    lambda: self.warm_one(side, probe_load.replace(rate=search.start_rate), warm_s),
                    self.criteria,
                    warm_s,
                )
                if first is not None:
                    cold[side] = first.to_dict()
            estimates[side] = ramps[side].rate if side in ramps else None
        self.run.update(ramps={s: r.to_dict() for s, r in ramps.items()}, **({"cold_ramps": cold} if cold else {}))
        per_side: dict[str, list[Probe]] = {"A": [], "B": []}
        t_start = time.monotonic()
        if self.progress:
            self.bar = tqdm(total=2 * search.max_probes, desc="A/B searches", unit="probe")

        def probe(side, rate, phase):
            if search.restart_server and per_side[side]:
                self.sess[side].restart_target()
                self.warm_one(side, probe_load.replace(rate=search.start_rate), warm_s)
            self.calibrate()
            rec = self.probe(side, probe_load.replace(rate=rate), f"search-{phase}", cooldown=search.cooldown)
            j = rec["judgement"]
            per_side[side].append(Probe(len(per_side[side]), rate, j, phase, rec["result"], rec["dir"]))
            if self.bar is not None:
                self.bar.update(1)
                self.bar.set_postfix_str(
                    f"{side} {rate:g}/s {'pass' if j.passed else 'FAIL' if j.passed is False else 'invalid'}"
                )
            return j

        try:
            found = interleaved(probe, search, estimates)
        finally:
            if self.bar is not None:
                self.bar.close()
        seconds = time.monotonic() - t_start
        results = {}
        for side, est in found.items():
            results[side] = BreakpointResult(
                est.rate,
                est.interval,
                est.outcome,
                per_side[side],
                search,
                self.criteria,
                est.stop_reason,
                ramps[side].to_dict() if side in ramps else None,
                None,
                round(seconds, 1),
                est.edges,
            )
            results[side].host_spread = hostspeed.spread(self.sess[side].calibrations)
            self.run.write_frame(f"probes-{side}.csv", results[side].table, artifact=f"probes_{side}")
        ra, rb = results["A"], results["B"]
        verdict = paired.interval_ratio(ra.rate, ra.interval, rb.rate, rb.interval, self.params.margin)
        idle = None
        if ra.rate and rb.rate:
            idle = self.idle_cost(
                probe_load.replace(
                    duration=self.params.probe_duration,
                    warmup=self.params.warmup,
                    rate=round(0.8 * min(ra.rate, rb.rate)),
                )
            )
        return ABResult(
            self.run,
            self.side_list,
            "breakpoint",
            Method.INTERLEAVED_SEARCHES,
            breakpoint=verdict,
            searches=results,
            idle_cost=idle,
            metric="breakpoint",
            margin=self.params.margin,
            sla_ms=self.criteria.sla_p99 * 1000,
        )

    # --- the run's validity ----------------------------------------------------------------------
    def record_validity(self):
        """The run's validity from its measured probes' (warm-ups aside): ``invalid`` when most probes
        were (the generator set most numbers), ``suspect`` when any probe was invalid or suspect, ``valid``
        otherwise; the reasons of every probe that had any."""
        raw = [str(r["validity"].level) for r in self.probes if r["phase"] != "warmup"]
        counts = {str(lv): sum(x == str(lv) for x in raw) for lv in Level}
        if not raw:
            level = None
        elif counts["invalid"] * 2 > len(raw):
            level = Level.INVALID
        elif counts["invalid"] or counts["suspect"]:
            level = Level.SUSPECT
        else:
            level = Level.VALID
        reasons = (
            [
                f"{counts['invalid']} of {len(raw)} probes were invalid (the generator, not the server, set their "
                f"numbers)"
            ]
            if counts["invalid"]
            else []
        )
        reasons += sorted(
            {
                f"{r['side']} {fmt.rate(r['rate'])}: {why}"
                for r in self.probes
                if r["phase"] != "warmup"
                for why in r["validity"].reasons
            }
        )[:50]
        note = "validity of every measured probe; pairs with an invalid probe are " + (
            "left out of the test" if self.params.drop_invalid else "kept (their ratio is pulled toward 1)"
        )
        self.run.meta["validity"] = Validity.of_probes(level, reasons, "probes", counts, note).to_dict()
        self.run.save()
