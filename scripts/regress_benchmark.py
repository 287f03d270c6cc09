#!/usr/bin/env python3
"""The regression benchmark: do ``perflab gate`` and ``perflab bisect`` find known truth on this machine, and
how often do they cry wolf?

Gate scenarios run ``perflab.regress.run_gate`` (its defaults: alpha 1e-3, a 240 s budget, 64 pairs, a 5%
margin, the not-worse stop) ``--runs`` times each, in turns, on a throwaway repository whose commits run this
checkout's built server (perflab/regress/synthetic.py: each commit's ``perflab.toml`` runs the JVM with
``--debug-work-ns $(cat work-ns)``; nothing to compile), deciding on the server's CPU per request or on p50:

* ``gate-aa-cpu``, ``gate-aa-p50``       BASE and HEAD run the same server: any exit 1 is a false alarm;
* ``gate-truth-cpu``, ``gate-truth-p50`` HEAD adds 10% of BASE's CPU per request (``--debug-work-ns``, CPU time
                                         on the request's thread; BASE's CPU per request and what the spin costs
                                         beyond what it spins are measured here first): exit 1 is a detection.

Every comparison compares every metric, so the same runs give the spread of the CPU per request and of the
p50 between pairs side by side. ``bisect-real`` is the real thing: a throwaway history of this checkout's
``java-server/`` (17 commits: GOOD, 15 that touch a comment, one that raises ``--debug-work-ns``'s default so
every request burns a known CPU cost), each step's commit built with Gradle in its own directory, bisected with
``perflab.regress.run_bisect`` (a 10% margin): is the planted commit named, and how long does it take with the
builds?

    .venv/bin/python scripts/regress_benchmark.py --runs 40 --only gate-aa-cpu,gate-aa-p50 --data /tmp/rb --out /tmp/rb/aa.jsonl
    .venv/bin/python scripts/regress_benchmark.py --summary /tmp/rb/aa.jsonl,/tmp/rb/truth.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import perflab as pl  # noqa: E402
from perflab.analysis.regress import bisect_lines, gate_lines  # noqa: E402
from perflab.config.regress import BisectParams, GateParams, RepoParams  # noqa: E402
from perflab.records import open_run  # noqa: E402
from perflab.regress import (  # noqa: E402
    run_bisect,
    run_gate,
    synthetic,  # noqa: E402
)

#: the server every gate scenario runs: the built-in JVM as the lab starts it, with its defaults (sync, a
#: selector per CPU, events on) on the memory backend
JVM = "-Xmx256m -Xms256m -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -XX:+StartAttachListener"
SERVER = "--backend memory"
#: GETs of 10,000 keys written through the API first, at 3000 req/s: ~17 us of CPU per request here
LOAD = pl.LoadParams(script="get-random.lua", connections=16, threads=1, rate=3000, script_args=("keys=10000",))
FILL = 10_000
#: the gate's and the bisection's own defaults
GATE: dict = {}
SCENARIOS = {
    "gate-aa-cpu": dict(metric="cpu", truth=None),
    "gate-aa-p50": dict(metric="p50", truth=None),
    "gate-truth-cpu": dict(metric="cpu", truth=0.10),
    "gate-truth-p50": dict(metric="p50", truth=0.10),
    "bisect-real": dict(bisect=True),
}
#: bisect-real: the planted commit (of 16 after GOOD) and its cost, in us of CPU per request; the margin: every
#: commit before the planted one must be shown no worse than GOOD beyond it, and with the CPU per request
#: moving some 20% from pair to pair here, 5% takes about 140 pairs a commit, 10% about 30
PLANTED, PLANTED_COST = 11, 40
BISECT_MARGIN = 0.10


def load_avg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


#: the spin the calibration measures its own cost with (us): large, so the cost of its clock reads is a residue
SPIN = 20


def calibrate(root: Path, data: str) -> tuple[float, float]:
    """BASE's CPU per request on this machine, and what ``--debug-work-ns`` costs beyond the CPU it spins (two
    reads of the thread's CPU clock, at least): one comparison of 0 us against SPIN us (16 pairs), A's median
    and B's median minus A's minus SPIN."""
    repo = synthetic.declared(root / "calibration", [0, SPIN], jvm=JVM, server=SERVER)
    res = run_gate(
        "HEAD~1",
        "HEAD",
        LOAD,
        GateParams(**GATE, max_pairs=16, min_pairs=16, budget=None),
        RepoParams(repo=str(repo)),
        fill=FILL,
        session=pl.SessionOptions(data_root=data),
        progress=False,
    )
    pairs = open_run(res.comparison.run.dir).read_frame("pairs.csv")
    base = float(np.median(pairs["a_cpu_us"]))
    return base, float(np.median(pairs["b_cpu_us"] - pairs["a_cpu_us"])) - SPIN


def gate_once(name: str, sc: dict, repo: Path, data: str, planted: float | None) -> dict:
    t = time.monotonic()
    res = run_gate(
        "HEAD~1",
        "HEAD",
        LOAD,
        GateParams(**GATE, metric=sc["metric"]),
        RepoParams(repo=str(repo)),
        fill=FILL,
        session=pl.SessionOptions(data_root=data),
        progress=False,
    )
    seconds = time.monotonic() - t
    pairs = open_run(res.comparison.run.dir).read_frame("pairs.csv") if res.comparison else pd.DataFrame()
    c = res.check
    out = {
        "scenario": name,
        "metric": sc["metric"],
        "exit_code": res.exit_code,
        "outcome": str(res.outcome),
        "ratio": c.ratio if c else None,
        "ci": list(c.ci) if c else None,
        "n": c.n if c else None,
        "seconds": round(seconds, 1),
        "load": load_avg(),
        "planted_us": planted,
        "run": res.run_id,
        "budget": GATE.get("budget", GateParams().budget),
        "lines": gate_lines(res),
    }
    if len(pairs):
        for m in ("cpu", "p50", "p99"):
            d = pairs[f"log_ratio_{m}"].dropna()
            out[f"sd_{m}"] = float(np.std(d))
            out[f"mad_{m}"] = float(1.4826 * np.median(np.abs(d - np.median(d))))
            out[f"median_ratio_{m}"] = float(np.exp(np.median(d)))
        out["a_cpu_us"] = float(pairs["a_cpu_us"].median())
        out["b_cpu_us"] = float(pairs["b_cpu_us"].median())
    return out


def real_history(root: Path) -> Path:
    """17 commits of this checkout's java-server/: GOOD, then 16 that each touch a comment of ApiHandler.java;
    commit PLANTED also raises the default of --debug-work-ns to PLANTED_COST us (a known CPU cost per request)."""
    repo = root / "real"
    repo.mkdir(parents=True)
    synthetic.git(repo, "init", "-q", "-b", "main")
    shutil.copytree(ROOT / "java-server", repo / "java-server", ignore=shutil.ignore_patterns("build", ".gradle"))
    handler = repo / "java-server/src/main/java/perflab/server/ApiHandler.java"
    options = repo / "java-server/src/main/java/perflab/spec/OptionList.java"
    synthetic.git(repo, "add", "-A")
    synthetic.git(repo, "commit", "-q", "-m", "GOOD: the server as it is")
    for i in range(1, 17):
        handler.write_text(handler.read_text() + f"// step {i}\n")
        msg = f"step {i}: a comment"
        if i == PLANTED:
            text, n = re.subn(
                r'OptionSpec\.integer\("debug-work-ns", SERVER, 0,',
                f'OptionSpec.integer("debug-work-ns", SERVER, {PLANTED_COST * 1000},',
                options.read_text(),
            )
            assert n == 1, "OptionList.java: the debug-work-ns declaration moved"
            options.write_text(text)
            msg = f"step {i}: every request burns {PLANTED_COST} us of CPU"
        synthetic.git(repo, "add", "-A")
        synthetic.git(repo, "commit", "-q", "-m", msg)
    return repo


def bisect_once(root: Path, data: str) -> dict:
    repo = real_history(root / f"history-{time.time_ns()}")
    commits = synthetic.git(repo, "log", "--reverse", "--format=%H").split()
    t = time.monotonic()
    res = run_bisect(
        "HEAD~16",
        "HEAD",
        LOAD,
        BisectParams(**GATE, margin=BISECT_MARGIN),
        RepoParams(repo=str(repo)),
        server=pl.ServerConfig(backend="memory"),
        fill=FILL,
        session=pl.SessionOptions(data_root=data),
        progress=False,
    )
    seconds = time.monotonic() - t
    return {
        "scenario": "bisect-real",
        "found": str(res.found),
        "first": res.first.sha if res.first else None,
        "planted": commits[PLANTED],
        "named": bool(res.first and res.first.sha == commits[PLANTED]),
        "ratio": res.first_check.ratio if res.first_check else None,
        "ci": list(res.first_check.ci) if res.first_check else None,
        "comparisons": res.search.comparisons,
        "steps": len(res.search.steps),
        "seconds": round(seconds, 1),
        "load": load_avg(),
        "run": res.run_id,
        "lines": bisect_lines(res),
    }


def summary(rows: list[dict]) -> str:
    """One markdown table per kind of scenario."""
    out = [
        "| scenario | runs | exit 0 | exit 1 | exit 2 | exit 3 | B/A of the metric: median (range) | time to a "
        "verdict: median (range) | load average: median (range) |",
        "|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    gates = [r for r in rows if r["scenario"].startswith("gate")]
    for c in (r for r in rows if r["scenario"] == "calibration"):
        out.insert(
            0,
            f"calibration: BASE {c['base_us']:.1f} us of CPU per request, the spin's own cost "
            f"{c['overhead_us']:.2f} us, planted --debug-work-ns {c['planted_us'] * 1000:.0f}: true ratio about "
            f"{c['truth']:.3f}\n",
        )
    for name in dict.fromkeys(r["scenario"] for r in gates):
        g = [r for r in gates if r["scenario"] == name]
        codes = [r["exit_code"] for r in g]
        ratios = [r["ratio"] for r in g if r["ratio"]]
        secs = [r["seconds"] for r in g]
        loads = [r["load"] for r in g]
        out.append(
            f"| {name} | {len(g)} | "
            + " | ".join(str(codes.count(k)) for k in range(4))
            + f" | {_mr(ratios, 3)} | {_mr(secs, 0, ' s')} | {_mr(loads, 1)} |"
        )
    out += [
        "",
        "| scenario | runs | spread between pairs (sd of log B/A): cpu | p50 | p99 | robust spread (1.4826 MAD): "
        "cpu | p50 | p99 | CPU per request: A, median |",
        "|---|---:|---|---|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(r["scenario"] for r in gates):
        g = [r for r in gates if r["scenario"] == name and "sd_cpu" in r]
        cells = [_mr([r[f"{k}_{m}"] for r in g], 3) for k in ("sd", "mad") for m in ("cpu", "p50", "p99")]
        out.append(f"| {name} | {len(g)} | " + " | ".join(cells) + f" | {_mr([r['a_cpu_us'] for r in g], 1, ' us')} |")
    bis = [r for r in rows if r["scenario"] == "bisect-real"]
    if bis:
        out += [
            "",
            "| bisect-real | runs | named the planted commit | ratio found: median | comparisons | time with "
            "builds: median (range) | load average |",
            "|---|---:|---:|---|---|---|---|",
        ]
        out.append(
            f"| {PLANTED_COST} us at commit {PLANTED} of 16 | {len(bis)} | {sum(r['named'] for r in bis)} | "
            f"{_mr([r['ratio'] for r in bis if r['ratio']], 2)} | {_mr([r['comparisons'] for r in bis], 0)} | "
            f"{_mr([r['seconds'] for r in bis], 0, ' s')} | {_mr([r['load'] for r in bis], 1)} |"
        )
    return "\n".join(out)


def _mr(v, digits: int, unit: str = "") -> str:
    if not v:
        return "n/a"
    return f"{statistics.median(v):.{digits}f}{unit} ({min(v):.{digits}f}-{max(v):.{digits}f})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--only", default=",".join(SCENARIOS))
    p.add_argument("--data", default=None, help="data root (default: a temporary directory)")
    p.add_argument("--out", default=None, help="append one JSON line per run here")
    p.add_argument("--summary", default=None, help="only print the tables of these JSON-lines files (comma-separated)")
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        help="each gate's budget in seconds instead of its default (a false alarm needs a claim, and the "
        "bound alpha holds for any budget: a shorter one counts more A/A gates in an hour)",
    )
    a = p.parse_args()
    if a.budget is not None:
        GATE["budget"] = a.budget
    if a.summary:
        rows = [json.loads(line) for f in a.summary.split(",") for line in Path(f).read_text().splitlines() if line]
        print(summary(rows))
        return 0
    names = [n.strip() for n in a.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        p.error(f"unknown scenario(s) {unknown}; known: {', '.join(SCENARIOS)}")
    data = a.data or tempfile.mkdtemp(prefix="regress-bench-")
    root = Path(data) / "histories" / time.strftime("%Y%m%dT%H%M%S")  # a fresh one per invocation
    root.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")
    rows: list[dict] = []
    repos, planted = {}, None
    if any(SCENARIOS[n].get("truth") for n in names):
        base, overhead = calibrate(root, data)
        planted = round(max(0.1, 0.10 * base - overhead), 2)
        truth = (planted + overhead) / base
        print(
            f"BASE's CPU per request here: {base:.1f} us; the spin costs {overhead:.2f} us beyond what it spins; "
            f"planted: --debug-work-ns {planted * 1000:.0f}, a true increase of about {truth:.1%}",
            flush=True,
        )
        if a.out:
            with open(a.out, "a") as f:
                f.write(
                    json.dumps(
                        {
                            "scenario": "calibration",
                            "base_us": base,
                            "overhead_us": overhead,
                            "planted_us": planted,
                            "truth": 1 + truth,
                        }
                    )
                    + "\n"
                )
    for n in names:
        sc = SCENARIOS[n]
        if not sc.get("bisect"):
            costs = [0, planted] if sc["truth"] else [0, 0]
            repos[n] = synthetic.declared(root / n, costs, jvm=JVM, server=SERVER)
    for i in range(a.runs):
        for n in names:
            sc = SCENARIOS[n]
            row = (
                bisect_once(root, data)
                if sc.get("bisect")
                else gate_once(n, sc, repos[n], data, planted if sc["truth"] else None)
            )
            row["i"] = i
            rows.append(row)
            brief = {
                k: row.get(k)
                for k in ("scenario", "exit_code", "outcome", "found", "named", "ratio", "n", "seconds", "load")
            }
            print(json.dumps(brief), flush=True)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(json.dumps(row) + "\n")
    print(summary(rows))
    if not a.data:
        shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
