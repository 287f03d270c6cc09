"""Spike attribution on synthetic timelines: a kind of event that causes the spikes is named with its
test; one that merely happens is not."""

import numpy as np
import pandas as pd

from perflab.timeline.attribution import attribute, spikes
from perflab.timeline.events import busy_share, events_frame


def timeline(n=300, step=0.1, spike_at=()):
    rng = np.random.default_rng(1)
    p99 = rng.uniform(0.8, 1.2, n)
    for i in spike_at:
        p99[i] = 15.0
    return pd.DataFrame(
        {
            "tag": "corrected",
            "start_s": np.arange(n) * step,
            "end_s": (np.arange(n) + 1) * step,
            "count": 1000,
            "p99_ms": p99,
        }
    )


def ev(kind, start_s, dur_s, t0=1_000_000.0):
    return {"event": kind, "ts_us": int((t0 + start_s) * 1e6), "dur_us": int(dur_s * 1e6)}


def test_spikes_are_well_above_the_typical_interval():
    sp, typical, threshold = spikes(timeline(spike_at=[10, 50]))
    assert list(sp.index) == [10, 50] and 0.9 < typical < 1.1 and threshold == max(3 * typical, typical + 1)


def test_a_kind_that_causes_the_spikes_is_named_with_its_test():
    spike_at = [20, 60, 100, 140, 180, 220, 260]
    events = events_frame(
        [ev("compaction", i * 0.1 - 0.05, 0.08) for i in spike_at]
        + [ev("gc", s, 0.003) for s in (3.3, 7.7, 12.1, 16.9, 25.5)],
        t0=1_000_000.0,
    )
    a = attribute(timeline(spike_at=spike_at), events)
    comp = next(k for k in a.kinds if k.kind == "compaction")
    gc = next(k for k in a.kinds if k.kind == "gc")
    assert (comp.spikes, comp.overlapping) == (7, 7) and comp.explains and comp.p_value < 0.01
    assert gc.overlapping == 0 and not gc.explains
    text = a.summary()
    assert text.startswith("7 of 300 intervals are spikes")
    assert "of 7 spikes, 7 overlap a compaction, more than the" in text and "binomial p" in text
    assert "compaction was running 2% of the time" in text and "Rule: a kind explains" in text


def test_an_event_that_is_always_running_explains_nothing():
    events = events_frame([ev("flush", s, 0.09) for s in np.arange(0, 30, 0.1)], t0=1_000_000.0)
    a = attribute(timeline(spike_at=[20, 60, 100]), events)
    flush = a.kinds[0]
    assert flush.overlapping == 3 and flush.chance == 1.0 and not flush.explains
    assert "not more than chance" in a.summary()


def test_no_spikes_and_no_events_say_so():
    assert (
        attribute(timeline(), events_frame([], None)).summary()
        == "0 of 300 intervals are spikes (p99 above 2.98 ms, against a typical 0.99 ms)."
    )
    a = attribute(timeline(spike_at=[5]), events_frame([], None))
    assert a.summary().endswith("the server reported no events to attribute them to.")


def test_busy_share_merges_overlapping_spans():
    events = events_frame([ev("c", 0, 1), ev("c", 0.5, 1), ev("c", 5, 1)], t0=1_000_000.0)
    assert busy_share(events, "c", 0, 10) == 0.25
