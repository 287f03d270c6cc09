"""Regressions across commits: did any commit make the server slower, which one, and may a pull request go in?

Three strategies over :func:`perflab.compare_ab` (each commit built apart and cached, the working tree
untouched):

* :mod:`.gate`    -- ``perflab gate BASE HEAD``: one interleaved comparison for CI, exit 0/1/2/3, its false
  alarms bounded by the comparison's alpha
* :mod:`.bisect`  -- ``perflab bisect GOOD BAD``: the first commit slower than GOOD beyond a margin, by halving,
  every step a comparison against GOOD
* :mod:`.history` -- ``perflab history GOOD BAD``: every commit measured a few times at one rate (CPU per request,
  p50, p99 with intervals), the change points of the series, each checked by a comparison of the commits on both
  sides before it is called a regression

and what they share:

* :mod:`.compare` -- one check: a comparison and its verdict on the deciding metric
* :mod:`.verdict` -- a verdict read as a regression check: regression, improvement, not worse, undecided,
  unmeasured
* :mod:`.synthetic` -- histories with a planted CPU cost per request (notebook 09, the tests, the benchmark)

The commits come from git and are built by :mod:`perflab.commits` (resolved, GOOD..BAD in order, the working
tree's own changes; a commit as a side: the built-in server's ``java-server/``, or your repository built with
its command and run as its ``perflab.toml`` declares it). Their parameters are :mod:`perflab.config.regress`;
their sentences :mod:`perflab.analysis.regress`; the gate's files and the bisection's page
:mod:`perflab.report.regress`.
"""

from .bisect import BisectResult, Found, run_bisect  # noqa: F401
from .gate import GateResult, run_gate  # noqa: F401
from .history import HistoryResult, run_history  # noqa: F401
from .verdict import Check, Outcome  # noqa: F401
