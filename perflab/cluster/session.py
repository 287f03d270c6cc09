"""A cluster as the target of a :class:`perflab.session.Session`: the third kind of target next to the
built-in server and yours.

A ``ClusterConfig`` target starts its N nodes for the run (node logs and events in ``<run>/nodes/<i>/``,
data in ``<data root>/scratch/<run id>/node<i>/``) and stops them with the session; a running
:class:`~perflab.cluster.nodes.Cluster` (``pl.start_cluster``) is measured and left running. Either way the
session samples every node's ``/v0/stats`` and every node's process (CPU, RSS), and its loads go to the entry
nodes (:mod:`perflab.cluster.load`).
"""

from __future__ import annotations

import time

from ..config.cluster import ClusterConfig
from ..server.foreign import stats_available
from .nodes import Cluster
from .sampling import ClusterCpu, ClusterStats


def start_cluster_target(sess) -> None:
    """Start (or attach to) the session's cluster and its samplers; records ``meta.json["cluster"]``."""
    if isinstance(sess.config, ClusterConfig):
        sess._scratch = sess.data_root / "scratch" / sess.run.id
        sess.server = Cluster(sess.config, sess.run.dir, sess._scratch, sess.placement.prefix("server"),
                              keep_data=sess.options.keep_data).start()
        sess._owns_server = True
    else:
        sess.server = sess.config
        sess._owns_server = False
        if any(n.state == "new" for n in sess.server.nodes):
            raise ValueError("server: this Cluster was never started (use pl.start_cluster, or pass its ClusterConfig)")
    cl = sess.server
    sess.run.update(cluster=cl.info(), server={"java_version": cl.java_version, "command": cl.command or None,
                                               "target": "cluster", "owned": sess._owns_server})
    sess._servers.append({"pid": cl.pid, "started_at": time.time()})
    with_stats = [n.index for n in cl.nodes if n.state == "running" and
                  (not cl.config.foreign or stats_available(n.url) is None)]
    if with_stats:
        sess.sampler = ClusterStats(cl, sess.options.stats_interval, with_stats).start()
    else:
        sess.stats_unavailable = "no node answers GET /v0/stats with a JSON object"
        sess.run.update(stats_unavailable=sess.stats_unavailable)
    sess.cpu = ClusterCpu(cl).start()
