#!/usr/bin/env python3
"""The A/B benchmark: does the interleaved method's verdict survive this machine, against known truth?

Each scenario runs the interleaved comparison (``perflab.compare_ab``) and the sequential method the lab
used before it (two runs or two searches one after the other, compared as ``perflab compare`` compares
them), ``--runs`` times each, in turns (interleaved, sequential, interleaved, ...), and prints one
markdown table. Every result is also a JSON line in ``--out``.

Scenarios (the built-in server; ``--debug-delay`` parks every request on one of 8 workers, so
4 ms allows at most 2000 req/s and 5 ms 1600 req/s: a capacity ratio of exactly 0.8):

* ``aa-cpu``      A/A, memory backend, async, ``status.lua`` at 3000 req/s (the machine's noise decides
                  the p99): claims in --runs comparisons (the false-positive rate);
* ``aa-delay``    A/A, 4 ms debug delay at 500 req/s;
* ``truth-latency`` 4 ms against 5 ms at 500 req/s: detected? (the true p50 ratio lies in (1, 1.25]);
* ``truth-capacity`` 4 ms against 5 ms, breakpoints: detected, and 0.8 inside the ratio's interval?
* ``aa-capacity`` A/A breakpoints, 4 ms both;
* ``idle-cost``   A with B idle against A with B frozen, 16 pairs at 3000 req/s (interleaved only);
* ``aa-long``     A/A, 64 pairs each (no early stop): how far apart two JVMs of one configuration stay.

    .venv/bin/python scripts/ab_benchmark.py --runs 20 --only aa-cpu --data /tmp/ab-bench
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import perflab as pl  # noqa: E402
from perflab.analysis.ab import lines  # noqa: E402
from perflab.stats import paired  # noqa: E402
from perflab.stats.methods import Method  # noqa: E402
from perflab.stats.significance import compare_intervals, compare_samples  # noqa: E402

CPU = pl.ServerConfig(backend="memory", mode="async")
DELAY_A = pl.ServerConfig(backend="memory", mode="async", workers=8, debug_delay="4ms")
DELAY_B = DELAY_A.replace(debug_delay="5ms")
STATUS = dict(script="status.lua", connections=16, threads=1)
#: interleaved probes: 0.5 s windows after 0.25 s of warm-up
AB = pl.ABParams(probe_duration=0.5, warmup=0.25, server_warmup=2, max_pairs=64, budget=90, idle_pairs=0)
#: both methods' searches: 1 s probes, 8 per search, a 4 s ramp, a 1 s SLA (capacity set by the delay)
SEARCH = pl.BreakpointParams(probe_duration=1, warmup=0.5, max_probes=8, ramp_duration=4, cooldown=0.2)
SLA = pl.BreakpointCriteria(sla_p99=1.0)
#: the sequential latency runs: the quick plan's window (5 s after 2 s of warm-up), 0.1 s intervals
SEQ_WINDOW, SEQ_WARMUP = 5.0, 2.0

SCENARIOS = {
    "aa-cpu": dict(a=CPU, b=CPU, rate=3000, metric="p99", truth=None),
    "aa-delay": dict(a=DELAY_A, b=DELAY_A, rate=500, metric="p50", truth=None),
    "truth-latency": dict(a=DELAY_A, b=DELAY_B, rate=500, metric="p50", truth=(1.0, 1.25)),
    "truth-capacity": dict(a=DELAY_A, b=DELAY_B, search=True, truth=0.8),
    "aa-capacity": dict(a=DELAY_A, b=DELAY_A, search=True, truth=1.0),
    "idle-cost": dict(a=CPU, b=CPU, rate=3000, metric="p99", idle=16),
    "aa-long": dict(a=CPU, b=CPU, rate=3000, metric="p50", long=True),
}


def interleaved(name: str, sc: dict, data: str) -> dict:
    load = (
        pl.LoadParams(rate=sc.get("rate", 1000), **STATUS)
        if not sc.get("search")
        else pl.LoadParams(path="/v0/status", connections=16, threads=1)
    )
    params = AB.replace(metric=sc.get("metric", "p99"))
    if sc.get("idle"):
        params = params.replace(idle_pairs=sc["idle"], max_pairs=8, min_pairs=8)
    if sc.get("long"):
        params = params.replace(min_pairs=64, budget=None)
    t = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pl.compare_ab(
            sc["a"],
            sc["b"],
            load,
            params=params,
            criteria=SLA,
            search=SEARCH if sc.get("search") else None,
            name=f"bench-{name}",
            progress=False,
            session=pl.SessionOptions(data_root=data),
        )
    out = {
        "method": str(res.method),
        "seconds": round(time.monotonic() - t, 1),
        "run": res.run_id,
        "claim": res.significant,
        "lines": lines(res),
    }
    v = res.verdict()
    out.update(
        ratio=v.ratio,
        ci=list(v.interval if sc.get("search") else v.ci),
        conclusion=str(v.conclusion),
        direction=str(v.direction),
    )
    if not sc.get("search"):
        rv = res.rates[0]
        out.update(
            n=v.n,
            stop=str(rv.stop),
            pairs=rv.measured,
            claims={m: r.significant for m, r in rv.metrics.items()}
            | {"pass": str(rv.passing.conclusion) == "different"},
            ratios={m: [r.ratio, *r.ci] for m, r in rv.metrics.items()},
            used=int(res.pairs["used"].sum()) if res.pairs is not None and len(res.pairs) else 0,
        )
    else:
        out.update(
            a=[res.searches["A"].rate, *res.searches["A"].interval],
            b=[res.searches["B"].rate, *res.searches["B"].interval],
        )
    if res.idle_cost is not None:
        out["idle_cost"] = {m: [r.ratio, *r.ci, r.n] for m, r in res.idle_cost.ratios.items()}
    return out


def sequential(name: str, sc: dict, data: str) -> dict:
    t = time.monotonic()
    if sc.get("search"):
        load = pl.LoadParams(path="/v0/status", connections=16, threads=1)
        ra = pl.find_breakpoint(
            sc["a"],
            load,
            SLA,
            SEARCH,
            name=f"bench-{name}-A",
            progress=False,
            session=pl.SessionOptions(data_root=data),
        )
        rb = pl.find_breakpoint(
            sc["b"],
            load,
            SLA,
            SEARCH,
            name=f"bench-{name}-B",
            progress=False,
            session=pl.SessionOptions(data_root=data),
        )
        seconds = round(time.monotonic() - t, 1)
        if ra.rate is None or rb.rate is None:
            return {
                "method": str(Method.SEQUENTIAL_INTERVALS),
                "seconds": seconds,
                "claim": False,
                "ratio": None,
                "ci": None,
                "a": [ra.rate, *ra.interval],
                "b": [rb.rate, *rb.interval],
            }
        c = compare_intervals(ra.interval, rb.interval)
        r = paired.interval_ratio(ra.rate, ra.interval, rb.rate, rb.interval, method=Method.SEQUENTIAL_INTERVALS)
        return {
            "method": str(Method.SEQUENTIAL_INTERVALS),
            "seconds": seconds,
            "claim": c.significant,
            "direction": str(c.direction),
            "ratio": r.ratio,
            "ci": list(r.interval),
            "a": [ra.rate, *ra.interval],
            "b": [rb.rate, *rb.interval],
            "runs": [ra.run_id, rb.run_id],
        }
    load = pl.LoadParams(rate=sc["rate"], duration=SEQ_WINDOW, warmup=SEQ_WARMUP, hdr_interval=0.1, **STATUS)
    ea = pl.run_experiment(sc["a"], load, name=f"bench-{name}-A", session=pl.SessionOptions(data_root=data))
    eb = pl.run_experiment(sc["b"], load, name=f"bench-{name}-B", session=pl.SessionOptions(data_root=data))
    seconds = round(time.monotonic() - t, 1)
    ia, ib = ea.load.intervals, eb.load.intervals
    claims, ratios = {}, {}
    for col, m in (("p50_ms", "p50"), ("p99_ms", "p99"), ("p999_ms", "p99.9")):
        d = compare_samples(ia[col], ib[col])
        claims[m] = d.significant
        ratios[m] = [d.ratio, *d.ratio_ci]
    m = sc.get("metric", "p99")
    return {
        "method": str(Method.SEQUENTIAL_RUNS),
        "seconds": seconds,
        "claim": any(claims.values()),
        "claims": claims,
        "ratios": ratios,
        "ratio": ratios[m][0],
        "ci": ratios[m][1:],
        "runs": [ea.run_id, eb.run_id],
    }


def truth_hit(sc: dict, r: dict) -> bool | None:
    t = sc.get("truth")
    if t is None or r.get("ratio") is None:
        return None
    lo, hi = r["ci"]
    if isinstance(t, tuple):  # the true ratio lies somewhere in (t0, t1]: the interval must meet it
        return lo <= t[1] and hi > t[0]
    return lo <= t <= hi


def _med(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(xs) if xs else None


def summary(rows: list[dict]) -> str:
    out = [
        "| scenario | method | runs | claims a difference | truth inside the interval | ratio: median (range) | "
        "interval width: median | time to a verdict: median (range) |",
        "|---|---|---:|---:|---:|---|---:|---|",
    ]
    keys = sorted({(r["scenario"], r["method"]) for r in rows}, key=lambda k: (list(SCENARIOS).index(k[0]), k[1]))
    for sc, method in keys:
        rs = [r for r in rows if r["scenario"] == sc and r["method"] == method]
        claims = sum(bool(r["claim"]) for r in rs)
        hits = [r["truth"] for r in rs if r.get("truth") is not None]
        ratios = [r["ratio"] for r in rs if isinstance(r.get("ratio"), (int, float)) and math.isfinite(r["ratio"])]
        widths = [
            r["ci"][1] / r["ci"][0]
            for r in rs
            if r.get("ci") and r["ci"][0] and math.isfinite(r["ci"][0]) and math.isfinite(r["ci"][1])
        ]
        secs = [r["seconds"] for r in rs]
        rng = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "n/a"
        out.append(
            f"| {sc} | {method} | {len(rs)} | {claims} | "
            f"{f'{sum(hits)} of {len(hits)}' if hits else 'n/a'} | "
            f"{f'{_med(ratios):.2f}' if ratios else 'n/a'} ({rng}) | "
            f"{f'{_med(widths):.2f}x' if widths else 'n/a'} | "
            f"{_med(secs):.0f} s ({min(secs):.0f}-{max(secs):.0f}) |"
        )
    return "\n".join(out)


def extras(rows: list[dict]) -> str:
    """Two JVMs of one configuration (A/A, interleaved: each run's median p50 ratio over its pairs) and the
    idle side's cost (A with B idle against A with B frozen)."""
    out = []
    aa = [
        r
        for r in rows
        if r["scenario"] in ("aa-cpu", "aa-delay", "aa-long")
        and r["method"] == str(Method.INTERLEAVED_PAIRS)
        and r.get("ratios")
    ]
    for m in ("p50", "p99"):
        v = [r["ratios"][m][0] for r in aa if r["ratios"][m][0] is not None and not math.isnan(r["ratios"][m][0])]
        if v:
            worst = max(v, key=lambda x: abs(math.log(x)))
            out.append(
                f"- A/A, interleaved: median {m} ratio B/A per comparison over {len(v)} comparisons: median "
                f"{_med(v):.3f}, range {min(v):.3f}-{max(v):.3f} (farthest from 1: {worst:.3f})"
            )
    for r in rows:
        if r.get("idle_cost"):
            ic = "; ".join(
                f"{m} {v[0]:.2f}x (95% CI {v[1]:.2f}-{v[2]:.2f}, n = {v[3]})"
                for m, v in r["idle_cost"].items()
                if v[0] is not None and not math.isnan(v[0])
            )
            out.append(f"- idle cost ({r['scenario']} #{r['round']}): A with B idle against A with B frozen: {ic}")
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10, help="comparisons per scenario and method (default 10)")
    p.add_argument(
        "--only", default=",".join(SCENARIOS), help=f"scenarios, comma-separated (default all: {','.join(SCENARIOS)})"
    )
    p.add_argument("--methods", default="interleaved,sequential", help="interleaved, sequential or both")
    p.add_argument(
        "--data",
        default=os.environ.get("PERFLAB_DATA") or "/tmp/perflab-ab-bench",
        help="data root for the benchmark's runs",
    )
    p.add_argument("--out", help="JSON lines file (default <data>/ab-benchmark-<time>.jsonl)")
    p.add_argument("--summary", help="read JSON lines files (comma-separated) and print their tables only")
    a = p.parse_args(argv)
    if a.summary:
        rows = [json.loads(x) for f in a.summary.split(",") for x in Path(f).read_text().splitlines() if x.strip()]
        rows = [r for r in rows if "error" not in r]
        print(summary(rows))
        print(extras(rows))
        return 0
    names = [n.strip() for n in a.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        p.error(f"--only: unknown scenario {', '.join(unknown)} (known: {', '.join(SCENARIOS)})")
    methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    if not set(methods) <= {"interleaved", "sequential"} or not methods:
        p.error("--methods: interleaved, sequential or both")
    out = Path(a.out or Path(a.data) / f"ab-benchmark-{time.strftime('%Y%m%dT%H%M%S')}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"writing {out}; load average {os.getloadavg()}", flush=True)
    for name in names:
        sc = SCENARIOS[name]
        ms = ["interleaved"] if sc.get("idle") or sc.get("long") else methods
        for i in range(a.runs):
            for m in ms:
                fn = interleaved if m == "interleaved" else sequential
                t = time.time()
                try:
                    r = fn(name, sc, a.data)
                except Exception as e:  # noqa: BLE001 - one failed comparison is a row, not the end of the benchmark
                    r = {
                        "method": m,
                        "error": f"{type(e).__name__}: {str(e).splitlines()[0]}",
                        "claim": None,
                        "seconds": round(time.time() - t, 1),
                    }
                r.update(scenario=name, round=i, at=time.strftime("%Y-%m-%dT%H:%M:%S"), load=os.getloadavg()[0])
                r["truth"] = truth_hit(sc, r)
                rows.append(r)
                with out.open("a") as f:
                    f.write(json.dumps(r, default=str) + "\n")
                print(
                    f"{name} {m} #{i}: claim={r.get('claim')} ratio={r.get('ratio')} ci={r.get('ci')} "
                    f"truth={r['truth']} {r['seconds']} s {r.get('error', '')}",
                    flush=True,
                )
    print(summary([r for r in rows if "error" not in r]))
    print(extras([r for r in rows if "error" not in r]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
