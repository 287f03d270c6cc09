"""The load of a cluster run: the workload with the cluster's ack/from, and what each entry node got.

The load itself runs like any other (:class:`perflab.core.load.DistributedLoad`): one part per generator
host and entry node, each its own ``--segment`` of one schedule from one ``--start-at``, merged exactly
(:mod:`perflab.measure.merge`); here is only what is particular to a cluster: the replication arguments
every request carries, and the parts' rates read back per entry node.
"""

from __future__ import annotations

from ..config import LoadParams
from ..paths import script_arguments

_REPLICA_ARGS = ("ack", "from", "replicas")


def cluster_load(load: LoadParams, config) -> LoadParams:
    """``load`` with the cluster's ack/from appended in its API style, when the script takes them (a script
    that does not send ``/v0/entity`` requests, such as ``status.lua``, is left as it is). Giving them in
    ``script_args`` too is an error: the cluster's ``ack``/``from_`` are the one place."""
    if load.tool != "perflab-load":
        raise ValueError("tool: a cluster run needs perflab-load (its parts share one schedule: --segment, --start-at)")
    given = [a.split("=", 1)[0] for a in load.script_args if a.split("=", 1)[0] in _REPLICA_ARGS]
    if given:
        raise ValueError(
            f"script_args: {given[0]}= is set by the cluster (ClusterConfig ack/from_, api); remove it "
            f"from the load's script arguments"
        )
    if load.script is None or "ack" not in script_arguments(load.script):
        return load
    return load.replace(script_args=tuple(load.script_args) + config.replica_args())


def entry_rates(res, urls: list[str]) -> list[dict]:
    """Per entry node (``urls``: every node's, in index order): its share of the schedule (offered rate) and
    what it achieved, its requests, errors and answers by status, from the load's parts (summed over the
    generator hosts that sent to it)."""
    rows: dict[str, dict] = {}
    for part in (res.parts or {"": res}).values():
        r = rows.setdefault(
            part.url,
            {
                "node": urls.index(part.url),
                "url": part.url,
                "offered_rate": 0.0,
                "achieved_rate": 0.0,
                "requests": 0,
                "errors": 0,
                "status_codes": {},
            },
        )
        r["offered_rate"] += part.target_rate
        r["achieved_rate"] += part.achieved_rate
        r["requests"] += part.requests
        r["errors"] += part.errors_total
        for k, v in part.status_counts.items():
            r["status_codes"][k] = r["status_codes"].get(k, 0) + v
    for r in rows.values():
        r["achieved_ratio"] = r["achieved_rate"] / r["offered_rate"] if r["offered_rate"] else float("nan")
    return sorted(rows.values(), key=lambda r: r["node"])
