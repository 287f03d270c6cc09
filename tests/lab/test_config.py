"""Every parameter is validated on construction and the error names it."""

import pytest

from perflab import (BreakpointCriteria, BreakpointParams, LoadParams, PrefillParams, ProfileParams,
                     ServerConfig)
from perflab.units import fmt_duration, fmt_size, parse_duration, parse_rate, parse_size


@pytest.mark.parametrize("kwargs, message", [
    (dict(backend="redis"), "backend must be one of"),
    (dict(mode="reactive"), "mode must be one of"),
    (dict(workers=0), "workers must be >= 1, got 0"),
    (dict(selectors=-1), "selectors must be >= 1"),
    (dict(queue=0), "queue must be >= 1, got 0"),
    (dict(queue_kind="ring"), "queue_kind must be one of"),
    (dict(memtable_size="lots"), "memtable_size must be a size"),
    (dict(memtable_size=0), "memtable_size must be > 0"),
    (dict(flush_threads=0), "flush_threads must be >= 1"),
    (dict(wal="sometimes"), "wal must be one of"),
    (dict(wal_batch_delay="soon"), "wal_batch_delay must be a duration"),
    (dict(heap="1m"), "heap must be >= 16m"),
    (dict(gc="cms"), "gc must be one of"),
    (dict(jvm_flags="-Xmx1g"), "jvm_flags must be a list"),
    (dict(jvm_flags=["Xmx1g"]), "jvm_flags entries must start with '-'"),
    (dict(java_home="/nonexistent"), "java_home: /nonexistent has no bin/java"),
    (dict(port=70000), "port must be <= 65535"),
    (dict(workers=1.5), "workers must be an integer"),
])
def test_server_config_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ServerConfig(**kwargs)


def test_server_config_flags_and_jvm_args():
    c = ServerConfig(backend="memory", mode="async", workers=3, memtable_size="8m", heap="256m", gc="G1",
                     jvm_flags=["-XX:+AlwaysPreTouch"], wal_batch_delay="2ms", debug_delay="5ms")
    args = c.server_args(None)
    assert args[args.index("--workers") + 1] == "3"
    assert args[args.index("--memtable-size") + 1] == "8m"
    assert args[args.index("--wal-batch-delay") + 1] == "2ms"
    assert args[args.index("--debug-delay") + 1] == "5ms"
    assert "--data-dir" not in args
    jvm = c.jvm_args()
    assert jvm[0] == "-Xmx256m" and "-XX:+UseG1GC" in jvm and jvm[-1] == "-XX:+AlwaysPreTouch"
    assert c.replace(workers=4).workers == 4
    with pytest.raises(ValueError, match="workers must be >= 1"):
        c.replace(workers=0)


@pytest.mark.parametrize("kwargs, message", [
    (dict(rate=0), "rate must be > 0, got 0"),
    (dict(rate=-5), "rate must be > 0"),
    (dict(rate="fast"), "rate must be a number"),
    (dict(duration=0), "duration must be > 0"),
    (dict(duration="10x"), "duration must be a duration"),
    (dict(threads=0), "threads must be >= 1"),
    (dict(threads=4, connections=2), "connections must be >= threads (4), got 2"),
    (dict(script="no-such-script.lua"), "script: no-such-script.lua not found"),
    (dict(path="v0/status"), "path must start with '/'"),
    (dict(duration=5, warmup=10), "warmup must not be longer than duration"),
    (dict(headers=["NoColon"]), "headers entries must look like"),
    (dict(tool="ab"), "tool must be one of"),
    (dict(tool="wrk2"), "wrk_binary must be given"),
    (dict(tool="wrk2", wrk_binary="/nonexistent/wrk"), "wrk_binary: /nonexistent/wrk is not an executable"),
    (dict(rate_steps=(1000, 500, 100), step_duration=1), "rate_steps must be"),
    (dict(rate_steps=(100, 500, 100)), "step_duration must be given"),
    (dict(rate_steps=(100, 500, 100), step_duration=1, ramp=(1, 2)), "rate_steps and ramp are exclusive"),
    (dict(timeout=0), "timeout must be > 0"),
    (dict(send_slack="20ms"), "send_slack must be between 0 and 10 ms, got 0.02 s"),
    (dict(send_slack="soon"), "send_slack must be a duration"),
])
def test_load_params_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        LoadParams(**kwargs)


def test_load_params_command_line():
    p = LoadParams(rate="10k", duration="1m", threads=2, connections=16, warmup="2s", u_latency=True,
                   headers=["X-Test: 1"])
    a = p.args("http://127.0.0.1:1234", "/tmp/s.json", "/tmp/h.log")
    assert p.rate == 10000 and p.duration == 60
    assert a[a.index("-R") + 1] == "10000" and a[a.index("-d") + 1] == "60s"
    assert a[a.index("--warmup") + 1] == "2s" and "-U" in a and "-L" in a
    assert a[a.index("--json") + 1] == "/tmp/s.json"
    assert a[-1] == "http://127.0.0.1:1234/"
    assert "--send-slack" not in a
    a = LoadParams(send_slack="250us").args("http://127.0.0.1:1234")
    assert a[a.index("--send-slack") + 1] == "250us"


def test_rate_schedule_command_line_is_consistent():
    # perflab-load requires -R to be the schedule's first rate and -d to cover every step.
    p = LoadParams(rate_steps=(1000, 3000, 1000), step_duration="5s", warmup="2s")
    a = p.args("http://127.0.0.1:1234")
    assert a[a.index("--rate-steps") + 1] == "1000:3000:1000" and a[a.index("--step-duration") + 1] == "5s"
    assert a[a.index("-R") + 1] == "1000" and a[a.index("-d") + 1] == "15s"
    r = LoadParams(ramp=("1k", "5k"), duration=10).args("http://127.0.0.1:1234")
    assert r[r.index("-R") + 1] == "1000" and r[r.index("--ramp") + 1] == "1000:5000"
    with pytest.raises(ValueError, match="warmup must not be longer than the steps' total"):
        LoadParams(rate_steps=(100, 200, 100), step_duration=1, duration=30, warmup=5)


def test_profile_and_breakpoint_params_reject():
    with pytest.raises(ValueError, match="event must be one of"):
        ProfileParams(event="cache-misses")
    with pytest.raises(ValueError, match="interval must be > 0"):
        ProfileParams(interval=0)
    with pytest.raises(ValueError, match="include/exclude patterns must not contain ','"):
        ProfileParams(include=["a,b"])
    assert ProfileParams("alloc", alloc_bytes="1m").agent_start_options().startswith("start,event=alloc,alloc=1048576")
    assert "interval=5000000" in ProfileParams("cpu", interval="5ms").agent_start_options()
    with pytest.raises(ValueError, match="keys must be >= 1"):
        PrefillParams(keys=0)
    with pytest.raises(ValueError, match="sla_p99 must be > 0"):
        BreakpointCriteria(sla_p99=0)
    with pytest.raises(ValueError, match="min_achieved must be in"):
        BreakpointCriteria(min_achieved=1.5)
    with pytest.raises(ValueError, match="precision must be in"):
        BreakpointParams(precision=0)
    with pytest.raises(ValueError, match="growth must be > 1"):
        BreakpointParams(growth=1)
    with pytest.raises(ValueError, match="start_rate must be within"):
        BreakpointParams(start_rate=5, min_rate=10)


def test_units_round_trip():
    assert parse_size("4m") == 4 * 1024 * 1024 and parse_size("512k") == 524288 and parse_size(100) == 100
    assert parse_duration("500ms") == 0.5 and parse_duration("1m") == 60 and parse_duration(2) == 2.0
    assert parse_rate("10k") == 10000 and parse_rate("1M") == 1e6
    assert fmt_duration(0.005) == "5ms" and fmt_duration(10) == "10s" and fmt_duration(1.5) == "1500ms"
    assert fmt_size(4 * 1024 * 1024) == "4m" and fmt_size(1000) == "1000"
    with pytest.raises(ValueError, match="size must be a size"):
        parse_size("four")
