"""The JVM's own events from a JFR recording: GC pauses, on the same clock as the latency timeline.

The profiler records with async-profiler's ``jfrsync`` option and :data:`GC_SETTINGS`, so one JFR file
holds the samples (cpu, alloc, lock) and the JVM's GC pauses. This works for any HotSpot JVM, the
built-in server or one the user brings. Read through the in-process JVM (:mod:`.bridge`) with JDK's
``jdk.jfr.consumer`` API; times are epoch nanoseconds, turned into the server-event shape
``{"event": "gc", "ts_us", "dur_us", "name", "cause", "phase"}`` of :mod:`perflab.timeline.events`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BridgeError
from . import bridge

GC_SETTINGS = Path(__file__).with_name("gc.jfc")


def _us(instant) -> int:
    return int(instant.getEpochSecond()) * 1_000_000 + int(instant.getNano()) // 1000


def gc_pauses(jfr: str | os.PathLike) -> list[dict]:
    """Every GC pause in ``jfr`` (``jdk.GCPhasePause`` events, with the collection's collector name and
    cause from ``jdk.GarbageCollection``)."""
    path = Path(jfr)
    if not path.is_file():
        raise ValueError(f"jfr: {path} does not exist")
    bridge.start_jvm()
    RecordingFile = bridge._jclass("jdk.jfr.consumer.RecordingFile")
    Paths = bridge._jclass("java.nio.file.Paths")
    pauses, collections = [], {}
    try:
        rf = RecordingFile(Paths.get(str(path)))
        try:
            while rf.hasMoreEvents():
                e = rf.readEvent()
                name = str(e.getEventType().getName())
                if name == "jdk.GCPhasePause":
                    pauses.append(
                        (
                            int(e.getInt("gcId")),
                            _us(e.getStartTime()),
                            int(e.getDuration().toNanos()) // 1000,
                            str(e.getString("name")),
                        )
                    )
                elif name == "jdk.GarbageCollection":
                    collections[int(e.getInt("gcId"))] = (str(e.getString("name")), str(e.getString("cause")))
        finally:
            rf.close()
    except Exception as e:  # noqa: BLE001 - a Java exception through JPype
        raise BridgeError(f"reading GC events from {path} failed: {bridge.java_error_text(e)}") from None
    out = []
    for gc_id, ts, dur, phase in sorted(pauses, key=lambda p: p[1]):
        collector, cause = collections.get(gc_id, ("?", "?"))
        out.append(
            {
                "event": "gc",
                "ts_us": ts,
                "dur_us": dur,
                "name": collector,
                "cause": cause,
                "phase": phase,
                "gc_id": gc_id,
                "source": "jfr",
            }
        )
    return out
