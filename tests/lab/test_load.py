"""perflab-load driven through run_load against the real server: one result format, raw files, failures."""

import json

import pytest
from support import processes_mentioning

from perflab import LoadParams, ServerConfig
from perflab.errors import LoadError
from perflab.measure.generator import run_load, start_load
from perflab.measure.result import load_result_from_dir
from perflab.server import start_server


@pytest.fixture(scope="module")
def server(server_build):
    with start_server(ServerConfig(backend="memory", mode="async", workers=2)) as srv:
        yield srv


def test_fixed_rate_load_result_comes_from_the_json_summary(server, loadgen_binary, tmp_path):
    p = LoadParams(
        rate=1000,
        duration=2,
        warmup=1,
        threads=2,
        connections=4,
        script="put.lua",
        script_args=["threads=2"],
        u_latency=True,
    )
    r = run_load(server.url, p, out_dir=tmp_path)
    s = json.loads((tmp_path / "load-summary.json").read_text())
    assert r.summary == s and r.returncode == 0 and r.tool_version == s["version"]
    # the window's schedule is exact; what is counted depends on how busy the machine is (a warm-up request
    # a stall holds past the window's start counts in it): check consistency, not speed
    assert r.target_rate == 1000 and s["offered"] == 2000 and r.requests > 0
    assert r.achieved_rate == pytest.approx(r.requests / r.duration_s, rel=0.01)
    assert r.status_counts == {"201": r.requests} and r.errors_total == 0 and r.error_ratio == 0
    # one source for each number: percentiles from the summary, the spectrum from the summary too
    assert r.p99_ms == s["latency_us"]["p99"] / 1000 and r.max_ms == s["latency_us"]["p100"] / 1000
    assert r.spectrum["total_count"].iloc[-1] == r.requests and not r.spectrum_uncorrected.empty
    assert r.percentile_ms(95) <= r.p99_ms  # a level between the summary's: read from the spectrum
    # the generator vouches for itself: its own lag and CPU over the window
    assert r.schedule_lag["p99"] >= 0 and r.generator_cpu["threads"]
    iv = r.intervals  # 100 ms intervals from the hdr log
    assert len(iv) == 20 and iv["count"].sum() == r.requests and (iv["tag"] == "corrected").all()
    assert r.hdr.start_time == pytest.approx(r.measure_start, abs=0.01)
    assert {"load-console.txt", "load-summary.json", "load-hdr.log", "load-stderr.txt"} <= {
        f.name for f in tmp_path.iterdir()
    }
    again = load_result_from_dir(tmp_path)
    assert again.requests == r.requests and again.p99_ms == r.p99_ms
    rec = r.record()
    assert rec["script"] == "put.lua" and rec["connections"] == 4 and rec["schedule_lag_p99_ms"] is not None


def test_get_misses_are_answers_not_server_errors(server, loadgen_binary):
    # nothing was written under these keys: 404 is a non-2xx/3xx response, as wrk2 counts it, but not a
    # server error (the breakpoint criteria and the validity record count socket errors and 5xx)
    r = run_load(server.url, LoadParams(rate=200, duration=1, script="get.lua", script_args=["start=900000000"]))
    assert r.status_counts.get("404") == r.requests and r.errors["status"] == r.requests
    assert r.error_ratio == 1.0 and r.server_errors == 0
    assert r.out_dir is None  # no out_dir: raw files were temporary


def test_rate_steps_recorded_per_step(server, loadgen_binary):
    r = run_load(server.url, LoadParams(rate_steps=(200, 400, 200), step_duration=1, path="/v0/status"))
    assert [s["target_rate"] for s in r.summary["steps"]] == [200, 400]
    assert set(r.hdr.intervals["step"]) == {0, 1}


def test_schedule_sets_rate_and_duration(server, loadgen_binary):
    ramp = run_load(server.url, LoadParams(ramp=(100, 300), duration=2, path="/v0/status"))
    # target_rate is the mean planned rate over the window (docs/contracts/generator.md §5).
    assert ramp.target_rate == 200 and ramp.errors_total == 0
    # A linear ramp 100 -> 300 over 2 s schedules (100 + 300) / 2 * 2 = 400 requests.
    assert abs(ramp.requests - 400) <= 2, ramp.requests


def test_generator_failure_carries_cause(server, loadgen_binary, tmp_path):
    bad = tmp_path / "bad.lua"
    bad.write_text("request = function( return 1 end\n")
    with pytest.raises(LoadError) as e:
        run_load(server.url, LoadParams(rate=10, duration=1, script=str(bad)))
    assert "exited with status 1" in str(e.value) and "bad.lua" in str(e.value)


def test_connection_refused_is_reported_not_hidden(loadgen_binary, port):
    r = run_load(f"http://127.0.0.1:{port}", LoadParams(rate=50, duration=1, path="/v0/status"))
    assert r.errors["connect"] > 0 and r.requests == 0 and r.server_errors == r.errors["connect"]


def test_stop_kills_the_generator_group(server, loadgen_binary, tmp_path):
    lp = start_load(server.url, LoadParams(rate=100, duration=60, path="/v0/status"), out_dir=tmp_path / "marker-load")
    assert lp.poll() is None
    lp.stop(grace_s=2)
    assert lp.poll() is not None
    assert processes_mentioning(str(tmp_path / "marker-load")) == []


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="out_dir: no load-console.txt"):
        load_result_from_dir(tmp_path)


def test_wrk2_mode_reads_console_only(server, loadgen_binary):
    # perflab-load accepts wrk2's command line, so it stands in for a user's wrk2 binary here:
    # in wrk2 mode no --json/--hdr-log is passed and the console output becomes a summary of the same
    # shape (the one place console text is parsed); the warm-up is a separate unrecorded run.
    p = LoadParams(
        rate=300, duration=2, warmup=1, connections=2, path="/v0/status", tool="wrk2", wrk_binary=str(loadgen_binary)
    )
    assert "--json" not in p.args("http://x") and "--warmup" not in p.args("http://x")
    r = run_load(server.url, p)
    assert r.summary["tool"] == "wrk2" and r.hdr is None and r.intervals.empty
    assert r.requests == 600 and r.achieved_rate == pytest.approx(300, rel=0.02)
    assert r.p99_ms > 0 and not r.spectrum.empty and r.schedule_lag is None and r.generator_cpu is None
    assert r.errors == {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 0}
    with pytest.raises(ValueError, match="duration: must be whole seconds for wrk2"):
        LoadParams(duration=1.5, tool="wrk2", wrk_binary=str(loadgen_binary))
