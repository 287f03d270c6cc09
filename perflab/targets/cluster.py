"""A cluster as a target: N nodes of the built-in server or of yours (:class:`ClusterTarget`), on the server
host (:class:`ClusterHost`), with what only a cluster does: the fill through its entry nodes, faults on a
schedule, the consistency checker, the key distribution (:class:`ClusterHandle`).

Everything that touches the nodes (signals, ``/proc``, their HTTP API) runs on the server host, next to
them: times are that host's clock, the clock of the merged load, the stats and the events. A
``ClusterConfig`` target starts its nodes for the run (logs and events under ``<run>/nodes/<i>/``, data under
the session's storage directory, ``node<i>/``) and stops them with the session; a running
:class:`~perflab.nodes.processes.Cluster` (``pl.start_cluster``, only on the in-process hosts: it lives in the
coordinator's process) is sampled and measured, and left running.
"""

from __future__ import annotations

import os
import time

import pandas as pd

from ..commits.git import checkout, server_commit
from ..config import LoadParams
from ..config.cluster import ClusterConfig
from ..hosts.actors import answer
from ..nodes.checker import Checker
from ..nodes.distribution import key_distribution
from ..nodes.faults import FaultRunner
from ..nodes.load import cluster_load
from ..nodes.processes import PAUSED, RUNNING, Cluster
from ..nodes.sampling import ClusterStats, cluster_stats_frame
from ..profiling.codemap import BUILTIN, CodeMap
from ..server.cpu import ProcessCpu
from ..server.fill import write_keys
from ..server.foreign import ready_line, stats_available
from ..timeline.events import events_frame, parse_events
from .base import CALL_S, Around, Target, TargetHandle, TargetHost


class ClusterHost(TargetHost):
    """The nodes of the target's cluster on this host (see the module docstring)."""

    def __init__(self, name: str, *args):
        super().__init__(name, *args)
        self.cluster: Cluster | None = None
        self.stats = self.faults = self.checker = None

    @property
    def owned(self) -> bool:
        """The nodes were started for this run (not a running cluster it was given)."""
        return not self.target.running

    # --- what every target does -------------------------------------------------------------------------
    def _start(self) -> dict:
        if self.cluster is None and self.owned:
            # the session's storage directory holds every node's (node<i>/); the agent deletes it, not a stop
            self.cluster = Cluster(
                self.target.config,
                self.log_dir,
                self.data_dir,
                self.cpu_prefix,
                keep_data=True,
                host=self.listen or "127.0.0.1",
            ).start()
        elif self.cluster is None:
            self.cluster = self.target.config
            if any(n.state == "new" for n in self.cluster.nodes):
                raise ValueError(
                    "server: this Cluster was never started (use pl.start_cluster, or pass its ClusterConfig)"
                )
        elif self.owned:
            self.cluster.start()  # again, on the same ports and data (a fresh cluster per probe)
        cl = self.cluster
        with_stats = [
            n.index
            for n in cl.nodes
            if n.state == RUNNING and (not cl.config.foreign or stats_available(n.url) is None)
        ]
        self.stats = ClusterStats(cl, self.stats_interval, with_stats).start() if with_stats else None
        self.cpu = ProcessCpu(lambda: {n.index: n.pid for n in cl.nodes}).start()
        entry = cl.nodes[cl.config.entries[0]]
        return {
            "kind": "cluster",
            "config": cl.config,
            "url": entry.url,
            "urls": list(cl.urls),
            "entry_urls": {f"node{i}": cl.nodes[i].url for i in cl.config.entries},
            "pid": entry.pid,
            "pids": [n.pid for n in cl.nodes],
            "java_version": cl.java_version,
            "command": list(cl.command),
            "info": cl.info(),
            "owned": self.owned,
            "effective_config": None,
            "jvm": None,
            "ready": ready_line(cl.nodes[0].log_path) if cl.config.foreign else None,
            "profiling_unavailable": None,
            "started_at": time.time(),
            "stats_unavailable": None if with_stats else "no node answers GET /v0/stats with a JSON object",
        }

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
        """Every node's ``/v0/stats`` samples so far, by node (:func:`perflab.nodes.sampling.cluster_stats_frame`)."""
        return self.stats.samples if self.stats is not None else {}

    def cpu_window(self, start: float, end: float):
        return self.cpu.window(start, end) if self.cpu is not None else None

    def cpu_frame(self, t0: float | None):
        return self.cpu.frame(t0) if self.cpu is not None else None

    def cpu_at(self, times: list[float], ours: list[int]) -> None:
        self.heard()
        if self.cpu is not None:
            self.cpu.at(times, ours)

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

    # --- what only a cluster does -------------------------------------------------------------------------
    def info(self) -> dict:
        """What a run records about the cluster (its nodes' incarnations included)."""
        self.heard()
        return self.cluster.info()

    def events(self, since: float) -> list[dict]:
        """Every node's timed events that end after ``since`` (epoch seconds: not the nodes' start-up, nor an
        earlier run's), each with its ``node``."""
        self.heard()
        rows = []
        for n in self.cluster.nodes:
            if n.events_path.is_file():
                rows += [
                    {**e, "node": n.index}
                    for e in parse_events(n.events_path.read_text(errors="replace"))
                    if e["ts_us"] + int(e.get("dur_us") or 0) >= since * 1e6
                ]
        return rows

    def profiling_unavailable(self, node: int) -> str | None:
        self.heard()
        n = self.cluster.node(node)
        if n.pid is None:
            return "the node is not running"
        if self.cluster.config.foreign and not n.jvm:
            return f"pid {n.pid} is not a JVM; async-profiler profiles HotSpot JVMs"
        return None

    def fill(self, keys: int, value_size: int, seed: int, prefix: str, path: str, param: str) -> dict:
        """``<prefix>0 .. <prefix><keys-1>`` written once each through the entry nodes with the cluster's
        ack/from (:func:`perflab.server.fill.write_keys`), then settled: every replica has them."""
        self.heard()
        cfg = self.cluster.config
        with self.abortable() as stop:
            row = write_keys(
                [self.cluster.nodes[i].url for i in cfg.entries],
                keys,
                value_size,
                seed,
                prefix,
                "&" + "&".join(cfg.replica_args()),
                path,
                param,
                stop=stop,
            )
        row["settled"] = self.cluster.settle(timeout=30)
        self.heard()
        return row

    def faults_start(self, schedule: list, window_start: float) -> None:
        """Apply ``schedule`` (checked :class:`perflab.nodes.faults.Fault` s) from ``window_start`` (this
        host's clock)."""
        self.heard()
        self.faults = FaultRunner(self.cluster, schedule, window_start).start()

    def faults_stop(self, timeout: float = 120.0) -> list[dict]:
        """Stop the schedule (faults not yet due never happen); every fault's row
        (:class:`perflab.nodes.faults.FaultRunner`)."""
        self.heard()
        if self.faults is None:
            return []
        applied, self.faults = self.faults.stop(timeout), None
        return applied

    def resume_paused(self) -> list[dict]:
        """Resume every node left paused (never leave a node stopped behind a run); when, per node."""
        self.heard()
        out = []
        for n in self.cluster.nodes:
            if n.state == PAUSED:
                n.resume()
                out.append({"node": n.index, "ts_us": int(time.time() * 1e6)})
        return out

    def check_start(
        self, params, write: tuple[int, int], read: tuple[int, int], path: str, param: str, duration_s: float, at: float
    ) -> None:
        """The consistency checker (:class:`perflab.nodes.checker.Checker`) through every node, from ``at``
        (this host's clock) for ``duration_s``."""
        self.heard()
        cfg = self.cluster.config
        self.checker = Checker(
            self.cluster.urls, params, write, read, cfg.api, list(range(cfg.nodes)), path, param
        ).start(duration_s, at=at)

    def check_finish(self, join_timeout: float, final_read: bool, keeps_data: bool | None, restarts: bool) -> dict:
        """Wait for the checker's operations, read every key once more through the running nodes (after the
        faults), and judge: ``{"ops": every operation, "verdict": Verdict}``."""
        self.heard()
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
        """The key distribution over ``key0 .. key<keys-1>`` (:func:`perflab.nodes.distribution.key_distribution`)."""
        self.heard()
        return key_distribution(self.cluster, keys)


class ClusterHandle(TargetHandle):
    """The coordinator's handle on the cluster under test: what every target has, the cluster's facts, and
    what only a cluster does (each one call to :class:`ClusterHost`)."""

    #: the ClusterConfig its requests use (a running cluster's: its nodes, and this run's ack/from and entries)
    config = property(lambda self: self.desc["config"])
    urls = property(lambda self: self.desc["urls"])
    #: where loads go: ``node<i>`` -> URL of every entry node
    entries = property(lambda self: dict(self.desc["entry_urls"]))
    owned = property(lambda self: self.desc["owned"])

    def info(self) -> dict:
        return answer(self._host.info(), CALL_S, self._on("info"))

    def stop(self) -> None:
        self._final = answer(self._host.stop(), CALL_S, self._on("stop")) or self.desc["info"]

    def events(self, since: float) -> list[dict]:
        return answer(self._host.events(since), CALL_S, self._on("events"))

    def profiling_unavailable_on(self, node: int) -> str | None:
        return answer(self._host.profiling_unavailable(node), CALL_S, self._on("profiling_unavailable"))

    def fill(self, keys: int, value_size: int, seed: int, prefix: str, path: str, param: str) -> dict:
        return answer(
            self._host.fill(keys, value_size, seed, prefix, path, param), CALL_S + keys / 10, self._on("fill")
        )

    def faults_start(self, schedule: list, window_start: float) -> None:
        answer(self._host.faults_start(schedule, window_start), CALL_S, self._on("faults_start"))

    def faults_stop(self) -> list[dict]:
        return answer(self._host.faults_stop(), CALL_S, self._on("faults_stop"))

    def resume_paused(self) -> list[dict]:
        return answer(self._host.resume_paused(), CALL_S, self._on("resume_paused"))

    def check_start(
        self, params, write: tuple[int, int], read: tuple[int, int], path: str, param: str, duration_s: float, at: float
    ) -> None:
        answer(
            self._host.check_start(params, write, read, path, param, duration_s, at), CALL_S, self._on("check_start")
        )

    def check_finish(
        self, join_timeout: float, final_read: bool, keeps_data: bool | None, restarts: bool, timeout: float
    ) -> dict:
        return answer(
            self._host.check_finish(join_timeout, final_read, keeps_data, restarts), timeout, self._on("check_finish")
        )

    def key_distribution(self, keys: int):
        return answer(self._host.key_distribution(keys), CALL_S, self._on("key_distribution"))


class ClusterTarget(Target):
    """N nodes: a :class:`~perflab.config.cluster.ClusterConfig` started for the run, or a running
    :class:`~perflab.nodes.processes.Cluster` (measured, left running)."""

    kind = "cluster"
    host_class = ClusterHost
    stats_indexed = (
        "node",
        "t_s",
        "cluster.coordinated_delta",
        "cluster.gateway_timeouts_delta",
        "cluster.internal_served_delta",
        "requests_total_delta",
        "executor.queue_depth",
    )

    @property
    def cluster_config(self) -> ClusterConfig:
        """The ClusterConfig (a running cluster's own)."""
        return self.config if isinstance(self.config, ClusterConfig) else self.config.config

    @property
    def running(self) -> bool:
        return isinstance(self.config, Cluster)

    @property
    def needs_data_dir(self) -> bool:
        return not self.running and self.config.needs_data_dir

    @property
    def entry_count(self) -> int:
        return len(self.cluster_config.entries)

    def version_commit(self) -> str | None:
        """Your nodes: the commit of the directory their command runs in, when that is in a git work tree of its
        own (not perflab's: :func:`~perflab.commits.git.server_commit`); the built-in server's: this checkout's."""
        cfg = self.cluster_config
        return server_commit(cfg.workdir or os.getcwd()) if cfg.command is not None else checkout()["commit"]

    @property
    def start_s(self) -> float:
        cfg = self.cluster_config
        return CALL_S + cfg.nodes * cfg.startup_timeout

    def why_not(self, feature: str) -> str | None:
        if feature == "prefill":
            return (
                "it writes plain values, and a cluster node stores timestamped records; fill writes keys through "
                "the cluster (fill=N, --fill N)"
            )
        if feature == "pause":
            return "freezing a whole cluster is not supported; a fault pauses one node (--fault 'at=2s node=1 pause')"
        if feature == "faults":
            return None
        if feature == "remote" and self.running:
            return (
                "a running Cluster (pl.start_cluster) lives in this Python process; measure it on this machine "
                "alone (no scheduler), or give its ClusterConfig to start its nodes on the server host"
            )
        if feature == "side":
            return "an interleaved comparison takes one server per side (a cluster is measured by run_experiment)"
        return super().why_not(feature)

    def load_for(self, load: LoadParams) -> LoadParams:
        return cluster_load(load, self.cluster_config)

    def code_map(self, ready: dict | None) -> CodeMap:
        return super().code_map(ready) if self.cluster_config.foreign else BUILTIN

    def stats_frame(self, samples, t0: float | None = None) -> pd.DataFrame:
        return cluster_stats_frame(samples, t0)

    def record(self, handle: TargetHandle) -> tuple[dict, dict]:
        """``meta.json``'s ``cluster`` (nodes, topology, incarnations) and ``server``; node logs lie under
        ``nodes/<i>/`` of a cluster the run started."""
        return (
            {
                "cluster": handle.info(),
                "server": {
                    "java_version": handle.java_version,
                    "command": handle.command or None,
                    "target": "cluster",
                    "owned": handle.owned,
                },
            },
            {},
        )

    def handle(self, hosts, desc: dict) -> ClusterHandle:
        return ClusterHandle(hosts, self, desc)


class FaultsAndChecker(Around):
    """What a cluster's run (:mod:`perflab.cluster_run`) does around its window besides the load: faults on schedule and the consistency
    checker from the window's start; after the load, the faults stopped, a node left paused resumed, the
    checker's keys read back; every node's CPU; its events are every node's, the faults' and the spans a node
    was down or paused."""

    timed = True

    def __init__(self, schedule, consistency, load, session_start: float):
        self.schedule, self.consistency, self.load = schedule, consistency, load
        self.session_start = session_start
        self.applied, self.resumed, self.checked, self.cpu, self.checking = [], [], None, None, False

    def started(self, cl, lp) -> None:
        cl.faults_start(self.schedule, lp.window_start)
        c, cfg = self.consistency, cl.config
        if c is not None:
            write = (c.write_ack or cfg.replicas_ack, cfg.replicas_from)
            read = (c.read_ack or cfg.replicas_ack, cfg.replicas_from)
            cl.check_start(c, write, read, *self.load.entity_api, c.duration or self.load.duration, lp.window_start)
            self.checking = True

    def stopped(self, cl, res) -> None:
        self.applied = cl.faults_stop()

    def settled(self, cl) -> None:
        self.resumed = cl.resume_paused()  # never leave a node stopped behind the run
        c, cfg = self.consistency, cl.config
        if self.checking:
            keeps = None if cfg.foreign else all(cfg.node_config(i).backend != "memory" for i in range(cfg.nodes))
            restarts = any(a["action"] in ("restart", "kill", "stop") and not a["error"] for a in self.applied)
            self.checked = cl.check_finish(
                c.timeout + 10, c.final_read, keeps, restarts, timeout=c.timeout * (c.keys + 10) + 120
            )

    def sampled(self, cl, t0: float) -> None:
        self.cpu = cl.cpu_frame(t0)

    def events(self, cl, load_started: float, t0: float, end: float) -> pd.DataFrame:
        return window_events(
            cl.events(max(self.session_start, load_started - 1.0)), t0, self.applied, self.resumed, end
        )


def window_events(
    node_events: list[dict], t0: float, applied: list[dict], resumed: list[dict], end: float
) -> pd.DataFrame:
    """Every node's timed events (``node_events``, each with its ``node``), the faults as events of their
    action's name, and the spans each node was down (``node_down``) or paused (``node_paused``), on the
    window's axis."""
    frames = []
    if node_events:
        f = events_frame(node_events, t0)
        frames.append(f.assign(node=f["details"].map(lambda d: d.get("node"))))
    rows = []
    applied = [a for a in applied if a["ts_us"] is not None]  # a fault that never happened is no event
    for a in applied:
        rows.append(
            {
                "event": a["action"],
                "ts_us": a["ts_us"],
                "dur_us": a["dur_us"],
                "node": a["node"],
                "fault": a["fault"],
                "error": a["error"],
            }
        )
    for r in resumed:
        rows.append(
            {
                "event": "resume",
                "ts_us": r["ts_us"],
                "dur_us": 0,
                "node": r["node"],
                "fault": "resumed at the end of the run",
            }
        )
    open_down, open_pause = {}, {}
    for a in sorted(applied, key=lambda x: x["ts_us"]):
        if a["error"]:
            continue
        i, ts = a["node"], a["ts_us"]
        if a["action"] in ("kill", "stop"):
            open_pause.pop(i, None)
            open_down[i] = ts
        elif a["action"] == "restart":
            start = open_down.pop(i, ts)
            rows.append({"event": "node_down", "ts_us": start, "dur_us": ts + a["dur_us"] - start, "node": i})
        elif a["action"] == "pause":
            open_pause[i] = ts
        elif a["action"] == "resume" and i in open_pause:
            start = open_pause.pop(i)
            rows.append({"event": "node_paused", "ts_us": start, "dur_us": ts - start, "node": i})
    end_us = int(end * 1e6)
    for i, ts in open_down.items():
        rows.append({"event": "node_down", "ts_us": ts, "dur_us": max(0, end_us - ts), "node": i})
    for i, ts in open_pause.items():
        rows.append({"event": "node_paused", "ts_us": ts, "dur_us": max(0, end_us - ts), "node": i})
    if rows:
        f = events_frame(rows, t0)
        frames.append(f.assign(node=f["details"].map(lambda d: d.get("node"))))
    if not frames:
        return pd.DataFrame(columns=["event", "start_s", "end_s", "dur_ms", "ts_us", "dur_us", "details", "node"])
    return pd.concat(frames, ignore_index=True).sort_values("start_s", kind="stable").reset_index(drop=True)
