"""What notebook 07 builds from its parameters and measures on the cluster's nodes: its cluster, the
workload, the fault, the capacity comparison's settings and its searches or ramps, and the nodes every run
measures.

Like :mod:`.notebook`, every builder checks its values with the config layer, so a bad parameter fails in
the notebook's first cell, named, before any node starts; what the runs show is
:mod:`perflab.analysis.cluster`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import workloads
from ..breakpoint import find_breakpoint, ramp
from ..config import BreakpointCriteria, BreakpointParams
from ..config.cluster import ClusterConfig
from ..config.fields import param
from ..config.hosts import scheduler_address
from ..config.measured import Given, Measured, resolve
from ..core.session import SessionOptions, check_load
from ..experiment import run_experiment
from ..nodes.faults import schedule
from ..nodes.processes import start_cluster
from ..targets import target_of

#: how notebook 07 names what it measures (its parameters), in the resolver's errors
PARAMETERS = {"command": "cluster_cmd", "workdir": "server_dir"}


def measured(
    cluster_cmd: str | None = None,
    ready_path: str | None = None,
    server_dir: str | None = None,
    project: str | None = None,
    script_args=(),
    nodes: int = 3,
    ack: int | None = None,
    from_: int | None = None,
    entry="all",
    api: str = "ack-from",
    **built_in,
) -> Measured:
    """The cluster of a notebook, resolved as the command line and the report resolve it
    (:func:`perflab.config.measured.resolve`): your nodes started from ``cluster_cmd`` (with ``{port}`` and
    ``{cluster}``, or ``{ports}``; run in ``server_dir``), those a ``project`` file declares (else
    ``$PERFLAB_PROJECT``: its ``[server]`` on every node), or the built-in server on every node, configured by
    ``built_in`` (``ServerConfig`` fields). ``nodes``, ``ack``, ``from_``, ``entry`` and ``api`` are the
    notebook's defaults: what the file's ``[cluster]`` declares wins over them. Its ``target`` is the
    ``ClusterConfig``; its ``script_args``, the API's and then ``script_args``."""
    return resolve(
        Given(
            project=project,
            yours={"command": cluster_cmd, "ready_path": ready_path, "workdir": server_dir},
            script_args=param("script_args", script_args, "texts"),
            names=PARAMETERS,
        ),
        kind="cluster",
        builtin_defaults=built_in,
        cluster_defaults=dict(nodes=nodes, ack=ack, from_=from_, entry=entry, api=api),
    )


def single_node(cfg: ClusterConfig):
    """What "one node" means next to ``cfg``: the built-in server alone (no ``--cluster``, the configuration
    of node 0), or, for your nodes, a cluster of one (your command with one URL in ``{cluster}``)."""
    if cfg.foreign:
        return cfg.replace(nodes=1, ack=None, from_=None, entry="0")
    return cfg.node_config(0)


def quorums(target, pairs=None) -> dict:
    """``{"1/3": ..., "2/3": ...}`` for ``pairs`` like ``[[1, 3], [2, 3], [3, 3]]`` (default: every ack of the
    cluster's from), each checked against the cluster (ack <= from <= nodes): ``ClusterConfig`` variants of a
    configuration, or views of a running :class:`~perflab.nodes.processes.Cluster` with those settings
    (``Cluster.using``)."""
    cfg = target_of(target).cluster_config
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
    load = workloads.workload(script, **fields)
    check_load(target_of(cfg), load, SessionOptions())
    return load


def kill(cfg: ClusterConfig, node: int, at, down, duration) -> list[str]:
    """The fault of the notebook's fault run: ``node`` killed ``at`` into the window and started again
    ``down`` later, in a window of ``duration`` (durations with a unit, ``'1.5s'``, or seconds), checked
    against the cluster and the window (an error names the fault)."""
    at, down = param("fault_at", at, "duration", min=0), param("fault_down", down, "duration", min=0, min_open=True)
    faults = [f"at={at:g}s node={node} kill for={down:g}s"]
    schedule(faults, cfg.nodes, param("fault_duration", duration, "duration", min=0, min_open=True), cfg.one_command)
    return faults


def start(cfg: ClusterConfig):
    """The nodes every run of the notebook measures: started once here (``pl.start_cluster``) when the runs
    measure on this machine alone; on a Dask cluster the configuration itself, so each run starts the nodes
    on its server host (a running cluster lives in this process). Says which."""
    if scheduler_address(None) is not None:
        print(f"{cfg}: each run starts its nodes on its server host")
        return cfg
    c = start_cluster(cfg)
    print(c)
    return c


def stop(nodes) -> None:
    """Stop what :func:`start` started (nothing when each run started its own)."""
    if target_of(nodes).running:
        nodes.stop()


def ramp_load(load, search, criteria, cfg: ClusterConfig):
    """The bracketing ramp of a breakpoint search (notebook 2's), as one load: the rate grows exponentially
    from ``search.start_rate`` over ``search.ramp_duration``. It stops once p99 is far over the SLA when the
    cluster's load is one process (one entry node, one generator host); split over several entry nodes or
    generator hosts, no part can stop the others, so the ramp runs its whole length (for the node alone too,
    to compare like with like). Its estimate (:func:`.sentences.ramp_estimate`) is where a search
    would start probing."""
    out = ramp.ramp_load(load, search, criteria)
    hosts, entries = SessionOptions().hosts.generator_count, len(cfg.entries)
    return out.replace(stop_on_p99=None) if hosts * entries > 1 else out


@dataclass(frozen=True)
class Search:
    """How notebook 07 compares capacity: ``kind`` (``probes``: breakpoint searches; ``ramp``: the ramps'
    estimates), the breakpoint ``criteria`` (p99 under the SLA) and search ``params``."""

    kind: str
    criteria: BreakpointCriteria
    params: BreakpointParams

    @property
    def sla_ms(self) -> float:
        return self.criteria.sla_p99 * 1000


def search(kind: str, sla_p99, **params) -> Search:
    """The capacity comparison's settings, checked: ``kind`` ``probes`` or ``ramp``, the SLA ``sla_p99`` (a
    duration, ``'10ms'``, or seconds), ``params`` (``BreakpointParams`` fields; 1 s of warm-up before each
    probe)."""
    kind = param("search", kind, "enum", choices=("probes", "ramp"))
    return Search(kind, BreakpointCriteria(sla_p99=sla_p99), BreakpointParams(warmup=1, **params))


def capacity(how: Search, targets: dict, load, cfg: ClusterConfig) -> dict:
    """One node against the cluster (``targets``: label -> target, the node first), measured as ``how`` says:
    with ``probes`` a breakpoint search of each (notebook 2's), with ``ramp`` only the bracketing ramp of each
    (:func:`ramp_load`); label -> its result, told by :func:`perflab.analysis.cluster.capacity`."""
    names = dict(zip(targets, ("one", "cluster")))
    if how.kind == "probes":
        return {
            k: find_breakpoint(t, load, how.criteria, how.params, name=f"nb07-bp-{names[k]}", progress=False)
            for k, t in targets.items()
        }
    ramp = ramp_load(load, how.params, how.criteria, cfg)
    return {k: run_experiment(t, ramp, name=f"nb07-ramp-{names[k]}") for k, t in targets.items()}
