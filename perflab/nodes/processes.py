"""Starting, stopping and breaking the nodes of a cluster: each node its own process group, port and data
directory, so each can be profiled, killed, paused and restarted alone.

:class:`Cluster` starts N nodes in parallel from a :class:`~perflab.config.cluster.ClusterConfig`: the
built-in server (:class:`~perflab.server.builtin.Server`, one JVM per node, ``--cluster`` with the same list
on every node and each its own ``--port``/``--self-url``) or your command with placeholders (one process
per node, or one command that starts them all). :class:`Node` is one of them: ``kill`` (SIGKILL),
``stop`` (graceful: SIGTERM, then SIGKILL after a grace period), ``pause``/``resume`` (SIGSTOP/SIGCONT: a
hung node whose sockets stay open), ``restart`` (start again on the same port and data). Every start and
stop is an *incarnation* with its pid and times, recorded in the run.

No orphans: every process is registered with :mod:`perflab.children` (killed at interpreter exit), and
:meth:`Cluster.stop` resumes a paused node before stopping it, so nothing stays stopped behind the run.
Started by an agent (:class:`perflab.targets.cluster.ClusterHost`), each node also dies with the agent's
worker (``setpriv --pdeathsig KILL`` in ``cpu_prefix``). That signal follows the *thread* that started the
process, so every start of a node (a restart by a fault too) runs on the node's own thread, which lives as
long as the node: a node never dies because the thread that happened to start it ended.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import secrets
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import children, paths
from ..config.cluster import ClusterConfig
from ..errors import ServerStartError
from ..server.builtin import Server
from ..server.counters import fetch_stats
from ..server.foreign import jvm_of, listening_pid
from ..server.http import http_get
from ..server.placement import Placement
from .topology import Topology, node_command

#: node states
RUNNING, PAUSED, DOWN, NEW = "running", "paused", "down", "new"


def _answers(url: str, path: str) -> bool:
    try:
        http_get(url + path, timeout=1.0)
        return True
    except OSError:
        return False


def _signal_group(proc: subprocess.Popen | None, sig: int) -> None:
    """``sig`` to ``proc``'s process group (each node has its own session)."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(os.getpgid(proc.pid), sig)
    except (ProcessLookupError, PermissionError):
        pass


class Node:
    """One node of a :class:`Cluster` (``index`` is its position in the ``--cluster`` list)."""

    def __init__(self, cluster: Cluster, index: int):
        self.cluster = cluster
        self.index = index
        self.url = cluster.topology.url(index)
        self.port = cluster.topology.ports[index]
        self.dir = cluster.log_root / "nodes" / str(index)
        self.data_dir = cluster.data_root / f"node{index}" if cluster.data_root is not None else None
        self.state = NEW
        self.server: Server | None = None  # built-in
        self.proc: subprocess.Popen | None = None  # your per-node command
        self.command: list[str] = []
        self.incarnations: list[dict] = []
        self._pid: int | None = None
        self.jvm: dict | None = None
        self._lock = threading.RLock()
        # the thread every start of this node runs on (see the module docstring: the parent-death signal)
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"perflab-node{index}")

    # --- what the lab reads -------------------------------------------------------------------------
    @property
    def config(self) -> ClusterConfig:
        return self.cluster.config

    @property
    def pid(self) -> int | None:
        """The process serving this node now (``None`` while it is down)."""
        if self.state in (DOWN, NEW):
            return None
        if self.server is not None:
            return self.server.pid
        return self._pid

    @property
    def java_version(self) -> str | None:
        if self.server is not None:
            return self.server.java_version
        return (self.jvm or {}).get("java_version")

    @property
    def events_path(self) -> Path:
        """The node's stdout protocol (built-in nodes), every incarnation appended."""
        return self.dir / "server-events.jsonl"

    @property
    def log_path(self) -> Path:
        return self.dir / ("server.log" if not self.config.foreign else "node.log")

    def log_tail(self, lines: int = 30) -> str:
        return children.tail(self.log_path, lines)

    # --- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> Node:
        """Start (or start again) on this node's port and data directory; returns once it answers."""
        return self._starter.submit(self._start).result()

    def _start(self) -> Node:
        with self._lock:
            if self.state in (RUNNING, PAUSED):
                raise RuntimeError(f"node {self.index} is already running")
            self.dir.mkdir(parents=True, exist_ok=True)
            if self.data_dir is not None:
                self.data_dir.mkdir(parents=True, exist_ok=True)
            t = time.time()
            if self.config.one_command:
                raise ValueError(
                    f"node {self.index}: a cluster started by one command ({{ports}}) cannot start "
                    f"one node again; give a command per node ({{port}}) to restart nodes"
                )
            if self.config.foreign:
                self._start_command()
            else:
                cfg = self.config.node_config(self.index).replace(
                    host=self.cluster.topology.host,
                    port=self.port,
                    cluster=self.cluster.topology.cluster,
                    self_url=self.url,
                )
                db = self.data_dir / "db" if self.data_dir is not None and cfg.needs_data_dir else None
                self.server = Server(
                    cfg, data_dir=db, log_dir=self.dir, keep_data=True, cpu_prefix=self.cluster.cpu_prefix
                )
                try:
                    self.server.start(timeout=self.config.startup_timeout)
                except ServerStartError as e:
                    raise ServerStartError(f"node {self.index} ({self.url}): {e.cause}", e.log_tail) from None
                self.command = self.server.command
            self.state = RUNNING
            self.incarnations.append({"pid": self.pid, "started_at": t, "ready_at": time.time()})
            return self

    def _start_command(self):
        self.command = [
            *self.cluster.cpu_prefix,
            *node_command(
                self.config.command,
                self.cluster.topology,
                self.index,
                str(self.data_dir) if self.data_dir is not None else None,
            ),
        ]
        self.proc = children.launch(
            self.command, self.log_path, cwd=self.config.workdir, what=f"node {self.index}: the command"
        )
        children.await_ready(
            self.proc,
            lambda: _answers(self.url, self.config.ready_path),
            self.config.startup_timeout,
            f"node {self.index}: the command",
            f"on port {self.port}",
            self.log_tail,
        )
        self._pid = listening_pid(self.port) or self.proc.pid
        self.jvm = jvm_of(self._pid)

    def attach_member(self, pid: int | None) -> None:
        """A node started by the cluster's one command: known by the pid listening on its port."""
        self._pid = pid
        self.jvm = jvm_of(pid) if pid else None
        self.state = RUNNING
        self.incarnations.append({"pid": pid, "started_at": time.time(), "ready_at": time.time()})

    def _signal(self, sig: int) -> None:
        if self.server is not None:
            _signal_group(self.server.proc, sig)
        elif self.proc is not None:
            _signal_group(self.proc, sig)
        elif self._pid:  # one member of the one-command cluster: only its own process
            try:
                os.kill(self._pid, sig)
            except ProcessLookupError:
                pass

    def _ended(self, how: str, exit_code=None) -> None:
        self.state = DOWN
        if self.incarnations:
            self.incarnations[-1].update(stopped_at=time.time(), how=how, exit_code=exit_code)

    def kill(self) -> None:
        """SIGKILL: the node is gone at once, with what it had not written (``kill -9``)."""
        with self._lock:
            self._require(RUNNING, PAUSED, what="kill")
            self._signal(signal.SIGKILL)
            code = self._reap(5)
            self._ended("kill", code)

    def stop(self, grace_s: float = 10.0) -> None:
        """Graceful: SIGTERM (the built-in server flushes its memtables), SIGKILL after ``grace_s``."""
        with self._lock:
            if self.state in (DOWN, NEW):
                return
            if self.state == PAUSED:
                self._signal(signal.SIGCONT)  # a stopped process cannot act on SIGTERM
            if self.server is not None:
                code = self.server.stop(grace_s)
            elif self.proc is not None:
                code = children.kill_group(self.proc, grace_s)
            else:
                self._signal(signal.SIGTERM)
                code = self._wait_gone(grace_s)
            self._ended("stop", code)

    def pause(self) -> None:
        """SIGSTOP: the node hangs with its sockets open (clients and peers time out)."""
        with self._lock:
            self._require(RUNNING, what="pause")
            self._signal(signal.SIGSTOP)
            self.state = PAUSED

    def resume(self) -> None:
        with self._lock:
            self._require(PAUSED, what="resume")
            self._signal(signal.SIGCONT)
            self.state = RUNNING

    def restart(self, grace_s: float = 10.0) -> None:
        """Start again on the same port and data; a running node is stopped gracefully first."""
        self._starter.submit(self._restart, grace_s).result()

    def _restart(self, grace_s: float) -> None:
        with self._lock:
            if self.state == PAUSED:
                raise ValueError(f"node {self.index} is paused: resume or kill it before a restart")
            if self.state == RUNNING:
                self.stop(grace_s)
            self._start()

    def _require(self, *states, what: str):
        if self.state not in states:
            raise ValueError(f"node {self.index}: cannot {what} a node that is {self.state}")

    def _reap(self, timeout: float):
        proc = self.server.proc if self.server is not None else self.proc
        if proc is not None:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
            if self.server is not None:
                self.server.stop(grace_s=1)  # reaps, closes its pipes, unregisters
            else:
                children.kill_group(proc, 1)
            return proc.poll()
        return self._wait_gone(timeout)

    def _wait_gone(self, timeout: float):
        end = time.monotonic() + timeout
        while self._pid and time.monotonic() < end:
            try:
                os.kill(self._pid, 0)
            except ProcessLookupError:
                return None
            time.sleep(0.05)
        if self._pid:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return None

    def info(self) -> dict:
        return {
            "index": self.index,
            "url": self.url,
            "port": self.port,
            "state": self.state,
            "data_dir": str(self.data_dir) if self.data_dir is not None else None,
            "log_dir": str(self.dir),
            "command": self.command,
            "java_version": self.java_version,
            "incarnations": self.incarnations,
        }

    def __repr__(self):
        return f"<Node {self.index} {self.url} {self.state}>"


class Cluster:
    """N nodes of ``config`` (see the module docstring). ``log_root``: node logs and events under
    ``log_root/nodes/<i>/``; ``data_root``: node data under ``data_root/node<i>/`` (deleted on :meth:`stop`
    unless ``keep_data``); ``cpu_prefix``: a command prefix that pins every node (``taskset -c 0``)."""

    def __init__(
        self,
        config: ClusterConfig,
        log_root: str | os.PathLike,
        data_root: str | os.PathLike | None,
        cpu_prefix: list[str] | None = None,
        keep_data: bool = False,
        host: str = "127.0.0.1",
    ):
        if not isinstance(config, ClusterConfig):
            raise ValueError(f"config must be a ClusterConfig, got {type(config).__name__}")
        self.config = config
        self.log_root = Path(log_root)
        self.data_root = Path(data_root) if data_root is not None else None
        self.cpu_prefix = list(cpu_prefix or [])
        self.keep_data = keep_data
        self.topology = Topology.pick(config.nodes, host)
        self.nodes = [Node(self, i) for i in range(config.nodes)]
        self.proc: subprocess.Popen | None = None  # the one command ({ports})
        self.command: list[str] = []
        self.started = False

    # --- the surface a session reads (like a single server's) --------------------------------------------
    @property
    def url(self) -> str:
        """The first entry node's URL."""
        return self.nodes[self.config.entries[0]].url

    @property
    def pid(self) -> int | None:
        return self.nodes[self.config.entries[0]].pid

    @property
    def java_version(self) -> str | None:
        return next((n.java_version for n in self.nodes if n.java_version), None)

    @property
    def urls(self) -> list[str]:
        return self.topology.urls

    #: a running cluster's nodes have their data directories already (a session makes none)
    needs_data_dir = False

    def node(self, index: int) -> Node:
        if not isinstance(index, int) or not 0 <= index < len(self.nodes):
            raise ValueError(f"node: {index!r} is out of range: the cluster has nodes 0..{len(self.nodes) - 1}")
        return self.nodes[index]

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(f"--- node {n.index} ---\n{n.log_tail(lines)}" for n in self.nodes)

    # --- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> Cluster:
        """Start every node in parallel (again after :meth:`stop`: on the same ports and data); on any failure
        stop the others and raise the first error."""
        if any(n.state in (RUNNING, PAUSED) for n in self.nodes):
            raise RuntimeError("this Cluster is running; stop it before starting it again")
        self.started = True
        try:
            if self.config.one_command:
                # on a thread that lives as long as the nodes (the parent-death signal: module docstring)
                self.nodes[0]._starter.submit(self._start_one_command).result()
            else:
                with ThreadPoolExecutor(max_workers=len(self.nodes), thread_name_prefix="perflab-node") as ex:
                    futures = [ex.submit(n.start) for n in self.nodes]
                    errors = [f.exception() for f in futures]
                first = next((e for e in errors if e is not None), None)
                if first is not None:
                    raise first
        except BaseException:
            self.stop(grace_s=2)
            raise
        return self

    def _start_one_command(self):
        self.command = [*self.cpu_prefix, *node_command(self.config.command, self.topology, 0, None)]
        log_path = self.log_root / "cluster.log"
        self.proc = children.launch(self.command, log_path, cwd=self.config.workdir, what="the cluster command")
        deadline = time.monotonic() + self.config.startup_timeout
        for n in self.nodes:
            n.dir.mkdir(parents=True, exist_ok=True)
            children.await_ready(
                self.proc,
                lambda n=n: _answers(n.url, self.config.ready_path),
                max(0.0, deadline - time.monotonic()),
                "the cluster command",
                f"for node {n.index} on port {n.port}",
                lambda: children.tail(log_path),
            )
            n.attach_member(listening_pid(n.port))

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop every node (a paused one is resumed first, so none stays stopped), then the one command;
        idempotent. Data directories go unless ``keep_data``."""
        for n in self.nodes:
            if n.state == PAUSED:
                n._signal(signal.SIGCONT)
                n.state = RUNNING
        if self.proc is not None:
            children.kill_group(self.proc, grace_s)
            for n in self.nodes:
                if n.state != NEW:
                    n._ended("stop", self.proc.poll())
        else:
            with ThreadPoolExecutor(max_workers=max(1, len(self.nodes)), thread_name_prefix="perflab-stop") as ex:
                list(ex.map(lambda n: n.stop(grace_s), self.nodes))
        if self.data_root is not None and not self.keep_data:
            shutil.rmtree(self.data_root, ignore_errors=True)

    def settle(self, timeout: float = 10.0, nodes: list[int] | None = None, fallback_s: float = 1.0) -> bool:
        """Wait until no replica operation is in flight on the running nodes (``cluster.replicas_asked`` =
        answered + failed, from ``/v0/stats``): an ``ack`` < ``from`` write has then reached every replica
        that will get it. Nodes without ``/v0/stats`` (your own) are given ``fallback_s`` instead. Returns
        whether it settled within ``timeout``."""
        targets = [self.nodes[i] for i in (nodes if nodes is not None else range(len(self.nodes)))]
        targets = [n for n in targets if n.state == RUNNING]
        end = time.monotonic() + timeout
        while True:
            pending, unknown = 0, False
            for n in targets:
                try:
                    c = fetch_stats(n.url, timeout=2).get("cluster") or {}
                except (OSError, RuntimeError, ValueError):
                    unknown = True
                    continue
                if "replicas_asked" not in c:
                    unknown = True
                    continue
                pending += c["replicas_asked"] - c.get("replicas_answered", 0) - c.get("replicas_failed", 0)
            if unknown and pending == 0:
                time.sleep(fallback_s)
                return True
            if pending == 0:
                return True
            if time.monotonic() > end:
                return False
            time.sleep(0.05)

    @property
    def mode(self) -> str:
        return self.config.mode

    def to_dict(self) -> dict:
        """The configuration (a run's ``params.server``)."""
        return self.config.to_dict()

    def using(self, **changes) -> Cluster:
        """This running cluster with other request settings (``ack``, ``from_``, ``api``, ``entry``): the same
        nodes, measured by a run with those settings (``pl.run_experiment(c.using(ack=1), load)``)."""
        topo = [k for k in changes if k not in ("ack", "from_", "api", "entry")]
        if topo:
            raise ValueError(
                f"{topo[0]}: a running cluster's nodes cannot change; only ack, from_, api and entry "
                f"can (start another cluster for the rest)"
            )
        view = copy.copy(self)
        view.config = self.config.replace(**changes)
        return view

    def info(self) -> dict:
        """What a run records about the cluster (``meta.json["cluster"]``)."""
        c = self.config
        return {
            "nodes": len(self.nodes),
            "ack": c.replicas_ack,
            "from": c.replicas_from,
            "api": c.api,
            "entries": list(c.entries),
            "topology": self.topology.to_dict(),
            "target": "command" if c.foreign else "built-in",
            "one_command": c.one_command,
            "command": self.command or None,
            "node": [n.info() for n in self.nodes],
        }

    def __enter__(self) -> Cluster:
        if not self.started:
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def __repr__(self):
        return f"<Cluster {len(self.nodes)} nodes {self.config.quorum()} {[n.state for n in self.nodes]}>"


def start_cluster(
    config: ClusterConfig, data_root: str | os.PathLike | None = None, keep_data: bool = False, placement=None
) -> Cluster:
    """Start a cluster that outlives single runs (``with pl.start_cluster(cfg) as c: pl.run_experiment(c, ...)``):
    its node logs go to ``<data root>/clusters/<id>/``, its data to ``<data root>/scratch/<id>/`` (removed when
    it stops unless ``keep_data``). Several runs can then measure it without starting N JVMs each time."""

    root = paths.data_root(data_root)
    cid = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S") + f"-cluster{config.nodes}-{secrets.token_hex(3)}"
    # the nodes die with this Python process, however it ends (a notebook's kernel killed, too)
    prefix = [*Placement.of(placement or "shared").prefix("server"), *children.pdeathsig_prefix()]
    return Cluster(
        config, root / "clusters" / cid, root / "scratch" / cid, cpu_prefix=prefix, keep_data=keep_data
    ).start()
