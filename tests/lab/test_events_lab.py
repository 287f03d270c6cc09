"""The server's timed events as the lab records them: flush spans where the flush counter moved, a
forced GC and a debug pause at known moments, and the pause on the latency timeline's clock."""

from __future__ import annotations

import time
import urllib.request

import pandas as pd

from perflab import LoadParams, ServerConfig, run_experiment
from perflab.core.session import Session, SessionOptions
from perflab.measure.generator import LoadTool
from perflab.server import metrics
from perflab.timeline.events import read_events


def _post(url: str) -> tuple[float, float]:
    """(epoch s before, epoch s after) a POST to ``url``."""
    before = time.time()
    with urllib.request.urlopen(urllib.request.Request(url, data=b"", method="POST"), timeout=10) as r:
        assert r.status == 200, r.status
    return before, time.time()


def test_flush_events_end_where_the_flush_counter_moved(server_build, loadgen_binary, data_root):
    # a 64k memtable: random 100-byte PUTs at 2000/s fill it about every 0.3 s
    res = run_experiment(
        ServerConfig(backend="lsm", memtable_size="64k"),
        LoadParams(
            rate=2000,
            duration=3,
            warmup=1,
            threads=1,
            connections=4,
            script="put-random.lua",
            script_args=("keys=100000",),
        ),
        name="events-flush",
        session=SessionOptions(stats_interval=0.25, data_root=data_root),
    )
    ev = read_events(res.run_dir / "server-events.jsonl", None)
    flushes = ev[ev["event"] == "flush"]
    stats = res.stats.sort_values("timestamp_ms")
    ts = stats["timestamp_ms"].to_numpy() / 1e3
    counter = stats[metrics.FLUSHES].to_numpy()
    ends = ((flushes["ts_us"] + flushes["dur_us"]) / 1e6).to_numpy()
    assert counter[-1] >= 3, f"only {counter[-1]} flushes: the test needs several"
    # every flush the counter shows by a sample has its event ending by then (a flush finishing while
    # the sample is taken may fall on either side: 10 ms of slack)
    for t, n in zip(ts, counter):
        done = int((ends <= t + 0.010).sum())
        assert abs(done - n) <= 1, f"at {t:.3f}: counter {n}, flush events ended {done}"
        assert int((ends <= t - 0.010).sum()) <= n
    assert (flushes["dur_us"] > 0).all() and (flushes["details"].map(lambda d: d.get("bytes", 0)) > 0).all()
    # the run's events.csv (0 = start of the measured window) has every flush that ended in the window,
    # the last ones included (the run waits for the server's event writer); the one the server runs
    # as it stops comes after the record
    recorded = pd.read_csv(res.run_dir / "events.csv")
    in_window = ends <= res.load.measure_end
    assert in_window.sum() >= 2
    assert set(recorded.loc[recorded["event"] == "flush", "ts_us"]) >= set(flushes["ts_us"][in_window])


def test_a_forced_gc_and_a_pause_land_on_the_latency_timeline(server_build, loadgen_binary, data_root):
    load = LoadParams(rate=2000, duration=3, warmup=1, threads=1, connections=8, script="status.lua", hdr_interval=0.01)
    with Session(
        "experiment",
        "events-clock",
        ServerConfig(backend="memory", debug_endpoints="on"),
        LoadTool.of(load),
        SessionOptions(data_root=data_root),
    ) as sess:
        # started for sure (a start a busy machine's hosts missed is tried again with a longer lead)
        lp = sess.start_load(load, out_dir=sess.run.dir)
        # the warm-up, then about 1 s into the measured window (the start is set ahead of now by the lead, which
        # a busy machine makes seconds long)
        time.sleep(max(0.0, lp.start_at + 2.0 - time.time()))
        pause = _post(sess.handle.url + "/v0/debug/pause?ms=300")
        time.sleep(0.8)
        gc = _post(sess.handle.url + "/v0/debug/gc")
        res = lp.wait()
        run_dir = sess.run.dir
    t0 = res.measure_start
    ev = read_events(run_dir / "server-events.jsonl", t0)
    (p,) = ev[ev["event"] == "debug_pause"].itertuples()
    assert p.dur_us == 300_000
    assert pause[0] - 0.001 <= p.ts_us / 1e6 <= pause[1] + 0.001, "the pause starts while we ask for it"
    gcs = ev[(ev["event"] == "gc") & (ev["ts_us"] / 1e6 >= gc[0] - 0.001) & (ev["ts_us"] / 1e6 <= gc[1] + 0.001)]
    assert len(gcs) >= 1 and (gcs["dur_us"] > 0).all(), ev[ev["event"] == "gc"]
    assert any("System.gc" in str(d.get("cause", "")) for d in gcs["details"]), gcs["details"].tolist()
    # The hdr log's intervals hold the requests *due* in them (perflab-load counts a request in the interval
    # of its scheduled time, as corrected latency measures it): the requests due as the pause began waited
    # it out, so the first 10 ms interval holding a latency of most of the pause is the one the pause began
    # in (the server's clock mapped to the log's axis: 1 ms of slack), or one within 100 ms after it on a
    # busy machine slow to answer. Only intervals around the pause are looked at: a stall of the shared
    # machine elsewhere in the window is not the pause.
    iv = res.intervals
    iv = iv[iv["tag"] == "corrected"] if "tag" in iv else iv
    near = iv[(iv["end_s"] >= p.start_s - 0.001) & (iv["start_s"] <= p.end_s + 0.5)]
    stuck = near[near["max_ms"] > 250]
    assert len(stuck), ("no request waited for the pause", near.to_dict("records"))
    first = stuck.iloc[0]
    assert p.start_s - 0.001 <= first["end_s"] and first["start_s"] <= p.start_s + 0.1, (p.start_s, first.to_dict())
    assert 280 <= first["max_ms"] <= 1000, first.to_dict()  # sent as the pause began
