#!/usr/bin/env python3
"""Does another tool reproduce the lab's breakpoint? perflab's number next to real wrk2's, from fresh starts.

For each server given, quiet and (``--hog``) beside a process spinning on one core: one ``perflab breakpoint``
(the lab's defaults: holds from fresh starts; ``--second-opinion none``: its own is not asked), then real
wrk2 at the number it reported (or at both ends of the range it gave) and at ``--above`` times it (1.5), ``--runs``
times each (3), every run its own ``perflab run`` with ``--wrk``: a freshly started server, the same fill,
script, connections and threads, ``--seconds`` of wrk2 (20) after an unrecorded wrk2 warm-up of ``--warm`` s (8)
at the rate. A wrk2 run *keeps up* when it achieved 98% of the rate with p99 within the SLA. The lab's number
is confirmed when wrk2 keeps up at it in most runs and falls behind at ``--above`` times it in most.

    python3 scripts/wrk2_agreement_bench.py --wrk2 /opt/wrk2/wrk --server builtin --server known \\
        --server project=/path/to/perflab.toml --hog

Servers: ``builtin`` (the lab's LSM server, GET on 10,000 filled keys), ``known`` (memory backend, async, 4 workers,
2 ms parked: at most 2,000 req/s, /v0/status), ``project=PATH`` (a perflab.toml: a course server, GET or
``--script``). The table goes to stdout, every run as a JSON line to ``--out``. Not a test: it needs wrk2, built
by hand (giltene/wrk2: ``make``), and minutes per server.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PY = HERE / ".venv" / "bin" / "python"
HOG = [sys.executable, "-c", "while True: pass"]
#: what a wrk2 run must reach to keep up (the issue's bar: 98% of the rate, p99 within the SLA)
KEEP_UP = 0.98


def servers(spec: str, script: str | None, fill: int) -> tuple[list[str], list[str]]:
    """(the server's flags, the load's flags) of a ``--server`` value."""
    if spec == "known":
        return (
            ["--no-project", "--backend", "memory", "--mode", "async", "--workers", "4", "--debug-delay", "2ms"],
            ["--path", "/v0/status", "-c", "16", "-t", "1"],
        )
    load = ["-s", script or "get-random.lua", "-c", "16", "-t", "2"]
    if (script or "get-random.lua").startswith("get"):
        load += ["--fill", str(fill)]
    if spec == "builtin":
        return ["--no-project"], load
    if spec.startswith("project="):
        return ["--project", spec.split("=", 1)[1]], load
    raise SystemExit(f"--server: builtin, known or project=PATH, got {spec!r}")


def perflab(args: list[str], data: Path) -> tuple[int, str, dict | None]:
    """Run ``perflab ARGS`` into ``data``; its exit code, its output's last lines and its run's meta.json."""
    before = set((data / "runs").iterdir()) if (data / "runs").is_dir() else set()
    done = subprocess.run(
        [str(PY), "-m", "perflab", *args, "--data", str(data), "--quiet"], cwd=HERE, capture_output=True, text=True
    )
    new = sorted(set((data / "runs").iterdir()) - before) if (data / "runs").is_dir() else []
    meta = json.loads((new[-1] / "meta.json").read_text()) if new else None
    return done.returncode, "\n".join((done.stdout + done.stderr).strip().splitlines()[-4:]), meta


def wrk2_run(server: list[str], load: list[str], wrk2: str, rate: float, a, data: Path) -> dict:
    code, tail, meta = perflab(
        ["run", *server, *load, "--wrk", wrk2, "-R", str(round(rate)), "-d", f"{a.seconds}s", "--warmup", f"{a.warm}s"],
        data,
    )
    res = (meta or {}).get("results") or {}
    ratio, p99 = res.get("achieved_ratio"), res.get("p99_ms")
    ok = ratio is not None and p99 is not None and ratio >= KEEP_UP and p99 <= a.sla_ms
    return {
        "rate": round(rate),
        "achieved": ratio,
        "p99_ms": p99,
        "kept_up": ok,
        "code": code,
        "run": (meta or {}).get("id"),
        "tail": tail if meta is None else "",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wrk2", required=True, help="a real wrk2 binary")
    ap.add_argument("--server", action="append", required=True, help="builtin, known or project=PATH (repeat)")
    ap.add_argument("--script", default=None, help="the workload (default get-random.lua; known: /v0/status)")
    ap.add_argument("--fill", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--above", type=float, default=1.5)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--warm", type=int, default=8)
    ap.add_argument("--sla-ms", type=float, default=10.0)
    ap.add_argument("--hog", action="store_true", help="also beside a process spinning on one core")
    ap.add_argument("--only-hog", action="store_true", help="only beside a process spinning on one core")
    ap.add_argument("--data", type=Path, default=Path("/tmp/wrk2-agreement"))
    ap.add_argument("--out", type=Path, default=None, help="every run as a JSON line")
    a = ap.parse_args()
    out = a.out.open("a") if a.out else None
    rows = []
    for spec in a.server:
        server, load = servers(spec, a.script, a.fill)
        for busy in [True] if a.only_hog else [False, True] if a.hog else [False]:
            hog = subprocess.Popen(HOG) if busy else None
            try:
                t0 = time.monotonic()
                code, tail, meta = perflab(["breakpoint", *server, *load, "--second-opinion", "none"], a.data)
                res = (meta or {}).get("results") or {}
                lab = {
                    "server": spec,
                    "hog": busy,
                    "rate": res.get("breakpoint_rate"),
                    "interval": res.get("interval"),
                    "verdict": res.get("verdict"),
                    "held": res.get("held_windows"),
                    "at_least": res.get("at_least"),
                    "below": res.get("hi"),
                    "others_max": res.get("others_max_cores"),
                    "search_s": round(time.monotonic() - t0),
                    "line": tail,
                }
                # a number: wrk2 at it and at --above times it; a range "at least X, below Y": wrk2 at both ends
                lo, hi = lab["rate"] or lab["at_least"], None if lab["rate"] else res.get("hi")
                checks = {}
                if lo:
                    ends = (("1x", lo), (f"{a.above:g}x", lo * a.above)) if hi is None else (("X", lo), ("Y", hi))
                    for name, rate in ends:
                        checks[name] = [wrk2_run(server, load, a.wrk2, rate, a, a.data) for _ in range(a.runs)]
                lab["wrk2"] = checks
            finally:
                if hog is not None:
                    hog.kill()
                    hog.wait()
            rows.append(lab)
            if out:
                out.write(json.dumps(lab) + "\n")
                out.flush()
            print(_line(lab), flush=True)
    return 0


def _line(lab: dict) -> str:
    def said(runs):
        kept = sum(r["kept_up"] for r in runs)
        p99 = ", ".join(f"{r['p99_ms']:.1f}" if r["p99_ms"] is not None else "-" for r in runs)
        return f"kept up {kept}/{len(runs)} (p99 {p99} ms)"

    checks = "; ".join(f"wrk2 {k}: {said(v)}" for k, v in lab["wrk2"].items())
    what = (
        f"{lab['rate']:,.0f} req/s {lab['interval']} {lab['verdict']}, {lab['held']}"
        if lab["rate"]
        else f"no number ({lab['verdict']}), at least {lab['at_least']}, below {lab['below']}"
    )
    return (
        f"| {lab['server']} | {'hog' if lab['hog'] else 'quiet'} | {what}; others up to {lab['others_max']} "
        f"cores; {lab['search_s']} s | {checks or '-'} |"
    )


if __name__ == "__main__":
    sys.exit(main())
