"""Clusters in the lab: N nodes, loads through them, faults on the latency timeline, consistency checked.

* :mod:`.topology`     free ports and URLs, the placeholders of a command you bring
* :mod:`.nodes`        ``Cluster`` and ``Node``: start N nodes (built-in or yours), kill, stop, pause, resume, restart
* :mod:`.session`      a cluster as a session's target (the third kind, next to the built-in server and yours)
* :mod:`.load`         the load with the cluster's ack/from, to one entry node or split over several
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
