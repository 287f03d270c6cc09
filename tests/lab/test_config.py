"""Every parameter is validated on construction, by one layer, and the error names it."""

import dataclasses

import pytest

from perflab import BreakpointCriteria, BreakpointParams, LoadParams, PrefillParams, ProfileParams, ServerConfig
from perflab.config import ValidityThresholds, server_options
from perflab.config.fields import spec_of
from perflab.units import arg_duration, arg_size, parse_duration, parse_rate, parse_size


def _re(text):
    return "".join("\\" + c if c in "()[].*+?^$|{}" else c for c in text)


def test_every_server_option_is_a_field_with_the_servers_default():
    fields = {f.name: f for f in dataclasses.fields(ServerConfig)}
    for o in server_options()["options"]:
        if o["key"] in ("data-dir", "config"):  # chosen by the lab per run
            assert o["key"].replace("-", "_") not in fields
            continue
        f = fields[o["key"].replace("-", "_")]
        assert f.metadata["server_key"] == o["key"]
        if o["key"] == "port":
            assert f.default == 0  # the lab picks a free port
        elif o["kind"] == "duration" and o["default"] is not None:
            assert f.default == pytest.approx(o["default"] / 1000)
        else:
            assert f.default == o["default"], o["key"]
        assert spec_of(f).help == o["help"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(memtable_size="1k"), "memtable_size: --memtable-size: must be between 64k and 1g, got '1k'"),
        (
            dict(memtable_size="lots"),
            "memtable_size: --memtable-size: expected a size like 4m, 512k or 1048576, got 'lots'",
        ),
        (dict(mode="reactive"), "mode: --mode: expected one of sync, async, virtual, got 'reactive'"),
        (dict(backend="redis"), "backend: --backend: expected one of lsm, memory, rocksdb"),
        (dict(queue_kind="ring"), "queue_kind: --queue-kind: expected one of"),
        (dict(workers=0), "workers: --workers: must be between 1 and"),
        (dict(workers=1.5), "workers: --workers: expected an integer, got 1.5"),
        (dict(wal="sometimes"), "wal: --wal: expected one of none, batch, always"),
        (
            dict(wal_batch_delay="soon"),
            "wal_batch_delay: --wal-batch-delay: expected a duration like 5ms or 2s, got 'soon'",
        ),
        (dict(port=70000), "port: --port: must be between 0 and 65535"),
        (dict(heap="1m"), "heap: must be >= 16m, got '1m'"),
        (dict(gc="cms"), "gc: expected one of g1, parallel, serial, z, shenandoah, epsilon, got 'cms'"),
        (dict(jvm_flags="-Xmx1g"), "jvm_flags: must be a list of strings"),
        (dict(jvm_flags=["Xmx1g"]), "jvm_flags: entries must start with '-'"),
        (dict(java_home="/nonexistent"), "java_home: /nonexistent has no bin/java"),
    ],
)
def test_server_config_rejects_before_any_jvm_starts(kwargs, message):
    with pytest.raises(ValueError, match=_re(message)):
        ServerConfig(**kwargs)


def test_values_the_server_allows_are_allowed():
    # The server documents "0 disables compaction"; the lab used to refuse it.
    assert ServerConfig(compaction_threads=0).server_args(None)[-2:] == ["--compaction-threads", "0"]
    c = ServerConfig(table_size="2m", block_size="1k", bloom_bits=0, background_nice=0)
    args = c.server_args(None)
    for flag, value in (
        ("--table-size", "2m"),
        ("--block-size", "1k"),
        ("--bloom-bits", "0"),
        ("--background-nice", "0"),
    ):
        assert args[args.index(flag) + 1] == value


def test_server_args_carry_only_what_differs_from_the_servers_defaults():
    c = ServerConfig(
        backend="memory", mode="async", workers=3, memtable_size="8m", wal_batch_delay="2ms", debug_delay="5ms"
    )
    args = c.server_args("/data/x")
    assert args == [
        "--port",
        "0",
        "--backend",
        "memory",
        "--mode",
        "async",
        "--workers",
        "3",
        "--memtable-size",
        "8m",
        "--wal-batch-delay",
        "2ms",
        "--debug-delay",
        "5ms",
        "--data-dir",
        "/data/x",
    ]
    assert ServerConfig().server_args(None) == ["--port", "0"]
    assert ServerConfig().storage_options()["memtable-size"] == "4m"
    assert c.replace(workers=4).workers == 4
    with pytest.raises(ValueError, match="workers: --workers: must be between 1"):
        c.replace(workers=0)


def test_the_heap_is_fixed_and_small_by_default():
    # GC behaviour must not depend on how much RAM the lab's machine has (the JVM's default is 1/4 of it).
    jvm = ServerConfig().jvm_args()
    assert jvm[:2] == ["-Xmx256m", "-Xms256m"]
    jvm = ServerConfig(heap="1g", fixed_heap=False, gc="g1", jvm_flags=["-XX:+AlwaysPreTouch"]).jvm_args()
    assert jvm[0] == "-Xmx1g" and "-Xms1g" not in jvm and "-XX:+UseG1GC" in jvm and jvm[-1] == "-XX:+AlwaysPreTouch"


def test_the_docstring_lists_every_field():
    for f in dataclasses.fields(ServerConfig):
        assert f"``{f.name}``" in ServerConfig.__doc__


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(rate=0), "rate: must be > 0, got 0"),
        (dict(rate=-5), "rate: must be > 0"),
        (dict(rate="fast"), "rate: must be a number like 5000 or 10k, got 'fast'"),
        (dict(duration=0), "duration: must be > 0"),
        (dict(duration="10x"), "duration: must be a duration like 500ms, 10s, 1m, got '10x'"),
        (dict(threads=0), "threads: must be >= 1, got 0"),
        (dict(threads=4, connections=2), "connections: must be >= threads (4), got 2"),
        (dict(script="no-such-script.lua"), "script: no-such-script.lua not found"),
        (dict(path="v0/status"), "path: must start with '/'"),
        (dict(warmup=20, duration=10), "warmup: must not be longer than the measured window (10 s), got 20 s"),
        (dict(headers=["NoColon"]), "headers: entries must look like 'Name: value'"),
        (dict(tool="ab"), "tool: expected one of perflab-load, wrk2"),
        (dict(tool="wrk2"), "wrk_binary: must be given when tool='wrk2'"),
        (dict(rate_steps=(100, 50, 10), step_duration=1), "rate_steps: the end must be >= the start"),
        (dict(rate_steps=(100, 200), step_duration=1), "rate_steps: expected 3 rates"),
        (dict(rate_steps=(100, 200, 50)), "step_duration: must be given with rate_steps"),
        (dict(ramp=(1, 2), rate_steps=(1, 2, 1), step_duration=1), "rate_steps and ramp are exclusive"),
        (dict(ramp_curve="exp"), "ramp_curve: 'exp' needs a ramp"),
        (dict(timeout=0), "timeout: must be > 0"),
        (dict(send_slack="20ms"), "send_slack: must be between 0ms and 10ms, got '20ms'"),
        (dict(send_slack="soon"), "send_slack: must be a duration like"),
        (dict(hdr_interval="1ms"), "hdr_interval: must be >= 10ms, got '1ms'"),
    ],
)
def test_load_params_rejects(kwargs, message):
    with pytest.raises(ValueError, match=_re(message)):
        LoadParams(**kwargs)


def test_load_params_command_line():
    p = LoadParams(
        rate="10k",
        duration="30s",
        threads=2,
        connections=16,
        script="get-random.lua",
        script_args=["keys=100"],
        warmup="5s",
        send_slack="100us",
    )
    a = p.args("http://127.0.0.1:9", "/x/s.json", "/x/h.log")
    assert a[:8] == ["-t", "2", "-c", "16", "-d", "30s", "-R", "10000"]
    assert a[a.index("--hdr-interval") + 1] == "100ms"  # the timeline's default resolution
    assert a[a.index("--send-slack") + 1] == "100us" and a[-3:] == ["http://127.0.0.1:9/", "--", "keys=100"]
    ramp = LoadParams(ramp="1000:1M", ramp_curve="exp", duration=10, stop_on_p99="50ms")
    a = ramp.args("http://h")
    assert a[a.index("--ramp") + 1] == "1000:1000000" and a[a.index("--ramp-curve") + 1] == "exp"
    assert a[a.index("--stop-on-p99") + 1] == "50ms" and ramp.rate == 1000


def test_rate_schedule_sets_rate_and_duration():
    steps = LoadParams(rate_steps="100:300:100", step_duration=2)
    assert (steps.rate, steps.duration) == (100, 6) and steps.rate_steps == (100, 300, 100)
    a = steps.args("http://h")
    assert a[a.index("--rate-steps") + 1] == "100:300:100" and a[a.index("-R") + 1] == "100"


@pytest.mark.parametrize(
    "cls, kwargs, message",
    [
        (ProfileParams, dict(event="heap"), "event: expected one or more of cpu, alloc, lock"),
        (ProfileParams, dict(event="cpu,wall"), "event: at most one of cpu, wall, itimer, ctimer per recording"),
        (ProfileParams, dict(event="alloc,cpu,alloc"), "event: 'alloc,cpu,alloc' names an event twice"),
        (ProfileParams, dict(interval=0), "interval: must be > 0"),
        (ProfileParams, dict(include=["a,b"]), "patterns must not contain ','"),
        (PrefillParams, dict(keys=0), "keys: must be >= 1, got 0"),
        (PrefillParams, dict(value_size="big"), "value_size: must be a size like"),
        (BreakpointCriteria, dict(min_achieved=0), "min_achieved: must be > 0 and <= 1"),
        (BreakpointCriteria, dict(sla_p99=0), "sla_p99: must be > 0"),
        (BreakpointCriteria, dict(max_error_ratio=0.9), "max_error_ratio: must be between 0 and 0.5"),
        (BreakpointParams, dict(start_rate=5000, max_rate=1000), "start_rate: must be within [min_rate, max_rate]"),
        (BreakpointParams, dict(precision=0), "precision: must be > 0"),
        (BreakpointParams, dict(growth=1), "growth: must be > 1"),
        (BreakpointParams, dict(repeats=5, max_probes=8), "max_probes: must allow the repeats at both edges (>= 10)"),
        (BreakpointParams, dict(bracket="guess"), "bracket: expected one of ramp, growth"),
        (ValidityThresholds, dict(lag_share_warn=0.6, lag_share_fail=0.5), "lag_share_warn: must be <= lag_share_fail"),
        (ValidityThresholds, dict(generator_cpu_fail=1.5), "generator_cpu_fail: must be > 0 and <= 1"),
    ],
)
def test_other_params_reject(cls, kwargs, message):
    with pytest.raises(ValueError, match=_re(message)):
        cls(**kwargs)


def test_several_profile_events_share_one_recording():
    p = ProfileParams(event=" CPU, alloc,lock ")
    assert p.event == "cpu,alloc,lock" and p.events == ("cpu", "alloc", "lock")
    assert p.agent_start_options() == (
        "start,event=cpu,interval=5000000,alloc=524288,lock=10000,threads,jstackdepth=2048"
    )
    assert ProfileParams("alloc").agent_start_options() == "start,alloc=524288,threads,jstackdepth=2048"


def test_units_round_trip():
    assert parse_size("4m") == 4 << 20 and arg_size(4 << 20) == "4m" and arg_size(1000) == "1000"
    assert parse_duration("500ms") == 0.5 and arg_duration(0.5) == "500ms" and arg_duration(2) == "2s"
    assert arg_duration(0.0001) == "100us"
    assert parse_rate("10k") == 10000 and parse_rate("1.5M") == 1.5e6


def test_describe_gives_every_documented_field():
    rows = {r["name"]: r for r in LoadParams.describe()}
    assert rows["rate"]["bounds"] == "> 0" and rows["hdr_interval"]["default"] == "100ms"
    assert all(r["help"] for r in rows.values())
