"""The breakpoint ("точка разладки"): the highest fixed rate at which the server keeps up, with the
interval that repeated probes support.

* :mod:`.criteria` -- when one probe passes (and when it is inconclusive: invalid as a measure)
* :mod:`.ramp`     -- one exponential ramp brackets the breakpoint quickly
* :mod:`.search`   -- bisection, then repeats at both edges; the interval from all probes
* :mod:`.run`      -- ``find_breakpoint`` against a real server, recorded as one run
"""

from .criteria import Judgement, evaluate, latency_trend  # noqa: F401
from .run import BreakpointResult, Probe, find_breakpoint  # noqa: F401
from .search import Estimate, Outcome, establish, search  # noqa: F401
