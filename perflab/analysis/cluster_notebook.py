"""What notebook 07 calls to build its cluster, loads and runs from its parameters, and to run or show what
takes more than a line: the comparison of capacity (breakpoint searches, or the ramps' estimates in the
quick plan), the keys per node, the profile of one node.

Like :mod:`.notebook`, every builder checks its values with the config layer, so a bad parameter fails in
the notebook's first cell, named, before any node starts. The sentences are :mod:`.cluster_commentary`'s,
the figures :mod:`.cluster_plots`'.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config import ServerConfig
from ..config.cluster import ClusterConfig


def cluster(cluster_cmd: str | None = None, ready_path: str = "/", server_dir: str | None = None, nodes: int = 3,
            ack: int | None = None, from_: int | None = None, entry="all", api: str = "ack-from",
            **built_in) -> ClusterConfig:
    """The cluster of a notebook: your nodes (``cluster_cmd`` with ``{port}`` and ``{cluster}``, or
    ``{ports}``; run in ``server_dir``) or the built-in server on every node, configured by ``built_in``
    (``ServerConfig`` fields)."""
    if cluster_cmd:
        return ClusterConfig(nodes=nodes, ack=ack, from_=from_, entry=entry, api=api, server_cmd=cluster_cmd,
                             ready_path=ready_path, workdir=server_dir)
    return ClusterConfig(nodes=nodes, ack=ack, from_=from_, entry=entry, api=api, server=ServerConfig(**built_in))


def single_node(cfg: ClusterConfig):
    """What "one node" means next to ``cfg``: the built-in server alone (no ``--cluster``, the configuration
    of node 0), or, for your nodes, a cluster of one (your command with one URL in ``{cluster}``)."""
    if cfg.foreign:
        return cfg.replace(nodes=1, ack=None, from_=None, entry="0")
    return cfg.node_config(0)


def quorums(target, pairs=None) -> dict:
    """``{"1/3": ..., "2/3": ...}`` for ``pairs`` like ``[[1, 3], [2, 3], [3, 3]]`` (default: every ack of the
    cluster's from), each checked against the cluster (ack <= from <= nodes): ``ClusterConfig`` variants of a
    configuration, or views of a running :class:`~perflab.cluster.nodes.Cluster` with those settings
    (``Cluster.using``)."""
    cfg = target if isinstance(target, ClusterConfig) else target.config
    if pairs is None:
        pairs = [[a, cfg.replicas_from] for a in range(1, cfg.replicas_from + 1)]
    out = {}
    for i, p in enumerate(pairs):
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise ValueError(f"quorums[{i}]: expected [ack, from], got {p!r}")
        try:
            c = cfg.replace(ack=p[0], from_=p[1])
        except ValueError as e:
            raise ValueError(f"quorums[{i}]: {e}") from None
        out[c.quorum()] = c if target is cfg else target.using(ack=c.ack, from_=c.from_)
    return out


def workload(cfg: ClusterConfig, script: str, **fields):
    """The workload (:func:`perflab.workload`: ``fields``) checked against the cluster as every run will send
    it: its ack/from arguments, and enough threads for a split over the entry nodes and the generator hosts
    (``$PERFLAB_GENERATORS``, as the runs read them)."""
    from ..core.session import SessionOptions, check_load
    from ..targets import target_of
    from ..workloads import workload as make

    load = make(script, **fields)
    check_load(target_of(cfg), load, SessionOptions())
    return load


def check_faults(faults, cfg: ClusterConfig, duration_s: float) -> list:
    """The fault strings, checked against the cluster and the window (an error names the fault)."""
    from ..cluster.faults import schedule

    schedule(list(faults), cfg.nodes, duration_s, cfg.one_command)
    return list(faults)


def start(cfg: ClusterConfig):
    """The nodes every run of the notebook measures: started once here (``pl.start_cluster``) when the runs
    measure on this machine alone; on a scheduler's hosts the configuration itself, so each run starts the nodes
    on its server host (a running cluster lives in this process). Says which."""
    from ..cluster.nodes import start_cluster
    from ..config.hosts import scheduler_address

    if scheduler_address(None) is not None:
        print(f"{cfg}: each run starts its nodes on its server host")
        return cfg
    c = start_cluster(cfg)
    print(c)
    return c


def stop(nodes) -> None:
    """Stop what :func:`start` started (nothing when each run started its own)."""
    if not isinstance(nodes, ClusterConfig):
        nodes.stop()


def ramp_load(load, search, criteria, cfg: ClusterConfig):
    """The bracketing ramp of a breakpoint search (notebook 2's), as one load: the rate grows exponentially
    from ``search.start_rate`` over ``search.ramp_duration``. It stops once p99 is far over the SLA when the
    cluster's load is one process (one entry node, one generator host); split over several entry nodes or
    generator hosts, no part can stop the others, so the ramp runs its whole length (for the node alone too,
    to compare like with like). Its estimate (:func:`.cluster_commentary.ramp_estimate`) is where a search
    would start probing."""
    from ..breakpoint.ramp import ramp_load as ramp
    from ..core.session import SessionOptions

    out = ramp(load, search, criteria)
    split = SessionOptions().hosts.generator_count * len(cfg.entries) > 1
    return out.replace(stop_on_p99=None) if split else out


@dataclass(frozen=True)
class Search:
    """How notebook 07 compares capacity: ``kind`` (``probes``: breakpoint searches; ``ramp``: the ramps'
    estimates), the breakpoint ``criteria`` (p99 under ``sla_ms``) and search ``params``."""

    kind: str
    sla_ms: float
    criteria: object
    params: object


def search(kind: str, sla_ms: float, **params) -> Search:
    """The capacity comparison's settings, checked: ``kind`` ``probes`` or ``ramp``, ``params``
    (``BreakpointParams`` fields; 1 s of warm-up before each probe)."""
    from ..config import BreakpointCriteria, BreakpointParams
    from .notebook import param

    kind = param("search", kind, "enum", choices=("probes", "ramp"))
    return Search(kind, sla_ms, BreakpointCriteria(sla_p99=sla_ms / 1000), BreakpointParams(warmup=1, **params))


@dataclass
class Capacity:
    """The capacity comparison of :func:`capacity`: its ``figure``, ``text`` and finding ``rows``, and the
    ``results`` by label (breakpoint searches, or ramps)."""

    figure: object
    text: str
    rows: list = field(default_factory=list)
    results: dict = field(default_factory=dict)


def capacity(how: Search, targets: dict, load, cfg: ClusterConfig, workload_name: str) -> Capacity:
    """One node against the cluster (``targets``: label -> target, the node first): with ``probes`` a
    breakpoint search of each (notebook 2's: an interval, and a difference claimed only where the intervals
    do not overlap); with ``ramp`` only the bracketing ramp of each, whose estimate is no breakpoint and
    claims no difference."""
    from ..breakpoint import find_breakpoint
    from ..experiment import run_experiment
    from . import cluster_commentary as csay
    from . import cluster_plots as cplots
    from . import commentary, findings, plots

    names = dict(zip(targets, ("one", "cluster")))
    if how.kind == "probes":
        bps = {k: find_breakpoint(t, load, how.criteria, how.params, name=f"nb07-bp-{names[k]}", progress=False)
               for k, t in targets.items()}
        text = "\n\n".join([commentary.describe_breakpoint(k, r) for k, r in bps.items()]
                           + [commentary.compare_breakpoints(bps)])
        figure = plots.breakpoint_curve(bps, sla_ms=how.sla_ms, title="Breakpoint search: one node against the cluster")
        return Capacity(figure, text, [findings.breakpoint_row(r, workload=workload_name, mode=k)
                                       for k, r in bps.items()], bps)
    ramp = ramp_load(load, how.params, how.criteria, cfg)
    ramps = {k: run_experiment(t, ramp, name=f"nb07-ramp-{names[k]}") for k, t in targets.items()}
    return Capacity(cplots.ramp_curves(ramps, how.criteria, title="Ramp: one node against the cluster"),
                    csay.describe_ramps(ramps, how.criteria), csay.ramp_rows(ramps, how.criteria, workload_name), ramps)


def show_distribution(res) -> None:
    """The keys per node of a cluster run (when measured) and the sentence about them."""
    from . import cluster_commentary as csay
    from . import cluster_plots as cplots
    from .notebook import show_markdown

    if res.distribution is not None:
        cplots.key_distribution(res.distribution).show()
    show_markdown(csay.describe_distribution(res.distribution))


def show_node_profile(res, node: int, event: str = "cpu") -> None:
    """One node's profile of a cluster run: its categories, its flame graph, and the sentence about it."""
    from . import cluster_commentary as csay
    from . import plots
    from .notebook import show_flamegraph, show_markdown

    by_node = csay.node_profiles(res, event)
    if by_node:
        plots.category_bars(by_node, title=f"{event} profile of node {node} under cluster load").show()
        for label, p in by_node.items():
            if p.html_path is not None:
                show_flamegraph(p.html_path, title=f"{label}: {p.event} flame graph", collapsed=p.collapsed_path,
                                event=p.event)
    show_markdown(csay.describe_node_profile(res, node, event))
