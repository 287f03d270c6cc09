"""Per-node ``/v0/stats``, CPU and RSS of a cluster on one time axis, across kills and restarts.

Each node gets its own ``/v0/stats`` sampler (by URL: a restarted node answers on the same port) and one
thread samples every node's process from ``/proc`` by its *current* pid, so a node killed and started again
is followed. Both run on the server host (:class:`~perflab.cluster.target.ClusterTarget`); the coordinator
reads the samples with :func:`cluster_stats_frame`. A node's counters restart from zero with each
incarnation: :func:`node_stats_frame` takes differences within an incarnation only (a drop of
``uptime_ms`` starts a new one, whose first delta is its own count since it started). Samples of a node
that is down or paused fail and are skipped (counted).
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pandas as pd

from ..server.cpu import CpuWindow, machine_cpu, process_cpu_s, process_rss
from ..server.stats import StatsSampler, stats_frame


def node_stats_frame(samples: list[dict], t0: float | None) -> pd.DataFrame:
    """One node's ``/v0/stats`` samples as the stats frame (:func:`perflab.server.stats.stats_frame`), with
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
                f.loc[f.index[0], c] = pd.to_numeric(f[c[:-len("_delta")]], errors="coerce").iloc[0]
        frames.append(f.assign(incarnation=inc))
    return pd.concat(frames, ignore_index=True)


class ClusterStats:
    """A ``/v0/stats`` sampler per node that has them (built-in nodes; yours when they answer JSON).
    ``frame(t0)`` is every node's samples in one long frame with a ``node`` column."""

    def __init__(self, cluster, interval_s: float, nodes: list[int] | None = None):
        self.cluster = cluster
        self.samplers = {i: StatsSampler(cluster.nodes[i].url, interval_s)
                         for i in (nodes if nodes is not None else range(len(cluster.nodes)))}

    def start(self) -> "ClusterStats":
        for s in self.samplers.values():
            s.start()
        return self

    def stop(self) -> "ClusterStats":
        for s in self.samplers.values():
            s._stop.set()
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


class ClusterCpu:
    """Samples every node's current process and the machine every ``interval_s``; ``window()`` gives the
    cluster's :class:`~perflab.server.cpu.CpuWindow` (CPU summed over the nodes, RSS the largest sum) for the
    validity record, ``frame(t0)`` each node's cores and RSS over time."""

    def __init__(self, cluster, interval_s: float = 0.25):
        self.cluster = cluster
        self.interval_s = interval_s
        self.samples: list[tuple] = []   # t, node, pid, cpu_s, rss, busy, total
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        busy, total = machine_cpu()
        t = time.time()
        for n in self.cluster.nodes:
            pid = n.pid
            cpu = process_cpu_s(pid) if pid else None
            rss = process_rss(pid) if cpu is not None else None
            if rss:   # no resident memory: a process that is gone (a zombie until reaped)
                self.samples.append((t, n.index, pid, cpu, rss, busy, total))

    def start(self) -> "ClusterCpu":
        self.sample()
        self._thread = threading.Thread(target=self._run, name="perflab-cluster-cpu", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.interval_s):
            self.sample()

    def stop(self) -> "ClusterCpu":
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval_s + 2)
        self.sample()
        return self

    def frame(self, t0: float | None = None) -> pd.DataFrame:
        """``node, pid, t_s, cpu_s, cores (since the previous sample of the same process), rss``."""
        df = pd.DataFrame(list(self.samples), columns=["t", "node", "pid", "cpu_s", "rss", "busy", "total"])
        if df.empty:
            return pd.DataFrame(columns=["node", "pid", "t_s", "cpu_s", "cores", "rss"])
        df = df.sort_values(["node", "t"]).reset_index(drop=True)
        g = df.groupby(["node", "pid"], sort=False)
        df["cores"] = g["cpu_s"].diff() / g["t"].diff()
        df["t_s"] = df["t"] - (t0 if t0 is not None else df["t"].min())
        return df[["node", "pid", "t_s", "cpu_s", "cores", "rss"]]

    def window(self, start: float, end: float) -> CpuWindow | None:
        """The cluster over ``[start, end]``: every node process's CPU in it (counters interpolated at the
        edges, each process on its own), the machine's busy share, the largest sum of RSS."""
        df = pd.DataFrame(list(self.samples), columns=["t", "node", "pid", "cpu_s", "rss", "busy", "total"])
        if df.empty or not end > start or df["t"].min() > start + self.interval_s or df["t"].max() < end - self.interval_s:
            return None
        cpu = 0.0
        for _, g in df.groupby(["node", "pid"]):
            t, c = g["t"].to_numpy(), g["cpu_s"].to_numpy(dtype=float)
            lo, hi = max(start, t[0]), min(end, t[-1])
            if hi > lo:
                cpu += float(np.interp(hi, t, c) - np.interp(lo, t, c))
        m = df.drop_duplicates("t")
        tt = m["t"].to_numpy()
        busy = float(np.interp(end, tt, m["busy"]) - np.interp(start, tt, m["busy"]))
        total = float(np.interp(end, tt, m["total"]) - np.interp(start, tt, m["total"]))
        inside = df[(df["t"] >= start) & (df["t"] <= end)]
        rss = int(inside.groupby("t")["rss"].sum().max()) if len(inside) else None
        return CpuWindow(start, end, cpu, cpu / (end - start), rss, busy / total if total > 0 else float("nan"),
                         os.cpu_count() or 1)
