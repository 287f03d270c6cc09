"""A JVM's heap over time, from outside it: ``jstat -gc <pid> <interval>`` on this machine.

Why jstat: it reads the JVM's own counters (the hsperfdata file every HotSpot JVM keeps unless told not to), so it
works on any server (built-in, yours, a course server's) without an agent, an endpoint or a flag; one process
prints a line every interval, so 100 ms samples cost nothing in the server; and it splits the heap into young and
old, which tells retained data from garbage: a server that builds a range in memory holds it in the old
generation (a large array goes there at once), one that streams only churns the young one. ``/v0/stats`` has no
heap (and course servers have no ``/v0/stats``); ``jcmd GC.heap_info`` starts a JVM per sample. The jstat used is
the one beside the server's own ``java`` (``/proc/<pid>/exe``): the same JDK reads its counters.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..i18n import Sentence

#: jstat -gc's columns (KB) that make the heap in use, and the old generation's
USED = ("S0U", "S1U", "EU", "OU")
OLD = "OU"
CAPACITY = ("S0C", "S1C", "EC", "OC")
#: seconds jstat may take to print its first sample
FIRST_S = 20.0


def java_tool(pid: int, tool: str) -> Path | None:
    """``tool`` (``jstat``, ``jcmd``) of the JDK that runs ``pid``, ``None`` when there is none beside its java."""
    try:
        exe = Path(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return None
    found = exe.parent / tool
    return found if found.is_file() and os.access(found, os.X_OK) else None


def max_heap(pid: int, timeout: float = 30.0) -> int | None:
    """The JVM ``pid``'s largest heap in bytes (``-XX:MaxHeapSize``, what ``-Xmx`` set), asked of the JVM itself
    (``jcmd <pid> VM.flags``); ``None`` when it cannot be asked."""
    jcmd = java_tool(pid, "jcmd")
    if jcmd is None:
        return None
    try:
        out = subprocess.run([str(jcmd), str(pid), "VM.flags"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for word in out.stdout.split():
        if word.startswith("-XX:MaxHeapSize="):
            return int(word.split("=", 1)[1])
    return None


@dataclass
class HeapSamples:
    """The samples: ``rows`` of ``{t (epoch s), used_bytes, old_bytes, committed_bytes, young_gcs, full_gcs}``;
    ``unavailable``: why there are none (a :class:`~perflab.i18n.Sentence`)."""

    rows: list[dict] = field(default_factory=list)
    unavailable: Sentence | None = None


class HeapSampler:
    """``jstat -gc <pid> <interval_ms>`` read line by line on a thread, each line stamped when it arrives; a
    context manager (see the module docstring)."""

    def __init__(self, pid: int | None, interval: float = 0.1):
        if not (isinstance(interval, (int, float)) and 0.001 <= interval <= 60):
            raise ValueError(f"heap interval: between 1 ms and 60 s, got {interval!r}")
        self.pid, self.interval = pid, interval
        self.samples = HeapSamples()
        self._proc: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> HeapSampler:
        jstat = java_tool(self.pid, "jstat") if self.pid else None
        if jstat is None:
            self.samples.unavailable = (
                Sentence("no `jstat` beside the `java` of process {pid}", pid=self.pid)
                if self.pid
                else Sentence("the server's pid is not known")
            )
            return self
        self._proc = subprocess.Popen(
            [str(jstat), "-gc", str(self.pid), f"{max(1, round(self.interval * 1000))}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self._thread = threading.Thread(target=self._read, name="perflab-heap", daemon=True)
        self._thread.start()
        # jstat is a JVM of its own, up in a few hundred ms: what is sampled starts once its first line came, so
        # the samples hold the heap before it
        until = time.monotonic() + FIRST_S
        while not self.samples.rows and self._thread.is_alive() and time.monotonic() < until:
            time.sleep(0.01)
        if not self.samples.rows and self.samples.unavailable is None:
            self.samples.unavailable = Sentence(
                "`jstat -gc {pid}` printed no sample in {seconds} s", pid=self.pid, seconds=f"{FIRST_S:g}"
            )
        return self

    def _read(self) -> None:
        header: list[str] | None = None
        text: list[str] = []
        for line in self._proc.stdout:
            now = time.time()
            words = line.split()
            if header is None:
                if "EU" in words and "OU" in words:
                    header = words
                else:
                    text.append(line.strip())
                continue
            if len(words) != len(header) or words == header:
                continue
            try:
                v = dict(zip(header, (float(w) if w != "-" else 0.0 for w in words)))
            except ValueError:
                continue
            self.samples.rows.append(
                {
                    "t": now,
                    "used_bytes": int(sum(v[c] for c in USED) * 1024),
                    "old_bytes": int(v[OLD] * 1024),
                    "committed_bytes": int(sum(v[c] for c in CAPACITY) * 1024),
                    "young_gcs": int(v.get("YGC", 0)),
                    "full_gcs": int(v.get("FGC", 0)),
                }
            )
        if header is None:
            self.samples.unavailable = Sentence(
                "`jstat -gc {pid}` printed no sample: `{output}`", pid=self.pid, output=" ".join(text)[:200]
            )

    def __exit__(self, *exc) -> None:
        if self._proc is not None:
            # one interval more, so the samples reach past the end of what was sampled
            time.sleep(min(self.interval * 1.5, 1.0))
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._thread.join(5)
            self._proc.stdout.close()
        return None


#: the old generation may grow by this share of the range, and the heap still counts as flat
FLAT_SHARE = 0.25


def summary(rows: list[dict], start: float, end: float, range_bytes: int) -> dict:
    """The heap over ``[start, end]`` (epoch seconds) against a range of ``range_bytes``: used at the start (the
    last sample before it), its peak and the growth, the old generation's the same, the GCs in between, what the
    old generation kept (``old_kept_bytes``: its lowest from its peak to the end of the read, above its start) and
    ``flat``: whether that is less than :data:`FLAT_SHARE` of the range, ``None`` with fewer than two samples in
    the window. Why kept, not peak: the young generation fills and empties whatever the server does, and a busy
    collector promotes some of that churn early (it leaves the old generation at the next mixed collection); a
    server that holds the range keeps it there until the read ends."""
    before = [r for r in rows if r["t"] <= start]
    inside = [r for r in rows if start < r["t"] <= end]
    first = before[-1] if before else (inside[0] if inside else None)
    if first is None or not inside:
        return {"samples": len(inside), "flat": None}
    peak = max(inside, key=lambda r: r["used_bytes"])
    at = max(range(len(inside)), key=lambda i: inside[i]["old_bytes"])
    old_peak = inside[at]["old_bytes"]
    kept = max(0, min(r["old_bytes"] for r in inside[at:]) - first["old_bytes"])
    last = inside[-1]
    return {
        "samples": len(inside),
        "used_start_bytes": first["used_bytes"],
        "used_peak_bytes": peak["used_bytes"],
        "used_peak_at_s": peak["t"] - start,
        "used_growth_bytes": max(0, peak["used_bytes"] - first["used_bytes"]),
        "old_start_bytes": first["old_bytes"],
        "old_peak_bytes": old_peak,
        "old_growth_bytes": max(0, old_peak - first["old_bytes"]),
        "old_kept_bytes": kept,
        "committed_bytes": last["committed_bytes"],
        "young_gcs": last["young_gcs"] - first["young_gcs"],
        "full_gcs": last["full_gcs"] - first["full_gcs"],
        "range_bytes": range_bytes,
        "flat_share": FLAT_SHARE,
        "flat": (kept < FLAT_SHARE * range_bytes) if len(inside) >= 2 else None,
    }
