"""The breakpoint search against a server of known capacity.

The server runs ``--mode async --workers 1 --debug-delay 25ms``: one worker parks 25 ms per request,
so it can never serve more than 1 / 25 ms = 40 requests/s, and serves at least 1 / (p50 latency at a
low rate) (the p50 contains the park plus everything else a request costs, most of which happens
outside the single worker). The search must land in that range, widened by its stated precision.
A failed probe is repeated once (``retries=1``): other builds and tests share this machine and a
stall of a few hundred milliseconds must not be taken for the server's limit. The delay is long so that scheduling noise on a busy 2-core machine (a fraction of a millisecond) is
small against it. The SLA is set above the service time (250 ms) so the limit found is the
throughput limit; rates just above it fail by the latency trend (the queue grows during the probe).
"""

import pytest

from perflab import (BreakpointCriteria, BreakpointParams, LoadParams, ServerConfig, find_breakpoint,
                     query, run_load, start_server)

DELAY = 0.025
SERVER = ServerConfig(backend="memory", mode="async", workers=1, debug_delay=DELAY)


def test_breakpoint_within_precision_of_known_capacity(server_build, loadgen_binary, data_root):
    with start_server(SERVER) as srv:
        low = run_load(srv.url, LoadParams(rate=20, duration=2, connections=1, path="/v0/status"))
    service_ms = low.p50_ms
    assert DELAY * 1000 <= service_ms < DELAY * 1000 * 1.5, f"unexpected service time {service_ms} ms"
    lower = 1000.0 / service_ms  # capacity if every millisecond of a request were serial
    upper = 1.0 / DELAY  # the worker alone parks this long per request

    precision = 0.05
    res = find_breakpoint(
        SERVER, LoadParams(rate=1, duration=1, threads=1, connections=8, path="/v0/status"),
        BreakpointCriteria(sla_p99=0.250),
        BreakpointParams(start_rate=10, precision=precision, probe_duration=3, warmup=1, cooldown=0.5,
                         max_probes=16, retries=1, server_warmup=1),
        progress=False)
    t = res.table
    assert res.converged, t.to_string()
    assert res.rate == res.lo and res.hi - res.lo <= max(precision * res.lo, 1)
    # a pass above 1/DELAY would mean a growing queue was missed; far below, a false alarm
    assert lower * (1 - precision) <= res.rate <= upper, (lower, upper, t.to_string())
    assert len(t) <= 16 and {"bracket", "bisect"} <= set(t["phase"]) <= {"bracket", "bisect", "bracket-retry", "bisect-retry"}
    failed = t[~t["passed"]]
    assert not failed.empty and all(r for r in failed["reason"])
    # every probe is recorded with its verdict and reason, and the result is in the index
    assert (res.run.dir / "server-warmup" / "load-console.txt").is_file()  # the unrecorded JIT warm-up ran
    assert (res.run.dir / "probes.csv").is_file() and len(list((res.run.dir / "probes").iterdir())) == len(t)
    bp = query("SELECT breakpoint_rate, converged, server_mode, server_workers, server_debug_delay FROM breakpoints")
    assert bp.iloc[0].to_dict() == {"breakpoint_rate": res.rate, "converged": True, "server_mode": "async",
                                    "server_workers": 1, "server_debug_delay": DELAY}
    loads = query("SELECT probe, target_rate, passed, reason FROM loads ORDER BY probe")
    assert loads["target_rate"].tolist() == t["rate"].tolist() and loads["reason"].str.len().min() > 0
    assert res.run.status == "ok"
