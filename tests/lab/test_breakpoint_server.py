"""The breakpoint search against a server of known capacity, with the default search.

``--mode async --workers 4 --debug-delay 2ms`` parks every request 2 ms on one of 4 workers, so the
server can never serve more than 4 / 2 ms = 2000 requests/s; what else a request costs is small
against the park, so its real capacity lies a little below that. The default search (one ramp, then
fixed-rate probes with repeated edges) must put its point within [0.85, 1.0] x 2000/s and its
interval around the capacity, in a bounded number of probes.
"""

import pytest

from perflab import BreakpointParams, LoadParams, ServerConfig, find_breakpoint, query

CAPACITY = 2000.0
SERVER = ServerConfig(backend="memory", mode="async", workers=4, debug_delay="2ms")


def test_the_search_finds_a_known_capacity_with_an_interval(server_build, loadgen_binary, data_root):
    params = BreakpointParams()
    res = find_breakpoint(SERVER, LoadParams(threads=1, connections=16, path="/v0/status"), params=params,
                          progress=False)
    t = res.table
    lo, hi = res.interval
    assert res.outcome == "resolved", t.to_string()
    assert 0.85 * CAPACITY <= res.rate <= CAPACITY, t.to_string()
    assert lo <= res.rate < hi and lo <= CAPACITY and hi >= 0.85 * CAPACITY
    assert res.halfwidth <= 0.10  # what the reports call a resolved, tight breakpoint
    # bounded: the ramp plus at most max_probes fixed-rate probes, and the edges were repeated
    assert len(t) <= params.max_probes and "edge" in set(t["phase"])
    assert (t["rate"] == res.edges[0]).sum() >= params.repeats and (t["rate"] == res.edges[1]).sum() >= params.repeats
    assert res.ramp is not None and res.ramp["rate"] is not None, res.ramp
    assert (res.run.dir / "ramp" / "load-summary.json").is_file()
    # every probe carries a validity record and a reason; an invalid one never counts as a failure
    assert t["validity"].notna().all() and (t["reason"].str.len() > 0).all()
    assert set(t.loc[t["passed"].isna(), "validity"]) <= {"invalid"}
    # recorded: probes, the result with interval and verdict, and the index
    assert (res.run.dir / "probes.csv").is_file() and len(list((res.run.dir / "probes").iterdir())) == len(t)
    meta = res.run.meta
    assert meta["results"]["interval"] == [lo, hi] and meta["results"]["verdict"] == "resolved"
    assert meta["validity"]["verdict"] in ("valid", "suspect")
    bp = query("SELECT breakpoint_rate, lo, hi, verdict, server_workers, server_debug_delay FROM breakpoints")
    assert bp.iloc[0].to_dict() == {"breakpoint_rate": res.rate, "lo": lo, "hi": hi, "verdict": "resolved",
                                    "server_workers": 4, "server_debug_delay": pytest.approx(0.002)}
    loads = query("SELECT probe, target_rate, passed, validity, reason FROM loads ORDER BY probe")
    assert loads["target_rate"].tolist() == t["rate"].tolist() and set(loads["validity"]) <= {"valid", "suspect",
                                                                                             "invalid"}
    # the machine's speed was timed once at the start and before every probe; the result says what it did
    assert len(meta["host_speed"]["calibrations"]) == len(t) + 1
    assert res.host_spread == pytest.approx(meta["host_speed"]["spread"]) and res.host_spread >= 1.0
    assert "the machine's speed" in res.host_note()
    assert query("SELECT host_spread FROM breakpoints")["host_spread"].item() == pytest.approx(res.host_spread)
    assert res.run.status == "ok"
