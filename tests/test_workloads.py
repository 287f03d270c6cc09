"""Workloads: a script's documented arguments, and one LoadParams per script with the lab's standard values."""

import re

import pytest

from perflab import paths, workloads
from perflab.config import LoadParams


def test_script_arguments_match_the_headers_and_filter_values():
    assert paths.script_arguments("put.lua") == [
        "start",
        "count",
        "threads",
        "value",
        "seed",
        "path",
        "param",
        "prefix",
        "ack",
        "from",
        "replicas",
    ]
    assert paths.script_arguments("status.lua") == ["path"]
    assert workloads.script_args("get.lua", threads=2, keys=100, value=10, seed=3) == ("threads=2", "count=100")
    assert workloads.script_args("get-random.lua", threads=2, keys=100, seed=3, scramble=False, dist=None) == (
        "keys=100",
        "seed=3",
        "scramble=0",
    )


def test_every_script_header_lists_what_its_usage_accepts():
    """The same header parsing, across all scripts (their usage itself: tests/scripts)."""
    for script in sorted((paths.repo_root() / "wrk-scripts").glob("*.lua")):
        names = paths.script_arguments(script.name)
        body = script.read_text()
        for n in names:
            assert re.search(rf"^--\s+{n}=", body, re.M), (script.name, n)


def test_a_workload_gives_each_connection_count_its_threads_and_the_script_its_values():
    one = workloads.workload("put.lua", 1, threads=2, keys=500, value_size=64, seed=7, rate=2000, duration=5)
    assert (one.threads, one.connections, one.rate, one.duration) == (1, 1, 2000, 5)
    assert one.script_args == ("value=64", "seed=7", "count=500")
    assert one.full_script_args == ("value=64", "seed=7", "count=500", "threads=1")  # -t, passed once
    many = workloads.workload("get-random.lua", 64, keys=1000, extra_args=("path=/kv",), warmup=2)
    assert many.threads == 2 and many.script_args == ("keys=1000", "path=/kv") and many.warmup == 2
    with pytest.raises(ValueError, match="rate: must be > 0"):
        workloads.workload("status.lua", 4, rate=0)


def test_a_script_that_takes_threads_gets_the_generators_thread_count_unless_it_is_given():
    """put.lua gives each thread its own keys and needs to know how many there are: -t is passed to it, so a
    command line never has to repeat it (perflab run -t 4 -s put.lua); one given by hand is kept as given."""
    auto = LoadParams(script="put.lua", threads=4, connections=8)
    assert auto.args("http://127.0.0.1:1")[-2:] == ["--", "threads=4"]
    given = LoadParams(script="put.lua", threads=4, connections=8, script_args=("threads=2",))
    assert given.full_script_args == ("threads=2",)
    assert LoadParams(script="status.lua", threads=4, connections=8).full_script_args == ()  # takes none
