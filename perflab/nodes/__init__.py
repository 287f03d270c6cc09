"""The key-value cluster's nodes as processes (as :mod:`perflab.server` is one server's): N nodes started,
loaded, broken and checked for consistency.

* :mod:`.topology`     free ports and URLs, the placeholders of a command you bring
* :mod:`.processes`    ``Cluster`` and ``Node``: start N nodes (built-in or yours), kill, stop, pause, resume, restart
* :mod:`.load`         the load's ack/from, and each entry node's share of it (the load runs as any other)
* :mod:`.sampling`     every node's ``/v0/stats`` on one axis, across restarts
* :mod:`.faults`       the fault schedule (``at=10s node=2 kill``), checked up front, applied on time
* :mod:`.statuses`     what the clients got per interval: answers by status, no answer
* :mod:`.checker`      the consistency checker and what the ack/from invariants predict
* :mod:`.distribution` keys per node from the routing function and from the nodes themselves

A cluster as a run's target is :mod:`perflab.targets.cluster`; a cluster's run with faults and the checker
is :func:`perflab.run_experiment`'s (:mod:`perflab.cluster_run`). The configuration is
:class:`perflab.config.cluster.ClusterConfig` (and ``ConsistencyParams``).
"""

from .processes import Cluster, start_cluster  # noqa: F401
