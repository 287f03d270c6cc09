"""The hosts a run measures on, through Dask: nothing but the plumbing.

* :mod:`.pool`       connecting: a Dask scheduler (``--scheduler``/``$PERFLAB_SCHEDULER``) or the in-process hosts
* :mod:`.inventory`  the hosts: roles, CPUs, versions, clock offsets (``perflab hosts``); version checks
* :mod:`.actors`     what perflab starts on a host: the agent base (heartbeat, watchdog), a host's facts
* :mod:`.hostset`    the hosts of one session: chosen, checked, leased, with their agents
* :mod:`.leases`     never two measurements on one host at once (queued while busy)
* :mod:`.daskconfig` how every Dask process perflab starts or uses is set up (no sampling profiler; nothing served)
* :mod:`.tls`        the lab's certificates and Dask's TLS (``perflab certs``)
* :mod:`.daemons`    ``perflab scheduler`` and ``perflab worker``: Dask's, with perflab's settings

What the agents do is the caller's: a load's generator parts (:mod:`perflab.core.generators`) and the
target on the server host (:mod:`perflab.targets`). The word *cluster* means the key-value nodes only;
here there are a scheduler, hosts and a host pool.
"""
