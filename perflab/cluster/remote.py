"""The coordinator's handle on a cluster that runs on the server host (:mod:`perflab.cluster.target`).

:class:`RemoteCluster` is what a session holds for a cluster target, where it holds a
:class:`~perflab.hosts.remote.RemoteServer` for one server: the same surface (``url``, ``pid``, ``info()``,
``stop()``, what the run records, how the samples read), ``entries`` (the entry nodes every load is split
over), the load with the cluster's ack/from (:func:`.load.cluster_load`), and :meth:`call` for the target's
own operations (faults, checker, fill, key distribution).
"""

from __future__ import annotations

import pandas as pd

from ..hosts.remote import CALL_S, RemoteServer


class RemoteCluster(RemoteServer):
    """The cluster under test on the session's server host (``desc``: what its agent reported)."""

    #: the ClusterConfig its requests use (a running cluster's: its nodes, and this run's ack/from and entries)
    config = property(lambda self: self.desc["config"])
    urls = property(lambda self: self.desc["urls"])
    #: where loads go: ``node<i>`` -> URL of every entry node
    entries = property(lambda self: dict(self.desc["entry_urls"]))
    owned = property(lambda self: self.desc["owned"])

    def call(self, name: str, *args, timeout: float = CALL_S, **kwargs):
        """The target's operation ``name`` (:attr:`perflab.cluster.target.ClusterTarget.CALLS`), on its host."""
        return self.hosts.server_agent.call(name, *args, **kwargs).result(timeout=timeout)

    def load_for(self, load):
        """``load`` with the cluster's ack/from in its script arguments (:func:`.load.cluster_load`)."""
        from .load import cluster_load
        return cluster_load(load, self.config)

    def stats_frame(self, samples: dict, t0: float | None = None) -> pd.DataFrame:
        """Every node's samples in one frame with a ``node`` column (:func:`.sampling.cluster_stats_frame`)."""
        from .sampling import cluster_stats_frame
        return cluster_stats_frame(samples, t0)

    def record(self, config) -> tuple[dict, dict]:
        """``meta.json``'s ``cluster`` (nodes, topology, incarnations) and ``server``; node logs lie under
        ``nodes/<i>/`` of a cluster the run started."""
        return ({"cluster": self.info(), "server": {"java_version": self.java_version, "command": self.command or None,
                                                    "target": "cluster", "owned": self.owned}}, {})
