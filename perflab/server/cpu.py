"""CPU and memory of a process and of the machine, sampled over a run.

A run needs the server's CPU over exactly the measured window: its validity, and its CPU per request (a
metric compared like latency). A background thread samples every ``interval_s``; a load whose window is
known ahead (a start time set ahead: :meth:`ProcessCpu.at`) gets a sample at each edge too, and
:meth:`ProcessCpu.window` interpolates the counters at the window's edges from the samples around them. Works
for any process (the built-in server or a server the user brings), needs nothing from it.

A process's CPU is its *process CPU clock* (``clock_gettime`` of ``CPUCLOCK_SCHED`` for its pid, which Linux
lets any process read): the scheduler's nanosecond sum over all its threads, those that have exited
included. ``/proc/<pid>/stat``'s utime and stime are the same sum cut to clock ticks (10 ms); a 1 s window of
a server using a tenth of a core is 100 ms of CPU, so a tick would be 10 %. Where the clock cannot be read,
the ticks are used. Both lag by at most one scheduler tick for a thread running at that moment.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..sampling import Periodic
from . import machine

_TICK = os.sysconf("SC_CLK_TCK")
#: an edge snapshot this close to a window's edge (seconds) is taken as at it (its timer fires late on a busy machine)
_EDGE_S = 0.25
#: the shortest stretch other programs' CPU is read over for bursts: a clock tick (10 ms) is 0.04 cores of it
BURST_S = 0.2
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _cpu_clock(pid: int) -> int:
    """The clock id of process ``pid``'s CPU clock: ``MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)`` of Linux's
    posix-cpu-timers (the pid's complement shifted by 3, the clock kind 2 in the low bits)."""
    return ((~pid) << 3) | 2


def process_cpu_s(pid: int) -> float | None:
    """user + system CPU seconds of process ``pid`` (all its threads, exited ones too), ``None`` if it is
    gone: its process CPU clock (nanoseconds), else ``/proc/<pid>/stat`` (clock ticks)."""
    try:
        return time.clock_gettime_ns(_cpu_clock(pid)) / 1e9
    except (OSError, OverflowError, AttributeError):
        pass  # not Linux, or the process is gone: /proc says which
    return _stat_cpu_s(pid)


def _stat_cpu_s(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14, 15 of stat)


def process_rss(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        return None


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot (/proc/stat; iowait counts as idle)."""
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    total = sum(vals[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)
    idle = vals[3] + vals[4]
    return (total - idle) / _TICK, total / _TICK


@dataclass(frozen=True)
class CpuWindow:
    """What a process and the machine did over a window: ``cpu_s`` of the process, ``cores`` (cpu_s per
    wall second), ``rss_max`` bytes, ``machine_busy`` (share of all CPUs busy), ``cpus`` online."""

    start: float
    end: float
    cpu_s: float
    cores: float
    rss_max: int | None
    machine_busy: float
    cpus: int
    #: other programs' CPU over the window (:mod:`perflab.server.machine`); ``None`` when its edges were not
    #: known ahead
    others: machine.OtherLoad | None = None
    #: the most CPU other programs used in one stretch between two samples inside the window (cores)
    others_peak: float | None = None

    def to_dict(self) -> dict:
        return {
            "cpu_s": round(self.cpu_s, 3),
            "cores": round(self.cores, 3),
            "rss_max": self.rss_max,
            "machine_busy": round(self.machine_busy, 3),
            "cpus": self.cpus,
            "window": [self.start, self.end],
            "others": self.others.to_dict() if self.others else None,
            "others_peak": self.others_peak,
        }


class ProcessCpu(Periodic):
    """Samples the CPU and RSS of a target's processes and the machine's CPU every ``interval_s``.

    ``pids()`` returns the processes to sample now by *slot* (``{None: pid}`` for one server, ``{i: pid}`` for
    the nodes of a cluster): read at every sample, so a node killed and started again is followed by its new
    pid. :meth:`window` sums the processes over a window (counters interpolated at its edges, each process
    on its own); :meth:`frame` gives each slot's cores and RSS over time."""

    def __init__(self, pids, interval_s: float = 0.25):
        super().__init__(interval_s, "perflab-cpu")
        self.pids = pids
        self.samples: list[tuple] = []  # t, slot, pid, cpu_s, rss, busy, total
        self.edges: list[machine.Snapshot] = []  # every process, at the edges of windows known ahead
        self.ours: set[int] = set()  # more processes of the run's own (generator hosts' workers on this machine)
        #: other programs' cores over each stretch between two samples at least BURST_S apart: (start, end, cores)
        self.bursts: list[tuple[float, float, float]] = []
        self._last: machine.Snapshot | None = None

    def sample(self) -> None:
        snap = machine.snapshot()
        if self._last is None or snap.t - self._last.t >= BURST_S:
            if self._last is not None:
                got = machine.others(self._last, snap, self._mine())
                if got is not None:
                    self.bursts.append((self._last.t, snap.t, got.cores))
            self._last = snap
        busy, total = machine_cpu()
        for slot, pid in self.pids().items():
            t = time.time()
            cpu = process_cpu_s(pid) if pid else None
            rss = process_rss(pid) if cpu is not None else None
            if rss:  # no resident memory: a process that is gone (a zombie until reaped)
                self.samples.append((t, slot, pid, cpu, rss, busy, total))

    def at(self, times, ours=()) -> None:
        """One more sample at each of ``times`` (epoch seconds, on this host's clock): a window's edges known
        ahead, so that :meth:`window` need not interpolate over a quarter of a second in which the load
        stopped; with every process's CPU (:meth:`others`), ``ours`` being the run's own too."""
        self.ours = set(ours)
        now = time.time()
        for t in times:
            if t is not None and t > now:
                timer = threading.Timer(t - now, self._edge)
                timer.daemon = True
                timer.start()

    def _edge(self) -> None:
        self._sample()
        try:
            self.edges.append(machine.snapshot())
        except OSError:
            pass  # best effort, as every sample

    def others(self, start: float, end: float) -> machine.OtherLoad | None:
        """Other programs' CPU between the edge snapshots at ``start`` and ``end`` (``None`` without them)."""

        def near(t):
            got = [s for s in self.edges if abs(s.t - t) <= _EDGE_S]
            return min(got, key=lambda s: abs(s.t - t)) if got else None

        a, b = near(start), near(end)
        if a is None or b is None:
            return None
        return machine.others(a, b, self._mine())

    def _mine(self) -> set[int]:
        return {os.getpid(), *self.pids().values(), *self.ours}

    def peak_others(self, start: float, end: float) -> float | None:
        """The most CPU other programs used in any stretch between two samples inside ``[start, end]`` (cores;
        ``None`` without one): a burst a window's mean hides."""
        inside = [cores for a, b, cores in self.bursts if a >= start - 0.01 and b <= end + 0.01]
        return max(inside) if inside else None

    def idle_others(self, seconds: float, ours=()) -> machine.OtherLoad:
        """Other programs' CPU over the next ``seconds`` (call it while no load runs: a quiet check)."""
        return machine.measure(seconds, {*self.pids().values(), *ours})

    def _frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.samples), columns=["t", "node", "pid", "cpu_s", "rss", "busy", "total"])

    def frame(self, t0: float | None = None) -> pd.DataFrame:
        """``node, pid, t_s, cpu_s, cores (since the previous sample of the same process), rss``."""
        df = self._frame()
        if df.empty:
            return pd.DataFrame(columns=["node", "pid", "t_s", "cpu_s", "cores", "rss"])
        df = df.sort_values(["node", "t"]).reset_index(drop=True)
        g = df.groupby(["node", "pid"], sort=False, dropna=False)
        df["cores"] = g["cpu_s"].diff() / g["t"].diff()
        df["t_s"] = df["t"] - (t0 if t0 is not None else df["t"].min())
        return df[["node", "pid", "t_s", "cpu_s", "cores", "rss"]]

    def window(self, start: float, end: float) -> CpuWindow | None:
        """Every process over ``[start, end]`` (epoch seconds): their CPU summed, the machine's busy share,
        the largest sum of RSS; ``None`` when the samples do not cover the window."""
        df = self._frame()
        if (
            df.empty
            or not end > start
            or df["t"].min() > start + self.interval_s
            or df["t"].max() < end - self.interval_s
        ):
            return None
        df = df.sort_values("t", kind="stable")  # edge samples are appended by their own timers
        cpu = 0.0
        for _, g in df.groupby(["node", "pid"], dropna=False):
            t, c = g["t"].to_numpy(), g["cpu_s"].to_numpy(dtype=float)
            lo, hi = max(start, t[0]), min(end, t[-1])
            if hi > lo:
                cpu += float(np.interp(hi, t, c) - np.interp(lo, t, c))
        m = df.drop_duplicates("t")
        tt = m["t"].to_numpy()
        busy = float(np.interp(end, tt, m["busy"]) - np.interp(start, tt, m["busy"]))
        total = float(np.interp(end, tt, m["total"]) - np.interp(start, tt, m["total"]))
        inside = df[(df["t"] >= start) & (df["t"] <= end)]
        rss = int(inside.groupby("t")["rss"].sum().max()) if len(inside) else None
        cpus = os.cpu_count() or 1
        # /proc/stat's busy time moves in clock ticks, the processes' clocks in nanoseconds: over a short window the
        # machine can read less busy than the server alone made it, which it never was
        busy_share = max(busy / total, cpu / (end - start) / cpus) if total > 0 else float("nan")
        return CpuWindow(
            start,
            end,
            cpu,
            cpu / (end - start),
            rss,
            busy_share,
            cpus,
            self.others(start, end),
            self.peak_others(start, end),
        )
