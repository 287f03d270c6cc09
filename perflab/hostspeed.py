"""How fast the machine itself ran: a fixed loop timed on every CPU.

On a shared host (a cloud VM, a laptop that throttles) a core's speed is not constant. Other tenants
on the sibling hyperthread, or the host's frequency policy, change it for seconds at a time, and
neither ``/proc/stat``'s steal time nor the process's CPU time shows it: the guest believes it ran.
Any number measured at high CPU load moves with it. So the lab times a fixed piece of interpreter
work (branchy, cache-resident: like a server's request path, unlike a multiply chain, which hardly
notices a busy sibling) on each CPU, pinned, in the process's *thread CPU time* (waiting for a CPU does
not count), and keeps the median per CPU:

* :func:`calibrate` -- one short calibration (all CPUs at once; the server is idle between loads);
* :func:`spread` -- how much slower the slowest of several calibrations was than the fastest;
* :func:`survey` / :func:`summarise` -- repeated calibrations over a while (``perflab host``): does this
  machine keep one speed?
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from .config.validity import ValidityThresholds

#: iterations of the timed loop: 0.3-0.6 ms on a 2.4 GHz core, so one calibration has hundreds of samples
LOOP = 10_000
#: the timed work, run by ``python -S -c`` pinned to one CPU; prints the median microseconds per loop
_KERNEL = (
    r"""
import json, os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
end, samples = time.monotonic() + float(sys.argv[2]), []
while time.monotonic() < end or not samples:
    c0 = time.thread_time_ns()
    for _ in range(%d):
        pass
    samples.append((time.thread_time_ns() - c0) / 1e3)
samples.sort()
print(json.dumps({"us": samples[len(samples) // 2], "n": len(samples)}))
"""
    % LOOP
)


@dataclass(frozen=True)
class Calibration:
    """One calibration: ``at`` (epoch s), ``us``: median microseconds per loop for each CPU."""

    at: float
    us: dict[int, float]

    @property
    def slowest(self) -> float:
        return max(self.us.values())

    @property
    def fastest(self) -> float:
        return min(self.us.values())

    def to_dict(self) -> dict:
        return {"at": round(self.at, 3), "us": {str(c): round(v, 1) for c, v in self.us.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> Calibration:
        return cls(float(d["at"]), {int(c): float(v) for c, v in d["us"].items()})


def cpus() -> list[int]:
    """The CPUs this process may run on (those a run's server and generator use)."""
    return sorted(os.sched_getaffinity(0))


def calibrate(seconds: float = 0.15, on: list[int] | None = None) -> Calibration:
    """Time the loop on each CPU of ``on`` (default :func:`cpus`) for ``seconds``, all at once."""
    if not (0 < seconds <= 60):
        raise ValueError(f"seconds: must be within (0, 60], got {seconds!r}")
    on = cpus() if on is None else sorted(set(on))
    allowed = set(cpus())
    if not on or not set(on) <= allowed:
        raise ValueError(f"on: CPUs must be a non-empty subset of {sorted(allowed)}, got {on}")
    at = time.time()
    procs = {
        c: subprocess.Popen(
            [sys.executable, "-S", "-c", _KERNEL, str(c), str(seconds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for c in on
    }
    us = {}
    try:
        for c, p in procs.items():
            out, err = p.communicate(timeout=seconds + 30)
            if p.returncode != 0:
                raise RuntimeError(f"calibration on CPU {c} failed (exit {p.returncode}): {err.strip()[-300:]}")
            us[c] = float(json.loads(out)["us"])
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    return Calibration(at, us)


def spread(calibrations) -> float | None:
    """The slowest CPU median over the fastest, across ``calibrations`` (1.0: one speed throughout);
    ``None`` without any."""
    cals = list(calibrations)
    if not cals:
        return None
    return max(c.slowest for c in cals) / min(c.fastest for c in cals)


def check_survey(seconds: float, every: float, sample: float, prefix: str = "") -> None:
    """The bounds of :func:`survey`'s arguments (``prefix``: ``"--"`` names them as command-line flags)."""
    if not (seconds > 0):
        raise ValueError(f"{prefix}seconds: must be > 0, got {seconds:g}")
    if not (0 < sample <= every):
        raise ValueError(f"{prefix}sample: must be within (0, {prefix}every={every:g}], got {sample:g}")


def survey(
    seconds: float = 30.0, every: float = 0.5, sample: float = 0.1, on: list[int] | None = None, progress=None
) -> list[Calibration]:
    """Calibrate for ``sample`` seconds every ``every`` seconds during ``seconds``."""
    check_survey(seconds, every, sample)
    end, out = time.monotonic() + seconds, []
    while time.monotonic() < end:
        t = time.monotonic()
        out.append(calibrate(sample, on))
        if progress:
            progress(out[-1])
        time.sleep(max(0.0, every - (time.monotonic() - t)))
    return out


def _slow_factor() -> float:
    return ValidityThresholds().host_speed_warn


def summarise(calibrations, slow_factor: float | None = None) -> dict:
    """Per CPU: the fastest, median and slowest loop time (us), the spread (slowest / fastest) and the
    share of calibrations slower than ``slow_factor`` (default: the validity threshold
    ``host_speed_warn``) x that CPU's fastest; plus ``spread`` and ``slow_share`` over all CPUs."""
    f = _slow_factor() if slow_factor is None else slow_factor
    cals = list(calibrations)
    if not cals:
        raise ValueError("summarise: no calibrations")
    rows, slow, total = {}, 0, 0
    for c in sorted({c for cal in cals for c in cal.us}):
        v = [cal.us[c] for cal in cals if c in cal.us]
        s = sum(x > f * min(v) for x in v)
        slow, total = slow + s, total + len(v)
        rows[c] = {
            "n": len(v),
            "fastest_us": min(v),
            "median_us": statistics.median(v),
            "slowest_us": max(v),
            "spread": max(v) / min(v),
            "slow_share": s / len(v),
        }
    return {"cpus": rows, "spread": spread(cals), "slow_share": slow / total, "n": len(cals), "slow_factor": f}


def describe(summary: dict) -> str:
    """One sentence on a :func:`summarise` result."""
    s, f = summary["spread"], summary["slow_factor"]
    if s <= f:
        return f"steady: the slowest of {summary['n']} calibrations took {s:.2f}x the fastest (within {f:g}x)"
    return (
        f"not steady: the same loop took up to {s:.2f}x as long as its fastest, and "
        f"{summary['slow_share']:.0%} of calibrations were over {f:g}x; numbers measured at high CPU "
        f"load on this machine move with it, so compare side by side and repeat"
    )
