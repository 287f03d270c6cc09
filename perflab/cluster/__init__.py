"""Clusters in the lab: N nodes, loads through them, faults on the latency timeline, consistency checked.

* :mod:`.topology`     free ports and URLs, the placeholders of a command you bring
* :mod:`.nodes`        ``Cluster`` and ``Node``: start N nodes (built-in or yours), kill, stop, pause, resume, restart
* :mod:`.target`       a cluster as a session's target on the server host (next to one server: the same calls)
* :mod:`.remote`       the coordinator's handle on it (the session's ``server``), and its own operations
* :mod:`.load`         the load's ack/from, and each entry node's share of it (the load runs as any other)
* :mod:`.sampling`     every node's ``/v0/stats``, CPU and RSS on one axis, across restarts
* :mod:`.faults`       the fault schedule (``at=10s node=2 kill``), checked up front, applied on time
* :mod:`.statuses`     what the clients got per interval: answers by status, no answer
* :mod:`.checker`      the consistency checker and what the ack/from invariants predict
* :mod:`.distribution` keys per node from the routing function and from the nodes themselves
* :mod:`.experiment`   ``run_cluster``: all of it as one recorded run

The configuration is :class:`perflab.config.cluster.ClusterConfig` (and ``ConsistencyParams``).
"""

from .experiment import ClusterResult, run_cluster  # noqa: F401
from .nodes import Cluster, start_cluster  # noqa: F401
