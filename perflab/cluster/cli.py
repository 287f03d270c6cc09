"""The command line's cluster options (``perflab run --nodes 3 --ack 2 --from 3 --fault 'at=10s node=2 kill'``).

With ``--nodes`` a ``run``, ``profile`` or ``breakpoint`` targets a cluster: the built-in server's flags
configure every node; ``--server-cmd`` (with ``{port}`` and ``{cluster}``, or ``{ports}``), ``--ready-path``,
``--server-dir`` and ``--startup-timeout`` describe your own nodes instead. The options come from the
fields of :class:`~perflab.config.cluster.ClusterConfig` and :class:`~perflab.config.cluster.ConsistencyParams`
(``--check-*``), so the command line and Python check them the same way.
"""

from __future__ import annotations

import argparse

from ..analysis.cluster import describe_consistency
from ..config.cluster import ClusterConfig, ConsistencyParams
from ..config.fields import add_arguments, from_arguments

#: ClusterConfig fields the command line takes from your-own-server options when --nodes is given
_FROM_FOREIGN = {"server_cmd": "command", "ready_path": "ready_path", "workdir": "workdir",
                 "startup_timeout": "startup_timeout"}


def add_cluster_args(p: argparse.ArgumentParser, run: bool = False, profile: bool = False) -> None:
    g = p.add_argument_group("cluster (--nodes N: N nodes, each its own process; docs/architecture.md section 7)")
    add_arguments(g, ClusterConfig, dest_prefix="cluster_")
    if not run:
        return
    g.add_argument("--fault", dest="cluster_faults", action="append", default=None, metavar="SPEC",
                   help="a fault in the measured window: 'at=10s node=2 kill' (kill, stop, pause, resume, restart; "
                        "for=5s undoes it after 5 s); repeatable")
    g.add_argument("--fill", dest="cluster_fill", type=int, default=None, metavar="N",
                   help="write key0..key<N-1> through the cluster before the load (prefill cannot prepare a "
                        "cluster node's storage)")
    g.add_argument("--keys", dest="cluster_keys", type=int, default=None, metavar="N",
                   help="key space of the key distribution report (default: --fill, or the script's keys=)")
    if profile:
        g.add_argument("--profile-nodes", dest="cluster_profile_nodes", default="all", metavar="all|I,J",
                       help="which nodes async-profiler records, one recording each (default all)")
    c = p.add_argument_group("consistency checker (--check: its own client records every acknowledged write, "
                             "reads back, gives a verdict)")
    c.add_argument("--check", dest="check", action="store_true", help="run the consistency checker")
    add_arguments(c, ConsistencyParams, dest_prefix="check_", flag_prefix="--check-")


def is_cluster_run(a) -> bool:
    return getattr(a, "cluster_nodes", None) is not None


def cluster_from_args(a) -> ClusterConfig:
    """The ClusterConfig the options describe: the built-in server's options for every node, or your nodes
    (``--server-cmd`` with the cluster's placeholders, ``--ready-path``, ``--server-dir``,
    ``--startup-timeout``)."""
    import dataclasses

    from ..config import ServerConfig
    from ..config.fields import cli_flag
    if getattr(a, "foreign_url", None) is not None:
        raise ValueError("--url: a cluster is started by perflab (--nodes); a cluster that is already running is "
                         "measured from Python (pl.start_cluster, pl.run_cluster)")
    if getattr(a, "foreign_pid", None) is not None:
        raise ValueError("--pid: perflab knows the pids of the nodes it starts")
    if a.foreign_command is None:
        unused = [name for name in _FROM_FOREIGN.values() if name != "command"
                  and getattr(a, "foreign_" + name, None) is not None]
        if unused:
            raise ValueError(f"--{unused[0].replace('_', '-').replace('workdir', 'server-dir')}: only with --server-cmd "
                             f"(your own nodes)")
        return from_arguments(ClusterConfig, a, "cluster_", server=from_arguments(ServerConfig, a, "server_"))
    given = [cli_flag(f) for f in dataclasses.fields(ServerConfig)
             if getattr(a, "server_" + f.name, None) is not None and cli_flag(f)]
    if given:
        raise ValueError(f"{', '.join(given)}: option{'s' if len(given) > 1 else ''} of the built-in server; with "
                         f"--server-cmd your nodes take their own settings (put them in the command)")
    fixed = {k: getattr(a, "foreign_" + v, None) for k, v in _FROM_FOREIGN.items()}
    return from_arguments(ClusterConfig, a, "cluster_", **fixed)


def check_cluster_only(a) -> None:
    """Cluster options without --nodes are an error naming them."""
    import dataclasses

    from ..config.fields import cli_flag
    given = [cli_flag(f) for f in dataclasses.fields(ClusterConfig)
             if getattr(a, "cluster_" + f.name, None) is not None and cli_flag(f)]
    given += ["--fault"] if getattr(a, "cluster_faults", None) else []
    given += ["--fill"] if getattr(a, "cluster_fill", None) is not None else []
    given += ["--check"] if getattr(a, "check", False) else []
    if given:
        raise ValueError(f"{', '.join(given)}: cluster option{'s' if len(given) > 1 else ''}; give --nodes N "
                         f"to start a cluster")


def consistency_from_args(a) -> ConsistencyParams | None:
    if not getattr(a, "check", False):
        import dataclasses
        given = [f.name for f in dataclasses.fields(ConsistencyParams) if getattr(a, "check_" + f.name, None) is not None]
        if given:
            raise ValueError(f"--check-{given[0].replace('_', '-')}: give --check to run the consistency checker")
        return None
    return from_arguments(ConsistencyParams, a, "check_")


def profile_nodes_from_args(a):
    text = getattr(a, "cluster_profile_nodes", "all") or "all"
    if text == "all":
        return "all"
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"--profile-nodes: expected all or node indexes like 0,2, got {text!r}") from None


def print_cluster_result(res) -> None:
    """What a cluster run adds to the console: entry nodes, answers, faults, recovery, consistency, keys."""
    for e in res.entries:
        print(f"entry node {e['node']} ({e['url']}): achieved {e['achieved_rate']:,.1f}/s of {e['offered_rate']:,.1f}/s, "
              f"{e['errors']} errors, statuses {e['status_codes']}")
    a = res.answers
    print(f"answers: {a['2xx/3xx']:,} 2xx/3xx, {a['404']:,} 404, {a['4xx']:,} other 4xx, {a['504']:,} 504, "
          f"{a['5xx']:,} other 5xx; errors: {a['timeout']:,} timeouts, {a['connect']:,} connect, {a['read']:,} read")
    for f in res.faults:
        print(f"fault {f['fault']!r}: {f['action']} node {f['node']} at {f['at_s']:g} s"
              + (f" (took {f['dur_us'] / 1e6:.2f} s)" if f["ts_us"] is not None else "")
              + (f" FAILED: {f['error']}" if f["error"] else ""))
    for r in res.recovery:
        when = f"{r['recovery_s']:.1f} s after it" if r["recovery_s"] is not None else "not within the window"
        print(f"  clients served as before {r['fault']!r}: {when}")
    if res.consistency is not None:
        print(describe_consistency(res.consistency))
    for i, rec in sorted(res.node_profiles.items()):
        for ev, prof in rec.profiles.items():
            cats = prof.categories()
            top = ", ".join(f"{c} {v:.0%}" for c, v in zip(cats["category"], cats["share"]) if v >= 0.05)
            print(f"profile of node {i} ({ev}, {prof.samples:,} samples): {prof.html_path or prof.collapsed_path}"
                  + (f"\n  {top}" if top else ""))
    for i, entry in sorted((res.run.results.get("profiles") or {}).items()):
        if "unavailable" in entry:
            print(f"no profile of node {i}: {entry['unavailable']}")
    if res.distribution is not None:
        d = res.distribution
        print(f"keys per node ({d.keys:,} keys): owners {d.owners} (CV {d.cvs()['owners']:.3f}), replicas {d.replicas}, "
              f"stored {d.stored}")
        if d.warning():
            print(f"  warning: {d.warning()}")
