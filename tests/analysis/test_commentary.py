"""The commentary generator: sentences must follow the numbers they are given."""

import math

import numpy as np
import pandas as pd
import pytest
import synthetic as syn

from perflab.analysis import commentary as c


def spectrum(points):
    """A wrk2-style spectrum from (percentile 0..1, latency_ms) points, 10,000 requests."""
    rows = [(ms, p, max(1, int(p * 10000)), (1 / (1 - p)) if p < 1 else math.inf) for p, ms in points]
    return pd.DataFrame(rows, columns=["latency_ms", "percentile", "total_count", "inverse"])


FLAT_THEN_CLIFF = spectrum([(0.0, 0.05), (0.5, 0.40), (0.75, 0.50), (0.9, 0.60), (0.99, 9.0),
                            (0.999, 12.0), (0.9999, 13.0), (1.0, 14.0)])


def test_value_at_reads_the_spectrum_and_rejects_empty():
    assert c.value_at(FLAT_THEN_CLIFF, 50) == 0.40
    assert c.value_at(FLAT_THEN_CLIFF, 99) == 9.0
    assert c.value_at(FLAT_THEN_CLIFF, 100) == 14.0
    with pytest.raises(ValueError, match="empty"):
        c.value_at(spectrum([]), 50)


def test_describe_spectrum_names_the_cliff():
    text = c.describe_spectrum("PUT, 1 connection", FLAT_THEN_CLIFF, sla_ms=10)
    assert text.startswith("**PUT, 1 connection**: p50 0.40 ms, p99 9.00 ms")
    assert "from p90 (0.60 ms) to p99 (9.00 ms), 15x" in text
    assert "within the 10.0 ms SLA" in text
    above = c.describe_spectrum("x", FLAT_THEN_CLIFF, sla_ms=5)
    assert "above the 5.00 ms SLA" in above


def test_describe_spectrum_ignores_levels_the_sample_cannot_resolve():
    small = spectrum([(0.0, 1.0), (0.5, 1.0), (0.9, 1.1), (0.99, 1.2), (0.999, 50.0), (1.0, 60.0)])
    small["total_count"] = (small["percentile"] * 500).clip(lower=1).astype(int)   # 500 requests
    text = c.describe_spectrum("tiny", small)
    assert "p99.9" in text and "50.0 ms" in text                 # still reported as a level...
    assert "to p99.9" not in text                                # ...but not called the steepest step


def intervals(p99s):
    return pd.DataFrame({"tag": "corrected", "start_s": range(len(p99s)),
                         "end_s": [i + 1 for i in range(len(p99s))], "p99_ms": p99s})


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
    text = c.describe_event_effect(intervals(p99), stats_with_flush_at(flush_at, 40, step=0.1))
    assert text.startswith("p99 is higher in the ") and "during which a flush ran" in text
    assert "Mann-Whitney p" in text and "n = " in text


def test_event_effect_says_no_difference_when_the_data_cannot_tell():
    # Two flushed intervals out of ten: a spike in one of them is not evidence (n = 2).
    p99 = [1.0] * 10
    p99[3] = 20.0
    text = c.describe_event_effect(intervals(p99), stats_with_flush_at({3, 7}, 10))
    assert text.startswith("No difference in p99 detectable between the 2 intervals with a flush")
    assert "n = 8 vs 2" in text


def test_compare_latency_names_the_test_and_n():
    rng = np.random.default_rng(3)
    fast = intervals(list(rng.lognormal(0, 0.2, 30)))
    slow = intervals(list(rng.lognormal(np.log(3), 0.2, 30)))
    same = intervals(list(rng.lognormal(0, 0.2, 30)))
    text = c.compare_latency({"sync": slow, "async": fast, "virtual": same})
    assert text.startswith("p99 per interval (sequential runs): async median")
    assert "sync 3." in text and "higher (n = 30 vs 30, Mann-Whitney p < 0.001" in text
    assert "virtual" in text and "no difference detectable (n = 30 vs 30" in text


def test_event_attribution_with_coarse_sampling_is_conservative():
    # sampled once a second at x.5, a flush done at 3.5 may belong to [2,3] or [3,4]: both are marked
    st = pd.DataFrame({"t_s": [t + 0.5 for t in range(6)], "storage.flushes": [0, 0, 0, 1, 1, 1]})
    flags = c.intervals_with_events(intervals([1.0] * 5), st, "storage.flushes")
    assert list(flags) == [False, False, True, True, False]


def test_event_effect_uses_the_active_gauge():
    st = pd.DataFrame({"t_s": [0, 1, 2, 3, 4, 5], "storage.flushes": [0] * 6,
                       "storage.flush_active": [0, 0, 1, 0, 0, 0]})
    flags = c.intervals_with_events(intervals([1.0] * 5), st, "storage.flushes", "storage.flush_active")
    assert list(flags) == [False, True, True, False, False]


def test_event_effect_says_when_no_flush_ran():
    text = c.describe_event_effect(intervals([1.0] * 5), stats_with_flush_at(set(), 5))
    assert "No flush ran during the 5 measured intervals" in text


def test_trend_detects_a_growing_queue_and_a_flat_run():
    grows = c.describe_trend(intervals([1, 1, 2, 4, 8, 16, 32, 64, 90, 120]))
    assert "grows during the run" in grows and "Kendall p" in grows and "n = 10" in grows
    assert "shows no trend" in c.describe_trend(intervals([1, 1.1, 0.9, 1, 1, 1.05, 0.95, 1.1]))
    assert c.describe_trend(intervals([1, 2, 3])) == ""  # too few to say anything


def test_categories_normalise_and_keep_focus():
    text = c.describe_categories({"network I/O": 41, "HTTP parsing": 18, "storage": 9, "GC": 6,
                                  "JIT": 4, "locks": 2, "other": 20}, "cpu", top=3, focus=("locks",))
    assert text == "Of the CPU samples, 41% network I/O, 20% other, 18% HTTP parsing, 2% locks."


def _bp(rate, interval, judged=(), outcome="resolved"):
    from perflab import BreakpointCriteria, BreakpointParams
    from perflab.breakpoint import BreakpointResult, Outcome, Probe
    from perflab.measure.judgement import Judgement
    probes = [Probe(i, r, Judgement(ok, [why], {}, {"verdict": "valid", "reasons": []}), "bisect")
              for i, (r, ok, why) in enumerate(judged)]
    rates = [r for r, ok, _ in judged if ok is not None]
    edges = (max((r for r, ok, _ in judged if ok), default=None), min((r for r, ok, _ in judged if ok is False), default=None))
    return BreakpointResult(rate, interval, Outcome(outcome), probes, BreakpointParams(), BreakpointCriteria(),
                            "converged", edges=edges if rates else (None, None))


def test_breakpoint_sentence_gives_the_interval_and_the_first_failing_probe():
    r = _bp(2000, (1920, 2184), [(1000, True, "ok"), (2000, True, "ok"), (4000, False, "p99 40 ms > 10 ms"),
                                 (2100, False, "achieved 91% < 99%"), (3000, None, "inconclusive")])
    text = c.describe_breakpoint("GET, 64 connections", r)
    assert text == ("**GET, 64 connections** keeps up to 2,000 req/s (interval [1,920, 2,184] req/s, resolved; "
                    "probes valid); the lowest failing probe, 2,100 req/s, failed because achieved 91% < 99%; "
                    "1 probe(s) were invalid (the generator was the limit) and not counted (5 probes).")
    # the machine's own speed: said when it changed beyond the threshold, not otherwise
    r.host_spread, r.host_limit = 2.31, 1.25
    assert c.describe_breakpoint("GET", r).endswith(
        "(5 probes). The machine's speed changed during the search: a fixed loop before each probe took up to "
        "2.31x its fastest time (warn above 1.25x), so a repeat moves with it.")
    r.host_spread = 1.1
    assert c.describe_breakpoint("GET", r).endswith("(5 probes).")
    none = c.describe_breakpoint("PUT", _bp(None, (None, 10), [(10, False, "p99")], "none-passed"))
    assert none.startswith("**PUT**: no probed rate met the criteria (none-passed)")


def test_breakpoints_differ_only_when_their_intervals_do_not_overlap():
    text = c.compare_breakpoints({"sync": _bp(30000, (28800, 31200)), "async": _bp(45000, (43200, 46800)),
                                  "virtual": _bp(44000, (42000, 46000))})
    assert text.startswith("Breakpoint (sequential intervals): async 45,000 req/s ([43,200, 46,800])")
    assert "virtual 44,000 req/s ([42,000, 46,000]), no difference detectable (intervals" in text
    assert "sync 30,000 req/s ([28,800, 31,200]), lower (intervals" in text and "do not overlap" in text


def test_diff_lists_growth_and_shrinkage():
    diff = pd.DataFrame({"category": ["executor queue", "network I/O", "storage"], "delta": [0.12, -0.08, 0.001]})
    text = c.describe_diff(diff, "sync", "async")
    assert text == "From sync to async, grew: executor queue (+12 points); shrank: network I/O (-8 points)."


# --- what the notebooks compose from these (synthetic results: tests/analysis/synthetic.py) ------------

def test_labels_and_lists():
    assert c.load_label("PUT", 1) == "PUT, 1 connection" and c.load_label("GET", 64, "split") == "GET, 64 connections [split]"
    assert c.executor_label(1, 16) == "1 worker, queue 16" and c.memtable_label("4m", 2) == "memtable 4m, 2 flush threads"
    assert c.bullets(["a", "", "b"]) == "- a\n- b" and c.bullets([]) == ""


def test_spectra_runs_and_latency_comparisons_from_experiment_results():
    rng = np.random.default_rng(5)
    fast = syn.experiment(syn.load(1.0, p99s=list(rng.lognormal(0, 0.1, 30))))
    slow = syn.experiment(syn.load(4.0, achieved=480, status={"200": 4990, "500": 10}, p99s=list(rng.lognormal(np.log(4), 0.1, 30))),
                          "suspect", ("rate 96% of offered",))
    runs = {"PUT, 1 connection": fast, "PUT, 4 connections": slow}
    text = c.describe_spectra(runs, sla_ms=3, compare=("p99_ms", "p999_ms"))
    paragraphs = text.split("\n\n")
    assert paragraphs[0].startswith("**PUT, 1 connection**: p50 0.25 ms, p99 1.00 ms") and "within the 3.00 ms SLA" in paragraphs[0]
    assert "above the 3.00 ms SLA" in paragraphs[1]
    assert paragraphs[2].startswith("p99 per interval (sequential runs): PUT, 1 connection median") and "higher (n = 30 vs 30" in paragraphs[2]
    assert paragraphs[3].startswith("p99.9 per interval (sequential runs):") and len(paragraphs) == 4
    assert c.compare_latencies({"only": fast}) == ""
    lines = c.describe_runs(runs, sla_ms=3)
    assert lines[1].endswith("Achieved 480 req/s of 500 req/s, 10 errors; validity: suspect: rate 96% of offered.")
    assert lines[0].startswith("**PUT, 1 connection**: p50 0.25 ms") and "validity: valid." in lines[0]


def test_prefill_sentence_names_what_was_written():
    runs = {"GET, 1 connection": syn.experiment(syn.load(), prefill={"keys": 5000, "value_size": 100, "dir": "/tmp/x",
                                                                      "json": "{}", "sstables": 2, "wall_s": 0.28}),
            "GET, 4 connections": syn.experiment(syn.load())}
    assert c.describe_prefill(runs) == ("The database at the start (prefill): keys 5,000, value size 100, sstables 2, "
                                        "wall s 0.28.")
    assert c.describe_prefill({"PUT": syn.experiment(syn.load())}) == ""


def test_timeline_says_event_effects_spikes_and_trend():
    p99s = [1.0] * 20
    p99s[5] = p99s[12] = 9.0
    ev = syn.events(("flush", 0.5, 60), ("flush", 1.2, 60), ("compaction", 1.8, 20))
    r = syn.experiment(syn.load(1.0, p99s=p99s), ev=ev)
    text = c.describe_timeline(r, kinds=("flush",))
    assert text.startswith("p99 is higher in the ") or text.startswith("No difference in p99 detectable")
    assert "2 of 20 intervals are spikes" in text and "of 2 spikes, 2 overlap a flush" in text
    assert text.endswith(c.describe_trend(r.load.intervals))
    labelled = c.describe_timeline(r, ("flush",), trend=False, label="memtable 1m, 1 flush thread")
    assert labelled.startswith("**memtable 1m, 1 flush thread**: ") and "Kendall" not in labelled
    assert c.describe_timeline(r) == f"{r.attribution.summary()} {c.describe_trend(r.load.intervals)}"
    assert c.describe_spikes({"A": r, "B": syn.experiment(syn.load())}) == [f"A: {r.attribution.summary()}"]
    effects = c.describe_event_effects({"A": r}, "compaction")
    assert len(effects) == 1 and effects[0].startswith("A: ") and "compaction" in effects[0]


SAMPLES = ("[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 50\n"
           "[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/http/HttpSession.processRead;"
           "one/nio/http/HttpSession.parseRequest 20\n"
           "[selector-1 tid=1];perflab/server/ApiHandler.handle;perflab/storage/lsm/MemTable.get 20\n"
           "[worker-1 tid=2];java/util/concurrent/ThreadPoolExecutor.getTask 10\n")


def test_a_profile_paragraph_and_the_cpu_split(tmp_path):
    prof = syn.profile(tmp_path, "profile-cpu", SAMPLES)
    text = c.describe_profile("async", prof, top=1, focus=("storage: memtable",))
    assert text.startswith("**async** (cpu, 100 samples): Of the CPU samples, 50% network read, "
                           "20% storage: memtable.")
    assert "The hottest frames by self time: `one/nio/net/NativeSocket.read` 50%" in text
    runs = {"async": syn.experiment(syn.load(), profiles={"cpu": prof}), "sync": syn.experiment(syn.load())}
    assert c.describe_cpu_split(runs) == ["async: of the CPU samples, 50% network I/O, 20% HTTP parsing, 20% storage, "
                                          "10% executor queue."]


def _search(rate, iv, outcome="resolved"):
    return syn.search(rate, iv, [(rate or 100, rate is not None, 2.0)], outcome)


def test_breakpoint_lists_unresolved_searches_and_validity_pairs():
    ok, wide = _search(2000, (1950, 2050)), _search(1000, (600, 1400), "unresolved")
    assert c.describe_breakpoints({"a": ok, "b": wide}) == [c.describe_breakpoint("a", ok), c.describe_breakpoint("b", wide)]
    assert c.describe_unresolved({"a": ok, "b": wide}) == ("Not resolved to within ±10%: b (see each one's outcome and "
                                                           "interval).")
    assert c.describe_unresolved({"a": ok}) == ""
    runs = {"a": syn.experiment(syn.load(), "suspect", ("trend",))}
    assert c.describe_search_validity({"a": ok, "b": wide}, runs) == [
        "a: validity of the breakpoint's edge probes: valid; of the profile run: suspect: trend."]


ROWS = [{"workload": "status", "connections": 64, "rate": 10000.0, "interval": [9000.0, 11000.0], "placement": "shared",
         "verdict": "resolved"},
        {"workload": "GET", "connections": 1, "rate": 2000.0, "interval": [1800.0, 2200.0], "placement": "shared",
         "verdict": "resolved"},
        {"workload": "GET", "connections": 64, "rate": 5000.0, "interval": [4500.0, 5500.0], "placement": "shared",
         "verdict": "resolved"},
        {"workload": "PUT", "connections": 64, "rate": None, "interval": [None, 100.0], "placement": "shared",
         "verdict": "none-passed"}]


def test_breakpoints_against_the_ceiling_and_across_connections():
    assert c.describe_ceiling_shares(ROWS) == [
        "GET, 1 connection reaches 20% of the request-handling ceiling (10,000 req/s) (from the intervals: 16%-24%).",
        "GET, 64 connections reaches 50% of the request-handling ceiling (10,000 req/s) (from the intervals: 41%-61%)."]
    (line,) = c.compare_by_connections(ROWS)
    assert line.startswith("GET breakpoint (sequential intervals): 64 connections 5,000 req/s ([4,500, 5,500]); 1 connection 2,000 req/s")
    assert "lower" in line
    assert c.placement_table(ROWS) == ""                                      # one placement: nothing side by side


def test_placement_table_sets_the_placements_side_by_side():
    split = [dict(r, placement="split", rate=r["rate"] and r["rate"] * 1.01) for r in ROWS[1:3]]
    rows = ROWS[1:3] + split
    table = c.placement_table(rows).splitlines()
    assert table[0].startswith("**CPU placement.**") and table[2] == "| search | shared | split | comparison |"
    assert table[4].startswith("| GET, 1 connection | 2,000 req/s (interval [1,800, 2,200]), resolved | "
                               "2,020 req/s (interval [1,800, 2,200]), resolved | "
                               "Breakpoint (sequential intervals): split 2,020 req/s")
    assert "no difference detectable" in table[4] and len(table) == 6
    shares = c.describe_ceiling_shares(ROWS[:1] + rows)
    assert shares[0].startswith("GET, 1 connection [shared] reaches 20%") and len(shares) == 2   # no split ceiling


GRID = {(1, 16): _search(1000, (950, 1050)), (4, 16): _search(3000, (2900, 3100)),
        (1, 1024): _search(None, (None, 100), "none-passed"), (4, 1024): _search(2900, (2800, 3200))}


def test_executor_grid_best_worst_comparisons_and_overload():
    text = c.describe_executor_grid(GRID)
    assert text.startswith("The best configuration is **4 workers, queue 16**: 3,000 req/s (interval [2,900, 3,100], "
                           "resolved); the worst is 1 worker, queue 16: 1,000 req/s")
    assert "Breakpoint with queue 16 (sequential intervals): 4 workers 3,000 req/s" in text and "1 worker 1,000 req/s ([950, 1,050]), lower" in text
    assert text.endswith("No rate passed for: 1 worker, queue 1024.")
    none = {(1, 16): GRID[(1, 1024)]}
    assert c.describe_executor_grid(none).startswith("No configuration passed even the lowest probe")
    table = pd.DataFrame({"workers": [1, 4], "queue": [16, 16], "rejected share": [0.41, 0.0], "p99, ms": [180.0, 2.1]}
                         ).set_index(["workers", "queue"])
    assert c.describe_overload(table, 4500) == ("Under overload (4,500 req/s), the share rejected with 503 ranges from 0% "
                                                "(4 workers, queue 16) to 41% (1 worker, queue 16); p99 from 2.10 ms to "
                                                "180.0 ms.")


RUNS = pd.DataFrame({"run_id": ["r1", "r2", "r3"], "kind": ["experiment", "breakpoint", "experiment"],
                     "created_at": ["2026-11-20T10:00:00", "2026-11-22T10:00:00", "2026-11-21T10:00:00"],
                     "git_commit": ["c1", "c2", None], "validity": ["valid", "suspect", None]})


def test_the_records_of_every_run_in_sentences():
    assert c.describe_recorded_runs(RUNS) == ("3 runs are counted here, made at 2 git commits; by validity: valid 1, "
                                              "suspect 1, not assessed 1; the newest is `r2`.")
    assert c.describe_recorded_runs(pd.DataFrame()).startswith("No run is recorded yet")
    rows = [{"workload": "get-random", "connections": 4, "mode": "sync / lsm", "rate": 1000.0, "interval": [900.0, 1100.0]},
            {"workload": "get-random", "connections": 4, "mode": "async / lsm", "rate": 3000.0,
             "interval": [2800.0, 3200.0]},
            {"workload": "put", "connections": 4, "mode": "sync / lsm", "rate": 500.0, "interval": [450.0, 550.0]}]
    assert c.compare_configurations(rows) == ("- get-random, 4 conn: async / lsm's breakpoint is higher than sync / lsm's "
                                              "(sequential intervals): " + c.compare_intervals([900.0, 1100.0], [2800.0, 3200.0]).evidence + ".")
    assert c.compare_configurations(rows[2:]) == "Each workload has one configuration recorded: nothing to compare."
    assert c.compare_configurations([]).startswith("No breakpoint search is recorded yet")
    assert c.answer_recorded(RUNS, rows) == ("3 runs are counted (1 valid, 1 suspect, 1 not assessed) at 2 git commits; "
                                             "the highest breakpoint is 3,000 req/s (get-random, 4 conn, async / lsm).")
    loads = pd.DataFrame({"p99_ms": [1.0, 12.1, 2.0], "target_rate": [500, 3000, 500], "script": ["put.lua"] * 3,
                          "configuration": ["sync / lsm"] * 3, "validity": ["valid"] * 3, "run_id": ["a", "b", "c"]})
    assert c.describe_fixed_rate_runs(loads) == ("3 fixed-rate runs; the highest p99 is 12.1 ms (put.lua at 3,000 req/s, "
                                                 "sync / lsm, validity valid, run `b`); the median p99 is 2.00 ms.")
    assert c.describe_fixed_rate_runs(pd.DataFrame()).startswith("No fixed-rate run is recorded yet")
    means = {"sync / lsm": pd.DataFrame({"category": ["network read", "GC"], "share": [0.8, 0.2], "profiles": [3, 3]})}
    assert c.describe_mean_categories(means) == "**sync / lsm** (3 profiles): Of the CPU samples, 80% network read, 20% GC."
    assert c.describe_mean_categories({}) == "No cpu profile is recorded yet (notebooks 1 and 3 record them)."


def test_a_loads_spectrum_sentence_uses_the_loads_own_percentiles():
    """The sentence about a load reads the same p50/p99/p99.9/max as every table (the generator's exact
    percentiles), not the nearest row of the spectrum drawn from them."""
    from synthetic import load

    lr = load(p99=2.0, requests=20_000)
    lr.summary["latency_us"]["p99"] = 2_104.0           # between the spectrum's rows
    text = c.describe_spectrum("GET", lr, sla_ms=10)
    assert text.startswith("**GET**: p50 0.50 ms, p99 2.10 ms, p99.9 4.00 ms, max 6.00 ms (20,000 requests recorded)")
    assert c.answer_fixed_rate({"GET": lr}, 2.1).startswith("1 of 1 runs had p99 above the 2.10 ms SLA")
