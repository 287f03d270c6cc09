"""The hosts' benchmark: coordination overhead per run, start skew between hosts, merged vs one host.

    .venv/bin/python scripts/hosts_bench.py             # one machine + namespace hosts made for the run
    .venv/bin/python scripts/hosts_bench.py --scheduler tcp://HOST:8786 --server-host srv1 --generators gen1,gen2

1. **Coordination overhead** (this machine, the in-process hosts, the default path of every run): the
   same load against the same server, started as before the hosts (``LoadProcess``) and through the
   session's hosts (``DistributedLoad``), alternately; plus opening and closing a session's hosts (connect,
   list, lease, agents, clocks). Their sum is what the hosts add to a run; the in-process hosts' own
   start (once per Python process) is printed apart.
2. **Start skew** between two generator hosts: each run's ``start_skew_us`` (the spread of the hosts'
   ``start_at.skew_us``), over several split runs.
3. **Merged vs one host** at the same total rate: the same load from one generator host, then split over
   two; p50/p99/p99.9/max, achieved rate, each host's verdict.

Namespace hosts share this machine's CPUs: figures 2 and 3 are about correctness and overhead, not speed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import perflab as pl
from perflab.config import HostOptions, LoadParams, ServerConfig
from perflab.core.generators import GeneratorHost
from perflab.core.load import DistributedLoad
from perflab.hosts.hostset import HostSet
from perflab.hosts.pool import connect
from perflab.measure.generator import start_load
from perflab.records.environment import load_average, machine_info
from perflab.server import start_server
from perflab.targets.server import ServerHost

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import netns  # noqa: E402 - the tests' namespace hosts


def _median(xs):
    return statistics.median(xs) if xs else float("nan")


def overhead(repeat: int) -> dict:
    """Seconds the hosts add to one run on this machine (see the module docstring)."""
    t0 = time.perf_counter()
    connect()
    pool_start = time.perf_counter() - t0
    load = LoadParams(rate=1000, duration=1, threads=1, connections=2, path="/v0/status")
    opened, plain, hosted = [], [], []
    with tempfile.TemporaryDirectory() as tmp, start_server(ServerConfig(backend="memory")) as srv:
        for i in range(repeat):
            t = time.perf_counter()
            hs = HostSet.open(HostOptions(), "bench")
            hs.start_agents(ServerHost, GeneratorHost)
            t_open = time.perf_counter() - t
            try:
                t = time.perf_counter()
                start_load(srv.url, load, out_dir=Path(tmp) / f"p{i}").wait()
                plain.append(time.perf_counter() - t)
                t = time.perf_counter()
                DistributedLoad(hs, {"server": srv.url}, load, Path(tmp) / f"h{i}", [], 1.0).start().wait()
                hosted.append(time.perf_counter() - t)
            finally:
                t = time.perf_counter()
                hs.close()
                opened.append(t_open + time.perf_counter() - t)
    per_load = _median(hosted) - _median(plain)
    return {
        "pool_start_s": pool_start,
        "hosts_open_close_s": _median(opened),
        "plain_load_s": _median(plain),
        "hosted_load_s": _median(hosted),
        "per_load_s": per_load,
        "per_run_s": _median(opened) + per_load,
        "repeat": repeat,
    }


def split_runs(scheduler: str, server_host: str, generators: tuple[str, str], repeat: int, rate: float) -> dict:
    """Start skews of ``repeat`` split runs, and one host against two at the same total rate."""
    srv = pl.ServerConfig(backend="memory")
    load = pl.LoadParams(rate=rate, duration=3, warmup=1, threads=4, connections=16, path="/v0/status")
    with tempfile.TemporaryDirectory() as data:
        hosts = pl.SessionOptions(scheduler=scheduler, server_host=server_host, data_root=data)
        singles, runs = [], []
        for _ in range(repeat):  # alternately, so that both see the same machine
            one, two = hosts.replace(generators=generators[:1]), hosts.replace(generators=generators)
            singles.append(pl.run_experiment(srv, load, name="bench-one", session=one))
            runs.append(pl.run_experiment(srv, load, name="bench-two", session=two))
    skews = [r.run.meta["hosts"]["load"]["start_skew_us"] for r in runs]
    leads = [(r.run.meta["hosts"]["load"]["lead_s"], r.run.meta["hosts"]["load"]["ready_s"]) for r in runs]
    # the split run's extra coordination: its elapsed time against the one-host run's (same server start-up)
    extra = _median([b.run.meta["elapsed_s"] - a.run.meta["elapsed_s"] for a, b in zip(singles, runs)])
    return {"skews_us": skews, "leads": leads, "singles": singles, "splits": runs, "rate": rate, "extra_s": extra}


def _row(label, r) -> str:
    lo = r.load
    hosts = (r.run.meta.get("hosts") or {}).get("load") or {}
    per = "; ".join(
        f"{n} {(g.get('validity') or {}).get('verdict', '-')}" for n, g in (hosts.get("generators") or {}).items()
    )
    return (
        f"| {label} | {lo.target_rate:,.0f} | {lo.achieved_rate:,.0f} | {lo.p50_ms:.3f} | {lo.p99_ms:.3f} | "
        f"{lo.p999_ms:.3f} | {lo.max_ms:.3f} | {r.validity.level} | {per or '-'} |"
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="scripts/hosts_bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--scheduler",
        help="a scheduler with a server host and two generator hosts (default: namespace "
        "hosts made on this machine for the run)",
    )
    p.add_argument("--server-host", default="srv1")
    p.add_argument("--generators", default="gen1,gen2")
    p.add_argument("--repeat", type=int, default=5, help="runs per figure (default 5)")
    p.add_argument("--rate", type=float, default=4000.0, help="total rate of the merged-vs-one comparison")
    a = p.parse_args(argv)
    m = machine_info()
    print(
        f"# perflab hosts benchmark, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}: "
        f"{m['cores']} x {m['cpu_model']}, {m['os']}; load average {load_average()}"
    )
    o = overhead(a.repeat)
    print(f"\n## 1. coordination overhead on one machine (in-process hosts), median of {o['repeat']}")
    print(f"- in-process hosts start, once per Python process: {o['pool_start_s']:.2f} s")
    print(
        f"- a session's hosts opened and closed (connect, list, lease, agents, clocks): {o['hosts_open_close_s'] * 1e3:.0f} ms"
    )
    print(
        f"- one 1 s load: {o['plain_load_s']:.3f} s started directly, {o['hosted_load_s']:.3f} s through the hosts "
        f"(+{o['per_load_s'] * 1e3:.0f} ms)"
    )
    print(f"- per run: {o['per_run_s'] * 1e3:.0f} ms (goal <= 1000 ms)")
    gens = tuple(a.generators.split(","))
    netc = None
    scheduler = a.scheduler
    if scheduler is None:
        why = netns.why_not()
        if why:
            print(f"\n(no namespace hosts: {why}; figures 2 and 3 need --scheduler)")
            return 0
        netc = netns.make({a.server_host: "server", gens[0]: "generator", gens[1]: "generator"})
        scheduler = netc.address
    try:
        s = split_runs(scheduler, a.server_host, gens, a.repeat, a.rate)
    finally:
        if netc is not None:
            netc.close()
    where = "namespace hosts on this machine (they share its CPUs)" if netc else scheduler
    sk = s["skews_us"]
    print(f"\n## 2. start skew between {gens[0]} and {gens[1]} ({where}), {len(sk)} runs")
    print(
        f"- start_skew_us: median {_median(sk):.3f} us, max {max(sk):.3f} us (goal <= 1000 us); each run: "
        + ", ".join(f"{x:.3f}" for x in sk)
    )
    print(
        "- lead (start time set ahead) / all hosts ready after: "
        + ", ".join(f"{l_:.2f}/{r:.2f} s" for l_, r in s["leads"])
    )
    print(
        f"- a split run took {s['extra_s'] * 1e3:+.0f} ms longer than the same run from one host (median; the "
        f"lead, the barrier, collecting and merging)"
    )
    print(f"\n## 3. one generator host against two at {s['rate']:,.0f} req/s in all ({where}), each pair in turn")
    print("| run | offered | achieved | p50 ms | p99 ms | p99.9 ms | max ms | verdict | per host |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for a_, b_ in zip(s["singles"], s["splits"]):
        print(_row(f"{gens[0]} alone", a_))
        print(_row(f"{gens[0]} + {gens[1]}, merged", b_))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
