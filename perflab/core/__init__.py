"""The measurement core: every strategy (a fixed-rate run, a cluster run, a breakpoint search, an A/B
comparison) is built on these.

* :mod:`.session`    one recorded run around one target: its hosts, its storage, its target started, loads
* :mod:`.load`       one load from the generator hosts to the target's entries: parts, barrier, merge
* :mod:`.generators` the generator side of a load, on each generator host (a Dask actor)
* :mod:`.probe`      one probe: a load started, waited for, judged and indexed; the warm-up before probes
* :mod:`.window`     one measured window of one server or N nodes: profilers keyed by node, the load, what the
  run does around it (a cluster's faults and checker), samples, validity, events, spikes
* :mod:`.record`     what a run records of one window (the one record path), and what a fixed-rate run returns
* :mod:`.sweep`      points of a plan in parallel on disjoint host sets, stopped by one cancel token
"""
