"""The breakpoint ("точка разладки"): the highest fixed rate at which the server keeps up, with the
interval that repeated probes support.

* :mod:`.ramp`     -- one exponential ramp brackets the breakpoint quickly; the warm-up before a search
* :mod:`.search`   -- bisection, then repeats at both edges; the interval from all probes
* :mod:`.hold`     -- the breakpoint held for a sustain window, stepped down when it does not hold
* :mod:`.run`      -- ``find_breakpoint`` against a real server, recorded as one run

When one probe passes is :mod:`perflab.measure.judgement`; what one probe does, :mod:`perflab.core.probe`.
"""

from .hold import Hold  # noqa: F401
from .run import BreakpointResult, Probe, find_breakpoint  # noqa: F401
from .search import Estimate, Outcome, establish, search  # noqa: F401
