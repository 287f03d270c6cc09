"""perflab: a reproducible performance lab for a Java key-value server.

The public surface, what a notebook or a script needs::

    import perflab as pl
    srv = pl.ServerConfig(mode="async", workers=2, backend="lsm")
    get = pl.workload("get-random.lua", connections=64, keys=1_000_000, rate=5000, duration=10)
    res = pl.run_experiment(srv, get, profile=pl.ProfileParams("cpu"), prefill=pl.PrefillParams(keys=1_000_000))
    bp = pl.find_breakpoint(srv, get, params=pl.BreakpointParams(max_probes=10))
    ab = pl.compare_ab(srv, srv.replace(workers=4), get, rates=[5000])   # interleaved, paired verdict
    split = pl.SessionOptions(placement="split")                          # how and where: session=split
    pl.query("SELECT workload, breakpoint_rate, lo, hi FROM breakpoints")

and, for the notebooks, :mod:`perflab.lab` (what they call to measure) and :mod:`perflab.analysis` (the results
told by subject: latency, breakpoints...; it measures nothing). The
package inside, in layers, top to bottom (each imports only from below it; ``pyproject.toml``'s
``[tool.importlinter]`` checks it; each subpackage's docstring says more):

* ``cli``                     the command line (``python -m perflab``)
* ``report``                  plans, the papermill batch, its pages, ``perflab compare``
* ``lab``                     what notebooks call to measure, each run in one printed line
* ``analysis`` | ``bench``    what notebooks call to tell: tables, figures, sentences | the server's benchmark
* ``regress``                 strategies over ``compare_ab``: a CI gate, a bisection, a history across commits
* ``ab``                      strategy: two targets measured interleaved, with a paired verdict (``compare_ab``)
* ``breakpoint`` | ``experiment`` | ``scan``  strategies: a breakpoint search | one fixed-rate run
  (``run_experiment``) | a range read whole from a database beyond the heap (``run_scan``)
* ``cluster_run``             what a cluster's fixed-rate run adds: faults, the consistency checker, keys
* ``core``                    the measurement core: one recorded run (``Session``), loads, probes, records
* ``targets``                 what can be measured (one server, or a cluster), on its host, and its handle
* ``hosts`` | ``nodes``       the Dask host pool | the key-value cluster's nodes as processes (``start_cluster``)
* ``server``                  one server as processes: the built-in one or yours, ``/v0/stats``, CPU
* ``profiling`` | ``records`` async-profiler, flame graphs | run directories and the DuckDB index
* ``measure`` | ``timeline`` | ``hostspeed`` | ``workloads`` | ``commits``  the generator and its outputs, validity,
  judgement | the server's events, spikes explained | the machine's speed | scripts | git, builds
* ``stats``                   statistics: significance, paired A/B and its stop rule, methods, change points
* ``config``                  every parameter, validated once
* ``children``, ``sampling``, ``cancel``, ``interrupt``, ``jdk``, ``paths``, ``fmt``, ``units``, ``version``; ``errors``
"""

# The command line's Ctrl-C first, before the seconds of imports below (one of them once lost it: issue 46)
from . import interrupt as _interrupt

if _interrupt.launched_as_command():
    _interrupt.install()

from . import fmt
from .ab import compare_ab
from .breakpoint import find_breakpoint
from .commits import Commit
from .config import (
    ABParams,
    BreakpointCriteria,
    BreakpointParams,
    ClusterConfig,
    ConsistencyParams,
    CourseServer,
    ForeignServer,
    LoadParams,
    PrefillParams,
    ProfileParams,
    ScanParams,
    ServerConfig,
    ValidityThresholds,
)
from .core.session import SessionOptions
from .errors import PerflabError, ProfilerError
from .experiment import run_experiment
from .nodes import start_cluster
from .records import open_run, query, recorded
from .scan import run_scan
from .version import __version__  # noqa: F401
from .workloads import workload

__all__ = [
    # what a run measures and how
    "ServerConfig",
    "ForeignServer",
    "CourseServer",
    "ClusterConfig",
    "ConsistencyParams",
    "LoadParams",
    "PrefillParams",
    "ProfileParams",
    "ScanParams",
    "BreakpointCriteria",
    "BreakpointParams",
    "ValidityThresholds",
    "SessionOptions",
    "ABParams",
    "Commit",
    "workload",
    # measuring
    "run_experiment",
    "find_breakpoint",
    "start_cluster",
    "compare_ab",
    "run_scan",
    # what was recorded
    "open_run",
    "query",
    "recorded",
    # errors a caller may handle
    "PerflabError",
    "ProfilerError",
    # numbers as text
    "fmt",
]
