"""A cluster as the target of a run, on the server host: its N nodes, their samplers, and what a cluster run
does to them (faults, the consistency checker, the fill, the key count).

The agent of the server host (:class:`perflab.hosts.agents.ServerAgent`) runs a :class:`ClusterTarget`
where it would run one server (:class:`perflab.server.target.ServerTarget`), through the same calls:
``start()``, ``stop()``, ``samples()`` (every node's ``/v0/stats``), ``cpu_window()`` (the nodes' CPU
summed), ``files()``, ``pid_of(node)``. What only a cluster does goes through the agent's ``call`` (the
names in :attr:`ClusterTarget.CALLS`), from the coordinator's :class:`perflab.cluster.remote.RemoteCluster`.
Everything that touches the nodes (signals, ``/proc``, their HTTP API) runs here, next to them: times are
the server host's clock, the clock of the merged load, the stats and the events.

A ``ClusterConfig`` target starts its nodes for the run (logs and events under ``<run>/nodes/<i>/``, data
under the session's storage directory, ``node<i>/``) and stops them with the session; a running
:class:`~perflab.cluster.nodes.Cluster` (``pl.start_cluster``, only on the in-process hosts: it lives in
the coordinator's process) is sampled and measured, and left running.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..config.cluster import ClusterConfig
from .nodes import PAUSED, RUNNING, Cluster


def is_cluster(target) -> bool:
    """``target`` is a cluster (a ``ClusterConfig`` or a running ``Cluster``)."""
    return isinstance(target, (ClusterConfig, Cluster))


class ClusterTarget:
    """The nodes of ``config`` (a ``ClusterConfig`` to start, or a running ``Cluster``) on this host (see the
    module docstring). ``host``: the address the nodes listen on when the generators run on other hosts."""

    CALLS = ("info", "cpu_frame", "events", "profiling_unavailable", "fill", "faults_start", "faults_stop",
             "resume_paused", "check_start", "check_finish", "check_abort", "key_distribution")

    def __init__(self, config, data_dir: Path | None, log_dir: Path, cpu_prefix: list[str], stats_interval: float,
                 host: str | None = None):
        self.config, self.data_dir, self.log_dir = config, data_dir, log_dir
        self.cpu_prefix, self.stats_interval, self.host = cpu_prefix, stats_interval, host
        self.cluster: Cluster | None = None
        self.owned = isinstance(config, ClusterConfig)
        self.stats = self.cpu = self.faults = self.checker = None

    # --- what every target does -------------------------------------------------------------------------
    def start(self) -> dict:
        from ..server.foreign import stats_available
        from .sampling import ClusterCpu, ClusterStats

        if self.cluster is None and self.owned:
            # the session's storage directory holds every node's (node<i>/); the agent deletes it, not a stop
            self.cluster = Cluster(self.config, self.log_dir, self.data_dir, self.cpu_prefix, keep_data=True,
                                   host=self.host or "127.0.0.1").start()
        elif self.cluster is None:
            self.cluster = self.config
            if any(n.state == "new" for n in self.cluster.nodes):
                raise ValueError("server: this Cluster was never started (use pl.start_cluster, or pass its "
                                 "ClusterConfig)")
        elif self.owned:
            self.cluster.start()   # again, on the same ports and data (a fresh cluster per probe)
        cl = self.cluster
        with_stats = [n.index for n in cl.nodes if n.state == RUNNING and
                      (not cl.config.foreign or stats_available(n.url) is None)]
        self.stats = ClusterStats(cl, self.stats_interval, with_stats).start() if with_stats else None
        self.cpu = ClusterCpu(cl).start()
        entry = cl.nodes[cl.config.entries[0]]
        return {"kind": "cluster", "config": cl.config, "url": entry.url, "urls": list(cl.urls),
                "entry_urls": {f"node{i}": cl.nodes[i].url for i in cl.config.entries}, "pid": entry.pid,
                "pids": [n.pid for n in cl.nodes], "java_version": cl.java_version, "command": list(cl.command),
                "info": cl.info(), "owned": self.owned, "effective_config": None, "ready": None, "jvm": None,
                "profiling_unavailable": None, "started_at": time.time(),
                "stats_unavailable": None if with_stats else "no node answers GET /v0/stats with a JSON object"}

    def stop(self) -> dict | None:
        """Stop the samplers, a fault schedule or checker still running, and the nodes this target started (a
        running cluster it was given is left running, resumed if a node was paused)."""
        self.check_abort()
        if self.faults is not None:
            self.faults.stop(5)
        for s in (self.stats, self.cpu):
            if s is not None:
                s.stop()
        if self.cluster is None:
            return None
        if self.owned:
            self.cluster.stop()
        else:
            self.resume_paused()
        return self.cluster.info()

    def samples(self) -> dict[int, list[dict]]:
        """Every node's ``/v0/stats`` samples so far, by node (:func:`.sampling.cluster_stats_frame`)."""
        return self.stats.samples if self.stats is not None else {}

    def cpu_window(self, start: float, end: float):
        return self.cpu.window(start, end) if self.cpu is not None else None

    def files(self) -> dict[str, str]:
        """The logs and events of the nodes this target started, by their path in the run directory."""
        if not self.owned or self.cluster is None:
            return {}
        out = {}
        for p in [self.log_dir / "cluster.log", *(f for n in self.cluster.nodes for f in (n.log_path, n.events_path))]:
            if p.is_file():
                out[str(p.relative_to(self.log_dir))] = p.read_text(errors="replace")
        return out

    def pid_of(self, node: int | None = None) -> int | None:
        return self.cluster.node(node if node is not None else self.cluster.config.entries[0]).pid

    # --- what only a cluster does (CALLS) ----------------------------------------------------------------
    def info(self) -> dict:
        """What a run records about the cluster (its nodes' incarnations included)."""
        return self.cluster.info()

    def cpu_frame(self, t0: float | None):
        """Each node's cores and RSS over time (:meth:`.sampling.ClusterCpu.frame`)."""
        return self.cpu.frame(t0) if self.cpu is not None else None

    def events(self, since: float) -> list[dict]:
        """Every node's timed events that end after ``since`` (epoch seconds: not the nodes' start-up, nor an
        earlier run's), each with its ``node``."""
        from ..server.events import parse_events

        rows = []
        for n in self.cluster.nodes:
            if n.events_path.is_file():
                rows += [{**e, "node": n.index} for e in parse_events(n.events_path.read_text(errors="replace"))
                         if e["ts_us"] + int(e.get("dur_us") or 0) >= since * 1e6]
        return rows

    def profiling_unavailable(self, node: int) -> str | None:
        n = self.cluster.node(node)
        if n.pid is None:
            return "the node is not running"
        if self.cluster.config.foreign and not n.jvm:
            return f"pid {n.pid} is not a JVM; async-profiler profiles HotSpot JVMs"
        return None

    def fill(self, keys: int, value_size: int, seed: int, prefix: str, path: str, param: str) -> dict:
        """``<prefix>0 .. <prefix><keys-1>`` written once each through the entry nodes with the cluster's
        ack/from (:func:`.fill.fill_cluster`), then settled: every replica has them."""
        from .fill import fill_cluster

        cfg = self.cluster.config
        row = fill_cluster([self.cluster.nodes[i].url for i in cfg.entries], keys, value_size, seed, prefix,
                           "&" + "&".join(cfg.replica_args()), path, param)
        row["settled"] = self.cluster.settle(timeout=30)
        return row

    def faults_start(self, schedule: list, window_start: float) -> None:
        """Apply ``schedule`` (checked :class:`.faults.Fault` s) from ``window_start`` (this host's clock)."""
        from .faults import FaultRunner

        self.faults = FaultRunner(self.cluster, schedule, window_start).start()

    def faults_stop(self, timeout: float = 120.0) -> list[dict]:
        """Stop the schedule (faults not yet due never happen); every fault's row (:class:`.faults.FaultRunner`)."""
        if self.faults is None:
            return []
        applied, self.faults = self.faults.stop(timeout), None
        return applied

    def resume_paused(self) -> list[dict]:
        """Resume every node left paused (never leave a node stopped behind a run); when, per node."""
        out = []
        for n in self.cluster.nodes:
            if n.state == PAUSED:
                n.resume()
                out.append({"node": n.index, "ts_us": int(time.time() * 1e6)})
        return out

    def check_start(self, params, write: tuple[int, int], read: tuple[int, int], path: str, param: str,
                    duration_s: float, at: float) -> None:
        """The consistency checker (:class:`.checker.Checker`) through every node, from ``at`` (this host's
        clock) for ``duration_s``."""
        from .checker import Checker

        cfg = self.cluster.config
        self.checker = Checker(self.cluster.urls, params, write, read, cfg.api, list(range(cfg.nodes)), path,
                               param).start(duration_s, at=at)

    def check_finish(self, join_timeout: float, final_read: bool, keeps_data: bool | None, restarts: bool) -> dict:
        """Wait for the checker's operations, read every key once more through the running nodes (after the
        faults), and judge: ``{"ops": every operation, "verdict": Verdict}``."""
        chk = self.checker
        chk.join(join_timeout)
        chk.stop()
        if final_read:
            running = [n.index for n in self.cluster.nodes if n.state == RUNNING]
            if running:
                chk.final_read(via=running)
        chk.close()
        self.checker = None
        return {"ops": list(chk.ops), "verdict": chk.verdict(keeps_data=keeps_data, restarts=restarts)}

    def check_abort(self) -> None:
        if self.checker is not None:
            self.checker.stop()
            self.checker.close()
            self.checker = None

    def key_distribution(self, keys: int):
        """The key distribution over ``key0 .. key<keys-1>`` (:func:`.distribution.key_distribution`)."""
        from .distribution import key_distribution

        return key_distribution(self.cluster, keys)

