"""The timeline figure draws intervals, events by kind and spikes from real-shaped data."""

import numpy as np
import pandas as pd
import pytest

from perflab.measure.attribution import attribute
from perflab.analysis.timeline import timeline
from perflab.measure.events import events_frame


def test_timeline_has_latency_events_and_spikes():
    n = 50
    iv = pd.DataFrame({"tag": "corrected", "start_s": np.arange(n) * 0.1, "end_s": (np.arange(n) + 1) * 0.1,
                       "count": 100, "p50_ms": 0.5, "p99_ms": [1.0] * 20 + [20.0] + [1.0] * 29, "max_ms": 2.0})
    ev = events_frame([{"event": "compaction", "ts_us": int((1e6 + 1.95) * 1e6), "dur_us": 100_000},
                       {"event": "gc", "ts_us": int((1e6 + 3.0) * 1e6), "dur_us": 300}], t0=1e6)
    a = attribute(iv, ev)
    fig = timeline(iv, ev, a.spikes)
    names = [t.name for t in fig.data]
    assert names[:3] == ["max", "p99", "p50"] and "spike" in names
    assert "compaction (1)" in names and "gc (1)" in names
    spike = next(t for t in fig.data if t.name == "spike")
    assert list(spike.text) == ["compaction"]
    assert fig.layout.xaxis.rangeslider.visible and fig.layout.yaxis.type == "log"
    assert "seconds" in fig.layout.xaxis.title.text and "ms" in fig.layout.yaxis.title.text
    with pytest.raises(ValueError, match="no latency intervals"):
        timeline(iv.iloc[:0])
