"""The cluster figures and sentences (perflab.analysis.cluster) on a cluster run
built from known numbers: what each says must follow from them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hdrh.histogram import HdrHistogram

import perflab as pl
from perflab import fmt
from perflab.analysis import cluster
from perflab.analysis.cluster import figures as cplots
from perflab.analysis.cluster import sentences as csay
from perflab.cluster_run import ClusterResult, _recovery
from perflab.lab import cluster as cnb
from perflab.measure.result import load_result_from_dir
from perflab.nodes.checker import Verdict, predict
from perflab.nodes.distribution import KeyDistribution
from perflab.nodes.sampling import node_stats_frame
from perflab.nodes.statuses import status_intervals, totals
from perflab.records import new_run
from perflab.timeline.events import events_frame

T0 = 1_800_000_000.0


def _load(d, p99_by_second, codes, errors_by_second, socket_errors):
    """A 10 s load: 10 intervals of 1 s, 100 requests each; latency values per second given. A second with
    errors got 504s for all but ``socket_errors / 3`` of them (refused connections), the rest 201s."""
    d.mkdir(parents=True, exist_ok=True)
    lines = [
        "#[Histogram log format version 1.3]",
        f"#[StartTime: {T0:.3f} (seconds since epoch), x]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    ]
    ivs = []
    for i, v in enumerate(p99_by_second):
        h = HdrHistogram(1, 3_600_000_000, 3)
        h.record_value(1000, 98)
        h.record_value(int(v * 1000), 2)  # the interval's p99 is v
        lines.append(f"{i:.3f},1.000,{v:.3f},{h.encode().decode()}")
        refused = socket_errors // 3 if errors_by_second[i] else 0
        c504 = errors_by_second[i] - refused
        ivs.append(
            {
                "start_s": float(i),
                "end_s": float(i + 1),
                "offered": 100,
                "completed": 100,
                "errors": errors_by_second[i],
                "status_codes": {"201": 100 - c504, **({"504": c504} if c504 else {})},
                "error_kinds": {"connect": refused, "read": 0, "write": 0, "timeout": 0, "status": c504},
            }
        )
    (d / "load-hdr.log").write_text("\n".join(lines) + "\n")
    n = sum(codes.values())
    summary = {
        "tool": "perflab-load",
        "version": "0.1.0",
        "url": "http://x",
        "script": None,
        "script_args": [],
        "threads": 3,
        "connections": 3,
        "duration_s": 10.0,
        "warmup_s": 0.0,
        "target_rate": 100.0,
        "achieved_rate": n / 10,
        "start_ms": int(T0 * 1000),
        "end_ms": int(T0 * 1000) + 10_000,
        "requests": n,
        "errors": {
            "connect": socket_errors,
            "read": 0,
            "write": 0,
            "timeout": 0,
            "status": sum(v for k, v in codes.items() if int(k) >= 400),
        },
        "status_codes": codes,
        "latency_us": {},
        "intervals": ivs,
        "spectrum": [[1000, 0.0, 1], [1000, 0.99, 990], [5000, 1.0, n]],
    }
    (d / "load-summary.json").write_text(json.dumps(summary))
    (d / "load-console.txt").write_text("")
    return load_result_from_dir(d)


def _stats():
    """Node 0 throughout; node 2 killed at 3 s and back (a new incarnation) at 6 s; node 0 answers 504s
    between 3 and 6 s."""
    s0 = [
        {
            "timestamp_ms": int((T0 + t) * 1000),
            "uptime_ms": 1000 * (t + 5),
            "requests": {"PUT": {"201": 100 * t - 20 * max(0, min(t, 6) - 3), "504": 20 * max(0, min(t, 6) - 3)}},
            "cluster": {
                "coordinated": 100 * t,
                "gateway_timeouts": 20 * max(0, min(t, 6) - 3),
                "internal_served": 50 * t,
            },
        }
        for t in range(0, 11)
    ]
    s2 = [
        {
            "timestamp_ms": int((T0 + t) * 1000),
            "uptime_ms": 1000 * (t + 5) if t <= 3 else 1000 * (t - 6) + 100,
            "requests": {"PUT": {"201": 10 * t if t <= 3 else 10 * (t - 6)}},
            "cluster": {"coordinated": 0, "gateway_timeouts": 0, "internal_served": 10 * t if t <= 3 else 10 * (t - 6)},
        }
        for t in [0, 1, 2, 3, 6, 7, 8, 9, 10]
    ]
    return pd.concat(
        [node_stats_frame(s0, T0).assign(node=0), node_stats_frame(s2, T0).assign(node=2)], ignore_index=True
    )


@pytest.fixture
def res(tmp_path):
    p99 = [2, 2, 2, 40, 50, 45, 3, 2, 2, 2]
    errs = [0, 0, 0, 30, 30, 30, 0, 0, 0, 0]
    load = _load(tmp_path / "load", p99, {"201": 940, "504": 60}, errs, 30)
    stats = _stats()
    statuses, note = status_intervals(load, 1.0)
    applied = [
        {
            "fault": "at=3s node=2 kill for=3s",
            "node": 2,
            "action": "kill",
            "at_s": 3.0,
            "ts_us": int((T0 + 3) * 1e6),
            "dur_us": 1000,
            "late_s": 0.0,
            "error": None,
        },
        {
            "fault": "at=3s node=2 kill for=3s (then restart)",
            "node": 2,
            "action": "restart",
            "at_s": 6.0,
            "ts_us": int((T0 + 5) * 1e6),
            "dur_us": 1_000_000,
            "late_s": 0.0,
            "error": None,
        },
    ]
    rows = [
        {"event": "kill", "ts_us": int((T0 + 3) * 1e6), "dur_us": 1000, "node": 2},
        {"event": "restart", "ts_us": int((T0 + 5) * 1e6), "dur_us": 1_000_000, "node": 2},
        {"event": "node_down", "ts_us": int((T0 + 3) * 1e6), "dur_us": 3_000_000, "node": 2},
        {
            "event": "peer_up",
            "ts_us": int((T0 + 6.2) * 1e6),
            "dur_us": 500,
            "node": 0,
            "peer": "http://127.0.0.1:3",
            "down_us": 3_200_000,
            "failures": 12,
        },
    ]
    ev = events_frame(rows, T0)
    ev = ev.assign(node=ev["details"].map(lambda d: d.get("node")))
    cpu = pd.DataFrame(
        {
            "node": [0, 0, 2, 2, 2, 2],
            "pid": [10, 10, 20, 20, 21, 21],
            "t_s": [1, 2, 1, 2, 7, 8],
            "cpu_s": [1, 1.5, 1, 1.2, 0.1, 0.3],
            "cores": [np.nan, 0.5, np.nan, 0.2, np.nan, 0.2],
            "rss": [2e8] * 6,
        }
    )
    verdict = Verdict(
        predict(2, 2, 3),
        {
            "reads": 50,
            "acknowledged": 40,
            "unacknowledged": 5,
            "unavailable": 3,
            "ok": 47,
            "stale": 0,
            "missed": 0,
            "resurrected": 0,
            "unknown": 0,
            "operations": 95,
            "writes": 40,
            "deletes": 5,
            "statuses": {},
        },
    )
    ops = pd.DataFrame(
        {
            "t_send": [T0 + 1, T0 + 4, T0 + 4.5, T0 + 11],
            "op": ["PUT", "GET", "GET", "GET"],
            "outcome": ["acked", "ok", "unavailable", "ok"],
        }
    )
    dist = KeyDistribution(["a", "b", "c"], 300, "key", 3, [95, 100, 105], [300, 300, 300], [300, 300, 260])
    run = new_run("cluster", "synthetic", {}, tmp_path / "data", environment={})
    got = ClusterResult(
        run,
        load,
        stats,
        {"nodes": 3, "ack": 2, "from": 3},
        None,
        None,
        {},
        ev,
        None,
        None,
        entries=[{"node": 0, "url": "u", "offered_rate": 100.0, "achieved_rate": 94.0, "achieved_ratio": 0.94}],
        cpu=cpu,
        faults=applied,
        consistency=verdict,
        checker_ops=ops,
        distribution=dist,
        status_bin=1.0,
    )
    # what a cluster run tells of its answers, by status per second and in total, and its recovery, is derived
    assert got.statuses.equals(statuses) and got.statuses_note == note and got.answers == totals(load)
    assert got.recovery == _recovery(applied, load.intervals, statuses)
    return got


def test_what_the_clients_got_per_second_as_the_generator_counted_it(res):
    st = res.statuses
    assert list(st["504"]) == [0, 0, 0, 20, 20, 20, 0, 0, 0, 0]
    assert list(st["no_answer"]) == [0, 0, 0, 10, 10, 10, 0, 0, 0, 0]  # 30 errors, 20 of them 504s
    assert st["answered"].iloc[0] == 100 and st["answered"].iloc[4] == 80


def test_recovery_is_the_end_of_the_last_bad_second_after_the_disruption(res):
    assert len(res.recovery) == 1, "a restart ends a disruption; it is not one"
    r = res.recovery[0]
    assert r["at_s"] == 3.0 and r["recovered_at_s"] == 6.0 and r["recovery_s"] == 3.0
    assert r["p99_limit_ms"] == pytest.approx(6.0, abs=0.01), "3x the median p99 before the fault (2 ms)"


def test_the_status_timeline_says_when_answers_were_not_successes(res):
    fig = cplots.status_timeline(res)
    names = [t.name for t in fig.data]
    assert {"p99", "p50", "answered (2xx, 404)", "504 (no quorum)", "no answer (timeouts, refused, reset)"} <= set(
        names
    )
    assert "not every answer a success" in fig.layout.title.text and "60 504" in fig.layout.title.text
    assert any(a.text == "kill 2" for a in fig.layout.annotations)
    assert len(fig.layout.shapes) >= 2, "the down span shaded, the faults drawn"
    assert fig.layout.yaxis.title.text and fig.layout.yaxis2.title.text and fig.layout.xaxis2.title.text


def test_node_panels_break_a_nodes_line_where_it_was_down(res):
    fig = cplots.node_panels(res)
    coordinated = [t for t in fig.data if t.name == "node 2" and t.xaxis in ("x", None)]
    assert coordinated, [t.name for t in fig.data]
    y = np.array(coordinated[0].y, dtype=float)
    assert np.isnan(y).any(), "a gap between node 2's incarnations, not a line across its downtime"
    assert {t.name for t in fig.data} >= {"node 0", "node 2", "kill", "peer_up"}
    titles = [a.text for a in fig.layout.annotations]
    assert "client requests coordinated, /s" in titles and "CPU, cores" in titles


def test_key_distribution_and_consistency_figures(res):
    fig = cplots.key_distribution(res.distribution)
    assert [t.name.split(",")[0] for t in fig.data] == [
        "owner by the built-in routing (from = 1)",
        "replica by the built-in routing (from = 3)",
        "stored: the node's own count (GET /v0/entities)",
    ]
    assert "CV 0.041" in fig.data[0].name and "equal by construction" in fig.layout.title.text
    fig = cplots.consistency_timeline(res)
    assert {"read: ok", "read: unavailable", "write/delete: acked"} <= {t.name for t in fig.data}
    assert "consistent" in fig.layout.title.text


def test_sentences_follow_the_numbers(res):
    note = csay.answers_note(res)
    assert note.startswith("**Not every answer served the request**") and "60 504" in note and "30 refused" in note
    text = csay.describe_fault_run(res)
    assert "While node 2 was down (3.0-6.0 s)" in text and "3.0 s after it" in text
    assert "3.2 s after its first failed request to it (12 failed requests in between)" in text
    assert "no stale, missed or resurrected read, as predicted" in text
    d = csay.describe_distribution(res.distribution)
    assert "node 2 holds 40 fewer than the fullest" in d and "Warning: from = 3" in d
    assert "node 0 94 req/s of 100 req/s offered (94%)" in csay.describe_entries(res)
    assert csay.describe_node_profile(res, 0) == "No cpu profile of node 0: not recorded."
    ans = csay.answer_cluster({}, res)
    assert "91% of the requests got a successful answer" in ans and "found the run consistent" in ans


def test_notebook_helpers_build_and_check(tmp_path, monkeypatch):
    cfg = cnb.measured(None, nodes=3, ack=2, entry="all", mode="async").target
    assert cfg.node_config(0).mode == "async" and cfg.entries == (0, 1, 2)
    assert isinstance(cnb.single_node(cfg), pl.ServerConfig)
    mine = cnb.measured("kv {port} {cluster}", "/health", str(tmp_path), nodes=3).target
    one = cnb.single_node(mine)
    assert isinstance(one, pl.ClusterConfig) and one.nodes == 1 and one.foreign
    q = cnb.quorums(cfg, [[1, 3], [3, 3]])
    assert list(q) == ["1/3", "3/3"] and q["3/3"].replica_args() == ("ack=3", "from=3")
    assert list(cnb.quorums(cfg)) == ["1/3", "2/3", "3/3"], "every ack of from"
    with pytest.raises(ValueError, match=r"quorums\[1\]: ack: must not exceed from"):
        cnb.quorums(cfg, [[1, 3], [3, 2]])
    assert cnb.kill(cfg, 2, "1s", 2, "10s") == ["at=1s node=2 kill for=2s"]
    assert cnb.kill(cfg, 2, "1500ms", "0.5s", 10) == ["at=1.5s node=2 kill for=0.5s"]
    with pytest.raises(ValueError, match="node 5 is out of range"):
        cnb.kill(cfg, 5, 1, 1, 10)
    with pytest.raises(ValueError, match="fault_down: must be > 0ms, got 0"):
        cnb.kill(cfg, 2, 1, 0, 10)
    with pytest.raises(ValueError, match="needs at least 3 threads"):
        cnb.workload(cfg, "put.lua", connections=2, threads=1)
    assert cnb.workload(cfg, "put.lua", connections=3, threads=3).script.endswith("put.lua")
    how = cnb.search("ramp", "10ms", start_rate=100, max_rate=1000, ramp_duration=4)
    assert how.criteria.sla_p99 == 0.01 and how.sla_ms == 10 and how.params.warmup == 1
    with pytest.raises(ValueError, match="search: expected one of probes, ramp"):
        cnb.search("guess", "10ms")
    # a ramp over several entry nodes runs its whole length (no part can stop the others); to one, it stops
    load = cnb.workload(cfg, "put.lua", connections=3, threads=3, rate=100)
    assert cnb.ramp_load(load, how.params, how.criteria, cfg).stop_on_p99 is None
    assert cnb.ramp_load(load, how.params, how.criteria, cfg.replace(entry="0")).stop_on_p99 is not None
    # generator hosts split the load too ($PERFLAB_GENERATORS, as the notebook's runs read it)
    monkeypatch.setenv("PERFLAB_GENERATORS", "2")
    with pytest.raises(ValueError, match="split over 2 generator hosts and 3 entry nodes, .* at least 6 threads"):
        cnb.workload(cfg, "put.lua", connections=3, threads=3)
    assert cnb.ramp_load(load, how.params, how.criteria, cfg.replace(entry="0")).stop_on_p99 is None
    monkeypatch.delenv("PERFLAB_GENERATORS")
    # the nodes run on this machine once, or (on a scheduler's hosts) are started by each run on its server host
    monkeypatch.setenv("PERFLAB_SCHEDULER", "tcp://10.0.0.1:8786")
    assert cnb.start(cfg) is cfg
    cnb.stop(cfg)


def test_the_consistency_verdict_in_words():
    c = {
        "reads": 40,
        "acknowledged": 30,
        "unavailable": 2,
        "unacknowledged": 1,
        "ok": 38,
        "stale": 0,
        "missed": 0,
        "resurrected": 0,
        "unknown": 0,
    }
    ok = csay.describe_consistency(Verdict(predict(2, 2, 3), c))
    assert ok.startswith(
        "Consistency (2/3 writes, 2/3 reads): 40 reads judged against 30 acknowledged writes and "
        "deletes (2 reads unavailable, 1 writes not acknowledged): no stale, missed or resurrected "
        "read, as predicted ("
    )
    broken = csay.describe_consistency(Verdict(predict(2, 2, 3), {**c, "stale": 3, "missed": 1}))
    assert "**VIOLATION**: 3 stale reads, 1 missed acknowledged writes, where the invariant predicts none" in broken
    allowed = csay.describe_consistency(Verdict(predict(1, 1, 3), {**c, "stale": 3}))
    assert "3 stale reads, as the configuration allows" in allowed
    assert "their absence here is no proof" in csay.describe_consistency(Verdict(predict(1, 1, 3), c))
    assert "sentence" not in Verdict(predict(2, 2, 3), c).to_dict()  # the record holds numbers


def test_the_sections_notebook_07_shows(res):
    status, text, panels, checker = cluster.fault_run(res).parts
    assert status.layout.title.text.startswith("Latency and what the clients got") and text == csay.describe_fault_run(
        res
    )
    assert panels.layout.title.text.startswith("Each node on one timeline") and checker.layout.title.text
    keys = cluster.distribution(res)
    assert keys.figure.layout.title.text.startswith("Keys per node") and keys.text == csay.describe_distribution(
        res.distribution
    )
    assert cluster.node_profile(res, 0).parts == ["No cpu profile of node 0: not recorded."]
    capacity = cluster.Capacity(["Ramp estimates ..."], rows=[{"workload": "put", "rate": 100.0}])
    f = cluster.answer({"3 nodes, 2/3": res}, res, capacity)
    assert f.answer == csay.answer_cluster({"3 nodes, 2/3": res}, res) and f.breakpoints == capacity.rows
    assert f.key_number["label"] == "p99, 3 nodes, 2/3 at 100 req/s" and f.preview.layout.title.text
    # the sentence and the key number read the same p99 of the run: the summary's exact one, not the nearest
    # spectrum point above it (7.47 ms against 6.80 ms in a quick report's 600 requests)
    res.load.summary["latency_us"]["p99"] = 12_345
    two = cluster.answer({"1 node": res, "3 nodes, 2/3": res}, res, capacity)
    assert f"to {fmt.ms(two.key_number['value'])} (3 nodes, 2/3)" in two.answer, (two.answer, two.key_number)
