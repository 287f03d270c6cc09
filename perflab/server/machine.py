"""What else ran on the machine beside a measurement: other programs' CPU.

A server and its generator on a shared machine (a laptop with a browser open, a VM beside other jobs) lose
CPU to whatever else runs there, and a probe then says more about the machine than about the server. The
machine's busy share cannot tell the two apart (at its breakpoint the server and the generator keep every
CPU busy by themselves), so the lab reads every user process's CPU from ``/proc/<pid>/stat`` at both edges
of a window and sums the processes that are not its own: this process and its descendants (the generator,
a server it started) and the target's processes (a server it did not start). A process that started inside
the window counts whole; one that started and ended inside it is missed (a parent's ``cutime`` would hold it,
but also the whole life of any long child it reaps then, hours of CPU in one window); kernel threads are left
out (the kernel's work for the lab's own sockets would count against it).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

_TICK = os.sysconf("SC_CLK_TCK")
#: ``PF_KTHREAD`` in ``/proc/<pid>/stat``'s flags: a kernel thread
_KTHREAD = 0x00200000


@dataclass(frozen=True)
class Snapshot:
    """Every user process at one moment: ``procs`` maps pid to ``(name, ppid, cpu seconds)``."""

    t: float
    procs: dict

    def tree(self, roots) -> set[int]:
        """``roots`` and every process descended from them."""
        children: dict[int, list[int]] = {}
        for pid, (_, ppid, _) in self.procs.items():
            children.setdefault(ppid, []).append(pid)
        out, todo = set(), [r for r in roots if r]
        while todo:
            pid = todo.pop()
            if pid not in out:
                out.add(pid)
                todo.extend(children.get(pid, ()))
        return out


def snapshot() -> Snapshot:
    """Read every user process's CPU now (about a millisecond for a few hundred processes)."""
    procs = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue  # it ended while we looked
        close = raw.rfind(b")")
        fields = raw[close + 2 :].split()
        if int(fields[6]) & _KTHREAD:
            continue
        comm = raw[raw.find(b"(") + 1 : close].decode(errors="replace")
        cpu = (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime: fields 14 and 15 of stat
        procs[int(name)] = (comm, int(fields[1]), cpu)
    return Snapshot(time.time(), procs)


@dataclass(frozen=True)
class OtherLoad:
    """Other programs' CPU over a window: ``cores`` (CPU seconds per wall second), ``cpus`` online, the
    window's ``seconds`` and the ``top`` programs by name with their cores."""

    cores: float
    cpus: int
    seconds: float
    top: tuple = ()

    @property
    def share(self) -> float:
        """The share of all CPUs other programs used."""
        return self.cores / self.cpus if self.cpus else 0.0

    def describe(self, n: int = 3) -> str:
        """'1.00 of 2 CPUs (python3 0.98, chromium 0.02)'."""
        names = ", ".join(f"{name} {c:.2f}" for name, c in self.top[:n] if c >= 0.01)
        return f"{self.cores:.2f} of {self.cpus} CPUs" + (f" ({names})" if names else "")

    def to_dict(self) -> dict:
        return {
            "cores": round(self.cores, 3),
            "cpus": self.cpus,
            "seconds": round(self.seconds, 3),
            "top": [[name, round(c, 3)] for name, c in self.top[:5]],
        }

    @classmethod
    def from_dict(cls, d: dict | None) -> OtherLoad | None:
        if not d:
            return None
        return cls(float(d["cores"]), int(d["cpus"]), float(d["seconds"]), tuple((n, float(c)) for n, c in d["top"]))


def others(a: Snapshot, b: Snapshot, ours) -> OtherLoad | None:
    """What the processes not descended from ``ours`` (pids) used between snapshots ``a`` and ``b``;
    ``None`` for an empty window. A process that started inside it counts whole."""
    span = b.t - a.t
    if span <= 0:
        return None
    mine = a.tree(ours) | b.tree(ours)
    by_name: dict[str, float] = {}
    for pid, (comm, _, cpu) in b.procs.items():
        if pid in mine:
            continue
        before = a.procs.get(pid)
        used = cpu - before[2] if before is not None and before[0] == comm else cpu
        if used > 0:
            by_name[comm] = by_name.get(comm, 0.0) + used
    top = tuple(sorted(((n, c / span) for n, c in by_name.items()), key=lambda nc: -nc[1]))
    return OtherLoad(sum(c for _, c in top), os.cpu_count() or 1, span, top)


def measure(seconds: float, ours) -> OtherLoad:
    """Other programs' CPU over the next ``seconds`` (the caller's process tree and ``ours`` left out)."""
    a = snapshot()
    time.sleep(seconds)
    return others(a, snapshot(), {os.getpid(), *ours})
