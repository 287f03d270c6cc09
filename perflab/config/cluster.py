"""``ClusterConfig`` (N nodes, ack/from, where the load enters) and ``ConsistencyParams`` (the checker).

A cluster run starts ``nodes`` servers, each its own process with its own port and data directory,
given the same ``--cluster`` list (docs/contracts/cluster.md section 7): the built-in server configured by
``server`` (one :class:`~perflab.config.ServerConfig` for every node, or one per node), or your own
nodes from ``command`` with placeholders. ``ack``/``from_`` are what every request of the run asks
for (the workload scripts' ``ack=``/``from=`` or ``replicas=`` arguments); ``entry`` says which nodes
the load is sent to.

Placeholders of ``command`` (bring your own cluster):

* one process per node: ``{port}`` (required), ``{cluster}`` (required: every node's URL, comma-separated,
  the same on every node), ``{index}`` (0..N-1, the node's position in that list), ``{self}`` (its URL),
  ``{dir}`` (a directory for its data, kept across a restart), ``{host}`` (the address to listen on: the
  server host's own when the generators run on other hosts, else 127.0.0.1);
* one command that starts every node: ``{ports}`` (every port, comma-separated, in index order), and
  ``{cluster}`` and ``{host}`` if it wants them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .fields import Params, option
from .server import ServerConfig
from .target import check_placeholders

#: the API styles a request can name its replication in (docs/contracts/cluster.md section 7)
API_STYLES = ("ack-from", "replicas")
#: placeholders of a per-node command, and of a command that starts every node
NODE_PLACEHOLDERS = ("{port}", "{index}", "{cluster}", "{self}", "{dir}", "{host}")
ALL_PLACEHOLDERS = ("{ports}", "{cluster}", "{host}")
#: ServerConfig fields the lab sets on each node itself
NODE_MANAGED = ("port", "cluster", "self_url")
MAX_NODES = 256


@dataclass(frozen=True)
class ClusterConfig(Params):
    """N nodes of one cluster (see the module docstring). ``server``: a ``ServerConfig`` for every node,
    or a tuple of one per node (built-in nodes; ``None``: the defaults)."""

    nodes: int = option(
        3, "int", "nodes in the cluster, each its own process, port and data directory", min=1, max=MAX_NODES
    )
    ack: int | None = option(
        None,
        "int",
        "replicas that must answer each request (none: a majority of from)",
        min=1,
        max=MAX_NODES,
        optional=True,
    )
    from_: int | None = option(
        None, "int", "replicas each request asks (none: every node)", min=1, max=MAX_NODES, optional=True, flag="--from"
    )
    api: str = option(
        "ack-from",
        "enum",
        "how requests name ack/from: ack-from (&ack=A&from=F) or replicas (&replicas=A/F)",
        choices=API_STYLES,
    )
    entry: str = option(
        "0",
        "text",
        "where the load is sent: a node index, a list (0,2), or all (the load "
        "split over them, one generator process each)",
    )
    # on the command line these four are --server-cmd, --ready-path, --server-dir, --startup-timeout with --nodes
    command: str | None = option(
        None,
        "text",
        "your own nodes: a command per node with {port} and {cluster} "
        "({index}, {self}, {dir}, {host}), or one command with {ports} that starts them "
        "all",
        optional=True,
        flag="",
    )
    ready_path: str = option("/", "text", "(your nodes) path polled until a node answers (any HTTP status)", flag="")
    workdir: str | None = option(None, "path", "(your nodes) directory the command runs in", optional=True, flag="")
    startup_timeout: float = option(90.0, "duration", "how long the nodes may take to answer", min=0.5, flag="")
    server: object = field(default=None, metadata={})

    def __post_init__(self):
        if isinstance(self.entry, (list, tuple, int)) and not isinstance(self.entry, bool):
            # a list of node indexes (or one) is as good as its text
            self._set(
                "entry", ",".join(map(str, self.entry)) if isinstance(self.entry, (list, tuple)) else str(self.entry)
            )
        super().__post_init__()

    def _check(self):
        if self.from_ is not None and self.from_ > self.nodes:
            raise ValueError(
                f"from_: {self.from_} replicas cannot be asked of {self.nodes} node"
                f"{'s' if self.nodes > 1 else ''} (from must not exceed nodes)"
            )
        if self.ack is not None and self.ack > self.replicas_from:
            raise ValueError(f"ack: must not exceed from ({self.replicas_from}), got {self.ack}")
        self._set("entry", _entry_text(self.entry, self.nodes))
        if self.command is not None:
            if self.server is not None:
                raise ValueError(
                    "server: your own nodes (command) take their settings from the command, not from a ServerConfig"
                )
            check_command(self.command)
            if self.workdir is not None:
                if not Path(self.workdir).is_dir():
                    raise ValueError(f"workdir: {self.workdir} is not a directory")
                self._set("workdir", str(Path(self.workdir).resolve()))
        else:
            if self.workdir is not None:
                raise ValueError("workdir: only with command (your own nodes)")
            self._set("server", _node_configs(self.server, self.nodes))

    # --- what the rest of the lab reads ---------------------------------------------------------------
    @property
    def replicas_from(self) -> int:
        """``from`` as every request sends it (the cluster size when not given)."""
        return self.from_ if self.from_ is not None else self.nodes

    @property
    def replicas_ack(self) -> int:
        """``ack`` as every request sends it (a majority of ``from`` when not given, as the server's default)."""
        return self.ack if self.ack is not None else self.replicas_from // 2 + 1

    @property
    def entries(self) -> tuple[int, ...]:
        """The indexes of the nodes the load is sent to."""
        return tuple(range(self.nodes)) if self.entry == "all" else tuple(int(x) for x in self.entry.split(","))

    @property
    def foreign(self) -> bool:
        return self.command is not None

    @property
    def one_command(self) -> bool:
        """Your nodes all come from one command (``{ports}``): a single node cannot be restarted."""
        return self.command is not None and "{ports}" in self.command

    @property
    def mode(self) -> str:
        """Stands in for ``ServerConfig.mode`` in run names."""
        return f"cluster{self.nodes}"

    @property
    def needs_data_dir(self) -> bool:
        """A run makes one storage directory for the nodes (``node<i>/`` each: a built-in node's data, your
        command's ``{dir}``), kept across a node's restart."""
        return True

    def node_config(self, index: int) -> ServerConfig:
        """The built-in server configuration of node ``index`` (without the fields the lab sets per node)."""
        if self.command is not None:
            raise ValueError("node_config: your own nodes have no ServerConfig")
        return self.server[index]

    def replica_args(self, ack: int | None = None, frm: int | None = None) -> tuple[str, ...]:
        """The workload scripts' arguments for ``ack``/``from`` (default: the cluster's), in its API style."""
        a, f = ack or self.replicas_ack, frm or self.replicas_from
        return (f"replicas={a}/{f}",) if self.api == "replicas" else (f"ack={a}", f"from={f}")

    def quorum(self, ack: int | None = None, frm: int | None = None) -> str:
        return f"{ack or self.replicas_ack}/{frm or self.replicas_from}"

    def __repr__(self):
        what = (
            f"command={self.command!r}"
            if self.command
            else "server="
            + ("ServerConfig(...)" if len(set(self.server)) == 1 else f"[{len(self.server)} ServerConfigs]")
        )
        return (
            f"ClusterConfig(nodes={self.nodes}, ack/from={self.quorum()}, api={self.api!r}, entry={self.entry!r}, "
            f"{what})"
        )

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["server"] = [c.to_dict() for c in self.server] if self.server is not None else None
        d["ack_effective"], d["from_effective"] = self.replicas_ack, self.replicas_from
        d["mode"] = self.mode  # runs listed next to single servers: server_mode "cluster3"
        return d


def _entry_text(entry: str, nodes: int) -> str:
    """``entry`` as ``all`` or a comma-separated list of distinct node indexes, checked against ``nodes``."""
    text = entry.strip().lower()
    if text == "all":
        return "all"
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() for p in parts):
        raise ValueError(f"entry: expected a node index (0..{nodes - 1}), a list like 0,2, or all, got {entry!r}")
    idx = [int(p) for p in parts]
    bad = [i for i in idx if i >= nodes]
    if bad:
        raise ValueError(f"entry: node {bad[0]} is out of range: the cluster has nodes 0..{nodes - 1}")
    if len(set(idx)) != len(idx):
        raise ValueError(f"entry: names a node twice, got {entry!r}")
    return ",".join(str(i) for i in idx)


def _node_configs(server, nodes: int) -> tuple[ServerConfig, ...]:
    if server is None:
        server = ServerConfig()
    configs = tuple(server) if isinstance(server, (list, tuple)) else (server,) * nodes
    if len(configs) != nodes:
        raise ValueError(
            f"server: one ServerConfig for every node, or a list of {nodes} (one per node), "
            f"got a list of {len(configs)}"
        )
    for i, c in enumerate(configs):
        if not isinstance(c, ServerConfig):
            raise ValueError(f"server[{i}]: must be a ServerConfig, got {type(c).__name__}")
        set_by_lab = [n for n in NODE_MANAGED if getattr(c, n) not in (None, 0)]
        if set_by_lab:
            raise ValueError(
                f"server[{i}].{set_by_lab[0]}: the lab sets each node's --port, --cluster and "
                f"--self-url itself (free ports, the same list on every node); leave it unset"
            )
    return configs


def check_command(cmd: str) -> None:
    """A bring-your-own-cluster command has the placeholders it needs (see the module docstring)."""
    if not isinstance(cmd, str) or not cmd.strip():
        raise ValueError(f"command: expected a command, got {cmd!r}")
    if "{ports}" in cmd:
        stray = [p for p in NODE_PLACEHOLDERS if p not in ALL_PLACEHOLDERS and p in cmd]
        if stray:
            raise ValueError(
                f"command: {stray[0]} is a per-node placeholder, but {{ports}} makes this one "
                f"command that starts every node; use one or the other"
            )
        check_placeholders("command", cmd, ALL_PLACEHOLDERS)
        return
    check_placeholders("command", cmd, NODE_PLACEHOLDERS)
    missing = [p for p in ("{port}", "{cluster}") if p not in cmd]
    if missing:
        raise ValueError(
            f"command: must contain {' and '.join(missing)} (a command per node gets its port and "
            f"the cluster's URLs), or {{ports}} (one command that starts every node), got {cmd!r}"
        )


@dataclass(frozen=True)
class ConsistencyParams(Params):
    """The consistency checker (:mod:`perflab.nodes.checker`): its own small client that writes, deletes
    and reads keys of its own (``<key_prefix><seed>-<i>``) with deterministic values, records every
    acknowledged operation and judges every read. Bounded in time (the load's window, or ``duration``)
    and in count (``max_ops``). Ack/from default to the cluster's."""

    keys: int = option(
        200, "int", "keys the checker owns (each written, deleted and read by one thread)", min=1, max=100_000
    )
    threads: int = option(2, "int", "client threads (each owns keys; a key's operations are sequential)", min=1, max=16)
    rate: float = option(
        200.0, "rate", "operations per second, all threads together (a cap)", min=0, min_open=True, max=20_000
    )
    max_ops: int = option(20_000, "int", "operations at most, all threads together", min=1)
    duration: float | None = option(
        None,
        "duration",
        "how long the mixed operations run (none: the load's window)",
        min=0,
        min_open=True,
        optional=True,
    )
    read: float = option(0.5, "float", "share of reads among the mixed operations", min=0, max=1)
    delete: float = option(0.1, "float", "share of deletes (the rest are writes)", min=0, max=1)
    write_ack: int | None = option(None, "int", "ack of writes and deletes (none: the cluster's)", min=1, optional=True)
    read_ack: int | None = option(None, "int", "ack of reads (none: the cluster's)", min=1, optional=True)
    timeout: float = option(2.0, "duration", "an operation without an answer this long is a timeout", min=0.05)
    gap: float = option(
        0.002,
        "duration",
        "least time between an answer and the next operation on the same key "
        "(timestamps are milliseconds: last write wins only between writes at least 1 ms apart)",
        min=0.001,
    )
    final_read: bool = option(True, "bool", "read every key once more after the load (after the faults)")
    seed: int = option(1, "int", "seed of keys, values and the operation sequence", min=0)
    key_prefix: str = option("chk", "text", "prefix of the checker's keys (apart from the load's key<i>)")

    def _check(self):
        if self.read + self.delete > 1:
            raise ValueError(f"delete: read + delete must not exceed 1, got {self.read:g} + {self.delete:g}")
        if self.threads > self.keys:
            raise ValueError(f"threads: each thread owns keys, so at most keys ({self.keys}), got {self.threads}")


@dataclass(frozen=True)
class ClusterRunParams(Params):
    """What a cluster's run does beyond its load (:func:`perflab.run_experiment` of a cluster): faults in the
    measured window, the key space of the key distribution, the nodes profiled, the bins of the
    answers-by-status timeline, and whether the consistency checker runs (:class:`ConsistencyParams`). Its
    fill is any target's (:class:`~perflab.config.profile.FillParams`)."""

    faults: tuple = option(
        (),
        "texts",
        "a fault in the measured window: 'at=10s node=2 kill' (kill, stop, pause, "
        "resume, restart; for=5s undoes it after 5 s)",
        flag="--fault",
    )
    keys: int | None = option(
        None,
        "int",
        "key space of the key distribution report (default: fill, or the script's keys=)",
        optional=True,
        min=1,
    )
    profile_nodes: str = option(
        "all", "text", "which nodes async-profiler records, one recording each: all, or node indexes like 0,2"
    )
    status_bin: float = option(1.0, "duration", "length of each bin of the answers-by-status timeline", min=0.01)
    check: bool = option(
        False,
        "bool",
        "run the consistency checker (its own client records every acknowledged write, reads back, gives a verdict)",
    )

    def __post_init__(self):
        nodes = self.profile_nodes
        if isinstance(nodes, int) and not isinstance(nodes, bool):
            self._set("profile_nodes", str(nodes))
        elif isinstance(nodes, (list, tuple)):
            self._set("profile_nodes", ",".join(map(str, nodes)))
        super().__post_init__()

    def _check(self):
        text = self.profile_nodes.strip()
        if text != "all" and not all(x.strip().isdigit() for x in text.split(",")):
            raise ValueError(f"profile_nodes: all, or node indexes like 0,2, got {self.profile_nodes!r}")

    def nodes_profiled(self, nodes: int) -> list[int]:
        """The node indexes profiled in a cluster of ``nodes`` (an index out of range is an error)."""
        if self.profile_nodes.strip() == "all":
            return list(range(nodes))
        items = sorted({int(x) for x in self.profile_nodes.split(",")})
        for i in items:
            if not 0 <= i < nodes:
                raise ValueError(f"profile_nodes: node {i} is out of range: the cluster has nodes 0..{nodes - 1}")
        return items
