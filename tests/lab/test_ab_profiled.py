"""A profiled A/B comparison against real servers: where B spends more CPU per request than A, by category.

Known truth: B's ``--debug-work-ns 200000`` spins 200 us of CPU time on every request's thread, in
``ApiHandler`` (the built-in server's request handling), on a server that spends some 20 us per request
otherwise. Every pair puts B's CPU per request and its request handling far above A's (a machine stall moves
both probes of a pair, and CPU time is not stretched by waiting), so the claims below cannot fail by chance;
a claim about a category where nothing changed has probability at most alpha (the categories are tests of
the comparison's family)."""

from __future__ import annotations

import pytest

from perflab import ABParams, LoadParams, ServerConfig, compare_ab, open_run, query
from perflab.analysis import ab as abx
from perflab.stats.paired import Conclusion

A = ServerConfig(backend="memory")
B = A.replace(debug_work_ns=200_000)
LOAD = LoadParams(script="status.lua", connections=4, threads=1, rate=500)
PARAMS = ABParams(
    probe_duration=0.5,
    warmup=0.2,
    cooldown=0,
    server_warmup=1,
    metric="cpu",
    max_pairs=24,
    budget=None,
    idle_pairs=0,
    profile=True,
    alpha=1e-3,
)


@pytest.mark.slow
def test_a_profiled_comparison_says_where_the_extra_cpu_went(server_build, loadgen_binary, profiler_lib, data_root):
    res = compare_ab(A, B, LOAD, params=PARAMS, progress=False)
    v = res.verdict()
    assert v.conclusion is Conclusion.DIFFERENT and v.ratio > 3, abx.lines(res)
    cats = res.rates[0].categories
    handling = cats["request handling"]
    assert handling.conclusion is Conclusion.DIFFERENT and handling.direction == "higher", abx.lines(res)
    assert handling.ci[0] > 100 and handling.difference > 100  # of the 200 us planted
    # no other category takes that much more: the extra CPU is where it was planted
    assert all(d.difference < 100 for c, d in cats.items() if c != "request handling"), abx.lines(res)
    line = next(x for x in abx.lines(res) if x.startswith("B spends"))
    assert "more per request in request handling than A at 500 req/s (95% CI" in line and "interleaved pairs" in line
    # recorded: the family counts the categories, categories.csv holds every pair, the index one row per category
    run = open_run(res.run.dir)
    assert run.results["family"]["extra"] > 0 and (run.dir / "categories.csv").is_file()
    rows = query("SELECT category, conclusion, difference FROM ab WHERE metric = 'category'")
    assert rows.set_index("category").loc["request handling", "conclusion"] == "different"
    assert abx.categories_figure(run) is not None and (run.dir / "profiles" / "A").is_dir()
