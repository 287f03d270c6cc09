"""Latency of fixed-rate runs: spectra, their sentences and figure, runs compared (a difference only with the
test behind it, the method named), the timeline with the server's events, and the stories a notebook shows."""

import math

import numpy as np
import pandas as pd
import pytest
import synthetic as syn
from synthetic import experiment, load

from perflab.analysis import latency
from perflab.analysis.latency import spectra, timelines
from perflab.measure.wrk_output import parse_wrk_output
from perflab.timeline.attribution import attribute
from perflab.timeline.events import events_frame


def spectrum(points):
    """A wrk2-style spectrum from (percentile 0..1, latency_ms) points, 10,000 requests."""
    rows = [(ms, p, max(1, int(p * 10000)), (1 / (1 - p)) if p < 1 else math.inf) for p, ms in points]
    return pd.DataFrame(rows, columns=["latency_ms", "percentile", "total_count", "inverse"])


FLAT_THEN_CLIFF = spectrum(
    [(0.0, 0.05), (0.5, 0.40), (0.75, 0.50), (0.9, 0.60), (0.99, 9.0), (0.999, 12.0), (0.9999, 13.0), (1.0, 14.0)]
)


def test_value_at_reads_the_spectrum_and_rejects_empty():
    assert spectra.value_at(FLAT_THEN_CLIFF, 50) == 0.40
    assert spectra.value_at(FLAT_THEN_CLIFF, 99) == 9.0
    assert spectra.value_at(FLAT_THEN_CLIFF, 100) == 14.0
    with pytest.raises(ValueError, match="empty"):
        spectra.value_at(spectrum([]), 50)


def test_describe_spectrum_names_the_cliff():
    text = spectra.describe_spectrum("PUT, 1 connection", FLAT_THEN_CLIFF, sla_ms=10)
    assert text.startswith("**PUT, 1 connection**: p50 0.40 ms, p99 9.00 ms")
    assert "from p90 (0.60 ms) to p99 (9.00 ms), 15x" in text
    assert "within the 10.0 ms SLA" in text
    above = spectra.describe_spectrum("x", FLAT_THEN_CLIFF, sla_ms=5)
    assert "above the 5.00 ms SLA" in above


def test_describe_spectrum_ignores_levels_the_sample_cannot_resolve():
    small = spectrum([(0.0, 1.0), (0.5, 1.0), (0.9, 1.1), (0.99, 1.2), (0.999, 50.0), (1.0, 60.0)])
    small["total_count"] = (small["percentile"] * 500).clip(lower=1).astype(int)  # 500 requests
    text = spectra.describe_spectrum("tiny", small)
    assert "p99.9" in text and "50.0 ms" in text  # still reported as a level...
    assert "to p99.9" not in text  # ...but not called the steepest step


def intervals(p99s):
    return pd.DataFrame(
        {"tag": "corrected", "start_s": range(len(p99s)), "end_s": [i + 1 for i in range(len(p99s))], "p99_ms": p99s}
    )


def stats_with_flush_at(seconds, n, step=0.25):
    """Stats sampled every `step` s; one flush completes in the middle of each second in `seconds`."""
    ts = [i * step for i in range(int(n / step) + 1)]
    flushes = [sum(1 for f in seconds if f + 0.5 <= t) for t in ts]
    return pd.DataFrame({"t_s": ts, "storage.flushes": flushes, "storage.flush_active": [0] * len(ts)})


def test_event_effect_claims_a_difference_only_with_the_test_behind_it():
    rng = np.random.default_rng(7)
    p99 = list(rng.lognormal(0, 0.2, 40))
    flush_at = {3, 9, 15, 21, 27, 33}
    for i in flush_at:
        p99[i] *= 8
    text = timelines.describe_event_effect(intervals(p99), stats_with_flush_at(flush_at, 40, step=0.1))
    assert text.startswith("p99 is higher in the ") and "during which a flush ran" in text
    assert "Mann-Whitney p" in text and "n = " in text


def test_event_effect_says_no_difference_when_the_data_cannot_tell():
    # Two flushed intervals out of ten: a spike in one of them is not evidence (n = 2).
    p99 = [1.0] * 10
    p99[3] = 20.0
    text = timelines.describe_event_effect(intervals(p99), stats_with_flush_at({3, 7}, 10))
    assert text.startswith("No difference in p99 detectable between the 2 intervals with a flush")
    assert "n = 8 vs 2" in text


def test_compare_latency_names_the_test_and_n():
    rng = np.random.default_rng(3)
    fast = intervals(list(rng.lognormal(0, 0.2, 30)))
    slow = intervals(list(rng.lognormal(np.log(3), 0.2, 30)))
    same = intervals(list(rng.lognormal(0, 0.2, 30)))
    text = spectra.compare_latency({"sync": slow, "async": fast, "virtual": same})
    assert text.startswith("p99 per interval (sequential runs): async median")
    assert "sync 3." in text and "higher (n = 30 vs 30, Mann-Whitney p < 0.001" in text
    assert "virtual" in text and "no difference detectable (n = 30 vs 30" in text


def test_event_attribution_with_coarse_sampling_is_conservative():
    # sampled once a second at x.5, a flush done at 3.5 may belong to [2,3] or [3,4]: both are marked
    st = pd.DataFrame({"t_s": [t + 0.5 for t in range(6)], "storage.flushes": [0, 0, 0, 1, 1, 1]})
    flags = timelines.intervals_with_events(intervals([1.0] * 5), st, "storage.flushes")
    assert list(flags) == [False, False, True, True, False]


def test_event_effect_uses_the_active_gauge():
    st = pd.DataFrame(
        {"t_s": [0, 1, 2, 3, 4, 5], "storage.flushes": [0] * 6, "storage.flush_active": [0, 0, 1, 0, 0, 0]}
    )
    flags = timelines.intervals_with_events(intervals([1.0] * 5), st, "storage.flushes", "storage.flush_active")
    assert list(flags) == [False, True, True, False, False]


def test_event_effect_says_when_no_flush_ran():
    text = timelines.describe_event_effect(intervals([1.0] * 5), stats_with_flush_at(set(), 5))
    assert "No flush ran during the 5 measured intervals" in text


def test_trend_detects_a_growing_queue_and_a_flat_run():
    grows = timelines.describe_trend(intervals([1, 1, 2, 4, 8, 16, 32, 64, 90, 120]))
    assert "grows during the run" in grows and "Kendall p" in grows and "n = 10" in grows
    assert "shows no trend" in timelines.describe_trend(intervals([1, 1.1, 0.9, 1, 1, 1.05, 0.95, 1.1]))
    assert timelines.describe_trend(intervals([1, 2, 3])) == ""  # too few to say anything


def test_spectra_runs_and_latency_comparisons_from_experiment_results():
    rng = np.random.default_rng(5)
    fast = syn.experiment(syn.load(1.0, p99s=list(rng.lognormal(0, 0.1, 30))))
    slow = syn.experiment(
        syn.load(4.0, achieved=480, status={"200": 4990, "500": 10}, p99s=list(rng.lognormal(np.log(4), 0.1, 30))),
        "suspect",
        ("rate 96% of offered",),
    )
    runs = {"PUT, 1 connection": fast, "PUT, 4 connections": slow}
    text = spectra.describe_spectra(runs, sla_ms=3, compare=("p99_ms", "p999_ms"))
    paragraphs = text.split("\n\n")
    assert (
        paragraphs[0].startswith("**PUT, 1 connection**: p50 0.25 ms, p99 1.00 ms")
        and "within the 3.00 ms SLA" in paragraphs[0]
    )
    assert "above the 3.00 ms SLA" in paragraphs[1]
    assert (
        paragraphs[2].startswith("p99 per interval (sequential runs): PUT, 1 connection median")
        and "higher (n = 30 vs 30" in paragraphs[2]
    )
    assert paragraphs[3].startswith("p99.9 per interval (sequential runs):") and len(paragraphs) == 4
    assert spectra.compare_latencies({"only": fast}) == ""
    lines = spectra.describe_runs(runs, sla_ms=3)
    assert lines[1].endswith("Achieved 480 req/s of 500 req/s, 10 errors; validity: suspect: rate 96% of offered.")
    assert lines[0].startswith("**PUT, 1 connection**: p50 0.25 ms") and "validity: valid." in lines[0]


def test_prefill_sentence_names_what_was_written():
    runs = {
        "GET, 1 connection": syn.experiment(
            syn.load(),
            prefill={"keys": 5000, "value_size": 100, "dir": "/tmp/x", "json": "{}", "sstables": 2, "wall_s": 0.28},
        ),
        "GET, 4 connections": syn.experiment(syn.load()),
    }
    assert spectra.describe_prefill(runs) == (
        "The database at the start (prefill): keys 5,000, value size 100, sstables 2, wall s 0.28."
    )
    assert spectra.describe_prefill({"PUT": syn.experiment(syn.load())}) == ""


def test_timeline_says_event_effects_spikes_and_trend():
    p99s = [1.0] * 20
    p99s[5] = p99s[12] = 9.0
    ev = syn.events(("flush", 0.5, 60), ("flush", 1.2, 60), ("compaction", 1.8, 20))
    r = syn.experiment(syn.load(1.0, p99s=p99s), ev=ev)
    text = timelines.describe_timeline(r, kinds=("flush",))
    assert text.startswith("p99 is higher in the ") or text.startswith("No difference in p99 detectable")
    assert "2 of 20 intervals are spikes" in text and "of 2 spikes, 2 overlap a flush" in text
    assert text.endswith(timelines.describe_trend(r.load.intervals))
    labelled = timelines.describe_timeline(r, ("flush",), trend=False, label="memtable 1m, 1 flush thread")
    assert labelled.startswith("**memtable 1m, 1 flush thread**: ") and "Kendall" not in labelled
    assert timelines.describe_timeline(r) == f"{r.attribution.summary()} {timelines.describe_trend(r.load.intervals)}"
    assert timelines.describe_spikes({"A": r, "B": syn.experiment(syn.load())}) == [f"A: {r.attribution.summary()}"]


def test_a_loads_spectrum_sentence_uses_the_loads_own_percentiles():
    """The sentence about a load reads the same p50/p99/p99.9/max as every table (the generator's exact
    percentiles), not the nearest row of the spectrum drawn from them."""
    from synthetic import load

    lr = load(p99=2.0, requests=20_000)
    lr.summary["latency_us"]["p99"] = 2_104.0  # between the spectrum's rows
    text = spectra.describe_spectrum("GET", lr, sla_ms=10)
    assert text.startswith("**GET**: p50 0.50 ms, p99 2.10 ms, p99.9 4.00 ms, max 6.00 ms (20,000 requests recorded)")
    assert spectra.answer_fixed_rate({"GET": lr}, 2.1).startswith("1 of 1 runs had p99 above the 2.10 ms SLA")


def test_load_table_gives_rates_percentiles_errors_and_validity():
    runs = {
        "PUT, 1 connection": experiment(load(2.0, rate=500, achieved=499.5)),
        "PUT, 4 connections": experiment(load(4.0, status={"200": 90, "503": 10}), "suspect", ("rate short",)),
    }
    t = spectra.load_table(runs)
    assert list(t.index) == ["PUT, 1 connection", "PUT, 4 connections"] and t.index.name == "run"
    assert list(t.columns) == [
        "offered, req/s",
        "achieved, req/s",
        "p50, ms",
        "p99, ms",
        "p99.9, ms",
        "max, ms",
        "errors",
        "validity",
    ]
    first = t.loc["PUT, 1 connection"]
    assert (first["offered, req/s"], first["achieved, req/s"]) == (500, 499.5)
    assert (first["p50, ms"], first["p99, ms"], first["p99.9, ms"], first["max, ms"]) == (0.5, 2.0, 4.0, 6.0)
    assert t.loc["PUT, 4 connections", "errors"] == 10  # the 503s are server errors
    assert list(t["validity"]) == ["valid", "suspect: rate short"]


@pytest.fixture(scope="module")
def outputs(shared_dir):
    d = shared_dir / "fixtures" / "wrk2"
    return {
        "put c1": parse_wrk_output((d / "put-t1-c1-R2000-L.txt").read_text()),
        "stall": parse_wrk_output((d / "stall-t1-c1-R2000-L-U.txt").read_text()),
    }


def test_percentile_spectrum_axis(outputs):
    fig = spectra.percentile_spectrum(outputs, sla_ms=10)
    assert [t.name for t in fig.data] == ["put c1", "stall"]
    xa = fig.layout.xaxis
    assert xa.type == "log" and "99.9%" in xa.ticktext and "90%" in xa.ticktext
    assert "latency, ms" in fig.layout.yaxis.title.text
    stall = fig.data[1]
    assert all(math.isfinite(x) for x in stall.x)  # the 100% row is drawn, not lost as inf
    assert max(stall.y) == pytest.approx(1002.495)
    assert any("p99.9" in h for h in stall.hovertext)
    u = spectra.percentile_spectrum(outputs, uncorrected=True)
    assert "uncorrected" in u.layout.title.text and len(u.data) == 1  # put has no -U block
    with pytest.raises(ValueError, match="runs must be a non-empty dict"):
        spectra.percentile_spectrum({})


def test_percentile_spectrum_takes_experiment_results():
    fig = spectra.percentile_spectrum({"PUT": experiment(load(2.0)), "GET": load(1.0)})
    assert [t.name for t in fig.data] == ["PUT", "GET"]
    assert max(fig.data[0].y) == pytest.approx(6.0) and max(fig.data[1].y) == pytest.approx(3.0)


def test_latency_timelines_overlay_runs():
    iv = pd.DataFrame({"start_s": [0, 1], "end_s": [1, 2], "p50_ms": [1.0, 1.1], "p99_ms": [2.0, 5.0]})
    fig = timelines.latency_timelines({"A": iv, "B": iv})
    assert [t.name for t in fig.data] == ["A: p99", "A: p50", "B: p99", "B: p50"]
    assert fig.layout.xaxis.title.text.startswith("time since") and "ms" in fig.layout.yaxis.title.text


def test_timeline_has_latency_events_and_spikes():
    n = 50
    iv = pd.DataFrame(
        {
            "tag": "corrected",
            "start_s": np.arange(n) * 0.1,
            "end_s": (np.arange(n) + 1) * 0.1,
            "count": 100,
            "p50_ms": 0.5,
            "p99_ms": [1.0] * 20 + [20.0] + [1.0] * 29,
            "max_ms": 2.0,
        }
    )
    ev = events_frame(
        [
            {"event": "compaction", "ts_us": int((1e6 + 1.95) * 1e6), "dur_us": 100_000},
            {"event": "gc", "ts_us": int((1e6 + 3.0) * 1e6), "dur_us": 300},
        ],
        t0=1e6,
    )
    a = attribute(iv, ev)
    fig = timelines.timeline_figure(iv, ev, a.spikes)
    names = [t.name for t in fig.data]
    assert names[:3] == ["max", "p99", "p50"] and "spike" in names
    assert "compaction (1)" in names and "gc (1)" in names
    spike = next(t for t in fig.data if t.name == "spike")
    assert list(spike.text) == ["compaction"]
    assert fig.layout.xaxis.rangeslider.visible and fig.layout.yaxis.type == "log"
    assert "seconds" in fig.layout.xaxis.title.text and "ms" in fig.layout.yaxis.title.text
    with pytest.raises(ValueError, match="no latency intervals"):
        timelines.timeline_figure(iv.iloc[:0])


# --- the stories a notebook shows ------------------------------------------------------------------------


def _runs():
    rng = np.random.default_rng(5)
    return {
        "PUT, 1 connection": experiment(
            load(1.0, p99s=list(rng.lognormal(0, 0.1, 30))), prefill={"keys": 5000, "value_size": 100}
        ),
        "PUT, 4 connections": experiment(
            load(4.0, achieved=480, p99s=list(rng.lognormal(np.log(4), 0.1, 30))), "suspect", ("rate 96% of offered",)
        ),
    }


def test_fixed_rate_runs_in_one_section():
    runs = _runs()
    s = latency.fixed_rate(runs, 0.003, "PUT: latency by percentile", consoles=True)
    table, con1, con2, prefill, fig, text = s.parts
    assert table.equals(spectra.load_table(runs)) and s.table is table
    assert "<details class='perflab-console'><summary><b>PUT, 1 connection</b>" in con1["text/html"]
    assert prefill == spectra.describe_prefill(runs)
    assert fig.layout.title.text == "PUT: latency by percentile" and s.figure is fig
    assert fig.layout.annotations[0].text == "SLA 3 ms"  # the SLA (s) drawn in ms
    assert text == spectra.describe_spectra(runs, 3.0)
    quiet = latency.fixed_rate(runs, compare=())
    assert len(quiet.parts) == 4 and "per interval" not in quiet.text  # no consoles, no comparison


def test_a_run_short_of_its_rate_is_said_with_the_threshold_the_code_used():
    """'fell short of the offered rate (below 99%)' was text beside a 0.99 in the code: both are the validity
    record's min_achieved now, and a run is short only below the threshold the sentence names."""
    from perflab.config.validity import ValidityThresholds

    runs = {"GET": load(1.0, rate=500, achieved=480)}  # 96% of the offered rate
    assert spectra.MIN_ACHIEVED == ValidityThresholds().min_achieved
    assert spectra.answer_fixed_rate(runs, 2.0).endswith(
        f"; GET fell short of the offered rate (below {100 * ValidityThresholds().min_achieved:g}%)."
    )
    assert spectra.answer_fixed_rate(runs, 2.0, min_achieved=0.97).endswith("(below 97%).")
    assert "fell short" not in spectra.answer_fixed_rate(runs, 2.0, min_achieved=0.95)


def test_timeline_findings_and_answer():
    runs = _runs()
    label, r = next(iter(runs.items()))
    fig, text = latency.timeline(label, r, ("flush",)).parts
    assert fig.layout.title.text == f"{label}: latency per 100 ms and server events"
    # the interval is the run's own (its hdr_interval), read from its intervals: not '100 ms' whatever it was
    lr = load(1.0, p99s=[1.0] * 8)
    lr.hdr.intervals = syn.intervals([1.0] * 8, step=0.25)
    assert (
        latency.timeline("PUT", experiment(lr)).parts[0].layout.title.text
        == "PUT: latency per 250 ms and server events"
    )
    assert timelines.interval_width(syn.intervals([1.0] * 8, step=2.0)) == "2 s"
    assert timelines.interval_width(pd.DataFrame()) == "interval"
    assert text == timelines.describe_timeline(r, ("flush",))
    put, get = dict(list(runs.items())[:1]), dict(list(runs.items())[1:])
    lines = latency.findings(put, get, sla=0.003)
    assert lines[:2] == spectra.describe_runs(runs, 3.0) and lines[2:4] == ["", ""]  # one run each: nothing compared
    assert latency.findings(runs, sla=0.003)[2].startswith("p99 per interval (sequential runs)")
    f = latency.answer(runs, 0.003, "p99, 4 connections", r)
    assert f.answer == spectra.answer_fixed_rate(runs, 3.0) and f.validity == "suspect"
    assert f.key_number == {"label": "p99, 4 connections", "value": 1.0, "unit": "ms"}
    assert f.preview.layout.title.text == "Latency by percentile, every run"
