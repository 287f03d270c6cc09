"""perflab: a reproducible performance lab for a Java key-value server.

The public surface, what a notebook or a script needs::

    import perflab as pl
    srv = pl.ServerConfig(mode="async", workers=2, backend="lsm")
    get = pl.workload("get-random.lua", connections=64, keys=1_000_000, rate=5000, duration=10)
    res = pl.run_experiment(srv, get, profile=pl.ProfileParams("cpu"), prefill=pl.PrefillParams(keys=1_000_000))
    bp = pl.find_breakpoint(srv, get, params=pl.BreakpointParams(max_probes=10))
    ab = pl.compare_ab(srv, srv.replace(workers=4), get, rates=[5000])   # interleaved, paired verdict
    pl.query("SELECT workload, breakpoint_rate, lo, hi FROM breakpoints")

and, for the notebooks, :mod:`perflab.analysis` (the results told by subject: latency, breakpoints...). The
package inside, grouped by job (each subpackage's docstring says more):

* ``config``     parameters of every run, validated once (server, load, profile, prefill, search, validity)
* ``server``     the server under test: the built-in one or yours, ``/v0/stats``, events, CPU, placement
* ``measure``    the load generator and its results, validity, the machine's speed, significance tests
* ``profiling``  async-profiler through the in-process JVM, flame graph analysis
* ``breakpoint`` the breakpoint search; ``session`` one recorded run; ``experiment`` one measurement
* ``cluster``    N nodes: starting and breaking them, loads through them, consistency, key distribution
* ``ab``         two servers measured interleaved, with a paired verdict (``compare_ab``)
* ``records``    run directories (``Run``: the one way to read a run) and the DuckDB index
* ``analysis``   what notebooks call; ``report`` the batch, its pages and ``perflab compare``
* ``fmt``        numbers as people read them; ``units`` as the tools' command lines take them
"""

from . import fmt
from .ab import compare_ab
from .breakpoint import find_breakpoint
from .config import (ABParams, BreakpointCriteria, BreakpointParams, ClusterConfig, ConsistencyParams,
                     CourseServer, ForeignServer, LoadParams, PrefillParams, ProfileParams, ServerConfig,
                     ValidityThresholds)
from .errors import PerflabError, ProfilerError
from .experiment import run_experiment
from .cluster import start_cluster
from .cluster_run import run_cluster
from .commits import Commit
from .records import open_run, query, recorded
from .version import __version__
from .workloads import workload

__all__ = [
    # what a run measures and how
    "ServerConfig", "ForeignServer", "CourseServer", "ClusterConfig", "ConsistencyParams", "LoadParams", "PrefillParams",
    "ProfileParams", "BreakpointCriteria", "BreakpointParams", "ValidityThresholds", "ABParams", "Commit",
    "workload",
    # measuring
    "run_experiment", "find_breakpoint", "run_cluster", "start_cluster", "compare_ab",
    # what was recorded
    "open_run", "query", "recorded",
    # errors a caller may handle
    "PerflabError", "ProfilerError",
    # numbers as text
    "fmt",
]
