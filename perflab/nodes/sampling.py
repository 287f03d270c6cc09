"""Per-node ``/v0/stats`` of a cluster on one time axis, across kills and restarts.

Each node gets its own ``/v0/stats`` sampler (by URL: a restarted node answers on the same port); the CPU of
every node's current process is :class:`perflab.server.cpu.ProcessCpu`'s, one slot per node. Both run on
the server host (:class:`perflab.targets.cluster.ClusterHost`); the coordinator reads the samples with
:func:`cluster_stats_frame`. A node's counters restart from zero with each
incarnation: :func:`node_stats_frame` takes differences within an incarnation only (a drop of
``uptime_ms`` starts a new one, whose first delta is its own count since it started). Samples of a node
that is down or paused fail and are skipped (counted).
"""

from __future__ import annotations

import pandas as pd

from ..server.counters import StatsSampler, stats_frame


def node_stats_frame(samples: list[dict], t0: float | None) -> pd.DataFrame:
    """One node's ``/v0/stats`` samples as the stats frame (:func:`perflab.server.counters.stats_frame`), with
    ``incarnation`` and deltas taken within each incarnation."""
    if not samples:
        return pd.DataFrame(columns=["time", "t_s", "incarnation"])
    parts, cur, last_up, inc = [], [], None, 0
    for s in samples:
        up = s.get("uptime_ms")
        if last_up is not None and up is not None and up < last_up:
            parts.append((inc, cur))
            cur, inc = [], inc + 1
        cur.append(s)
        last_up = up
    parts.append((inc, cur))
    frames = []
    for inc, ss in parts:
        f = stats_frame(ss, t0)
        # the first sample of a restarted node: its counters are what it did since it started
        deltas = [c for c in f.columns if c.endswith("_delta")]
        if inc > 0 and len(f):
            for c in deltas:
                f.loc[f.index[0], c] = pd.to_numeric(f[c[: -len("_delta")]], errors="coerce").iloc[0]
        frames.append(f.assign(incarnation=inc))
    return pd.concat(frames, ignore_index=True)


class ClusterStats:
    """A ``/v0/stats`` sampler per node that has them (built-in nodes; yours when they answer JSON).
    ``frame(t0)`` is every node's samples in one long frame with a ``node`` column."""

    def __init__(self, cluster, interval_s: float, nodes: list[int] | None = None):
        self.cluster = cluster
        self.samplers = {
            i: StatsSampler(cluster.nodes[i].url, interval_s)
            for i in (nodes if nodes is not None else range(len(cluster.nodes)))
        }

    def start(self) -> ClusterStats:
        for s in self.samplers.values():
            s.start()
        return self

    def stop(self) -> ClusterStats:
        for s in self.samplers.values():
            s.signal_stop()
        for s in self.samplers.values():
            s.stop()
        return self

    @property
    def samples(self) -> dict[int, list[dict]]:
        """Every node's samples so far, by node."""
        return {i: list(s.samples) for i, s in self.samplers.items()}

    def errors(self) -> dict[int, int]:
        return {i: s.errors for i, s in self.samplers.items()}


def cluster_stats_frame(samples: dict[int, list[dict]], t0: float | None = None) -> pd.DataFrame:
    """Every node's samples (node -> its ``/v0/stats`` samples) in one long frame with a ``node`` column,
    deltas within each node's incarnation (:func:`node_stats_frame`)."""
    frames = [node_stats_frame(list(s), t0).assign(node=i) for i, s in samples.items()]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=["time", "t_s", "node"])
    df = pd.concat(frames, ignore_index=True)
    front = ["node", "time", "t_s"]
    return df[front + [c for c in df.columns if c not in front]].sort_values(["t_s", "node"]).reset_index(drop=True)
