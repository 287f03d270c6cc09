"""CPU and memory of a process and of the machine, from /proc, sampled over a run.

The validity of a run needs the server's CPU over exactly the measured window, which is known only when
the generator reports it; so a background thread samples every ``interval_s`` and :meth:`CpuSampler.window`
interpolates the counters at the window's edges. Works for any process (the built-in server or a server
the user brings), needs nothing from it.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import numpy as np

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def process_cpu_s(pid: int) -> float | None:
    """user + system CPU seconds of process ``pid`` (all its threads), ``None`` if it is gone."""
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

    def to_dict(self) -> dict:
        return {"cpu_s": round(self.cpu_s, 3), "cores": round(self.cores, 3), "rss_max": self.rss_max,
                "machine_busy": round(self.machine_busy, 3), "cpus": self.cpus,
                "window": [self.start, self.end]}


class CpuSampler:
    """Samples process ``pid`` and the machine every ``interval_s`` in a daemon thread."""

    def __init__(self, pid: int, interval_s: float = 0.25):
        if not isinstance(pid, int) or pid <= 0:
            raise ValueError(f"pid must be a positive int, got {pid!r}")
        if not interval_s > 0:
            raise ValueError(f"interval_s must be > 0, got {interval_s!r}")
        self.pid = pid
        self.interval_s = interval_s
        self.samples: list[tuple[float, float, int, float, float]] = []  # t, proc cpu, rss, busy, total
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        cpu = process_cpu_s(self.pid)
        if cpu is None:
            return
        busy, total = machine_cpu()
        self.samples.append((time.time(), cpu, process_rss(self.pid) or 0, busy, total))

    def start(self) -> "CpuSampler":
        self.sample()
        self._thread = threading.Thread(target=self._run, name=f"perflab-proc-{self.pid}", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.interval_s):
            self.sample()

    def stop(self) -> "CpuSampler":
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval_s + 2)
        self.sample()
        return self

    def window(self, start: float, end: float) -> CpuWindow | None:
        """The window ``[start, end]`` (epoch seconds), counters interpolated between samples; ``None``
        when the samples do not cover it."""
        s = list(self.samples)
        if len(s) < 2 or not end > start or s[0][0] > start + self.interval_s or s[-1][0] < end - self.interval_s:
            return None
        t = np.array([x[0] for x in s])
        at = lambda col, when: float(np.interp(when, t, np.array([x[col] for x in s], dtype=float)))  # noqa: E731
        cpu = at(1, end) - at(1, start)
        busy, total = at(3, end) - at(3, start), at(4, end) - at(4, start)
        inside = [x[2] for x in s if start <= x[0] <= end]
        return CpuWindow(start, end, cpu, cpu / (end - start), max(inside) if inside else None,
                         busy / total if total > 0 else float("nan"), os.cpu_count() or 1)
