"""The server under test, as processes: the built-in one or yours, and what perflab reads of them.

* :mod:`.builtin`   the built-in server: start and stop its JVM, read its stdout protocol
* :mod:`.foreign`   a server you bring: your command, or a server already running at a URL
* :mod:`.stats`     sampling ``/v0/stats``; :mod:`.metrics` the metric names, from the server's own list
* :mod:`.cpu`       the CPU and memory of its processes and of the machine, from ``/proc``
* :mod:`.fill`      keys written once each through the API (yours, a course server's, a cluster's entry nodes)
* :mod:`.placement` which CPUs the server and the generator run on
* :mod:`.http`      one plain HTTP GET
* :mod:`.range`     one range read (``/v0/entities``), timed and checked chunk by chunk as it streams
* :mod:`.heap`      a JVM's heap over time (``jstat -gc``), its size (``jcmd VM.flags``)

A server as a run's target is :mod:`perflab.targets.server`; its timed events on the latency timeline are
:mod:`perflab.timeline.events`.
"""

from .builtin import Server, start_server  # noqa: F401
