"""Sentences about cluster runs, generated from what they recorded (:class:`~perflab.cluster_run.ClusterResult`).

Like every sentence of the lab, one claims a difference only with a test (it calls
:func:`perflab.analysis.latency.compare_latency` and :func:`perflab.analysis.breakpoints.compare_breakpoints`)
and gives n; the consistency verdict (:func:`describe_consistency`) is the checker's exact counts against what
the ack/from invariants predict.
"""

from __future__ import annotations

from collections.abc import Mapping

from ... import fmt
from ...breakpoint.ramp import estimate
from ..findings import RAMP_ESTIMATE
from ..latency import compare_latency, describe_trend, levels
from ..profiles import describe_categories, unsplit


def describe_consistency(verdict) -> str:
    """The checker's verdict (:class:`~perflab.nodes.checker.Verdict`) in words: its counts, and whether they
    agree with what ack/from predict ('... no stale, missed or resurrected read, as predicted (...)')."""
    c, prediction = verdict.counts, verdict.prediction
    seen = ", ".join(
        f"{n} {k if k != 'missed' else 'missed acknowledged writes'}".replace("stale", "stale reads")
        .replace("resurrected", "resurrected deletes")
        .replace("unknown", "reads of values never written")
        for k, n in verdict.seen.items()
    )
    head = (
        f"Consistency ({prediction.write} writes, {prediction.read} reads): {c['reads']:,} reads "
        f"judged against {c['acknowledged']:,} acknowledged writes and deletes "
        f"({c['unavailable']:,} reads unavailable, {c['unacknowledged']:,} writes not acknowledged)"
    )
    if verdict.violated:
        return f"{head}: **VIOLATION**: {seen}, where the invariant predicts none ({prediction.reason})."
    if verdict.anomalies:
        return f"{head}: {seen}, as the configuration allows ({prediction.reason})."
    if prediction.never:
        return f"{head}: no stale, missed or resurrected read, as predicted ({prediction.reason})."
    return (
        f"{head}: none seen, but the configuration does not rule them out ({prediction.reason}); "
        f"their absence here is no proof."
    )


def ramp_estimate(res, criteria):
    """The ramp's breakpoint estimate (:class:`~perflab.breakpoint.ramp.RampEstimate`) of a run of
    :func:`ramp_load`: the offered rate of the last interval before p99 missed the SLA in two in a row."""
    return estimate(res.load, criteria)


def describe_ramps(ramps: Mapping[str, object], criteria) -> str:
    """Ramp estimates in words ('1 node: the ramp kept up until 4.1 s (2,300/s offered)...'), said to be
    estimates: a ramp is not a steady state, and only probes at fixed rates (the full plan's search) give a
    breakpoint with an interval a difference can be claimed on."""
    parts = [f"{k}: {ramp_estimate(r, criteria).reason}" for k, r in ramps.items()]
    return (
        "Ramp estimates (one exponential ramp each, no fixed-rate probes, so no interval and no claimed "
        "difference): " + "; ".join(parts) + "."
    )


def ramp_rows(ramps: Mapping[str, object], criteria, workload: str) -> list[dict]:
    """Breakpoint rows of ramp estimates for a finding (rate, no interval, verdict :data:`RAMP_ESTIMATE`)."""
    rows = []
    for k, r in ramps.items():
        est = ramp_estimate(r, criteria)
        rows.append(
            {
                "workload": workload,
                "connections": r.load.params.connections,
                "mode": k,
                "rate": est.rate,
                "interval": None,
                "verdict": RAMP_ESTIMATE,
                "validity": str(r.validity.level),
                "run_id": r.run.id,
            }
        )
    return rows


def node_profiles(res, event: str = "cpu") -> dict:
    """``{"node i": Profile}`` of the nodes profiled with ``event`` (empty when none could be)."""
    return {f"node {i}": rec.profiles[event] for i, rec in res.node_profiles.items() if event in rec.profiles}


def answers_note(res) -> str:
    """What the clients got, beside a latency figure: 'Every one of 12,345 answers was a success.' or
    '**Not every answer served the request**: 2,010 x 504, 35 timeouts of 12,345: the latency above
    includes them.'"""
    a = res.answers or {}
    n = a.get("requests") or 0
    bad = {
        "504": a.get("504", 0),
        "other 4xx": a.get("4xx", 0),
        "other 5xx": a.get("5xx", 0),
        "timeouts": a.get("timeout", 0),
        "refused or failed connections": a.get("connect", 0),
        "read errors": a.get("read", 0) + a.get("write", 0),
    }
    bad = {k: v for k, v in bad.items() if v}
    if not bad:
        extra = f" ({a.get('404', 0):,} of them a GET's 404)" if a.get("404") else ""
        return f"Every one of {n:,} answers was a success{extra}."
    what = ", ".join(f"{v:,} {k}" for k, v in bad.items())
    return (
        f"**Not every answer served the request**: {what}, against {n:,} answers; the latency figures include "
        f"the answers that failed, so they do not read as the load being held."
    )


def describe_entries(res) -> str:
    """'Entry nodes: node 0 achieved 998/s of 1,000/s offered, node 1 ...'."""
    if not res.entries:
        return ""
    parts = [
        f"node {e['node']} {fmt.rate(e['achieved_rate'])} of {fmt.rate(e['offered_rate'])} offered "
        f"({fmt.pct(e['achieved_ratio'])})"
        for e in res.entries
    ]
    return "Achieved against offered, per entry node: " + "; ".join(parts) + "."


def describe_warmup(res) -> str:
    """The warm-up run in words: the fill, and how p50 per interval moved while the nodes' JIT compiled."""
    fill = res.run.results.get("fill") or {}
    text = (
        f"Filled {fill['keys']:,} keys through the cluster in {fill['seconds']:.1f} s ({fmt.rate(fill['rate'])}, "
        f"{fill['retries']} writes retried). "
        if fill
        else ""
    )
    trend = describe_trend(res.load.intervals, "p50_ms")
    return text + (f"Warm-up load: {trend}" if trend else "") + " " + answers_note(res)


def describe_cost(runs: Mapping[str, object]) -> str:
    """The same load on one node and on the cluster (``{label: result}``, the single node first): p50 and p99
    of each, the difference per interval by test, and what the cluster's answers were."""
    parts = []
    for label, r in runs.items():
        lv = levels(r.load, (50.0, 99.0))
        parts.append(
            f"{label}: p50 {fmt.ms(lv[50.0])}, p99 {fmt.ms(lv[99.0])}, achieved "
            f"{fmt.rate(r.load.achieved_rate)} of {fmt.rate(r.load.target_rate)}"
        )
    cmp = compare_latency({k: r.load for k, r in runs.items()})
    notes = [f"{k}: {answers_note(r)}" for k, r in runs.items() if hasattr(r, "answers")]
    return "At the same rate, " + "; ".join(parts) + ". " + cmp + " " + " ".join(notes)


def describe_quorums(runs: Mapping[str, object]) -> str:
    """The ack/from matrix: p99 per interval compared by test, and any run whose answers failed."""
    cmp = compare_latency({k: r.load for k, r in runs.items()})
    failing = [f"{k}: {answers_note(r)}" for k, r in runs.items() if "Not every" in answers_note(r)]
    return " ".join([cmp] + failing)


def _window_share(res, s: float, e: float) -> tuple[int, int]:
    """Answered and offered in the bins that overlap ``[s, e]``."""
    st = res.statuses
    sub = st[(st["end_s"] > s) & (st["start_s"] < e)]
    return int(sub["answered"].sum()), int(sub["offered"].sum())


def describe_fault_run(res) -> str:
    """Availability and tail around the faults, when the clients were served again, how long the other
    nodes saw the node down (their ``peer_up`` events), and the consistency verdict."""
    out = []
    ev = res.events
    spans = ev[ev["event"].isin(["node_down", "node_paused"])] if ev is not None and len(ev) else ev
    iv = res.load.intervals
    iv = iv[iv["count"] > 0]
    for r in spans.itertuples() if spans is not None and len(spans) else []:
        kind = "down" if r.event == "node_down" else "paused"
        ok, offered = _window_share(res, r.start_s, r.end_s)
        inside = iv[(iv["start_s"] >= r.start_s) & (iv["end_s"] <= r.end_s)]
        before = iv[iv["end_s"] <= r.start_s]
        p99_in = float(inside["p99_ms"].max()) if len(inside) else float("nan")
        p99_before = float(before["p99_ms"].median()) if len(before) else float("nan")
        out.append(
            f"While node {int(r.node)} was {kind} ({r.start_s:.1f}-{r.end_s:.1f} s), "
            f"{fmt.pct(ok / offered) if offered else 'n/a'} of the {offered:,} requests due in the seconds it "
            f"overlaps got a successful answer (the rest: 504s, errors, or answered later); the worst interval "
            f"p99 was {fmt.ms(p99_in)} against a median {fmt.ms(p99_before)} before it."
        )
    for rec in res.recovery:
        when = f"{rec['recovery_s']:.1f} s after it" if rec["recovery_s"] is not None else "not within the window"
        out.append(
            f"After '{rec['fault']}' the clients were served as before it (no error, 504 or missing answer "
            f"in any later second, every p99 within {fmt.ms(rec['p99_limit_ms'])}) {when}."
        )
    if ev is not None and len(ev):
        ups = ev[ev["event"] == "peer_up"]
        for r in ups.itertuples():
            d = r.details or {}
            if d.get("down_us") is not None:
                out.append(
                    f"Node {int(r.node)} saw {d.get('peer')} back at {r.start_s:.1f} s, "
                    f"{d['down_us'] / 1e6:.1f} s after its first failed request to it "
                    f"({d.get('failures')} failed requests in between)."
                )
    out.append(answers_note(res))
    if res.consistency is not None:
        out.append(describe_consistency(res.consistency))
    return " ".join(out)


def describe_distribution(dist) -> str:
    """Keys per node by the routing function and as stored, with the coefficient of variation and the
    warning when from = the cluster size."""
    if dist is None:
        return "The key distribution was not measured."
    cv = dist.cvs()
    parts = []
    if dist.owners is not None:
        routed = (
            f"the built-in server's routing function makes the nodes owners of "
            f"{', '.join(f'{n:,}' for n in dist.owners)} (coefficient of variation {cv['owners']:.3f})"
        )
        if dist.frm > 1:
            routed += f" and replicas (from = {dist.frm}) of {', '.join(f'{n:,}' for n in dist.replicas)}"
        parts.append(routed)
    if dist.stored is not None:
        parts.append(
            f"the nodes themselves (each one's count of its own records, GET /v0/entities) store "
            f"{', '.join('n/a' if s is None else f'{s:,}' for s in dist.stored)} of them"
            + (f" (CV {cv['stored']:.3f})" if cv.get("stored") is not None else "")
        )
    if not parts:
        return f"The key distribution was not measured: {dist.note}."
    text = f"Of {dist.keys:,} keys, " + "; ".join(parts) + "."
    known = [s for s in (dist.stored or []) if s is not None]
    if dist.everywhere and len(known) > 1 and min(known) < max(known):
        low = dist.stored.index(min(known))
        text += (
            f" With from = {dist.frm} every written key belongs on every node: node {low} holds "
            f"{max(known) - min(known):,} fewer than the fullest, writes it did not get (nothing repairs a "
            f"replica that missed them)."
        )
    if dist.warning():
        text += f" Warning: {dist.warning()}."
    if dist.note:
        text += f" ({dist.note}.)"
    return text


def describe_node_profile(res, node: int, event: str = "cpu") -> str:
    """Where one node's samples went, with the cluster's own category named."""
    rec = res.node_profiles.get(node)
    if rec is None or event not in rec.profiles:
        why = (res.run.results.get("profiles") or {}).get(str(node), {}).get("unavailable", "not recorded")
        return f"No {event} profile of node {node}: {why}."
    p = rec.profiles[event]
    why = unsplit(p)
    if why is not None:
        return f"**Node {node}** ({event}): {why}."
    cats = p.categories()
    shares = dict(zip(cats["category"], cats["share"]))
    return (
        f"**Node {node}** ({event}): "
        + describe_categories(shares, event, top=4, focus=("cluster: internal requests",), samples=p.samples)
        + f" The category 'cluster: internal requests' is the coordination and the HTTP client that asks the "
        f"other nodes (their socket I/O included): {fmt.pct(shares.get('cluster: internal requests', 0))}."
    )


def answer_cluster(cost: Mapping[str, object], fault=None) -> str:
    """The notebook's answer in one sentence: what the cluster did to p99 at the same rate, and what the
    fault run showed (availability and the verdict)."""
    parts = []
    if len(cost) == 2:
        (a, ra), (b, rb) = cost.items()
        pa, pb = (levels(r.load, (99.0,))[99.0] for r in (ra, rb))
        parts.append(f"at {fmt.rate(ra.load.target_rate)} p99 went from {fmt.ms(pa)} ({a}) to {fmt.ms(pb)} ({b})")
    if fault is not None:
        a = fault.answers or {}
        tried = (a.get("requests") or 0) + sum(a.get(k, 0) for k in ("timeout", "connect", "read", "write"))
        ok = a.get("2xx/3xx", 0) + a.get("404", 0)
        parts.append(
            f"with a node killed and restarted {fmt.pct(ok / tried) if tried else 'n/a'} of the requests "
            f"got a successful answer (the rest: error statuses, timeouts, refused connections)"
        )
        if fault.consistency is not None:
            parts.append(f"the consistency checker found the run {fault.consistency.level}")
    return ("The cluster: " + "; ".join(parts) + ".") if parts else "No cluster run was measured."


def describe_findings(
    cost: Mapping[str, object], capacity: str, quorums: Mapping[str, object], fault, node: int, event: str = "cpu"
) -> list[str]:
    """The findings: the cost, the capacity, the ack/from matrix, the fault run, the keys per node,
    the node's profile, and every run's validity."""
    lines = [
        describe_cost(cost),
        capacity,
        describe_quorums(quorums),
        describe_fault_run(fault),
        describe_distribution(fault.distribution),
        describe_node_profile(cost[list(cost)[-1]], node, event),
    ]
    runs = {**cost, **{f"ack/from {q}": r for q, r in quorums.items()}, "fault run": fault}
    lines += [f"{label}: validity {r.validity.badge}." for label, r in runs.items()]
    return lines
