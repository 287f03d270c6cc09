"""Beyond one machine: generator hosts, a server host and sweeps on a Dask cluster.

* :mod:`.cluster`    connecting: a Dask scheduler (``--cluster``/``$PERFLAB_CLUSTER``) or the in-process cluster
* :mod:`.inventory`  the hosts: roles, CPUs, versions, clock offsets (``perflab hosts``); version checks
* :mod:`.agents`     what runs on a host (Dask actors): a generator segment, the server and its samplers/profiler
* :mod:`.hostset`    the hosts of one session: chosen, checked, leased, with their agents
* :mod:`.load`       one load from N generator hosts: segments, ready barrier, start time, watch, exact merge
* :mod:`.remote`     the coordinator's handles on the remote server and its profiler
* :mod:`.leases`     never two measurements on one host at once (queued while busy)
* :mod:`.sweep`      points of a plan in parallel on disjoint host sets
* :mod:`.bench`      coordination overhead, start skew, merged vs one host (README "Several machines")

The exact merge of the hosts' histograms is :mod:`perflab.measure.merge`; a session's hosts are options
of :class:`perflab.session.SessionOptions` (``cluster``, ``generators``, ``server_host``).
"""
