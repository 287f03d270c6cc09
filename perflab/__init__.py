"""perflab: a reproducible performance lab for a Java key-value server.

The main calls, importable from here::

    import perflab as pl
    srv = pl.ServerConfig(mode="async", workers=2, backend="lsm")
    res = pl.run_experiment(srv, pl.LoadParams(rate=5000, duration=10, script="get.lua"),
                            profile=pl.ProfileParams("cpu"), prefill=pl.PrefillParams(keys=1_000_000))
    pl.plots.percentile_spectrum({"async": res.load})
    bp = pl.find_breakpoint(srv, pl.LoadParams(script="get.lua", connections=64, threads=2))
    pl.query("SELECT * FROM breakpoints")

The package, grouped by job (each subpackage's docstring says more):

* ``config``     parameters of every run (server, load, profile, prefill, breakpoint search)
* ``server``     the server under test: start/stop, ``/v0/stats`` sampling
* ``measure``    the load generator and its results (JSON summary, hdr interval log)
* ``profiling``  async-profiler through the in-process JVM, flame graph analysis
* ``breakpoint`` the breakpoint search; ``experiment`` one recorded measurement
* ``records``    run directories and the DuckDB index
* ``report``     notebooks' helpers, commentary, plots, the HTML report; ``cli`` the command line
"""

__version__ = "0.2.0"

from . import _moved  # noqa: E402

_moved.install()

from .profiling import flame  # noqa: E402  (light modules that notebooks use as namespaces)
from .report import plots  # noqa: E402
from .breakpoint import BreakpointResult, Verdict, evaluate, find_breakpoint, latency_trend  # noqa: E402
from .config import (BreakpointCriteria, BreakpointParams, ForeignServer, LoadParams, PrefillParams,  # noqa: E402
                     ProfileParams, ServerConfig, ValidityThresholds)
from .errors import (BridgeError, LoadError, NotBuiltError, PerflabError, ProfilerError, RunInterrupted,  # noqa: E402
                     ServerStartError)
from .experiment import ExperimentResult, run_experiment  # noqa: E402
from .measure.hdrlog import HdrLog, read_hdr_log  # noqa: E402
from .measure.load import LoadResult, load_result_from_dir, run_load, start_load  # noqa: E402
from .profiling.profiler import Profile, Profiler, profile_for  # noqa: E402
from .records import Run, list_runs, load_run, new_run, query, rebuild_index  # noqa: E402
from .server import Server, start_server  # noqa: E402
from .server.stats import StatsSampler, fetch_stats, stats_frame  # noqa: E402
from .measure.wrk_output import WrkOutput, parse_wrk_output, parse_wrk_outputs  # noqa: E402


def prefill(data_dir, keys, value_size=100, seed=0, key_prefix="key", backend="lsm"):
    """Fill a data directory in-process (see :func:`perflab.profiling.bridge.prefill`)."""
    from .profiling.bridge import prefill as _p
    return _p(data_dir, keys, value_size, seed, key_prefix, backend)


def inspect(data_dir):
    """Describe a data directory (see :func:`perflab.profiling.bridge.inspect`)."""
    from .profiling.bridge import inspect as _i
    return _i(data_dir)
