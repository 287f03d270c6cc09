"""Waiting for a quiet moment: what a careful person does on a shared machine before each measurement.

Other programs' CPU (:mod:`perflab.server.machine`) is read on the server host while the target idles. A
session keeps its *quiet level*: the least CPU other programs used at any of its checks. Before a probe the
check waits, up to a bound, until other programs use no more than that level plus the thresholds'
``others_warn`` share of the machine; the first check of a session holds the machine to an idle one (level 0)
and learns the level from what it sees. A program that keeps running all along (a busy core for the whole
search) becomes the level, and probes go on beside it; one that comes and goes is waited out. Every check says
how long it waited. A probe's own window is judged against the same level (:mod:`perflab.measure.validity`,
the ``others`` check): a failure while other programs took more is the machine's, not the server's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..server.machine import OtherLoad

#: seconds of each look while waiting
POLL_S = 0.5
#: the shortest first look (other programs' CPU in clock ticks over a shorter window is too coarse)
MIN_LOOK_S = 0.2


@dataclass(frozen=True)
class QuietCheck:
    """One check before a probe: other programs' CPU at its last look (``others``), how long it waited beyond
    the first look (``waited_s``), the session's quiet level after it (``level``, cores) and whether the
    machine was that quiet when it stopped looking (``quiet``)."""

    others: OtherLoad
    waited_s: float
    level: float
    quiet: bool

    def row(self) -> dict:
        """What a probe's ``loads`` row says of it."""
        return {
            "others_idle_cores": round(self.others.cores, 3),
            "quiet_waited_s": round(self.waited_s, 2),
            "quiet_level": round(self.level, 3),
            "quiet": self.quiet,
        }


class QuietLevel:
    """A session's quiet level and its checks (see the module docstring). ``look(seconds)`` measures other
    programs' CPU on the server host over that long; ``margin``: the share of the machine above the level that
    still counts as quiet."""

    def __init__(self, look, margin: float, cancel=None):
        self._look = look
        self.margin = margin
        self.cancel = cancel
        #: the least CPU other programs used at any check (cores); ``None`` before the first
        self.level: float | None = None
        self.checks: list[QuietCheck] = []

    def bound(self, cpus: int) -> float:
        """Cores other programs may use for the machine to count as quiet now (before the first check ends:
        an idle machine's)."""
        return (self.level if self.checks else 0.0) + self.margin * cpus

    def wait(self, first_s: float, max_wait_s: float) -> QuietCheck:
        """Look for ``first_s`` (the idle time between probes), then look again until quiet or ``max_wait_s``
        more have passed."""
        seen = self._see(max(first_s, MIN_LOOK_S))
        t0 = time.monotonic()
        while seen.cores > self.bound(seen.cpus) and time.monotonic() - t0 < max_wait_s:
            if self.cancel is not None:
                self.cancel.check()
            seen = self._see(min(POLL_S, max(MIN_LOOK_S, max_wait_s - (time.monotonic() - t0))))
        quiet = seen.cores <= self.bound(seen.cpus)
        check = QuietCheck(seen, time.monotonic() - t0, self.level, quiet)
        self.checks.append(check)
        return check

    def _see(self, seconds: float) -> OtherLoad:
        seen = self._look(seconds)
        self.level = seen.cores if self.level is None else min(self.level, seen.cores)
        return seen

    def summary(self) -> dict:
        """What a run records of its checks: how many, the total wait, the level."""
        return {
            "checks": len(self.checks),
            "waited_s": round(sum(c.waited_s for c in self.checks), 1),
            "level_cores": None if self.level is None else round(self.level, 3),
            "not_quiet": sum(not c.quiet for c in self.checks),
            "margin": self.margin,
        }
