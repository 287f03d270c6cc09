"""The server's timed events (flush, compaction, write stall, slow WAL sync, queue full, GC pause, ...)
on the load generator's clock.

The server writes one JSON line per event to its stdout protocol (``server-events.jsonl`` in the run
directory): ``{"event": kind, "ts_us": start, "dur_us": duration, ...}`` with ``ts_us`` in epoch
microseconds (CLOCK_REALTIME, docs/contracts/server.md section 3). perflab-load's interval log starts at
``#[StartTime: <epoch s>]`` on the same clock, so ``start_s = ts_us / 1e6 - StartTime`` puts an event on
the latency timeline's axis. GC pauses of any HotSpot JVM also come from the profiler's JFR recording
(:func:`perflab.profiling.jfr_events.gc_pauses`) in the same shape.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd

#: the server's event writer delivers queued events five times a second (java-server EventWriter)
DELIVERY_S = 0.2

#: lines of the stdout protocol that are not timed events
PROTOCOL = ("config", "ready", "stopped")
COLUMNS = ["event", "start_s", "end_s", "dur_ms", "ts_us", "dur_us", "details"]


def read_events(path: str | Path, t0: float | None) -> pd.DataFrame:
    """Timed events of ``server-events.jsonl`` as a DataFrame (``event, start_s, end_s, dur_ms, ts_us,
    dur_us, details``), times relative to ``t0`` (epoch seconds: the measured window's start); an empty
    frame when the file is missing or has no timed event."""
    p = Path(path)
    return events_frame(parse_events(p.read_text(errors="replace")) if p.is_file() else [], t0)


def parse_events(text: str) -> list[dict]:
    """The timed events among the lines of a ``server-events.jsonl`` (its protocol lines and anything else
    left out)."""
    rows = []
    for line in text.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue  # a JVM warning on stdout, or a torn last line
        if isinstance(ev, dict) and ev.get("event") not in PROTOCOL and "ts_us" in ev:
            rows.append(ev)
    return rows


def events_frame(events: list[dict], t0: float | None) -> pd.DataFrame:
    """Event dicts (``event``, ``ts_us``, ``dur_us`` and kind-specific fields) as the events DataFrame."""
    if not events:
        return pd.DataFrame(columns=COLUMNS)
    base = t0 if t0 is not None else min(e["ts_us"] for e in events) / 1e6
    out = []
    for e in events:
        ts, dur = int(e["ts_us"]), int(e.get("dur_us") or 0)
        details = {k: v for k, v in e.items() if k not in ("event", "ts_us", "dur_us")}
        out.append(
            {
                "event": e["event"],
                "start_s": ts / 1e6 - base,
                "end_s": (ts + dur) / 1e6 - base,
                "dur_ms": dur / 1000.0,
                "ts_us": ts,
                "dur_us": dur,
                "details": details,
            }
        )
    return pd.DataFrame(out, columns=COLUMNS).sort_values("start_s").reset_index(drop=True)


def busy_share(events: pd.DataFrame, kind: str, start_s: float, end_s: float) -> float:
    """Share of ``[start_s, end_s]`` during which at least one event of ``kind`` was running."""
    if end_s <= start_s:
        return 0.0
    spans = sorted(
        (max(s, start_s), min(e, end_s))
        for s, e in zip(events.loc[events["event"] == kind, "start_s"], events.loc[events["event"] == kind, "end_s"])
        if e > start_s and s < end_s
    )
    covered, cur_s, cur_e = 0.0, None, None
    for s, e in spans:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                covered += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        covered += cur_e - cur_s
    return covered / (end_s - start_s)


def await_delivery(until_epoch_s: float) -> None:
    """Wait until the events of everything up to ``until_epoch_s`` have reached the run directory: two
    delivery periods of the server's event writer after it."""
    delay = until_epoch_s + 2 * DELIVERY_S - time.time()
    if delay > 0:
        time.sleep(delay)
