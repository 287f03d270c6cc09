"""Clusters (notebook 07): what N nodes cost against one at the same rate, the capacity of each, the tail
for every ack of from, what clients get when a node is killed and restarted (answers by status, recovery,
the consistency checker's verdict), the keys per node, and where a node's CPU goes when it proxies.

The notebook builds its cluster, workload, fault and capacity settings from its parameters and measures them
(:mod:`perflab.lab.cluster`, imported as ``lab``, each checked by the config layer), then tells each section with one call::

    cluster.warmup(warm).show()
    cluster.cost({"1 node": one_run, label: cluster_run}, sla).show()
    capacity = cluster.capacity(search, lab.capacity(search, targets, load, cfg), "put-random"); capacity.show()
    cluster.matrix(quorum_runs, sla).show()
    cluster.fault_run(broken).show(); cluster.distribution(broken).show()
    cluster.node_profile(cluster_run, 0).show()
    findings.show(cluster.findings(cost, capacity, quorum_runs, broken, 0))
    cluster.answer(cost, broken, capacity).show()

The sentences are :mod:`.sentences`' (also the consistency verdict the command line prints), the figures
:mod:`.figures`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ... import fmt
from ..breakpoints import breakpoint_curve, compare_breakpoints, describe_breakpoint
from ..findings import Finding, breakpoint_row, key_latency, validity_of
from ..latency import load_table, percentile_spectrum
from ..profiles import category_bars, flamegraph
from ..section import Section
from .figures import consistency_timeline, key_distribution, node_panels, ramp_curves, status_timeline
from .sentences import (
    answer_cluster,
    describe_consistency,
    describe_cost,
    describe_distribution,
    describe_entries,
    describe_fault_run,
    describe_findings,
    describe_node_profile,
    describe_quorums,
    describe_ramps,
    describe_warmup,
    node_profiles,
    ramp_rows,
)

__all__ = [
    # what notebook 07 shows
    "warmup",
    "cost",
    "capacity",
    "matrix",
    "fault_run",
    "distribution",
    "node_profile",
    "findings",
    "answer",
    # what the command line prints
    "describe_consistency",
]


def _ms(sla: float | None) -> float | None:
    return sla * 1000 if sla else None


def warmup(res) -> Section:
    """The warm-up run in words: the fill, and how p50 per interval moved while the nodes' JIT compiled."""
    return Section([describe_warmup(res)])


def cost(runs: Mapping, sla: float | None = None) -> Section:
    """The same load on one node and on the cluster (label -> result, the node first): their table and
    spectra (the SLA ``sla``, seconds, as a line), the difference per interval by test, what the cluster's
    answers were, and what each entry node achieved."""
    return Section(
        [
            load_table(runs),
            percentile_spectrum(
                runs, sla_ms=_ms(sla), title="One node against the cluster at the same rate: latency by percentile"
            ),
            describe_cost(runs),
            describe_entries(runs[list(runs)[-1]]),
        ]
    )


@dataclass
class Capacity(Section):
    """The capacity comparison (:func:`capacity`): its figure and text, with the finding's breakpoint ``rows``
    and the ``results`` by label (breakpoint searches, or ramps)."""

    rows: list = field(default_factory=list)
    results: dict = field(default_factory=dict)


def capacity(how, results: dict, workload_name: str) -> Capacity:
    """One node against the cluster, measured as ``how`` says (:func:`perflab.lab.cluster.capacity`: label ->
    result, the node first): with ``probes`` each breakpoint search with its interval, and a difference
    claimed only where the intervals do not overlap; with ``ramp`` each bracketing ramp, whose estimate is no
    breakpoint and claims no difference."""
    if how.kind == "probes":
        text = "\n\n".join([describe_breakpoint(k, r) for k, r in results.items()] + [compare_breakpoints(results)])
        figure = breakpoint_curve(results, sla_ms=how.sla_ms, title="Breakpoint search: one node against the cluster")
        return Capacity(
            [figure, text], [breakpoint_row(r, workload=workload_name, mode=k) for k, r in results.items()], results
        )
    return Capacity(
        [
            ramp_curves(results, how.criteria, title="Ramp: one node against the cluster"),
            describe_ramps(results, how.criteria),
        ],
        ramp_rows(results, how.criteria, workload_name),
        results,
    )


def matrix(runs: Mapping, sla: float | None = None) -> Section:
    """The same load for every ack of from (``"1/3"`` -> result): their table and spectra, p99 per interval
    compared by test, and any run whose answers failed."""
    return Section(
        [
            load_table(runs),
            percentile_spectrum(runs, sla_ms=_ms(sla), title="Latency by percentile for each ack/from"),
            describe_quorums(runs),
        ]
    )


def fault_run(res) -> Section:
    """A run with a node killed and restarted: latency over what the clients got per second, availability and
    recovery and the consistency verdict in words, every node on one timeline, the checker's operations."""
    return Section([status_timeline(res), describe_fault_run(res), node_panels(res), consistency_timeline(res)])


def distribution(res) -> Section:
    """The keys per node of a cluster run (when measured) and the sentence about them."""
    return Section(
        ([key_distribution(res.distribution)] if res.distribution is not None else [])
        + [describe_distribution(res.distribution)]
    )


def node_profile(res, node: int, event: str = "cpu") -> Section:
    """One node's profile of a cluster run: its categories, its flame graph, and the sentence about it."""
    by_node = node_profiles(res, event)
    parts = [category_bars(by_node, title=f"{event} profile of node {node} under cluster load")] if by_node else []
    parts += [
        flamegraph(p.html_path, title=f"{label}: {p.event} flame graph", collapsed=p.collapsed_path, event=p.event)
        for label, p in by_node.items()
        if p.html_path is not None
    ]
    return Section(parts + [describe_node_profile(res, node, event)])


def findings(
    cost: Mapping, capacity: Capacity, quorum_runs: Mapping, fault, node: int, event: str = "cpu"
) -> list[str]:
    """The cost, the capacity, the ack/from matrix, the fault run, the keys per node, the node's profile, and
    every run's validity."""
    return describe_findings(cost, capacity.text, quorum_runs, fault, node, event)


def answer(cost: Mapping, fault, capacity: Capacity) -> Finding:
    """What the cluster did to p99 at the same rate and what the fault run showed; the key number the cluster's
    p99 (the last of ``cost``), the capacity's rows, the fault run's status timeline as the preview."""
    label, run = list(cost.items())[-1]
    return Finding(
        answer_cluster(cost, fault),
        key_number=key_latency(f"p99, {label} at {fmt.rate(run.load.target_rate)}", run),
        validity=validity_of(*cost.values(), fault),
        breakpoints=capacity.rows,
        preview=status_timeline(fault),
    )
