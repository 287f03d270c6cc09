"""The server under test.

* :mod:`.builtin`   the built-in server: start and stop its JVM, read its stdout protocol
* :mod:`.foreign`   a server you bring: your command, or a server already running at a URL
* :mod:`.target`    one server as a run's target on its host, with its samplers (what a host's agent runs)
* :mod:`.stats`     sampling ``/v0/stats``; :mod:`.metrics` the metric names, from the server's own list
* :mod:`.events`    the server's timed events on the latency timeline's clock
* :mod:`.cpu`       the server's and the machine's CPU and memory from ``/proc``
* :mod:`.placement` which CPUs the server and the generator run on
* :mod:`.http`      one plain HTTP GET
"""

from .builtin import Server, start_server  # noqa: F401
