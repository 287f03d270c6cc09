#!/usr/bin/env python3
"""The busy-machine benchmark: does a breakpoint search end right, or say it cannot tell, beside other work?

A server of known capacity (the built-in one, memory backend, async, 4 workers, every request parked 2 ms: at
most 2,000 req/s) is searched ``--runs`` times by each checkout given, with and without a CPU hog (another
process spinning on one core for the whole search), in turns: checkout A quiet, checkout B quiet, A with the hog,
B with the hog, and again. Each search is ``python -m perflab breakpoint`` of that checkout (its own code, the
builds of this one), with the lab's defaults; its run's ``meta.json`` says what it found. Each ends as one of:

* ``right``: resolved within ``--right`` (default 1,700-2,000 req/s: parked requests on a shared core wake late,
  so the true limit lies a little under 2,000);
* ``wrong``: resolved outside it;
* ``unresolved``: a number shown without a resolved interval (right or wrong, said apart);
* ``no number``: cannot-tell, generator-limited or none-passed.

    python3 scripts/busy_breakpoint_bench.py --runs 3 --before /tmp/perflab-before --data /tmp/busy-bench

``--before``: a checkout of an earlier commit (``git worktree add /tmp/perflab-before <commit>``, with its
``java-server/build`` a link to this checkout's), measured with the same generator. The table goes to stdout, each search as a JSON line to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SERVER = [
    "--no-project",
    "--backend",
    "memory",
    "--mode",
    "async",
    "--workers",
    "4",
    "--debug-delay",
    "2ms",
    "--path",
    "/v0/status",
    "-c",
    "16",
    "-t",
    "1",
    "--quiet",
]
HOG = [sys.executable, "-c", "while True: pass"]
#: the project's environment (``make setup``) runs every checkout's searches
PY = HERE / ".venv" / "bin" / "python"


def search(tree: Path, data: Path, name: str, extra: list[str]) -> dict:
    """One search by the checkout ``tree`` into the data root ``data``; its run's results."""
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "PERFLAB_DATA": str(data),
        "PERFLAB_LOAD": str(HERE / "loadgen/target/release/perflab-load"),
    }
    before = set((data / "runs").iterdir()) if (data / "runs").is_dir() else set()
    t0 = time.monotonic()
    done = subprocess.run(
        [str(PY), "-m", "perflab", "breakpoint", *SERVER, "--name", name, *extra],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - t0
    new = sorted(set((data / "runs").iterdir()) - before) if (data / "runs").is_dir() else []
    if done.returncode not in (0, 1) or not new:  # 1: the search found no breakpoint to show
        return {"error": (done.stderr or done.stdout)[-2000:], "seconds": seconds}
    meta = json.loads((new[-1] / "meta.json").read_text())
    res = meta.get("results") or {}
    return {
        "run": new[-1].name,
        "rate": res.get("breakpoint_rate"),
        "interval": res.get("interval"),
        "verdict": res.get("verdict"),
        "validity": (meta.get("validity") or {}).get("verdict"),
        "probes": res.get("probes"),
        "held": res.get("held"),
        "search_rate": res.get("search_rate"),
        "waited_s": (meta.get("quiet") or {}).get("waited_s"),
        "seconds": round(seconds, 1),
        "line": done.stdout.strip().splitlines()[-3] if done.stdout.strip() else "",
    }


def outcome(r: dict, right: tuple[float, float]) -> str:
    if "error" in r:
        return "error"
    inside = r["rate"] is not None and right[0] <= r["rate"] <= right[1]
    if r["verdict"] == "resolved":
        return "right" if inside else "wrong"
    if r["rate"] is not None:
        return "unresolved, right" if inside else "unresolved, wrong"
    return "no number"


def load_average() -> float:
    return os.getloadavg()[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--before", type=Path, help="a checkout of an earlier commit, searched in turns with this one")
    ap.add_argument("--data", type=Path, default=Path("/tmp/busy-bench"))
    ap.add_argument("--out", type=Path, help="one JSON line per search (default <data>/searches.jsonl)")
    ap.add_argument("--right", default="1700,2000", help="the resolved breakpoints counted right: LO,HI req/s")
    ap.add_argument("--only", choices=("quiet", "hog"), help="only quiet searches, or only beside the hog")
    ap.add_argument(
        "--args",
        default="",
        help="more `perflab breakpoint` flags for every search (a quick try: '--probe-duration 1s --max-probes 6')",
    )
    a = ap.parse_args()
    # stopped (SIGTERM), the hog is killed on the way out like the search's children: no spinning orphan
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    right = tuple(float(x) for x in a.right.split(","))
    trees = {"now": HERE, **({"before": a.before.resolve()} if a.before else {})}
    out = a.out or a.data / "searches.jsonl"
    a.data.mkdir(parents=True, exist_ok=True)
    states = [s for s in ("quiet", "hog") if a.only in (None, s)]
    results = []
    for i in range(a.runs):
        for state in states:
            for label, tree in trees.items():
                hog = subprocess.Popen(HOG) if state == "hog" else None
                try:
                    time.sleep(1 if hog else 0)
                    load = load_average()
                    r = search(tree, a.data / label, f"busy-{state}-{i}", a.args.split())
                finally:
                    if hog is not None:
                        hog.kill()
                        hog.wait()
                r.update(checkout=label, machine=state, i=i, load_before=round(load, 2), outcome=outcome(r, right))
                results.append(r)
                with out.open("a") as f:
                    f.write(json.dumps(r) + "\n")
                print(
                    f"[{label} {state} {i}] {r['outcome']}: {r.get('line') or r.get('error', '')[:300]}",
                    file=sys.stderr,
                    flush=True,
                )
    print(
        "\n| checkout | machine | searches | right | wrong | unresolved (right/wrong) | no number | rates "
        "(resolved) | median time, s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|---:|")
    for label in trees:
        for state in states:
            rs = [r for r in results if r["checkout"] == label and r["machine"] == state]
            count = {
                k: sum(r["outcome"] == k for r in rs)
                for k in ("right", "wrong", "unresolved, right", "unresolved, wrong", "no number", "error")
            }
            rates = ", ".join(f"{r['rate']:,.0f}" for r in rs if r.get("verdict") == "resolved")
            secs = statistics.median(r["seconds"] for r in rs) if rs else 0
            print(
                f"| {label} | {state} | {len(rs)} | {count['right']} | {count['wrong']} | "
                f"{count['unresolved, right']}/{count['unresolved, wrong']} | {count['no number']}"
                + (f" (+{count['error']} errors)" if count["error"] else "")
                + f" | {rates or '-'} | {secs:.0f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
