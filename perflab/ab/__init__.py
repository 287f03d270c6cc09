"""Did my change help? Two servers, configurations or commits measured interleaved, with a paired verdict.

* :mod:`.sides`    -- what A and B run: a built-in configuration, your command, a git commit built apart
  (:mod:`perflab.commits`)
* :mod:`.design`   -- the interleaved order: balanced A B B A / B A A B blocks, which probes pair up
* :mod:`.run`      -- ``compare_ab``: two sessions side by side, the blocks, the stop rule, the idle cost
* :mod:`.searches` -- two breakpoint searches with their probes interleaved
* :mod:`.result`   -- the verdicts, recorded as one run of kind ``ab`` and read back

The statistics (paired test, interval, stop rule, its false-positive bound) are
:mod:`perflab.stats.paired`; the method names every verdict carries are :mod:`perflab.stats.methods`.
"""

from .result import ABResult, IdleCost, RateVerdict, recorded_verdicts  # noqa: F401
from .run import SideError, compare_ab  # noqa: F401
